/*
 * dedup/citus_jobs.c
 *		The six dedup jobs on the workers of a Citus distributed table
 *		(simhash_pairs / simhash_groups, shared_key_pairs /
 *		shared_key_groups, minhash_pairs / minhash_groups), run by the
 *		hand-over of the plain job (citus.c) after the plain job has
 *		checked its arguments.  The design is in citus.c; every statement
 *		is built as citus_work.c says.  simhash_groups computes its groups
 *		on the workers (citus_groups) and returns every row from the
 *		shards; the groups of the keys and MinHash jobs are computed on
 *		the node running the job from the pairs, by shared_key_groups over
 *		temporary tables.
 */
#include "citus_work.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"

/* the arguments of the plain job after its columns (and id_type) */
static inline int
citus_arg(int id_type_arg, int i)
{
	return (id_type_arg >= 0 ? 4 : 3) + i;
}

/*
 * Connected groups of every row of the relation under the pairs (a, b) of
 * pg_temp.simhash_citus_pairs (dropped here), into dest: each id with the
 * least id of its component (union-find by shared_key_groups over the rows
 * with a pair, each pair a key of its two rows; the other rows alone).
 */
static void
citus_connected(CitusJob *job, DestReceiver *dest)
{
	citus_exec(job, "CREATE TEMP TABLE pg_temp.simhash_citus_edges AS SELECT row_number() OVER () AS n, p.a::bigint AS a, p.b::bigint AS b"
			   " FROM pg_temp.simhash_citus_pairs p", 0, NULL, NULL, NULL);
	citus_exec(job, "CREATE TEMP TABLE pg_temp.simhash_citus_keys AS SELECT e.id, array_agg(e.n) AS keys"
			   " FROM (SELECT x.n, x.a AS id FROM pg_temp.simhash_citus_edges x"
			   "       UNION ALL SELECT x.n, x.b FROM pg_temp.simhash_citus_edges x) e GROUP BY e.id",
			   0, NULL, NULL, NULL);
	dedup_progress(&job->progress, "grouping the pairs on this node");
	citus_exec(job, psprintf("CREATE TEMP TABLE pg_temp.simhash_citus_linked AS SELECT * FROM %s.shared_key_groups("
							 "'pg_temp.simhash_citus_keys'::regclass, 'id'::name, 'keys'::name, 1, 2)",
							 job->ext),
			   0, NULL, NULL, NULL);

	/*
	 * every row's id (ids are unique; a DISTINCT here makes Citus hash the
	 * merged ids on the coordinator, which is slow for millions of rows)
	 */
	citus_exec(job, psprintf("CREATE TEMP TABLE pg_temp.simhash_citus_rows AS SELECT %s::bigint AS id FROM %s",
							 job->id_column, job->relation), 0, NULL, NULL, NULL);
	citus_exec(job, "ANALYZE pg_temp.simhash_citus_linked", 0, NULL, NULL, NULL);
	citus_exec(job, "ANALYZE pg_temp.simhash_citus_rows", 0, NULL, NULL, NULL);
	citus_exec_into(job, "SELECT r.id, coalesce(g.group_id, r.id) FROM pg_temp.simhash_citus_rows r"
					" LEFT JOIN pg_temp.simhash_citus_linked g ON g.id = r.id",
					dest, 0, NULL, NULL, NULL);
	citus_exec(job, "DROP TABLE pg_temp.simhash_citus_pairs, pg_temp.simhash_citus_edges, pg_temp.simhash_citus_keys,"
			   " pg_temp.simhash_citus_linked, pg_temp.simhash_citus_rows", 0, NULL, NULL, NULL);
}

/*
 * simhash_groups: the groups of more than one row computed on the workers
 * (citus_groups) into a work table co-located with the rows' ids -- the
 * relation itself when it is distributed by the id column as bigint, else a
 * work table of its ids -- then every row of the relation with its group's
 * id (its own when in no group) into dest, from one query that each shard
 * answers for its own rows.
 */
