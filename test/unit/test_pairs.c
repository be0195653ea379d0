/*
 * test_pairs.c: unit tests of the permuted-table search (src/core/: blocks.h)
 * outside the server: geometry, permutations, the radix sort, and find_all
 * against an O(n^2) reference on random, planted, clustered, identical and
 * chained inputs.  Prints "test_pairs: N passed, N failed".
 */
#include "blocks.h"

#include <setjmp.h>
#include <stdio.h>

#include "unit.h"
#include <stdlib.h>
#include <string.h>

/* h with nbits distinct bits flipped */
static uint64_t
flip_bits(uint64_t h, int nbits)
{
	uint64_t	flipped = 0;

	while (__builtin_popcountll(flipped) < nbits)
		flipped |= UINT64_C(1) << (next() % 64);
	return h ^ flipped;
}

static int
cmp_match(const void *pa, const void *pb)
{
	const SimhashMatch *x = pa,
			   *y = pb;

	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	if (x->b != y->b)
		return x->b < y->b ? -1 : 1;
	return (x->distance > y->distance) - (x->distance < y->distance);
}

/* every pair of positions within k bits, as (min, max, distance) */
static size_t
reference(const uint64_t *h, size_t n, int k, SimhashMatch **out)
{
	size_t		cap = 1024,
				np = 0;
	SimhashMatch *m = malloc(cap * sizeof(SimhashMatch));

	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
		{
			int			d = __builtin_popcountll(h[i] ^ h[j]);

			if (d > k)
				continue;
			if (np == cap)
				m = realloc(m, (cap *= 2) * sizeof(SimhashMatch));
			m[np].a = h[i] < h[j] ? h[i] : h[j];
			m[np].b = h[i] < h[j] ? h[j] : h[i];
			m[np].distance = d;
			np++;
		}
	qsort(m, np, sizeof(SimhashMatch), cmp_match);
	*out = m;
	return np;
}

/* find_all with a given output batch size */
static size_t
find_all(const SimhashBlocks *b, const uint64_t *h, size_t n, size_t batch,
		 SimhashMatch **out)
{
	size_t		cap = 1024,
				np = 0;
	SimhashMatch *m = malloc(cap * sizeof(SimhashMatch));
	uint64_t   *keys = malloc((n + 1) * sizeof(uint64_t));
	uint64_t   *tmp = malloc((n + 1) * sizeof(uint64_t));
	SimhashFindAll *f = malloc(sizeof(SimhashFindAll));

	simhash_find_all_begin(f, b, h, n, keys, tmp);
	while (!simhash_find_all_done(f))
	{
		if (np + batch > cap)
		{
			while (np + batch > cap)
				cap *= 2;
			m = realloc(m, cap * sizeof(SimhashMatch));
		}
		np += simhash_find_all_next(f, m + np, batch);
	}
	free(f);
	free(keys);
	free(tmp);
	qsort(m, np, sizeof(SimhashMatch), cmp_match);
	*out = m;
	return np;
}

static bool
same_matches(const SimhashMatch *x, const SimhashMatch *y, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (cmp_match(&x[i], &y[i]) != 0)
			return false;
	return true;
}

/* the last reference computed, reused for the same input and k */
static const uint64_t *ref_h;
static size_t ref_n;
static int	ref_k = -1;
static SimhashMatch *ref_m;
static size_t ref_np;

static void
check_find_all_batch(const char *what, int m, int k, const uint64_t *h, size_t n,
					 bool batch1)
{
	SimhashBlocks b;
	SimhashMatch *ref,
			   *got,
			   *got1;
	size_t		nref,
				ngot,
				ngot1;

	if (!simhash_blocks_init(&b, m, k))
	{
		CHECK(0, "%s: init m=%d k=%d", what, m, k);
		return;
	}
	if (h != ref_h || n != ref_n || k != ref_k)
	{
		free(ref_m);
		ref_np = reference(h, n, k, &ref_m);
		ref_h = h;
		ref_n = n;
		ref_k = k;
	}
	ref = ref_m;
	nref = ref_np;
	ngot = find_all(&b, h, n, 1000, &got);
	CHECK(ngot == nref && same_matches(ref, got, nref),
		  "%s m=%d k=%d n=%zu: %zu pairs, reference %zu", what, m, k, n, ngot, nref);
	free(got);
	if (!batch1)
		return;
	/* resuming after every single pair gives the same */
	ngot1 = find_all(&b, h, n, 1, &got1);
	CHECK(ngot1 == nref && same_matches(ref, got1, nref),
		  "%s m=%d k=%d n=%zu batch 1: %zu pairs, reference %zu", what, m, k, n, ngot1, nref);
	free(got1);
}

