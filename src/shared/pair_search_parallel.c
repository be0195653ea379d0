/*
 * pair_search_parallel.c
 *		The in-memory pair search of simhash_pairs() and simhash_groups()
 *		(search.c) split across parallel workers.
 *
 * Design.  The search's tables come in groups: group c holds the tables
 * whose first chosen block is c (simhash_table_group()), and a pair is
 * reported only by the lowest table that finds it.  A group's tables can
 * therefore be searched without the others, and the union of the groups'
 * pairs is exactly the serial result: no pair is found twice, so nothing
 * has to be deduplicated across participants.  The groups are the units
 * of work, taken one at a time from an atomic counter, largest first
 * (group c has C(m - 1 - c, m - k - 1) tables).  Pairs of equal
 * fingerprints go with the first unit.
 *
 * The rows.  A search needs the rows sorted by fingerprint, their runs of
 * equal fingerprints and the distinct fingerprints (rowpairs.h), all of
 * them, in every participant.  The leader holds the rows; it launches the
 * workers, counts its rows' buckets by the top bits of their fingerprints
 * (about n / 2048 buckets; their bounds go to the segment) and cuts the
 * buckets into shares of about equal rows (4 per worker, so that a worker
 * that starts late takes fewer).  It then splits the rows in place by
 * the top bits of the buckets (coarse buckets: at most 1024, see
 * coarse_bits()), one pass, no second copy (an American flag sort:
 * simhash_row_buckets_place() fills the buckets in order, each final when
 * its turn ends), share by share, writing each share's rows to a file of a
 * SharedFileSet as soon as it is filled.  The sort is shared: the workers
 * take shares from an atomic counter, wait until the share's file is
 * written (a counter and a condition variable: they sort the first shares
 * while the leader still splits), read its rows, split them in place by
 * the buckets' remaining bits, sort its buckets one by one (each in cache,
 * simhash_row_buckets_sort_range()) and write the share's sorted keys,
 * distinct fingerprints and run starts to a file.  When every share is done (a counter and a condition
 * variable), each worker reads the other shares' files into place, a copy
 * of 20 bytes a row instead of a sort, and holds what
 * simhash_row_buckets_sort() would have made of all rows.  Then it
 * searches units with its own find_all scratch.  A worker allocates all its
 * arrays, faulted in at once, while the leader still splits.  Nothing
 * large is in the shared memory segment: on the project's virtual machine
 * the first touch of a 4 kB page costs about 15 us, and each process
 * faults on every shared page it touches (no huge pages for shared
 * memory), which made the earlier design (the leader's sort into the
 * segment, the workers reading it) slower than the serial search; private
 * arrays get transparent huge pages (simhash_alloc_huge()) and a file is
 * read with read().  The leader neither sorts nor searches when a worker
 * started: it has the serial parts (the read's replay, the split, the
 * pairs' replay), and on as many cores as workers a third process only
 * competes with them.  With no worker started it sorts and searches
 * alone.  Each worker writes its pairs to a file, which the leader reads
 * back after the workers have finished.  The result is the same set of
 * pairs as the serial search, in another order; every job's output is
 * independent of that order (pairs are a set, groups are a union-find or
 * a sort).  A worker that fails while others wait for its share stops the
 * job: the leader, waiting for the workers, raises its error, and the
 * others are terminated with the query.
 *
 * Workers need no table access.  The ParallelContext machinery (as CREATE
 * INDEX of a btree uses it) gives them the leader's transaction and
 * settings, relays their errors to the leader (CHECK_FOR_INTERRUPTS() in
 * the leader's loops raises them), stops them when the leader's query is
 * cancelled or fails, and frees the segment and the files at the end of the
 * transaction in any case.
 *
 * Memory (within maintenance_work_mem): the caller's arrays (the rows, 16
 * bytes a row, and the serial search's scratch, 24, which the leader uses
 * should it search alone; pair_search.c keeps them from part to part,
 * sized for its largest part) and, for every worker, its copy of
 * the rows, runs and scratch (36 bytes a row: keys, distinct values, run
 * starts, and two arrays, the sort's scratch and then find_all's).  The number of
 * workers is max_parallel_maintenance_workers, lowered until that fits;
 * with none, the serial path runs unchanged.  Only searches of at least
 * simhash.parallel_min_rows rows go parallel: starting workers costs
 * milliseconds.  The phases of the leader and the workers (wall and CPU
 * time) are logged at DEBUG1 (dedup_phase()).
 */
