/*
 * read_parallel.c
 *		The table read of the dedup jobs by a table scan: parallel, in
 *		workers and the leader, or in the leader alone.  See
 *		dedup.h.
 *
 * Design.  read.c reads the table with one SPI query, in the leader: at
 * 10M rows that read was most of simhash_pairs, and it cannot be split by
 * the search's table groups.  Here the leader puts a parallel table scan
 * (table_parallelscan_initialize(), as CREATE INDEX of a btree does) in a
 * dynamic shared memory segment with the leader's active snapshot, the
 * snapshot the SPI query would use; the workers and the leader each take
 * blocks from it (table_beginscan_parallel()) and take the id and the value
 * of every visible row straight from the tuple.  The leader passes its own
 * rows to the job at once; each worker writes its rows, (id, value, NULL
 * flag), to a file of a SharedFileSet, which the leader reads back after
 * the workers have finished and passes on in the same way.  So every row
 * reaches the job once, in another order than the SPI read's; no job's
 * result depends on the order (pairs are a set, groups a union-find or a
 * sort by id).
 *
 * Which inputs.  Only those a heap scan reads exactly as the query would:
 * a plain table or populated materialized view (not a view, a
 * partitioned, foreign or temporary table, a table with inheritance
 * children, which the query reads too, nor any table while Citus is
 * installed: its distributed tables are read through their shards),
 * without row level
 * security for the user, on which the user may SELECT both columns (else
 * SPI runs and reports the missing privilege); ids of a by-value type of
 * at most 8 bytes, the id column's own type or smallint / integer read as
 * bigint (every other cast is left to SPI); a by-value value column
 * (simhash64).  Everything else, and tables estimated (pg_class.reltuples;
 * an unanalyzed table counts 100 rows per page) below
 * simhash.parallel_min_rows rows, are read through SPI as before.  A NULL
 * id fails the job with the SPI read's error, raised in the participant
 * that meets it (a worker's error reaches the leader through the
 * ParallelContext).
 *
 * With no workers (the table below simhash.parallel_min_rows rows,
 * max_parallel_maintenance_workers = 0, no segment) the leader scans the
 * table alone in the same way, with the active snapshot: for the same
 * inputs that is cheaper than the SPI query (no executor, slot or
 * DestReceiver call per row; a heap table's tuples by heap_getnext();
 * about half the CPU of the SPI read, bench/README.md).
 *
 * The workers are max_parallel_maintenance_workers (at most the table's
 * parallel_workers storage parameter, if set); the memory is the
 * files' buffers (the rows go to the job's search, which holds them as
 * before).  A failed or cancelled job stops the workers; the segment and
 * the files go with the transaction.
 */
#include "dedup.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/parallel.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "storage/bufmgr.h"
#include "storage/sharedfileset.h"
#include "storage/shm_toc.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"

#define READ_MAX_WORKERS 64

/* rows a participant buffers before writing them */
#define READ_BATCH 256

/* What every participant shares */
typedef DedupScanShared DedupReadShared;

/* A row as a worker writes it */
typedef struct DedupReadRecord
{
	uint64		id;
	uint64		value;
	uint64		value_isnull;
} DedupReadRecord;

/* Where a participant's rows go */
typedef struct ReadSink
{
	/* the leader: the job's callback */
	DedupRowFn	fn;
	void	   *arg;
	MemoryContext rowcxt;
	uint64		nrows;
	DedupProgress *progress;
	/* a worker: its file */
	BufFile    *file;
	DedupReadRecord batch[READ_BATCH];
	int			nbatch;
} ReadSink;

PGDLLEXPORT void dedup_read_parallel_main(dsm_segment *seg, shm_toc *toc);

/*
 * Pass one row to the job (in the leader), in the row context, which is
 * reset every READ_BATCH rows: the rows here are by value, and the jobs'
 * callbacks allocate nothing per row there, so this only bounds what a
 * callback might leave (and saves a reset per row).
 */
static inline void
sink_call(ReadSink *sink, Datum id, bool value_isnull, Datum value)
{
	MemoryContext old = MemoryContextSwitchTo(sink->rowcxt);

	sink->fn(sink->arg, sink->nrows, id, value_isnull, value);
	MemoryContextSwitchTo(old);
	if (++sink->nrows % READ_BATCH == 0)
		MemoryContextReset(sink->rowcxt);
}