static void
citus_simhash_groups(CitusJob *job, DedupInput *in, bool leader, DestReceiver *dest)
{
	const char *rows;
	const char *row_id;
	char	   *ids = NULL;
	char	   *groups;

	if (citus_distributed_by_id(job) && in->id_column_type == INT8OID)
	{
		rows = job->relation;
		row_id = job->id_column;
	}
	else
	{
		ids = citus_work_table(job, "row_ids", NULL);
		citus_exec(job, psprintf("INSERT INTO %s (id) SELECT %s::bigint FROM %s", ids, job->id_column, job->relation),
				   0, NULL, NULL, NULL);
		rows = ids;
		row_id = "id";
	}
	groups = citus_work_table(job, "groups", rows);
	citus_groups(job, in->hash_column, &in->blocks, groups, leader);
	citus_exec_into(job, psprintf("SELECT r.%1$s::bigint, coalesce(g.group_id, r.%1$s::bigint) FROM %2$s r"
								  " LEFT JOIN %3$s g ON g.id = r.%1$s",
								  row_id, rows, groups),
					dest, 0, NULL, NULL, NULL);
	citus_exec(job, psprintf("DROP TABLE %s%s%s", groups, ids != NULL ? ", " : "", ids != NULL ? ids : ""),
			   0, NULL, NULL, NULL);
}

/* simhash_pairs and simhash_groups: the pairs searched on the workers */
static void
citus_simhash_job(CitusJob *job, DedupInput *in, FunctionCallInfo fcinfo, int id_type_arg,
				  DestReceiver *dest)
{
	char	   *search;
	char	   *part;

	citus_check_ids(job);
	if (strcmp(in->fname, "simhash_groups") == 0)
	{
		char	   *linkage = text_to_cstring(PG_GETARG_TEXT_PP(citus_arg(id_type_arg, 1)));

		citus_simhash_groups(job, in, strcmp(linkage, "leader") == 0, dest);
		return;
	}
	part = citus_parts(job, in->hash_column, &in->blocks, &search);
	citus_exec_into(job, search, dest, 0, NULL, NULL, NULL);
	citus_exec(job, psprintf("DROP TABLE %s", part), 0, NULL, NULL, NULL);
}

/*
 * The keys of every row repartitioned by key (work table <part>_k: key,
 * id; each row's keys distinct), returned; the single-node job's NOTICE
 * about keys shared by more than max_key_rows rows.  The keys are those of
 * the bigint[] column keys_column (bands 0), or the band keys of the
 * minhash_signature column keys_column.  The keys to use are those with
 * 2 .. max_key_rows rows.
 */
static char *
citus_keys(CitusJob *job, const char *keys_column, int bands, int max_key_rows)
{
	const char *col = quote_identifier(keys_column);
	char	   *part = citus_work_table(job, "keys", NULL);
	char	   *keys;
	uint64		moved;
	int64		skipped;

	if (bands == 0)
		keys = psprintf("r.%s", col);
	else
		keys = psprintf("CASE WHEN %1$s.minhash_params(r.%2$s) IS NOT NULL THEN %1$s.minhash_bands(r.%2$s, %3$d) END",
						job->ext, col, bands);
	moved = citus_exec(job, psprintf("INSERT INTO %s (key, id) SELECT k.k, r.%s::bigint FROM %s r,"
									 " LATERAL (SELECT DISTINCT u.k FROM unnest(%s) u(k) WHERE u.k IS NOT NULL) k",
									 part, job->id_column, job->relation, keys),
					   0, NULL, NULL, NULL);
	dedup_progress(&job->progress, "repartitioned " UINT64_FORMAT " (key, row) pairs by key", moved);
	skipped = citus_exec_int64(job, psprintf("SELECT count(*) FROM (SELECT key FROM %s GROUP BY key HAVING count(*) > %d) s",
											 part, max_key_rows));
	if (skipped > 0)
		ereport(NOTICE,
				(errmsg("%s: skipped " INT64_FORMAT " keys shared by more than %d rows",
						job->fname, skipped, max_key_rows),
				 errhint("Raise max_key_rows to use them.")));
	return part;
}

/*
 * Every pair of rows of every used key (2 .. max_key_rows rows) of the work
 * table keys, (smaller id, larger id), once per shared key, repartitioned
 * by the smaller id into the work table <part>_p (a, b), co-located with
 * colocate (NULL: Citus's default); returns it.
 */
static char *
citus_key_pairs(CitusJob *job, const char *keys, int max_key_rows, const char *colocate)
{
	char	   *part = citus_work_table(job, "pairs", colocate);
	uint64		moved;

	moved = citus_exec(job, psprintf("WITH used AS (SELECT x.key, x.id FROM %1$s x JOIN (SELECT key FROM %1$s GROUP BY key"
									 " HAVING count(*) BETWEEN 2 AND %2$d) u ON u.key = x.key)"
									 " INSERT INTO %3$s (a, b) SELECT x.id, y.id FROM used x JOIN used y ON y.key = x.key AND x.id < y.id",
									 keys, max_key_rows, part),
					   0, NULL, NULL, NULL);
	dedup_progress(&job->progress, "repartitioned " UINT64_FORMAT " candidate pairs by their first id", moved);
	return part;
}