static void
check_find_all(const char *what, int m, int k, const uint64_t *h, size_t n)
{
	/* inputs are rewritten in place between calls: no reuse */
	ref_k = -1;
	check_find_all_batch(what, m, k, h, n, true);
}

/* naive geometry: the bit of block i at position q (0 = its top bit) */
static void
test_geometry(void)
{
	for (int m = 1; m <= 64; m++)
		for (int k = 0; k < m; k++)
		{
			SimhashBlocks b;
			uint64_t	nt = simhash_binomial(m, k);
			bool		ok = simhash_blocks_init(&b, m, k);
			int			top = 63,
						bad = 0;

			CHECK(ok == (nt <= SIMHASH_MAX_TABLES), "init m=%d k=%d", m, k);
			if (!ok)
				continue;
			CHECK(b.ntables == (int) nt && b.chosen == m - k, "ntables m=%d k=%d", m, k);
			for (int i = 0; i < m; i++)
			{
				int			w = 64 / m + (i < 64 % m);
				uint64_t	mask = 0;

				for (int q = 0; q < w; q++)
					mask |= UINT64_C(1) << (top - q);
				top -= w;
				bad += b.width[i] != w || b.mask[i] != mask;
			}
			CHECK(bad == 0 && top == -1, "block masks m=%d k=%d", m, k);
		}
}

/* the reference permutation, bit by bit */
static uint64_t
naive_permute(const SimhashBlocks *b, uint64_t set, uint64_t h)
{
	uint64_t	p = 0;
	int			out = 63;

	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < b->nblocks; i++)
		{
			if (((set >> i) & 1) != (pass == 0))
				continue;
			for (int q = 0; q < b->width[i]; q++)
			{
				int			in = 63 - b->offset[i] - q;

				p |= ((h >> in) & 1) << out--;
			}
		}
	return p;
}

static void
test_tables(void)
{
	static const int conf[][2] = {
		{1, 0}, {2, 0}, {2, 1}, {3, 1}, {3, 2}, {4, 3}, {5, 3}, {6, 3}, {7, 2},
		{8, 3}, {10, 4}, {12, 5}, {13, 6}, {16, 4}, {64, 1}, {64, 2}, {63, 2},
		{33, 3}, {64, 0}, {24, 3}
	};

	for (size_t c = 0; c < sizeof(conf) / sizeof(conf[0]); c++)
	{
		SimhashBlocks b;
		int			m = conf[c][0],
					k = conf[c][1];
		int			comb[64];
		int			bad_set = 0,
					bad_perm = 0,
					bad_prefix = 0,
					bad_first = 0;

		if (!simhash_blocks_init(&b, m, k))
		{
			CHECK(0, "init m=%d k=%d", m, k);
			continue;
		}
		/* lexicographic enumeration of (m-k)-subsets, python-itertools style */
		for (int i = 0; i < m - k; i++)
			comb[i] = i;
		for (int t = 0; t < b.ntables; t++)
		{
			uint64_t	set = 0;
			SimhashTable tab;
			int			pbits = 0;

			for (int i = 0; i < m - k; i++)
			{
				set |= UINT64_C(1) << comb[i];
				pbits += b.width[comb[i]];
			}
			bad_set += simhash_table_blocks(&b, t) != set;
			simhash_table_init(&b, t, &tab);
			bad_prefix += simhash_prefix_bits(&b, t) != pbits || tab.prefix_bits != pbits;
			for (int r = 0; r < 50; r++)
			{
				uint64_t	h = next();
				uint64_t	p = simhash_table_permute(&tab, h);

				bad_perm += p != naive_permute(&b, set, h)
					|| simhash_table_unpermute(&tab, p) != h
					|| (r < 3 && (simhash_permute(&b, t, h) != p
								  || simhash_unpermute(&b, t, p) != h));
			}
			/* next combination */
			{
				int			i = m - k - 1;

				while (i >= 0 && comb[i] == i + k)
					i--;
				if (i >= 0)
				{
					comb[i]++;
					for (int j = i + 1; j < m - k; j++)
						comb[j] = comb[j - 1] + 1;
				}
				else
					CHECK(t == b.ntables - 1, "ntables m=%d k=%d", m, k);
			}
		}
		/* first table: the lowest whose chosen blocks are all equal */
		for (int r = 0; r < 300; r++)
		{
			uint64_t	h1 = next();
			uint64_t	h2 = flip_bits(h1, (int) (next() % (k + 3)));
			int			want = -1;

			for (int t = 0; t < b.ntables && want < 0; t++)
			{
				uint64_t	set = simhash_table_blocks(&b, t);
				bool		eq = true;

				for (int i = 0; i < m; i++)
					if ((set >> i) & 1)
						eq &= ((h1 ^ h2) & b.mask[i]) == 0;
				if (eq)
					want = t;
			}
			bad_first += simhash_first_table(&b, h1, h2) != want;
		}
		CHECK(bad_set == 0, "table blocks m=%d k=%d: %d wrong", m, k, bad_set);
		CHECK(bad_prefix == 0, "prefix bits m=%d k=%d: %d wrong", m, k, bad_prefix);
		CHECK(bad_perm == 0, "permute m=%d k=%d: %d wrong", m, k, bad_perm);
		CHECK(bad_first == 0, "first table m=%d k=%d: %d wrong", m, k, bad_first);
	}
}

