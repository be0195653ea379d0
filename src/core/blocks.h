/*
 * blocks.h
 *		Permuted-table search for near-duplicate fingerprints (Manku, Jain
 *		and Das Sarma 2007; the scheme of simhash-py's find_all).  Pure C: no
 *		PostgreSQL headers, so it can be unit-tested and benchmarked outside
 *		the server, and shared by simhash_find_all() and the index.
 *		One interface, implemented by: blocks.c (geometry and the check of
 *		blocks / max_distance), permute.c (table permutations), radix_sort.c
 *		(the sort), pair_scan.c (the pair scan), find_all.c (the driver).
 *
 * The 64 bits are split into m blocks ("nblocks").  If two fingerprints
 * differ in at most k bits ("max_distance"), at most k blocks differ, so at
 * least m - k blocks are identical.  For every choice of m - k blocks (a
 * "table"; there are C(m, k) of them) each fingerprint is permuted so that
 * the chosen blocks come first; every pair within k bits then shares the
 * permuted prefix (the chosen blocks) in at least one table.  Sorting each
 * table's permuted fingerprints puts such pairs in runs of equal prefixes,
 * where all pairs are compared with popcount.
 *
 * Geometry (fixed; an index stores data laid out by it):
 *	- block i (0 = the most significant) is 64/m bits wide, plus one bit for
 *	  the first 64 % m blocks; block 0 starts at bit 63;
 *	- table t (0 .. C(m, k) - 1) chooses the t-th (m - k)-subset of the
 *	  blocks in lexicographic order (table 0 = blocks 0 .. m-k-1);
 *	- its permutation puts the chosen blocks first (in block order), then the
 *	  other blocks (in block order).  Its "prefix" is the chosen blocks: the
 *	  top simhash_prefix_bits() bits of the permuted value.
 * The permutation moves bits without changing them, so the Hamming distance
 * of two permuted values equals that of the originals.
 *
 * A pair is found by every table whose chosen blocks are all equal in the
 * two fingerprints.  To report each pair once, it belongs to the lowest such
 * table: the one choosing the m - k lowest-numbered equal blocks.  When
 * table t is scanned, a pair is therefore skipped if some block that t does
 * not choose, numbered below t's last chosen block, is equal in both: those
 * blocks sit right after the prefix in the permuted value.
 *
 * m = k + 1 .. 64 and k = 0 .. 63 are valid while C(m, k) stays at most
 * SIMHASH_MAX_TABLES (SIMHASH_MAX_INDEX_TABLES for an index, which keeps a
 * sorted copy per table).  k = 0 gives one table whose prefix is the whole
 * value (exact duplicates).
 */
#ifndef SIMHASH_BLOCKS_H
#define SIMHASH_BLOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The limits of a configuration, here only: every check of (blocks,
 * max_distance) goes through simhash_blocks_check().
 */
#define SIMHASH_MAX_BLOCKS 64		/* m: 1 .. 64 */
#define SIMHASH_MAX_DISTANCE 63		/* k: 0 .. 63 */
/* Most tables a search may have (C(m, k)); each is a full pass. */
#define SIMHASH_MAX_TABLES 10000
/* Most tables an index may have: it keeps a sorted copy of each. */
#define SIMHASH_MAX_INDEX_TABLES 1000

typedef enum SimhashBlocksStatus
{
	SIMHASH_BLOCKS_OK = 0,
	SIMHASH_BLOCKS_BAD_NBLOCKS,		/* nblocks not in 1 .. 64 */
	SIMHASH_BLOCKS_BAD_DISTANCE,	/* max_distance not in 0 .. 63 */
	SIMHASH_BLOCKS_DISTANCE_TOO_LARGE,	/* max_distance >= nblocks */
	SIMHASH_BLOCKS_TOO_MANY_TABLES	/* C(nblocks, max_distance) too large */
} SimhashBlocksStatus;

typedef struct SimhashBlocks
{
	int			nblocks;		/* m, 1 .. 64 */
	int			max_distance;	/* k, 0 .. m - 1 */
	int			ntables;		/* C(m, k), 1 .. SIMHASH_MAX_TABLES */
	int			chosen;			/* m - k: blocks in each table's prefix */
	uint8_t		width[64];		/* block i's width in bits */
	uint8_t		offset[64];		/* bits above block i (0 for block 0) */
	uint64_t	mask[64];		/* block i's bits in a fingerprint */
} SimhashBlocks;