/* Write a worker's buffered rows to its file. */
static void
sink_flush(ReadSink *sink)
{
	if (sink->nbatch > 0)
		BufFileWrite(sink->file, sink->batch, sink->nbatch * sizeof(DedupReadRecord));
	sink->nbatch = 0;
}

/* Pass one row to the sink (the leader's job, or a worker's file). */
static inline void
sink_row(DedupReadShared *sh, ReadSink *sink, Datum id, bool id_isnull,
		 Datum value, bool value_isnull)
{
	if (id_isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s: column \"%s\" of relation %s contains NULL",
						sh->fname, sh->id_column, sh->relname),
				 errdetail("Every row needs an id to be reported by.")));
	if (sh->widen)
		id = Int64GetDatum(sh->id_column_type == INT2OID ?
						   (int64) DatumGetInt16(id) : (int64) DatumGetInt32(id));
	if (value_isnull)
		value = (Datum) 0;
	if (sink->file == NULL)
	{
		sink_call(sink, id, value_isnull, value);
		if ((sink->nrows & 0xFFFF) == 0)
			dedup_progress(sink->progress, "read " UINT64_FORMAT " rows in the leader",
						   sink->nrows);
	}
	else
	{
		DedupReadRecord *rec = &sink->batch[sink->nbatch++];

		rec->id = (uint64) id;
		rec->value = (uint64) value;
		rec->value_isnull = value_isnull;
		if (sink->nbatch == READ_BATCH)
			sink_flush(sink);
	}
}

/*
 * Pass every row of scan (this participant's share of a parallel scan, or
 * the whole table) to the sink; ends the scan.  A heap table's tuples are
 * read with heap_getnext() and heap_getattr() (the columns' cached
 * offsets), without a slot: per row about half the CPU of
 * table_scan_getnextslot() and slot_getattr(); other table access methods
 * through a slot.
 */
static void
scan_rows(DedupReadShared *sh, Relation rel, TableScanDesc scan, ReadSink *sink)
{
	uint64		seen = 0;
	bool		id_isnull,
				value_isnull;
	Datum		id,
				value;

	if (rel->rd_tableam == GetHeapamTableAmRoutine())
	{
		TupleDesc	desc = RelationGetDescr(rel);
		HeapTuple	tup;

		while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
		{
			id = heap_getattr(tup, sh->id_attnum, desc, &id_isnull);
			value = heap_getattr(tup, sh->value_attnum, desc, &value_isnull);
			sink_row(sh, sink, id, id_isnull, value, value_isnull);
			if ((++seen & 0xFFF) == 0)
				CHECK_FOR_INTERRUPTS();
		}
	}
	else
	{
		TupleTableSlot *slot = table_slot_create(rel, NULL);

		while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
		{
			id = slot_getattr(slot, sh->id_attnum, &id_isnull);
			value = slot_getattr(slot, sh->value_attnum, &value_isnull);
			sink_row(sh, sink, id, id_isnull, value, value_isnull);
			if ((++seen & 0xFFF) == 0)
				CHECK_FOR_INTERRUPTS();
		}
		ExecDropSingleTupleTableSlot(slot);
	}
	table_endscan(scan);
}

/*
 * Scan this participant's share of the table (blocks taken from the
 * parallel scan), passing every row to the sink.
 */
static void
scan_share(DedupReadShared *sh, Relation rel, ParallelTableScanDesc pscan,
		   ReadSink *sink)
{
	scan_rows(sh, rel, table_beginscan_parallel(rel, pscan), sink);
}

/* a worker's file of rows */
static void
worker_file_name(char *name, size_t size, int worker)
{
	snprintf(name, size, "simhash_read.%d", worker);
}

/* The entry point of a worker (by name, through the ParallelContext) */
void
dedup_read_parallel_main(dsm_segment *seg, shm_toc *toc)
{
	DedupReadShared *sh = shm_toc_lookup(toc, DEDUP_SCAN_KEY_SHARED, false);
	ParallelTableScanDesc pscan = shm_toc_lookup(toc, DEDUP_SCAN_KEY_SCAN, false);
	ReadSink   *sink = palloc0(sizeof(ReadSink));
	char		name[MAXPGPATH];
	Relation	rel;
	DedupClock	clock;

	simhash_test_hold_point();

	/* the leader holds AccessShareLock: the lock group grants it here */
	rel = table_open(sh->relid, AccessShareLock);
	SharedFileSetAttach(&sh->fileset, seg);
	worker_file_name(name, sizeof(name), ParallelWorkerNumber);
	sink->file = BufFileCreateFileSet(&sh->fileset.fs, name);
	dedup_clock_start(&clock);
	scan_share(sh, rel, pscan, sink);
	sink_flush(sink);
	BufFileClose(sink->file);
	dedup_phase(&clock, "read: scan");
	table_close(rel, AccessShareLock);
	pfree(sink);
}