#include "shared/pair_search_parallel.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/buffile.h"
#include "storage/bufmgr.h"
#include "storage/sharedfileset.h"
#include "storage/shm_toc.h"
#include "storage/spin.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "shared/memory.h"
#include "shared/workers.h"
#include "simhash.h"

/* shm_toc keys */
#define DEDUP_KEY_SHARED	UINT64CONST(0x5348440000000001)
#define DEDUP_KEY_OFF		UINT64CONST(0x5348440000000002)

/* shares of the sort per worker, and at most */
#define DEDUP_RANGES_PER_WORKER 4
#define DEDUP_MAX_RANGES 256


/* The state every participant shares */
typedef struct DedupParallelShared
{
	SimhashBlocks blocks;
	uint64		n;				/* rows */
	bool		exact;			/* the first unit pairs equal fingerprints */
	bool		star;			/* star pairs only (core/rowpairs.h) */
	int			nunits;
	int			unit_lo[64];	/* unit u: tables unit_lo[u] .. unit_hi[u] - 1 */
	int			unit_hi[64];
	int			bucket_bits;	/* the split: 2^bucket_bits buckets */
	int			nranges;		/* shares of the sort (of the buckets) */
	pg_atomic_uint32 written;	/* shares of split rows in their files */
	pg_atomic_uint32 next_range;	/* the next share of the sort to take */
	pg_atomic_uint32 ranges_done;	/* shares sorted and written */
	pg_atomic_uint32 next_unit; /* the next unit to search */
	ConditionVariable written_cv;	/* broadcast when a share is written */
	ConditionVariable sorted_cv;	/* broadcast when a share is done */
	uint32		ndistinct[DEDUP_MAX_RANGES];	/* each share's distinct values */
	SharedFileSet fileset;		/* the split rows; the workers' pairs */
} DedupParallelShared;

/*
 * A participant's rows, private (huge pages): the split rows h[], k[]
 * (n each), sorted in place; the distinct fingerprints uniq[] (n) and run
 * starts start[] (n + 1); scratch[] (n), the sort's and then find_all's.
 * After the sort h[] is scratch too: find_all's other array.
 */
typedef struct DedupParallelRows
{
	uint64	   *h;
	uint64	   *k;
	uint64	   *uniq;
	uint32	   *start;
	uint64	   *scratch;
	uint64		m;
} DedupParallelRows;

/* private bytes of a participant's rows and search */
#define ROWS_BYTES(n) ((double) (n) * (4 * sizeof(uint64) + sizeof(uint32)))

/* buckets for n rows: about 2048 rows each (a sort in cache), 16 .. 65536 */
static int
bucket_bits_for(uint64 n)
{
	int			bits = 4;

	while (bits < 16 && (n >> (bits + 11)) > 0)
		bits++;
	return bits;
}

/*
 * simhash_alloc_huge() with the pages faulted in at once (Linux 5.14's
 * MADV_POPULATE_WRITE; elsewhere nothing more): a worker writes all of
 * these arrays, and where huge pages cannot be had one fault per 4kB page
 * costs several times what populating them at once does.
 */
static void *
alloc_populated(Size size)
{
	void	   *p = simhash_alloc_huge(CurrentMemoryContext, size);

#ifdef MADV_POPULATE_WRITE
	uintptr_t	lo = TYPEALIGN(4096, (uintptr_t) p),
				hi = TYPEALIGN_DOWN(4096, (uintptr_t) p + size);

	if (hi > lo)
		(void) madvise((void *) lo, hi - lo, MADV_POPULATE_WRITE);
#endif
	return p;
}

/* allocate the arrays of a participant's sort beyond h[] and k[] */
static void
rows_alloc_sort(DedupParallelRows *rows, uint64 n)
{
	rows->uniq = alloc_populated(Max(n, 1) * sizeof(uint64));
	rows->start = alloc_populated((n + 1) * sizeof(uint32));
	rows->scratch = alloc_populated(Max(n, 1) * sizeof(uint64));
}

