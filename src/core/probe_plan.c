/*
 * probe_plan.c
 *		The probe plan of a radius lookup in a permuted-table index: the
 *		uniform plan, and the cheaper cover of every error pattern (the
 *		method is in probe_plan.h).  Pure C.
 */
#include "probe_plan.h"

#include <string.h>

int
simhash_probe_uniform_distance(const SimhashBlocks *b, int radius)
{
	int			m = b->nblocks;
	int			k = b->max_distance;
	int			rest = radius % m - k;

	return (m - k) * (radius / m) + (rest > 0 ? rest : 0);
}

uint64_t
simhash_probe_count(int bits, int e)
{
	uint64_t	total = 0;

	for (int j = 0; j <= e && j <= bits; j++)
	{
		uint64_t	c = simhash_binomial(bits, j);

		if (c == UINT64_MAX || total + c < total)
			return UINT64_MAX;
		total += c;
	}
	return total;
}

/* a + b, saturating */
static uint64_t
add_sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* The plan's total cost (saturating). */
static uint64_t
plan_cost(const SimhashBlocks *b, const SimhashProbePlan *plan)
{
	uint64_t	cost = 0;

	for (int t = 0; t < plan->ntables; t++)
		cost = add_sat(cost, simhash_probe_count(simhash_prefix_bits(b, t), plan->e[t]));
	return cost;
}

/* Start *plan for b and radius r: no table probed. */
static void
plan_begin(const SimhashBlocks *b, int radius, SimhashProbePlan *plan)
{
	memset(plan, 0, sizeof(*plan));
	plan->nblocks = b->nblocks;
	plan->max_distance = b->max_distance;
	plan->radius = radius < 0 ? 0 : radius > 64 ? 64 : radius;
	plan->ntables = b->ntables;
	for (int t = 0; t < b->ntables; t++)
		plan->e[t] = -1;
}

void
simhash_probe_plan_uniform(const SimhashBlocks *b, int radius, SimhashProbePlan *plan)
{
	int			e;

	plan_begin(b, radius, plan);
	e = simhash_probe_uniform_distance(b, plan->radius);
	for (int t = 0; t < b->ntables; t++)
	{
		int			bits = simhash_prefix_bits(b, t);

		plan->e[t] = (int8_t) (e < bits ? e : bits);
	}
	plan->cost = plan_cost(b, plan);
}

/* Error patterns of sum r over b's blocks (saturating). */
static uint64_t
count_patterns(const SimhashBlocks *b, int r)
{
	uint64_t	ways[65] = {1};

	for (int i = 0; i < b->nblocks; i++)
		for (int s = r; s >= 0; s--)
		{
			uint64_t	w = 0;

			for (int c = 0; c <= b->width[i] && c <= s; c++)
				w = add_sat(w, ways[s - c]);
			ways[s] = w;
		}
	return ways[r];
}

size_t
simhash_probe_plan_space(const SimhashBlocks *b, int radius)
{
	int			r = radius < 0 ? 0 : radius > 64 ? 64 : radius;
	uint64_t	n = count_patterns(b, r);

	/* the greedy cover passes over the cells about once per table, the
	 * pruning up to once per table and level */
	if (b->ntables > SIMHASH_MAX_INDEX_TABLES ||
		n > SIMHASH_PROBE_PLAN_MAX_CELLS / (uint64_t) b->ntables ||
		n * b->ntables * (b->ntables + r + 1) > SIMHASH_PROBE_PLAN_MAX_WORK)
		return 0;
	return (size_t) n * ((size_t) b->ntables + 1 + sizeof(uint32_t));
}

/* the enumeration of error patterns */
typedef struct Patterns
{
	const SimhashBlocks *b;
	int			ntables;
	uint64_t	tables[SIMHASH_MAX_INDEX_TABLES];	/* each table's blocks */
	uint8_t		count[64];		/* the pattern being built */
	int			above[65];		/* bits the blocks from i on can hold */
	/* each pattern: store its per-table sums here ... */
	uint8_t    *sums;			/* table-major: sums[t * npatterns + i] */
	size_t		npatterns;
	size_t		n;
	/* ... or check it against this plan */
	const SimhashProbePlan *plan;
	bool		all_covered;
} Patterns;

