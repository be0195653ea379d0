/*
 * radix_sort.c
 *		The stable LSD radix sort of the permuted-table search, with the
 *		table permutation fused into its first read.  Pure C; see blocks.h.
 */
#include "blocks.h"

#include <string.h>

#define RADIX_MAX_PASSES 16		/* 64 bits in digits of at least 4 */
/* counters of all passes: at most ceil(64 / cap) << cap, largest for cap 13 */
#define RADIX_COUNTERS \
	(((64 + SIMHASH_RADIX_BITS - 1) / SIMHASH_RADIX_BITS) << SIMHASH_RADIX_BITS)
#define RADIX_SMALL 64
#define RADIX_COARSE_EXTRA 4

void		(*simhash_sort_check_hook) (void) = NULL;

/* keys the sort has read or moved since it last called the hook */
static size_t sort_work = 0;

/* count n keys of work; call the hook once SIMHASH_SORT_CHECK_KEYS are done */
static inline void
sort_progress(size_t n)
{
	sort_work += n;
	if (sort_work >= SIMHASH_SORT_CHECK_KEYS)
	{
		sort_work = 0;
		if (simhash_sort_check_hook)
			simhash_sort_check_hook();
	}
}

/* bits lo .. hi-1 (bit 0 = least significant), 0 <= lo <= hi <= 64 */
static inline uint64_t
range_mask(int lo, int hi)
{
	uint64_t	below_hi = hi >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << hi) - 1;

	return lo >= 64 ? 0 : below_hi & ~((UINT64_C(1) << lo) - 1);
}

/*
 * Widest digit for n keys: SIMHASH_RADIX_BITS for large inputs, narrower
 * for small ones, whose histograms would otherwise cost more than the keys.
 */
static inline int
radix_digit_cap(size_t n)
{
	int			cap = 64 - __builtin_clzll((unsigned long long) n | 1) - 3;

	return cap < 4 ? 4 : cap > SIMHASH_RADIX_BITS ? SIMHASH_RADIX_BITS : cap;
}

/* digit passes to cover `bits` bits with digits of at most cap bits */
static inline int
radix_passes(int bits, int cap)
{
	return (bits + cap - 1) / cap;
}

/* stable insertion sort by the bits of mask, for runs of RADIX_SMALL or fewer */
static void
insertion_sort(uint64_t *keys, uint32_t *vals, size_t n, uint64_t mask)
{
	for (size_t i = 1; i < n; i++)
	{
		uint64_t	k = keys[i];
		uint32_t	v = vals ? vals[i] : 0;
		size_t		j = i;

		while (j > 0 && (keys[j - 1] & mask) > (k & mask))
		{
			keys[j] = keys[j - 1];
			if (vals)
				vals[j] = vals[j - 1];
			j--;
		}
		keys[j] = k;
		if (vals)
			vals[j] = v;
	}
}

/* one scatter pass; with_vals is a constant at each call, so two copies */
static inline void
radix_pass(const uint64_t *src, uint64_t *dst, const uint32_t *srcv,
		   uint32_t *dstv, size_t n, int shift, uint64_t dmask,
		   uint32_t *offsets, bool with_vals)
{
	for (size_t i = 0; i < n; i++)
	{
		uint64_t	k = src[i];
		uint32_t	o = offsets[(k >> shift) & dmask]++;

		dst[o] = k;
		if (with_vals)
			dstv[o] = srcv[i];
	}
}

/* digits of an LSD sort by bits lo .. hi-1: equal widths, lowest first */
typedef struct RadixPlan
{
	int			npasses;
	int			shift[RADIX_MAX_PASSES];
	uint64_t	dmask[RADIX_MAX_PASSES];
	uint32_t   *counts[RADIX_MAX_PASSES];	/* pass p's histogram */
} RadixPlan;

/* plan the passes over bits lo .. hi-1 for n keys; zero their counters */
static void
radix_plan(RadixPlan *pl, int lo, int hi, size_t n, uint32_t *counters)
{
	int			cap = radix_digit_cap(n),
				digit;

	pl->npasses = radix_passes(hi - lo, cap);
	digit = (hi - lo + pl->npasses - 1) / pl->npasses;
	for (int p = 0; p < pl->npasses; p++)
	{
		int			w = digit;

		pl->shift[p] = lo + p * digit;
		if (pl->shift[p] + w > hi)
			w = hi - pl->shift[p];
		pl->dmask[p] = (UINT64_C(1) << w) - 1;
		pl->counts[p] = counters + ((size_t) p << digit);
	}
	memset(counters, 0, sizeof(uint32_t) * ((size_t) pl->npasses << digit));
}