static void
test_validate(void)
{
	CHECK(simhash_blocks_validate(5, 3) == SIMHASH_BLOCKS_OK, "5/3 ok");
	CHECK(simhash_blocks_validate(1, 0) == SIMHASH_BLOCKS_OK, "1/0 ok");
	CHECK(simhash_blocks_validate(64, 2) == SIMHASH_BLOCKS_OK, "64/2 ok");
	CHECK(simhash_blocks_validate(0, 0) == SIMHASH_BLOCKS_BAD_NBLOCKS, "0 blocks");
	CHECK(simhash_blocks_validate(65, 3) == SIMHASH_BLOCKS_BAD_NBLOCKS, "65 blocks");
	CHECK(simhash_blocks_validate(5, -1) == SIMHASH_BLOCKS_BAD_DISTANCE, "negative distance");
	CHECK(simhash_blocks_validate(3, 3) == SIMHASH_BLOCKS_DISTANCE_TOO_LARGE, "3/3");
	CHECK(simhash_blocks_validate(64, 3) == SIMHASH_BLOCKS_TOO_MANY_TABLES, "64/3");
	CHECK(simhash_blocks_validate(20, 5) == SIMHASH_BLOCKS_TOO_MANY_TABLES, "20/5");
	CHECK(simhash_blocks_validate(64, 64) == SIMHASH_BLOCKS_BAD_DISTANCE, "distance 64");
	CHECK(simhash_blocks_validate(64, 63) == SIMHASH_BLOCKS_OK, "64/63 ok");
	/* the index's limit: C(12, 6) = 924 tables pass, C(14, 4) = 1001 do not */
	CHECK(simhash_blocks_check(12, 6, SIMHASH_MAX_INDEX_TABLES) == SIMHASH_BLOCKS_OK, "index 12/6");
	CHECK(simhash_blocks_check(14, 4, SIMHASH_MAX_INDEX_TABLES) == SIMHASH_BLOCKS_TOO_MANY_TABLES, "index 14/4");
	CHECK(simhash_blocks_validate(14, 4) == SIMHASH_BLOCKS_OK, "search 14/4");
	CHECK(simhash_blocks_check(5, 3, 0) == SIMHASH_BLOCKS_TOO_MANY_TABLES, "no tables allowed");
	CHECK(simhash_binomial(64, 32) == UINT64_C(1832624140942590534), "C(64,32)");
	CHECK(simhash_binomial(10, 3) == 120 && simhash_binomial(5, 0) == 1
		  && simhash_binomial(3, 4) == 0 && simhash_binomial(3, -1) == 0, "small binomials");
	CHECK(simhash_binomial(70, 35) == UINT64_MAX, "C(70,35) saturates");
	CHECK(simhash_binomial(67, 33) == UINT64_C(14226520737620288370), "C(67,33)");
	for (int s = SIMHASH_BLOCKS_OK; s <= SIMHASH_BLOCKS_TOO_MANY_TABLES; s++)
		CHECK(simhash_blocks_status_message(s) != NULL, "message %d", s);
}

/* radix sort against a stable reference (vals = original positions) */
static int
cmp_kv(const void *pa, const void *pb, uint64_t mask)
{
	const uint64_t *x = pa,
			   *y = pb;

	if ((x[0] & mask) != (y[0] & mask))
		return (x[0] & mask) < (y[0] & mask) ? -1 : 1;
	return (x[1] > y[1]) - (x[1] < y[1]);
}

