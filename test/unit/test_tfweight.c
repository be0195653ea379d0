/*
 * test_tfweight.c: unit tests of the tf-weighted vote (src/core/tfweight.c)
 * against a naive reference.  Prints "N passed, N failed".
 */
#include "tfweight.h"

#include <stdio.h>

#include "unit.h"
#include <stdlib.h>

static void *
zalloc(size_t n)
{
	return calloc(1, n);
}

static int
cmp(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a,
				y = *(const uint64_t *) b;

	return (x > y) - (x < y);
}

/*
 * reference: sort, count runs, vote with bitlen(n^2); with cjk_below, the
 * hashes below it are "CJK" features and vote with min(n, 8) (simhash_v2)
 */
static uint64_t
reference_v(const uint64_t *h, size_t n, uint64_t cjk_below)
{
	uint64_t   *s = malloc((n + 1) * sizeof(uint64_t));
	long long	v[64] = {0};
	uint64_t	r = 0;

	for (size_t i = 0; i < n; i++)
		s[i] = h[i];
	qsort(s, n, sizeof(uint64_t), cmp);
	for (size_t i = 0; i < n;)
	{
		size_t		j = i;
		long long	w = 0;

		while (j < n && s[j] == s[i])
			j++;
		for (uint64_t sq = (uint64_t) (j - i) * (j - i); sq; sq >>= 1)
			w++;
		if (s[i] < cjk_below)
			w = (j - i) < 8 ? (long long) (j - i) : 8;
		for (int b = 0; b < 64; b++)
			v[b] += ((s[i] >> b) & 1) ? w : -w;
		i = j;
	}
	for (int b = 0; b < 64; b++)
		if (v[b] > 0)
			r |= UINT64_C(1) << b;
	free(s);
	return r;
}

static uint64_t
reference(const uint64_t *h, size_t n)
{
	return reference_v(h, n, 0);
}

