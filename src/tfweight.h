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

/* Occurrence counts per distinct feature hash: open addressing. */
typedef struct SimhashFeatureSlot
{
	uint64_t	key;			/* 0 = empty slot (hash 0 is kept aside) */
	uint64_t	count;
} SimhashFeatureSlot;

typedef struct SimhashFeatureCounts
{
	SimhashFeatureSlot *slots;
	uint32_t   *occupied;		/* slot numbers in use, in insertion order */
	size_t		mask;			/* capacity - 1 (a power of two) */
	size_t		used;			/* distinct non-zero keys */
	uint64_t	zero_count;		/* occurrences of hash 0 */
	void	   *(*alloc) (size_t);	/* zeroed memory */
	void		(*release) (void *);
} SimhashFeatureCounts;

extern void simhash_counts_init(SimhashFeatureCounts *c, size_t expected,
								void *(*alloc) (size_t), void (*release) (void *));
extern void simhash_counts_add(SimhashFeatureCounts *c, const uint64_t *hashes, size_t n);
extern void simhash_counts_free(SimhashFeatureCounts *c);
/* Empty the table for reuse, touching only the slots in use. */
extern void simhash_counts_reset(SimhashFeatureCounts *c);

/* The fingerprint of counted features: each votes with its tf weight. */
extern uint64_t simhash_counts_fingerprint(const SimhashFeatureCounts *c);

#endif							/* SIMHASH_TFWEIGHT_H */
