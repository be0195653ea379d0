/*
 * build_parallel.c
 *		CREATE INDEX ... USING simhash with its tables' trees built and
 *		written by parallel workers and the leader.
 *
 * Design.  A run is a header page and one B+tree per table, each written
 * from the entries sorted by that table's permuted prefix (run_write.c); a
 * serial build writes the header, then table 0's tree (its leaves in order,
 * then its inner levels), then table 1's, and so on, each page in the next
 * block.  The trees are independent but for where they start: table t's
 * first block is the header's block + 1 + the pages of tables 0 .. t-1.
 * So the leader puts the entries (hashes and TIDs, 14 bytes each) in a
 * dynamic shared memory segment and it and the workers take tables from an
 * atomic counter (the leader only where that ends sooner, leader_builds());
 * a participant sorts its table and builds the tree in its
 * own memory with blocks numbered from 0 (SIMHASH_WRITE_MEMORY), publishes
 * its page count, waits until the counts of the tables before it are known,
 * moves the tree to its first block (adds it to every link), WAL-logs the
 * pages (log_newpages(), if the index needs WAL: from the workers, which
 * need no transaction id for it) and writes them past the shared buffers
 * with smgrextend(), as a btree build does.  The writes go in table order
 * (a participant waits for the table before it to be written), so the file
 * grows block after block and its 1 GB segments are created in order; the
 * WAL-logging, the sort and the tree building overlap.  The leader then
 * writes the header page (the trees' roots, heights and the run's page
 * count) through its buffer and, after the workers, fsyncs the file if
 * it is WAL-logged (the pages bypassed the buffers, so a checkpoint would
 * not flush them; as nbtree's build); the pages of an unlogged index are
 * left to the next checkpoint's fsync (smgrextend() asks for it).  The
 * index is the serial build's, page for page: the same sort, the same tree
 * writer, the same blocks.
 *
 * Errors in a worker reach the leader through the ParallelContext
 * (CHECK_FOR_INTERRUPTS() while it waits); a failed or cancelled build
 * stops the workers, and the index's file goes with the transaction.
 *
 * Memory (within maintenance_work_mem): the segment holds 14 bytes per
 * entry; each participant sorts with 24 and holds its tree's pages (about
 * 10 per entry at the default settings); the number of workers
 * (max_parallel_maintenance_workers) is lowered until that fits beside the
 * build's own 40 bytes per entry.  Only builds that fit in one chunk of
 * memory, of an index that is not temporary, with at least
 * simhash.parallel_min_rows entries use workers.
 */
#include "postgres.h"

#include <sys/mman.h>

#include "access/parallel.h"
#include "optimizer/optimizer.h"
#include "access/xact.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "storage/bufpage.h"
#include "storage/condition_variable.h"
#include "storage/shm_toc.h"
#include "storage/smgr.h"
#include "storage/spin.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "am.h"
#include "shared/memory.h"
#include "shared/workers.h"
#include "simhash.h"

#define BUILD_KEY_SHARED	UINT64CONST(0x5348490000000001)
#define BUILD_KEY_HASHES	UINT64CONST(0x5348490000000002)
#define BUILD_KEY_TIDS		UINT64CONST(0x5348490000000003)

/* pages per log_newpages() call (its limit: XLR_MAX_BLOCK_ID) */
#define BUILD_LOG_BATCH 32

typedef struct BuildShared
{
	SimhashBlocks blocks;
	uint64		n;				/* entries */
	uint64		generation;		/* the run's */
	SimhashRelFile rnode;			/* the index's file */
	bool		use_wal;		/* WAL-log the pages */
	BlockNumber first;			/* table 0's first block */
	pg_atomic_uint32 next_table;	/* tables are taken in order */
	slock_t		mutex;			/* protects the arrays below */
	int64		npages[SIMHASH_MAX_INDEX_TABLES];	/* pages of table t's tree; -1:
											 * not yet known */
	BlockNumber root[SIMHASH_MAX_INDEX_TABLES];
	uint16		height[SIMHASH_MAX_INDEX_TABLES];
	bool		written[SIMHASH_MAX_INDEX_TABLES];
	ConditionVariable cv;		/* broadcast on any change of the above */
	/* CPU ms and participant of each table, for the DEBUG2 messages */
	double		cpu_sort[SIMHASH_MAX_INDEX_TABLES];
	double		cpu_tree[SIMHASH_MAX_INDEX_TABLES];
	double		cpu_write[SIMHASH_MAX_INDEX_TABLES];
	int			who[SIMHASH_MAX_INDEX_TABLES];	/* participant: worker number, -1
											 * the leader */
} BuildShared;

