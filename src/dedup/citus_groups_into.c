/*
 * dedup/citus_groups_into.c
 *		simhash_groups_into(): simhash_groups' groups of more than one row,
 *		as rows (id, group_id) of a new table.  On a Citus distributed table
 *		it is a distributed table, co-located with the source when that is
 *		distributed by the id column, computed on the workers: the pairs
 *		stay there, connected groups by label propagation (each row's label
 *		the least id among its own and its neighbours' labels, round after
 *		round, until none changes), the leader linkage per connected group
 *		on the worker holding the group's pairs (simhash_leader_groups).
 *		Elsewhere (one node, ids that are not integers, simhash.citus_jobs
 *		off) the rows of simhash_groups, filtered.  The groups on the
 *		workers are citus_groups() (citus_work.c), which the distributed
 *		simhash_groups uses too.  The design is in citus.c, the hardening
 *		in citus_work.c.
 */
#include "citus_work.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "shared/citus_catalog.h"

#define FNAME "simhash_groups_into"

/*
 * result_table as (schema, name): parse_ident()'s rules; an unqualified
 * name goes where the caller's CREATE TABLE would put it, the first schema
 * of the caller's path (current_schema()).  NULL stays NULL.
 */
static void
groups_into_target(FunctionCallInfo fcinfo, char **schema, char **name)
{
	ArrayType  *parts;
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	*schema = *name = NULL;
	if (PG_ARGISNULL(3))
		return;
	parts = DatumGetArrayTypeP(DirectFunctionCall2(parse_ident, PG_GETARG_DATUM(3),
												   BoolGetDatum(true)));
	deconstruct_array(parts, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	if (n > 2)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg(FNAME ": improper qualified name (too many dotted names): %s",
						text_to_cstring(PG_GETARG_TEXT_PP(3)))));
	if (n == 1)
	{
		List	   *path = fetch_search_path(false);

		if (path == NIL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_SCHEMA_NAME),
					 errmsg(FNAME ": no schema has been selected to create in")));
		*schema = get_namespace_name(linitial_oid(path));
		*name = TextDatumGetCString(elems[0]);
	}
	else
	{
		*schema = TextDatumGetCString(elems[0]);
		*name = TextDatumGetCString(elems[1]);
	}
}

/* the groups computed on the workers into target; returns the rows written */
static uint64
groups_into_workers(CitusJob *job, FunctionCallInfo fcinfo, const char *target, bool leader)
{
	DedupInput	in;

	dedup_input_init(&in, fcinfo, FNAME, -1, 4, 6);
	citus_check_ids(job);
	return citus_groups(job, in.hash_column, &in.blocks, target, leader);
}

/*
 * simhash_groups_into(relation, id_column, hash_column, result_table,
 * max_distance, linkage, blocks) → bigint: creates result_table (id,
 * group_id) with the rows of simhash_groups' groups of more than one row;
 * returns the number of rows written.
 */
PG_FUNCTION_INFO_V1(simhash_groups_into);
Datum
simhash_groups_into(PG_FUNCTION_ARGS)
{
	char	   *schema,
			   *name,
			   *linkage;
	Oid			relid;
	char	   *id_column;
	AttrNumber	att;
	HeapTuple	tuple;
	Oid			idtype;
	char	   *idtype_sql;
	char	   *target;
	AttrNumber	dist_att;
	CitusJob	job;
	uint64		written;

	groups_into_target(fcinfo, &schema, &name);
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2) || schema == NULL ||
		PG_ARGISNULL(4) || PG_ARGISNULL(5))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg(FNAME ": arguments must not be NULL")));
	linkage = text_to_cstring(PG_GETARG_TEXT_PP(5));
	if (strcmp(linkage, "connected") != 0 && strcmp(linkage, "leader") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg(FNAME ": linkage must be 'connected' or 'leader'")));
	relid = PG_GETARG_OID(0);
	id_column = NameStr(*PG_GETARG_NAME(1));
	att = get_attnum(relid, id_column);
	tuple = att > 0 ? SearchSysCache2(ATTNUM, ObjectIdGetDatum(relid), Int16GetDatum(att)) : NULL;
	if (!HeapTupleIsValid(tuple))
	{
		char	   *relname = get_rel_name(relid);

		/* the relation as the jobs print it, qualified */
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg(FNAME ": column \"%s\" of relation %s does not exist", id_column,
						relname == NULL ? psprintf("%u", relid) :
						quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)), relname))));
	}

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	citus_job_begin(&job, FNAME, relid, id_column, fcinfo->flinfo->fn_oid);
	job.progress.last = 0;
	idtype = ((Form_pg_attribute) GETSTRUCT(tuple))->atttypid;
	idtype_sql = format_type_with_typemod(idtype, ((Form_pg_attribute) GETSTRUCT(tuple))->atttypmod);
	ReleaseSysCache(tuple);
	target = psprintf("%s.%s", quote_identifier(schema), quote_identifier(name));

	dist_att = simhash_citus_hash_column(relid);
	citus_exec(&job, psprintf("CREATE TABLE %s (id %s, group_id %s)", target, idtype_sql, idtype_sql),
			   0, NULL, NULL, NULL);
	if (dist_att != InvalidAttrNumber)
	{
		Oid			types[3] = {REGCLASSOID, TEXTOID, TEXTOID};
		Datum		values[3];

		values[0] = ObjectIdGetDatum(get_relname_relid(name, get_namespace_oid(schema, false)));
		values[1] = CStringGetTextDatum("id");
		values[2] = CStringGetTextDatum(dist_att == att ? job.relation : "default");
		citus_exec(&job, "SELECT pg_catalog.create_distributed_table($1, $2, colocate_with => $3)",
				   3, types, values, NULL);
	}
	if (dist_att == InvalidAttrNumber || (idtype != INT8OID && idtype != INT4OID && idtype != INT2OID) ||
		!simhash_citus_jobs)
	{
		/* one node, or the rows read here (simhash_groups says why) */
		Oid			types[6] = {REGCLASSOID, NAMEOID, NAMEOID, INT4OID, TEXTOID, INT4OID};
		Datum		values[6];
		char		nulls[7] = "      ";

		for (int i = 0; i < 6; i++)
		{
			int			arg = i < 3 ? i : i + 1;

			values[i] = PG_ARGISNULL(arg) ? (Datum) 0 : PG_GETARG_DATUM(arg);
			nulls[i] = PG_ARGISNULL(arg) ? 'n' : ' ';
		}
		written = citus_exec(&job, psprintf("INSERT INTO %s SELECT g.id, g.group_id FROM (SELECT x.id, x.group_id, count(*) OVER (PARTITION BY x.group_id) AS n"
											" FROM %s.simhash_groups($1, $2, $3, NULL::%s, $4, $5, $6) x) g WHERE g.n > 1",
											target, job.ext, idtype_sql),
							 6, types, values, nulls);
	}
	else
		written = groups_into_workers(&job, fcinfo, target, strcmp(linkage, "leader") == 0);
	citus_job_end(&job);
	SPI_finish();
	PG_RETURN_INT64((int64) written);
}
