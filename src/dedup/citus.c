/*
 * dedup/citus.c
 *		The dedup jobs on Citus distributed tables.
 *
 * The extension does not depend on Citus: it must load, and every job must
 * work, on a server without it.  Citus is recognised at run time by its
 * catalog tables pg_catalog.pg_dist_partition / pg_dist_shard, looked up by
 * name; without them nothing here does anything.
 *
 * 1. The fallback.  A job's one read of its table (read.c: "SELECT
 * id, value FROM rel" through SPI) goes through Citus's planner like any
 * query: on a distributed table it fans out to every shard and streams all
 * rows to the node running the job (the coordinator), which runs the
 * single-node job.  The result is exactly the single-node result, pairs and
 * groups (connected and leader) alike, chains across shards included; the
 * cost is that every row crosses the network and the search uses one core.
 * The job says so with a NOTICE (dedup_citus_notice(), citus_catalog.c)
 * naming the table and its shard count.  Reference tables and Citus local tables (partition
 * method 'n') are read locally, without a NOTICE.
 *
 * 2. The distributed search (simhash_pairs_citus / simhash_groups_citus,
 * PL/pgSQL in sql/simhash.sql, on the two C functions below).
 * With m blocks and k = max_distance, two fingerprints within k bits differ
 * in at most k blocks, so they agree on one of blocks 0 .. k; find_all's
 * tables form k + 1 groups (simhash_table_group()), group g's tables all
 * start with block g, and each pair is reported by its lowest table only
 * (simhash_first_table()), equal fingerprints by group 0.  So the rows can
 * be partitioned by (g, bits of block g) -- simhash_group_block() -- and
 * every part searched alone with group g's tables -- simhash_group_pairs():
 * the union over the parts is every pair exactly once, on any number of
 * nodes.  The job copies the rows k + 1 times into a distributed work table
 * distributed by the block bits (Citus's repartitioned INSERT ... SELECT
 * moves them between workers directly), and one query grouped by that
 * distribution column runs each part's search on the worker that holds it;
 * only pairs travel to the coordinator.  Groups are then computed there
 * from the pairs (union-find via shared_key_groups; the leader linkage by
 * an ordered pass in id order, as simhash_groups does).
 *
 * 3. The keys and MinHash jobs (shared_key_*_citus, minhash_*_citus,
 * PL/pgSQL; the C parts here only check arguments as the single-node jobs
 * do, simhash_citus_input, and read a signature's parameters).  A pair
 * shares a key, so the rows' distinct keys are repartitioned by key into a
 * work table: all rows of a key meet on one shard, where the max_key_rows
 * cap sees the key's global row count, exactly as the single-node sort
 * does.  Each shard pairs the rows of its keys; the pairs are repartitioned
 * by their first id and counted there (min_shared).  For MinHash the keys
 * are the band keys, and a candidate pair is joined with the first row's
 * signature on that row's shard, moved to the second row's shard and
 * estimated there (minhash_jaccard, the same fraction of equal slots as
 * the single-node job); only kept pairs reach the coordinator.  Groups:
 * union-find on the coordinator (shared_key_groups over the rows with a
 * pair; a key's rows are linked to its least id when min_shared = 1).
 *
 * 4. The hand-over (dedup_citus_handover).  The plain job names run their
 * _citus version when the relation is a Citus distributed table, so that the
 * same SQL works on one node and on Citus.  Because the _citus versions
 * create distributed work tables (DDL, writes, two-phase commits) and carry
 * ids as bigint, the plain job reads the rows here instead -- with the
 * NOTICE saying why -- when simhash.citus_jobs is off, on a standby or in a
 * read-only transaction, inside a parallel query, for ids that are not
 * smallint, integer or bigint, or without CREATE on the relation's schema.
 * The _citus job (PL/pgSQL with search_path = pg_catalog, pg_temp, its
 * calls qualified by the extension's schema) reports progress under the
 * plain name (simhash_citus_progress).

 * A worker that is down or restarts during either makes Citus raise its
 * connection error, which aborts the statement (and rolls back the work
 * table): a job never returns partial results.
 */
#include "dedup.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/params.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"

#include "compat.h"
#include "core/minhash.h"

/* the job handed over, for its progress NOTICEs; "" when none is running */
static char citus_job[NAMEDATALEN];
static DedupProgress citus_progress;


