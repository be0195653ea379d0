/*
 * rowpairs.h
 *		All pairs of rows within k bits, for rows that carry a 64-bit key (an
 *		id or a row number) beside their fingerprint: the in-memory step of
 *		the table-scale dedup jobs (dedup_*.c).  Pure C: no PostgreSQL
 *		headers, so it can be unit-tested outside the server.
 *
 * The rows are sorted by fingerprint (radix sort), equal fingerprints are
 * collapsed into runs, and find_all (blocks.h) searches the distinct values
 * only; each matching pair of values then yields every pair of rows of the
 * two runs.  Rows with equal fingerprints are pairs at distance 0.  Many
 * exact duplicates therefore cost the search nothing; they only cost their
 * output.
 *
 * The search can be restricted to the tables of some groups (see
 * simhash_table_group()): the table-scale search splits rows by bits of a
 * group's block into parts that fit in memory and searches each part with
 * that group's tables only.  Pairs of equal fingerprints are then reported
 * by the part searched for group 0 alone ("exact").
 *
 * Star pairs.  A run of r equal fingerprints has r (r - 1) / 2 pairs, and
 * a matching pair of runs the product of their sizes: 20,000 identical
 * rows are 200 million pairs.  Jobs that only need to know which rows are
 * linked, or which row of a run comes first, ask for the star pairs
 * instead (simhash_row_pairs_star()): in each run, its least key with every
 * other row of the run; for each matching pair of runs, each run's least
 * key with the rows of greater key of the other run.  They are at most
 * r - 1 per run and |a| + |b| per matching pair of runs, and they connect
 * exactly the rows the full pairs connect.  When the keys number the rows in
 * the order a job takes them (leader linkage, simhash_groups), every pair
 * whose earlier row is the first of its run is among them.
 */
#ifndef SIMHASH_ROWPAIRS_H
#define SIMHASH_ROWPAIRS_H

#include "blocks.h"

typedef struct SimhashRowPair
{
	uint64_t	a;				/* the two rows' keys */
	uint64_t	b;
	int			distance;
} SimhashRowPair;

/* Bytes of workspace the search needs for n rows, beyond the two arrays. */
#define SIMHASH_ROW_PAIRS_WORK(n) ((size_t) (n) * 24 + 8)

typedef struct SimhashRowPairs
{
	size_t		n;				/* rows */
	const uint64_t *keys;		/* row keys, ordered by fingerprint */
	const uint64_t *uniq;		/* the m distinct fingerprints, ascending */
	const uint32_t *start;		/* run r is keys[start[r] .. start[r + 1]) */
	size_t		m;
	int			phase;			/* 0: equal pairs, 1: matches, 2: done */
	size_t		run;			/* phase 0: run, and rows i < j in it */
	bool		in_run;
	size_t		i;
	size_t		j;
	size_t		nmatch;			/* phase 1: matches[mi .. nmatch) pending */
	size_t		mi;
	bool		crossing;		/* rows of runs (ra, rb) being paired */
	size_t		a0,
				a1,				/* rows a0 .. a1 - 1 of run a to pair */
				bs,
				b0,
				b1;				/* run b's rows bs .. b1 - 1; b0 next */
	int			distance;
	bool		star;			/* star pairs only (see above) */
	int			side;			/* star crossing: 0 run b, 1 run a, 2 done */
	uint64_t	amin,
				bmin;			/* star: least keys of runs a and b */
	SimhashMatch matches[256];
	SimhashFindAll fa;
} SimhashRowPairs;

/*
 * Start the search over n rows: hashes[i] and keys[i] belong to row i.  Both
 * arrays are reordered and reused (they are the caller's, and must stay
 * allocated until the search ends); work is SIMHASH_ROW_PAIRS_WORK(n) bytes,
 * 8-byte aligned.  Tables lo .. hi - 1 are searched (0 .. ntables for all);
 * pairs of equal fingerprints are reported only if exact.  n must be below
 * 2^32.  SimhashRowPairs is about 80 kB: allocate it.
 */
extern void simhash_row_pairs_begin(SimhashRowPairs *r, const SimhashBlocks *b,
									uint64_t *hashes, uint64_t *keys, size_t n,
									void *work, int lo, int hi, bool exact);

/*
 * Another search over rows that simhash_row_pairs_begin() prepared: the
 * arrays it left are only read (r0->keys, r0->uniq, r0->start, r0->n,
 * r0->m), so several searches, for example in parallel workers, can share
 * them, each with its own tables lo .. hi - 1 (whole groups, see
 * simhash_table_group()) and its own scratch arrays fa_keys and fa_tmp of
 * m elements.  Pairs of equal fingerprints are reported only if exact.
 */
extern void simhash_row_pairs_attach(SimhashRowPairs *r, const SimhashBlocks *b,
									 const uint64_t *keys, const uint64_t *uniq,
									 const uint32_t *start, size_t n, size_t m,
									 uint64_t *fa_keys, uint64_t *fa_tmp,
									 int lo, int hi, bool exact);

