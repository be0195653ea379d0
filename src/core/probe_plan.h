/*
 * probe_plan.h
 *		Which prefixes of which tables a radius-r lookup in a permuted-table
 *		index must probe (the index's search, src/index/probe.c).  Pure C:
 *		no PostgreSQL headers; unit-tested in test/unit/test_probe_plan.c.
 *
 * The tables of blocks.h find every pair within k bits by an exact prefix
 * match in some table.  For a radius r > k, a lookup probes, in table t,
 * every prefix within e_t bits of the query's permuted prefix ("a probe
 * (t, e_t)", costing sum_{j <= e_t} C(prefix_bits_t, j) descents).  Which
 * (t, e_t) suffice?  Of two fingerprints r bits apart, only the "error
 * pattern" matters: the vector (c_0 .. c_{m-1}) of differing bits per block
 * (0 <= c_i <= width_i, sum = r).  Probe (t, e) finds the pair iff the
 * counts over t's chosen blocks sum to at most e.  A plan is exact iff it
 * covers every pattern of sum r (a pair closer than r has a pattern below
 * one of sum r component-wise, covered by whatever covers that one).
 *
 * The uniform plan probes every table at
 * e = (m - k) * floor(r / m) + max(0, r mod m - k): some m - k blocks hold
 * at most that many of the r bits.  The planned one is cheaper: at blocks 4,
 * max_distance 3, r = 4 a pattern either has a zero block (caught by the
 * exact prefix of the table choosing it: 4 probes) or is (1, 1, 1, 1)
 * (caught by any one table at e = 1: 17 probes, 16 new): 20 descents instead
 * of 4 x 17 = 68.  It is computed by enumerating the patterns (while they
 * are few enough: SIMHASH_PROBE_PLAN_MAX_CELLS), a greedy weighted set cover
 * over the candidate probes (the one adding the most uncovered patterns per
 * added descent first), then pruning: each table's e is lowered, most
 * expensive first, while the plan still covers every pattern.  When it is
 * not cheaper than the uniform plan, or the patterns are too many, the plan
 * is the uniform one.  Either way it is exact.
 */
#ifndef SIMHASH_PROBE_PLAN_H
#define SIMHASH_PROBE_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blocks.h"

/*
 * Patterns x tables cells the planner may enumerate (one byte each), and
 * cells x (tables + radius + 1), its work: beyond, the plan is uniform.  This
 * bounds the planning to tens of milliseconds, once per backend and
 * (configuration, radius) in the index.
 */
#define SIMHASH_PROBE_PLAN_MAX_CELLS (1 << 18)
#define SIMHASH_PROBE_PLAN_MAX_WORK (UINT64_C(1) << 22)

typedef struct SimhashProbePlan
{
	int			nblocks;		/* the configuration planned for */
	int			max_distance;
	int			radius;			/* 0 .. 64 */
	int			ntables;
	bool		planned;		/* from the pattern cover (else uniform) */
	uint64_t	cost;			/* prefixes probed over all tables (saturating) */
	int8_t		e[SIMHASH_MAX_INDEX_TABLES];	/* table t's prefix error;
												 * -1: not probed */
} SimhashProbePlan;

/* The uniform plan's prefix error for radius r (0 .. 64). */
extern int	simhash_probe_uniform_distance(const SimhashBlocks *b, int radius);

/* Prefixes of `bits` bits within e bits of one (saturating; 0 for e < 0). */
extern uint64_t simhash_probe_count(int bits, int e);

/*
 * Bytes of scratch space simhash_probe_plan() needs to plan radius r by
 * patterns; 0 if there are too many patterns (the plan is then uniform).
 * b must have at most SIMHASH_MAX_INDEX_TABLES tables.
 */
extern size_t simhash_probe_plan_space(const SimhashBlocks *b, int radius);

/*
 * Fill *plan for radius r (clamped to 0 .. 64).  space: NULL, or
 * simhash_probe_plan_space() bytes (the caller owns it; unused after).
 */
extern void simhash_probe_plan(const SimhashBlocks *b, int radius, void *space,
							   SimhashProbePlan *plan);

/* The uniform plan for radius r. */
extern void simhash_probe_plan_uniform(const SimhashBlocks *b, int radius,
									   SimhashProbePlan *plan);

/*
 * Does the plan find every pair within plan->radius bits?  Checks every
 * error pattern of sum radius (exhaustive; for tests and checks: no limit
 * on the patterns, no scratch space).
 */
extern bool simhash_probe_plan_covers(const SimhashBlocks *b, const SimhashProbePlan *plan);

#endif							/* SIMHASH_PROBE_PLAN_H */
