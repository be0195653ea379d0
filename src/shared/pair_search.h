/*
 * pair_search.h
 *		The pair search within a memory budget: every pair of rows
 *		(fingerprint, 64-bit key) within max_distance, found once, with the
 *		rows in memory or split into temporary files by the bits of each
 *		table group's block (see core/blocks.h, core/rowpairs.h).  Used by
 *		the dedup jobs (simhash_pairs, simhash_groups) and the radius join.
 */
#ifndef SIMHASH_SHARED_PAIR_SEARCH_H
#define SIMHASH_SHARED_PAIR_SEARCH_H

#include "postgres.h"

#include "core/blocks.h"
#include "core/rowpairs.h"
#include "shared/pair_search_parallel.h"
#include "shared/progress.h"

typedef struct PairSearch PairSearch;

/* Bytes the search needs per row held in memory */
#define PAIR_SEARCH_ROW_BYTES (2 * sizeof(uint64) + SIMHASH_ROW_PAIRS_WORK(1) - 8)

/*
 * A search over rows added one by one, holding at most budget bytes of rows
 * in memory (beyond that they go to temporary files).  est_rows (may be
 * -1) sizes the split.
 */
extern PairSearch *pair_search_create(const SimhashBlocks *b, Size budget,
									  double est_rows, DedupProgress *progress);
extern void pair_search_add(PairSearch *s, uint64 hash, uint64 key);

/*
 * The setting the budget comes from, for messages (default
 * maintenance_work_mem): its name, and what to raise in a hint.
 */
extern void pair_search_set_budget_name(PairSearch *s, const char *name,
										const char *settings);

/*
 * Pass only the star pairs (core/rowpairs.h: in each run of equal
 * fingerprints its least key with the others; for each matching pair of
 * runs, each run's least key with the other's greater keys): as many pairs
 * as rows for a run of equal fingerprints instead of their square.  The
 * keys must be distinct.
 */
extern void pair_search_set_star(PairSearch *s);

/*
 * Find every pair within max_distance once, holding at most budget bytes
 * (which may be less than at creation), and pass them to fn in batches.
 */
extern void pair_search_run(PairSearch *s, Size budget, PairSearchFn fn, void *arg);
/* bytes written to temporary files so far */
extern uint64 pair_search_spilled_bytes(const PairSearch *s);
extern void pair_search_free(PairSearch *s);

#endif							/* SIMHASH_SHARED_PAIR_SEARCH_H */
