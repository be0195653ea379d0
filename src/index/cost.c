/*
 * cost.c
 *		Cost estimate of a simhash index scan (design: am.h): the generic
 *		estimate (pages and tuples in proportion to the selectivity of the
 *		<@ clauses), plus the probes: for each table of each run, a descent
 *		of its tree.
 */
#include "postgres.h"

#include "access/genam.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/selfuncs.h"

#include "am.h"

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
	double		ntables;
	double		probes;

	MemSet(&costs, 0, sizeof(costs));
	genericcostestimate(root, path, loop_count, &costs);

	/* C(blocks, max_distance) trees, a few levels each (pages are cached) */
	rel = index_open(index->indexoid, NoLock);
	opts = (SimhashOptions *) rel->rd_options;
	ntables = (double) simhash_binomial(opts ? opts->blocks : SIMHASH_DEFAULT_BLOCKS,
										opts ? opts->max_distance : SIMHASH_DEFAULT_MAX_DISTANCE);
	index_close(rel, NoLock);
	probes = ntables * 3;
	costs.indexStartupCost += probes * (cpu_operator_cost * 50 + random_page_cost * 0.05);
	costs.indexTotalCost += probes * (cpu_operator_cost * 50 + random_page_cost * 0.05);

	*indexStartupCost = costs.indexStartupCost;
	*indexTotalCost = costs.indexTotalCost;
	*indexSelectivity = costs.indexSelectivity;
	*indexCorrelation = 0;
	*indexPages = costs.numIndexPages;
}