/* Prepare the enumeration over b's blocks. */
static void
patterns_init(Patterns *p, const SimhashBlocks *b)
{
	memset(p, 0, offsetof(Patterns, count));
	p->b = b;
	p->ntables = b->ntables;
	for (int t = 0; t < b->ntables; t++)
		p->tables[t] = simhash_table_blocks(b, t);
	p->above[b->nblocks] = 0;
	for (int i = b->nblocks - 1; i >= 0; i--)
		p->above[i] = p->above[i + 1] + b->width[i];
	p->sums = NULL;
	p->n = 0;
	p->plan = NULL;
	p->all_covered = true;
}

/* The complete pattern in p->count: store its sums or check it. */
static void
pattern_visit(Patterns *p)
{
	bool		covered = false;

	for (int t = 0; t < p->ntables; t++)
	{
		int			s = 0;

		for (uint64_t set = p->tables[t]; set; set &= set - 1)
			s += p->count[__builtin_ctzll(set)];
		if (p->sums)
			p->sums[t * p->npatterns + p->n] = (uint8_t) s;
		else if (s <= p->plan->e[t])
		{
			covered = true;
			break;
		}
	}
	if (!p->sums && !covered)
		p->all_covered = false;
	p->n++;
}

/* Every pattern with blocks i.. holding `left` more bits. */
static void
patterns_from(Patterns *p, int i, int left)
{
	if (i == p->b->nblocks)
	{
		pattern_visit(p);
		return;
	}
	for (int c = 0; c <= p->b->width[i] && c <= left; c++)
	{
		if (left - c > p->above[i + 1])
			continue;
		p->count[i] = (uint8_t) c;
		patterns_from(p, i + 1, left - c);
		if (!p->sums && !p->all_covered)
			return;
	}
}

bool
simhash_probe_plan_covers(const SimhashBlocks *b, const SimhashProbePlan *plan)
{
	Patterns	p;

	if (plan->ntables != b->ntables || plan->nblocks != b->nblocks ||
		plan->max_distance != b->max_distance)
		return false;
	patterns_init(&p, b);
	p.plan = plan;
	if (plan->radius <= 64)
		patterns_from(&p, 0, plan->radius);
	return p.all_covered;
}

/*
 * Is every pattern covered by the plan (by their table-major sums)?
 * scratch: n bytes.
 */
static bool
sums_covered(const uint8_t *sums, size_t n, int ntables, const int8_t *e,
			 uint8_t *scratch)
{
	memset(scratch, 0, n);
	for (int t = 0; t < ntables; t++)
	{
		const uint8_t *col = sums + (size_t) t * n;

		if (e[t] >= 0)
			for (size_t i = 0; i < n; i++)
				scratch[i] |= col[i] <= e[t];
	}
	for (size_t i = 0; i < n; i++)
		if (!scratch[i])
			return false;
	return true;
}

