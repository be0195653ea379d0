/*
 * pair_search_parallel.h
 *		The in-memory pair search: run to its end in batches of pairs, or
 *		split by table group across parallel workers
 *		(pair_search_parallel.c).  The budgeted search over rows added one
 *		by one, which calls it, is pair_search.h.
 */
#ifndef SIMHASH_SHARED_PAIR_SEARCH_PARALLEL_H
#define SIMHASH_SHARED_PAIR_SEARCH_PARALLEL_H

#include "postgres.h"

#include "core/blocks.h"
#include "core/rowpairs.h"
#include "shared/progress.h"

/* Called with each batch of pairs found: the rows' keys and distance */
typedef void (*PairSearchFn) (void *arg, const SimhashRowPair *pairs, size_t n);

/* pairs passed to a PairSearchFn at once */
#define PAIR_SEARCH_BATCH 1024

/*
 * Run a started row-pair search to its end, passing its pairs to fn in
 * batches (pairs: room for PAIR_SEARCH_BATCH); returns their number.
 */
extern uint64 pair_search_drain(SimhashRowPairs *r, SimhashRowPair *pairs,
								PairSearchFn fn, void *arg);

/*
 * Search n rows (hash[], key[]: consumed) with tables lo .. hi - 1 as
 * pair_search.c does in memory, split by table group across parallel
 * workers, passing every pair to fn (in the leader) and adding their number
 * to *npairs (star: the star pairs only, core/rowpairs.h); progress
 * reports the workers.  work (SIMHASH_ROW_PAIRS_WORK(n) bytes) is the
 * leader's scratch should no worker start; held is what the caller's
 * arrays (hash, key, work) take of budget, the rest is for the workers'
 * copies.  False, having done nothing, if the search is not worth parallel
 * workers (too few rows or groups, max_parallel_maintenance_workers is 0,
 * or budget bytes leave no room for a worker): then search serially.
 */
extern bool pair_search_parallel(const SimhashBlocks *b, uint64 *hash, uint64 *key,
								 size_t n, void *work, Size held, int lo, int hi,
								 bool exact, bool star, Size budget,
								 PairSearchFn fn, void *arg, uint64 *npairs,
								 DedupProgress *progress);

#endif							/* SIMHASH_SHARED_PAIR_SEARCH_PARALLEL_H */