/* integer ids, which the jobs on the workers carry as bigint */
static bool
citus_integer_type(Oid typid)
{
	return typid == INT2OID || typid == INT4OID || typid == INT8OID;
}

/*
 * Why the job on in's relation cannot run on the workers (which creates
 * distributed work tables: DDL, writes, two-phase commits), or NULL if it
 * can.
 */
static const char *
citus_why_not(DedupInput *in)
{
	Oid			nsp = get_rel_namespace(in->relid);

	if (!simhash_citus_jobs)
		return "simhash.citus_jobs is off";
	if (RecoveryInProgress())
		return "this server is a standby";
	if (XactReadOnly)
		return "the transaction is read-only";
	if (IsInParallelMode())
		return "the job is called within a parallel query";
	if (!citus_integer_type(in->id_type) || !citus_integer_type(in->id_column_type))
		return psprintf("ids of type %s are read here (the workers take smallint, integer and bigint ids)",
						format_type_be(in->id_column_type));
	if (simhash_namespace_aclcheck(nsp, GetUserId(), ACL_CREATE) != ACLCHECK_OK)
		return psprintf("the job's work tables need CREATE on schema %s",
						quote_identifier(get_namespace_name(nsp)));
	return NULL;
}

/* The receiver of the rows of a handed-over job: into the call's result. */
typedef struct CitusReceiver
{
	DestReceiver pub;
	ReturnSetInfo *rsinfo;
	Oid			id_type;
} CitusReceiver;

/*
 * A bigint id as a Datum of the job's id type (smallint, integer, bigint),
 * by the cast the single-node job's read applies (an error out of range).
 */
static Datum
citus_id_datum(Datum v, Oid id_type)
{
	if (id_type == INT4OID)
		return DirectFunctionCall1(int84, v);
	if (id_type == INT2OID)
		return DirectFunctionCall1(int82, v);
	return v;
}

static bool
citus_receive(TupleTableSlot *slot, DestReceiver *self)
{
	CitusReceiver *r = (CitusReceiver *) self;
	int			natts = r->rsinfo->setDesc->natts;
	Datum		values[3];
	bool		nulls[3];

	slot_getallattrs(slot);
	Assert(natts <= 3 && slot->tts_tupleDescriptor->natts == natts);
	for (int i = 0; i < natts; i++)
	{
		values[i] = slot->tts_values[i];
		nulls[i] = slot->tts_isnull[i];
		if (i < 2 && !nulls[i])
			values[i] = citus_id_datum(values[i], r->id_type);
	}
	tuplestore_putvalues(r->rsinfo->setResult, r->rsinfo->setDesc, values, nulls);
	return true;
}

static void
citus_startup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
}

static void
citus_shutdown(DestReceiver *self)
{
}

static void
citus_destroy(DestReceiver *self)
{
}

/*
 * Run the job on the workers: its *_citus version with the call's arguments
 * but id_type, its rows (bigint ids) put into the call's result as the
 * job's id type.  See dedup.h.
 */
