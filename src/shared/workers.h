/*
 * workers.h
 *		The one worker count of the parallel heap scans (the dedup jobs'
 *		read, CREATE INDEX's scan and build) and simhash.parallel_min_rows.
 */
#ifndef SIMHASH_SHARED_WORKERS_H
#define SIMHASH_SHARED_WORKERS_H

#include "postgres.h"

#include "utils/relcache.h"

/* simhash.parallel_min_rows: fewest rows for which parallel workers start */
extern int	simhash_parallel_min_rows;

/*
 * Parallel workers for a scan of rel of about reltuples rows (< 0: not yet
 * counted), at most max_workers; 0 below simhash.parallel_min_rows.
 */
extern int	simhash_scan_workers(Relation rel, double reltuples, int max_workers);

#endif							/* SIMHASH_SHARED_WORKERS_H */