/*
 * The same arrays in the leader's scratch work, SIMHASH_ROW_PAIRS_WORK(n)
 * bytes (20 bytes a row and 4 more are needed), for a leader that searches
 * alone.
 */
static void
rows_carve_sort(DedupParallelRows *rows, uint64 n, void *work)
{
	rows->uniq = (uint64 *) work;
	rows->scratch = rows->uniq + n;
	rows->start = (uint32 *) (rows->scratch + n);
}

/* allocate a worker's arrays for n rows */
static void
rows_alloc(DedupParallelRows *rows, uint64 n)
{
	memset(rows, 0, sizeof(*rows));
	rows->h = alloc_populated(Max(n, 1) * sizeof(uint64));
	rows->k = alloc_populated(Max(n, 1) * sizeof(uint64));
	rows_alloc_sort(rows, n);
}

/* free the arrays of rows_alloc_sort() */
static void
rows_free_sort(DedupParallelRows *rows)
{
	pfree(rows->uniq);
	pfree(rows->start);
	pfree(rows->scratch);
}

/*
 * Sort all the split rows and find their runs (the leader when no worker
 * started; the workers share the sort: worker_sort()).
 */
static void
rows_sort(DedupParallelRows *rows, DedupParallelShared *sh, const uint32 *off)
{
	rows->m = simhash_row_buckets_sort(rows->h, rows->k, sh->n, off, sh->bucket_bits,
									   rows->uniq, rows->start, (uint32 *) rows->scratch);
}

PGDLLEXPORT void pair_search_parallel_main(dsm_segment *seg, shm_toc *toc);

/* Run a started in-memory search to its end, its pairs to fn in batches */
uint64
pair_search_drain(SimhashRowPairs *r, SimhashRowPair *pairs, PairSearchFn fn, void *arg)
{
	uint64		npairs = 0;

	while (!simhash_row_pairs_done(r))
	{
		size_t		np;

		CHECK_FOR_INTERRUPTS();
		np = simhash_row_pairs_next(r, pairs, PAIR_SEARCH_BATCH);
		if (np > 0)
		{
			npairs += np;
			simhash_progress_add_pairs(np);
			fn(arg, pairs, np);
		}
	}
	return npairs;
}

/*
 * Take units until none is left, searching each and passing its pairs to
 * fn; find_all's arrays are rows->h and rows->scratch.  Returns the number
 * of pairs found.
 */
static uint64
participate(DedupParallelShared *sh, const DedupParallelRows *rows,
			PairSearchFn fn, void *arg)
{
	SimhashRowPairs *r = palloc(sizeof(SimhashRowPairs));
	SimhashRowPair *pairs = palloc(sizeof(SimhashRowPair) * PAIR_SEARCH_BATCH);
	uint64		npairs = 0;

	for (;;)
	{
		uint32		u = pg_atomic_fetch_add_u32(&sh->next_unit, 1);

		if (u >= (uint32) sh->nunits)
			break;
		simhash_row_pairs_attach(r, &sh->blocks, rows->k, rows->uniq,
								 rows->start, sh->n, rows->m, rows->h, rows->scratch,
								 sh->unit_lo[u], sh->unit_hi[u],
								 sh->exact && u == 0);
		if (sh->star)
			simhash_row_pairs_star(r);
		npairs += pair_search_drain(r, pairs, fn, arg);
	}
	pfree(pairs);
	pfree(r);
	return npairs;
}

/* a worker's file of pairs */
static void
worker_file_name(char *name, size_t size, int worker)
{
	snprintf(name, size, "simhash_pairs.%d", worker);
}

/* PairSearchFn of a worker: append the pairs to its file */
static void
worker_emit(void *arg, const SimhashRowPair *pairs, size_t n)
{
	BufFileWrite((BufFile *) arg, (void *) pairs, n * sizeof(SimhashRowPair));
}

/* the file of share r's split rows (the leader's) or sorted rows */
static void
share_file_name(char *name, size_t size, const char *what, int r)
{
	snprintf(name, size, "simhash_%s.%d", what, r);
}

/* wait until more than r shares of split rows are written */
static void
wait_written(DedupParallelShared *sh, uint32 r)
{
	ConditionVariablePrepareToSleep(&sh->written_cv);
	while (pg_atomic_read_u32(&sh->written) <= r)
		ConditionVariableSleep(&sh->written_cv, PG_WAIT_EXTENSION);
	ConditionVariableCancelSleep();
	pg_memory_barrier();
}

