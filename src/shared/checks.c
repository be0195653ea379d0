/*
 * checks.c
 *		The argument checks every part shares: a one-dimensional array (and
 *		the hashes of its elements in batches), and a search's (blocks,
 *		max_distance), whose limits and pure check are those of
 *		src/core/blocks.h and whose one set of messages is here.
 */
#include "simhash.h"

#include "miscadmin.h"

/* Reject an array argument that is not one-dimensional (2202E). */
void
simhash_check_array_dims(ArrayType *arr, const char *what)
{
	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s must be a one-dimensional array", what),
				 errdetail("The array has %d dimensions.", ARR_NDIM(arr))));
}

/*
 * Pass the hashes of an array's non-NULL elements (hash of each) to sink in
 * batches, checking for interrupts between batches: the one loop of
 * simhash_compute(text[] | bigint[]) and jaccard(text[], text[]).
 */
void
simhash_array_hashes(ArrayType *arr, uint64 (*hash) (Datum),
					 void (*sink) (void *arg, const uint64 *hashes, size_t n),
					 void *arg)
{
	ArrayIterator it = array_create_iterator(arr, 0, NULL);
	Datum		value;
	bool		isnull;
	uint64		batch[1024];
	size_t		n = 0;

	while (array_iterate(it, &value, &isnull))
	{
		if (isnull)
			continue;
		batch[n++] = hash(value);
		if (n == lengthof(batch))
		{
			sink(arg, batch, n);
			n = 0;
			CHECK_FOR_INTERRUPTS();
		}
	}
	sink(arg, batch, n);
	array_free_iterator(it);
}

/*
 * Raise the error for an invalid (blocks, max_distance) of a search with at
 * most max_tables tables (SIMHASH_MAX_TABLES; SIMHASH_MAX_INDEX_TABLES for
 * an index), all 22023; return if it is valid.  The one set of messages of
 * the index's reloptions, simhash_find_all and the dedup jobs.
 */
void
simhash_check_blocks(int32 blocks, int32 max_distance, int max_tables)
{
	switch (simhash_blocks_check(blocks, max_distance, max_tables))
	{
		case SIMHASH_BLOCKS_OK:
			return;
		case SIMHASH_BLOCKS_BAD_NBLOCKS:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("blocks must be between 1 and %d, not %d",
							SIMHASH_MAX_BLOCKS, blocks),
					 errhint("The 64 bits of a fingerprint are split into this many blocks.")));
			break;
		case SIMHASH_BLOCKS_BAD_DISTANCE:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("max_distance must be between 0 and %d, not %d",
							SIMHASH_MAX_DISTANCE, max_distance),
					 errhint("Fingerprints have 64 bits; two random ones are about 32 bits apart.")));
			break;
		case SIMHASH_BLOCKS_DISTANCE_TOO_LARGE:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("blocks must be greater than max_distance"),
					 errdetail("blocks is %d and max_distance is %d.", blocks, max_distance),
					 errhint("Two fingerprints within max_distance bits have at least blocks - max_distance equal blocks, so blocks must be at least max_distance + 1.")));
			break;
		case SIMHASH_BLOCKS_TOO_MANY_TABLES:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("too many tables for blocks %d and max_distance %d", blocks, max_distance),
					 errdetail("The search has one table per choice of max_distance blocks out of blocks, C(%d, %d) in all; at most %d are allowed.",
							   blocks, max_distance, max_tables),
					 errhint("Use fewer blocks: max_distance + 2 or + 3 is usually fastest.")));
			break;
	}
	/* unknown status */
	elog(ERROR, "invalid simhash block configuration");
}

/*
 * *b for a search with the given arguments, checked with the messages of
 * simhash_check_blocks (at most SIMHASH_MAX_TABLES tables).
 */
void
simhash_blocks_init_checked(SimhashBlocks *b, int32 blocks, int32 max_distance)
{
	simhash_check_blocks(blocks, max_distance, SIMHASH_MAX_TABLES);
	if (!simhash_blocks_init(b, blocks, max_distance))
		elog(ERROR, "invalid simhash block configuration");
}
