/*
 * keys.c
 *		Dedup jobs over shared keys: rows that share at least min_shared of
 *		their bigint keys (sentence fingerprints, MinHash band keys...) are
 *		pairs.  shared_key_pairs(relation, id_column, keys_column,
 *		min_shared) lists them with the number of keys they share;
 *		shared_key_groups(...) gives every row the least id of its connected
 *		group.  The same one read, ids and union-find as the simhash jobs
 *		(read.c, groups.c, core/union_find.c).  The machinery (the key sort
 *		and the pairing of each key's rows) is shared with the MinHash jobs
 *		of minhash.c.
 *
 * The (key, row) pairs of all rows go through tuplesort (memory, then
 * disk).  In each run of rows sharing a key: for groups with min_shared =
 * 1, consecutive rows are united (linear in the rows); otherwise every pair
 * of rows of the run goes through a second tuplesort, and equal pairs are
 * counted.  A key shared by r rows costs r(r-1)/2 pairs there, so
 * max_key_rows (default 1000) skips keys shared by more rows than that
 * (boilerplate: a sentence in thousands of documents says nothing about
 * them), with a NOTICE.
 */
#include "dedup.h"

#include "catalog/pg_operator_d.h"
#include "catalog/pg_type_d.h"
#include "executor/tuptable.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/memutils.h"
#include "utils/tuplesort.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(shared_key_pairs);
PG_FUNCTION_INFO_V1(shared_key_pairs_typed);
PG_FUNCTION_INFO_V1(shared_key_groups);
PG_FUNCTION_INFO_V1(shared_key_groups_typed);

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
 * Start a keys job: the ids file and the (key, row) sort, which gets a
 * quarter of maintenance_work_mem (as does the pairs' sort); returns that
 * in kB.
 */
int
dedup_keys_begin(KeysState *st, DedupInput *in)
{
	int			sort_kb = Max((int) (in->budget / 4 / 1024), 64);

	memset(st, 0, sizeof(*st));
	st->in = in;
	st->ids = dedup_ids_create(in->id_type);
	st->split = dedup_keys_split_create(in);
	if (st->split == NULL)
		dedup_pair_sort_begin(&st->keys, sort_kb);
	return sort_kb;
}

void
dedup_keys_add(KeysState *st, int64 key, uint64 row)
{
	if (st->split)
		dedup_keys_split_add(st->split, key, row);
	else
		dedup_pair_sort_put(&st->keys, key, (int64) row);
	st->nkeys++;
}

/* a row of a shared-key job: its id, and its non-NULL keys into the sort */
static void
keys_row(void *arg, uint64 row, Datum id, bool value_isnull, Datum value)
{
	KeysState  *st = (KeysState *) arg;
	ArrayType  *arr;
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	dedup_ids_append(st->ids, id);
	if (value_isnull)
		return;
	arr = DatumGetArrayTypeP(value);
	deconstruct_array(arr, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &elems, &nulls, &n);
	for (int i = 0; i < n; i++)
		if (!nulls[i])
			dedup_keys_add(st, DatumGetInt64(elems[i]), row);
}

/* a row a parallel worker read (keys_parallel.c): its keys, unpacked there */
static void
keys_replay(void *arg, uint64 row, Datum id, bool value_isnull,
			const int64 *keys, int nkeys, Datum sig)
{
	KeysState  *st = (KeysState *) arg;

	dedup_ids_append(st->ids, id);
	for (int i = 0; i < nkeys; i++)
		dedup_keys_add(st, keys[i], row);
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

/* where the pairs of the key runs go: the union, or the pairs' sort */
typedef struct RunSink
{
	DedupUnion *uf;
	PairSort   *pairs;
} RunSink;

/* DedupRunPairFn into a RunSink */
static void
run_sink_pair(void *arg, int64 a, int64 b)
{
	RunSink    *sink = (RunSink *) arg;

	if (sink->uf)
		simhash_union_pair(sink->uf, a, b);
	else
		dedup_pair_sort_put(sink->pairs, a, b);
}

/*
 * The pairs of rows sharing at least min_shared keys, to fn; or, with
 * uf and min_shared = 1, unite the rows sharing a key directly.  The key
 * runs are paired here, or split by key across parallel workers
 * (keys_split.c): either way every run gives the same pairs.
 */
void
dedup_keys_run(KeysState *st, int min_shared, int max_key_rows, int work_mem_kb,
			   DedupUnion *uf, KeyPairFn fn, void *arg, DedupProgress *progress)
{
	PairSort	pairs;
	RunSink		sink;
	bool		more,
				direct = uf != NULL && min_shared == 1;
	uint64		skipped;

	if (!direct)
		dedup_pair_sort_begin(&pairs, work_mem_kb);
	sink.uf = direct ? uf : NULL;
	sink.pairs = direct ? NULL : &pairs;
	if (st->split)
	{
		skipped = dedup_keys_split_run(st->split, max_key_rows, direct, work_mem_kb,
									   run_sink_pair, &sink, progress);
		st->split = NULL;		/* freed */
	}
	else
	{
		skipped = dedup_keys_pair_runs(&st->keys, max_key_rows, direct,
									   run_sink_pair, &sink);
		dedup_pair_sort_end(&st->keys);
	}
	if (skipped > 0)
		ereport(NOTICE,
				(errmsg("%s: skipped " UINT64_FORMAT " keys shared by more than %d rows",
						st->in->fname, skipped, max_key_rows),
				 errhint("Raise max_key_rows to use them.")));

	if (!direct)
	{
		int64		a,
					b,
					pa = -1,
					pb = -1;
		int			count = 0;

		tuplesort_performsort(pairs.sort);
		do
		{
			CHECK_FOR_INTERRUPTS();
			more = dedup_pair_sort_get(&pairs, &a, &b);
			if (count > 0 && (!more || a != pa || b != pb))
			{
				if (count >= min_shared)
					fn(arg, pa, pb, count);
				count = 0;
			}
			if (!more)
				break;
			pa = a;
			pb = b;
			count++;
		} while (true);
		dedup_pair_sort_end(&pairs);
	}
	dedup_progress(progress, "paired the rows of " UINT64_FORMAT " keys", st->nkeys);
}

typedef struct KeyPairsOut
{
	KeysState  *st;
	ReturnSetInfo *rsinfo;
	MemoryContext tmpcxt;
} KeyPairsOut;

/* shared_key_pairs: a pair of rows out, with their ids */
static void
emit_key_pair(void *arg, uint64 ra, uint64 rb, int shared)
{
	KeyPairsOut *o = (KeyPairsOut *) arg;
	MemoryContext old = MemoryContextSwitchTo(o->tmpcxt);

	dedup_put_pair(o->st->in, o->rsinfo, dedup_ids_fetch(o->st->ids, ra),
				   dedup_ids_fetch(o->st->ids, rb), Int32GetDatum(shared));
	MemoryContextSwitchTo(old);
	MemoryContextReset(o->tmpcxt);
}

/* shared_key_groups with min_shared > 1: join the pair's rows */
static void
union_key_pair(void *arg, uint64 ra, uint64 rb, int shared)
{
	simhash_union_pair((DedupUnion *) arg, ra, rb);
}

/* the int argument arg, not NULL and at least min */
int
dedup_int_arg(FunctionCallInfo fcinfo, int arg, const char *name, const char *fname, int min)
{
	int32		v;

	if (PG_ARGISNULL(arg))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s: %s must not be NULL", fname, name),
				 errhint("To give the ids' type, name the argument: id_type => NULL::integer.")));
	v = PG_GETARG_INT32(arg);
	if (v < min)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s: %s must be at least %d, not %d", fname, name, min, v)));
	return v;
}

