/*
 * keys_split.c
 *		The grouping work of the shared-key and MinHash jobs (keys.c)
 *		split by key partition across parallel workers.  See
 *		dedup.h.
 *
 * Design.  A keys job sorts the (key, row) pairs of all rows and pairs the
 * rows of each key's run (dedup_keys_pair_runs()); that sort is most of
 * the job.  A key's run depends on that key's pairs only, so the keys are
 * independent units: here every (key, row) goes, as the job reads it
 * (dedup_keys_add()), to one of P partition files by a hash of the key
 * (P = 4 per participant, for balance), in a SharedFileSet of a small
 * segment of its own (so the files can be written before the workers
 * exist, and the job's read runs outside parallel mode).  Then a parallel
 * context is launched: the workers and the leader take partitions from an
 * atomic counter; each sorts its partition (a tuplesort of
 * work_mem / participants, spilling beyond) and pairs its runs exactly as
 * the serial job does.  The leader passes its own runs' pairs on at once;
 * each worker writes its pairs to a file, which the leader reads back after
 * the workers have finished.  Every key's run is paired once, by one
 * participant, with the same rows: the pairs reaching the job are the
 * serial job's, in another order; the job sorts and counts them (pairs,
 * MinHash) or unites them (groups), and its output is as the serial one.
 * The keys skipped for max_key_rows are summed across participants.
 *
 * When: the job's table has at least simhash.parallel_min_rows rows
 * (estimated as for the parallel read: simhash_scan_workers()), whatever
 * reads it (the parallel read or SPI; not a view, whose size is unknown);
 * the workers are max_parallel_maintenance_workers.  A failed or cancelled
 * job stops the workers; the segments and files go with the transaction.
 */
#include "dedup.h"

#include "access/parallel.h"
#include "access/relation.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "port/atomics.h"
#include "storage/dsm.h"
#include "storage/sharedfileset.h"
#include "storage/shm_toc.h"
#include "utils/rel.h"

#define SPLIT_KEY_SHARED	UINT64CONST(0x5348530000000001)

#define SPLIT_MAX_WORKERS 64
#define SPLIT_PARTS_PER_PARTICIPANT 4

/* items read or written at once */
#define SPLIT_BATCH 512

/* A (key, row) in a partition file, or a pair (a, b) in a worker's file */
typedef struct SplitItem
{
	int64		a;
	int64		b;
} SplitItem;

/* The job's split, in the leader */
struct KeysSplit
{
	int			nworkers;
	int			nparts;
	dsm_segment *fseg;			/* holds the SharedFileSet */
	SharedFileSet *fs;
	BufFile   **part;			/* the partition files, while adding */
	uint64		nrows;			/* rows are below this */
};

/* What the participants of the pairing share */
typedef struct SplitShared
{
	dsm_handle	files;			/* the segment of the SharedFileSet */
	int			nparts;
	int			max_key_rows;
	bool		adjacent;
	int			work_mem_kb;	/* per participant */
	pg_atomic_uint32 next_part;
	pg_atomic_uint64 skipped;
} SplitShared;

PGDLLEXPORT void dedup_keys_split_main(dsm_segment *seg, shm_toc *toc);

/* partition i's file */
static void
part_name(char *name, size_t size, int i)
{
	snprintf(name, size, "simhash_keys_part.%d", i);
}

/* worker i's file of pairs */
static void
pairs_name(char *name, size_t size, int i)
{
	snprintf(name, size, "simhash_keys_pairs.%d", i);
}

/* Workers for the pairing of in's keys; 0: pair them serially. */
static int
split_workers(DedupInput *in)
{
	Relation	rel;
	int			nworkers = 0;

	if (IsParallelWorker() || max_parallel_maintenance_workers <= 0)
		return 0;
	rel = relation_open(in->relid, NoLock);
	if (RELKIND_HAS_STORAGE(rel->rd_rel->relkind))
		nworkers = simhash_scan_workers(rel, in->reltuples, SPLIT_MAX_WORKERS);
	relation_close(rel, NoLock);
	return nworkers;
}

