/*
 * test_probe_plan.c: the probe plans of src/core/probe_plan.c.
 *	- every plan (planned or uniform) covers every error pattern of its
 *	  radius, checked exhaustively, for every (blocks, max_distance) with
 *	  blocks 1 .. 12 and at most 1000 tables and radius 0 .. k + 8, where
 *	  the patterns are few enough to enumerate;
 *	- the check can fail: lowering any planned table's e by one (dropping
 *	  its farthest probes) leaves some pattern uncovered, and the checker
 *	  says so; so does a plan with a table dropped;
 *	- independently of the pattern model: random pairs at distance r,
 *	  permuted by the real tables, are found by some probe of the plan;
 *	- a planned plan costs no more than the uniform one, and at the default
 *	  (4, 3) radius 0 .. 6 it costs 1, 2, 3, 4, 20, 36, 52 prefixes (uniform:
 *	  4 up to radius 3, then 68).
 */
#include <stdlib.h>
#include <string.h>

#include "probe_plan.h"
#include "unit.h"

/* Is a pair (h1, h2) found by some probe of the plan (real permutations)? */
static int
pair_found(const SimhashBlocks *b, const SimhashProbePlan *plan, uint64_t h1, uint64_t h2)
{
	for (int t = 0; t < b->ntables; t++)
	{
		SimhashTable tab;

		if (plan->e[t] < 0)
			continue;
		simhash_table_init(b, t, &tab);
		if (__builtin_popcountll((simhash_table_permute(&tab, h1) ^
								  simhash_table_permute(&tab, h2)) & tab.prefix_mask) <= plan->e[t])
			return 1;
	}
	return 0;
}

/* A random value with exactly r bits set. */
static uint64_t
random_bits(int r)
{
	uint64_t	x = 0;

	while (__builtin_popcountll(x) < r)
		x |= UINT64_C(1) << (next() % 64);
	return x;
}

int
main(void)
{
	SimhashBlocks b;
	SimhashProbePlan plan,
				uniform,
				weaker;
	int			nplanned = 0,
				nuniform = 0,
				nchecked = 0,
				bad_cover = 0,
				bad_drop = 0,
				bad_cost = 0;

	unit_seed(13);
	for (int m = 1; m <= 12; m++)
		for (int k = 0; k < m; k++)
		{
			if (simhash_blocks_check(m, k, SIMHASH_MAX_INDEX_TABLES) != SIMHASH_BLOCKS_OK)
				continue;
			simhash_blocks_init(&b, m, k);
			for (int r = 0; r <= k + 8 && r <= 64; r++)
			{
				size_t		size = simhash_probe_plan_space(&b, r);
				void	   *space;

				if (size == 0)
					continue;	/* too many patterns to check exhaustively */
				space = malloc(size);
				simhash_probe_plan(&b, r, space, &plan);
				free(space);
				simhash_probe_plan_uniform(&b, r, &uniform);
				nchecked++;
				if (!simhash_probe_plan_covers(&b, &plan) || !simhash_probe_plan_covers(&b, &uniform))
				{
					bad_cover++;
					printf("not covered: blocks %d, max_distance %d, radius %d (planned %d)\n",
						   m, k, r, plan.planned);
				}
				if (plan.cost > uniform.cost)
					bad_cost++;
				if (!plan.planned)
				{
					nuniform++;
					continue;
				}
				nplanned++;
				/* drop one probe level of each table in turn: must be caught */
				for (int t = 0; t < b.ntables; t++)
				{
					if (plan.e[t] < 0)
						continue;
					weaker = plan;
					weaker.e[t]--;
					if (simhash_probe_plan_covers(&b, &weaker))
					{
						bad_drop++;
						printf("redundant probe kept or drop not caught: blocks %d, max_distance %d, radius %d, table %d\n",
							   m, k, r, t);
					}
				}
			}
		}
	CHECK(nchecked > 300, "configurations checked: %d", nchecked);
	CHECK(nplanned > 100, "planned: %d (uniform: %d)", nplanned, nuniform);
	CHECK(bad_cover == 0, "%d plans miss an error pattern", bad_cover);
	CHECK(bad_drop == 0, "%d probes could be dropped without the checker noticing", bad_drop);
	CHECK(bad_cost == 0, "%d plans cost more than the uniform plan", bad_cost);

	/* the checker fails a plan that misses a table's exact prefix */
	simhash_blocks_init(&b, 4, 3);
	simhash_probe_plan_uniform(&b, 3, &uniform);
	CHECK(simhash_probe_plan_covers(&b, &uniform), "uniform radius 3 covers");
	uniform.e[2] = -1;
	CHECK(!simhash_probe_plan_covers(&b, &uniform), "a dropped table is caught");

	/* the default configuration's costs */
	{
		static const uint64_t expect[7] = {1, 2, 3, 4, 20, 36, 52};

		for (int r = 0; r <= 6; r++)
		{
			void	   *space = malloc(simhash_probe_plan_space(&b, r));

			simhash_probe_plan(&b, r, space, &plan);
			free(space);
			CHECK(plan.cost == expect[r], "blocks 4, max_distance 3, radius %d: cost %llu, expected %llu",
				  r, (unsigned long long) plan.cost, (unsigned long long) expect[r]);
		}
	}

	/* real pairs, real permutations, for a few settings and radii */
	{
		static const int settings[][2] = {{4, 3}, {5, 3}, {6, 3}, {8, 3}, {6, 2}, {4, 2}, {3, 1}, {7, 4}};
		int			missed = 0,
					pairs = 0;

		for (size_t s = 0; s < sizeof(settings) / sizeof(settings[0]); s++)
		{
			simhash_blocks_init(&b, settings[s][0], settings[s][1]);
			for (int r = 0; r <= settings[s][1] + 6; r++)
			{
				size_t		size = simhash_probe_plan_space(&b, r);
				void	   *space = size ? malloc(size) : NULL;

				simhash_probe_plan(&b, r, space, &plan);
				free(space);
				for (int i = 0; i < 3000; i++)
				{
					uint64_t	h = next();
					int			d = (int) (next() % (r + 1));

					pairs++;
					if (!pair_found(&b, &plan, h, h ^ random_bits(d)))
						missed++;
				}
			}
		}
		CHECK(missed == 0, "%d of %d random pairs within the radius missed", missed, pairs);
	}

	/* without scratch space (or with too many patterns): the uniform plan */
	simhash_blocks_init(&b, 4, 3);
	simhash_probe_plan(&b, 5, NULL, &plan);
	CHECK(!plan.planned && plan.cost == 68, "no space: uniform (cost %llu)", (unsigned long long) plan.cost);
	simhash_blocks_init(&b, 16, 3);
	CHECK(simhash_probe_plan_space(&b, 10) == 0, "blocks 16, radius 10: too many patterns");

	printf("probe plans: %d configurations checked exhaustively (%d planned, %d uniform)\n",
		   nchecked, nplanned, nuniform);
	return unit_report("test_probe_plan");
}
