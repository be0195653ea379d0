/*
 * rowpairs.c
 *		All pairs of keyed rows within k bits: sort by fingerprint, collapse
 *		equal fingerprints into runs, find_all over the distinct values, and
 *		expand each matching pair of values into the pairs of their rows.
 *		See rowpairs.h.
 */
#include "rowpairs.h"

#include <string.h>

void
simhash_row_pairs_begin(SimhashRowPairs *r, const SimhashBlocks *b,
						uint64_t *hashes, uint64_t *keys, size_t n,
						void *work, int lo, int hi, bool exact)
{
	uint64_t   *uniq = (uint64_t *) work;
	uint64_t   *fa_keys = uniq + n;
	uint32_t   *start = (uint32_t *) (fa_keys + n);	/* n + 1 */
	uint32_t   *tmpvals = start + n + 1;
	size_t		m;

	/* all rows as one bucket: keys[] sorted, uniq[] and start[] their runs */
	m = simhash_row_bucket_sort(hashes, keys, n, uniq, start, tmpvals, 0);
	start[m] = (uint32_t) n;

	/* the sorted fingerprints are no longer needed: find_all's scratch */
	simhash_row_pairs_attach(r, b, keys, uniq, start, n, m, fa_keys,
							 hashes, lo, hi, exact);
}