int
main(void)
{
	unit_seed(99);
	static uint64_t h[100000];
	static const uint32_t want[] = {0, 1, 3, 4, 5, 5, 6, 6, 7, 7, 7, 7, 8};

	for (uint64_t n = 1; n <= 12; n++)
		CHECK(simhash_tf_weight(n) == want[n], "weight(%llu) = %u", (unsigned long long) n,
			  simhash_tf_weight(n));
	CHECK(simhash_tf_weight(100) == 14 && simhash_tf_weight(1000000) == 40, "weights of large counts");

	for (int round = 0; round < 300; round++)
	{
		size_t		n = (round < 50) ? (size_t) round : next() % 20000;
		uint64_t	distinct = 1 + next() % (round % 3 == 0 ? 7 : 100000);
		SimhashFeatureCounts c;

		for (size_t i = 0; i < n; i++)
			h[i] = (round % 5 == 0) ? next() % distinct : next() % distinct * UINT64_C(0x9E3779B97F4A7C15);
		simhash_counts_init(&c, round % 4 == 0 ? 0 : n / 8, zalloc, free);
		for (size_t done = 0; done < n;)
		{
			size_t		k = 1 + next() % 100;

			if (k > n - done)
				k = n - done;
			simhash_counts_add(&c, h + done, k);
			done += k;
		}
		CHECK(simhash_counts_fingerprint(&c) == reference(h, n), "round %d n=%zu", round, n);
		CHECK(simhash_counts_fingerprint_portable(&c, false) == reference(h, n),
			  "portable, round %d n=%zu", round, n);
		simhash_counts_free(&c);
	}

	/* simhash_v2: features flagged CJK vote with min(n, 8), the others as before */
	for (uint64_t n = 1; n <= 12; n++)
		CHECK(simhash_tf_weight_v2(n, true) == (n < 8 ? n : 8) &&
			  simhash_tf_weight_v2(n, false) == simhash_tf_weight(n), "weight_v2(%llu)",
			  (unsigned long long) n);
	CHECK(simhash_tf_weight_v2(1000000, true) == 8, "weight_v2 of a large count");
	for (int round = 0; round < 200; round++)
	{
		size_t		n = (round < 30) ? (size_t) round : next() % 20000;
		uint64_t	distinct = 1 + next() % (round % 3 == 0 ? 7 : 5000);
		uint64_t	cjk_below = (round % 4 == 0) ? UINT64_MAX : (round % 4 == 1) ? 0 : next();
		static bool cjk[100000];
		SimhashFeatureCounts c;

		for (size_t i = 0; i < n; i++)
		{
			h[i] = (round % 5 == 0) ? next() % distinct : next() % distinct * UINT64_C(0x9E3779B97F4A7C15);
			cjk[i] = h[i] < cjk_below;
		}
		simhash_counts_init(&c, n / 8, zalloc, free);
		for (size_t done = 0; done < n;)
		{
			size_t		k = 1 + next() % 100;

			if (k > n - done)
				k = n - done;
			simhash_counts_add_cjk(&c, h + done, cjk + done, k);
			done += k;
		}
		CHECK(simhash_counts_fingerprint_v2(&c) == reference_v(h, n, cjk_below),
			  "v2 round %d n=%zu", round, n);
		CHECK(simhash_counts_fingerprint_portable(&c, true) == reference_v(h, n, cjk_below),
			  "v2 portable, round %d n=%zu", round, n);
		CHECK((n > 0) == (simhash_counts_distinct(&c) > 0), "distinct, round %d", round);
		/* without CJK features v2 equals v1 */
		if (cjk_below == 0)
			CHECK(simhash_counts_fingerprint_v2(&c) == simhash_counts_fingerprint(&c),
				  "v2 = v1 without CJK, round %d", round);
		simhash_counts_free(&c);
	}

	/*
	 * The SIMD and portable vote against a direct sum over the table, with
	 * counts set in place up to 2^32 - 1 (weights up to 64, which no test can
	 * reach by counting): every lane bound of the SIMD sums is exercised.
	 */
	for (int round = 0; round < 100; round++)
	{
		size_t		n = (round < 20) ? (size_t) round : next() % 5000;
		bool		v2 = round % 2;
		SimhashFeatureCounts c;
		long long	v[64] = {0};
		uint64_t	want = 0;

		/* a third of the rounds: hashes with nearly every bit set, for full lanes */
		for (size_t i = 0; i < n; i++)
			h[i] = next() % 4 == 0 ? 0 : (round % 3 == 0)
				? ~(next() & next() & next() & next() & next()) : next();
		simhash_counts_init(&c, 0, zalloc, free);
		simhash_counts_add(&c, h, n);
		for (size_t i = 0; i <= c.used; i++)
		{
			uint64_t   *count = i < c.used ? &c.slots[c.occupied[i]].count : &c.zero_count;
			uint64_t	key = i < c.used ? c.slots[c.occupied[i]].key : 0;
			uint64_t	r = next();
			long long	w;

			if (*count == 0)
				continue;
			/* mostly the largest counts, else any below 2^32 */
			*count = (r % 3 != 0) ? UINT32_MAX - r % 1000 : 1 + (r >> 32) % UINT32_MAX;
			if (v2 && (r & 8))
				*count |= SIMHASH_COUNT_CJK;
			w = v2 ? simhash_tf_weight_v2(*count & ~SIMHASH_COUNT_CJK, (*count & SIMHASH_COUNT_CJK) != 0)
				: simhash_tf_weight(*count);
			for (int b = 0; b < 64; b++)
				v[b] += ((key >> b) & 1) ? w : -w;
		}
		for (int b = 0; b < 64; b++)
			if (v[b] > 0)
				want |= UINT64_C(1) << b;
		CHECK((v2 ? simhash_counts_fingerprint_v2(&c) : simhash_counts_fingerprint(&c)) == want,
			  "large weights, round %d n=%zu", round, n);
		CHECK(simhash_counts_fingerprint_portable(&c, v2) == want,
			  "large weights, portable, round %d n=%zu", round, n);
		simhash_counts_free(&c);
	}

	return unit_report("test_tfweight");
}
