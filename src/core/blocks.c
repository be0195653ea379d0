/*
 * blocks.c
 *		Permuted-table search: block geometry, table permutations, the radix
 *		sort, the pair scan and find_all.  Pure C; see blocks.h.
 */
#include "blocks.h"

#include <string.h>

/*
 * Popcount: PGXS builds without -mpopcnt, where __builtin_popcountll is a
 * libgcc call.  On x86-64 the pair scan is also compiled for the popcnt
 * instruction and chosen at run time: it scans 1M keys at blocks 4 (runs of
 * ~15 keys) in 30 ms instead of 72.
 */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__POPCNT__)
#define USE_POPCNT_DISPATCH 1
#endif

/* w bits starting `offset` bits below the top (bit 63) */
static inline uint64_t
bits_from_top(int offset, int w)
{
	if (w <= 0)
		return 0;
	if (w >= 64)
		return ~UINT64_C(0);
	return ((UINT64_C(1) << w) - 1) << (64 - offset - w);
}

/* ---- configuration ---- */

uint64_t
simhash_binomial(int n, int r)
{
	uint64_t	c = 1;

	if (r < 0 || r > n)
		return 0;
	if (r > n - r)
		r = n - r;
	for (int i = 0; i < r; i++)
	{
		/* c = C(n, i); C(n, i + 1) = c * (n - i) / (i + 1), exactly */
		uint64_t	f = (uint64_t) (n - i);
		uint64_t	g = (uint64_t) (i + 1);
		uint64_t	q = c / g,
					rem = c % g;

		/* c * f / g = q * f + rem * f / g, and g divides c * f */
		if (q > UINT64_MAX / f)
			return UINT64_MAX;
		q *= f;
		if (q > UINT64_MAX - rem * f / g)
			return UINT64_MAX;
		c = q + rem * f / g;
	}
	return c;
}

SimhashBlocksStatus
simhash_blocks_validate(int nblocks, int max_distance)
{
	if (nblocks < 1 || nblocks > 64)
		return SIMHASH_BLOCKS_BAD_NBLOCKS;
	if (max_distance < 0)
		return SIMHASH_BLOCKS_BAD_DISTANCE;
	if (max_distance >= nblocks)
		return SIMHASH_BLOCKS_DISTANCE_TOO_LARGE;
	if (simhash_binomial(nblocks, max_distance) > SIMHASH_MAX_TABLES)
		return SIMHASH_BLOCKS_TOO_MANY_TABLES;
	return SIMHASH_BLOCKS_OK;
}

const char *
simhash_blocks_status_message(SimhashBlocksStatus status)
{
	switch (status)
	{
		case SIMHASH_BLOCKS_OK:
			return "valid";
		case SIMHASH_BLOCKS_BAD_NBLOCKS:
			return "the number of blocks must be between 1 and 64";
		case SIMHASH_BLOCKS_BAD_DISTANCE:
			return "the distance must not be negative";
		case SIMHASH_BLOCKS_DISTANCE_TOO_LARGE:
			return "the number of blocks must be greater than the distance";
		case SIMHASH_BLOCKS_TOO_MANY_TABLES:
			return "too many tables: C(blocks, distance) must be at most 10000";
	}
	return "unknown status";
}

bool
simhash_blocks_init(SimhashBlocks *b, int nblocks, int max_distance)
{
	int			offset = 0;

	if (simhash_blocks_validate(nblocks, max_distance) != SIMHASH_BLOCKS_OK)
		return false;
	memset(b, 0, sizeof(*b));
	b->nblocks = nblocks;
	b->max_distance = max_distance;
	b->ntables = (int) simhash_binomial(nblocks, max_distance);
	b->chosen = nblocks - max_distance;
	for (int i = 0; i < nblocks; i++)
	{
		int			w = 64 / nblocks + (i < 64 % nblocks);

		b->width[i] = (uint8_t) w;
		b->offset[i] = (uint8_t) offset;
		b->mask[i] = bits_from_top(offset, w);
		offset += w;
	}
	return true;
}

/*
 * The t-th r-subset of {0 .. m-1} in lexicographic order, as a bit set.
 * Combinations starting with v at position p, after the earlier positions
 * are fixed, number C(m - 1 - v, r - 1 - p).
 */
uint64_t
simhash_table_blocks(const SimhashBlocks *b, int table)
{
	int			m = b->nblocks,
				r = b->chosen,
				v = 0;
	uint64_t	t = (uint64_t) table,
				set = 0;

	for (int p = 0; p < r; p++, v++)
	{
		for (;; v++)
		{
			uint64_t	cnt = simhash_binomial(m - 1 - v, r - 1 - p);

			if (t < cnt)
				break;
			t -= cnt;
		}
		set |= UINT64_C(1) << v;
	}
	return set;
}

