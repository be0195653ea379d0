/*
 * tfweight.c
 *		Counting distinct features and the tf-weighted vote of simhash(text)
 *		(see tfweight.h).  Pure C: no PostgreSQL headers.
 */
#include "tfweight.h"
#include "vote.h"

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

void
simhash_counts_init(SimhashFeatureCounts *c, size_t expected,
					void *(*alloc) (size_t), void (*release) (void *))
{
	size_t		cap = 64;

	while (cap < 2 * expected)
		cap *= 2;
	c->alloc = alloc;
	c->release = release;
	c->slots = alloc(cap * sizeof(SimhashFeatureSlot));
	c->occupied = alloc((cap / 2 + 1) * sizeof(uint32_t));
	c->mask = cap - 1;
	c->used = 0;
	c->zero_count = 0;
}

void
simhash_counts_free(SimhashFeatureCounts *c)
{
	c->release(c->slots);
	c->release(c->occupied);
	c->slots = NULL;
	c->occupied = NULL;
}

void
simhash_counts_reset(SimhashFeatureCounts *c)
{
	for (size_t i = 0; i < c->used; i++)
	{
		c->slots[c->occupied[i]].key = 0;
		c->slots[c->occupied[i]].count = 0;
	}
	c->used = 0;
	c->zero_count = 0;
}

/* the hash is already uniform: its bits index the table */
static inline size_t
home(const SimhashFeatureCounts *c, uint64_t h)
{
	return (size_t) (h >> 7) & c->mask;
}

/* double the counting table, reinserting every slot */
static void
grow(SimhashFeatureCounts *c)
{
	size_t		oldcap = c->mask + 1;
	SimhashFeatureSlot *old = c->slots;

	c->slots = c->alloc(2 * oldcap * sizeof(SimhashFeatureSlot));
	c->mask = 2 * oldcap - 1;
	c->release(c->occupied);
	c->occupied = c->alloc((oldcap + 1) * sizeof(uint32_t));
	c->used = 0;
	for (size_t i = 0; i < oldcap; i++)
	{
		size_t		slot;

		if (old[i].key == 0)
			continue;
		slot = home(c, old[i].key);
		while (c->slots[slot].key != 0)
			slot = (slot + 1) & c->mask;
		c->slots[slot] = old[i];
		c->occupied[c->used++] = (uint32_t) slot;
	}
	c->release(old);
}

/*
 * Count the hashes; with cjk, mark those with cjk[k] set.  A probe stops at
 * the hash's slot or at an empty one, and both are then updated alike
 * (key, count, the list of slots in use): whether the hash was new, which
 * no branch could predict, only decides whether the list grows.
 */
static inline __attribute__((always_inline)) void
counts_add(SimhashFeatureCounts *c, const uint64_t *hashes, const bool *cjk,
		   size_t n)
{
	/* in locals: stores to the slots would otherwise force their reloads */
	SimhashFeatureSlot *slots = c->slots;
	uint32_t   *occupied = c->occupied;
	size_t		mask = c->mask;
	size_t		used = c->used;

	for (size_t k = 0; k < n; k++)
	{
		uint64_t	h = hashes[k];
		uint64_t	flag = (cjk && cjk[k]) ? SIMHASH_COUNT_CJK : 0;
		size_t		i;
		uint64_t	key;

		if (h == 0)
		{
			c->zero_count = (c->zero_count + 1) | flag;
			continue;
		}
		i = home(c, h);
		for (;;)
		{
			key = slots[i].key;
			/* key == h or key == 0, as one branch (mostly taken) */
			if (((key ^ h) & (0 - (uint64_t) (key != 0))) == 0)
				break;
			i = (i + 1) & mask;
		}
		slots[i].key = h;
		slots[i].count = (slots[i].count + 1) | flag;
		occupied[used] = (uint32_t) i;	/* kept only if the hash was new */
		used += (key == 0);
		if (used * 2 > mask + 1)
		{
			c->used = used;
			grow(c);
			slots = c->slots;
			occupied = c->occupied;
			mask = c->mask;
		}
	}
	c->used = used;
}

void
simhash_counts_add(SimhashFeatureCounts *c, const uint64_t *hashes, size_t n)
{
	counts_add(c, hashes, NULL, n);
}

void
simhash_counts_add_cjk(SimhashFeatureCounts *c, const uint64_t *hashes,
					   const bool *cjk, size_t n)
{
	counts_add(c, hashes, cjk, n);
}

