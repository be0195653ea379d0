/*
 * build_scan.c
 *		The heap scan of CREATE INDEX ... USING simhash by a parallel table
 *		scan in workers and the leader.
 *
 * Design.  build.c collects (hash, TID) of every row from
 * table_index_build_scan() (a build callback), then sorts and writes the
 * tables (build_parallel.c).  The scan, with the evaluation of the
 * index's column and the visibility checks of a build, was the serial half
 * of a parallel build.  Here it is split the way a btree's parallel build
 * splits it: the leader puts a parallel table scan in a dynamic shared
 * memory segment (SnapshotAny, or for a concurrent build an MVCC snapshot,
 * as index.c expects), and the workers and the leader each run
 * table_index_build_scan() over the blocks they take from it, writing
 * every row's (hash, TID, NULL flag) to their own file of a SharedFileSet.
 * The leader then merges the files and passes the rows to build.c's
 * callback in the order a serial scan gives them, so the build that
 * follows (chunks, runs, the NULL list) is the serial build's, page for
 * page:
 * - synchronized scans are off for the parallel scan, so every
 *   participant takes blocks in increasing order starting at block 0 (a
 *   serial build starts there too unless a synchronized scan of a large
 *   table is under way);
 * - a block is read by one participant, which passes its rows in the
 *   serial order (heap-only tuples under their root's TID, which is why the
 *   merge goes by block number, not by TID);
 * - so the merge takes, block after block, the lowest block number among
 *   the files' next rows, and all of that block's rows from that file.
 * The leader scans too unless parallel_leader_participation is off (as
 * in a btree's build; tests use that to make the workers read).
 * The heap tuple counts add up; a broken HOT chain seen by any participant
 * marks the index (ii_BrokenHotChain), as a serial scan would.
 *
 * Which builds: a plain heap table (not temporary), an index on a column or
 * an expression and predicate the planner finds parallel safe
 * (plan_create_index_workers() decides for those), estimated rows
 * (pg_class.reltuples; an unanalyzed table counts 100 rows per page) at
 * least simhash.parallel_min_rows, max_parallel_maintenance_workers workers
 * (at most the table's parallel_workers storage parameter, if set).
 * Memory: the files' buffers; the rows go to build.c's chunk as before.
 * Errors and cancels: as in build_parallel.c (the ParallelContext).
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/pg_am.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "pgstat.h"
#include "storage/buffile.h"
#include "storage/bufmgr.h"
#include "storage/sharedfileset.h"
#include "storage/shm_toc.h"
#include "storage/spin.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "am.h"
#include "shared/workers.h"
#include "simhash.h"

#define SCAN_KEY_SHARED		UINT64CONST(0x5348530000000001)
#define SCAN_KEY_TABLESCAN	UINT64CONST(0x5348530000000002)

#define SCAN_MAX_WORKERS 64

/* rows a participant buffers (and the merge reads) at once */
#define SCAN_BATCH 512

typedef struct ScanShared
{
	Oid			heaprelid;
	Oid			indexrelid;
	bool		isconcurrent;
	slock_t		mutex;			/* protects the two below */
	double		reltuples;		/* heap tuples, summed over participants */
	bool		brokenhotchain;
	SharedFileSet fileset;		/* one file per participant */
} ScanShared;

/* A row as a participant writes it */
typedef struct ScanRecord
{
	uint64		hash;
	ItemPointerData tid;
	bool		isnull;
} ScanRecord;

/* A participant's file, while it is written or merged */
typedef struct ScanFile
{
	BufFile    *file;
	ScanRecord	batch[SCAN_BATCH];
	int			pos;
	int			n;
} ScanFile;

PGDLLEXPORT void simhash_build_scan_main(dsm_segment *seg, shm_toc *toc);

/* participant p's file: workers 0 .., the leader -1 */
static void
scan_file_name(char *name, size_t size, int participant)
{
	snprintf(name, size, "simhash_build_scan.%d", participant);
}

/* IndexBuildCallback of a participant: the row to its file */
static void
scan_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			  bool tupleIsAlive, void *state)
{
	ScanFile   *f = (ScanFile *) state;
	ScanRecord *rec = &f->batch[f->n++];

	rec->hash = isnull[0] ? 0 : simhash_key_hash(index, values[0]);
	rec->tid = *tid;
	rec->isnull = isnull[0];
	if (f->n == SCAN_BATCH)
	{
		BufFileWrite(f->file, f->batch, sizeof(f->batch));
		f->n = 0;
	}
}

/*
 * Scan this participant's share of the heap into its file; adds its tuple
 * count (and any broken HOT chain) to the shared state.
 */