/*
 * The leader splits its rows by fewer bits than the buckets have (coarse
 * buckets: one bit fewer, at most DEDUP_SPLIT_BITS): with more write
 * heads, each on its own page of the rows, its in-place split got several
 * times slower per row (10M rows, 8192 buckets: 177 ns a row against 25 at
 * 2M rows and 1024).  The workers split each share by the remaining bits,
 * in place, a few heads at a time.  (Always at least one bit: the
 * workers' split runs, and is tested, at every size.)
 */
#define DEDUP_SPLIT_BITS 10

/* the bits of the leader's coarse split for 2^bits buckets */
static inline int
coarse_bits(int bits)
{
	return Min(bits - 1, DEDUP_SPLIT_BITS);
}

/*
 * Share r of nranges of the sort: buckets *b_lo .. *b_hi - 1 (of 2^bits),
 * cut at the coarse buckets' bounds where the rows (off[], n of them)
 * reach r / nranges of the whole.
 */
static void
range_bounds(const uint32 *off, int bits, uint64 n, int nranges, int r,
			 size_t *b_lo, size_t *b_hi)
{
	int			step = bits - coarse_bits(bits);
	size_t		nc = (size_t) 1 << (bits - step);

	for (int e = 0; e < 2; e++)
	{
		uint64		want = n * (uint64) (r + e) / (uint64) nranges;
		size_t		lo = 0,
					hi = nc;

		/* the first coarse bucket that starts at or after row want */
		while (lo < hi)
		{
			size_t		mid = lo + (hi - lo) / 2;

			if (off[mid << step] < want)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (e == 0)
			*b_lo = (r == 0 ? 0 : lo) << step;
		else
			*b_hi = (r + 1 == nranges ? nc : lo) << step;
	}
}

/* read exactly size bytes from file */
static void
read_all(BufFile *file, void *buf, size_t size)
{
	if (BufFileRead(file, buf, size) != size)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read a temporary file of simhash rows")));
}

/*
 * A worker's part of the sort: take shares (bucket ranges) from the
 * counter until none is left, read each share's split rows from the
 * leader's file, sort them and write the result (keys, distinct values,
 * run starts) to the share's file; then, when every share is done, copy
 * the others' shares into place, so that rows holds what
 * simhash_row_buckets_sort() would have made of all rows.
 */
static void
worker_sort(DedupParallelShared *sh, const uint32 *off, DedupParallelRows *rows,
			DedupClock *clock)
{
	uint64		n = sh->n;
	bool		mine[DEDUP_MAX_RANGES];
	char		name[MAXPGPATH];
	BufFile    *in,
			   *file;
	uint64		m = 0;
	uint32	   *next = palloc(sizeof(uint32) << sh->bucket_bits);

	memset(mine, 0, sizeof(mine));
	for (;;)
	{
		uint32		r = pg_atomic_fetch_add_u32(&sh->next_range, 1);
		size_t		b_lo,
					b_hi,
					d;
		uint32		o,
					cnt;

		if (r >= (uint32) sh->nranges)
			break;
		CHECK_FOR_INTERRUPTS();
		range_bounds(off, sh->bucket_bits, n, sh->nranges, r, &b_lo, &b_hi);
		o = off[b_lo];
		cnt = off[b_hi] - o;
		wait_written(sh, r);
		share_file_name(name, sizeof(name), "rows", r);
		in = BufFileOpenFileSet(&sh->fileset.fs, name, O_RDONLY, false);
		read_all(in, rows->h + o, cnt * sizeof(uint64));
		read_all(in, rows->k + o, cnt * sizeof(uint64));
		BufFileClose(in);
		/* the leader split by the top bits only: the rest, in place */
		memcpy(next + b_lo, off + b_lo, (b_hi - b_lo) * sizeof(uint32));
		simhash_row_buckets_place(rows->h, rows->k, sh->bucket_bits, off, next,
								  b_lo, b_hi);
		d = simhash_row_buckets_sort_range(rows->h, rows->k, off, b_lo, b_hi,
										   rows->uniq, rows->start, (uint32 *) rows->scratch);
		share_file_name(name, sizeof(name), "sorted", r);
		file = BufFileCreateFileSet(&sh->fileset.fs, name);
		BufFileWrite(file, rows->k + o, cnt * sizeof(uint64));
		BufFileWrite(file, rows->uniq + o, d * sizeof(uint64));
		BufFileWrite(file, rows->start + o, d * sizeof(uint32));
		BufFileClose(file);
		sh->ndistinct[r] = (uint32) d;
		mine[r] = true;
		pg_atomic_fetch_add_u32(&sh->ranges_done, 1);	/* a full barrier */
		ConditionVariableBroadcast(&sh->sorted_cv);
	}
	pfree(next);
	dedup_phase(clock, "search: sort shares");

	/* every share sorted (a worker that fails stops the job: the leader) */
	ConditionVariablePrepareToSleep(&sh->sorted_cv);
	while (pg_atomic_read_u32(&sh->ranges_done) < (uint32) sh->nranges)
		ConditionVariableSleep(&sh->sorted_cv, PG_WAIT_EXTENSION);
	ConditionVariableCancelSleep();
	pg_memory_barrier();
	dedup_phase(clock, "search: wait for the other shares");

	/*
	 * In share order; share r's runs go to m .. m + d - 1, and m never
	 * passes its first row: nothing not yet moved or read is overwritten.
	 */
	for (int r = 0; r < sh->nranges; r++)
	{
		size_t		b_lo,
					b_hi;
		uint32		o,
					cnt,
					d = sh->ndistinct[r];

		range_bounds(off, sh->bucket_bits, n, sh->nranges, r, &b_lo, &b_hi);
		o = off[b_lo];
		cnt = off[b_hi] - o;
		if (d > cnt)
			elog(ERROR, "simhash: share %d of the sort has %u distinct values in %u rows",
				 r, d, cnt);
		if (mine[r])
		{
			memmove(rows->uniq + m, rows->uniq + o, d * sizeof(uint64));
			memmove(rows->start + m, rows->start + o, d * sizeof(uint32));
		}
		else
		{
			share_file_name(name, sizeof(name), "sorted", r);
			file = BufFileOpenFileSet(&sh->fileset.fs, name, O_RDONLY, false);
			read_all(file, rows->k + o, cnt * sizeof(uint64));
			read_all(file, rows->uniq + m, d * sizeof(uint64));
			read_all(file, rows->start + m, d * sizeof(uint32));
			BufFileClose(file);
		}
		m += d;
	}
	rows->start[m] = (uint32) n;
	rows->m = m;
}

/* The entry point of a worker (by name, through the ParallelContext) */
void
pair_search_parallel_main(dsm_segment *seg, shm_toc *toc)
{
	DedupParallelShared *sh = shm_toc_lookup(toc, DEDUP_KEY_SHARED, false);
	const uint32 *off = shm_toc_lookup(toc, DEDUP_KEY_OFF, false);
	DedupParallelRows rows;
	char		name[MAXPGPATH];
	BufFile    *file;
	DedupClock	clock;

	simhash_test_hold_point();

	SharedFileSetAttach(&sh->fileset, seg);
	dedup_clock_start(&clock);
	rows_alloc(&rows, sh->n);

	/* the leader's first share: the shares and off[] are set then */
	wait_written(sh, 0);
	dedup_phase(&clock, "search: wait for the split");

	/* shares of the sort, then the others' shares: see the header */
	worker_sort(sh, off, &rows, &clock);
	dedup_phase(&clock, "search: copy the sorted shares");

	worker_file_name(name, sizeof(name), ParallelWorkerNumber);
	file = BufFileCreateFileSet(&sh->fileset.fs, name);
	participate(sh, &rows, worker_emit, file);
	BufFileClose(file);
	dedup_phase(&clock, "search: search");
	pfree(rows.h);
	pfree(rows.k);
	rows_free_sort(&rows);
}

/* Pass the pairs of worker i's file on to fn; returns their number. */
static uint64
read_worker_pairs(DedupParallelShared *sh, int worker, PairSearchFn fn, void *arg)
{
	char		name[MAXPGPATH];
	BufFile    *file;
	SimhashRowPair *pairs = palloc(sizeof(SimhashRowPair) * PAIR_SEARCH_BATCH);
	uint64		npairs = 0;

	worker_file_name(name, sizeof(name), worker);
	file = BufFileOpenFileSet(&sh->fileset.fs, name, O_RDONLY, false);
	for (;;)
	{
		size_t		got = BufFileRead(file, pairs, sizeof(SimhashRowPair) * PAIR_SEARCH_BATCH);

		CHECK_FOR_INTERRUPTS();
		if (got % sizeof(SimhashRowPair) != 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read a temporary file of simhash pairs: read only %zu bytes",
							got)));
		if (got == 0)
			break;
		fn(arg, pairs, got / sizeof(SimhashRowPair));
		npairs += got / sizeof(SimhashRowPair);
	}
	BufFileClose(file);
	pfree(pairs);
	return npairs;
}

