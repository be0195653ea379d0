/*
 * simhash.c
 *		The module's magic block.  Each concern lives in its own file:
 *		- pure C (no server headers): vote.c (bit vote), tokenizer.c
 *		  (tokens, shingles, feature hash), tfweight.c (tf-weighted vote),
 *		  blocks.c (block permutations, radix sort, pair scan);
 *		- SQL objects: type.c (simhash64), distance.c (<~>,
 *		  hamming_distance), ball.c (simhash_ball, <@, simhash_within),
 *		  planner.c (planner support), compute.c and text_features.c
 *		  (fingerprints, tokens, shingles, features), aggregate.c
 *		  (simhash_agg), find_all.c (simhash_find_all);
 *		- the index access method: am.h (design and page layout),
 *		  am_handler.c, am_build.c, am_insert.c, am_scan.c, am_vacuum.c,
 *		  am_cost.c, am_validate.c, am_runs.c, am_pages.c, am_check.c.
 */
#include "postgres.h"
#include "fmgr.h"

PG_MODULE_MAGIC;