void
simhash_row_buckets_bounds(const uint64_t *hashes, size_t n, int bits, uint32_t *off)
{
	size_t		nb = (size_t) 1 << bits;
	int			shift = 64 - bits;
	uint32_t	sum = 0;

	memset(off, 0, (nb + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < n; i++)
		off[(hashes[i] >> shift) + 1]++;
	for (size_t b = 0; b <= nb; b++)
	{
		sum += off[b];
		off[b] = sum;
	}
}

void
simhash_row_buckets_split(const uint64_t *hashes, const uint64_t *keys,
						  size_t n, int bits, uint64_t *h, uint64_t *k,
						  uint32_t *off)
{
	size_t		nb = (size_t) 1 << bits;
	int			shift = 64 - bits;

	simhash_row_buckets_bounds(hashes, n, bits, off);
	/* advance off[b], bucket b's start, while filling, then undo */
	for (size_t i = 0; i < n; i++)
	{
		uint32_t	o = off[hashes[i] >> shift]++;

		h[o] = hashes[i];
		k[o] = keys[i];
	}
	for (size_t b = nb; b > 0; b--)
		off[b] = off[b - 1];
	off[0] = 0;
}

void
simhash_row_buckets_place(uint64_t *h, uint64_t *k, int bits, const uint32_t *off,
						  uint32_t *next, size_t b_lo, size_t b_hi)
{
	int			shift = 64 - bits;

	/* bucket by bucket: carry each misplaced row to where it belongs */
	for (size_t b = b_lo; b < b_hi; b++)
	{
		while (next[b] < off[b + 1])
		{
			uint32_t	i = next[b];
			uint64_t	hv = h[i],
						kv = k[i];
			size_t		d = hv >> shift;

			while (d != b)
			{
				uint32_t	j = next[d]++;
				uint64_t	th = h[j],
							tk = k[j];

				h[j] = hv;
				k[j] = kv;
				hv = th;
				kv = tk;
				d = hv >> shift;
			}
			h[i] = hv;
			k[i] = kv;
			next[b]++;
		}
	}
}

void
simhash_row_buckets_partition(uint64_t *h, uint64_t *k, size_t n, int bits,
							  uint32_t *off, uint32_t *next)
{
	size_t		nb = (size_t) 1 << bits;

	simhash_row_buckets_bounds(h, n, bits, off);
	memcpy(next, off, nb * sizeof(uint32_t));
	simhash_row_buckets_place(h, k, bits, off, next, 0, nb);
}

size_t
simhash_row_bucket_sort(uint64_t *h, uint64_t *k, size_t cnt,
						uint64_t *tmp, uint32_t *v, uint32_t *v2,
						uint32_t base)
{
	size_t		d = 0;

	for (size_t i = 0; i < cnt; i++)
		v[i] = (uint32_t) i;
	simhash_radix_sort(h, v, cnt, tmp, v2, 64);
	for (size_t i = 0; i < cnt; i++)
		tmp[i] = k[v[i]];
	memcpy(k, tmp, cnt * sizeof(uint64_t));
	for (size_t i = 0; i < cnt; i++)
	{
		if (i == 0 || h[i] != h[i - 1])
		{
			tmp[d] = h[i];
			v[d] = base + (uint32_t) i;
			d++;
		}
	}
	return d;
}

size_t
simhash_row_buckets_sort_range(uint64_t *h, uint64_t *k, const uint32_t *off,
							   size_t b_lo, size_t b_hi,
							   uint64_t *tmp, uint32_t *v, uint32_t *v2)
{
	uint32_t	first = off[b_lo];
	size_t		m = 0;

	for (size_t b = b_lo; b < b_hi; b++)
	{
		uint32_t	o = off[b];
		size_t		cnt = off[b + 1] - o,
					d;

		if (cnt == 0)
			continue;
		d = simhash_row_bucket_sort(h + o, k + o, cnt, tmp + o, v + o, v2 + o, o);
		/* first + m <= o: the runs move down over buckets already done */
		memmove(tmp + first + m, tmp + o, d * sizeof(uint64_t));
		memmove(v + first + m, v + o, d * sizeof(uint32_t));
		m += d;
	}
	return m;
}

size_t
simhash_row_buckets_sort(uint64_t *h, uint64_t *k, size_t n,
						 const uint32_t *off, int bits,
						 uint64_t *tmp, uint32_t *v, uint32_t *v2)
{
	size_t		m = simhash_row_buckets_sort_range(h, k, off, 0, (size_t) 1 << bits,
												   tmp, v, v2);

	v[m] = (uint32_t) n;
	return m;
}

void
simhash_row_pairs_attach(SimhashRowPairs *r, const SimhashBlocks *b,
						 const uint64_t *keys, const uint64_t *uniq,
						 const uint32_t *start, size_t n, size_t m,
						 uint64_t *fa_keys, uint64_t *fa_tmp,
						 int lo, int hi, bool exact)
{
	memset(r, 0, offsetof(SimhashRowPairs, matches));
	r->n = n;
	r->keys = keys;
	r->uniq = uniq;
	r->start = start;
	r->m = m;
	r->phase = exact ? 0 : 1;
	simhash_find_all_begin_tables(&r->fa, b, uniq, m, fa_keys, fa_tmp, lo, hi);
}

/* the position of the least key among keys[lo .. hi - 1] */
static size_t
least_key(const uint64_t *keys, size_t lo, size_t hi)
{
	size_t		m = lo;

	for (size_t i = lo + 1; i < hi; i++)
		if (keys[i] < keys[m])
			m = i;
	return m;
}

/* the run holding fingerprint h (which is one of uniq[]) */
static size_t
find_run(const SimhashRowPairs *r, uint64_t h)
{
	size_t		lo = 0,
				hi = r->m;

	while (hi - lo > 1)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (r->uniq[mid] <= h)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

size_t
simhash_row_pairs_next(SimhashRowPairs *r, SimhashRowPair *out, size_t max)
{
	size_t		nout = 0;

	/* phase 0: the pairs of each run of equal fingerprints */
	while (r->phase == 0 && nout < max)
	{
		size_t		e;

		if (!r->in_run)
		{
			if (r->run >= r->m)
			{
				r->phase = 1;
				break;
			}
			if (r->start[r->run + 1] - r->start[r->run] < 2)
			{
				r->run++;
				continue;
			}
			r->i = r->start[r->run];
			r->j = r->i + 1;
			r->in_run = true;
			if (r->star)
			{
				/* the run's least key with every other row of the run */
				r->i = least_key(r->keys, r->start[r->run], r->start[r->run + 1]);
				r->j = r->start[r->run];
			}
		}
		e = r->start[r->run + 1];
		if (r->star)
		{
			if (r->j != r->i)
			{
				out[nout].a = r->keys[r->i];
				out[nout].b = r->keys[r->j];
				out[nout].distance = 0;
				nout++;
			}
			if (++r->j == e)
			{
				r->in_run = false;
				r->run++;
			}
			continue;
		}
		out[nout].a = r->keys[r->i];
		out[nout].b = r->keys[r->j];
		out[nout].distance = 0;
		nout++;
		if (++r->j == e)
		{
			r->i++;
			r->j = r->i + 1;
			if (r->j == e)
			{
				r->in_run = false;
				r->run++;
			}
		}
	}

	/* phase 1: matches of distinct fingerprints, expanded to their rows */
	while (r->phase == 1 && nout < max)
	{
		if (r->crossing && r->star)
		{
			/* run a's least key with run b's greater keys, then b's with a's */
			while (nout < max && r->side < 2)
			{
				uint64_t	k;

				if (r->side == 0)
				{
					if (r->b0 == r->b1)
					{
						r->side = 1;
						continue;
					}
					k = r->keys[r->b0++];
					if (k <= r->amin)
						continue;
					out[nout].a = r->amin;
				}
				else
				{
					if (r->a0 == r->a1)
					{
						r->side = 2;
						continue;
					}
					k = r->keys[r->a0++];
					if (k <= r->bmin)
						continue;
					out[nout].a = r->bmin;
				}
				out[nout].b = k;
				out[nout].distance = r->distance;
				nout++;
			}
			if (r->side < 2)
				break;			/* out is full */
			r->crossing = false;
		}
		if (r->crossing)
		{
			while (nout < max && r->a0 < r->a1)
			{
				out[nout].a = r->keys[r->a0];
				out[nout].b = r->keys[r->b0];
				out[nout].distance = r->distance;
				nout++;
				if (++r->b0 == r->b1)
				{
					r->b0 = r->bs;
					r->a0++;
				}
			}
			if (r->a0 < r->a1)
				break;			/* out is full */
			r->crossing = false;
		}
		if (r->mi < r->nmatch)
		{
			const SimhashMatch *mt = &r->matches[r->mi++];
			size_t		ra = find_run(r, mt->a),
						rb = find_run(r, mt->b);

			r->a0 = r->start[ra];
			r->a1 = r->start[ra + 1];
			r->bs = r->b0 = r->start[rb];
			r->b1 = r->start[rb + 1];
			r->distance = mt->distance;
			r->crossing = true;
			if (r->star)
			{
				r->amin = r->keys[least_key(r->keys, r->a0, r->a1)];
				r->bmin = r->keys[least_key(r->keys, r->b0, r->b1)];
				r->side = 0;
			}
			continue;
		}
		if (simhash_find_all_done(&r->fa))
		{
			r->phase = 2;
			break;
		}
		r->nmatch = simhash_find_all_next(&r->fa, r->matches,
										  sizeof(r->matches) / sizeof(r->matches[0]));
		r->mi = 0;
		if (r->nmatch == 0)
			break;				/* find_all's work bound: let the caller in */
	}
	return nout;
}
