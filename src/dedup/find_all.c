/*
 * find_all.c
 *		simhash_find_all(hashes simhash64[], blocks integer, max_distance integer):
 *		every pair of array elements within max_distance bits (the seed's
 *		find_all), by the permuted-table search of src/core/ (blocks.h).  Exact: the same
 *		pairs as comparing all n(n-1)/2 pairs, each reported once.
 */
#include "simhash.h"

#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

#include "core/blocks.h"

PG_FUNCTION_INFO_V1(simhash_find_all);

/* matches fetched per simhash_find_all_next() call */
#define MATCH_BATCH 256

/*
 * The non-NULL elements of a simhash64[] as a uint64 array: the array's own
 * data when it has no NULLs, else a copy.
 */
static const uint64 *
array_hashes(ArrayType *arr, size_t *n)
{
	int			nitems = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	const uint64 *data = (const uint64 *) ARR_DATA_PTR(arr);
	bits8	   *nulls = ARR_NULLBITMAP(arr);
	uint64	   *copy;
	size_t		m = 0;

	if (!ARR_HASNULL(arr))
	{
		*n = nitems;
		return data;
	}
	copy = MemoryContextAllocHuge(CurrentMemoryContext,
								  Max(nitems, 1) * sizeof(uint64));
	for (int i = 0; i < nitems; i++)
	{
		/* elements are 8 bytes, aligned and stored only when not NULL */
		if (nulls[i / 8] & (1 << (i % 8)))
			copy[m++] = *data++;
	}
	*n = m;
	return copy;
}

/*
 * simhash_find_all(hashes, blocks, max_distance) RETURNS TABLE (a simhash64,
 * b simhash64, distance integer): each unordered pair of positions i < j
 * whose values differ in at most max_distance bits, once, with a <= b.  NULL
 * elements are skipped; equal values at two positions are a pair at
 * distance 0.  Materialised into a tuplestore (spills past work_mem).
 * Besides the array, it takes 16 bytes per element (keys and scratch),
 * plus 8 if the array has NULLs.
 */
Datum
simhash_find_all(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	int32		blocks = PG_GETARG_INT32(1);
	int32		max_distance = PG_GETARG_INT32(2);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	SimhashBlocks *b;
	SimhashFindAll *f;
	SimhashMatch *matches;
	const uint64 *hashes;
	uint64	   *keys,
			   *tmp;
	size_t		n;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	simhash_check_array_dims(arr, "hashes");
	simhash_check_blocks(blocks, max_distance, SIMHASH_MAX_TABLES);
	InitMaterializedSRF(fcinfo, 0);

	hashes = array_hashes(arr, &n);
	if (n < 2)
		return (Datum) 0;		/* no pairs */

	b = palloc(sizeof(SimhashBlocks));
	simhash_blocks_init_checked(b, blocks, max_distance);
	f = palloc(sizeof(SimhashFindAll));
	matches = palloc(sizeof(SimhashMatch) * MATCH_BATCH);
	keys = MemoryContextAllocHuge(CurrentMemoryContext, n * sizeof(uint64));
	tmp = MemoryContextAllocHuge(CurrentMemoryContext, n * sizeof(uint64));

	simhash_find_all_begin(f, b, hashes, n, keys, tmp);
	while (!simhash_find_all_done(f))
	{
		size_t		nmatches;

		/* each call does bounded work: at most one pass over the arrays */
		CHECK_FOR_INTERRUPTS();
		nmatches = simhash_find_all_next(f, matches, MATCH_BATCH);
		for (size_t i = 0; i < nmatches; i++)
		{
			values[0] = Simhash64GetDatum(matches[i].a);
			values[1] = Simhash64GetDatum(matches[i].b);
			values[2] = Int32GetDatum(matches[i].distance);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}

	if (hashes != (const uint64 *) ARR_DATA_PTR(arr))
		pfree((void *) hashes);
	pfree(keys);
	pfree(tmp);
	pfree(matches);
	pfree(f);
	pfree(b);
	return (Datum) 0;
}