/*
 * The one check of a configuration: SIMHASH_BLOCKS_OK if nblocks and
 * max_distance are in range and C(nblocks, max_distance) is at most
 * max_tables.  The server reports the status with simhash_check_blocks()
 * (src/shared/checks.c), the one set of messages.
 */
extern SimhashBlocksStatus simhash_blocks_check(int nblocks, int max_distance,
												int max_tables);

/* simhash_blocks_check() with the search's limit, SIMHASH_MAX_TABLES. */
extern SimhashBlocksStatus simhash_blocks_validate(int nblocks, int max_distance);

/* An English description of a status, e.g. for a command-line tool. */
extern const char *simhash_blocks_status_message(SimhashBlocksStatus status);

/*
 * C(n, r), or UINT64_MAX if it does not fit in 64 bits.  0 for r < 0 or
 * r > n.
 */
extern uint64_t simhash_binomial(int n, int r);

/* Fill *b; false (and *b untouched) if the configuration is invalid. */
extern bool simhash_blocks_init(SimhashBlocks *b, int nblocks, int max_distance);

/* w bits starting `offset` bits below the top (bit 63) */
static inline uint64_t
simhash_bits_from_top(int offset, int w)
{
	if (w <= 0)
		return 0;
	if (w >= 64)
		return ~UINT64_C(0);
	return ((UINT64_C(1) << w) - 1) << (64 - offset - w);
}

/* Bit set (bit i = block i) of the blocks table `table` chooses. */
extern uint64_t simhash_table_blocks(const SimhashBlocks *b, int table);

/* Width in bits of table `table`'s prefix (its chosen blocks). */
extern int	simhash_prefix_bits(const SimhashBlocks *b, int table);

/*
 * The lowest-numbered table in which h1 and h2 share the prefix, i.e. the
 * table that reports the pair; -1 if none does (more than k blocks differ).
 * Pairs with more than k differing bits may still share a table's prefix.
 */
extern int	simhash_first_table(const SimhashBlocks *b, uint64_t h1, uint64_t h2);

/*
 * One table's permutation, precomputed: maximal runs of blocks that move
 * together ("segments"), each a rotation and a mask, so that permuting is
 * nsegments rotate/and/or steps without branches.  About 1.6 kB; computed
 * in O(m).  Hot loops keep one per table.
 */
typedef struct SimhashTable
{
	int			table;
	int			max_distance;	/* k, copied from the SimhashBlocks */
	int			prefix_bits;	/* width of the chosen blocks */
	uint64_t	prefix_mask;	/* the top prefix_bits bits */
	int			nsegments;
	uint8_t		rotate[64];		/* left rotation of segment s */
	uint64_t	source_mask[64];	/* segment s's bits in a fingerprint */
	uint64_t	permuted_mask[64];	/* its bits in the permuted value */
	int			nskip;			/* unchosen blocks below the last chosen one */
	uint64_t	skip_mask[64];	/* their bits in the permuted value */
} SimhashTable;

extern void simhash_table_init(const SimhashBlocks *b, int table, SimhashTable *t);

static inline uint64_t
simhash_rotl64(uint64_t x, unsigned r)
{
	return (x << (r & 63)) | (x >> ((64 - r) & 63));
}

static inline uint64_t
simhash_table_permute(const SimhashTable *t, uint64_t h)
{
	uint64_t	p = 0;

	for (int s = 0; s < t->nsegments; s++)
		p |= simhash_rotl64(h, t->rotate[s]) & t->permuted_mask[s];
	return p;
}

static inline uint64_t
simhash_table_unpermute(const SimhashTable *t, uint64_t p)
{
	uint64_t	h = 0;

	for (int s = 0; s < t->nsegments; s++)
		h |= simhash_rotl64(p, 64 - t->rotate[s]) & t->source_mask[s];
	return h;
}

/*
 * Convenience forms that compute the table on each call (O(m)): for tests
 * and one-off use, not for loops.
 */
extern uint64_t simhash_permute(const SimhashBlocks *b, int table, uint64_t h);
extern uint64_t simhash_unpermute(const SimhashBlocks *b, int table, uint64_t p);

