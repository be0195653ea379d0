/*
 * dedup/citus_catalog.c
 *		Citus as the dedup jobs see it: whether Citus is installed and a
 *		relation is a distributed table (its catalog tables, looked up by
 *		name: the extension does not depend on Citus), the setting
 *		simhash.citus_jobs, and the NOTICE of a job that reads a distributed
 *		table's rows on this node (the fallback of citus.c).  See dedup.h.
 */
#include "dedup.h"

#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"

bool		simhash_citus_jobs = true;

/* Called from _PG_init: the setting simhash.citus_jobs. */
void
dedup_citus_define_gucs(void)
{
	DefineCustomBoolVariable("simhash.citus_jobs",
							 "Runs the dedup jobs of Citus distributed tables on the workers.",
							 "Off: the jobs read every row to the node running them and work there, as on a single node.",
							 &simhash_citus_jobs,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
}

/* Is Citus installed in this database?  (its catalog, by name) */
bool
dedup_citus_installed(void)
{
	return OidIsValid(get_relname_relid("pg_dist_partition", PG_CATALOG_NAMESPACE)) &&
		OidIsValid(get_relname_relid("pg_dist_shard", PG_CATALOG_NAMESPACE));
}

/*
 * The shard count of relid if it is a Citus distributed table (not a
 * reference or Citus local table), else -1.  The caller is connected to SPI
 * and has checked dedup_citus_installed().
 */
int64
dedup_citus_shard_count(Oid relid, const char *fname)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		args[1];
	int			rc;
	bool		isnull;

	args[0] = ObjectIdGetDatum(relid);
	rc = SPI_execute_with_args("SELECT (SELECT pg_catalog.count(*) FROM pg_catalog.pg_dist_shard s"
							   "        WHERE s.logicalrelid = p.logicalrelid)"
							   " FROM pg_catalog.pg_dist_partition p"
							   " WHERE p.logicalrelid = $1 AND p.partmethod <> 'n'",
							   1, argtypes, args, NULL, true, 1);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "%s: reading the Citus catalog failed: %s", fname,
			 SPI_result_code_string(rc));
	if (SPI_processed == 0)
		return -1;
	return DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
									   1, &isnull));
}

/*
 * If in's relation is a Citus distributed table, raise the NOTICE that its
 * rows are read on this node (with in->citus_pull, why).  The caller is
 * connected to SPI.
 */
void
dedup_citus_notice(DedupInput *in)
{
	int64		shards;

	if (!dedup_citus_installed())
		return;
	shards = dedup_citus_shard_count(in->relid, in->fname);
	if (shards < 0)
		return;
	if (in->citus_pull == NULL)
		ereport(NOTICE,
				(errmsg("%s: %s is a Citus distributed table: reading all its rows from its " INT64_FORMAT " shards on this node",
						in->fname, in->relname, shards),
				 errdetail("The search runs here, on one core, after every row has crossed the network.")));
	else
		ereport(NOTICE,
				(errmsg("%s: %s is a Citus distributed table: reading all its rows from its " INT64_FORMAT " shards on this node",
						in->fname, in->relname, shards),
				 errdetail("The job runs here, not on the workers: %s.", in->citus_pull),
				 simhash_citus_jobs ? 0 :
				 errhint("SET simhash.citus_jobs = on to run it on the workers.")));
}