/* Pass the rows of worker i's file on to the job. */
static void
read_worker_rows(DedupReadShared *sh, int worker, ReadSink *sink)
{
	char		name[MAXPGPATH];
	BufFile    *file;

	worker_file_name(name, sizeof(name), worker);
	file = BufFileOpenFileSet(&sh->fileset.fs, name, O_RDONLY, false);
	for (;;)
	{
		size_t		got = BufFileRead(file, sink->batch, sizeof(sink->batch));

		CHECK_FOR_INTERRUPTS();
		if (got % sizeof(DedupReadRecord) != 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read a temporary file of simhash rows: read only %zu bytes",
							got)));
		if (got == 0)
			break;
		for (size_t i = 0; i < got / sizeof(DedupReadRecord); i++)
			sink_call(sink, (Datum) sink->batch[i].id, sink->batch[i].value_isnull != 0,
					  (Datum) sink->batch[i].value);
	}
	BufFileClose(file);
}

/*
 * Can a heap scan read this input's rows (which, and their ids) exactly as
 * the SPI query would?  Sets *widen when integer ids are read as bigint.
 * The value column is the caller's to check (here: by value; the keys
 * jobs' arrays and signatures: keys_parallel.c).
 */
bool
dedup_read_by_scan(DedupInput *in, Relation rel, bool *widen)
{
	Oid			user = GetUserId();
	char		relkind = rel->rd_rel->relkind;

	*widen = false;
	if (relkind != RELKIND_RELATION && relkind != RELKIND_MATVIEW)
		return false;
	if (RelationUsesLocalBuffers(rel))
		return false;			/* temporary: workers cannot see its pages */
	if (has_subclass(in->relid))
		return false;			/* the query reads its inheritance children too */
	if (relkind == RELKIND_MATVIEW && !RelationIsPopulated(rel))
		return false;			/* the query reports it */
	if (OidIsValid(get_relname_relid("pg_dist_partition", PG_CATALOG_NAMESPACE)))
		return false;			/* Citus: maybe a distributed table */
	if (check_enable_rls(in->relid, InvalidOid, true) != RLS_NONE)
		return false;
	if (pg_class_aclcheck(in->relid, user, ACL_SELECT) != ACLCHECK_OK &&
		(pg_attribute_aclcheck(in->relid, in->id_attnum, user, ACL_SELECT) != ACLCHECK_OK ||
		 pg_attribute_aclcheck(in->relid, in->value_attnum, user, ACL_SELECT) != ACLCHECK_OK))
		return false;			/* SPI reports it */
	if (!dedup_ids_inline(in))
		return false;
	if (in->id_column_type == in->id_type)
		return true;
	if (in->id_type == INT8OID &&
		(in->id_column_type == INT2OID || in->id_column_type == INT4OID))
	{
		*widen = true;
		return true;
	}
	return false;
}

/* the columns and names of in's read (widen: integer ids as bigint) */
static void
scan_columns(DedupScanShared *sh, DedupInput *in, bool widen)
{
	sh->relid = in->relid;
	sh->id_attnum = in->id_attnum;
	sh->value_attnum = in->value_attnum;
	sh->id_column_type = in->id_column_type;
	sh->widen = widen;
	strlcpy(sh->fname, in->fname, sizeof(sh->fname));
	strlcpy(sh->id_column, in->id_column, sizeof(sh->id_column));
	strlcpy(sh->relname, in->relname, sizeof(sh->relname));
}

/*
 * Enter parallel mode and set up the segment of a parallel read of rel:
 * shared state of shared_size bytes (a DedupScanShared first, filled here)
 * and a parallel table scan with the active snapshot, under
 * DEDUP_SCAN_KEY_SHARED and DEDUP_SCAN_KEY_SCAN, for nworkers workers
 * entering at worker_main.  NULL, out of parallel mode again, when no
 * segment could be made.
 */
