/*
 * cost.c
 *		Cost estimate of a simhash index scan (design: README.md): the generic
 *		estimate (pages and tuples in proportion to the selectivity of the
 *		<@ clauses), plus the search of the run: a start, and for each table
 *		the radius's probe plan probes (core/probe_plan.h), a descent per
 *		prefix probed; or, when the plan would touch more pages than table
 *		0's leaves (simhash_search_reads_all()), those leaves.  See
 *		"Calibration" below.
 */
#include "postgres.h"

#include "access/genam.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/selfuncs.h"

#include "am.h"
#include "core/probe_plan.h"
#include "types/planner.h"

/*
 * Calibration (doc/joins.md, "Costs"; bench/join.sh).  Per lookup, in
 * cpu_operator_cost: SCAN_START_COST, plus SCAN_TABLE_COST per table other
 * than table 0 that the plan probes (its first descent from the root, and
 * resolving in table 0 the hashes it finds: table 0 holds the TIDs, README.md
 * "Format"), plus SCAN_DESCENT_COST per prefix probed (a descent that
 * shares its upper pages with the previous one).
 * The constants come from index nested loops of new rows against the 10M
 * corpus of bench/join.sh, timed beside a sequential count(*) of the corpus
 * (whose cost in units gives the time of one unit), at radius 0 (table 0,
 * 1 prefix), 3 (4 tables, 4 prefixes) and 6 (4, 52): a prefix costs about
 * SCAN_DESCENT_COST, a table beyond table 0 about SCAN_TABLE_COST.
 * SCAN_TABLE_COST is set so that the crossover with the radius join at
 * radius 3 falls where bench/join.sh's planner grid finds it (near 100k
 * new rows against 10M).  A faster radius-3 lookup (fewer pages to probe or resolve)
 * would lower SCAN_TABLE_COST first; cheaper multi-prefix probes at radius
 * 4 to 6 lower SCAN_DESCENT_COST.  At 1M rows a prefix costs about a third
 * as much (the index fits in the CPU's caches): there the index nested
 * loop is chosen a little less often than it could be.
 */
#define SCAN_START_COST		100.0	/* per lookup */
#define SCAN_TABLE_COST		640.0	/* per table probed but table 0 */
#define SCAN_DESCENT_COST	670.0	/* per prefix probed */
#define SCAN_LEAF_COST		100.0	/* per leaf read whole (plus an operator per entry) */

/* The search of one run of nentries at radius r, in cpu_operator_cost. */
static double
lookup_cost(const SimhashBlocks *blocks, int radius, double nentries)
{
	const SimhashProbePlan *plan;
	double		tables = 0;

	if (radius < 0)
		return SCAN_START_COST;
	if (simhash_search_reads_all(blocks, radius, (uint64) nentries))
		return SCAN_START_COST +
			(nentries / SIMHASH_LEAF_ENTRIES_EST + 1) * SCAN_LEAF_COST + nentries;
	plan = simhash_search_plan(blocks, radius);
	for (int t = 1; t < plan->ntables; t++)
		if (plan->e[t] >= 0)
			tables++;
	return SCAN_START_COST + tables * SCAN_TABLE_COST +
		(double) plan->cost * SCAN_DESCENT_COST;
}

void
simhash_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
					 Cost *indexStartupCost, Cost *indexTotalCost,
					 Selectivity *indexSelectivity, double *indexCorrelation,
					 double *indexPages)
{
	IndexOptInfo *index = path->indexinfo;
	GenericCosts costs;
	Relation	rel;
	SimhashOptions *opts;
	SimhashBlocks blocks;
	List	   *quals = NIL;
	ListCell   *lc;
	double		entries = Max(index->tuples, 1);
	double		search;
	int			radius;

	MemSet(&costs, 0, sizeof(costs));
	genericcostestimate(root, path, loop_count, &costs);

	rel = index_open(index->indexoid, NoLock);
	opts = (SimhashOptions *) rel->rd_options;
	if (!simhash_blocks_init(&blocks, opts ? opts->blocks : SIMHASH_DEFAULT_BLOCKS,
							 opts ? opts->max_distance : SIMHASH_DEFAULT_MAX_DISTANCE))
		simhash_blocks_init(&blocks, SIMHASH_DEFAULT_BLOCKS, SIMHASH_DEFAULT_MAX_DISTANCE);
	index_close(rel, NoLock);

	/* the smallest ball drives the search (scan.c) */
	foreach(lc, path->indexclauses)
		quals = list_concat(quals, lfirst_node(IndexClause, lc)->indexquals);
	radius = simhash_clauses_radius(root, quals, SIMHASH_DEFAULT_MAX_DISTANCE);

	if (path->indexorderbys == NIL)
		search = lookup_cost(&blocks, radius, entries);
	else
	{
		/* ordered: rings 0, 1, ... up to the radius, or until one reads all */
		if (quals == NIL)
			radius = 64;
		search = 0;
		for (int r = 0; r <= radius; r++)
		{
			search += lookup_cost(&blocks, r, entries);
			if (simhash_search_reads_all(&blocks, r, (uint64) entries))
				break;
		}
	}
	costs.indexStartupCost += search * cpu_operator_cost;
	costs.indexTotalCost += search * cpu_operator_cost;

	*indexStartupCost = costs.indexStartupCost;
	*indexTotalCost = costs.indexTotalCost;
	*indexSelectivity = costs.indexSelectivity;
	*indexCorrelation = 0;
	*indexPages = costs.numIndexPages;
}