/* the weight of the feature with this count (v2: "CJK" weighting) */
static inline uint32_t
count_weight(uint64_t count, bool v2)
{
	if (v2)
		return simhash_tf_weight_v2(count & ~SIMHASH_COUNT_CJK,
									(count & SIMHASH_COUNT_CJK) != 0);
	return simhash_tf_weight(count);
}

/*
 * The bits of the fingerprint: bit i is set when twice the weight of the
 * features having bit i set exceeds the total weight.
 */
static uint64_t
majority_bits(const uint64_t sums[64], uint64_t total)
{
	uint64_t	result = 0;

	for (int i = 0; i < 64; i++)
		result |= (uint64_t) (2 * sums[i] > total) << i;
	return result;
}

/*
 * Portable path: each distinct feature votes with its integer weight w <= 64:
 * the hash is added, by the carry-save vote of vote.c, to bit-plane j for
 * each bit j set in w, and plane counts are recombined as sum(2^j *
 * count_j).  All sums are exact integers, so this equals the weighted vote.
 */
#define PLANES 7
#define PLANE_BATCH 128

/* per-bit weight sums (and the total weight) of the counted features, by bit planes */
static void
weighted_sums_planes(const SimhashFeatureCounts *c, bool v2, uint64_t sums[64],
					 uint64_t *total)
{
	SimhashVote planes[PLANES];
	uint64_t	batch[PLANES][PLANE_BATCH];
	size_t		nbatch[PLANES] = {0};
	uint64_t	counts[64];

	for (int j = 0; j < PLANES; j++)
		simhash_vote_init(&planes[j]);
	memset(sums, 0, 64 * sizeof(uint64_t));
	*total = c->zero_count ? count_weight(c->zero_count, v2) : 0;
	for (size_t i = 0; i < c->used; i++)
	{
		uint64_t	key = c->slots[c->occupied[i]].key;
		uint32_t	w = count_weight(c->slots[c->occupied[i]].count, v2);

		*total += w;
		for (int j = 0; w != 0; j++, w >>= 1)
		{
			if (!(w & 1))
				continue;
			batch[j][nbatch[j]++] = key;
			if (nbatch[j] == PLANE_BATCH)
			{
				simhash_vote_add(&planes[j], batch[j], PLANE_BATCH);
				nbatch[j] = 0;
			}
		}
	}
	for (int j = 0; j < PLANES; j++)
	{
		if (planes[j].n == 0 && nbatch[j] == 0)
			continue;
		simhash_vote_add(&planes[j], batch[j], nbatch[j]);
		simhash_vote_counts(&planes[j], counts);
		for (int i = 0; i < 64; i++)
			sums[i] += counts[i] << j;
	}
}

#ifdef __SSE2__
/*
 * Features summed into 16-bit lanes before the lanes are added to the 64-bit
 * sums: at most 1023 of weight <= 64 keep a lane below 2^16.
 */
#define LANE_FEATURES 1023

/* bit j of each byte, j = 0 .. 7: a byte of 2^j, repeated */
#define BYTE_BIT(j) ((long long) (UINT64_C(0x0101010101010101) << (j)))

/*
 * SSE2 path.  Each feature's hash, in both halves of a register, is tested
 * against four masks, the low half of mask r testing bit 2r of every byte
 * and the high half bit 2r + 1; each byte where the bit is set adds the
 * feature's weight to the same byte of an 8-bit accumulator.  Before a
 * byte could pass 255 (when the weights added since the last widening
 * would sum past it), the four 8-bit accumulators are widened into eight
 * of 16-bit lanes, lane k of register j summing the weights of the
 * features having bit 8k + j set, and those are added to the 64-bit sums
 * after each run of LANE_FEATURES.
 * No branch depends on the hash; the accumulators are variables, not
 * arrays, so that they stay in registers.
 */
#define SUM_BYTES(acc, keys, mask, weight) \
	_mm_add_epi8((acc), _mm_and_si128((weight), \
									  _mm_cmpeq_epi8(_mm_and_si128((keys), (mask)), (mask))))

/* b (bits 2r and 2r + 1 of each byte) into the 16-bit lanes lo and hi */
#define WIDEN_BYTES(b, lo, hi) \
	do { \
		(lo) = _mm_add_epi16((lo), _mm_unpacklo_epi8((b), _mm_setzero_si128())); \
		(hi) = _mm_add_epi16((hi), _mm_unpackhi_epi8((b), _mm_setzero_si128())); \
		(b) = _mm_setzero_si128(); \
	} while (0)