bool
dedup_citus_handover(DedupInput *in, FunctionCallInfo fcinfo, int id_type_arg)
{
	int			nargs = PG_NARGS();
	ParamListInfo params;
	StringInfoData query;
	SPIExecuteOptions options;
	CitusReceiver r;
	int			n = 0;
	int			rc;
	char	   *extschema;
	const char *why;

	if (!dedup_citus_installed())
		return false;
	/* in the caller's memory context: the NOTICE of the read uses it */
	why = citus_why_not(in);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (dedup_citus_shard_count(in->relid, in->fname) < 0)
	{
		SPI_finish();
		return false;
	}
	if (why != NULL)
	{
		SPI_finish();
		in->citus_pull = why;
		return false;
	}

	/*
	 * SELECT * FROM <the extension's schema>.<job>_citus($1, ...); the query
	 * and its parameters live in SPI's memory, until SPI_finish
	 */
	initStringInfo(&query);
	extschema = get_namespace_name(get_func_namespace(fcinfo->flinfo->fn_oid));
	appendStringInfo(&query, "SELECT * FROM %s.", quote_identifier(extschema));
	appendStringInfoString(&query, quote_identifier(psprintf("%s_citus", in->fname)));
	appendStringInfoChar(&query, '(');
	params = makeParamList(nargs);
	params->numParams = 0;
	for (int i = 0; i < nargs; i++)
	{
		ParamExternData *p;

		if (i == id_type_arg)
			continue;
		p = &params->params[n];
		p->value = PG_GETARG_DATUM(i);
		p->isnull = PG_ARGISNULL(i);
		p->pflags = PARAM_FLAG_CONST;
		p->ptype = get_fn_expr_argtype(fcinfo->flinfo, i);
		if (!OidIsValid(p->ptype))
			elog(ERROR, "%s: the type of argument %d is unknown", in->fname, i + 1);
		n++;
		appendStringInfo(&query, "%s$%d", n > 1 ? ", " : "", n);
	}
	params->numParams = n;
	appendStringInfoChar(&query, ')');

	memset(&r, 0, sizeof(r));
	r.pub.receiveSlot = citus_receive;
	r.pub.rStartup = citus_startup;
	r.pub.rShutdown = citus_shutdown;
	r.pub.rDestroy = citus_destroy;
	r.pub.mydest = DestNone;
	r.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	r.id_type = in->id_type;
	memset(&options, 0, sizeof(options));
	options.params = params;
	options.read_only = false;
	options.dest = &r.pub;

	/* the job sets its own search_path (pg_catalog, pg_temp) */
	strlcpy(citus_job, in->fname, sizeof(citus_job));
	dedup_progress_start(&citus_progress, citus_job);
	PG_TRY();
	{
		rc = SPI_execute_extended(query.data, &options);
	}
	PG_FINALLY();
	{
		citus_job[0] = '\0';
	}
	PG_END_TRY();
	if (rc < 0)
		elog(ERROR, "%s: the job on the workers failed: %s", in->fname,
			 SPI_result_code_string(rc));
	SPI_finish();
	return true;
}

/*
 * simhash_citus_job_name(job) → text: the name the user called while a job
 * is handed over (simhash_pairs for simhash_pairs_citus), else job; the
 * _citus jobs' messages use it, so that they read as the single-node job's.
 */
PG_FUNCTION_INFO_V1(simhash_citus_job_name);
Datum
simhash_citus_job_name(PG_FUNCTION_ARGS)
{
	if (citus_job[0] != '\0')
		PG_RETURN_TEXT_P(cstring_to_text(citus_job));
	PG_RETURN_DATUM(PG_GETARG_DATUM(0));
}

/*
 * simhash_citus_progress(job, message) → void: a progress NOTICE of a job
 * on the workers ("job: message"), at most every simhash.progress_interval
 * seconds, named as the user called it (simhash_pairs when handed over).
 */
PG_FUNCTION_INFO_V1(simhash_citus_progress);
Datum
simhash_citus_progress(PG_FUNCTION_ARGS)
{
	char	   *message;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_VOID();
	message = text_to_cstring(PG_GETARG_TEXT_PP(1));
	if (citus_job[0] == '\0')
	{
		/* called directly: its own name, its own clock */
		char	   *job = text_to_cstring(PG_GETARG_TEXT_PP(0));

		if (citus_progress.fname == NULL || strcmp(citus_progress.fname, job) != 0)
		{
			static char direct_job[NAMEDATALEN];

			strlcpy(direct_job, job, sizeof(direct_job));
			dedup_progress_start(&citus_progress, direct_job);
			citus_progress.last = 0;
		}
	}
	dedup_progress(&citus_progress, "%s", message);
	PG_RETURN_VOID();
}

/* ---- the worker side of simhash_pairs_citus() and simhash_groups_citus() ---- */

/* checked blocks and max_distance arguments at positions ba and ka */
static void
citus_blocks(FunctionCallInfo fcinfo, int ba, int ka, SimhashBlocks *b)
{
	int32		blocks = PG_GETARG_INT32(ba);
	int32		max_distance = PG_GETARG_INT32(ka);

	simhash_blocks_init_checked(b, blocks, max_distance);
}

/* the table group argument at position ga, checked against b */
static int
citus_group(FunctionCallInfo fcinfo, int ga, const SimhashBlocks *b)
{
	int32		grp = PG_GETARG_INT32(ga);

	if (grp < 0 || grp > b->max_distance)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("table group %d is out of range", grp),
				 errdetail("With max_distance %d the groups are 0 .. %d.",
						   b->max_distance, b->max_distance)));
	return grp;
}