KeysSplit *
dedup_keys_split_create(DedupInput *in)
{
	int			nworkers = split_workers(in);
	KeysSplit  *ks;
	char		name[MAXPGPATH];

	if (nworkers <= 0)
		return NULL;
	ks = palloc0(sizeof(KeysSplit));
	ks->nworkers = nworkers;
	ks->nparts = SPLIT_PARTS_PER_PARTICIPANT * (nworkers + 1);
	ks->fseg = dsm_create(sizeof(SharedFileSet), 0);
	ks->fs = dsm_segment_address(ks->fseg);
	SharedFileSetInit(ks->fs, ks->fseg);
	ks->part = palloc(sizeof(BufFile *) * ks->nparts);
	for (int i = 0; i < ks->nparts; i++)
	{
		part_name(name, sizeof(name), i);
		ks->part[i] = BufFileCreateFileSet(&ks->fs->fs, name);
	}
	return ks;
}

/* the partition of a key: a 64-bit mix (splitmix64's finaliser) of it */
static inline int
key_part(const KeysSplit *ks, int64 key)
{
	uint64		h = (uint64) key;

	h = (h ^ (h >> 30)) * UINT64CONST(0xbf58476d1ce4e5b9);
	h = (h ^ (h >> 27)) * UINT64CONST(0x94d049bb133111eb);
	h ^= h >> 31;
	return (int) (h % (uint64) ks->nparts);
}

void
dedup_keys_split_add(KeysSplit *ks, int64 key, uint64 row)
{
	SplitItem	item;

	item.a = key;
	item.b = (int64) row;
	BufFileWrite(ks->part[key_part(ks, key)], &item, sizeof(item));
	ks->nrows = Max(ks->nrows, row + 1);
}

/*
 * Read up to SPLIT_BATCH items of a file into items; their number, 0 at
 * its end (an error if it ends within an item).
 */
static size_t
read_items(BufFile *file, SplitItem *items)
{
	size_t		got = BufFileRead(file, items, sizeof(SplitItem) * SPLIT_BATCH);

	if (got % sizeof(SplitItem) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read a temporary file of simhash keys: read only %zu bytes",
						got)));
	return got / sizeof(SplitItem);
}

/*
 * Take partitions until none is left: sort each and pass the pairs of its
 * key runs to fn.  Returns the number of keys skipped.
 */
static uint64
participate(SplitShared *sh, SharedFileSet *fs, DedupRunPairFn fn, void *arg)
{
	SplitItem  *items = palloc(sizeof(SplitItem) * SPLIT_BATCH);
	char		name[MAXPGPATH];
	uint64		skipped = 0;

	for (;;)
	{
		uint32		p = pg_atomic_fetch_add_u32(&sh->next_part, 1);
		BufFile    *file;
		PairSort	ps;
		size_t		n;

		if (p >= (uint32) sh->nparts)
			break;
		part_name(name, sizeof(name), (int) p);
		file = BufFileOpenFileSet(&fs->fs, name, O_RDONLY, false);
		dedup_pair_sort_begin(&ps, sh->work_mem_kb);
		while ((n = read_items(file, items)) > 0)
		{
			CHECK_FOR_INTERRUPTS();
			for (size_t i = 0; i < n; i++)
				dedup_pair_sort_put(&ps, items[i].a, items[i].b);
		}
		BufFileClose(file);
		skipped += dedup_keys_pair_runs(&ps, sh->max_key_rows, sh->adjacent, fn, arg);
		dedup_pair_sort_end(&ps);
	}
	pfree(items);
	return skipped;
}

/* DedupRunPairFn of a worker: append the pair to its file */
static void
worker_pair(void *arg, int64 a, int64 b)
{
	SplitItem	item;

	item.a = a;
	item.b = b;
	BufFileWrite((BufFile *) arg, &item, sizeof(item));
}

/* The entry point of a worker (by name, through the ParallelContext) */
void
dedup_keys_split_main(dsm_segment *seg, shm_toc *toc)
{
	SplitShared *sh = shm_toc_lookup(toc, SPLIT_KEY_SHARED, false);
	dsm_segment *fseg = dsm_attach(sh->files);
	SharedFileSet *fs;
	char		name[MAXPGPATH];
	BufFile    *out;

	simhash_test_hold_point();

	if (fseg == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("could not map the simhash key partitions' segment")));
	fs = dsm_segment_address(fseg);
	SharedFileSetAttach(fs, fseg);
	pairs_name(name, sizeof(name), ParallelWorkerNumber);
	out = BufFileCreateFileSet(&fs->fs, name);
	pg_atomic_fetch_add_u64(&sh->skipped, participate(sh, fs, worker_pair, out));
	BufFileClose(out);
	dsm_detach(fseg);			/* the leader keeps the files */
}

