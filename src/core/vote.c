/*
 * vote.c
 *		The simhash bit vote: unweighted (carry-save counters) and weighted
 *		(exact fixed point).  Pure C; see vote.h for the definition.
 */
#include "vote.h"

#include <math.h>
#include <string.h>

#define LANE_MASK UINT64_C(0x0101010101010101)

/* Carry-save adder: (h, l) = a + b + c, bitwise. */
#define CSA(h, l, a, b, c) \
	do { \
		uint64_t	u_ = (a) ^ (b); \
		(h) = ((a) & (b)) | (u_ & (c)); \
		(l) = u_ ^ (c); \
	} while (0)

void
simhash_vote_init(SimhashVote *v)
{
	memset(v, 0, sizeof(*v));
}

/* add the packed 8-bit lane counters into the per-bit sums and clear them */
static void
flush_lanes(SimhashVote *v)
{
	for (int j = 0; j < 8; j++)
	{
		uint64_t	lane = v->lanes[j];

		for (int k = 0; k < 8; k++)
			v->sixteens[8 * k + j] += (lane >> (8 * k)) & 0xff;
		v->lanes[j] = 0;
	}
	v->lanes_used = 0;
}

/* Count one group of 16 hashes into the carry-save planes. */
static inline void
add16(SimhashVote *v, const uint64_t *d)
{
	uint64_t	ones = v->ones,
				twos = v->twos,
				fours = v->fours,
				eights = v->eights;
	uint64_t	twosA,
				twosB,
				foursA,
				foursB,
				eightsA,
				eightsB,
				sixteens;

	CSA(twosA, ones, ones, d[0], d[1]);
	CSA(twosB, ones, ones, d[2], d[3]);
	CSA(foursA, twos, twos, twosA, twosB);
	CSA(twosA, ones, ones, d[4], d[5]);
	CSA(twosB, ones, ones, d[6], d[7]);
	CSA(foursB, twos, twos, twosA, twosB);
	CSA(eightsA, fours, fours, foursA, foursB);
	CSA(twosA, ones, ones, d[8], d[9]);
	CSA(twosB, ones, ones, d[10], d[11]);
	CSA(foursA, twos, twos, twosA, twosB);
	CSA(twosA, ones, ones, d[12], d[13]);
	CSA(twosB, ones, ones, d[14], d[15]);
	CSA(foursB, twos, twos, twosA, twosB);
	CSA(eightsB, fours, fours, foursA, foursB);
	CSA(sixteens, eights, eights, eightsA, eightsB);

	v->ones = ones;
	v->twos = twos;
	v->fours = fours;
	v->eights = eights;

	for (int j = 0; j < 8; j++)
		v->lanes[j] += (sixteens >> j) & LANE_MASK;
	if (++v->lanes_used == 255)
		flush_lanes(v);
}

void
simhash_vote_add(SimhashVote *v, const uint64_t *hashes, size_t n)
{
	v->n += n;

	/* top up a partial group first */
	if (v->npending > 0)
	{
		while (n > 0 && v->npending < 16)
		{
			v->pending[v->npending++] = *hashes++;
			n--;
		}
		if (v->npending < 16)
			return;
		add16(v, v->pending);
		v->npending = 0;
	}
	for (; n >= 16; n -= 16, hashes += 16)
		add16(v, hashes);
	memcpy(v->pending, hashes, n * sizeof(uint64_t));
	v->npending = (unsigned) n;
}

/*
 * Per-bit count of features having that bit set.  Works on a copy: the
 * pending partial group is padded with zero hashes (which set no bit) and
 * counted like a full one, then the byte lanes are flushed.
 */
void
simhash_vote_counts(const SimhashVote *v, uint64_t counts[64])
{
	SimhashVote c = *v;

	if (c.npending > 0)
	{
		memset(c.pending + c.npending, 0, (16 - c.npending) * sizeof(uint64_t));
		add16(&c, c.pending);
	}
	flush_lanes(&c);
	for (int i = 0; i < 64; i++)
		counts[i] = 16 * c.sixteens[i]
			+ 8 * ((c.eights >> i) & 1)
			+ 4 * ((c.fours >> i) & 1)
			+ 2 * ((c.twos >> i) & 1)
			+ ((c.ones >> i) & 1);
}

