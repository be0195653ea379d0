/*
 * dedup/citus_work.c
 *		What every dedup job on the workers does (see citus_work.h; the design
 *		is in citus.c): the search_path it runs under, its SQL through SPI,
 *		its distributed work tables, the check of its ids, the rows of the
 *		simhash search repartitioned by (table group, block), and
 *		simhash_groups' groups computed on the workers from its pairs.
 *
 * The hardening of a job is that of PostgreSQL's contrib modules: it runs
 * with search_path = pg_catalog, pg_temp (a GUC nest level, as a
 * function's SET clause makes), so built-in names resolve in pg_catalog
 * only; the extension's own functions and types are named through its
 * schema (quoted); relations and columns are quoted identifiers; the
 * caller's values are typed $n parameters or numbers printed here;
 * temporary tables are pg_temp.*.  So no function, operator or table that
 * another role plants in public or in a schema on the caller's path runs or
 * is read, and no SQL text comes from the caller.
 */
#include "citus_work.h"

#include "access/htup_details.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/params.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "shared/citus_catalog.h"

/* the work tables' shapes: suffix and columns (%1$s: the extension's schema) */
static const struct
{
	const char *kind;
	const char *suffix;
	const char *columns;
}			work_tables[] =
{
	{"blocks", "", "bk bigint, grp integer, id bigint, h %1$s.simhash64"},
	{"keys", "_k", "key bigint, id bigint"},
	{"pairs", "_p", "a bigint, b bigint"},
	{"signatures", "_s", "id bigint, sig %1$s.minhash_signature"},
	{"moved", "_m", "b bigint, a bigint, sig_a %1$s.minhash_signature"},
	{"group_pairs", "_gp", "a bigint, b bigint, d integer"},
	{"edges", "_ge", "src bigint, dst bigint"},
	{"labels", "_gl", "id bigint, label bigint"},
	{"next_labels", "_gn", "id bigint, label bigint"},
	{"grouped_pairs", "_gc", "grp bigint, a bigint, b bigint, d integer"},
	{"row_ids", "_ri", "id bigint"},
	{"groups", "_gr", "id bigint, group_id bigint"},
};

void
citus_job_begin(CitusJob *job, const char *fname, Oid relid, const char *id_column,
				Oid ext_fn)
{
	char	   *relname = get_rel_name(relid);

	if (relname == NULL)
		elog(ERROR, "%s: relation %u does not exist", fname, relid);
	memset(job, 0, sizeof(*job));
	job->fname = fname;
	job->relid = relid;
	job->nspoid = get_rel_namespace(relid);
	job->nsp = quote_identifier(get_namespace_name(job->nspoid));
	job->relation = quote_qualified_identifier(get_namespace_name(job->nspoid), relname);
	job->id_name = id_column;
	job->id_column = quote_identifier(id_column);
	job->ext = quote_identifier(get_namespace_name(get_func_namespace(ext_fn)));
	dedup_progress_start(&job->progress, fname);
	job->guc_level = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
}

void
citus_job_end(CitusJob *job)
{
	AtEOXact_GUC(true, job->guc_level);
}

/* the parameters of a query as a ParamListInfo (SPI's memory) */
static ParamListInfo
citus_params(int nargs, Oid *types, Datum *values, const char *nulls)
{
	ParamListInfo params = makeParamList(nargs);

	for (int i = 0; i < nargs; i++)
	{
		params->params[i].value = values[i];
		params->params[i].isnull = nulls != NULL && nulls[i] == 'n';
		params->params[i].pflags = PARAM_FLAG_CONST;
		params->params[i].ptype = types[i];
	}
	return params;
}

uint64
citus_exec(CitusJob *job, const char *sql, int nargs, Oid *types, Datum *values,
		   const char *nulls)
{
	int			rc;

	CHECK_FOR_INTERRUPTS();
	rc = SPI_execute_with_args(sql, nargs, types, values, nulls, false, 0);
	if (rc < 0)
		elog(ERROR, "%s: a query on the workers failed: %s", job->fname,
			 SPI_result_code_string(rc));
	return SPI_processed;
}

