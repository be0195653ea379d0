/*
 * find_all.c
 *		The find_all driver of the permuted-table search: every pair of an
 *		array within k bits, table group by table group, over cache-sized
 *		buckets (simhash_find_all(), the dedup jobs and the radius join run
 *		it).  Pure C; see blocks.h.
 */
#include "blocks.h"

#include <string.h>

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
			simhash_table_sort_range(tab, f->keys + s, nb, f->sorted, NULL,
									 f->sorted == f->tmp ? f->tmp + nb : f->tmp, NULL,
									 64 - tab->prefix_bits, 64 - f->digit);
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