uint64_t
simhash_vote_result(const SimhashVote *v)
{
	uint64_t	counts[64];
	uint64_t	result = 0;

	simhash_vote_counts(v, counts);
	for (int i = 0; i < 64; i++)
		result |= (uint64_t) (2 * counts[i] > v->n) << i;
	return result;
}

/* ---- weighted vote ---- */

void
simhash_wvote_init(SimhashWeightedVote *v)
{
	memset(v, 0, sizeof(*v));
}

bool
simhash_weight_valid(double w)
{
	/* also false for NaN */
	return w >= 0.0 && w <= SIMHASH_MAX_WEIGHT;
}

/* Quantise a valid weight to an integer number of 2^-32 units (< 2^62). */
uint64_t
simhash_weight_quantise(double w)
{
	/* the product is exact (power-of-two scaling); rint rounds half to even */
	return (uint64_t) rint(ldexp(w, 32));
}

#define LOW32 UINT64_C(0xffffffff)

/* carry the low 32-bit sums into the high words */
static void
wvote_normalise(SimhashWeightedVote *v)
{
	for (int i = 0; i < 64; i++)
	{
		v->hi[i] += v->lo[i] >> 32;
		v->lo[i] &= LOW32;
	}
	v->total_hi += v->total_lo >> 32;
	v->total_lo &= LOW32;
	v->since_normalise = 0;
}

void
simhash_wvote_add(SimhashWeightedVote *v, uint64_t hash, uint64_t q)
{
	uint64_t	qlo = q & LOW32;
	uint64_t	qhi = q >> 32;

	/* lo[] stays below 2^64: < 2^32 after normalising, + 2^31 adds < 2^32 */
	if (v->since_normalise >= (UINT64_C(1) << 31))
		wvote_normalise(v);
	for (int i = 0; i < 64; i++)
	{
		uint64_t	mask = (uint64_t) 0 - ((hash >> i) & 1);

		v->lo[i] += qlo & mask;
		v->hi[i] += qhi & mask;
	}
	v->total_lo += qlo;
	v->total_hi += qhi;
	v->since_normalise++;
	v->n++;
}

void
simhash_wvote_merge(SimhashWeightedVote *dst, const SimhashWeightedVote *src)
{
	SimhashWeightedVote s = *src;

	wvote_normalise(dst);
	wvote_normalise(&s);
	for (int i = 0; i < 64; i++)
	{
		dst->lo[i] += s.lo[i];
		dst->hi[i] += s.hi[i];
	}
	dst->total_lo += s.total_lo;
	dst->total_hi += s.total_hi;
	dst->since_normalise = 2;	/* each lo[] is now below 2^33 */
	dst->n += s.n;
}

/*
 * The high halves can only overflow after ~2^33 features of maximum weight;
 * callers check this and raise an error rather than return wrong bits.
 */
bool
simhash_wvote_overflowed(const SimhashWeightedVote *v)
{
	return v->total_hi + (v->total_lo >> 32) + 1 > (UINT64_C(1) << 62);
}

uint64_t
simhash_wvote_result(const SimhashWeightedVote *v)
{
	SimhashWeightedVote s = *v;
	uint64_t	result = 0;

	wvote_normalise(&s);
	for (int i = 0; i < 64; i++)
	{
		/* compare 2 * P[i] with W, as (hi, lo) pairs with lo < 2^32 */
		uint64_t	lo2 = s.lo[i] << 1;
		uint64_t	hi2 = (s.hi[i] << 1) + (lo2 >> 32);
		int			bit;

		lo2 &= LOW32;
		bit = hi2 > s.total_hi || (hi2 == s.total_hi && lo2 > s.total_lo);
		result |= (uint64_t) bit << i;
	}
	return result;
}
