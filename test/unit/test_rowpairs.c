/*
 * test_rowpairs.c: unit tests of the keyed row-pair search (src/core/rowpairs.c)
 * outside the server, against an O(n^2) reference: random rows with planted
 * clusters, exact duplicates, all-identical rows, chains; the whole search
 * and the split search of the table-scale jobs (rows split by bits of each
 * group's block, each part searched with that group's tables); one sort
 * shared by a search per group (the parallel jobs); the star pairs (each
 * run's least key with the others) against the reference's pairs whose
 * lesser key is the least of its run.  Prints
 * "test_rowpairs: N passed, N failed".
 */
#include "rowpairs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

static int
cmp_pair(const void *pa, const void *pb)
{
	const SimhashRowPair *x = pa,
			   *y = pb;

	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	if (x->b != y->b)
		return x->b < y->b ? -1 : 1;
	return (x->distance > y->distance) - (x->distance < y->distance);
}

static void
canonical(SimhashRowPair *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
	{
		if (p[i].a > p[i].b)
		{
			uint64_t	t = p[i].a;

			p[i].a = p[i].b;
			p[i].b = t;
		}
	}
	qsort(p, n, sizeof(*p), cmp_pair);
}

static size_t
brute(const uint64_t *h, const uint64_t *key, size_t n, int k, SimhashRowPair *out)
{
	size_t		np = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
		{
			int			d = __builtin_popcountll(h[i] ^ h[j]);

			if (d <= k)
			{
				out[np].a = key[i];
				out[np].b = key[j];
				out[np].distance = d;
				np++;
			}
		}
	canonical(out, np);
	return np;
}

/* star pairs only (simhash_row_pairs_star()) in search() and search_shared() */
static bool star_mode;

/*
 * The star pairs among the reference's (canonical: a < b): those whose
 * lesser key is the least key of its fingerprint's rows.  Returns their
 * number, kept in place and in order.
 */
static size_t
star_filter(const uint64_t *h, const uint64_t *key, size_t n, SimhashRowPair *p, size_t np)
{
	size_t		kept = 0;

	for (size_t i = 0; i < np; i++)
	{
		uint64_t	ha = 0,
					least = UINT64_MAX;

		for (size_t r = 0; r < n; r++)
			if (key[r] == p[i].a)
				ha = h[r];
		for (size_t r = 0; r < n; r++)
			if (h[r] == ha && key[r] < least)
				least = key[r];
		if (least == p[i].a)
			p[kept++] = p[i];
	}
	return kept;
}

/* run the search on copies of rows (hash, key); append to out */
static size_t
search(const SimhashBlocks *b, const uint64_t *h, const uint64_t *key, size_t n,
	   int lo, int hi, bool exact, SimhashRowPair *out, size_t cap)
{
	uint64_t   *hc = malloc((n + 1) * 8),
			   *kc = malloc((n + 1) * 8);
	void	   *work = malloc(SIMHASH_ROW_PAIRS_WORK(n));
	SimhashRowPairs *r = malloc(sizeof(SimhashRowPairs));
	size_t		np = 0;
	int			calls = 0;

	memcpy(hc, h, n * 8);
	memcpy(kc, key, n * 8);
	simhash_row_pairs_begin(r, b, hc, kc, n, work, lo, hi, exact);
	if (star_mode)
		simhash_row_pairs_star(r);
	while (!simhash_row_pairs_done(r) && calls++ < 10000000)
	{
		/* small batches, to exercise resumption */
		size_t		want = 1 + (next() % 7);

		if (np + want > cap)
			want = cap - np;
		if (want == 0)
			break;
		np += simhash_row_pairs_next(r, out + np, want);
	}
	free(hc);
	free(kc);
	free(work);
	free(r);
	return np;
}

/*
 * The search of the parallel jobs: one sort (begin), then each group searched
 * by its own attached search over the shared arrays, groups in reverse
 * order, equal fingerprints with the first; the union is appended to out.
 */
