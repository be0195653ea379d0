/*
 * test_union_find.c: unit tests of the union-find of the group jobs
 * (src/core/union_find.c) against a reference labelling by breadth-first
 * search: random pairs over random row counts, chains in both directions,
 * self-pairs, rows never paired.  Prints "test_union_find: N passed, N
 * failed".
 */
#include "union_find.h"

#include <stdlib.h>
#include <string.h>

#include "unit.h"

/* the least row of each row's component, by BFS over the pairs' graph */
static void
reference_components(uint64_t nrows, const uint32_t *pa, const uint32_t *pb,
					 size_t npairs, uint32_t *least)
{
	uint32_t   *queue = malloc(sizeof(uint32_t) * (nrows + 1));

	for (uint64_t i = 0; i < nrows; i++)
		least[i] = UINT32_MAX;
	/* rows in increasing order: the first to reach a component is its least */
	for (uint64_t s = 0; s < nrows; s++)
	{
		size_t		head = 0,
					tail = 0;

		if (least[s] != UINT32_MAX)
			continue;
		least[s] = (uint32_t) s;
		queue[tail++] = (uint32_t) s;
		while (head < tail)
		{
			uint32_t	x = queue[head++];

			for (size_t p = 0; p < npairs; p++)
			{
				uint32_t	y = pa[p] == x ? pb[p] : pb[p] == x ? pa[p] : UINT32_MAX;

				if (y != UINT32_MAX && least[y] == UINT32_MAX)
				{
					least[y] = (uint32_t) s;
					queue[tail++] = y;
				}
			}
		}
	}
	free(queue);
}

/* union npairs pairs over nrows rows and compare with the reference */
static void
check_pairs(const char *what, uint64_t nrows, const uint32_t *pa,
			const uint32_t *pb, size_t npairs)
{
	SimhashUnion u;
	uint32_t   *parent = malloc(sizeof(uint32_t) * (nrows ? nrows : 1));
	uint8_t    *linked = malloc(simhash_union_bytes(nrows));
	uint32_t   *least = malloc(sizeof(uint32_t) * (nrows ? nrows : 1));
	int			bad_root = 0,
				bad_linked = 0;

	simhash_union_init(&u, nrows, parent, linked);
	for (size_t p = 0; p < npairs; p++)
		simhash_union_pair(&u, pa[p], pb[p]);
	reference_components(nrows, pa, pb, npairs, least);
	for (uint64_t r = 0; r < nrows; r++)
	{
		bool		in_pair = false;

		for (size_t p = 0; p < npairs && !in_pair; p++)
			in_pair = pa[p] == r || pb[p] == r;
		bad_root += simhash_union_find(&u, r) != least[r];
		bad_linked += simhash_union_linked(&u, r) != in_pair;
	}
	CHECK(bad_root == 0, "%s: %d rows with the wrong root", what, bad_root);
	CHECK(bad_linked == 0, "%s: %d rows wrongly linked", what, bad_linked);
	free(parent);
	free(linked);
	free(least);
}

int
main(void)
{
	uint32_t	pa[600] = {0},
				pb[600] = {0};

	unit_seed(12);
	CHECK(simhash_union_bytes(0) == 1, "bytes of 0 rows");
	CHECK(simhash_union_bytes(16) == 16 * 4 + 3, "bytes of 16 rows");
	check_pairs("no rows", 0, pa, pb, 0);
	check_pairs("no pairs", 10, pa, pb, 0);

	/* a chain joined from its far end, and one from its near end */
	for (uint32_t i = 0; i < 99; i++)
	{
		pa[i] = 99 - i;
		pb[i] = 98 - i;
	}
	check_pairs("chain downwards", 100, pa, pb, 99);
	for (uint32_t i = 0; i < 99; i++)
	{
		pa[i] = i + 1;
		pb[i] = i;
	}
	check_pairs("chain upwards", 120, pa, pb, 99);

	/* self-pairs link a row without joining anything */
	pa[0] = pb[0] = 3;
	pa[1] = 5;
	pb[1] = 7;
	check_pairs("self-pair", 9, pa, pb, 2);

	/* random pairs, sparse to dense */
	for (int round = 0; round < 200; round++)
	{
		uint64_t	nrows = 1 + next() % 300;
		size_t		npairs = next() % 600;
		char		what[64];

		for (size_t p = 0; p < npairs; p++)
		{
			pa[p] = (uint32_t) (next() % nrows);
			pb[p] = (uint32_t) (next() % nrows);
		}
		snprintf(what, sizeof(what), "random %d (%d rows, %d pairs)",
				 round, (int) nrows, (int) npairs);
		check_pairs(what, nrows, pa, pb, npairs);
	}
	return unit_report("test_union_find");
}