static void
scan_share(ScanShared *sh, ParallelTableScanDesc pscan, Relation heap,
		   Relation index, int participant, bool progress)
{
	IndexInfo  *indexInfo = BuildIndexInfo(index);
	ScanFile   *f = palloc0(sizeof(ScanFile));
	char		name[MAXPGPATH];
	TableScanDesc scan;
	double		reltuples;
	double		cpu = simhash_cpu_ms();

	indexInfo->ii_Concurrent = sh->isconcurrent;
	scan_file_name(name, sizeof(name), participant);
	f->file = BufFileCreateFileSet(&sh->fileset.fs, name);
	scan = table_beginscan_parallel(heap, pscan);
	reltuples = table_index_build_scan(heap, index, indexInfo, true, progress,
									   scan_callback, (void *) f, scan);
	if (f->n > 0)
		BufFileWrite(f->file, f->batch, f->n * sizeof(ScanRecord));
	BufFileClose(f->file);
	pfree(f);
	elog(DEBUG2, "simhash index build: scan participant %d: %.0f heap tuples, cpu ms %.0f",
		 participant, reltuples, simhash_cpu_ms() - cpu);

	SpinLockAcquire(&sh->mutex);
	sh->reltuples += reltuples;
	if (indexInfo->ii_BrokenHotChain)
		sh->brokenhotchain = true;
	SpinLockRelease(&sh->mutex);
}

/* The entry point of a worker (by name, through the ParallelContext) */
void
simhash_build_scan_main(dsm_segment *seg, shm_toc *toc)
{
	ScanShared *sh = shm_toc_lookup(toc, SCAN_KEY_SHARED, false);
	ParallelTableScanDesc pscan = shm_toc_lookup(toc, SCAN_KEY_TABLESCAN, false);
	LOCKMODE	heaplock = sh->isconcurrent ? ShareUpdateExclusiveLock : ShareLock;
	LOCKMODE	indexlock = sh->isconcurrent ? RowExclusiveLock : AccessExclusiveLock;
	Relation	heap,
				index;

	simhash_test_hold_point();

	/* the lock modes index.c took in the leader (granted in its group) */
	heap = table_open(sh->heaprelid, heaplock);
	index = index_open(sh->indexrelid, indexlock);
	SharedFileSetAttach(&sh->fileset, seg);
	scan_share(sh, pscan, heap, index, ParallelWorkerNumber, false);
	index_close(index, indexlock);
	table_close(heap, heaplock);
}

/* The next row of a participant's file, or NULL at its end */
static ScanRecord *
merge_peek(ScanFile *f)
{
	if (f->pos == f->n)
	{
		size_t		got;

		if (f->file == NULL)
			return NULL;
		got = BufFileRead(f->file, f->batch, sizeof(f->batch));
		if (got % sizeof(ScanRecord) != 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read a temporary file of simhash index entries: read only %zu bytes",
							got)));
		f->pos = 0;
		f->n = (int) (got / sizeof(ScanRecord));
		if (f->n == 0)
		{
			BufFileClose(f->file);
			f->file = NULL;
			return NULL;
		}
	}
	return &f->batch[f->pos];
}

/*
 * Pass the participants' rows to callback in a serial scan's order: block
 * by block, each block's rows from the one file that holds them.
 */
static void
merge_files(ScanShared *sh, int nworkers, bool leader, Relation index,
			IndexBuildCallback callback, void *state)
{
	int			nparticipants = nworkers + (leader ? 1 : 0);
	ScanFile   *files = palloc0(sizeof(ScanFile) * nparticipants);
	uint64		nrows = 0;
	uint64		nblocks = 0;
	int			switches = 0,
				last = -1;

	for (int p = 0; p < nparticipants; p++)
	{
		char		name[MAXPGPATH];

		scan_file_name(name, sizeof(name), p == nworkers ? -1 : p);
		files[p].file = BufFileOpenFileSet(&sh->fileset.fs, name, O_RDONLY, false);
	}
	for (;;)
	{
		int			best = -1;
		BlockNumber bestblk = InvalidBlockNumber;
		ScanRecord *rec;

		for (int p = 0; p < nparticipants; p++)
		{
			rec = merge_peek(&files[p]);
			if (rec != NULL &&
				(best < 0 || ItemPointerGetBlockNumber(&rec->tid) < bestblk))
			{
				best = p;
				bestblk = ItemPointerGetBlockNumber(&rec->tid);
			}
		}
		if (best < 0)
			break;
		nblocks++;
		if (best != last)
			switches++;
		last = best;
		while ((rec = merge_peek(&files[best])) != NULL &&
			   ItemPointerGetBlockNumber(&rec->tid) == bestblk)
		{
			Datum		value = Simhash64GetDatum(rec->hash);
			bool		isnull = rec->isnull;
			ItemPointerData tid = rec->tid;

			if ((++nrows & 0xFFF) == 0)
				CHECK_FOR_INTERRUPTS();
			files[best].pos++;
			callback(index, &tid, &value, &isnull, true, state);
		}
	}
	elog(DEBUG2, "simhash index build: merged " UINT64_FORMAT " rows of " UINT64_FORMAT " blocks from %d participants, %d runs of blocks",
		 nrows, nblocks, nparticipants, switches);
	pfree(files);
}