static size_t
search_shared(const SimhashBlocks *b, const uint64_t *h, const uint64_t *key,
			  size_t n, SimhashRowPair *out, size_t cap)
{
	uint64_t   *hc = malloc((n + 1) * 8),
			   *kc = malloc((n + 1) * 8),
			   *fa_keys = malloc((n + 1) * 8),
			   *fa_tmp = malloc((n + 1) * 8);
	void	   *work = malloc(SIMHASH_ROW_PAIRS_WORK(n));
	SimhashRowPairs *r0 = malloc(sizeof(SimhashRowPairs));
	SimhashRowPairs *r = malloc(sizeof(SimhashRowPairs));
	size_t		np = 0;

	memcpy(hc, h, n * 8);
	memcpy(kc, key, n * 8);
	simhash_row_pairs_begin(r0, b, hc, kc, n, work, 0, b->ntables, true);
	for (int g = b->max_distance; g >= 0; g--)
	{
		int			lo,
					hi,
					calls = 0;

		simhash_table_group(b, g, &lo, &hi);
		simhash_row_pairs_attach(r, b, r0->keys, r0->uniq, r0->start, r0->n, r0->m,
								 fa_keys, fa_tmp, lo, hi, g == 0);
		if (star_mode)
			simhash_row_pairs_star(r);
		while (!simhash_row_pairs_done(r) && calls++ < 10000000 && np < cap)
			np += simhash_row_pairs_next(r, out + np, cap - np);
	}
	free(hc);
	free(kc);
	free(fa_keys);
	free(fa_tmp);
	free(work);
	free(r0);
	free(r);
	return np;
}

static int
cmp_u64(const void *pa, const void *pb)
{
	uint64_t	x = *(const uint64_t *) pa,
				y = *(const uint64_t *) pb;

	return (x > y) - (x < y);
}

/*
 * The parallel jobs' bucketed preparation (split, each bucket sorted alone
 * in any order, runs concatenated) must give exactly begin()'s arrays.
 */