int
simhash_prefix_bits(const SimhashBlocks *b, int table)
{
	uint64_t	set = simhash_table_blocks(b, table);
	int			bits = 0;

	for (int i = 0; i < b->nblocks; i++)
		if (set & (UINT64_C(1) << i))
			bits += b->width[i];
	return bits;
}

/* lexicographic rank of the r-subset `set` of {0 .. m-1} */
static int
table_rank(int m, int r, uint64_t set)
{
	uint64_t	rank = 0;
	int			p = 0,
				v = 0;

	for (int c = 0; c < m && p < r; c++)
	{
		if (!(set & (UINT64_C(1) << c)))
			continue;
		for (; v < c; v++)
			rank += simhash_binomial(m - 1 - v, r - 1 - p);
		v = c + 1;
		p++;
	}
	return (int) rank;
}

int
simhash_first_table(const SimhashBlocks *b, uint64_t h1, uint64_t h2)
{
	uint64_t	x = h1 ^ h2,
				first = 0;
	int			n = 0;

	for (int i = 0; i < b->nblocks && n < b->chosen; i++)
		if ((x & b->mask[i]) == 0)
		{
			first |= UINT64_C(1) << i;
			n++;
		}
	if (n < b->chosen)
		return -1;
	return table_rank(b->nblocks, b->chosen, first);
}

void
simhash_table_init(const SimhashBlocks *b, int table, SimhashTable *t)
{
	uint64_t	set = simhash_table_blocks(b, table);
	int			dest[64];
	int			pos = 0,
				last = -1;

	memset(t, 0, sizeof(*t));
	t->table = table;
	t->max_distance = b->max_distance;

	/* destination offsets: chosen blocks first, then the others */
	for (int i = 0; i < b->nblocks; i++)
		if (set & (UINT64_C(1) << i))
		{
			dest[i] = pos;
			pos += b->width[i];
			last = i;
		}
	t->prefix_bits = pos;
	t->prefix_mask = bits_from_top(0, pos);
	for (int i = 0; i < b->nblocks; i++)
		if (!(set & (UINT64_C(1) << i)))
		{
			dest[i] = pos;
			pos += b->width[i];
			if (i < last)
				t->skip_mask[t->nskip++] = bits_from_top(dest[i], b->width[i]);
		}

	/* segments: maximal runs of blocks that are all chosen or all not */
	for (int i = 0; i < b->nblocks;)
	{
		bool		in = (set >> i) & 1;
		int			j = i,
					w = 0;

		while (j < b->nblocks && ((set >> j) & 1) == in)
			w += b->width[j++];
		t->rotate[t->nsegments] = (uint8_t) ((b->offset[i] - dest[i]) & 63);
		t->source_mask[t->nsegments] = bits_from_top(b->offset[i], w);
		t->permuted_mask[t->nsegments] = bits_from_top(dest[i], w);
		t->nsegments++;
		i = j;
	}
}

/* the permute loop for a constant number of segments, unrolled */
static inline __attribute__((always_inline)) void
permute_segments(const SimhashTable *t, const uint64_t *in, uint64_t *out,
				 size_t n, const int nseg)
{
	unsigned	rot[8];
	uint64_t	mask[8];

	for (int s = 0; s < nseg; s++)
	{
		rot[s] = t->rotate[s];
		mask[s] = t->permuted_mask[s];
	}
	for (size_t i = 0; i < n; i++)
	{
		uint64_t	h = in[i],
					p = 0;

		for (int s = 0; s < nseg; s++)
			p |= simhash_rotl64(h, rot[s]) & mask[s];
		out[i] = p;
	}
}

void
simhash_table_permute_array(const SimhashTable *t, const uint64_t *in,
							uint64_t *out, size_t n)
{
	switch (t->nsegments)
	{
		case 1:
			permute_segments(t, in, out, n, 1);
			break;
		case 2:
			permute_segments(t, in, out, n, 2);
			break;
		case 3:
			permute_segments(t, in, out, n, 3);
			break;
		case 4:
			permute_segments(t, in, out, n, 4);
			break;
		case 5:
			permute_segments(t, in, out, n, 5);
			break;
		case 6:
			permute_segments(t, in, out, n, 6);
			break;
		case 7:
			permute_segments(t, in, out, n, 7);
			break;
		case 8:
			permute_segments(t, in, out, n, 8);
			break;
		default:
			for (size_t i = 0; i < n; i++)
				out[i] = simhash_table_permute(t, in[i]);
			break;
	}
}