/*
 * simhash_group_block(h, grp, blocks, max_distance) → bigint: the bits of
 * block grp of h (the others zero).  Two fingerprints are compared by table
 * group grp only if these agree, so rows partitioned by this value (and
 * grp) can be searched part by part, on different nodes.
 */
PG_FUNCTION_INFO_V1(simhash_group_block);
Datum
simhash_group_block(PG_FUNCTION_ARGS)
{
	simhash64	h = PG_GETARG_SIMHASH64(0);
	SimhashBlocks b;
	int			grp;

	citus_blocks(fcinfo, 2, 3, &b);
	grp = citus_group(fcinfo, 1, &b);
	PG_RETURN_INT64((int64) (h & b.mask[grp]));
}

/*
 * simhash_group_pairs(ids bigint[], hashes simhash64[], grp, blocks,
 * max_distance) → TABLE (id_a, id_b, distance): the pairs among these rows
 * that table group grp reports (those whose lowest table is in the group;
 * equal fingerprints by group 0 only), ids ordered.  Over the parts of a
 * partition by (grp, simhash_group_block()), the union is every pair within
 * max_distance exactly once: what simhash_pairs() finds in one search.
 */
PG_FUNCTION_INFO_V1(simhash_group_pairs);
Datum
simhash_group_pairs(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ArrayType  *ida = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *ha = PG_GETARG_ARRAYTYPE_P(1);
	SimhashBlocks b;
	int			grp,
				lo,
				hi;
	Datum	   *ids,
			   *hs;
	bool	   *idnull,
			   *hnull;
	int			nid,
				nh;
	size_t		n = 0;
	uint64	   *hash,
			   *key;
	SimhashRowPairs *r;
	SimhashRowPair *pairs;
	void	   *work;

	citus_blocks(fcinfo, 3, 4, &b);
	grp = citus_group(fcinfo, 2, &b);
	InitMaterializedSRF(fcinfo, 0);

	deconstruct_array(ida, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &ids, &idnull, &nid);
	deconstruct_array(ha, ARR_ELEMTYPE(ha), 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &hs, &hnull, &nh);
	if (nid != nh)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("simhash_group_pairs: %d ids but %d fingerprints", nid, nh)));
	if ((size_t) nh >= (size_t) PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("simhash_group_pairs: too many rows to search at once")));

	/* rows with a fingerprint; keys are positions in ids */
	hash = palloc(sizeof(uint64) * Max(nh, 1));
	key = palloc(sizeof(uint64) * Max(nh, 1));
	for (int i = 0; i < nh; i++)
	{
		if (idnull[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("simhash_group_pairs: a NULL id")));
		if (hnull[i])
			continue;
		hash[n] = DatumGetSimhash64(hs[i]);
		key[n] = (uint64) i;
		n++;
	}
	if (n < 2)
		return (Datum) 0;

	simhash_table_group(&b, grp, &lo, &hi);
	r = palloc(sizeof(SimhashRowPairs));
	pairs = palloc(sizeof(SimhashRowPair) * 1024);
	work = MemoryContextAllocHuge(CurrentMemoryContext, SIMHASH_ROW_PAIRS_WORK(n));
	simhash_row_pairs_begin(r, &b, hash, key, n, work, lo, hi, grp == 0);
	while (!simhash_row_pairs_done(r))
	{
		size_t		np;

		CHECK_FOR_INTERRUPTS();
		np = simhash_row_pairs_next(r, pairs, 1024);
		for (size_t i = 0; i < np; i++)
		{
			int64		a = DatumGetInt64(ids[pairs[i].a]);
			int64		c = DatumGetInt64(ids[pairs[i].b]);
			Datum		values[3];
			bool		nulls[3] = {false, false, false};

			values[0] = Int64GetDatum(Min(a, c));
			values[1] = Int64GetDatum(Max(a, c));
			values[2] = Int32GetDatum(pairs[i].distance);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	return (Datum) 0;
}

/* ---- argument checks and MinHash parameters for the other *_citus jobs ---- */

/*
 * simhash_citus_input(relation, id_column, value_column, job) → boolean:
 * the checks of the single-node job's arguments (relation, columns and
 * their types, bigint ids), with its messages naming job; true if the id
 * column is declared NOT NULL (else the caller looks for NULL ids).  The
 * value column's type follows from the job's name: simhash64 for simhash_*,
 * minhash_signature for minhash_*, bigint[] for shared_key_*.
 */
PG_FUNCTION_INFO_V1(simhash_citus_input);
Datum
simhash_citus_input(PG_FUNCTION_ARGS)
{
	DedupInput	in;
	char	   *job;
	HeapTuple	tuple;
	bool		notnull = false;
	AttrNumber	att;

	if (PG_ARGISNULL(3))
		elog(ERROR, "simhash_citus_input: job must not be NULL");
	job = text_to_cstring(PG_GETARG_TEXT_PP(3));
	if (strncmp(job, "simhash_", 8) == 0)
		dedup_input_init_columns(&in, fcinfo, job, -1, "hash_column",
								 dedup_extension_type(fcinfo, "simhash64"),
								 "Compute fingerprints into a simhash64 column, for example with simhash(text).");
	else if (strncmp(job, "minhash_", 8) == 0)
		dedup_input_init_columns(&in, fcinfo, job, -1, "sig_column",
								 dedup_extension_type(fcinfo, "minhash_signature"),
								 "Compute signatures into a minhash_signature column, for example with minhash(text).");
	else if (strncmp(job, "shared_key_", 11) == 0)
		dedup_input_init_columns(&in, fcinfo, job, -1, "keys_column", INT8ARRAYOID,
								 "Keys are bigint[], for example sentence_hashes(body) or minhash_bands(sig, 32).");
	else
		elog(ERROR, "simhash_citus_input: unknown job \"%s\"", job);

	att = get_attnum(in.relid, in.id_column);
	tuple = SearchSysCache2(ATTNUM, ObjectIdGetDatum(in.relid), Int16GetDatum(att));
	if (HeapTupleIsValid(tuple))
	{
		notnull = ((Form_pg_attribute) GETSTRUCT(tuple))->attnotnull;
		ReleaseSysCache(tuple);
	}
	PG_RETURN_BOOL(notnull);
}

/*
 * simhash_citus_minhash_params(sig) → text: a signature's parameters, as
 * the jobs' errors print them ("n_gram=9 ... permutations=128 ..."), NULL
 * for an empty signature.  The distinct values over a table tell whether
 * its signatures can be compared, as minhash_pairs checks row by row.
 */
PG_FUNCTION_INFO_V1(simhash_citus_minhash_params);
Datum
simhash_citus_minhash_params(PG_FUNCTION_ARGS)
{
	struct varlena *v = PG_DETOAST_DATUM_PACKED(PG_GETARG_DATUM(0));
	MinhashParams p;
	bool		empty;
	const char *problem;
	char		buf[160];

	problem = minhash_read_header((const uint8_t *) VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v),
								  &p, &empty);
	if (problem)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid minhash signature: %s", problem)));
	if (empty)
		PG_RETURN_NULL();
	minhash_format_params(buf, sizeof(buf), &p);
	PG_RETURN_TEXT_P(cstring_to_text(buf));
}

