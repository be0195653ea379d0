/*
 * workers.c
 *		The one worker count of the parallel heap scans: the dedup jobs'
 *		read and key split, CREATE INDEX's scan; simhash.parallel_min_rows
 *		(defined in _PG_init) is also the threshold of the parallel pair
 *		search and of the parallel index build.
 */
#include "shared/workers.h"

#include <limits.h>

#include "miscadmin.h"
#include "access/parallel.h"
#include "optimizer/optimizer.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

int			simhash_parallel_min_rows = INT_MAX;	/* off: opt in per job */

/*
 * Workers for a parallel heap scan of rel (the jobs' read, CREATE INDEX's
 * scan) of about reltuples rows (< 0: not yet counted, 100 per block):
 * none below simhash.parallel_min_rows, else max_parallel_maintenance_workers
 * capped by max_workers and by the table's parallel_workers storage
 * parameter when it is set.
 */
int
simhash_scan_workers(Relation rel, double reltuples, int max_workers)
{
	int			nworkers = Min(max_parallel_maintenance_workers, max_workers);

	if (IsParallelWorker() || nworkers <= 0)
		return 0;
	if (reltuples < 0)
		reltuples = 100.0 * RelationGetNumberOfBlocks(rel);
	if (reltuples < (double) simhash_parallel_min_rows)
		return 0;
	if (RelationGetParallelWorkers(rel, -1) >= 0)
		nworkers = Min(nworkers, RelationGetParallelWorkers(rel, -1));
	return nworkers;
}