void
simhash_probe_plan(const SimhashBlocks *b, int radius, void *space,
				   SimhashProbePlan *plan)
{
	SimhashProbePlan uniform;
	Patterns	p;
	uint8_t    *covered;
	uint32_t   *live;
	uint8_t		tbits[SIMHASH_MAX_INDEX_TABLES];	/* each table's prefix bits */
	uint64_t	within[65][65];	/* [bits][e]: prefixes within e bits */
	bool		have[65] = {false};
	size_t		left;
	int			r;
	int			order[SIMHASH_MAX_INDEX_TABLES];
	uint64_t	tcost[SIMHASH_MAX_INDEX_TABLES];

	simhash_probe_plan_uniform(b, radius, &uniform);
	r = uniform.radius;
	if (space == NULL || simhash_probe_plan_space(b, r) == 0)
	{
		*plan = uniform;
		return;
	}

	/* every pattern's sum over each table's prefix blocks */
	patterns_init(&p, b);
	p.npatterns = (size_t) count_patterns(b, r);
	live = space;
	p.sums = (uint8_t *) (live + p.npatterns);
	patterns_from(&p, 0, r);
	covered = p.sums + p.n * p.ntables;
	for (size_t i = 0; i < p.n; i++)
		live[i] = (uint32_t) i;

	for (int t = 0; t < p.ntables; t++)
	{
		int			bits = simhash_prefix_bits(b, t);

		tbits[t] = (uint8_t) bits;
		if (!have[bits])
			for (int e = 0; e <= 64; e++)
				within[bits][e] = simhash_probe_count(bits, e);
		have[bits] = true;
	}

	/* greedy: the probe adding the most patterns per added descent */
	plan_begin(b, r, plan);
	left = p.n;				/* uncovered patterns: live[0 .. left - 1] */
	while (left > 0)
	{
		double		best = -1;
		int			best_t = -1,
					best_e = -1;

		for (int t = 0; t < p.ntables; t++)
		{
			size_t		hist[65] = {0};
			size_t		gain = 0;
			int			bits = tbits[t];
			uint64_t	base = plan->e[t] < 0 ? 0 : within[bits][plan->e[t]];

			for (size_t j = 0; j < left; j++)
				hist[p.sums[t * p.n + live[j]]]++;
			for (int e = 0; e <= r && e <= bits; e++)
			{
				double		ratio;
				uint64_t	cost;

				gain += hist[e];
				if (e <= plan->e[t] || gain == 0)
					continue;
				cost = within[bits][e] - base;
				ratio = (double) gain / (double) cost;
				if (ratio > best)
				{
					best = ratio;
					best_t = t;
					best_e = e;
				}
			}
		}
		if (best_t < 0)
			break;				/* cannot happen: e = min(r, bits) covers all */
		plan->e[best_t] = (int8_t) best_e;
		{
			size_t		kept = 0;

			for (size_t j = 0; j < left; j++)
				if (p.sums[best_t * p.n + live[j]] > best_e)
					live[kept++] = live[j];
			left = kept;
		}
	}

	/*
	 * prune: lower each table's e, the most expensive first, to the largest
	 * sum of a pattern that no other table covers
	 */
	for (int t = 0; t < p.ntables; t++)
	{
		order[t] = t;
		tcost[t] = plan->e[t] < 0 ? 0 : within[tbits[t]][plan->e[t]];
	}
	for (int i = 1; i < p.ntables; i++)
		for (int j = i; j > 0 && tcost[order[j - 1]] < tcost[order[j]]; j--)
		{
			int			a = order[j - 1];

			order[j - 1] = order[j];
			order[j] = a;
		}
	/* live[] becomes each pattern's number of covering tables */
	memset(live, 0, p.n * sizeof(uint32_t));
	for (int t = 0; t < p.ntables; t++)
		for (size_t i = 0; i < p.n; i++)
			live[i] += p.sums[t * p.n + i] <= plan->e[t];
	for (int j = 0; j < p.ntables; j++)
	{
		int			t = order[j];
		const uint8_t *col = p.sums + t * p.n;
		int			need = -1;	/* the largest sum only t covers */

		if (plan->e[t] < 0)
			continue;
		for (size_t i = 0; i < p.n; i++)
			if (col[i] <= plan->e[t] && live[i] == 1 && col[i] > need)
				need = col[i];
		for (size_t i = 0; i < p.n; i++)
			if (col[i] <= plan->e[t] && col[i] > need)
				live[i]--;		/* was covered twice at least */
		plan->e[t] = (int8_t) need;
	}
	plan->cost = plan_cost(b, plan);
	plan->planned = true;

	if (left > 0 || !sums_covered(p.sums, p.n, p.ntables, plan->e, covered) ||
		plan->cost >= uniform.cost)
		*plan = uniform;
}