/* ---- the leader linkage of a group's pairs, on the worker holding them ---- */

/* a pair of simhash_leader_groups() */
typedef struct LeaderPair
{
	int64		a;				/* the smaller id */
	int64		b;
	int32		distance;
} LeaderPair;

/* pairs in the order the leader linkage visits them: b, distance, a */
static int
leader_pair_cmp(const void *x, const void *y)
{
	const LeaderPair *p = x;
	const LeaderPair *q = y;

	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	if (p->distance != q->distance)
		return p->distance < q->distance ? -1 : 1;
	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	return 0;
}

static int
int64_cmp(const void *x, const void *y)
{
	int64		a = *(const int64 *) x;
	int64		b = *(const int64 *) y;

	return a < b ? -1 : a > b ? 1 : 0;
}

/* the position of id among the n sorted ids (it is there) */
static size_t
leader_position(const int64 *ids, size_t n, int64 id)
{
	const int64 *found = bsearch(&id, ids, n, sizeof(int64), int64_cmp);

	Assert(found != NULL);
	return (size_t) (found - ids);
}

/*
 * simhash_leader_groups(id_a bigint[], id_b bigint[], distance integer[])
 * → TABLE (id, group_id): the leader linkage of simhash_groups over these
 * pairs (id_a < id_b; every pair among their rows, as a connected group's
 * are): rows in id order join the nearest earlier leader among the rows
 * they pair with (ties: the least id), else lead.  The rows of the groups
 * of more than one row, each once; group_id is its leader's id (a leader
 * without followers is a group of one row).  A group's pairs alone decide its
 * leaders, so groups can be linked apart, each on the node holding it.
 */