static void
check_buckets(const char *name, const uint64_t *h, const uint64_t *key, size_t n)
{
	static const int bits_list[] = {1, 3, 8, 12};

	for (size_t t = 0; t < sizeof(bits_list) / sizeof(bits_list[0]); t++)
	{
		int			bits = bits_list[t];
		size_t		nb = (size_t) 1 << bits;
		uint64_t   *hc = malloc((n + 1) * 8),
				   *kc = malloc((n + 1) * 8),
				   *H = malloc((n + 1) * 8),
				   *K = malloc((n + 1) * 8),
				   *T = malloc((n + 1) * 8),
				   *U = malloc((n + 1) * 8);
		uint32_t   *V = malloc((n + 1) * 4),
				   *V2 = malloc((n + 1) * 4),
				   *S = malloc((n + 1) * 4),
				   *off = malloc((nb + 1) * 4),
				   *d = malloc(nb * 4);
		void	   *work = malloc(SIMHASH_ROW_PAIRS_WORK(n));
		SimhashRowPairs *r0 = malloc(sizeof(SimhashRowPairs));
		SimhashBlocks b;
		size_t		m = 0;
		bool		same;

		simhash_blocks_init(&b, 4, 3);
		memcpy(hc, h, n * 8);
		memcpy(kc, key, n * 8);
		simhash_row_buckets_split(hc, kc, n, bits, H, K, off);
		CHECK(off[0] == 0 && off[nb] == n, "%s bits %d: split covers the rows", name, bits);
		/* buckets in reverse order: the order must not matter */
		for (size_t bk = nb; bk-- > 0;)
			d[bk] = simhash_row_bucket_sort(H + off[bk], K + off[bk], off[bk + 1] - off[bk],
											T + off[bk], V + off[bk], V2 + off[bk], off[bk]);
		for (size_t bk = 0; bk < nb; bk++)
		{
			memcpy(U + m, T + off[bk], d[bk] * 8);
			memcpy(S + m, V + off[bk], d[bk] * 4);
			m += d[bk];
		}
		S[m] = (uint32_t) n;

		simhash_row_pairs_begin(r0, &b, hc, kc, n, work, 0, b.ntables, true);
		same = r0->m == m &&
			memcmp(r0->keys, K, n * 8) == 0 &&
			memcmp(r0->uniq, U, m * 8) == 0 &&
			memcmp(r0->start, S, (m + 1) * 4) == 0;
		CHECK(same, "%s bits %d: bucketed sort equals begin() (m %zu vs %zu)",
			  name, bits, m, r0->m);

		/* all buckets at once, runs concatenated in place (begin() reordered kc) */
		simhash_row_buckets_split(h, key, n, bits, H, K, off);
		m = simhash_row_buckets_sort(H, K, n, off, bits, T, V, V2);
		same = r0->m == m &&
			memcmp(r0->keys, K, n * 8) == 0 &&
			memcmp(r0->uniq, T, m * 8) == 0 &&
			memcmp(r0->start, V, (m + 1) * 4) == 0;
		CHECK(same, "%s bits %d: simhash_row_buckets_sort equals begin() (m %zu vs %zu)",
			  name, bits, m, r0->m);

		/*
		 * In shares (parallel workers, dedup/parallel.c): three bucket
		 * ranges sorted in reverse order, each run list copied down after
		 * the previous shares' as worker_sort() does.
		 */
		simhash_row_buckets_split(h, key, n, bits, H, K, off);
		{
			size_t		cut[4] = {0, nb / 3, 2 * nb / 3, nb};
			size_t		ds[3];

			for (int sh = 2; sh >= 0; sh--)
				ds[sh] = simhash_row_buckets_sort_range(H, K, off, cut[sh], cut[sh + 1], T, V, V2);
			m = 0;
			for (int sh = 0; sh < 3; sh++)
			{
				memmove(U + m, T + off[cut[sh]], ds[sh] * 8);
				memmove(S + m, V + off[cut[sh]], ds[sh] * 4);
				m += ds[sh];
			}
			S[m] = (uint32_t) n;
		}
		same = r0->m == m &&
			memcmp(r0->keys, K, n * 8) == 0 &&
			memcmp(r0->uniq, U, m * 8) == 0 &&
			memcmp(r0->start, S, (m + 1) * 4) == 0;
		CHECK(same, "%s bits %d: the sort in three shares equals begin() (m %zu vs %zu)",
			  name, bits, m, r0->m);

		/*
		 * In place (not stable): the same runs; each run's keys the same
		 * set, so sorted within runs they are equal.
		 */
		memcpy(H, h, n * 8);
		memcpy(K, key, n * 8);
		simhash_row_buckets_partition(H, K, n, bits, off, d);
		/*
		 * The partition in three steps (dedup/parallel.c hands each range
		 * over when it is placed): every range final on return, the
		 * result the same as in one step.
		 */
		{
			uint64_t   *H2 = malloc((n + 1) * 8),
					   *K2 = malloc((n + 1) * 8);
			uint32_t   *off2 = malloc((nb + 1) * 4),
					   *next2 = malloc(nb * 4);
			size_t		cut[4] = {0, nb / 3, 2 * nb / 3, nb};
			bool		final = true;

			memcpy(H2, h, n * 8);
			memcpy(K2, key, n * 8);
			simhash_row_buckets_bounds(H2, n, bits, off2);
			memcpy(next2, off2, nb * 4);
			for (int sh = 0; sh < 3; sh++)
			{
				simhash_row_buckets_place(H2, K2, bits, off2, next2, cut[sh], cut[sh + 1]);
				for (uint32_t i = off2[cut[sh]]; i < off2[cut[sh + 1]]; i++)
					if ((H2[i] >> (64 - bits)) < cut[sh] || (H2[i] >> (64 - bits)) >= cut[sh + 1])
						final = false;
			}
			CHECK(final && memcmp(off, off2, (nb + 1) * 4) == 0 &&
				  memcmp(H, H2, n * 8) == 0 && memcmp(K, K2, n * 8) == 0,
				  "%s bits %d: the partition in three steps equals one step", name, bits);
			free(H2);
			free(K2);
			free(off2);
			free(next2);
		}
		m = simhash_row_buckets_sort(H, K, n, off, bits, T, V, V2);
		for (size_t r = 0; r < m; r++)
		{
			qsort(K + V[r], V[r + 1] - V[r], 8, cmp_u64);
			qsort((uint64_t *) r0->keys + r0->start[r], r0->start[r + 1] - r0->start[r], 8, cmp_u64);
		}
		same = r0->m == m &&
			memcmp(r0->keys, K, n * 8) == 0 &&
			memcmp(r0->uniq, T, m * 8) == 0 &&
			memcmp(r0->start, V, (m + 1) * 4) == 0;
		CHECK(same, "%s bits %d: in-place partition and sort give begin()'s runs (m %zu vs %zu)",
			  name, bits, m, r0->m);
		free(hc);
		free(kc);
		free(H);
		free(K);
		free(T);
		free(U);
		free(V);
		free(V2);
		free(S);
		free(off);
		free(d);
		free(work);
		free(r0);
	}
}