/* max_key_rows at argument arg: 2 .. 1,000,000 */
int
dedup_max_key_rows_arg(FunctionCallInfo fcinfo, int arg, const char *fname)
{
	int			v = dedup_int_arg(fcinfo, arg, "max_key_rows", fname, 2);

	if (v > 1000000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s: max_key_rows must be at most 1000000, not %d", fname, v)));
	return v;
}

/* a union-find for nrows rows, if it fits in half of the budget */
DedupUnion *
dedup_keys_union_create(DedupInput *in, uint64 nrows, Size *bytes)
{
	*bytes = simhash_union_bytes(nrows);
	if (*bytes > in->budget / 2)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s: maintenance_work_mem is too small for " UINT64_FORMAT " rows", in->fname, nrows),
				 errdetail("Groups keep 4 bytes per row, %zu kB in all, besides the sorts.", *bytes / 1024 + 1),
				 errhint("Raise maintenance_work_mem to at least %zu kB.", 2 * (*bytes / 1024 + 1))));
	return dedup_union_create(nrows);
}

/* arguments: relation, id_column, keys_column, [id_type], min_shared, max_key_rows */
static Datum
key_job(FunctionCallInfo fcinfo, bool groups, int id_type_arg, int min_shared_arg)
{
	const char *fname = groups ? "shared_key_groups" : "shared_key_pairs";
	DedupInput	in;
	KeysState	st;
	DedupKeysRead kr;
	DedupProgress progress;
	MemoryContext jobcxt,
				old;
	ReturnSetInfo *rsinfo;
	int			min_shared,
				max_key_rows;
	int			sort_kb;
	uint64		nrows;

	dedup_input_init_columns(&in, fcinfo, fname, id_type_arg, "keys_column",
							 INT8ARRAYOID,
							 "Keys are bigint[], for example sentence_hashes(body) or minhash_bands(sig, 32).");
	min_shared = dedup_int_arg(fcinfo, min_shared_arg, "min_shared", fname, 1);
	max_key_rows = dedup_max_key_rows_arg(fcinfo, min_shared_arg + 1, fname);
	InitMaterializedSRF(fcinfo, 0);
	if (dedup_citus_handover(&in, fcinfo, id_type_arg))
		return (Datum) 0;
	rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	jobcxt = AllocSetContextCreate(CurrentMemoryContext, "shared key job", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(jobcxt);
	dedup_progress_start(&progress, fname);
	sort_kb = dedup_keys_begin(&st, &in);

	/* workers unpack the keys where the input allows, else SPI */
	kr.kind = DEDUP_KEYS_ARRAY;
	kr.bands = 0;
	kr.row_fn = keys_row;
	kr.replay_fn = keys_replay;
	kr.arg = &st;
	if (!dedup_keys_read_parallel(&in, &kr, &nrows, &progress))
		nrows = dedup_read(&in, keys_row, &st);

	if (!groups)
	{
		KeyPairsOut o;

		o.st = &st;
		o.rsinfo = rsinfo;
		o.tmpcxt = AllocSetContextCreate(jobcxt, "shared_key_pairs batch", ALLOCSET_DEFAULT_SIZES);
		dedup_keys_run(&st, min_shared, max_key_rows, sort_kb, NULL, emit_key_pair, &o, &progress);
	}
	else
	{
		Size		ufb;
		DedupUnion *uf = dedup_keys_union_create(&in, nrows, &ufb);

		dedup_keys_run(&st, min_shared, max_key_rows, sort_kb, uf, union_key_pair, uf, &progress);
		dedup_union_output(uf, &in, st.ids, rsinfo, in.budget - ufb);
	}
	dedup_ids_close(st.ids);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(jobcxt);
	return (Datum) 0;
}

/* shared_key_pairs(relation, id_column, keys_column, min_shared, max_key_rows) */
Datum
shared_key_pairs(PG_FUNCTION_ARGS)
{
	return key_job(fcinfo, false, -1, 3);
}

/* shared_key_pairs(relation, id_column, keys_column, id_type, min_shared, max_key_rows) */
Datum
shared_key_pairs_typed(PG_FUNCTION_ARGS)
{
	return key_job(fcinfo, false, 3, 4);
}

/* shared_key_groups(relation, id_column, keys_column, min_shared, max_key_rows) */
Datum
shared_key_groups(PG_FUNCTION_ARGS)
{
	return key_job(fcinfo, true, -1, 3);
}

/* shared_key_groups(relation, id_column, keys_column, id_type, min_shared, max_key_rows) */
Datum
shared_key_groups_typed(PG_FUNCTION_ARGS)
{
	return key_job(fcinfo, true, 3, 4);
}