uint64_t
simhash_permute(const SimhashBlocks *b, int table, uint64_t h)
{
	SimhashTable t;

	simhash_table_init(b, table, &t);
	return simhash_table_permute(&t, h);
}

uint64_t
simhash_unpermute(const SimhashBlocks *b, int table, uint64_t p)
{
	SimhashTable t;

	simhash_table_init(b, table, &t);
	return simhash_table_unpermute(&t, p);
}

/* ---- radix sort ---- */

#define RADIX_MAX_PASSES 16		/* 64 bits in digits of at least 4 */
/* counters of all passes: at most ceil(64 / cap) << cap, largest for cap 13 */
#define RADIX_COUNTERS \
	(((64 + SIMHASH_RADIX_BITS - 1) / SIMHASH_RADIX_BITS) << SIMHASH_RADIX_BITS)
#define RADIX_SMALL 64
#define RADIX_COARSE_EXTRA 4

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

static inline int
radix_passes(int bits, int cap)
{
	return (bits + cap - 1) / cap;
}

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

static inline __attribute__((always_inline)) void
count_key(const RadixPlan *pl, uint64_t k)
{
	for (int p = 0; p < pl->npasses; p++)
		pl->counts[p][(k >> pl->shift[p]) & pl->dmask[p]]++;
}

/*
 * The histogram read that also permutes: keys[i] = permute(source[i]) and
 * vals[i] = i, for a constant number of segments (unrolled).
 */
