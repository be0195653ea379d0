/*
 * simhash.c
 *		The module's magic block.  Each concern lives in its own file:
 *		type.c (simhash64), distance.c (<~>, hamming_distance), vote.c and
 *		tokenizer.c (pure algorithms), compute.c (fingerprint functions),
 *		text_features.c (simhash_tokens, simhash_shingle), aggregate.c
 *		(simhash_agg).
 */
#include "postgres.h"
#include "fmgr.h"

PG_MODULE_MAGIC;