static uint64_t sort_mask;
static int
cmp_kv_q(const void *pa, const void *pb)
{
	return cmp_kv(pa, pb, sort_mask);
}

static void
test_radix(void)
{
	static const size_t sizes[] = {0, 1, 2, 3, 63, 64, 65, 200, 1000, 4097, 100000};

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (int keybits = 1; keybits <= 64; keybits += (sizes[s] > 5000 ? 7 : 1))
			for (int shape = 0; shape < 3; shape++)
			{
				size_t		n = sizes[s];
				uint64_t   *keys = malloc((n + 1) * 8),
						   *tmp = malloc((n + 1) * 8),
						   *keys2 = malloc((n + 1) * 8),
						   *ref = malloc((n + 1) * 16);
				uint32_t   *vals = malloc((n + 1) * 4),
						   *tmpv = malloc((n + 1) * 4);
				uint64_t	common = next();
				int			bad = 0;

				sort_mask = keybits == 64 ? ~UINT64_C(0) : ~(~UINT64_C(0) >> keybits);
				for (size_t i = 0; i < n; i++)
				{
					uint64_t	k = next();

					if (shape == 1)	/* few distinct digits: many equal keys */
						k &= UINT64_C(0xF00000000000000F) | (k >> 60);
					if (shape == 2)	/* top half constant: skipped passes */
						k = (common & UINT64_C(0xFFFFFFFF00000000)) | (k & 0xFFFFFF);
					keys[i] = keys2[i] = k;
					vals[i] = (uint32_t) i;
					ref[2 * i] = k;
					ref[2 * i + 1] = i;
				}
				qsort(ref, n, 16, cmp_kv_q);
				simhash_radix_sort(keys, vals, n, tmp, tmpv, keybits);
				simhash_radix_sort(keys2, NULL, n, tmp, NULL, keybits);
				for (size_t i = 0; i < n; i++)
					bad += keys[i] != ref[2 * i] || vals[i] != ref[2 * i + 1]
						|| (keys2[i] & sort_mask) != (ref[2 * i] & sort_mask);
				CHECK(bad == 0, "radix n=%zu keybits=%d shape=%d: %d wrong", n, keybits, shape, bad);
				free(keys);
				free(tmp);
				free(keys2);
				free(ref);
				free(vals);
				free(tmpv);
			}
}

/* table sort: permuted keys sorted by the prefix, stable, with positions */
static void
test_table_sort(void)
{
	static const int conf[][2] = {{5, 3}, {4, 3}, {8, 3}, {12, 6}, {16, 8}, {64, 1}, {1, 0}, {6, 0}};
	static const size_t sizes[] = {0, 1, 5, 64, 65, 3000, 70000};

	for (size_t c = 0; c < sizeof(conf) / sizeof(conf[0]); c++)
		for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++)
		{
			SimhashBlocks b;
			size_t		n = sizes[z];
			uint64_t   *h = malloc((n + 1) * 8),
					   *keys = malloc((n + 1) * 8),
					   *tmp = malloc((n + 1) * 8),
					   *keys2 = malloc((n + 1) * 8);
			uint32_t   *vals = malloc((n + 1) * 4),
					   *tmpv = malloc((n + 1) * 4);
			int			bad = 0;

			simhash_blocks_init(&b, conf[c][0], conf[c][1]);
			for (size_t i = 0; i < n; i++)
				h[i] = i % 3 == 2 ? h[i - 1] : (i % 7 == 1 ? flip_bits(h[i - 1], 3) : next());
			for (int t = 0; t < b.ntables; t += 1 + b.ntables / 7)
			{
				SimhashTable tab;

				simhash_table_init(&b, t, &tab);
				simhash_table_sort(&tab, h, n, keys, vals, tmp, tmpv);
				simhash_table_sort(&tab, h, n, keys2, NULL, tmp, NULL);
				for (size_t i = 0; i < n; i++)
				{
					bad += vals[i] >= n || keys[i] != simhash_table_permute(&tab, h[vals[i]])
						|| keys2[i] != keys[i];
					if (i > 0)
					{
						/* the whole key (the index's leaves need it), stable */
						uint64_t	p0 = keys[i - 1],
									p1 = keys[i];

						bad += p0 > p1 || (p0 == p1 && vals[i - 1] >= vals[i]);
					}
				}
			}
			CHECK(bad == 0, "table sort m=%d k=%d n=%zu: %d wrong", conf[c][0], conf[c][1], n, bad);
			free(h);
			free(keys);
			free(tmp);
			free(keys2);
			free(vals);
			free(tmpv);
		}
}