/*
 * The units of tables lo .. hi - 1 (whole groups): one per group, largest
 * first (groups come in decreasing size).  Returns their number.
 */
static int
plan_units(const SimhashBlocks *b, int lo, int hi, int *unit_lo, int *unit_hi)
{
	int			nunits = 0;

	for (int c = 0; c <= b->max_distance; c++)
	{
		int			glo,
					ghi;

		simhash_table_group(b, c, &glo, &ghi);
		if (glo >= lo && ghi <= hi && ghi > glo)
		{
			unit_lo[nunits] = glo;
			unit_hi[nunits] = ghi;
			nunits++;
		}
	}
	return nunits;
}

/*
 * Workers for a search of n rows in units within budget bytes; 0: serial.
 * The leader holds the caller's arrays (held bytes: its rows, split in
 * place, and the scratch it searches in should no worker start); every
 * worker its own sorted copy of the rows with its runs and scratch (36
 * bytes a row).
 */
static int
plan_workers(size_t n, int nunits, Size held, Size budget)
{
	int			nworkers = Min(max_parallel_maintenance_workers, nunits - 1);
	double		each = ROWS_BYTES(n);
	double		base = (double) held;

	if (IsParallelWorker() || n < (size_t) Max(simhash_parallel_min_rows, 2) ||
		n >= (size_t) PG_UINT32_MAX)
		return 0;
	while (nworkers > 0 && base + each * nworkers > (double) budget)
		nworkers--;
	return Max(nworkers, 0);
}