/* A pair read back from a worker: both rows of this job, a < b */
static inline void
check_pair(KeysSplit *ks, const SplitItem *item)
{
	if (item->a < 0 || item->a >= item->b || (uint64) item->b >= ks->nrows)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid pair in a temporary file of simhash keys: rows " INT64_FORMAT " and " INT64_FORMAT " of " UINT64_FORMAT,
						item->a, item->b, ks->nrows)));
}

/* Pass the pairs of worker i's file on to fn. */
static void
read_worker_pairs(KeysSplit *ks, int worker, DedupRunPairFn fn, void *arg)
{
	SplitItem  *items = palloc(sizeof(SplitItem) * SPLIT_BATCH);
	char		name[MAXPGPATH];
	BufFile    *file;
	size_t		n;

	pairs_name(name, sizeof(name), worker);
	file = BufFileOpenFileSet(&ks->fs->fs, name, O_RDONLY, false);
	while ((n = read_items(file, items)) > 0)
	{
		CHECK_FOR_INTERRUPTS();
		for (size_t i = 0; i < n; i++)
		{
			check_pair(ks, &items[i]);
			fn(arg, items[i].a, items[i].b);
		}
	}
	BufFileClose(file);
	pfree(items);
}

uint64
dedup_keys_split_run(KeysSplit *ks, int max_key_rows, bool adjacent, int work_mem_kb,
					 DedupRunPairFn fn, void *arg, DedupProgress *progress)
{
	ParallelContext *pcxt;
	SplitShared *sh;
	uint64		skipped = 0;
	int			launched = 0;

	/* the partitions are complete: closed, they can be opened by all */
	for (int i = 0; i < ks->nparts; i++)
		BufFileClose(ks->part[i]);
	pfree(ks->part);
	ks->part = NULL;

	EnterParallelMode();
	pcxt = CreateParallelContext("simhash", "dedup_keys_split_main", ks->nworkers);
	shm_toc_estimate_chunk(&pcxt->estimator, sizeof(SplitShared));
	shm_toc_estimate_keys(&pcxt->estimator, 1);
	InitializeParallelDSM(pcxt);
	if (pcxt->seg != NULL)
		sh = shm_toc_allocate(pcxt->toc, sizeof(SplitShared));
	else
		sh = palloc(sizeof(SplitShared));	/* no segment: the leader alone */
	memset(sh, 0, sizeof(*sh));
	sh->files = dsm_segment_handle(ks->fseg);
	sh->nparts = ks->nparts;
	sh->max_key_rows = max_key_rows;
	sh->adjacent = adjacent;
	sh->work_mem_kb = Max(work_mem_kb / (ks->nworkers + 1), 64);
	pg_atomic_init_u32(&sh->next_part, 0);
	pg_atomic_init_u64(&sh->skipped, 0);
	if (pcxt->seg != NULL)
	{
		shm_toc_insert(pcxt->toc, SPLIT_KEY_SHARED, sh);
		LaunchParallelWorkers(pcxt);
		launched = pcxt->nworkers_launched;
	}
	dedup_progress(progress, "pairing the rows of %d key partitions, parallel workers: %d",
				   ks->nparts, launched);

	/* the leader's share (unless parallel_leader_participation is off) */
	if (parallel_leader_participation || launched == 0)
		skipped += participate(sh, ks->fs, fn, arg);
	if (launched > 0)
	{
		WaitForParallelWorkersToFinish(pcxt);
		for (int i = 0; i < launched; i++)
			read_worker_pairs(ks, i, fn, arg);
	}
	skipped += pg_atomic_read_u64(&sh->skipped);

	if (pcxt->seg == NULL)
		pfree(sh);
	DestroyParallelContext(pcxt);
	ExitParallelMode();
	dsm_detach(ks->fseg);		/* the last one out removes the files */
	pfree(ks);
	return skipped;
}
