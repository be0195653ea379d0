/*
 * pairs.c
 *		simhash_pairs(relation, id_column, hash_column, max_distance,
 *		id_type, blocks): every pair of rows of a table whose fingerprints
 *		are within max_distance bits, as (id_a, id_b, distance) with
 *		id_a < id_b, each pair once.  Exact, like simhash_find_all, with no
 *		array size limit and within maintenance_work_mem (search.c).
 *
 * Ids of a by-value type of at most 8 bytes (integer, bigint, ...) travel
 * with the rows as their keys; other ids (text, uuid, ...) stay in a
 * temporary file and the rows carry their row numbers.
 */
#include "dedup.h"

#include "funcapi.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(simhash_pairs);
PG_FUNCTION_INFO_V1(simhash_pairs_typed);

typedef struct PairsState
{
	DedupInput *in;
	PairSearch *search;
	DedupIds   *ids;			/* NULL if ids are the keys */
	ReturnSetInfo *rsinfo;
	MemoryContext tmpcxt;		/* reset per batch */
} PairsState;

static void
pairs_row(void *arg, uint64 row, Datum id, bool hash_isnull, Datum value)
{
	PairsState *st = (PairsState *) arg;
	uint64		hash = DatumGetSimhash64(value);

	if (hash_isnull)
		return;
	if (st->ids == NULL)
		pair_search_add(st->search, hash, (uint64) id);
	else
	{
		dedup_ids_append(st->ids, id);
		pair_search_add(st->search, hash, st->ids->n - 1);
	}
}

static void
pairs_emit(void *arg, const SimhashRowPair *pairs, size_t n)
{
	PairsState *st = (PairsState *) arg;
	MemoryContext old = MemoryContextSwitchTo(st->tmpcxt);

	for (size_t i = 0; i < n; i++)
	{
		Datum		a = (Datum) pairs[i].a,
					b = (Datum) pairs[i].b;

		if (st->ids != NULL)
		{
			a = dedup_ids_fetch(st->ids, pairs[i].a);
			b = dedup_ids_fetch(st->ids, pairs[i].b);
		}
		dedup_put_pair(st->in, st->rsinfo, a, b, Int32GetDatum(pairs[i].distance));
	}
	MemoryContextSwitchTo(old);
	MemoryContextReset(st->tmpcxt);
}

static Datum
pairs_job(FunctionCallInfo fcinfo, int id_type_arg, int max_distance_arg,
		  int blocks_arg)
{
	DedupInput	in;
	PairsState	st;
	DedupProgress progress;
	MemoryContext jobcxt,
				old;
	DedupClock	clock;

	dedup_input_init(&in, fcinfo, "simhash_pairs", id_type_arg,
					 max_distance_arg, blocks_arg);
	InitMaterializedSRF(fcinfo, 0);
	if (dedup_citus_handover(&in, fcinfo, id_type_arg))
		return (Datum) 0;

	jobcxt = AllocSetContextCreate(CurrentMemoryContext, "simhash_pairs",
								   ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(jobcxt);
	dedup_progress_start(&progress, in.fname);
	simhash_progress_begin(SIMHASH_JOB_PAIRS, in.relid);
	memset(&st, 0, sizeof(st));
	st.in = &in;
	st.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	st.search = pair_search_create(&in.blocks, in.budget, in.reltuples, &progress);
	if (!dedup_ids_inline(&in))
		st.ids = dedup_ids_create(in.id_type);
	st.tmpcxt = AllocSetContextCreate(jobcxt, "simhash_pairs batch",
									  ALLOCSET_DEFAULT_SIZES);

	dedup_clock_start(&clock);
	dedup_read(&in, pairs_row, &st);
	dedup_phase(&clock, "job: read");
	pair_search_run(st.search, in.budget, pairs_emit, &st);
	dedup_phase(&clock, "job: search");

	pair_search_free(st.search);
	if (st.ids)
		dedup_ids_close(st.ids);
	simhash_progress_end();
	MemoryContextSwitchTo(old);
	MemoryContextDelete(jobcxt);
	return (Datum) 0;
}

/*
 * simhash_pairs(relation regclass, id_column name, hash_column name,
 *				 max_distance integer DEFAULT 3, blocks integer DEFAULT NULL)
 * RETURNS TABLE (id_a bigint, id_b bigint, distance integer)
 */
Datum
simhash_pairs(PG_FUNCTION_ARGS)
{
	return pairs_job(fcinfo, -1, 3, 4);
}

/*
 * simhash_pairs(relation regclass, id_column name, hash_column name,
 *				 id_type anyelement, max_distance integer DEFAULT 3,
 *				 blocks integer DEFAULT NULL)
 * RETURNS TABLE (id_a anyelement, id_b anyelement, distance integer)
 */
Datum
simhash_pairs_typed(PG_FUNCTION_ARGS)
{
	return pairs_job(fcinfo, 3, 4, 5);
}
