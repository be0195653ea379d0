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
 * 2. The distributed search of simhash_pairs / simhash_groups
 * (citus_jobs.c, citus_work.c; the SQL functions the workers run are in
 * citus_worker.c).  With m blocks and k = max_distance, two fingerprints
 * within k bits differ in at most k blocks, so they agree on one of blocks
 * 0 .. k; find_all's tables form k + 1 groups (simhash_table_group()),
 * group g's tables all start with block g, and each pair is reported by its
 * lowest table only (simhash_first_table()), equal fingerprints by group 0.
 * So the rows can be partitioned by (g, bits of block g) --
 * simhash_group_block() -- and every part searched alone with group g's
 * tables -- simhash_group_pairs(): the union over the parts is every pair
 * exactly once, on any number of nodes.  The job copies the rows k + 1
 * times into a distributed work table distributed by the block bits
 * (Citus's repartitioned INSERT ... SELECT moves them between workers
 * directly), and one query grouped by that distribution column runs each
 * part's search on the worker that holds it; only pairs travel to the
 * coordinator.  simhash_groups keeps the pairs on the workers instead and
 * computes its groups there as simhash_groups_into does (5.), into a work
 * table co-located with the rows' ids; every row then comes back with its
 * group's id from one query answered shard by shard (a LEFT JOIN of the
 * rows with that work table), streamed into the call's result.
 *
 * 3. The keys and MinHash jobs (citus_jobs.c).  A pair shares a key, so
 * the rows' distinct keys are repartitioned by key into a work table: all
 * rows of a key meet on one shard, where the max_key_rows cap sees the
 * key's global row count, exactly as the single-node sort does.  Each shard
 * pairs the rows of its keys; the pairs are repartitioned by their first id
 * and counted there (min_shared).  For MinHash the keys are the band keys,
 * and a candidate pair is joined with the first row's signature on that
 * row's shard, moved to the second row's shard and estimated there
 * (minhash_jaccard, the same fraction of equal slots as the single-node
 * job); only kept pairs reach the coordinator.  Groups: union-find on the
 * coordinator (shared_key_groups over the rows with a pair; a key's rows are
 * linked to its least id when min_shared = 1).
 *
 * 4. The hand-over (dedup_citus_handover, here).  The plain job names run
 * the distributed job when the relation is a Citus distributed table, so
 * that the same SQL works on one node and on Citus; there are no other
 * names.  The plain job has checked its arguments; the distributed job
 * (static C code, not an SQL object, so nothing a user could call apart)
 * creates distributed work tables (DDL, writes, two-phase commits) and
 * carries ids as bigint, so the plain job reads the rows here instead --
 * with the NOTICE saying why -- when simhash.citus_jobs is off, on a
 * standby or in a read-only transaction, inside a parallel query, for ids
 * that are not smallint, integer or bigint, or without CREATE on the
 * relation's schema.  The job runs with the caller's privileges, under
 * search_path = pg_catalog, pg_temp, every statement built from quoted
 * identifiers and the extension's schema (citus_work.c), and reports
 * progress under the plain name.
 *
 * 5. simhash_groups_into (citus_groups_into.c) keeps the pairs on the
 * workers and computes connected groups there by label propagation, the
 * leader linkage per connected group on the worker holding its pairs
 * (simhash_leader_groups), into a table co-located with the source
 * (citus_groups(), citus_work.c, which simhash_groups shares).
 *
 * A worker that is down or restarts during a job makes Citus raise its
 * connection error, which aborts the statement (and rolls back the work
 * tables): a job never returns partial results.
 */
#include "dedup.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"

#include "compat.h"


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
 * Run the job on the workers (citus_jobs.c) with the call's arguments, its
 * rows (bigint ids) put into the call's result as the job's id type.  See
 * dedup.h.
 */
bool
dedup_citus_handover(DedupInput *in, FunctionCallInfo fcinfo, int id_type_arg)
{
	CitusReceiver r;
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

	memset(&r, 0, sizeof(r));
	r.pub.receiveSlot = citus_receive;
	r.pub.rStartup = citus_startup;
	r.pub.rShutdown = citus_shutdown;
	r.pub.rDestroy = citus_destroy;
	r.pub.mydest = DestNone;
	r.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	r.id_type = in->id_type;
	dedup_citus_run(in, fcinfo, id_type_arg, &r.pub);
	SPI_finish();
	return true;
}
