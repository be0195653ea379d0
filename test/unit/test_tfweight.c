/*
 * test_tfweight.c: unit tests of the tf-weighted vote (src/tfweight.c)
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

/* reference: sort, count runs, vote with bitlen(n^2) */
static uint64_t
reference(const uint64_t *h, size_t n)
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
		simhash_counts_free(&c);
	}

	return unit_report("test_tfweight");
}