/*
 * The same preparation in buckets, for parallel participants (the parallel
 * jobs' sort, shared/pair_search_parallel.c): rows split by the top `bits`
 * bits of their fingerprints, each bucket sorted alone, then the buckets' runs
 * concatenated.  The result (keys, distinct fingerprints, run starts) is
 * exactly simhash_row_pairs_begin()'s: the split and the sorts are stable.
 *
 * simhash_row_buckets_split(): copy rows (hashes[i], keys[i]) to h[], k[]
 * (n each) grouped by bucket, in input order within a bucket; off[b] ..
 * off[b + 1] - 1 are bucket b's rows (off has 2^bits + 1 entries,
 * 1 <= bits <= 16).
 */
extern void simhash_row_buckets_split(const uint64_t *hashes, const uint64_t *keys,
									  size_t n, int bits, uint64_t *h, uint64_t *k,
									  uint32_t *off);

/*
 * As simhash_row_buckets_split(), in place (an American flag sort: no
 * second copy of the rows): rows (h[i], k[i]) are moved into their buckets,
 * whose bounds go to off (2^bits + 1 entries).  Not stable: within a
 * bucket the rows are in some order.  next is scratch of 2^bits entries.
 */
extern void simhash_row_buckets_partition(uint64_t *h, uint64_t *k, size_t n,
										  int bits, uint32_t *off, uint32_t *next);

/*
 * The partition in steps, so that buckets can be used as they are done:
 * simhash_row_buckets_bounds() sets off (2^bits + 1 entries: off[b] the
 * first row of bucket b, off[2^bits] = n); with next a copy of off's first
 * 2^bits entries, simhash_row_buckets_place() then fills buckets b_lo ..
 * b_hi - 1 (rows move in from later buckets, and to them); called for
 * consecutive ranges from bucket 0 on, each range is final on return.
 */
extern void simhash_row_buckets_bounds(const uint64_t *hashes, size_t n, int bits,
									   uint32_t *off);
extern void simhash_row_buckets_place(uint64_t *h, uint64_t *k, int bits,
									  const uint32_t *off, uint32_t *next,
									  size_t b_lo, size_t b_hi);

/*
 * Sort one bucket's cnt rows (h[], k[]: the bucket's part of the split
 * arrays, which starts at row base) by fingerprint, and find its runs:
 * tmp (cnt elements), v and v2 (cnt each) are scratch; on return k[] is
 * sorted, and tmp[0 .. d - 1] are its distinct fingerprints and v[0 .. d - 1]
 * the rows (base + i) where their runs start.  Returns d.
 */
extern size_t simhash_row_bucket_sort(uint64_t *h, uint64_t *k, size_t cnt,
									  uint64_t *tmp, uint32_t *v, uint32_t *v2,
									  uint32_t base);

/*
 * Every bucket of the split rows (h[], k[], off[] as
 * simhash_row_buckets_split() left them, 2^bits buckets) sorted and their
 * runs concatenated in place: on return k[] is ordered by fingerprint,
 * tmp[0 .. m - 1] holds the m distinct fingerprints and v[0 .. m] the run
 * starts (v[m] = n), as simhash_row_pairs_begin() would give them.  tmp (n
 * elements), v (n + 1) and v2 (n) are the caller's; h[] is left scratch.
 * Returns m.
 */
extern size_t simhash_row_buckets_sort(uint64_t *h, uint64_t *k, size_t n,
									   const uint32_t *off, int bits,
									   uint64_t *tmp, uint32_t *v, uint32_t *v2);

/*
 * Buckets b_lo .. b_hi - 1 of the split rows sorted as
 * simhash_row_buckets_sort() sorts them (a parallel participant's share):
 * h[], k[], tmp, v and v2 are indexed by row as there, and only rows
 * off[b_lo] .. off[b_hi] - 1 are read or written.  On return those rows of
 * k[] are ordered by fingerprint, and tmp[off[b_lo] ..] and v[off[b_lo] ..]
 * hold the d distinct fingerprints of the share and the rows where their
 * runs start.  Returns d.  The shares' outputs, concatenated in bucket
 * order (with v[m] = n), are simhash_row_buckets_sort()'s.
 */
extern size_t simhash_row_buckets_sort_range(uint64_t *h, uint64_t *k, const uint32_t *off,
											 size_t b_lo, size_t b_hi,
											 uint64_t *tmp, uint32_t *v, uint32_t *v2);

/*
 * Write up to max (>= 1) pairs to out and return how many.  Each call does
 * a bounded amount of work; 0 does not mean the end: see
 * simhash_row_pairs_done().  The order of the pairs and of a and b within a
 * pair is unspecified.
 */
extern size_t simhash_row_pairs_next(SimhashRowPairs *r, SimhashRowPair *out, size_t max);

/*
 * Ask a search just begun or attached for the star pairs only (see above);
 * the keys must be distinct.
 */
static inline void
simhash_row_pairs_star(SimhashRowPairs *r)
{
	r->star = true;
}

static inline bool
simhash_row_pairs_done(const SimhashRowPairs *r)
{
	return r->phase == 2;
}

#endif							/* SIMHASH_ROWPAIRS_H */
