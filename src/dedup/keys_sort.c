/*
 * dedup/keys_sort.c
 *		The sorts of the shared-key and MinHash jobs: tuplesorts of (int8,
 *		int8) rows by both columns -- (key, row) and (row, row) pairs --
 *		and the pairing of the rows of each key's run of a (key, row) sort,
 *		which the serial job (keys.c) and each participant of the split by
 *		key partition (keys_split.c) run alike.  See dedup.h.
 */
#include "dedup.h"

#include "catalog/pg_operator_d.h"
#include "catalog/pg_type_d.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/tuplesort.h"

/* begin a sort of (int8, int8) rows by both columns */
void
dedup_pair_sort_begin(PairSort *ps, int work_mem_kb)
{
	AttrNumber	att[2] = {1, 2};
	Oid			ops[2] = {Int8LessOperator, Int8LessOperator};
	Oid			colls[2] = {InvalidOid, InvalidOid};
	bool		nulls_first[2] = {false, false};

	ps->desc = CreateTemplateTupleDesc(2);
	TupleDescInitEntry(ps->desc, 1, "a", INT8OID, -1, 0);
	TupleDescInitEntry(ps->desc, 2, "b", INT8OID, -1, 0);
	ps->put = MakeSingleTupleTableSlot(ps->desc, &TTSOpsVirtual);
	ps->get = MakeSingleTupleTableSlot(ps->desc, &TTSOpsMinimalTuple);
	ps->sort = tuplesort_begin_heap(ps->desc, 2, att, ops, colls, nulls_first,
									work_mem_kb, NULL, TUPLESORT_NONE);
}

/* put (a, b) into the sort */
void
dedup_pair_sort_put(PairSort *ps, int64 a, int64 b)
{
	ExecClearTuple(ps->put);
	ps->put->tts_values[0] = Int64GetDatum(a);
	ps->put->tts_values[1] = Int64GetDatum(b);
	ps->put->tts_isnull[0] = ps->put->tts_isnull[1] = false;
	ExecStoreVirtualTuple(ps->put);
	tuplesort_puttupleslot(ps->sort, ps->put);
}

/* the next (a, b) of the performed sort; false at the end */
bool
dedup_pair_sort_get(PairSort *ps, int64 *a, int64 *b)
{
	if (!tuplesort_gettupleslot(ps->sort, true, false, ps->get, NULL))
		return false;
	slot_getallattrs(ps->get);
	*a = DatumGetInt64(ps->get->tts_values[0]);
	*b = DatumGetInt64(ps->get->tts_values[1]);
	return true;
}

/* end the sort and free its slots */
void
dedup_pair_sort_end(PairSort *ps)
{
	tuplesort_end(ps->sort);
	ExecDropSingleTupleTableSlot(ps->put);
	ExecDropSingleTupleTableSlot(ps->get);
}

/*
 * Pair the rows of each key of a (key, row) sort (performed here, not
 * ended): every pair of rows of a key's run to fn, or with adjacent only
 * consecutive rows (enough for a union); keys of more than max_key_rows
 * rows are skipped.  Returns the number skipped.
 */
uint64
dedup_keys_pair_runs(PairSort *keys, int max_key_rows, bool adjacent,
					 DedupRunPairFn fn, void *arg)
{
	int64		key,
				row,
				run_key = 0;
	int64	   *run = palloc(sizeof(int64) * (max_key_rows + 1));
	int			nrun = 0;
	bool		more;
	uint64		skipped = 0;

	tuplesort_performsort(keys->sort);
	do
	{
		CHECK_FOR_INTERRUPTS();
		more = dedup_pair_sort_get(keys, &key, &row);
		if (nrun > 0 && (!more || key != run_key))
		{
			/* a run ends: its rows, ascending and distinct */
			if (nrun <= max_key_rows)
			{
				for (int i = 0; i < nrun; i++)
				{
					if (adjacent)
					{
						if (i > 0)
							fn(arg, run[i - 1], run[i]);
						continue;
					}
					for (int j = i + 1; j < nrun; j++)
						fn(arg, run[i], run[j]);
				}
			}
			else
				skipped++;
			nrun = 0;
		}
		if (!more)
			break;
		if (nrun == 0)
			run_key = key;
		if (nrun > 0 && run[nrun - 1] == row)
			continue;			/* a key repeated in one row */
		if (nrun <= max_key_rows)
			run[nrun] = row;
		nrun = Min(nrun + 1, max_key_rows + 1);
	} while (true);
	pfree(run);
	return skipped;
}
