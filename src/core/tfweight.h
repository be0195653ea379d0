/*
 * tfweight.h
 *		Term-frequency weighting of text features, as simhash(text) uses it:
 *		each distinct feature (by its 64-bit hash) votes once, with weight
 *		bitlen(n^2) = 1 + floor(2 * log2(n)) for n occurrences (1, 3, 4, 5,
 *		5, 6, 6, 7, ... for n = 1, 2, 3, ...): sublinear, so frequent words
 *		do not dominate, and integer, so exact on every platform.  Pure C.
 */
#ifndef SIMHASH_TFWEIGHT_H
#define SIMHASH_TFWEIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* the weight of a feature seen n >= 1 times (at most 64) */
static inline uint32_t
simhash_tf_weight(uint64_t n)
{
	uint64_t	sq = n * n;		/* n < 2^32: a text has fewer tokens */

	return (uint32_t) (64 - __builtin_clzll(sq));
}

/*
 * simhash_v2: a feature made only of letters of scripts written
 * without spaces (one character per token: Han, Kana, Hangul, Thai, ...)
 * votes with min(n, 8), linear in its count up to 8; every other feature
 * keeps bitlen(n^2).  The cap of 8 was chosen on two Chinese corpora
 * (bench/cjk.sh, doc/quality-cjk.md): it raises the recall of lightly
 * edited copies without more unrelated matches, where higher caps or none
 * let frequent characters bring unrelated texts closer.  Fixed forever for
 * simhash_v2.
 */
#define SIMHASH_CJK_WEIGHT_CAP 8

static inline uint32_t
simhash_tf_weight_v2(uint64_t n, bool cjk)
{
	if (cjk)
		return (uint32_t) (n < SIMHASH_CJK_WEIGHT_CAP ? n : SIMHASH_CJK_WEIGHT_CAP);
	return simhash_tf_weight(n);
}

/* in a slot's count: the feature is "CJK" (simhash_counts_add_cjk) */
#define SIMHASH_COUNT_CJK (UINT64_C(1) << 63)

/* Occurrence counts per distinct feature hash: open addressing. */
typedef struct SimhashFeatureSlot
{
	uint64_t	key;			/* 0 = empty slot (hash 0 is kept aside) */
	uint64_t	count;			/* | SIMHASH_COUNT_CJK for a "CJK" feature */
} SimhashFeatureSlot;

typedef struct SimhashFeatureCounts
{
	SimhashFeatureSlot *slots;
	uint32_t   *occupied;		/* slot numbers in use, in insertion order */
	size_t		mask;			/* capacity - 1 (a power of two) */
	size_t		used;			/* distinct non-zero keys */
	uint64_t	zero_count;		/* occurrences of hash 0 (| SIMHASH_COUNT_CJK) */
	void	   *(*alloc) (size_t);	/* zeroed memory */
	void		(*release) (void *);
} SimhashFeatureCounts;

extern void simhash_counts_init(SimhashFeatureCounts *c, size_t expected,
								void *(*alloc) (size_t), void (*release) (void *));
extern void simhash_counts_add(SimhashFeatureCounts *c, const uint64_t *hashes, size_t n);
/* The same, marking the features with cjk[k] set as "CJK" ones. */
extern void simhash_counts_add_cjk(SimhashFeatureCounts *c, const uint64_t *hashes,
								   const bool *cjk, size_t n);
extern void simhash_counts_free(SimhashFeatureCounts *c);
/* Empty the table for reuse, touching only the slots in use. */
extern void simhash_counts_reset(SimhashFeatureCounts *c);

/* The fingerprint of counted features: each votes with its tf weight. */
extern uint64_t simhash_counts_fingerprint(const SimhashFeatureCounts *c);
/* simhash_v2's: "CJK" features vote with simhash_tf_weight_v2. */
extern uint64_t simhash_counts_fingerprint_v2(const SimhashFeatureCounts *c);
/*
 * The same as either, by the portable path (what machines without SSE2
 * run), for the tests that compare the two.
 */
extern uint64_t simhash_counts_fingerprint_portable(const SimhashFeatureCounts *c,
													bool v2);
/* Distinct features counted (hash 0 included). */
static inline size_t
simhash_counts_distinct(const SimhashFeatureCounts *c)
{
	return c->used + (c->zero_count != 0);
}

#endif							/* SIMHASH_TFWEIGHT_H */