/* count key k in every pass's histogram */
static inline __attribute__((always_inline)) void
count_key(const RadixPlan *pl, uint64_t k)
{
	for (int p = 0; p < pl->npasses; p++)
		pl->counts[p][(k >> pl->shift[p]) & pl->dmask[p]]++;
}

/*
 * The histogram read that also permutes: keys[i] = permute(source[i]) and
 * vals[i] = i for i in start .. end-1, for a constant number of segments
 * (unrolled).
 */
static inline __attribute__((always_inline)) void
permute_count(const SimhashTable *t, const uint64_t *source, uint64_t *keys,
			  uint32_t *vals, size_t start, size_t end, const RadixPlan *pl, const int nseg)
{
	unsigned	rot[8];
	uint64_t	mask[8];

	for (int s = 0; s < nseg; s++)
	{
		rot[s] = t->rotate[s];
		mask[s] = t->permuted_mask[s];
	}
	for (size_t i = start; i < end; i++)
	{
		uint64_t	h = source[i],
					k = 0;

		for (int s = 0; s < nseg; s++)
			k |= simhash_rotl64(h, rot[s]) & mask[s];
		keys[i] = k;
		if (vals)
			vals[i] = (uint32_t) i;
		count_key(pl, k);
	}
}

/*
 * permute_count for t's number of segments: a constant nseg per copy lets
 * the compiler unroll the segment loop and keep its masks in registers (this
 * read is the hot loop of the sort); the default is the generic loop.
 */
static void
permute_count_any(const SimhashTable *t, const uint64_t *source, uint64_t *keys,
				  uint32_t *vals, size_t start, size_t end, const RadixPlan *pl)
{
	switch (t->nsegments)
	{
		case 1:
			permute_count(t, source, keys, vals, start, end, pl, 1);
			break;
		case 2:
			permute_count(t, source, keys, vals, start, end, pl, 2);
			break;
		case 3:
			permute_count(t, source, keys, vals, start, end, pl, 3);
			break;
		case 4:
			permute_count(t, source, keys, vals, start, end, pl, 4);
			break;
		case 5:
			permute_count(t, source, keys, vals, start, end, pl, 5);
			break;
		case 6:
			permute_count(t, source, keys, vals, start, end, pl, 6);
			break;
		default:
			for (size_t i = start; i < end; i++)
			{
				keys[i] = simhash_table_permute(t, source[i]);
				if (vals)
					vals[i] = (uint32_t) i;
				count_key(pl, keys[i]);
			}
			break;
	}
}

/*
 * LSD radix sort by bits lo .. hi-1.  All histograms are counted in one
 * read; with a source, that read is of source[], permuted by t into keys[]
 * (vals[] = positions).  Passes over a digit every key shares are skipped.
 */
static void
radix_lsd(uint64_t *keys, uint32_t *vals, size_t n,
		  uint64_t *tmpkeys, uint32_t *tmpvals, int lo, int hi,
		  const SimhashTable *t, const uint64_t *source)
{
	uint32_t	counters[RADIX_COUNTERS];
	RadixPlan	pl;
	uint64_t   *src = keys,
			   *dst = tmpkeys;
	uint32_t   *srcv = vals,
			   *dstv = tmpvals;

	radix_plan(&pl, lo, hi, n, counters);
	/* the reads and passes go in slices of the check's size */
	for (size_t s = 0; s < n; s += SIMHASH_SORT_CHECK_KEYS)
	{
		size_t		m = n - s < SIMHASH_SORT_CHECK_KEYS ? n - s : SIMHASH_SORT_CHECK_KEYS;

		if (source)
			permute_count_any(t, source, keys, vals, s, s + m, &pl);
		else
			for (size_t i = s; i < s + m; i++)
				count_key(&pl, keys[i]);
		sort_progress(m);
	}

	for (int p = 0; p < pl.npasses; p++)
	{
		uint32_t   *c = pl.counts[p];
		uint32_t	sum = 0;
		size_t		nbuckets = (size_t) pl.dmask[p] + 1;

		/* every key has the same digit: nothing to do */
		if (c[(keys[0] >> pl.shift[p]) & pl.dmask[p]] == n)
			continue;
		for (size_t d = 0; d < nbuckets; d++)
		{
			uint32_t	x = c[d];

			c[d] = sum;
			sum += x;
		}
		for (size_t s = 0; s < n; s += SIMHASH_SORT_CHECK_KEYS)
		{
			size_t		m = n - s < SIMHASH_SORT_CHECK_KEYS ? n - s : SIMHASH_SORT_CHECK_KEYS;

			if (vals)
				radix_pass(src + s, dst, srcv + s, dstv, m, pl.shift[p], pl.dmask[p], c, true);
			else
				radix_pass(src + s, dst, NULL, NULL, m, pl.shift[p], pl.dmask[p], c, false);
			sort_progress(m);
		}
		{
			uint64_t   *tk = src;
			uint32_t   *tv = srcv;

			src = dst;
			dst = tk;
			srcv = dstv;
			dstv = tv;
		}
	}
	if (src != keys)
	{
		memcpy(keys, src, n * sizeof(uint64_t));
		if (vals)
			memcpy(vals, srcv, n * sizeof(uint32_t));
	}
}