/* Workers for the scan of a build; 0: the serial scan. */
static int
plan_workers(Relation heap, Relation index)
{
	int			nworkers;

	if (IsInParallelMode())
		return 0;
	if (heap->rd_rel->relam != HEAP_TABLE_AM_OID || RelationUsesLocalBuffers(heap))
		return 0;
	nworkers = simhash_scan_workers(heap, heap->rd_rel->reltuples, SCAN_MAX_WORKERS);
	if (nworkers <= 0)
		return 0;
	/* expressions and predicates run in the workers: the planner checks them */
	if (RelationGetIndexExpressions(index) != NIL ||
		RelationGetIndexPredicate(index) != NIL)
		nworkers = Min(nworkers, plan_create_index_workers(RelationGetRelid(heap),
														   RelationGetRelid(index)));
	return nworkers;
}

double
simhash_build_scan_parallel(Relation heap, Relation index, IndexInfo *indexInfo,
							IndexBuildCallback callback, void *state)
{
	int			nworkers = plan_workers(heap, index);
	ParallelContext *pcxt;
	ScanShared *sh;
	ParallelTableScanDesc pscan;
	Snapshot	snapshot;
	double		reltuples;
	double		cpu;
	bool		leader;

	if (nworkers <= 0)
		return -1;

	EnterParallelMode();
	pcxt = CreateParallelContext("simhash", "simhash_build_scan_main", nworkers);
	snapshot = indexInfo->ii_Concurrent ?
		RegisterSnapshot(GetTransactionSnapshot()) : SnapshotAny;
	shm_toc_estimate_chunk(&pcxt->estimator, sizeof(ScanShared));
	shm_toc_estimate_chunk(&pcxt->estimator, table_parallelscan_estimate(heap, snapshot));
	shm_toc_estimate_keys(&pcxt->estimator, 2);
	InitializeParallelDSM(pcxt);
	if (pcxt->seg == NULL)
	{
		if (IsMVCCSnapshot(snapshot))
			UnregisterSnapshot(snapshot);
		DestroyParallelContext(pcxt);
		ExitParallelMode();
		return -1;
	}

	sh = shm_toc_allocate(pcxt->toc, sizeof(ScanShared));
	memset(sh, 0, sizeof(*sh));
	sh->heaprelid = RelationGetRelid(heap);
	sh->indexrelid = RelationGetRelid(index);
	sh->isconcurrent = indexInfo->ii_Concurrent;
	SpinLockInit(&sh->mutex);
	SharedFileSetInit(&sh->fileset, pcxt->seg);
	pscan = shm_toc_allocate(pcxt->toc, table_parallelscan_estimate(heap, snapshot));
	table_parallelscan_initialize(heap, pscan, snapshot);
	pscan->phs_syncscan = false;	/* blocks from 0 up, as a serial scan */
	shm_toc_insert(pcxt->toc, SCAN_KEY_SHARED, sh);
	shm_toc_insert(pcxt->toc, SCAN_KEY_TABLESCAN, pscan);

	LaunchParallelWorkers(pcxt);
	ereport(DEBUG1,
			(errmsg("simhash index build: scanning \"%s\", parallel workers: %d",
					RelationGetRelationName(heap), pcxt->nworkers_launched)));
	/* the leader scans too unless parallel_leader_participation is off */
	leader = parallel_leader_participation || pcxt->nworkers_launched == 0;
	if (leader)
		scan_share(sh, pscan, heap, index, -1, true);
	WaitForParallelWorkersToFinish(pcxt);

	cpu = simhash_cpu_ms();
	merge_files(sh, pcxt->nworkers_launched, leader, index, callback, state);
	elog(DEBUG2, "simhash index build: merge of the scan's files: cpu ms %.0f",
		 simhash_cpu_ms() - cpu);
	reltuples = sh->reltuples;
	if (sh->brokenhotchain)
		indexInfo->ii_BrokenHotChain = true;

	if (IsMVCCSnapshot(snapshot))
		UnregisterSnapshot(snapshot);
	DestroyParallelContext(pcxt);
	ExitParallelMode();
	return reltuples;
}
