/*
 * vote.h
 *		The simhash bit vote (Charikar): many 64-bit feature hashes in, one
 *		64-bit fingerprint out.  Pure C: no PostgreSQL headers, so it can be
 *		unit-tested, benchmarked and fuzzed outside the server.
 *
 * Definition (fixed forever; stored fingerprints depend on it): for each bit
 * i (bit 0 = least significant) every feature adds +w to V[i] if bit i of
 * its hash is set and -w otherwise; bit i of the result is 1 iff V[i] > 0.
 * Equivalently, with P[i] the total weight of features having bit i set and
 * W the total weight: bit i is 1 iff 2 * P[i] > W.  No features: 0.
 */
#ifndef SIMHASH_VOTE_H
#define SIMHASH_VOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Unweighted vote (w = 1 for every feature).  Harley-Seal carry-save adders
 * count 16 hashes at a time into bit planes; every 16th-count word is added
 * into byte-lane counters, which are flushed into 64-bit counters before
 * they can overflow.  No per-bit branches.
 */
typedef struct SimhashVote
{
	uint64_t	ones,
				twos,
				fours,
				eights;			/* carry-save bit planes */
	uint64_t	lanes[8];		/* lanes[j] byte k counts sixteens of bit 8k+j */
	unsigned	lanes_used;		/* sixteens groups in lanes[] (< 255) */
	unsigned	npending;		/* hashes waiting in pending[] */
	uint64_t	pending[16];
	uint64_t	sixteens[64];	/* per-bit count of 16-groups flushed */
	uint64_t	n;				/* features voted */
} SimhashVote;

extern void simhash_vote_init(SimhashVote *v);
extern void simhash_vote_add(SimhashVote *v, const uint64_t *hashes, size_t n);
extern void simhash_vote_counts(const SimhashVote *v, uint64_t counts[64]);
extern uint64_t simhash_vote_result(const SimhashVote *v);

/*
 * Weighted vote, exact and independent of the order of features (so
 * parallel aggregates give the same bits).  A weight w (finite, 0 <= w <=
 * SIMHASH_MAX_WEIGHT) is quantised to q = rint(w * 2^32), an integer below
 * 2^62; sums are kept as two 64-bit halves per bit and normalised before
 * they can overflow.  Weight 1 gives the same bits as the unweighted vote.
 */
#define SIMHASH_MAX_WEIGHT 1073741824.0 /* 2^30 */

typedef struct SimhashWeightedVote
{
	uint64_t	lo[64];			/* per bit: low 32-bit halves of q, summed */
	uint64_t	hi[64];			/* per bit: high halves, summed */
	uint64_t	total_lo;		/* all features: low halves */
	uint64_t	total_hi;		/* all features: high halves */
	uint64_t	since_normalise;	/* features added since lo[] was normalised */
	uint64_t	n;				/* features voted (weight 0 included) */
} SimhashWeightedVote;

extern void simhash_wvote_init(SimhashWeightedVote *v);
extern bool simhash_weight_valid(double w);
extern uint64_t simhash_weight_quantise(double w);
extern void simhash_wvote_add(SimhashWeightedVote *v, uint64_t hash, uint64_t q);
extern void simhash_wvote_merge(SimhashWeightedVote *dst, const SimhashWeightedVote *src);
extern bool simhash_wvote_overflowed(const SimhashWeightedVote *v);
extern uint64_t simhash_wvote_result(const SimhashWeightedVote *v);

#endif							/* SIMHASH_VOTE_H */