/*
 * Stable radix sort of n (key, val) pairs by the top keybits (1 .. 64)
 * bits of key; the order of keys equal in those bits is their input order.
 * vals may be NULL (keys only; tmpvals is then ignored).  tmpkeys/tmpvals
 * are scratch arrays of n elements.  The result is in keys/vals.  n must be
 * below 2^32.
 *
 * LSD passes over digits of up to SIMHASH_RADIX_BITS bits (narrower for
 * small n), all histograms counted in one read, passes over a digit that
 * every key shares skipped.  When keybits needs more passes than the top
 * log2(n) + 4 bits, only those are sorted by passes (equal keys there are
 * then rare) and each run of equal ones is finished by the remaining bits,
 * recursively.  At most 64 keys: insertion sort.  Uses about 160 kB of stack.
 * 13-bit digits: a pass costs a little more per key than with 8 or 11
 * bits, but two passes cover a 25-26-bit prefix (blocks 5, distance 3).
 */
#define SIMHASH_RADIX_BITS 13

/*
 * Called by the radix sorts (simhash_radix_sort, simhash_table_sort and
 * simhash_table_sort_range) after every SIMHASH_SORT_CHECK_KEYS keys they
 * read or move, about: the server checks for interrupts there (an error
 * thrown from it leaves the arrays in an unspecified order).  NULL: none.
 */
extern void (*simhash_sort_check_hook) (void);
#define SIMHASH_SORT_CHECK_KEYS (1 << 20)
extern void simhash_radix_sort(uint64_t *keys, uint32_t *vals, size_t n,
							   uint64_t *tmpkeys, uint32_t *tmpvals, int keybits);

/*
 * One table's sorted keys: keys[] = the n hashes permuted by t, stably
 * sorted by the whole permuted value (so also by t's prefix; the index's
 * compressed leaves need the full order, index/am.h), and (if vals is not
 * NULL) vals[] = their positions in hashes[].  With top-bits-first passes
 * and the finish of equal runs (radix_sort_range()), this costs about what
 * a sort by a short prefix does.  The permutation is fused with the sort's first read.
 * tmpkeys/tmpvals are scratch arrays of n elements; n must be below 2^32.
 */
extern void simhash_table_sort(const SimhashTable *t, const uint64_t *hashes,
							   size_t n, uint64_t *keys, uint32_t *vals,
							   uint64_t *tmpkeys, uint32_t *tmpvals);

/*
 * As simhash_table_sort, by bits lo .. hi-1 of the permuted keys only (bit
 * 0 = least significant): for hashes known to agree on the bits above hi
 * (find_all's buckets).  0 <= lo <= hi <= 64.
 */
extern void simhash_table_sort_range(const SimhashTable *t, const uint64_t *hashes,
									 size_t n, uint64_t *keys, uint32_t *vals,
									 uint64_t *tmpkeys, uint32_t *tmpvals,
									 int lo, int hi);

/*
 * Pair scan of one table: keys are the table's permuted fingerprints,
 * sorted by (at least) their prefix.  Reports each pair (i < j) in a run of
 * equal prefixes whose distance is at most k, unless a lower table reports
 * it too (set nskip = 0 after init to report every pair the table finds).
 * Resumable: each call does a bounded amount of work, so that a caller can
 * check for interrupts between calls.
 */
typedef struct SimhashPair
{
	size_t		i;				/* positions in the sorted keys, i < j */
	size_t		j;
	int			distance;
} SimhashPair;

typedef struct SimhashPairScan
{
	const uint64_t *keys;
	size_t		n;
	uint64_t	prefix_mask;
	int			max_distance;
	int			nskip;
	uint64_t	skip_mask[64];
	size_t		i;				/* cursor: next pair to consider is (i, j) */
	size_t		j;
} SimhashPairScan;

/* Key comparisons per simhash_pair_scan_next() call, at most (about). */
#define SIMHASH_SCAN_WORK (1 << 18)

extern void simhash_pair_scan_init(SimhashPairScan *s, const SimhashTable *t,
								   const uint64_t *keys, size_t n);

/*
 * Write up to max (>= 1) pairs to out and return how many; 0 does not mean
 * the end (the work bound may be reached first): see
 * simhash_pair_scan_done().
 */