static void
compare(const char *what, SimhashRowPair *got, size_t ngot,
		SimhashRowPair *want, size_t nwant)
{
	bool		same;

	canonical(got, ngot);
	same = ngot == nwant && memcmp(got, want, nwant * sizeof(*got)) == 0;
	if (!same)
	{
		/* pairs are compared field by field: padding may differ */
		same = ngot == nwant;
		for (size_t i = 0; same && i < nwant; i++)
			same = got[i].a == want[i].a && got[i].b == want[i].b &&
				got[i].distance == want[i].distance;
	}
	CHECK(same, "%s: %zu pairs, reference %zu", what, ngot, nwant);
}

static void
check_rows(const char *name, const uint64_t *h, const uint64_t *key, size_t n)
{
	static const int configs[][2] = {{4, 3}, {5, 3}, {6, 3}, {8, 3}, {3, 1}, {6, 2}, {1, 0}, {4, 0}, {7, 6}};
	size_t		cap = n * n / 2 + 16;
	SimhashRowPair *want = malloc(cap * sizeof(SimhashRowPair));
	SimhashRowPair *got = malloc(cap * sizeof(SimhashRowPair));

	for (size_t c = 0; c < sizeof(configs) / sizeof(configs[0]); c++)
	{
		SimhashBlocks b;
		char		what[128];
		size_t		nwant,
					ngot;

		simhash_blocks_init(&b, configs[c][0], configs[c][1]);
		nwant = brute(h, key, n, b.max_distance, want);
		if (star_mode)
			nwant = star_filter(h, key, n, want, nwant);

		snprintf(what, sizeof(what), "%s%s blocks %d k %d whole", name,
				 star_mode ? " star" : "", b.nblocks, b.max_distance);
		ngot = search(&b, h, key, n, 0, b.ntables, true, got, cap);
		compare(what, got, ngot, want, nwant);

		/* one sort shared by a search per group (as the parallel jobs do) */
		snprintf(what, sizeof(what), "%s%s blocks %d k %d shared", name,
				 star_mode ? " star" : "", b.nblocks, b.max_distance);
		ngot = search_shared(&b, h, key, n, got, cap);
		compare(what, got, ngot, want, nwant);

		/* split: for each group c, parts by the low bits of block c */
		ngot = 0;
		for (int g = 0; g <= b.max_distance; g++)
		{
			int			lo,
						hi,
						bits = b.width[g] < 2 ? b.width[g] : 2;
			int			shift = 64 - b.offset[g] - b.width[g];
			uint64_t   *ph = malloc(n * 8 + 8),
					   *pk = malloc(n * 8 + 8);

			simhash_table_group(&b, g, &lo, &hi);
			for (uint64_t part = 0; part < (UINT64_C(1) << bits); part++)
			{
				size_t		pn = 0;

				for (size_t i = 0; i < n; i++)
					if (((h[i] >> shift) & ((UINT64_C(1) << bits) - 1)) == part)
					{
						ph[pn] = h[i];
						pk[pn] = key[i];
						pn++;
					}
				ngot += search(&b, ph, pk, pn, lo, hi, g == 0, got + ngot, cap - ngot);
			}
			free(ph);
			free(pk);
		}
		snprintf(what, sizeof(what), "%s%s blocks %d k %d split", name,
				 star_mode ? " star" : "", b.nblocks, b.max_distance);
		compare(what, got, ngot, want, nwant);
	}
	free(want);
	free(got);
}