uint64
citus_exec_into(CitusJob *job, const char *sql, DestReceiver *dest, int nargs,
				Oid *types, Datum *values, const char *nulls)
{
	SPIExecuteOptions options;
	int			rc;

	CHECK_FOR_INTERRUPTS();
	memset(&options, 0, sizeof(options));
	/* no parameters: no list (Citus's executor expects none then) */
	options.params = nargs > 0 ? citus_params(nargs, types, values, nulls) : NULL;
	options.read_only = false;
	options.dest = dest;
	rc = SPI_execute_extended(sql, &options);
	if (rc < 0)
		elog(ERROR, "%s: a query on the workers failed: %s", job->fname,
			 SPI_result_code_string(rc));
	return SPI_processed;
}

int64
citus_exec_int64(CitusJob *job, const char *sql)
{
	bool		isnull;
	Datum		v;

	if (citus_exec(job, sql, 0, NULL, NULL, NULL) != 1)
		elog(ERROR, "%s: a query returned no row", job->fname);
	v = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	return isnull ? 0 : DatumGetInt64(v);
}

char *
citus_work_table(CitusJob *job, const char *kind, const char *colocate)
{
	int			k;
	char	   *name;
	char	   *part;
	char	   *columns;
	Oid			types[3] = {REGCLASSOID, TEXTOID, TEXTOID};
	Datum		values[3];
	Oid			relid;

	for (k = 0; k < lengthof(work_tables); k++)
		if (strcmp(work_tables[k].kind, kind) == 0)
			break;
	if (k == lengthof(work_tables))
		elog(ERROR, "%s: unknown work table \"%s\"", job->fname, kind);
	name = psprintf("simhash_part_%d%s", MyProcPid, work_tables[k].suffix);
	part = psprintf("%s.%s", job->nsp, quote_identifier(name));
	columns = psprintf(work_tables[k].columns, job->ext);
	citus_exec(job, psprintf("CREATE TABLE %s (%s)", part, columns), 0, NULL, NULL, NULL);
	relid = get_relname_relid(name, job->nspoid);
	if (!OidIsValid(relid))
		elog(ERROR, "%s: the work table %s was not created", job->fname, part);
	values[0] = ObjectIdGetDatum(relid);
	values[1] = CStringGetTextDatum(pnstrdup(columns, strcspn(columns, " ")));
	values[2] = CStringGetTextDatum(colocate != NULL ? colocate : "default");
	citus_exec(job, "SELECT pg_catalog.create_distributed_table($1, $2, colocate_with => $3)",
			   3, types, values, NULL);
	return part;
}

void
citus_check_ids(CitusJob *job)
{
	AttrNumber	att = get_attnum(job->relid, job->id_name);
	HeapTuple	tuple;
	bool		notnull = false;

	tuple = SearchSysCache2(ATTNUM, ObjectIdGetDatum(job->relid), Int16GetDatum(att));
	if (HeapTupleIsValid(tuple))
	{
		notnull = ((Form_pg_attribute) GETSTRUCT(tuple))->attnotnull;
		ReleaseSysCache(tuple);
	}
	if (notnull)
		return;
	citus_exec(job, psprintf("SELECT 1 FROM %s WHERE %s IS NULL LIMIT 1",
							 job->relation, job->id_column), 0, NULL, NULL, NULL);
	if (SPI_processed > 0)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s: column \"%s\" of relation %s contains NULL",
						job->fname, job->id_name, job->relation),
				 errdetail("Every row needs an id to be reported by.")));
}

char *
citus_parts(CitusJob *job, const char *hash_column, const SimhashBlocks *b, char **search)
{
	const char *h = quote_identifier(hash_column);
	char	   *part = citus_work_table(job, "blocks", NULL);

	for (int g = 0; g <= b->max_distance; g++)
	{
		uint64		moved;

		moved = citus_exec(job,
						   psprintf("INSERT INTO %s SELECT %s.simhash_group_block(%s, %d, %d, %d), %d, %s::bigint, %s FROM %s WHERE %s IS NOT NULL",
									part, job->ext, h, g, b->nblocks, b->max_distance, g,
									job->id_column, h, job->relation, h),
						   0, NULL, NULL, NULL);
		dedup_progress(&job->progress, "repartitioned " UINT64_FORMAT " rows for table group %d of %d",
					   moved, g + 1, b->max_distance + 1);
	}
	dedup_progress(&job->progress, "searching the parts on the workers");
	*search = psprintf("SELECT p.id_a, p.id_b, p.distance FROM (SELECT grp, array_agg(id) AS ids, array_agg(h) AS hs FROM %s GROUP BY bk, grp) s,"
					   " LATERAL %s.simhash_group_pairs(s.ids, s.hs, s.grp, %d, %d) p",
					   part, job->ext, b->nblocks, b->max_distance);
	return part;
}