bool
pair_search_parallel(const SimhashBlocks *b, uint64 *hash, uint64 *key,
					  size_t n, void *work, Size held, int lo, int hi,
					  bool exact, bool star, Size budget,
					  PairSearchFn fn, void *arg, uint64 *npairs,
					  DedupProgress *progress)
{
	int			unit_lo[64],
				unit_hi[64];
	int			nunits = plan_units(b, lo, hi, unit_lo, unit_hi);
	int			nworkers = plan_workers(n, nunits, held, budget);
	int			bits = bucket_bits_for(n);
	int			cbits = coarse_bits(bits);
	Size		off_size = ((Size) (1 << bits) + 1) * sizeof(uint32);
	ParallelContext *pcxt;
	DedupParallelShared *sh;
	DedupParallelRows rows;
	uint32	   *off,
			   *coff,
			   *next;
	BufFile    *file;
	DedupClock	clock;

	if (nworkers <= 0)
		return false;
	dedup_clock_start(&clock);

	EnterParallelMode();
	pcxt = CreateParallelContext("simhash", "pair_search_parallel_main", nworkers);
	shm_toc_estimate_chunk(&pcxt->estimator, sizeof(DedupParallelShared));
	shm_toc_estimate_chunk(&pcxt->estimator, off_size);
	shm_toc_estimate_keys(&pcxt->estimator, 2);
	InitializeParallelDSM(pcxt);
	if (pcxt->seg == NULL)
	{
		/* no segment could be had: the serial search */
		DestroyParallelContext(pcxt);
		ExitParallelMode();
		return false;
	}

	sh = shm_toc_allocate(pcxt->toc, sizeof(DedupParallelShared));
	memset(sh, 0, sizeof(*sh));
	sh->blocks = *b;
	sh->n = n;
	sh->exact = exact;
	sh->star = star;
	sh->nunits = nunits;
	memcpy(sh->unit_lo, unit_lo, sizeof(unit_lo));
	memcpy(sh->unit_hi, unit_hi, sizeof(unit_hi));
	sh->bucket_bits = bits;
	pg_atomic_init_u32(&sh->written, 0);
	pg_atomic_init_u32(&sh->next_range, 0);
	pg_atomic_init_u32(&sh->ranges_done, 0);
	pg_atomic_init_u32(&sh->next_unit, 0);
	ConditionVariableInit(&sh->written_cv);
	ConditionVariableInit(&sh->sorted_cv);
	SharedFileSetInit(&sh->fileset, pcxt->seg);
	off = shm_toc_allocate(pcxt->toc, off_size);
	shm_toc_insert(pcxt->toc, DEDUP_KEY_SHARED, sh);
	shm_toc_insert(pcxt->toc, DEDUP_KEY_OFF, off);

	/*
	 * The workers start (which takes a while) during the split, the one
	 * serial pass over the rows, done in place (fresh memory is costly: a
	 * page fault per page) and share by share: each share's rows go to a
	 * file as soon as its buckets are filled, and a worker may sort it
	 * while the leader fills the next.
	 */
	LaunchParallelWorkers(pcxt);
	dedup_phase(&clock, "search: launch");
	next = palloc(sizeof(uint32) << bits);
	coff = palloc(((Size) (1 << cbits) + 1) * sizeof(uint32));
	simhash_row_buckets_bounds(hash, n, bits, off);
	for (int c = 0; c <= (1 << cbits); c++)
		coff[c] = off[(Size) c << (bits - cbits)];
	memcpy(next, coff, sizeof(uint32) << cbits);
	if (pcxt->nworkers_launched == 0)
	{
		/* by the top bits, then within those buckets by the rest */
		simhash_row_buckets_place(hash, key, cbits, coff, next, 0, (Size) 1 << cbits);
		memcpy(next, off, sizeof(uint32) << bits);
		simhash_row_buckets_place(hash, key, bits, off, next, 0, (Size) 1 << bits);
	}
	else
	{
		/* shares of the sort: a few per worker, for workers that start late */
		sh->nranges = Min(DEDUP_RANGES_PER_WORKER * pcxt->nworkers_launched,
						  DEDUP_MAX_RANGES);
		for (int r = 0; r < sh->nranges; r++)
		{
			size_t		b_lo,
						b_hi;
			uint32		o,
						cnt;
			char		name[MAXPGPATH];

			CHECK_FOR_INTERRUPTS();
			range_bounds(off, bits, n, sh->nranges, r, &b_lo, &b_hi);
			simhash_row_buckets_place(hash, key, cbits, coff, next,
									  b_lo >> (bits - cbits), b_hi >> (bits - cbits));
			o = off[b_lo];
			cnt = off[b_hi] - o;
			share_file_name(name, sizeof(name), "rows", r);
			file = BufFileCreateFileSet(&sh->fileset.fs, name);
			BufFileWrite(file, hash + o, cnt * sizeof(uint64));
			BufFileWrite(file, key + o, cnt * sizeof(uint64));
			BufFileClose(file);
			pg_atomic_fetch_add_u32(&sh->written, 1);	/* a full barrier */
			ConditionVariableBroadcast(&sh->written_cv);
		}
	}
	pfree(coff);
	pfree(next);
	dedup_phase(&clock, "search: split and write the rows");
	dedup_progress(progress, "searching %zu rows in %d table groups, parallel workers: %d",
				   n, nunits, pcxt->nworkers_launched);

	/*
	 * The leader searches only if no worker started: the workers each sort
	 * the rows again, and a leader that did too would only compete with
	 * them for the cores (it has the serial parts: the split, the replays).
	 */
	if (pcxt->nworkers_launched == 0)
	{
		rows.h = hash;
		rows.k = key;
		rows_carve_sort(&rows, n, work);
		rows_sort(&rows, sh, off);
		dedup_phase(&clock, "search: sort");
		*npairs += participate(sh, &rows, fn, arg);
		dedup_phase(&clock, "search: search");
	}

	WaitForParallelWorkersToFinish(pcxt);
	dedup_phase(&clock, "search: wait for the workers");
	for (int i = 0; i < pcxt->nworkers_launched; i++)
		*npairs += read_worker_pairs(sh, i, fn, arg);
	dedup_phase(&clock, "search: replay the workers' pairs");

	DestroyParallelContext(pcxt);
	ExitParallelMode();
	return true;
}
