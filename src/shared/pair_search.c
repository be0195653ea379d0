/*
 * pair_search.c
 *		The pair search of the table-scale dedup jobs, within a memory
 *		budget (maintenance_work_mem).  See dedup.h.
 *
 * Rows (fingerprint, 64-bit key) are held in memory while all of them fit
 * the search (PAIR_SEARCH_ROW_BYTES each: the rows, the sort and find_all's
 * scratch); the whole search is then one in-memory pass (rowpairs.h).
 *
 * Past that, rows go to temporary files, split for each table group: the
 * tables whose first chosen block is c (c = 0 .. k, see
 * simhash_table_group()) only pair rows that agree on all of block c, so
 * the rows are split into 2^bits parts by bits of block c (its lowest
 * bits: find_all partitions by the highest) and each part is searched
 * alone with group c's tables.  Each pair is still found exactly once: by
 * its lowest table, in the part its block agrees on; equal fingerprints are
 * paired in group 0's parts only.  A part that still does not fit is split
 * again by the next bits of the block.  Every row is written k + 1 times
 * (once per group) and read back about as often.
 *
 * A part that cannot be split further (more rows than fit agree on a whole
 * block, e.g. a huge number of identical fingerprints) is an error, not an
 * unbounded allocation.
 *
 * The parts' arrays (rows and the search's scratch, PAIR_SEARCH_ROW_BYTES
 * a row) are kept from part to part, sized for the largest part so far and
 * never more than the budget: arrays larger than malloc's largest mmap
 * threshold (32MB in glibc) are mapped afresh at each allocation, and every
 * page of a fresh mapping is faulted in and zeroed by the kernel again.
 * Like the temporary files' buffers (BLCKSZ each, a few hundred at most),
 * the split of a part that does not fit is not counted in the budget.
 */
#include "shared/pair_search.h"

#include "miscadmin.h"
#include "storage/buffile.h"
#include "utils/memutils.h"

#include "shared/memory.h"
#include "simhash.h"

/* a row in a temporary file */
typedef struct DedupRecord
{
	uint64		hash;
	uint64		key;
} DedupRecord;

/* most parts a file is split into at once (each open file buffers BLCKSZ) */
#define DEDUP_MAX_SPLIT_BITS 8


struct PairSearch
{
	const SimhashBlocks *b;
	DedupProgress *progress;
	MemoryContext cxt;			/* where rows and files are allocated */
	double		est_rows;
	uint64		nrows;			/* rows added */
	/* rows in memory */
	uint64	   *hash;
	uint64	   *key;
	size_t		n;
	size_t		cap;			/* allocated */
	size_t		maxcap;			/* most rows held in memory while adding */
	/* or in files: group c's part p is files[(c << bits) + p] */
	bool		spilled;
	int			bits;
	BufFile   **files;
	uint64	   *file_rows;
	/* progress */
	uint64		npairs;
	int			parts_done;
	int			parts_total;
	uint64		spilled_bytes;	/* written to temporary files */
	bool		star;			/* star pairs only (pair_search_set_star) */
	/* a part's arrays, kept from part to part (part_arrays()) */
	uint64	   *part_hash;
	uint64	   *part_key;
	void	   *part_work;		/* SIMHASH_ROW_PAIRS_WORK(part_cap) bytes */
	size_t		part_cap;		/* rows they hold */
	/* the budget's setting, for messages: NULL is maintenance_work_mem */
	const char *budget_name;
	const char *budget_hint;
};

PairSearch *
pair_search_create(const SimhashBlocks *b, Size budget, double est_rows,
					DedupProgress *progress)
{
	PairSearch *s = palloc0(sizeof(PairSearch));

	s->b = b;
	s->cxt = CurrentMemoryContext;
	s->progress = progress;
	s->est_rows = est_rows;
	s->maxcap = Max(budget / PAIR_SEARCH_ROW_BYTES, 1024);
	return s;
}

void
pair_search_set_budget_name(PairSearch *s, const char *name, const char *settings)
{
	s->budget_name = name;
	s->budget_hint = settings;
}

void
pair_search_set_star(PairSearch *s)
{
	s->star = true;
}

uint64
pair_search_spilled_bytes(const PairSearch *s)
{
	return s->spilled_bytes;
}

/* first bit of block c, counted from the least significant */
static inline int
block_shift(const SimhashBlocks *b, int c)
{
	return 64 - b->offset[c] - b->width[c];
}