/*
 * Stable sort by bits lo .. hi-1 (of source[] permuted by t, if given).
 * When that takes more digit passes than sorting by the top log2(n) +
 * RADIX_COARSE_EXTRA bits of the range, sort by those only (equal "coarse"
 * keys are then rare) and finish each run of equal coarse keys by the
 * remaining bits.
 */
static void
radix_sort_range(uint64_t *keys, uint32_t *vals, size_t n,
				 uint64_t *tmpkeys, uint32_t *tmpvals, int lo, int hi,
				 const SimhashTable *t, const uint64_t *source)
{
	int			coarse;
	uint64_t	cmask;

	if (source && (n <= RADIX_SMALL || hi <= lo))
	{
		for (size_t i = 0; i < n; i++)
		{
			keys[i] = simhash_table_permute(t, source[i]);
			if (vals)
				vals[i] = (uint32_t) i;
		}
		source = NULL;
	}
	if (n < 2 || hi <= lo)
		return;
	if (n <= RADIX_SMALL)
	{
		insertion_sort(keys, vals, n, range_mask(lo, hi));
		return;
	}
	coarse = 64 - __builtin_clzll((unsigned long long) n) + RADIX_COARSE_EXTRA;
	if (coarse >= hi - lo || radix_passes(coarse, radix_digit_cap(n)) >=
		radix_passes(hi - lo, radix_digit_cap(n)))
	{
		radix_lsd(keys, vals, n, tmpkeys, tmpvals, lo, hi, t, source);
		return;
	}
	radix_lsd(keys, vals, n, tmpkeys, tmpvals, hi - coarse, hi, t, source);
	cmask = range_mask(hi - coarse, hi);
	for (size_t s = 0; s < n;)
	{
		size_t		e = s + 1;

		while (e < n && ((keys[e] ^ keys[s]) & cmask) == 0)
			e++;
		if (e - s > 1)
			radix_sort_range(keys + s, vals ? vals + s : NULL, e - s,
							 tmpkeys, tmpvals, lo, hi - coarse, NULL, NULL);
		sort_progress(e - s);
		s = e;
	}
}

void
simhash_radix_sort(uint64_t *keys, uint32_t *vals, size_t n,
				   uint64_t *tmpkeys, uint32_t *tmpvals, int keybits)
{
	if (keybits < 1)
		return;
	if (keybits > 64)
		keybits = 64;
	radix_sort_range(keys, vals, n, tmpkeys, tmpvals, 64 - keybits, 64,
					 NULL, NULL);
}

void
simhash_table_sort(const SimhashTable *t, const uint64_t *hashes, size_t n,
				   uint64_t *keys, uint32_t *vals,
				   uint64_t *tmpkeys, uint32_t *tmpvals)
{
	radix_sort_range(keys, vals, n, tmpkeys, tmpvals, 0, 64, t, hashes);
}

void
simhash_table_sort_range(const SimhashTable *t, const uint64_t *hashes, size_t n,
						 uint64_t *keys, uint32_t *vals,
						 uint64_t *tmpkeys, uint32_t *tmpvals, int lo, int hi)
{
	radix_sort_range(keys, vals, n, tmpkeys, tmpvals, lo, hi, t, hashes);
}