extern size_t simhash_pair_scan_next(SimhashPairScan *s, SimhashPair *out, size_t max);

static inline bool
simhash_pair_scan_done(const SimhashPairScan *s)
{
	return s->i >= s->n;
}

/*
 * find_all: every pair of positions i < j of hashes[] whose values are
 * within k bits, each reported once, as values a <= b with their distance.
 * Equal values at two positions are a pair (distance 0).  Resumable: each
 * call does a bounded amount of work (at most one pass over the arrays),
 * so that a caller can check for interrupts between calls.  keys and tmp
 * are caller-provided arrays of n elements (n below 2^32); hashes is only
 * read.  SimhashFindAll is about 70 kB: allocate it rather than put it on
 * the stack.  The caller owns all memory.
 *
 * Tables are taken in groups that share their first chosen block c (they
 * are consecutive in table order).  For each group, hashes[] is partitioned
 * into keys[] by the top bits of block c: one pass over memory.  Then each
 * bucket, small enough to stay in cache, is permuted, sorted and scanned
 * for every table of the group in turn, in the start of tmp[].  The large
 * arrays are thus swept about twice per group instead of several times per
 * table.  The order of the matches is unspecified.
 */
typedef struct SimhashMatch
{
	uint64_t	a;
	uint64_t	b;
	int			distance;
} SimhashMatch;

#define SIMHASH_FIND_ALL_CHUNK 32	/* table permutations kept at once */
#define SIMHASH_FIND_ALL_DIGIT 11	/* at most 2^11 buckets per group */

typedef struct SimhashFindAll
{
	const SimhashBlocks *blocks;
	const uint64_t *hashes;
	size_t		n;
	uint64_t   *keys;			/* the group's partition of hashes[] */
	uint64_t   *tmp;			/* sort scratch */
	int			chunk;			/* first table of the current chunk;
								 * end_table when finished */
	int			end_table;		/* tables end_table .. ntables - 1 are
								 * not searched */
	int			nchunk;			/* tables in the chunk */
	int			group_end;		/* tables of the group end here */
	bool		partitioned;	/* keys[] hold the group's partition */
	int			digit;			/* partition bits (0: one bucket) */
	size_t		nbuckets;
	size_t		bucket;			/* current bucket */
	int			q;				/* current table, within the chunk */
	bool		scanning;		/* table q's sorted keys are ready */
	uint64_t   *sorted;			/* where: tmp, or the bucket itself */
	size_t		bucket_start[(1 << SIMHASH_FIND_ALL_DIGIT) + 1];
	SimhashTable tabs[SIMHASH_FIND_ALL_CHUNK];
	SimhashPairScan scan;
	SimhashPair pairs[256];
} SimhashFindAll;

extern void simhash_find_all_begin(SimhashFindAll *f, const SimhashBlocks *b,
								   const uint64_t *hashes, size_t n,
								   uint64_t *keys, uint64_t *tmp);

/*
 * The tables whose first chosen block is block c (0 .. k): a "group",
 * tables *lo .. *hi - 1, consecutive in table order.  Every pair that a
 * group's table reports agrees on all of block c; so hashes may be split
 * by any bits of block c and each part searched with the group's tables
 * alone (simhash_find_all_begin_tables) without losing or repeating a pair:
 * the scheme of the table-scale search, which works on parts that fit in
 * memory.
 */
extern void simhash_table_group(const SimhashBlocks *b, int c, int *lo, int *hi);

/* As simhash_find_all_begin, searching only tables lo .. hi - 1 (a union of
 * whole groups). */
extern void simhash_find_all_begin_tables(SimhashFindAll *f, const SimhashBlocks *b,
										  const uint64_t *hashes, size_t n,
										  uint64_t *keys, uint64_t *tmp,
										  int lo, int hi);

/*
 * Write up to max (>= 1) matches to out and return how many; 0 does not
 * mean the end: see simhash_find_all_done().
 */
extern size_t simhash_find_all_next(SimhashFindAll *f, SimhashMatch *out, size_t max);

static inline bool
simhash_find_all_done(const SimhashFindAll *f)
{
	return f->chunk >= f->end_table;
}

#endif							/* SIMHASH_BLOCKS_H */