PGDLLEXPORT void simhash_build_parallel_main(dsm_segment *seg, shm_toc *toc);

/*
 * Wait until cond(sh, t) holds (under the mutex); the leader's waits
 * process its workers' errors (CHECK_FOR_INTERRUPTS()).
 */
static void
wait_for(BuildShared *sh, bool (*cond) (BuildShared *sh, int t), int t)
{
	ConditionVariablePrepareToSleep(&sh->cv);
	for (;;)
	{
		bool		ok;

		SpinLockAcquire(&sh->mutex);
		ok = cond(sh, t);
		SpinLockRelease(&sh->mutex);
		if (ok)
			break;
		ConditionVariableSleep(&sh->cv, PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();
}

/*
 * Map the pages of [p, p + size) of the segment at once (one system call,
 * not a page fault per 4kB page: on a virtual machine the faults were most
 * of the copy into the segment and of each worker's first sort); only a
 * hint, ignored where the kernel lacks it (before Linux 5.14).
 */
static void
prefault(void *p, Size size, bool write)
{
#if defined(MADV_POPULATE_WRITE) && defined(MADV_POPULATE_READ)
	uintptr_t	lo = TYPEALIGN_DOWN(4096, (uintptr_t) p);
	uintptr_t	hi = TYPEALIGN(4096, (uintptr_t) p + size);

	(void) madvise((void *) lo, hi - lo, write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ);
#endif
}

/* Are the page counts of tables 0 .. t-1 known? */
static bool
counts_known(BuildShared *sh, int t)
{
	for (int u = 0; u < t; u++)
		if (sh->npages[u] < 0)
			return false;
	return true;
}

/* Are tables 0 .. t-1 written? */
static bool
tables_written(BuildShared *sh, int t)
{
	for (int u = 0; u < t; u++)
		if (!sh->written[u])
			return false;
	return true;
}

/* Move npages pages built from block 0 to block base: every link. */
static void
relocate_pages(char *mem, uint32 npages, BlockNumber base)
{
	for (uint32 i = 0; i < npages; i++)
		simhash_page_move_links((Page) (mem + (Size) i * BLCKSZ), (int64) base);
}

/*
 * Build, WAL-log and write the trees of the tables this participant takes
 * (participant: worker number, or -1 for the leader).
 */
static void
build_tables(BuildShared *sh, const uint64 *hashes, ItemPointerData *tids, int participant)
{
	uint64		n = sh->n;
	SimhashRunInput input = {(uint64 *) hashes, tids, n};
	SimhashSortSpace space;
	SimhashTable tab;
	SMgrRelation smgr = NULL;
	char	   *mem;
	uint32		memcap = (uint32) Min(n / 512 + 256, (uint64) MaxBlockNumber / 2);

	simhash_sort_space_alloc(&space, n);
	/* room for a tree's pages, kept from table to table (grown if short) */
	mem = simhash_alloc_huge(CurrentMemoryContext, (Size) memcap * BLCKSZ);
	for (;;)
	{
		uint32		t = pg_atomic_fetch_add_u32(&sh->next_table, 1);
		SimhashRunWriter w;
		BlockNumber root;
		BlockNumber base;
		uint16		height;
		double		c0,
					c1,
					c2;

		if (t >= (uint32) sh->blocks.ntables)
			break;
		c0 = simhash_cpu_ms();
		simhash_table_init(&sh->blocks, (int) t, &tab);
		simhash_table_sort(&tab, hashes, n, space.keys, space.order,
						   space.tmpkeys, space.tmporder);
		c1 = simhash_cpu_ms();
		simhash_writer_init(&w, NULL, SIMHASH_WRITE_MEMORY, sh->generation);
		w.mem = mem;
		w.memcap = memcap;
		root = simhash_write_tree(&w, (int) t, &input, space.keys, space.order, &height);
		Assert(w.npages == w.nalloc);

		SpinLockAcquire(&sh->mutex);
		sh->npages[t] = w.npages;
		SpinLockRelease(&sh->mutex);
		ConditionVariableBroadcast(&sh->cv);
		c2 = simhash_cpu_ms();

		/* where it goes: after the tables before it */
		wait_for(sh, counts_known, (int) t);
		base = sh->first;
		for (uint32 u = 0; u < t; u++)
			base += (BlockNumber) sh->npages[u];
		relocate_pages(w.mem, w.npages, base);
		if (sh->use_wal)
		{
			for (uint32 i = 0; i < w.npages; i += BUILD_LOG_BATCH)
			{
				BlockNumber blknos[BUILD_LOG_BATCH];
				Page		pages[BUILD_LOG_BATCH];
				int			k = Min(BUILD_LOG_BATCH, w.npages - i);

				for (int j = 0; j < k; j++)
				{
					blknos[j] = base + i + j;
					pages[j] = (Page) (w.mem + (Size) (i + j) * BLCKSZ);
				}
				log_newpages(&sh->rnode, MAIN_FORKNUM, k, blknos, pages, true);
				CHECK_FOR_INTERRUPTS();
			}
		}

		/* the file grows in table order */
		wait_for(sh, tables_written, (int) t);
		if (smgr == NULL)
			smgr = simhash_smgropen(sh->rnode);
		for (uint32 i = 0; i < w.npages; i++)
		{
			PGIOAlignedBlock io;	/* smgrextend() wants I/O alignment */

			memcpy(io.data, w.mem + (Size) i * BLCKSZ, BLCKSZ);
			PageSetChecksumInplace((Page) io.data, base + i);
			/* logged: fsynced at the end; else at the next checkpoint */
			smgrextend(smgr, MAIN_FORKNUM, base + i, io.data, sh->use_wal);
		}
		mem = w.mem;
		memcap = w.memcap;

		SpinLockAcquire(&sh->mutex);
		sh->root[t] = base + root;
		sh->height[t] = height;
		sh->written[t] = true;
		sh->cpu_sort[t] = c1 - c0;
		sh->cpu_tree[t] = c2 - c1;
		sh->cpu_write[t] = simhash_cpu_ms() - c2;
		sh->who[t] = participant;
		SpinLockRelease(&sh->mutex);
		ConditionVariableBroadcast(&sh->cv);
	}
	simhash_sort_space_free(&space);
	pfree(mem);
}

/* The entry point of a worker: build tables until none is left. */
void
simhash_build_parallel_main(dsm_segment *seg, shm_toc *toc)
{
	BuildShared *sh = shm_toc_lookup(toc, BUILD_KEY_SHARED, false);
	const uint64 *hashes = shm_toc_lookup(toc, BUILD_KEY_HASHES, false);
	ItemPointerData *tids = shm_toc_lookup(toc, BUILD_KEY_TIDS, false);

	simhash_test_hold_point();

	prefault((void *) hashes, sh->n * sizeof(uint64), false);
	prefault(tids, sh->n * sizeof(ItemPointerData), false);
	build_tables(sh, hashes, tids, ParallelWorkerNumber);
}

/* Workers for a build of n entries; 0: serial. */
static int
plan_workers(Relation index, const SimhashBlocks *blocks, uint64 n)
{
	int			nworkers = Min(max_parallel_maintenance_workers, blocks->ntables - 1);
	double		budget = (double) maintenance_work_mem * 1024.0;
	double		base = 40.0 * n + 14.0 * n + 34.0 * n;

	if (IsParallelWorker() || IsInParallelMode() ||
		RelationUsesLocalBuffers(index) ||
		n < (uint64) Max(simhash_parallel_min_rows, 2))
		return 0;
	while (nworkers > 0 && base + 34.0 * n * nworkers > budget)
		nworkers--;
	return Max(nworkers, 0);
}

/*
 * Does the leader build trees beside its nworkers workers?  If none runs;
 * else as parallel_leader_participation says, but only if that ends the
 * tables sooner: 4 tables on 2 workers take two rounds with the leader or
 * without it, and on 2 cores a third process only slows the other two.
 */
static bool
leader_builds(int ntables, int nworkers)
{
	if (nworkers <= 0)
		return true;
	return parallel_leader_participation &&
		(ntables + nworkers) / (nworkers + 1) < (ntables + nworkers - 1) / nworkers;
}

BlockNumber
simhash_build_write_run(Relation index, const SimhashBlocks *blocks,
						const SimhashRunInput *input, uint64 generation,
						BlockNumber *direct_start, BlockNumber *direct_end)
{
	uint64		n = input->n;
	int			nworkers = plan_workers(index, blocks, n);
	ParallelContext *pcxt;
	BuildShared *sh;
	uint64	   *hashes;
	ItemPointerData *tids;
	SimhashRunWriter w;
	PGAlignedBlock image;
	Page		page = (Page) image.data;
	SimhashRunHeader *header;
	Buffer		headbuf;
	BlockNumber headblk;
	double		c0 = simhash_cpu_ms(),
				c_setup,
				c_sync;

	*direct_start = *direct_end = InvalidBlockNumber;
	if (nworkers <= 0)
		return simhash_write_run(index, blocks, input, generation, SIMHASH_WRITE_BUILD);

	EnterParallelMode();
	pcxt = CreateParallelContext("simhash", "simhash_build_parallel_main", nworkers);
	shm_toc_estimate_chunk(&pcxt->estimator, sizeof(BuildShared));
	shm_toc_estimate_chunk(&pcxt->estimator, n * sizeof(uint64));
	shm_toc_estimate_chunk(&pcxt->estimator, n * sizeof(ItemPointerData));
	shm_toc_estimate_keys(&pcxt->estimator, 3);
	InitializeParallelDSM(pcxt);
	if (pcxt->seg == NULL)
	{
		DestroyParallelContext(pcxt);
		ExitParallelMode();
		return simhash_write_run(index, blocks, input, generation, SIMHASH_WRITE_BUILD);
	}

	/* the header first, as in a serial build; its trees once written */
	simhash_writer_init(&w, index, SIMHASH_WRITE_BUILD, generation);
	headbuf = simhash_run_header_begin(&w, page, blocks->ntables);
	headblk = BufferGetBlockNumber(headbuf);
	header = SimhashPageRunHeader(page);
	header->nentries = n;
	/* not locked while waiting for workers (their errors are interrupts) */
	LockBuffer(headbuf, BUFFER_LOCK_UNLOCK);

	sh = shm_toc_allocate(pcxt->toc, sizeof(BuildShared));
	memset(sh, 0, sizeof(*sh));
	sh->blocks = *blocks;
	sh->n = n;
	sh->generation = generation;
	sh->rnode = SimhashRelationFile(index);
	sh->use_wal = RelationNeedsWAL(index);
	sh->first = headblk + 1;
	pg_atomic_init_u32(&sh->next_table, 0);
	SpinLockInit(&sh->mutex);
	for (int t = 0; t < SIMHASH_MAX_INDEX_TABLES; t++)
		sh->npages[t] = -1;
	ConditionVariableInit(&sh->cv);
	hashes = shm_toc_allocate(pcxt->toc, n * sizeof(uint64));
	prefault(hashes, n * sizeof(uint64), true);
	memcpy(hashes, input->hashes, n * sizeof(uint64));
	tids = shm_toc_allocate(pcxt->toc, n * sizeof(ItemPointerData));
	prefault(tids, n * sizeof(ItemPointerData), true);
	memcpy(tids, input->tids, n * sizeof(ItemPointerData));
	shm_toc_insert(pcxt->toc, BUILD_KEY_SHARED, sh);
	shm_toc_insert(pcxt->toc, BUILD_KEY_HASHES, hashes);
	shm_toc_insert(pcxt->toc, BUILD_KEY_TIDS, tids);

	c_setup = simhash_cpu_ms() - c0;
	LaunchParallelWorkers(pcxt);
	/* (else waiting for their tables could wait for workers that never ran) */
	WaitForParallelWorkersToAttach(pcxt);
	if (leader_builds(blocks->ntables, pcxt->nworkers_launched))
		build_tables(sh, hashes, tids, -1);
	wait_for(sh, tables_written, blocks->ntables);
	WaitForParallelWorkersToFinish(pcxt);

	w.npages = 0;
	for (int t = 0; t < blocks->ntables; t++)
	{
		header->trees[t].root = sh->root[t];
		header->trees[t].height = sh->height[t];
		header->trees[t].pad = 0;
		w.npages += (uint32) sh->npages[t];
		elog(DEBUG2, "simhash index build: table %d (%s): " INT64_FORMAT " pages, cpu ms: sort %.0f, tree %.0f, log and write %.0f",
			 t, sh->who[t] < 0 ? "leader" : psprintf("worker %d", sh->who[t]),
			 sh->npages[t], sh->cpu_sort[t], sh->cpu_tree[t], sh->cpu_write[t]);
	}
	*direct_start = sh->first;
	*direct_end = sh->first + w.npages;
	LockBuffer(headbuf, BUFFER_LOCK_EXCLUSIVE);
	simhash_run_header_end(&w, headbuf, page);

	/* the pages bypassed the buffers: on disk before the commit */
	c_sync = simhash_cpu_ms();
	if (sh->use_wal)
		smgrimmedsync(RelationGetSmgr(index), MAIN_FORKNUM);
	c_sync = simhash_cpu_ms() - c_sync;
	ereport(DEBUG1,
			(errmsg("simhash index build: %d tables of " UINT64_FORMAT " entries, parallel workers: %d",
					blocks->ntables, n, pcxt->nworkers_launched)));
	elog(DEBUG2, "simhash index build: the leader's cpu ms in the tables' phase %.0f (set-up %.0f, fsync %.0f)",
		 simhash_cpu_ms() - c0, c_setup, c_sync);
	DestroyParallelContext(pcxt);
	ExitParallelMode();
	return headblk;
}
