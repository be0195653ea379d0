/*
 * build_parallel.c
 *		CREATE INDEX ... USING simhash with its tables sorted by parallel
 *		workers (issue #14).
 *
 * Design.  A run is one B+tree per table, each written from the entries
 * sorted by that table's permuted prefix (run_write.c).  The sorts are
 * independent; the writing goes through the leader's buffers, in table
 * order.  So: the leader puts the entries' hashes in a dynamic shared
 * memory segment with one output slot per worker (keys and order, 12 bytes
 * per entry), the workers take tables from an atomic counter (in table
 * order), sort each into their slot and mark it ready; the leader writes
 * table t as soon as some slot holds it (simhash_write_run_sorted()), then
 * frees the slot.  A worker that has taken table t waits for its slot to be
 * free before sorting into it; the slot then holds an earlier table, which
 * the leader writes before it needs t, so this cannot deadlock.  When the
 * leader needs a table no worker has taken yet (no worker could be
 * started, or they lag), it takes and sorts it itself.  The sort is the
 * same function on the same input, so the index is the same as a serial
 * build's, page for page.
 *
 * Workers read nothing but the segment.  Errors in a worker reach the
 * leader through the ParallelContext (CHECK_FOR_INTERRUPTS() while it
 * waits); a failed or cancelled build stops the workers and frees the
 * segment with the transaction.
 *
 * Memory (within maintenance_work_mem): the segment holds 8 bytes per entry
 * and 12 per entry and worker, each worker sorts with 12 more per entry;
 * the number of workers (max_parallel_maintenance_workers) is lowered
 * until that fits beside the build's own 40 bytes per entry.  Only builds
 * that fit in one chunk of memory and have at least
 * simhash.parallel_min_rows entries use workers.
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/shm_toc.h"
#include "storage/spin.h"
#include "utils/memutils.h"

#include "am.h"
#include "dedup/dedup.h"

#define BUILD_KEY_SHARED	UINT64CONST(0x5348490000000001)
#define BUILD_KEY_HASHES	UINT64CONST(0x5348490000000002)
#define BUILD_KEY_SLOTS		UINT64CONST(0x5348490000000003)

#define BUILD_MAX_WORKERS 64

typedef struct BuildShared
{
	SimhashBlocks blocks;
	uint64		n;				/* entries */
	int			nslots;			/* one per worker */
	pg_atomic_uint32 next_table;	/* tables are taken in order */
	slock_t		mutex;			/* protects slot_table */
	int			slot_table[BUILD_MAX_WORKERS];	/* sorted into slot s; -1:
												 * free */
	ConditionVariable cv;		/* broadcast on any change of slot_table */
} BuildShared;

/* the leader's side */
typedef struct BuildLeader
{
	BuildShared *sh;
	char	   *slots;
	const uint64 *hashes;
	int			held;			/* slot of the table being written, or -1 */
	/* its own sort, for tables no worker took */
	uint64	   *keys,
			   *tmpkeys;
	uint32	   *order,
			   *tmporder;
} BuildLeader;

PGDLLEXPORT void simhash_build_parallel_main(dsm_segment *seg, shm_toc *toc);

/* bytes of one slot: keys then order */
static inline Size
slot_size(uint64 n)
{
	return MAXALIGN(n * sizeof(uint64)) + MAXALIGN(n * sizeof(uint32));
}

static inline uint64 *
slot_keys(char *slots, uint64 n, int s)
{
	return (uint64 *) (slots + slot_size(n) * s);
}

static inline uint32 *
slot_order(char *slots, uint64 n, int s)
{
	return (uint32 *) (slots + slot_size(n) * s + MAXALIGN(n * sizeof(uint64)));
}

/* Set slot s's table and wake the others. */
static void
set_slot(BuildShared *sh, int s, int table)
{
	SpinLockAcquire(&sh->mutex);
	sh->slot_table[s] = table;
	SpinLockRelease(&sh->mutex);
	ConditionVariableBroadcast(&sh->cv);
}