/* split bits for rows that should fit in budget: twice the parts needed */
static int
split_bits(double rows, Size budget, int available)
{
	double		parts = 2.0 * rows * PAIR_SEARCH_ROW_BYTES / (double) Max(budget, 1);
	int			bits = 1;

	while (bits < DEDUP_MAX_SPLIT_BITS && (double) (1 << bits) < parts)
		bits++;
	return Min(bits, available);
}

static void
write_record(PairSearch *s, BufFile *file, uint64 hash, uint64 key)
{
	DedupRecord rec;

	s->spilled_bytes += sizeof(rec);
	rec.hash = hash;
	rec.key = key;
	BufFileWrite(file, &rec, sizeof(rec));
}

static void
spill_row(PairSearch *s, uint64 hash, uint64 key)
{
	const SimhashBlocks *b = s->b;
	uint64		mask = (UINT64CONST(1) << s->bits) - 1;

	for (int c = 0; c <= b->max_distance; c++)
	{
		int			p = (int) ((hash >> block_shift(b, c)) & mask);
		int			f = (c << s->bits) + p;

		write_record(s, s->files[f], hash, key);
		s->file_rows[f]++;
	}
}

/* move the rows in memory to files, split for every group */
static void
spill(PairSearch *s, Size budget)
{
	const SimhashBlocks *b = s->b;
	int			ngroups = b->max_distance + 1;
	int			available = 64;
	int			nfiles;
	MemoryContext old = MemoryContextSwitchTo(s->cxt);

	for (int c = 0; c < ngroups; c++)
		available = Min(available, b->width[c]);
	/* the planner's row count if known, else guess generously */
	s->bits = split_bits(s->est_rows > 0 ? Max(s->est_rows, (double) s->n) : 4.0 * s->n,
						 budget, available);
	nfiles = ngroups << s->bits;
	s->files = palloc(sizeof(BufFile *) * nfiles);
	s->file_rows = palloc0(sizeof(uint64) * nfiles);
	for (int f = 0; f < nfiles; f++)
		s->files[f] = BufFileCreateTemp(false);
	for (size_t i = 0; i < s->n; i++)
		spill_row(s, s->hash[i], s->key[i]);
	if (s->hash)
	{
		pfree(s->hash);
		pfree(s->key);
	}
	s->hash = s->key = NULL;
	s->n = s->cap = 0;
	s->spilled = true;
	MemoryContextSwitchTo(old);
	dedup_progress(s->progress, "more rows than fit in %s: splitting them into %d parts per table group in temporary files",
				   s->budget_name ? s->budget_name : "maintenance_work_mem", 1 << s->bits);
}

void
pair_search_add(PairSearch *s, uint64 hash, uint64 key)
{
	s->nrows++;
	if (s->spilled)
	{
		spill_row(s, hash, key);
		return;
	}
	if (s->n == s->cap)
	{
		if (s->cap >= s->maxcap)
		{
			spill(s, s->maxcap * PAIR_SEARCH_ROW_BYTES);
			spill_row(s, hash, key);
			return;
		}
		/* the estimate first (within the budget), then doubling */
		s->cap = s->cap == 0 && s->est_rows > 0 ?
			Min(Max((size_t) (s->est_rows * 1.1), 1024), s->maxcap) :
			Min(Max(s->cap * 2, 1024), s->maxcap);
		if (s->hash == NULL)
		{
			s->hash = simhash_alloc_huge(s->cxt, s->cap * sizeof(uint64));
			s->key = simhash_alloc_huge(s->cxt, s->cap * sizeof(uint64));
		}
		else
		{
			s->hash = repalloc_huge(s->hash, s->cap * sizeof(uint64));
			s->key = repalloc_huge(s->key, s->cap * sizeof(uint64));
		}
	}
	s->hash[s->n] = hash;
	s->key[s->n] = key;
	s->n++;
}

/*
 * Search n rows in memory (the arrays are consumed) with tables lo .. hi - 1,
 * in parallel workers if that is worth it and budget bytes allow it
 * (pair_search_parallel.c).  work is SIMHASH_ROW_PAIRS_WORK(n) bytes at
 * least; held is what the caller's arrays (hash, key, work) take of budget.
 */