bool
citus_distributed_by_id(CitusJob *job)
{
	AttrNumber	dist = simhash_citus_hash_column(job->relid);

	return dist != InvalidAttrNumber && dist == get_attnum(job->relid, job->id_name);
}

uint64
citus_groups(CitusJob *job, const char *hash_column, const SimhashBlocks *b,
			 const char *target, bool leader)
{
	char	   *search;
	char	   *part;
	char	   *pairs;
	char	   *edges;
	char	   *labels;
	char	   *next_labels;
	uint64		written;
	int			rounds = 0;

	/* the pairs, kept on the workers (by their first id) */
	part = citus_parts(job, hash_column, b, &search);
	pairs = citus_work_table(job, "group_pairs", NULL);
	citus_exec(job, psprintf("INSERT INTO %s (a, b, d) SELECT * FROM (%s) x", pairs, search), 0, NULL, NULL, NULL);
	citus_exec(job, psprintf("DROP TABLE %s", part), 0, NULL, NULL, NULL);

	/* connected groups: edges both ways by their source; labels by id */
	edges = citus_work_table(job, "edges", pairs);
	citus_exec(job, psprintf("INSERT INTO %s SELECT a, b FROM %s", edges, pairs), 0, NULL, NULL, NULL);
	citus_exec(job, psprintf("INSERT INTO %s SELECT b, a FROM %s", edges, pairs), 0, NULL, NULL, NULL);
	labels = citus_work_table(job, "labels", pairs);
	next_labels = citus_work_table(job, "next_labels", pairs);
	citus_exec(job, psprintf("INSERT INTO %s SELECT src, least(src, min(dst)) FROM %s GROUP BY src", labels, edges),
			   0, NULL, NULL, NULL);
	for (;;)
	{
		uint64		changed;

		citus_exec(job, psprintf("INSERT INTO %s SELECT e.dst, l.label FROM %s e JOIN %s l ON l.id = e.src",
								 next_labels, edges, labels), 0, NULL, NULL, NULL);
		changed = citus_exec(job, psprintf("UPDATE %s l SET label = m.label FROM (SELECT id, min(label) AS label FROM %s GROUP BY id) m"
										   " WHERE l.id = m.id AND m.label < l.label", labels, next_labels),
							 0, NULL, NULL, NULL);
		citus_exec(job, psprintf("DELETE FROM %s", next_labels), 0, NULL, NULL, NULL);
		rounds++;
		dedup_progress(&job->progress, "labelling round %d on the workers: " UINT64_FORMAT " rows relabelled",
					   rounds, changed);
		if (changed == 0)
			break;
	}
	if (!leader)
		written = citus_exec(job, psprintf("INSERT INTO %s SELECT id, label FROM %s", target, labels),
							 0, NULL, NULL, NULL);
	else
	{
		/* each group's pairs on one shard, linked there in id order */
		char	   *grouped = citus_work_table(job, "grouped_pairs", pairs);

		citus_exec(job, psprintf("INSERT INTO %s SELECT l.label, p.a, p.b, p.d FROM %s p JOIN %s l ON l.id = p.a",
								 grouped, pairs, labels), 0, NULL, NULL, NULL);
		dedup_progress(&job->progress, "choosing the leaders on the workers");
		written = citus_exec(job, psprintf("INSERT INTO %s SELECT x.id, x.group_id FROM (SELECT array_agg(a) AS a, array_agg(b) AS b, array_agg(d) AS d"
										   " FROM %s GROUP BY grp) g, LATERAL %s.simhash_leader_groups(g.a, g.b, g.d) x",
										   target, grouped, job->ext),
							 0, NULL, NULL, NULL);
		citus_exec(job, psprintf("DROP TABLE %s", grouped), 0, NULL, NULL, NULL);
	}
	citus_exec(job, psprintf("DROP TABLE %s, %s, %s, %s", pairs, edges, labels, next_labels), 0, NULL, NULL, NULL);
	return written;
}