static inline __attribute__((always_inline)) void
permute_count(const SimhashTable *t, const uint64_t *source, uint64_t *keys,
			  uint32_t *vals, size_t n, const RadixPlan *pl, const int nseg)
{
	unsigned	rot[8];
	uint64_t	mask[8];

	for (int s = 0; s < nseg; s++)
	{
		rot[s] = t->rotate[s];
		mask[s] = t->permuted_mask[s];
	}
	for (size_t i = 0; i < n; i++)
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

static void
permute_count_any(const SimhashTable *t, const uint64_t *source, uint64_t *keys,
				  uint32_t *vals, size_t n, const RadixPlan *pl)
{
	switch (t->nsegments)
	{
		case 1:
			permute_count(t, source, keys, vals, n, pl, 1);
			break;
		case 2:
			permute_count(t, source, keys, vals, n, pl, 2);
			break;
		case 3:
			permute_count(t, source, keys, vals, n, pl, 3);
			break;
		case 4:
			permute_count(t, source, keys, vals, n, pl, 4);
			break;
		case 5:
			permute_count(t, source, keys, vals, n, pl, 5);
			break;
		case 6:
			permute_count(t, source, keys, vals, n, pl, 6);
			break;
		default:
			for (size_t i = 0; i < n; i++)
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
	if (source)
		permute_count_any(t, source, keys, vals, n, &pl);
	else
		for (size_t i = 0; i < n; i++)
			count_key(&pl, keys[i]);

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
		if (vals)
			radix_pass(src, dst, srcv, dstv, n, pl.shift[p], pl.dmask[p], c, true);
		else
			radix_pass(src, dst, NULL, NULL, n, pl.shift[p], pl.dmask[p], c, false);
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
	radix_sort_range(keys, vals, n, tmpkeys, tmpvals, 64 - t->prefix_bits, 64,
					 t, hashes);
}

/* ---- pair scan ---- */

void
simhash_pair_scan_init(SimhashPairScan *s, const SimhashTable *t,
					   const uint64_t *keys, size_t n)
{
	s->keys = keys;
	s->n = n;
	s->prefix_mask = t->prefix_mask;
	s->max_distance = t->max_distance;
	s->nskip = t->nskip;
	memcpy(s->skip_mask, t->skip_mask, sizeof(s->skip_mask));
	s->i = 0;
	s->j = 1;
}

/*
 * The scan proper, inlined into a portable copy and, on x86-64 compilers
 * not already targeting it, a copy using the popcnt instruction.
 */
static inline __attribute__((always_inline)) size_t
pair_scan(SimhashPairScan *s, SimhashPair *out, size_t max)
{
	const uint64_t *keys = s->keys;
	const uint64_t pmask = s->prefix_mask;
	const int	k = s->max_distance;
	size_t		n = s->n,
				i = s->i,
				j = s->j,
				nout = 0;
	long		work = SIMHASH_SCAN_WORK;

	for (; i < n; i++, j = i + 1)
	{
		uint64_t	ki = keys[i];

		for (; j < n; j++)
		{
			uint64_t	x = ki ^ keys[j];
			int			d;

			if (x & pmask)
				break;
			d = __builtin_popcountll(x);
			if (d <= k)
			{
				bool		report = true;

				/* found by a lower table too? */
				for (int b = 0; b < s->nskip; b++)
					report &= (x & s->skip_mask[b]) != 0;
				if (report)
				{
					if (nout == max)
						goto out;
					out[nout].i = i;
					out[nout].j = j;
					out[nout].distance = d;
					nout++;
				}
			}
			if (--work <= 0)
			{
				j++;
				goto out;
			}
		}
		if (--work <= 0)
		{
			i++;
			j = i + 1;
			goto out;
		}
	}
out:
	s->i = i;
	s->j = j;
	return nout;
}

static size_t
pair_scan_portable(SimhashPairScan *s, SimhashPair *out, size_t max)
{
	return pair_scan(s, out, max);
}

#ifdef USE_POPCNT_DISPATCH
__attribute__((target("popcnt")))
static size_t
pair_scan_popcnt(SimhashPairScan *s, SimhashPair *out, size_t max)
{
	return pair_scan(s, out, max);
}
#endif

size_t
simhash_pair_scan_next(SimhashPairScan *s, SimhashPair *out, size_t max)
{
#ifdef USE_POPCNT_DISPATCH
	static int	have_popcnt = -1;

	if (have_popcnt < 0)
	{
		__builtin_cpu_init();
		have_popcnt = __builtin_cpu_supports("popcnt") ? 1 : 0;
	}
	if (have_popcnt)
		return pair_scan_popcnt(s, out, max);
#endif
	return pair_scan_portable(s, out, max);
}

/* ---- find_all ---- */

/* elements of sorting and scanning per simhash_find_all_next() call */
#define FIND_ALL_WORK (1 << 20)
/* buckets of about 2^13 keys: 64 kB, in cache */
#define FIND_ALL_BUCKET_BITS 13

void
simhash_find_all_begin(SimhashFindAll *f, const SimhashBlocks *b,
					   const uint64_t *hashes, size_t n,
					   uint64_t *keys, uint64_t *tmp)
{
	simhash_find_all_begin_tables(f, b, hashes, n, keys, tmp, 0, b->ntables);
}

void
simhash_table_group(const SimhashBlocks *b, int c, int *lo, int *hi)
{
	int			t = 0;

	/* groups come in block order; group c has C(m - 1 - c, m - k - 1) tables */
	for (int g = 0; g < c; g++)
		t += (int) simhash_binomial(b->nblocks - 1 - g, b->chosen - 1);
	*lo = t;
	*hi = t + (int) simhash_binomial(b->nblocks - 1 - c, b->chosen - 1);
}

void
simhash_find_all_begin_tables(SimhashFindAll *f, const SimhashBlocks *b,
							  const uint64_t *hashes, size_t n,
							  uint64_t *keys, uint64_t *tmp, int lo, int hi)
{
	f->blocks = b;
	f->hashes = hashes;
	f->n = n;
	f->keys = keys;
	f->tmp = tmp;
	f->end_table = hi;
	f->chunk = n < 2 ? hi : lo; /* fewer than two: no pairs */
	f->nchunk = 0;
	f->group_end = 0;
	f->partitioned = false;
	f->scanning = false;
}

/* permutations of the tables of the current chunk */
static void
find_all_load_chunk(SimhashFindAll *f)
{
	f->nchunk = f->group_end - f->chunk;
	if (f->nchunk > SIMHASH_FIND_ALL_CHUNK)
		f->nchunk = SIMHASH_FIND_ALL_CHUNK;
	for (int q = 0; q < f->nchunk; q++)
		simhash_table_init(f->blocks, f->chunk + q, &f->tabs[q]);
	f->bucket = 0;
	f->q = 0;
	f->scanning = false;
}

/*
 * Start the group of tables whose first chosen block is that of table
 * f->chunk: partition hashes[] into keys[] by the top bits of that block
 * (those bits lead every permuted value of the group).
 */
static void
find_all_partition(SimhashFindAll *f)
{
	const SimhashBlocks *b = f->blocks;
	int			c = __builtin_ctzll(simhash_table_blocks(b, f->chunk));
	int			digit = 64 - __builtin_clzll((unsigned long long) f->n) - FIND_ALL_BUCKET_BITS;
	uint32_t	counts[1 << SIMHASH_FIND_ALL_DIGIT];
	size_t		n = f->n;

	/* the group: tables choosing c and m - k - 1 of the blocks after it */
	f->group_end = f->chunk + (int) simhash_binomial(b->nblocks - 1 - c, b->chosen - 1);

	if (digit > b->width[c])
		digit = b->width[c];
	if (digit > SIMHASH_FIND_ALL_DIGIT)
		digit = SIMHASH_FIND_ALL_DIGIT;
	if (digit <= 0)
	{
		f->digit = 0;
		f->nbuckets = 1;
		f->bucket_start[0] = 0;
		f->bucket_start[1] = n;
		memcpy(f->keys, f->hashes, n * sizeof(uint64_t));
	}
	else
	{
		int			shift = 64 - b->offset[c] - digit;
		uint64_t	dmask = (UINT64_C(1) << digit) - 1;
		const uint64_t *h = f->hashes;
		uint64_t   *keys = f->keys;
		size_t		sum = 0;

		f->digit = digit;
		f->nbuckets = (size_t) 1 << digit;
		memset(counts, 0, sizeof(uint32_t) * f->nbuckets);
		for (size_t i = 0; i < n; i++)
			counts[(h[i] >> shift) & dmask]++;
		for (size_t d = 0; d < f->nbuckets; d++)
		{
			f->bucket_start[d] = sum;
			sum += counts[d];
			counts[d] = (uint32_t) f->bucket_start[d];
		}
		f->bucket_start[f->nbuckets] = sum;
		for (size_t i = 0; i < n; i++)
		{
			uint64_t	x = h[i];

			keys[counts[(x >> shift) & dmask]++] = x;
		}
	}
	f->partitioned = true;
	find_all_load_chunk(f);
}

size_t
simhash_find_all_next(SimhashFindAll *f, SimhashMatch *out, size_t max)
{
	const size_t bufsize = sizeof(f->pairs) / sizeof(f->pairs[0]);
	size_t		nout = 0;
	long		work = FIND_ALL_WORK;

	while (nout < max && work > 0 && !simhash_find_all_done(f))
	{
		size_t		s,
					nb;
		SimhashTable *tab;

		if (!f->partitioned)
		{
			find_all_partition(f);
			work -= (long) f->n;
			continue;
		}
		if (f->bucket >= f->nbuckets)
		{
			/* chunk done: the next chunk of the group, or the next group */
			f->chunk += f->nchunk;
			if (f->chunk < f->group_end)
				find_all_load_chunk(f);
			else
				f->partitioned = false;
			continue;
		}

		s = f->bucket_start[f->bucket];
		nb = f->bucket_start[f->bucket + 1] - s;
		tab = &f->tabs[f->q];
		if (nb < 2)
		{
			f->bucket++;
			continue;
		}
		if (!f->scanning)
		{
			/*
			 * Permute and sort the bucket by the prefix (its top digit bits
			 * are all equal): into tmp[0 .. nb) with tmp[nb .. 2nb) as
			 * scratch, or, for a bucket of more than half the keys, in place
			 * (and permute it back after the scan).
			 */
			if (nb <= f->n / 2)
				f->sorted = f->tmp;
			else
				f->sorted = f->keys + s;
			radix_sort_range(f->sorted, NULL, nb,
							 f->sorted == f->tmp ? f->tmp + nb : f->tmp, NULL,
							 64 - tab->prefix_bits, 64 - f->digit,
							 tab, f->keys + s);
			simhash_pair_scan_init(&f->scan, tab, f->sorted, nb);
			f->scanning = true;
			work -= (long) nb;
			continue;
		}

		{
			size_t		want = max - nout < bufsize ? max - nout : bufsize;
			size_t		np = simhash_pair_scan_next(&f->scan, f->pairs, want);

			for (size_t p = 0; p < np; p++)
			{
				uint64_t	a = simhash_table_unpermute(tab, f->sorted[f->pairs[p].i]);
				uint64_t	b = simhash_table_unpermute(tab, f->sorted[f->pairs[p].j]);

				out[nout].a = a < b ? a : b;
				out[nout].b = a < b ? b : a;
				out[nout].distance = f->pairs[p].distance;
				nout++;
			}
			if (!simhash_pair_scan_done(&f->scan))
				return nout;	/* out is full, or the scan's work bound */
		}

		/* table done: back to the original values, unless never used again */
		f->scanning = false;
		if (f->sorted != f->tmp &&
			(f->q + 1 < f->nchunk || f->chunk + f->nchunk < f->group_end))
		{
			uint64_t   *k = f->keys + s;

			for (size_t i = 0; i < nb; i++)
				k[i] = simhash_table_unpermute(tab, k[i]);
		}
		work -= (long) nb;
		if (++f->q == f->nchunk)
		{
			f->q = 0;
			f->bucket++;
		}
	}
	return nout;
}