/* The entry point of a worker: sort tables into its slot until none is left. */
void
simhash_build_parallel_main(dsm_segment *seg, shm_toc *toc)
{
	BuildShared *sh = shm_toc_lookup(toc, BUILD_KEY_SHARED, false);
	const uint64 *hashes = shm_toc_lookup(toc, BUILD_KEY_HASHES, false);
	char	   *slots = shm_toc_lookup(toc, BUILD_KEY_SLOTS, false);
	int			s = ParallelWorkerNumber;
	uint64		n = sh->n;
	uint64	   *tmpkeys = MemoryContextAllocHuge(CurrentMemoryContext, n * sizeof(uint64));
	uint32	   *tmporder = MemoryContextAllocHuge(CurrentMemoryContext, n * sizeof(uint32));
	SimhashTable *tab = palloc(sizeof(SimhashTable));

	if (s < 0 || s >= sh->nslots)
		elog(ERROR, "simhash parallel build: no slot for worker %d", s);
	for (;;)
	{
		uint32		t = pg_atomic_fetch_add_u32(&sh->next_table, 1);

		if (t >= (uint32) sh->blocks.ntables)
			break;
		/* wait until the leader has written what the slot holds */
		ConditionVariablePrepareToSleep(&sh->cv);
		for (;;)
		{
			int			held;

			SpinLockAcquire(&sh->mutex);
			held = sh->slot_table[s];
			SpinLockRelease(&sh->mutex);
			if (held < 0)
				break;
			ConditionVariableSleep(&sh->cv, PG_WAIT_EXTENSION);
		}
		ConditionVariableCancelSleep();
		CHECK_FOR_INTERRUPTS();
		simhash_table_init(&sh->blocks, (int) t, tab);
		simhash_table_sort(tab, hashes, n, slot_keys(slots, n, s),
						   slot_order(slots, n, s), tmpkeys, tmporder);
		set_slot(sh, s, (int) t);
	}
	pfree(tab);
	pfree(tmpkeys);
	pfree(tmporder);
}