/* the rows of main()'s cases, searched for all pairs and for star pairs */
static void
check_cases(uint64_t *h, uint64_t *key, size_t n)
{
	unit_seed(20261122);

	/* random rows, planted clusters within 0..4 bits, exact copies */
	for (size_t i = 0; i < n; i++)
	{
		key[i] = i * 7919 + 11;
		if (i > 0 && next() % 3 == 0)
		{
			uint64_t	x = h[next() % i];
			int			flips = (int) (next() % 5);

			for (int f = 0; f < flips; f++)
				x ^= UINT64_C(1) << (next() % 64);
			h[i] = x;
		}
		else
			h[i] = next();
	}
	check_rows("planted", h, key, n);
	if (!star_mode)
		check_buckets("planted", h, key, n);

	/* runs of equal fingerprints next to each other, keys in no order */
	for (size_t i = 0; i < 300; i++)
	{
		key[i] = (i * 2654435761u) % 1000003;
		h[i] = UINT64_C(0x0123456789ABCDEF) ^ (UINT64_C(1) << (i % 5 * 11)) ^
			(i % 7 == 0 ? UINT64_C(0xF0000) : 0);
		if (i % 5 == 4)
			h[i] = UINT64_C(0x0123456789ABCDEF);
	}
	check_rows("runs", h, key, 300);

	/* all identical */
	for (size_t i = 0; i < 60; i++)
	{
		key[i] = i * 7919 + 11;
		h[i] = UINT64_C(0xDEADBEEF00112233);
	}
	check_rows("identical", h, key, 60);
	if (!star_mode)
		check_buckets("identical", h, key, 60);

	/* a chain: each one bit from the previous, so the ends are far apart */
	h[0] = next();
	for (size_t i = 1; i < 40; i++)
		h[i] = h[i - 1] ^ (UINT64_C(1) << ((i * 13) % 64));
	check_rows("chain", h, key, 40);

	/* nothing to pair */
	check_rows("one row", h, key, 1);
	check_rows("no rows", h, key, 0);
}

int
main(void)
{
	size_t		n = 1500;
	uint64_t   *h = malloc(n * 8),
			   *key = malloc(n * 8);

	check_cases(h, key, n);
	star_mode = true;
	check_cases(h, key, n);

	/* star pairs of 20,000 identical rows: one per row but the first */
	{
		size_t		big = 20000,
					np = 0;
		uint64_t   *bh = malloc(big * 8),
				   *bk = malloc(big * 8);
		SimhashRowPair *out = malloc(big * sizeof(SimhashRowPair));
		SimhashBlocks b;
		bool		least = true;

		for (size_t i = 0; i < big; i++)
		{
			bh[i] = UINT64_C(0x0123456789ABCDEF);
			bk[i] = big - i;
		}
		simhash_blocks_init(&b, 4, 3);
		np = search(&b, bh, bk, big, 0, b.ntables, true, out, big);
		for (size_t i = 0; i < np; i++)
			least = least && out[i].a == 1 && out[i].distance == 0;
		CHECK(np == big - 1 && least, "20000 identical rows: %zu star pairs, all with key 1", np);
		free(bh);
		free(bk);
		free(out);
	}

	free(h);
	free(key);
	return unit_report("test_rowpairs");
}