static void
test_find_all(void)
{
	static uint64_t h[4000];

	for (int m = 1; m <= 12; m++)
		for (int k = 0; k < m && k <= 5; k++)
		{
			size_t		n;

			/* random with planted near-duplicates at distances 0 .. k + 2 */
			n = 0;
			while (n < 1200)
			{
				uint64_t	base = next();

				h[n++] = base;
				if (next() % 2)
					for (int c = (int) (next() % 4); c >= 0; c--)
						h[n++] = flip_bits(base, (int) (next() % (k + 3)));
			}
			check_find_all("planted", m, k, h, n);

			/* clustered: few random bits, so many close pairs in many tables */
			for (n = 0; n < 700; n++)
			{
				uint64_t	x = 0;

				for (int bit = 0; bit < 5; bit++)
					x |= UINT64_C(1) << ((next() % 12) * 5 + 2);
				h[n] = x ^ UINT64_C(0xA5A5A5A5A5A5A5A5);
			}
			check_find_all("clustered", m, k, h, n);

			/* identical values: n(n-1)/2 pairs at distance 0 */
			for (n = 0; n < 150; n++)
				h[n] = UINT64_C(0xDEADBEEFCAFEF00D);
			check_find_all("identical", m, k, h, n);

			/* a chain: consecutive values one bit apart, repeated */
			h[0] = next();
			for (n = 1; n < 200; n++)
				h[n] = h[n - 1] ^ (UINT64_C(1) << (next() % 64));
			memcpy(h + n, h, 40 * sizeof(uint64_t));
			n += 40;
			check_find_all("chain", m, k, h, n);
		}

	/* many tables, and the widest blocks */
	{
		static const int conf[][2] = {{12, 6}, {13, 4}, {16, 3}, {64, 1}, {64, 2}, {2, 1}, {1, 0}};

		for (size_t c = 0; c < sizeof(conf) / sizeof(conf[0]); c++)
		{
			size_t		n;

			for (n = 0; n < 300; n++)
				h[n] = n < 150 ? flip_bits(UINT64_C(0x0123456789ABCDEF), (int) (next() % 8)) : next();
			check_find_all("wide", conf[c][0], conf[c][1], h, n);
		}
	}

	/* partitioned groups (n >= 2^14): planted and clustered, against the reference */
	{
		static const int conf[][2] = {{5, 3}, {4, 3}, {8, 3}, {6, 2}, {12, 6}, {64, 2}, {2, 1}, {1, 0}};
		size_t		n = 20000;
		uint64_t   *big = malloc(n * sizeof(uint64_t)),
				   *clu = malloc(n * sizeof(uint64_t));

		for (size_t i = 0; i < n; i++)
		{
			big[i] = i % 4 == 3 ? flip_bits(big[i - 1 - next() % 3], (int) (next() % 5)) : next();
			clu[i] = UINT64_C(0x5A5A5A5A5A5A5A5A);
			for (int bit = 0; bit < 5; bit++)
				clu[i] ^= UINT64_C(1) << (next() % 64);
		}
		ref_k = -1;
		for (size_t c = 0; c < sizeof(conf) / sizeof(conf[0]); c++)
			check_find_all_batch("partitioned", conf[c][0], conf[c][1], big, n, c < 2);
		for (size_t c = 0; c < sizeof(conf) / sizeof(conf[0]); c++)
			if (conf[c][0] <= 8)
				check_find_all_batch("partitioned clustered", conf[c][0], conf[c][1], clu, n, c < 2);
		free(ref_m);
		ref_m = NULL;
		ref_k = -1;
		free(big);
		free(clu);
	}

	/* tiny inputs */
	{
		uint64_t	one = 42;

		check_find_all("empty", 5, 3, h, 0);
		check_find_all("single", 5, 3, &one, 1);
		h[0] = 0;
		h[1] = ~UINT64_C(0);
		check_find_all("complement", 2, 1, h, 2);
		h[1] = 7;
		check_find_all("three bits", 4, 3, h, 2);
		check_find_all("three bits, k=2", 4, 2, h, 2);
	}

	/* large: radix passes on, many runs, scan resumption by the work bound */
	{
		size_t		n = 300000;
		uint64_t   *big = malloc(n * sizeof(uint64_t));
		SimhashBlocks b;
		SimhashMatch *got;
		size_t		ngot,
					want = 0;

		for (size_t i = 0; i < n; i += 3)
		{
			big[i] = next();
			big[i + 1] = flip_bits(big[i], (int) (i % 5));	/* 0 .. 4 bits */
			big[i + 2] = next();
		}
		for (size_t i = 0; i < n; i += 3)
			want += (i % 5) <= 3;
		simhash_blocks_init(&b, 6, 3);
		ngot = find_all(&b, big, n, 1000, &got);
		/* random pairs within 3 bits among 300,000 values: practically none */
		CHECK(ngot == want, "large planted: %zu pairs, expected %zu", ngot, want);
		free(got);

		/* 5,000 copies of one value: a run longer than the work bound */
		for (size_t i = 0; i < 5000; i++)
			big[i] = 99;
		simhash_blocks_init(&b, 4, 1);
		{
			SimhashFindAll *f = malloc(sizeof(SimhashFindAll));
			SimhashMatch buf[1000];
			uint64_t   *keys = malloc(5000 * 8),
					   *tmp = malloc(5000 * 8);
			size_t		calls = 0;
			int			bad = 0;

			ngot = 0;
			simhash_find_all_begin(f, &b, big, 5000, keys, tmp);
			while (!simhash_find_all_done(f))
			{
				size_t		np = simhash_find_all_next(f, buf, 1000);

				for (size_t p = 0; p < np; p++)
					bad += buf[p].a != 99 || buf[p].b != 99 || buf[p].distance != 0;
				ngot += np;
				calls++;
			}
			CHECK(ngot == (size_t) 5000 * 4999 / 2 && bad == 0,
				  "5,000 identical: %zu pairs, %d wrong", ngot, bad);
			CHECK(calls > ngot / 1000, "5,000 identical: resumed %zu times", calls);
			free(f);
			free(keys);
			free(tmp);
		}
		free(big);
	}
}