/* SimhashSortedTableFn of the leader: table t from a slot, or sorted here */
static void
leader_sorted(void *arg, int t, const uint64 **keys, const uint32 **order)
{
	BuildLeader *l = (BuildLeader *) arg;
	BuildShared *sh = l->sh;
	uint64		n = sh->n;

	if (l->held >= 0)
	{
		set_slot(sh, l->held, -1);
		l->held = -1;
	}
	if (t >= sh->blocks.ntables)
		return;					/* the end: only the release */

	ConditionVariablePrepareToSleep(&sh->cv);
	for (;;)
	{
		int			found = -1;
		uint32		expected = (uint32) t;

		SpinLockAcquire(&sh->mutex);
		for (int s = 0; s < sh->nslots; s++)
			if (sh->slot_table[s] == t)
				found = s;
		SpinLockRelease(&sh->mutex);
		if (found >= 0)
		{
			l->held = found;
			*keys = slot_keys(l->slots, n, found);
			*order = slot_order(l->slots, n, found);
			break;
		}
		if (pg_atomic_compare_exchange_u32(&sh->next_table, &expected, (uint32) t + 1))
		{
			/* no worker took it: sort it here */
			SimhashTable tab;

			if (l->keys == NULL)
			{
				l->keys = MemoryContextAllocHuge(CurrentMemoryContext, n * sizeof(uint64));
				l->tmpkeys = MemoryContextAllocHuge(CurrentMemoryContext, n * sizeof(uint64));
				l->order = MemoryContextAllocHuge(CurrentMemoryContext, n * sizeof(uint32));
				l->tmporder = MemoryContextAllocHuge(CurrentMemoryContext, n * sizeof(uint32));
			}
			simhash_table_init(&sh->blocks, t, &tab);
			simhash_table_sort(&tab, l->hashes, n, l->keys, l->order, l->tmpkeys, l->tmporder);
			*keys = l->keys;
			*order = l->order;
			break;
		}
		ConditionVariableSleep(&sh->cv, PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();
}

/* Workers for a build of n entries; 0: serial. */
static int
plan_workers(const SimhashBlocks *blocks, uint64 n)
{
	int			nworkers = Min(max_parallel_maintenance_workers, blocks->ntables - 1);
	double		budget = (double) maintenance_work_mem * 1024.0;
	double		base = 48.0 * n;

	if (IsParallelWorker() || IsInParallelMode() ||
		n < (uint64) Max(simhash_parallel_min_rows, 2))
		return 0;
	nworkers = Min(nworkers, BUILD_MAX_WORKERS);
	while (nworkers > 0 && base + 24.0 * n * nworkers > budget)
		nworkers--;
	return Max(nworkers, 0);
}

BlockNumber
simhash_build_write_run(Relation index, const SimhashBlocks *blocks,
						const SimhashRunInput *input, uint64 generation)
{
	uint64		n = input->n;
	int			nworkers = plan_workers(blocks, n);
	ParallelContext *pcxt;
	BuildShared *sh;
	BuildLeader l;
	uint64	   *hashes;
	BlockNumber header;

	if (nworkers <= 0)
		return simhash_write_run(index, blocks, input, generation, SIMHASH_WRITE_BUILD);

	EnterParallelMode();
	pcxt = CreateParallelContext("simhash", "simhash_build_parallel_main", nworkers);
	shm_toc_estimate_chunk(&pcxt->estimator, sizeof(BuildShared));
	shm_toc_estimate_chunk(&pcxt->estimator, n * sizeof(uint64));
	shm_toc_estimate_chunk(&pcxt->estimator, slot_size(n) * nworkers);
	shm_toc_estimate_keys(&pcxt->estimator, 3);
	InitializeParallelDSM(pcxt);
	if (pcxt->seg == NULL)
	{
		DestroyParallelContext(pcxt);
		ExitParallelMode();
		return simhash_write_run(index, blocks, input, generation, SIMHASH_WRITE_BUILD);
	}

	sh = shm_toc_allocate(pcxt->toc, sizeof(BuildShared));
	memset(sh, 0, sizeof(*sh));
	sh->blocks = *blocks;
	sh->n = n;
	sh->nslots = nworkers;
	pg_atomic_init_u32(&sh->next_table, 0);
	SpinLockInit(&sh->mutex);
	for (int s = 0; s < BUILD_MAX_WORKERS; s++)
		sh->slot_table[s] = -1;
	ConditionVariableInit(&sh->cv);
	hashes = shm_toc_allocate(pcxt->toc, n * sizeof(uint64));
	memcpy(hashes, input->hashes, n * sizeof(uint64));
	memset(&l, 0, sizeof(l));
	l.sh = sh;
	l.slots = shm_toc_allocate(pcxt->toc, slot_size(n) * nworkers);
	l.hashes = hashes;
	l.held = -1;
	shm_toc_insert(pcxt->toc, BUILD_KEY_SHARED, sh);
	shm_toc_insert(pcxt->toc, BUILD_KEY_HASHES, hashes);
	shm_toc_insert(pcxt->toc, BUILD_KEY_SLOTS, l.slots);

	LaunchParallelWorkers(pcxt);
	ereport(DEBUG1,
			(errmsg("simhash index build: %d tables of " UINT64_FORMAT " entries, parallel workers: %d",
					blocks->ntables, n, pcxt->nworkers_launched)));
	header = simhash_write_run_sorted(index, blocks, input, generation,
									  SIMHASH_WRITE_BUILD, leader_sorted, &l);
	leader_sorted(&l, blocks->ntables, NULL, NULL);	/* free the last slot */
	WaitForParallelWorkersToFinish(pcxt);
	DestroyParallelContext(pcxt);
	ExitParallelMode();
	if (l.keys)
	{
		pfree(l.keys);
		pfree(l.tmpkeys);
		pfree(l.order);
		pfree(l.tmporder);
	}
	return header;
}