ParallelContext *
dedup_scan_context(DedupInput *in, Relation rel, bool widen, const char *worker_main,
				   int nworkers, Size shared_size, DedupScanShared **shp,
				   ParallelTableScanDesc *pscanp)
{
	Snapshot	snapshot = GetActiveSnapshot();
	ParallelContext *pcxt;
	DedupScanShared *sh;
	ParallelTableScanDesc pscan;

	Assert(shared_size >= sizeof(DedupScanShared));
	EnterParallelMode();
	pcxt = CreateParallelContext("simhash", worker_main, nworkers);
	shm_toc_estimate_chunk(&pcxt->estimator, shared_size);
	shm_toc_estimate_chunk(&pcxt->estimator, table_parallelscan_estimate(rel, snapshot));
	shm_toc_estimate_keys(&pcxt->estimator, 2);
	InitializeParallelDSM(pcxt);
	if (pcxt->seg == NULL)
	{
		DestroyParallelContext(pcxt);
		ExitParallelMode();
		return NULL;
	}

	sh = shm_toc_allocate(pcxt->toc, shared_size);
	memset(sh, 0, shared_size);
	scan_columns(sh, in, widen);
	SharedFileSetInit(&sh->fileset, pcxt->seg);
	pscan = shm_toc_allocate(pcxt->toc, table_parallelscan_estimate(rel, snapshot));
	table_parallelscan_initialize(rel, pscan, snapshot);
	shm_toc_insert(pcxt->toc, DEDUP_SCAN_KEY_SHARED, sh);
	shm_toc_insert(pcxt->toc, DEDUP_SCAN_KEY_SCAN, pscan);
	*shp = sh;
	*pscanp = pscan;
	return pcxt;
}

/* Workers for the read of rel; 0: read through SPI. */
static int
plan_workers(DedupInput *in, Relation rel)
{
	return simhash_scan_workers(rel, in->reltuples, READ_MAX_WORKERS);
}

bool
dedup_read_parallel(DedupInput *in, DedupRowFn fn, void *arg, uint64 *nrows,
					DedupProgress *progress)
{
	Relation	rel;
	bool		widen;
	int			nworkers;
	ParallelContext *pcxt = NULL;
	DedupReadShared *sh;
	ParallelTableScanDesc pscan;
	ReadSink   *sink;
	DedupClock	clock;

	/* the lock taken by dedup_input_init_columns() */
	rel = table_open(in->relid, NoLock);
	if (!in->value_typbyval || in->value_typlen > (int) sizeof(Datum) ||
		!dedup_read_by_scan(in, rel, &widen))
	{
		table_close(rel, NoLock);
		return false;
	}

	dedup_clock_start(&clock);
	nworkers = plan_workers(in, rel);
	if (nworkers > 0)
		pcxt = dedup_scan_context(in, rel, widen, "dedup_read_parallel_main", nworkers,
								  sizeof(DedupReadShared), &sh, &pscan);

	sink = palloc0(sizeof(ReadSink));
	sink->fn = fn;
	sink->arg = arg;
	sink->progress = progress;
	sink->rowcxt = AllocSetContextCreate(CurrentMemoryContext, "simhash dedup row",
										 ALLOCSET_DEFAULT_SIZES);
	if (pcxt == NULL)
	{
		/*
		 * No workers: a heap scan in this backend all the same, with the
		 * active snapshot, as the SPI query would read (which costs more:
		 * the executor's slots and projection, a DestReceiver call per row).
		 */
		sh = palloc0(sizeof(DedupReadShared));
		scan_columns(sh, in, widen);
		scan_rows(sh, rel, table_beginscan(rel, GetActiveSnapshot(), 0, NULL), sink);
		dedup_phase(&clock, "read: serial scan");
		pfree(sh);
	}
	else
	{
		LaunchParallelWorkers(pcxt);
		dedup_progress(progress, "reading %s, parallel workers: %d",
					   in->relname, pcxt->nworkers_launched);

		/*
		 * the leader's share (unless parallel_leader_participation is off,
		 * as in a btree's build) goes to the job at once, then the workers'
		 */
		dedup_phase(&clock, "read: launch");
		if (parallel_leader_participation || pcxt->nworkers_launched == 0)
			scan_share(sh, rel, pscan, sink);
		dedup_phase(&clock, "read: scan");
		WaitForParallelWorkersToFinish(pcxt);
		dedup_phase(&clock, "read: wait for the workers");
		for (int i = 0; i < pcxt->nworkers_launched; i++)
			read_worker_rows(sh, i, sink);
		dedup_phase(&clock, "read: replay the workers' rows");
		DestroyParallelContext(pcxt);
		ExitParallelMode();
	}

	table_close(rel, NoLock);
	*nrows = sink->nrows;
	MemoryContextDelete(sink->rowcxt);
	pfree(sink);
	return true;
}