/* shared_key_pairs and shared_key_groups: keys and pairs on the workers */
static void
citus_key_job(CitusJob *job, DedupInput *in, FunctionCallInfo fcinfo, int id_type_arg,
			  DestReceiver *dest)
{
	bool		groups = strcmp(in->fname, "shared_key_groups") == 0;
	int			min_shared = PG_GETARG_INT32(citus_arg(id_type_arg, 0));
	int			max_key_rows = PG_GETARG_INT32(citus_arg(id_type_arg, 1));
	char	   *keys;
	char	   *pairs;

	citus_check_ids(job);
	keys = citus_keys(job, in->hash_column, 0, max_key_rows);
	if (!groups)
	{
		pairs = citus_key_pairs(job, keys, max_key_rows, NULL);
		citus_exec_into(job, psprintf("SELECT a, b, count(*)::integer FROM %s GROUP BY a, b HAVING count(*) >= %d",
									  pairs, min_shared),
						dest, 0, NULL, NULL, NULL);
		citus_exec(job, psprintf("DROP TABLE %s, %s", pairs, keys), 0, NULL, NULL, NULL);
		return;
	}
	citus_exec(job, "CREATE TEMP TABLE pg_temp.simhash_citus_pairs (a bigint, b bigint)", 0, NULL, NULL, NULL);
	if (min_shared == 1)
	{
		/*
		 * rows sharing a key are connected: one edge from each row of a used
		 * key to the key's least id
		 */
		citus_exec(job, psprintf("INSERT INTO pg_temp.simhash_citus_pairs SELECT s.id, s.least_id FROM"
								 " (SELECT x.id, min(x.id) OVER (PARTITION BY x.key) AS least_id FROM %1$s x JOIN"
								 " (SELECT key FROM %1$s GROUP BY key HAVING count(*) BETWEEN 2 AND %2$d) u ON u.key = x.key) s"
								 " WHERE s.id <> s.least_id", keys, max_key_rows),
				   0, NULL, NULL, NULL);
		citus_exec(job, psprintf("DROP TABLE %s", keys), 0, NULL, NULL, NULL);
	}
	else
	{
		pairs = citus_key_pairs(job, keys, max_key_rows, NULL);
		citus_exec(job, psprintf("INSERT INTO pg_temp.simhash_citus_pairs SELECT a, b FROM %s GROUP BY a, b HAVING count(*) >= %d",
								 pairs, min_shared),
				   0, NULL, NULL, NULL);
		citus_exec(job, psprintf("DROP TABLE %s, %s", pairs, keys), 0, NULL, NULL, NULL);
	}
	citus_connected(job, dest);
}

/*
 * The signatures' parameters: one set over the table (as minhash_pairs
 * checks row by row), whose permutations bands must not exceed.
 */
static void
citus_minhash_params(CitusJob *job, const char *sig_column, int bands)
{
	const char *col = quote_identifier(sig_column);
	char	   *first;
	const char *perms;

	citus_exec(job, psprintf("SELECT s.p FROM (SELECT DISTINCT %1$s.minhash_params(%2$s) AS p FROM %3$s WHERE %2$s IS NOT NULL) s"
							 " WHERE s.p IS NOT NULL ORDER BY s.p LIMIT 2",
							 job->ext, col, job->relation),
			   0, NULL, NULL, NULL);
	if (SPI_processed == 0)
		return;
	first = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	if (SPI_processed > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s: the signatures of column \"%s\" have different parameters",
						job->fname, sig_column),
				 errdetail("One has %s, another %s.", first,
						   SPI_getvalue(SPI_tuptable->vals[1], SPI_tuptable->tupdesc, 1))));
	perms = strstr(first, "permutations=");
	if (perms != NULL)
	{
		int			n = atoi(perms + strlen("permutations="));

		if (bands > n)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s: bands (%d) must not exceed the signatures' permutations (%d)",
							job->fname, bands, n)));
	}
}