/* the sorts' hook: called every SIMHASH_SORT_CHECK_KEYS keys; a jump out of it ends the sort */
static size_t hook_calls;
static size_t hook_jump_at;
static jmp_buf hook_jump;

static void
count_hook(void)
{
	if (++hook_calls == hook_jump_at)
		longjmp(hook_jump, 1);
}

static void
test_sort_hook(void)
{
	size_t		n = 3 * SIMHASH_SORT_CHECK_KEYS + 12345;
	uint64_t   *hashes = malloc(n * 8),
			   *keys = malloc(n * 8),
			   *tmp = malloc(n * 8);
	uint32_t   *vals = malloc(n * 4),
			   *tmpv = malloc(n * 4);
	SimhashBlocks b;
	SimhashTable t;
	size_t		bad = 0;

	for (size_t i = 0; i < n; i++)
		hashes[i] = next();
	CHECK(simhash_blocks_init(&b, 4, 3), "blocks 4, k 3");
	simhash_table_init(&b, 1, &t);
	simhash_sort_check_hook = count_hook;
	hook_calls = 0;
	hook_jump_at = 0;
	simhash_table_sort(&t, hashes, n, keys, vals, tmp, tmpv);
	for (size_t i = 1; i < n; i++)
		bad += keys[i - 1] > keys[i] || keys[i] != simhash_table_permute(&t, hashes[vals[i]]);
	CHECK(bad == 0, "sort with the hook: %zu wrong", bad);
	/* the histogram read and at least one pass, each over all n keys */
	CHECK(hook_calls >= 2 * (n / SIMHASH_SORT_CHECK_KEYS) - 1,
		  "hook called %zu times for %zu keys", hook_calls, n);
	/* an error thrown from the hook (a cancel) ends the sort */
	hook_calls = 0;
	hook_jump_at = 2;
	if (setjmp(hook_jump) == 0)
	{
		simhash_table_sort(&t, hashes, n, keys, vals, tmp, tmpv);
		CHECK(false, "the sort went on after its hook jumped");
	}
	CHECK(hook_calls == 2, "left at the second call (%zu)", hook_calls);
	simhash_sort_check_hook = NULL;
	free(hashes);
	free(keys);
	free(tmp);
	free(vals);
	free(tmpv);
}

int
main(void)
{
	unit_seed(7);
	test_validate();
	test_geometry();
	test_tables();
	test_radix();
	test_table_sort();
	test_sort_hook();
	test_find_all();
	return unit_report("test_pairs");
}