static void
weighted_sums_sse2(const SimhashFeatureCounts *c, bool v2, uint64_t sums[64],
				   uint64_t *total)
{
	const SimhashFeatureSlot *slots = c->slots;
	const uint32_t *occupied = c->occupied;
	size_t		used = c->used;
	uint64_t	sum_w = c->zero_count ? count_weight(c->zero_count, v2) : 0;
	const __m128i m0 = _mm_set_epi64x(BYTE_BIT(1), BYTE_BIT(0)),
				m1 = _mm_set_epi64x(BYTE_BIT(3), BYTE_BIT(2)),
				m2 = _mm_set_epi64x(BYTE_BIT(5), BYTE_BIT(4)),
				m3 = _mm_set_epi64x(BYTE_BIT(7), BYTE_BIT(6));

	memset(sums, 0, 64 * sizeof(uint64_t));
	for (size_t from = 0; from < used; from += LANE_FEATURES)
	{
		size_t		to = used - from < LANE_FEATURES ? used : from + LANE_FEATURES;
		__m128i		a0 = _mm_setzero_si128(),
					a1 = a0,
					a2 = a0,
					a3 = a0,
					a4 = a0,
					a5 = a0,
					a6 = a0,
					a7 = a0,
					b0 = a0,
					b1 = a0,
					b2 = a0,
					b3 = a0;
		uint16_t	lanes[8][8];
		size_t		i = from;

		while (i < to)
		{
			uint32_t	in_bytes = 0;	/* weight added to b0..b3 */

			for (; i < to; i++)
			{
				const SimhashFeatureSlot *slot = &slots[occupied[i]];
				uint32_t	w = count_weight(slot->count, v2);
				__m128i		keys = _mm_set1_epi64x((long long) slot->key);
				__m128i		weight = _mm_set1_epi8((char) w);

				if (in_bytes + w > 255)
					break;		/* widened first */
				in_bytes += w;
				sum_w += w;
				b0 = SUM_BYTES(b0, keys, m0, weight);
				b1 = SUM_BYTES(b1, keys, m1, weight);
				b2 = SUM_BYTES(b2, keys, m2, weight);
				b3 = SUM_BYTES(b3, keys, m3, weight);
			}
			WIDEN_BYTES(b0, a0, a1);
			WIDEN_BYTES(b1, a2, a3);
			WIDEN_BYTES(b2, a4, a5);
			WIDEN_BYTES(b3, a6, a7);
		}
		_mm_storeu_si128((__m128i *) lanes[0], a0);
		_mm_storeu_si128((__m128i *) lanes[1], a1);
		_mm_storeu_si128((__m128i *) lanes[2], a2);
		_mm_storeu_si128((__m128i *) lanes[3], a3);
		_mm_storeu_si128((__m128i *) lanes[4], a4);
		_mm_storeu_si128((__m128i *) lanes[5], a5);
		_mm_storeu_si128((__m128i *) lanes[6], a6);
		_mm_storeu_si128((__m128i *) lanes[7], a7);
		for (int j = 0; j < 8; j++)
			for (int k = 0; k < 8; k++)
				sums[8 * k + j] += lanes[j][k];
	}
	*total = sum_w;
}
#undef SUM_BYTES
#undef WIDEN_BYTES
#undef BYTE_BIT
#endif

/* the fingerprint of the counted features: each votes with its weight */
static inline __attribute__((always_inline)) uint64_t
counts_fingerprint(const SimhashFeatureCounts *c, bool v2)
{
	uint64_t	sums[64];
	uint64_t	total;

#ifdef __SSE2__
	weighted_sums_sse2(c, v2, sums, &total);
#else
	weighted_sums_planes(c, v2, sums, &total);
#endif
	return majority_bits(sums, total);
}

uint64_t
simhash_counts_fingerprint(const SimhashFeatureCounts *c)
{
	return counts_fingerprint(c, false);
}

uint64_t
simhash_counts_fingerprint_v2(const SimhashFeatureCounts *c)
{
	return counts_fingerprint(c, true);
}

uint64_t
simhash_counts_fingerprint_portable(const SimhashFeatureCounts *c, bool v2)
{
	uint64_t	sums[64];
	uint64_t	total;

	weighted_sums_planes(c, v2, sums, &total);
	return majority_bits(sums, total);
}