/*
 * minhash_pairs and minhash_groups.  Band keys repartitioned by key,
 * candidate pairs by their first id; the first id's signature joins them
 * there (from the relation itself when it is distributed by the id column
 * as bigint, else from a work table <part>_s (id, sig)), they move to the
 * second id's shard, whose signature completes the estimate; only the kept
 * pairs reach this node.
 */
static void
citus_minhash_job(CitusJob *job, DedupInput *in, FunctionCallInfo fcinfo, int id_type_arg,
				  DestReceiver *dest)
{
	bool		groups = strcmp(in->fname, "minhash_groups") == 0;
	float8		threshold = PG_GETARG_FLOAT8(citus_arg(id_type_arg, 0));
	int			bands = PG_GETARG_INT32(citus_arg(id_type_arg, 1));
	int			max_key_rows = PG_GETARG_INT32(citus_arg(id_type_arg, 2));
	const char *sig_column = quote_identifier(in->hash_column);
	char	   *sigs;
	const char *sig_id;
	const char *sig_col;
	char	   *work;
	char	   *keys;
	char	   *pairs;
	char	   *moved;
	char	   *pairs_sql;

	citus_check_ids(job);
	citus_minhash_params(job, in->hash_column, bands);

	/* where the signatures are found by id, distributed by id */
	if (citus_distributed_by_id(job) && in->id_column_type == INT8OID)
	{
		sigs = (char *) job->relation;
		sig_id = job->id_column;
		sig_col = sig_column;
		work = "";
	}
	else
	{
		sigs = citus_work_table(job, "signatures", NULL);
		citus_exec(job, psprintf("INSERT INTO %s (id, sig) SELECT %s::bigint, %s FROM %s WHERE %s IS NOT NULL",
								 sigs, job->id_column, sig_column, job->relation, sig_column),
				   0, NULL, NULL, NULL);
		sig_id = "id";
		sig_col = "sig";
		work = psprintf("%s, ", sigs);
	}
	keys = citus_keys(job, in->hash_column, bands, max_key_rows);
	pairs = citus_key_pairs(job, keys, max_key_rows, sigs);
	moved = citus_work_table(job, "moved", sigs);
	citus_exec(job, psprintf("INSERT INTO %s (b, a, sig_a) SELECT p.b, p.a, s.%s FROM (SELECT a, b FROM %s GROUP BY a, b) p"
							 " JOIN %s s ON s.%s = p.a", moved, sig_col, pairs, sigs, sig_id),
			   0, NULL, NULL, NULL);
	dedup_progress(&job->progress, "estimating the candidate pairs on the workers");
	/* the threshold printed exactly (17 significant digits read back as it) */
	pairs_sql = psprintf("SELECT m.a, m.b, j FROM %s m JOIN %s s ON s.%s = m.b,"
						 " LATERAL (SELECT %s.minhash_jaccard(m.sig_a, s.%s) AS j) e WHERE j >= '%.17g'::float8",
						 moved, sigs, sig_id, job->ext, sig_col, threshold);
	if (!groups)
		citus_exec_into(job, pairs_sql, dest, 0, NULL, NULL, NULL);
	else
	{
		citus_exec(job, "CREATE TEMP TABLE pg_temp.simhash_citus_pairs (a bigint, b bigint)", 0, NULL, NULL, NULL);
		citus_exec(job, psprintf("INSERT INTO pg_temp.simhash_citus_pairs SELECT p.a, p.b FROM (%s) p", pairs_sql),
				   0, NULL, NULL, NULL);
		citus_connected(job, dest);
	}
	citus_exec(job, psprintf("DROP TABLE %s%s, %s, %s", work, moved, pairs, keys), 0, NULL, NULL, NULL);
}

void
dedup_citus_run(DedupInput *in, FunctionCallInfo fcinfo, int id_type_arg, DestReceiver *dest)
{
	CitusJob	job;

	citus_job_begin(&job, in->fname, in->relid, in->id_column, fcinfo->flinfo->fn_oid);
	if (strncmp(in->fname, "simhash_", 8) == 0)
		citus_simhash_job(&job, in, fcinfo, id_type_arg, dest);
	else if (strncmp(in->fname, "shared_key_", 11) == 0)
		citus_key_job(&job, in, fcinfo, id_type_arg, dest);
	else if (strncmp(in->fname, "minhash_", 8) == 0)
		citus_minhash_job(&job, in, fcinfo, id_type_arg, dest);
	else
		elog(ERROR, "%s: no job on the workers", in->fname);
	citus_job_end(&job);
}