PG_FUNCTION_INFO_V1(simhash_leader_groups);
Datum
simhash_leader_groups(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ArrayType  *arrays[3];
	Datum	   *values[3];
	bool	   *nulls[3];
	int			counts[3];
	LeaderPair *pairs;
	int64	   *ids,
			   *leader;
	bool	   *follower,
			   *led;
	size_t		n,
				m = 0;

	for (int i = 0; i < 3; i++)
	{
		arrays[i] = PG_GETARG_ARRAYTYPE_P(i);
		if (i < 2)
			deconstruct_array(arrays[i], INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
							  &values[i], &nulls[i], &counts[i]);
		else
			deconstruct_array(arrays[i], INT4OID, 4, true, TYPALIGN_INT,
							  &values[i], &nulls[i], &counts[i]);
	}
	if (counts[0] != counts[1] || counts[0] != counts[2])
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("simhash_leader_groups: %d, %d and %d elements", counts[0],
						counts[1], counts[2])));
	InitMaterializedSRF(fcinfo, 0);
	n = (size_t) counts[0];
	if (n == 0)
		return (Datum) 0;

	pairs = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(LeaderPair) * n);
	ids = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * 2 * n);
	for (size_t i = 0; i < n; i++)
	{
		if (nulls[0][i] || nulls[1][i] || nulls[2][i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("simhash_leader_groups: a NULL element")));
		pairs[i].a = DatumGetInt64(values[0][i]);
		pairs[i].b = DatumGetInt64(values[1][i]);
		pairs[i].distance = DatumGetInt32(values[2][i]);
		if (pairs[i].a >= pairs[i].b)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("simhash_leader_groups: id_a " INT64_FORMAT " is not less than id_b " INT64_FORMAT,
							pairs[i].a, pairs[i].b)));
		ids[2 * i] = pairs[i].a;
		ids[2 * i + 1] = pairs[i].b;
	}
	qsort(pairs, n, sizeof(LeaderPair), leader_pair_cmp);
	qsort(ids, 2 * n, sizeof(int64), int64_cmp);
	for (size_t i = 0; i < 2 * n; i++)
		if (m == 0 || ids[m - 1] != ids[i])
			ids[m++] = ids[i];
	leader = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * m);
	follower = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(bool) * m);
	memset(follower, 0, sizeof(bool) * m);

	/*
	 * Each b in ascending order: its first pair (by distance, then a) whose
	 * a leads makes it a follower of a.  Every a is less than its b, so its
	 * own place was decided before.
	 */
	for (size_t i = 0; i < n;)
	{
		int64		b = pairs[i].b;
		size_t		j;

		CHECK_FOR_INTERRUPTS();
		for (j = i; j < n && pairs[j].b == b; j++)
		{
			if (!follower[leader_position(ids, m, pairs[j].a)])
			{
				size_t		pb = leader_position(ids, m, b);

				follower[pb] = true;
				leader[pb] = pairs[j].a;
				break;
			}
		}
		while (j < n && pairs[j].b == b)
			j++;
		i = j;
	}
	/* leaders without followers are groups of one row: not reported */
	led = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(bool) * m);
	memset(led, 0, sizeof(bool) * m);
	for (size_t k = 0; k < m; k++)
		if (follower[k])
			led[leader_position(ids, m, leader[k])] = true;
	for (size_t k = 0; k < m; k++)
	{
		Datum		out[2];
		bool		outnull[2] = {false, false};

		if (!follower[k] && !led[k])
			continue;
		out[0] = Int64GetDatum(ids[k]);
		out[1] = Int64GetDatum(follower[k] ? leader[k] : ids[k]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, out, outnull);
	}
	return (Datum) 0;
}
