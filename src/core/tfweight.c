/*
 * tfweight.c
 *		Counting distinct features and the tf-weighted vote of simhash(text)
 *		(see tfweight.h).  Pure C: no PostgreSQL headers.
 */
#include "tfweight.h"
#include "vote.h"

#include <string.h>

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

/* Count the hashes; with cjk, mark those with cjk[k] set. */
static inline __attribute__((always_inline)) void
counts_add(SimhashFeatureCounts *c, const uint64_t *hashes, const bool *cjk,
		   size_t n)
{
	for (size_t k = 0; k < n; k++)
	{
		uint64_t	h = hashes[k];
		uint64_t	flag = (cjk && cjk[k]) ? SIMHASH_COUNT_CJK : 0;
		SimhashFeatureSlot *slot;

		if (h == 0)
		{
			c->zero_count = (c->zero_count + 1) | flag;
			continue;
		}
		slot = &c->slots[home(c, h)];
		while (slot->key != h)
		{
			if (slot->key == 0)
			{
				slot->key = h;
				c->occupied[c->used] = (uint32_t) (slot - c->slots);
				if (++c->used * 2 > c->mask + 1)
				{
					slot->count = 1 | flag;
					grow(c);
					goto next;
				}
				break;
			}
			slot = (slot == &c->slots[c->mask]) ? c->slots : slot + 1;
		}
		slot->count = (slot->count + 1) | flag;
next:	;
	}
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

/*
 * Each distinct feature votes with its integer weight w <= 64: the hash is
 * added, by the carry-save vote of vote.c, to bit-plane j for each bit j
 * set in w, and plane counts are recombined as sum(2^j * count_j).  All
 * sums are exact integers, so this equals the weighted vote.
 */
#define PLANES 7
#define PLANE_BATCH 128

/*
 * the fingerprint of the counted features: each votes with its weight (v2:
 * CJK weighting), by bit planes
 */
static inline __attribute__((always_inline)) uint64_t
counts_fingerprint(const SimhashFeatureCounts *c, bool v2)
{
	SimhashVote planes[PLANES];
	uint64_t	batch[PLANES][PLANE_BATCH];
	size_t		nbatch[PLANES] = {0};
	uint64_t	counts[64];
	uint64_t	sums[64] = {0};
	uint64_t	total = 0;
	uint64_t	result = 0;

	for (int j = 0; j < PLANES; j++)
		simhash_vote_init(&planes[j]);
	for (size_t i = 0; i <= c->used; i++)
	{
		uint64_t	key;
		uint64_t	count;
		uint32_t	w;

		if (i < c->used)
		{
			key = c->slots[c->occupied[i]].key;
			count = c->slots[c->occupied[i]].count;
		}
		else
		{
			/* the feature whose hash is 0, kept aside */
			key = 0;
			count = c->zero_count;
			if (count == 0)
				continue;
		}
		w = v2 ? simhash_tf_weight_v2(count & ~SIMHASH_COUNT_CJK,
									  (count & SIMHASH_COUNT_CJK) != 0)
			: simhash_tf_weight(count);
		total += w;
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
	for (int i = 0; i < 64; i++)
		result |= (uint64_t) (2 * sums[i] > total) << i;
	return result;
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
