/*
 * src/join/settings.c
 *		The radius join's settings (simhash.enable_join,
 *		simhash.join_blocks) and the blocks of its search for a radius.
 */
#include "join.h"

#include "utils/guc.h"

bool		simhash_enable_join = true;
static int	simhash_join_blocks = 0;

/* Called from simhash_join_init(): the join's settings */
void
join_define_settings(void)
{
	DefineCustomBoolVariable("simhash.enable_join",
							 "Enables the planner's use of the simhash radius join.",
							 "The join of two inputs on a condition such as a.h <~> b.h <= 3 by one permuted-table search over both.",
							 &simhash_enable_join,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("simhash.join_blocks",
							"Number of blocks of the simhash radius join's search (0: distance + 2).",
							"Used when valid for the join's distance: more than the distance, and at most " CppAsString2(SIMHASH_MAX_TABLES) " tables.",
							&simhash_join_blocks,
							0, 0, SIMHASH_MAX_BLOCKS,
							PGC_USERSET, 0,
							NULL, NULL, NULL);
}

/* the number of blocks for radius k: simhash.join_blocks if valid, else k + 2 */
int
join_nblocks(int k)
{
	if (simhash_join_blocks > 0 &&
		simhash_blocks_validate(simhash_join_blocks, k) == SIMHASH_BLOCKS_OK)
		return simhash_join_blocks;
	return Min(k + 2, SIMHASH_MAX_BLOCKS);
}