static void
search_memory(PairSearch *s, uint64 *hash, uint64 *key, size_t n, void *work,
			  Size held, int lo, int hi, bool exact, Size budget,
			  PairSearchFn fn, void *arg)
{
	SimhashRowPairs *r;
	SimhashRowPair *pairs;
	DedupClock	clock;

	if (n < 2)
		return;
	if (n >= (size_t) PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s: too many rows to search at once", s->progress->fname)));
	if (pair_search_parallel(s->b, hash, key, n, work, held, lo, hi, exact, s->star,
							  budget, fn, arg, &s->npairs, s->progress))
		return;
	dedup_clock_start(&clock);
	r = palloc(sizeof(SimhashRowPairs));
	pairs = palloc(sizeof(SimhashRowPair) * PAIR_SEARCH_BATCH);
	simhash_row_pairs_begin(r, s->b, hash, key, n, work, lo, hi, exact);
	if (s->star)
		simhash_row_pairs_star(r);
	dedup_phase(&clock, "search: sort");
	s->npairs += pair_search_drain(r, pairs, fn, arg);
	dedup_phase(&clock, "search: search");
	pfree(pairs);
	pfree(r);
}

/* free the arrays of part_arrays() */
static void
part_arrays_free(PairSearch *s)
{
	if (s->part_hash)
	{
		pfree(s->part_hash);
		pfree(s->part_key);
		pfree(s->part_work);
	}
	s->part_hash = s->part_key = NULL;
	s->part_work = NULL;
	s->part_cap = 0;
}

/*
 * Make the part arrays hold n rows (n * PAIR_SEARCH_ROW_BYTES <= budget):
 * the arrays already held if they are large enough, else larger ones, a
 * little more than n rows (parts of random rows differ in size by a
 * little) while that stays within budget.
 */
static void
part_arrays(PairSearch *s, size_t n, Size budget)
{
	size_t		cap;

	if (n <= s->part_cap)
		return;
	part_arrays_free(s);
	cap = Min(n + n / 16, budget / PAIR_SEARCH_ROW_BYTES);
	cap = Max(cap, n);
	s->part_hash = simhash_alloc_huge(s->cxt, cap * sizeof(uint64));
	s->part_key = simhash_alloc_huge(s->cxt, cap * sizeof(uint64));
	s->part_work = simhash_alloc_huge(s->cxt, SIMHASH_ROW_PAIRS_WORK(cap));
	s->part_cap = cap;
}

static void
read_records(BufFile *file, DedupRecord *rec, size_t n)
{
	if (BufFileRead(file, rec, n * sizeof(DedupRecord)) != n * sizeof(DedupRecord))
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read a temporary file of simhash rows")));
}

/*
 * Search group c's part in file (nrows rows; bits below block c's
 * shift + used are the same in all of them), then close it.
 */
static void
search_part(PairSearch *s, BufFile *file, uint64 nrows, int c, int used,
			Size budget, PairSearchFn fn, void *arg)
{
	const SimhashBlocks *b = s->b;
	int			lo,
				hi;
	DedupRecord *buf;
	size_t		nbuf = Max(BLCKSZ / sizeof(DedupRecord), 1);

	simhash_table_group(b, c, &lo, &hi);
	if (BufFileSeek(file, 0, 0, SEEK_SET) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not seek in a temporary file of simhash rows")));

	if (nrows * PAIR_SEARCH_ROW_BYTES <= budget || nrows < 2)
	{
		/* fits: load it into the part arrays and search it */
		size_t		n = (size_t) nrows;
		size_t		done = 0;

		if (n >= 2)
		{
			part_arrays(s, n, budget);
			buf = palloc(nbuf * sizeof(DedupRecord));
			while (done < n)
			{
				size_t		m = Min(nbuf, n - done);

				read_records(file, buf, m);
				for (size_t i = 0; i < m; i++)
				{
					s->part_hash[done + i] = buf[i].hash;
					s->part_key[done + i] = buf[i].key;
				}
				done += m;
			}
			pfree(buf);
		}
		BufFileClose(file);
		search_memory(s, s->part_hash, s->part_key, n, s->part_work,
					  s->part_cap * PAIR_SEARCH_ROW_BYTES, lo, hi, c == 0,
					  budget, fn, arg);
	}
	else
	{
		/* too large: split it by the next bits of block c */
		int			available = b->width[c] - used;
		int			bits,
					shift;
		uint64		mask;
		BufFile   **sub;
		uint64	   *sub_rows;
		uint64		done = 0;

		if (available <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("%s: " UINT64_FORMAT " rows agree on the %d bits of block %d of their fingerprints, more than fit in %s",
							s->progress->fname, nrows, b->width[c], c,
							s->budget_name ? s->budget_name : "maintenance_work_mem"),
					 errdetail("Rows that agree on a whole block are searched together in memory, %d bytes per row.",
							   (int) PAIR_SEARCH_ROW_BYTES),
					 errhint("Raise %s, or leave out the fingerprints so many rows share (for example those of empty documents).",
							 s->budget_hint ? s->budget_hint : "maintenance_work_mem")));
		bits = split_bits((double) nrows, budget, available);
		shift = block_shift(b, c) + used;
		mask = (UINT64CONST(1) << bits) - 1;
		sub = palloc(sizeof(BufFile *) << bits);
		sub_rows = palloc0(sizeof(uint64) << bits);
		for (int p = 0; p < (1 << bits); p++)
			sub[p] = BufFileCreateTemp(false);
		buf = palloc(nbuf * sizeof(DedupRecord));
		while (done < nrows)
		{
			size_t		m = (size_t) Min((uint64) nbuf, nrows - done);

			CHECK_FOR_INTERRUPTS();
			read_records(file, buf, m);
			for (size_t i = 0; i < m; i++)
			{
				int			p = (int) ((buf[i].hash >> shift) & mask);

				BufFileWrite(sub[p], &buf[i], sizeof(DedupRecord));
				sub_rows[p]++;
				s->spilled_bytes += sizeof(DedupRecord);
			}
			done += m;
		}
		pfree(buf);
		BufFileClose(file);
		s->parts_total += (1 << bits) - 1;
		for (int p = 0; p < (1 << bits); p++)
			search_part(s, sub[p], sub_rows[p], c, used + bits, budget, fn, arg);
		pfree(sub);
		pfree(sub_rows);
		return;
	}
	s->parts_done++;
	dedup_progress(s->progress, "searched %d of %d parts, " UINT64_FORMAT " pairs so far",
				   s->parts_done, s->parts_total, s->npairs);
}

void
pair_search_run(PairSearch *s, Size budget, PairSearchFn fn, void *arg)
{
	const SimhashBlocks *b = s->b;

	simhash_progress_phase(SIMHASH_PHASE_SEARCHING);
	if (!s->spilled && s->n * PAIR_SEARCH_ROW_BYTES > budget)
		spill(s, budget);		/* the budget shrank since the rows came */

	if (!s->spilled)
	{
		void	   *work = NULL;

		s->parts_total = 1;
		if (s->n >= 2)
			work = simhash_alloc_huge(s->cxt, SIMHASH_ROW_PAIRS_WORK(s->n));
		search_memory(s, s->hash, s->key, s->n, work,
					  s->cap * 2 * sizeof(uint64) + SIMHASH_ROW_PAIRS_WORK(s->n),
					  0, b->ntables, true, budget, fn, arg);
		if (work)
			pfree(work);
		s->parts_done = 1;
	}
	else
	{
		int			nparts = 1 << s->bits;
		size_t		largest = 0;

		/* the part arrays at once, for the largest part that fits */
		for (int f = 0; f < (b->max_distance + 1) * nparts; f++)
			if (s->file_rows[f] * PAIR_SEARCH_ROW_BYTES <= budget)
				largest = Max(largest, (size_t) s->file_rows[f]);
		if (largest >= 2)
			part_arrays(s, largest, budget);
		s->parts_total = (b->max_distance + 1) * nparts;
		for (int c = 0; c <= b->max_distance; c++)
			for (int p = 0; p < nparts; p++)
			{
				int			f = (c << s->bits) + p;

				search_part(s, s->files[f], s->file_rows[f], c, s->bits, budget, fn, arg);
				s->files[f] = NULL;
			}
	}
	dedup_progress(s->progress, "found " UINT64_FORMAT " pairs among " UINT64_FORMAT " fingerprints",
				   s->npairs, s->nrows);
	simhash_progress_pairs((int64) s->npairs);
}

void
pair_search_free(PairSearch *s)
{
	if (s->files)
	{
		int			nfiles = (s->b->max_distance + 1) << s->bits;

		for (int f = 0; f < nfiles; f++)
			if (s->files[f])
				BufFileClose(s->files[f]);
		pfree(s->files);
		pfree(s->file_rows);
	}
	if (s->hash)
	{
		pfree(s->hash);
		pfree(s->key);
	}
	part_arrays_free(s);
	pfree(s);
}
