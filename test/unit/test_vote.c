/*
 * test_vote.c: unit tests of the bit vote (src/core/vote.c) against a naive
 * reference, outside the server.  Prints "N passed, N failed".
 */
#include "vote.h"

#include <stdio.h>

#include "unit.h"
#include <stdlib.h>

static uint64_t
naive(const uint64_t *h, size_t n)
{
	uint64_t	r = 0;

	for (int i = 0; i < 64; i++)
	{
		long long	v = 0;

		for (size_t k = 0; k < n; k++)
			v += ((h[k] >> i) & 1) ? 1 : -1;
		if (v > 0)
			r |= UINT64_C(1) << i;
	}
	return r;
}

static uint64_t
naive_weighted(const uint64_t *h, const uint64_t *q, size_t n)
{
	uint64_t	r = 0;

	for (int i = 0; i < 64; i++)
	{
		__int128	v = 0;

		for (size_t k = 0; k < n; k++)
			v += ((h[k] >> i) & 1) ? (__int128) q[k] : -(__int128) q[k];
		if (v > 0)
			r |= UINT64_C(1) << i;
	}
	return r;
}

/* hashes with bit density p/8, so counts sit near n/2 only sometimes */
static void
fill(uint64_t *h, size_t n, int density)
{
	for (size_t k = 0; k < n; k++)
	{
		uint64_t	x = next();

		if (density < 4)
			x &= next();
		if (density > 4)
			x |= next();
		h[k] = x;
	}
}

int
main(void)
{
	unit_seed(42);
	static uint64_t h[200000];
	static uint64_t q[200000];
	SimhashVote v;
	SimhashWeightedVote w,
				w2;

	/* empty */
	simhash_vote_init(&v);
	CHECK(simhash_vote_result(&v) == 0, "empty vote is 0");

	/* random sizes, added in random chunks */
	for (int round = 0; round < 300; round++)
	{
		size_t		n = (round < 100) ? (size_t) round : next() % 20000;
		size_t		done = 0;

		fill(h, n, 2 + round % 5);
		simhash_vote_init(&v);
		while (done < n)
		{
			size_t		chunk = 1 + next() % 40;

			if (chunk > n - done)
				chunk = n - done;
			simhash_vote_add(&v, h + done, chunk);
			done += chunk;
		}
		CHECK(simhash_vote_result(&v) == naive(h, n), "unweighted n=%zu", n);
	}

	/* exact ties: each hash and its complement -> all bits 0 */
	for (size_t k = 0; k < 1000; k += 2)
	{
		h[k] = next();
		h[k + 1] = ~h[k];
	}
	simhash_vote_init(&v);
	simhash_vote_add(&v, h, 1000);
	CHECK(simhash_vote_result(&v) == 0, "ties give 0");

	/* many features: lane counters flushed several times */
	fill(h, 200000, 4);
	simhash_vote_init(&v);
	simhash_vote_add(&v, h, 200000);
	CHECK(simhash_vote_result(&v) == naive(h, 200000), "200000 features");

	/* weighted: weight 1 equals unweighted */
	fill(h, 777, 4);
	simhash_wvote_init(&w);
	for (size_t k = 0; k < 777; k++)
		simhash_wvote_add(&w, h[k], simhash_weight_quantise(1.0));
	CHECK(simhash_wvote_result(&w) == naive(h, 777), "weight 1 == unweighted");

	/* weighted against the exact reference, and merge in any split */
	for (int round = 0; round < 200; round++)
	{
		size_t		n = next() % 3000;
		size_t		split = n ? next() % n : 0;

		fill(h, n, 2 + round % 5);
		for (size_t k = 0; k < n; k++)
		{
			double		wt = (round % 3 == 0) ? (double) (next() % 5)
				: (double) (next() % 1000000) / 997.0;

			q[k] = simhash_weight_quantise(wt);
		}
		simhash_wvote_init(&w);
		simhash_wvote_init(&w2);
		for (size_t k = 0; k < split; k++)
			simhash_wvote_add(&w, h[k], q[k]);
		for (size_t k = split; k < n; k++)
			simhash_wvote_add(&w2, h[k], q[k]);
		simhash_wvote_merge(&w2, &w);
		CHECK(simhash_wvote_result(&w2) == naive_weighted(h, q, n),
			  "weighted n=%zu", n);
		CHECK(!simhash_wvote_overflowed(&w2), "no overflow n=%zu", n);
	}

	/* maximum weights: exact, no overflow */
	fill(h, 5000, 4);
	simhash_wvote_init(&w);
	for (size_t k = 0; k < 5000; k++)
	{
		q[k] = simhash_weight_quantise(SIMHASH_MAX_WEIGHT);
		simhash_wvote_add(&w, h[k], q[k]);
	}
	CHECK(simhash_wvote_result(&w) == naive_weighted(h, q, 5000), "max weights");
	CHECK(!simhash_wvote_overflowed(&w), "max weights: no overflow");

	/* weight validation and quantisation */
	CHECK(simhash_weight_valid(0.0) && simhash_weight_valid(SIMHASH_MAX_WEIGHT), "valid weights");
	CHECK(!simhash_weight_valid(-1e-30) && !simhash_weight_valid(SIMHASH_MAX_WEIGHT * 2)
		  && !simhash_weight_valid(0.0 / 0.0) && !simhash_weight_valid(1.0 / 0.0), "invalid weights");
	CHECK(simhash_weight_quantise(1.0) == (UINT64_C(1) << 32), "quantise 1");
	CHECK(simhash_weight_quantise(0.5 / 4294967296.0) == 0, "quantise half unit rounds to even");

	/* pinned value: the vote of hashes 1..100 (an algorithm change fails this) */
	for (size_t k = 0; k < 100; k++)
		h[k] = (uint64_t) (k + 1) * UINT64_C(0x9E3779B97F4A7C15);
	simhash_vote_init(&v);
	simhash_vote_add(&v, h, 100);
	CHECK(simhash_vote_result(&v) == naive(h, 100), "pinned: reference");
	CHECK(simhash_vote_result(&v) == UINT64_C(0x1f0438107b19c034), "pinned: value");

	return unit_report("test_vote");
}
