/*
 * groups.c
 *		simhash_groups(relation, id_column, hash_column, max_distance,
 *		linkage, id_type, blocks): (id, group_id) for every row of a table,
 *		group_id being the least id of the row's group, so that keeping the
 *		rows with id = group_id keeps one row per group.
 *
 * Linkage 'connected': groups are the connected components of the graph
 * of pairs within max_distance (simhash_pairs).  Transitive: a chain of
 * small steps can join documents that are far apart.  Computed with a
 * union-find over row numbers (4 bytes per row of maintenance_work_mem);
 * the least id of each group is found in one more pass over the ids.
 *
 * Linkage 'leader': no chaining.  Rows are taken in id order; a row joins
 * the group of the nearest earlier leader within max_distance (ties: the
 * least id), or else becomes a leader itself.  Every row is then within
 * max_distance of its group's leader, whose id is the group id.
 *
 * Both linkages search for the star pairs only (core/rowpairs.h), which
 * keeps runs of equal fingerprints linear: 20,000 identical rows give
 * 19,999 pairs, not 200 million.  For 'connected' they link the same rows.
 * For 'leader' the rows are first numbered in id order (a sort of (id,
 * row), which spills to disk): with those numbers as keys, the least key of
 * a run is its first row in id order, and a leader is always the first row
 * of its run (the run's later rows are at distance 0 from it; and if the
 * first row joins an earlier leader, that leader is within reach of all
 * of them, so none of them leads).  Every pair that can decide a row, a
 * row with an earlier leader, is therefore a star pair.  The pairs are
 * sorted by their later row with tuplesort (spills to disk); one bit per
 * row records who is a leader.  Temporary files: the ids, the (id, row)
 * sort and the pairs' sort; with runs, at most about 40 bytes per row and
 * per matching pair of distinct fingerprints' rows.
 *
 * Rows whose fingerprint is NULL are groups of their own.
 */
#include "dedup.h"

#include "catalog/pg_operator_d.h"
#include "catalog/pg_type_d.h"
#include "executor/tuptable.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/memutils.h"
#include "utils/tuplesort.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(simhash_groups);
PG_FUNCTION_INFO_V1(simhash_groups_typed);

typedef enum Linkage
{
	LINKAGE_CONNECTED,
	LINKAGE_LEADER
} Linkage;

typedef struct GroupsState
{
	DedupInput *in;
	Linkage		linkage;
	PairSearch *search;
	DedupIds   *ids;			/* every row's id, by row number */
	MemoryContext tmpcxt;		/* reset per batch */
	/* connected */
	DedupUnion *uf;
	/* leader */
	Tuplesortstate *order;		/* rows by (id, row), while reading */
	TupleTableSlot *order_slot;
	Tuplesortstate *sort;		/* pairs by later row */
	TupleDesc	sort_desc;
	TupleTableSlot *sort_slot;	/* to put pairs (virtual) */
	TupleTableSlot *read_slot;	/* to get them back (minimal tuples) */
} GroupsState;

static void
groups_row(void *arg, uint64 row, Datum id, bool hash_isnull, Datum value)
{
	GroupsState *st = (GroupsState *) arg;
	uint64		hash = DatumGetSimhash64(value);

	if (st->linkage == LINKAGE_LEADER)
	{
		/* numbered in id order once all are read (leader_number) */
		TupleTableSlot *slot = st->order_slot;

		ExecClearTuple(slot);
		slot->tts_values[0] = id;
		slot->tts_values[1] = Int64GetDatum((int64) row);
		slot->tts_values[2] = Int64GetDatum((int64) hash);
		slot->tts_isnull[0] = slot->tts_isnull[1] = false;
		slot->tts_isnull[2] = hash_isnull;
		ExecStoreVirtualTuple(slot);
		tuplesort_puttupleslot(st->order, slot);
		return;
	}
	dedup_ids_append(st->ids, id);
	if (!hash_isnull)
		pair_search_add(st->search, hash, row);
}

/* ---- connected: a union-find over row numbers (core/union_find.c) ---- */

DedupUnion *
dedup_union_create(uint64 nrows)
{
	DedupUnion *u = palloc(sizeof(DedupUnion));

	if (nrows > SIMHASH_UNION_MAX_ROWS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("cannot group more than " UINT64_FORMAT " rows",
						(uint64) SIMHASH_UNION_MAX_ROWS)));
	simhash_union_init(u, nrows,
					   MemoryContextAllocHuge(CurrentMemoryContext, Max(nrows, 1) * sizeof(uint32)),
					   MemoryContextAllocHuge(CurrentMemoryContext, nrows / 8 + 1));
	return u;
}

/* the pairs of a batch into the union-find */
static void
connected_emit(void *arg, const SimhashRowPair *pairs, size_t n)
{
	GroupsState *st = (GroupsState *) arg;

	for (size_t i = 0; i < n; i++)
		simhash_union_pair(st->uf, pairs[i].a, pairs[i].b);
}

/*
 * The least id of each group of two or more: an open-addressing table keyed
 * by the group's root row (16 bytes a slot, at most 3/4 full).
 */
typedef struct GroupLeast
{
	uint32		root;			/* PG_UINT32_MAX: empty */
	Datum		least;
} GroupLeast;

static inline GroupLeast *
least_slot(GroupLeast *table, uint64 mask, uint32 root)
{
	uint64		i = ((uint64) root * UINT64CONST(0x9E3779B97F4A7C15)) >> 20 & mask;

	while (table[i].root != PG_UINT32_MAX && table[i].root != root)
		i = (i + 1) & mask;
	return &table[i];
}

void
dedup_union_output(DedupUnion *u, DedupInput *in, DedupIds *ids,
				   ReturnSetInfo *rsinfo, Size budget)
{
	MemoryContext cxt = CurrentMemoryContext;
	MemoryContext tmpcxt = AllocSetContextCreate(cxt, "simhash groups output",
												 ALLOCSET_DEFAULT_SIZES);
	uint64		ngroups = 0,
				size = 16,
				mask;
	GroupLeast *least;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	/* groups of two or more, and the table for their least ids */
	for (uint64 row = 0; row < u->nrows; row++)
		if (simhash_union_linked(u, row) && simhash_union_find(u, row) == row)
			ngroups++;
	while (size < ngroups + ngroups / 3 + 1)
		size *= 2;
	if (size * sizeof(GroupLeast) > budget)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s: maintenance_work_mem is too small for " UINT64_FORMAT " groups of " UINT64_FORMAT " rows",
						in->fname, ngroups, u->nrows),
				 errdetail("Naming the groups takes %zu kB besides the 4 bytes per row of the union-find.",
						   (size_t) (size * sizeof(GroupLeast) / 1024 + 1)),
				 errhint("Raise maintenance_work_mem, or use linkage 'leader'.")));
	mask = size - 1;
	least = MemoryContextAllocHuge(cxt, size * sizeof(GroupLeast));
	for (uint64 i = 0; i < size; i++)
		least[i].root = PG_UINT32_MAX;

	/* the least id of every group of two or more, reading ids in order */
	for (uint64 row = 0; row < u->nrows; row++)
	{
		uint32		root;
		GroupLeast *g;
		Datum		id;

		if ((row & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		if (!simhash_union_linked(u, row))
			continue;
		root = simhash_union_find(u, row);
		MemoryContextSwitchTo(tmpcxt);
		id = dedup_ids_fetch(ids, row);
		MemoryContextSwitchTo(cxt);
		g = least_slot(least, mask, root);
		if (g->root == PG_UINT32_MAX || dedup_id_compare(in, id, g->least) < 0)
		{
			if (g->root != PG_UINT32_MAX && !in->id_typbyval)
				pfree(DatumGetPointer(g->least));
			g->root = root;
			g->least = datumCopy(id, in->id_typbyval, in->id_typlen);
		}
		MemoryContextReset(tmpcxt);
	}

	/* every row with its group's least id */
	for (uint64 row = 0; row < u->nrows; row++)
	{
		Datum		id;

		if ((row & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		MemoryContextSwitchTo(tmpcxt);
		id = dedup_ids_fetch(ids, row);
		values[0] = id;
		values[1] = id;
		if (simhash_union_linked(u, row))
			values[1] = least_slot(least, mask, simhash_union_find(u, row))->least;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		MemoryContextSwitchTo(cxt);
		MemoryContextReset(tmpcxt);
	}
	MemoryContextDelete(tmpcxt);
	pfree(least);
	pfree(u->parent);
	pfree(u->linked);
	pfree(u);
}

/* ---- leader ---- */

/* the sort of the rows read: (id, row, fingerprint) by (id, row) */
static void
leader_order_begin(GroupsState *st, int work_mem_kb)
{
	DedupInput *in = st->in;
	TupleDesc	desc = CreateTemplateTupleDesc(3);
	AttrNumber	att[2] = {1, 2};
	Oid			ops[2] = {in->id_lt_opr, Int8LessOperator};
	Oid			colls[2] = {in->id_collation, InvalidOid};
	bool		nulls_first[2] = {false, false};

	TupleDescInitEntry(desc, 1, "id", in->id_type, -1, 0);
	TupleDescInitEntry(desc, 2, "row", INT8OID, -1, 0);
	TupleDescInitEntry(desc, 3, "hash", INT8OID, -1, 0);
	st->order_slot = MakeSingleTupleTableSlot(desc, &TTSOpsVirtual);
	st->order = tuplesort_begin_heap(desc, 2, att, ops, colls, nulls_first,
									 work_mem_kb, NULL, TUPLESORT_NONE);
}

/*
 * Number the rows read in id order (ties: reading order): the ids file and
 * the search's keys by that number.
 */
static void
leader_number(GroupsState *st)
{
	TupleTableSlot *slot = MakeSingleTupleTableSlot(st->order_slot->tts_tupleDescriptor,
													&TTSOpsMinimalTuple);
	uint64		n = 0;

	tuplesort_performsort(st->order);
	while (tuplesort_gettupleslot(st->order, true, false, slot, NULL))
	{
		if ((n & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		slot_getallattrs(slot);
		dedup_ids_append(st->ids, slot->tts_values[0]);
		if (!slot->tts_isnull[2])
			pair_search_add(st->search, (uint64) DatumGetInt64(slot->tts_values[2]), n);
		n++;
	}
	tuplesort_end(st->order);
	st->order = NULL;
	ExecDropSingleTupleTableSlot(slot);
	ExecDropSingleTupleTableSlot(st->order_slot);
}

/* the columns of the sorted pairs: later row, distance, earlier row (in id order) */
#define LS_LATE_ROW 1
#define LS_DISTANCE 2
#define LS_EARLY_ROW 3

static void
leader_emit(void *arg, const SimhashRowPair *pairs, size_t n)
{
	GroupsState *st = (GroupsState *) arg;
	TupleTableSlot *slot = st->sort_slot;

	for (size_t i = 0; i < n; i++)
	{
		uint64		early = Min(pairs[i].a, pairs[i].b),
					late = Max(pairs[i].a, pairs[i].b);

		ExecClearTuple(slot);
		slot->tts_values[LS_LATE_ROW - 1] = Int64GetDatum((int64) late);
		slot->tts_values[LS_DISTANCE - 1] = Int32GetDatum(pairs[i].distance);
		slot->tts_values[LS_EARLY_ROW - 1] = Int64GetDatum((int64) early);
		memset(slot->tts_isnull, 0, sizeof(bool) * 3);
		ExecStoreVirtualTuple(slot);
		tuplesort_puttupleslot(st->sort, slot);
	}
}

static void
leader_begin(GroupsState *st, int work_mem_kb)
{
	TupleDesc	desc = CreateTemplateTupleDesc(3);
	AttrNumber	att[3] = {1, 2, 3};
	Oid			ops[3] = {Int8LessOperator, Int4LessOperator, Int8LessOperator};
	Oid			colls[3] = {InvalidOid, InvalidOid, InvalidOid};
	bool		nulls_first[3] = {false, false, false};

	TupleDescInitEntry(desc, LS_LATE_ROW, "late_row", INT8OID, -1, 0);
	TupleDescInitEntry(desc, LS_DISTANCE, "distance", INT4OID, -1, 0);
	TupleDescInitEntry(desc, LS_EARLY_ROW, "early_row", INT8OID, -1, 0);
	st->sort_desc = desc;
	st->sort_slot = MakeSingleTupleTableSlot(desc, &TTSOpsVirtual);
	st->read_slot = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
	st->sort = tuplesort_begin_heap(desc, 3, att, ops, colls, nulls_first,
									work_mem_kb, NULL, TUPLESORT_NONE);
}

static void
leader_output(GroupsState *st, uint64 nrows, ReturnSetInfo *rsinfo, int work_mem_kb,
			  MemoryContext jobcxt)
{
	DedupInput *in = st->in;
	uint8	   *member = palloc0(nrows / 8 + 1);	/* bit per row: joined a
													 * leader */
	TupleDesc	adesc = CreateTemplateTupleDesc(2);
	AttrNumber	att[1] = {1};
	Oid			ops[1] = {Int8LessOperator};
	Oid			colls[1] = {InvalidOid};
	bool		nulls_first[1] = {false};
	Tuplesortstate *assigned;
	TupleTableSlot *aslot;		/* to put assignments */
	TupleTableSlot *aread;		/* to get them back */
	TupleTableSlot *slot = st->read_slot;
	int64		current = -1;	/* the later row being decided */
	bool		have_next;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	/* (row, leader id) for each row that joins a leader, sorted by row */
	TupleDescInitEntry(adesc, 1, "row", INT8OID, -1, 0);
	TupleDescInitEntry(adesc, 2, "leader", in->id_type, -1, 0);
	aslot = MakeSingleTupleTableSlot(adesc, &TTSOpsVirtual);
	aread = MakeSingleTupleTableSlot(adesc, &TTSOpsMinimalTuple);
	assigned = tuplesort_begin_heap(adesc, 1, att, ops, colls, nulls_first,
									work_mem_kb, NULL, TUPLESORT_NONE);

	tuplesort_performsort(st->sort);
	while (tuplesort_gettupleslot(st->sort, true, false, slot, NULL))
	{
		int64		late,
					early;

		CHECK_FOR_INTERRUPTS();
		slot_getallattrs(slot);
		late = DatumGetInt64(slot->tts_values[LS_LATE_ROW - 1]);
		early = DatumGetInt64(slot->tts_values[LS_EARLY_ROW - 1]);
		if (late == current)
			continue;			/* decided by a nearer leader */
		/* the first pair of a later row whose earlier row leads decides */
		if (member[early / 8] & (1 << (early % 8)))
			continue;
		current = late;
		member[late / 8] |= 1 << (late % 8);
		ExecClearTuple(aslot);
		aslot->tts_values[0] = Int64GetDatum(late);
		MemoryContextSwitchTo(st->tmpcxt);
		aslot->tts_values[1] = dedup_ids_fetch(st->ids, (uint64) early);
		MemoryContextSwitchTo(jobcxt);
		aslot->tts_isnull[0] = aslot->tts_isnull[1] = false;
		ExecStoreVirtualTuple(aslot);
		tuplesort_puttupleslot(assigned, aslot);
		MemoryContextReset(st->tmpcxt);
	}
	tuplesort_end(st->sort);
	st->sort = NULL;
	tuplesort_performsort(assigned);

	/* every row with its leader's id, or its own */
	have_next = tuplesort_gettupleslot(assigned, true, false, aread, NULL);
	if (have_next)
		slot_getallattrs(aread);
	for (uint64 row = 0; row < nrows; row++)
	{
		Datum		id;

		if ((row & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		MemoryContextSwitchTo(st->tmpcxt);
		id = dedup_ids_fetch(st->ids, row);
		MemoryContextSwitchTo(jobcxt);
		values[0] = id;
		values[1] = id;
		if (have_next && DatumGetInt64(aread->tts_values[0]) == (int64) row)
		{
			values[1] = aread->tts_values[1];
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
			have_next = tuplesort_gettupleslot(assigned, true, false, aread, NULL);
			if (have_next)
				slot_getallattrs(aread);
		}
		else
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		MemoryContextReset(st->tmpcxt);
	}
	tuplesort_end(assigned);
	ExecDropSingleTupleTableSlot(aslot);
	ExecDropSingleTupleTableSlot(aread);
	pfree(member);
}

static Datum
groups_job(FunctionCallInfo fcinfo, int id_type_arg, int max_distance_arg,
		   int linkage_arg, int blocks_arg)
{
	DedupInput	in;
	GroupsState st;
	DedupProgress progress;
	MemoryContext jobcxt,
				old;
	ReturnSetInfo *rsinfo;
	char	   *linkage;
	uint64		nrows;
	Size		budget;
	int			sort_kb;

	dedup_input_init(&in, fcinfo, "simhash_groups", id_type_arg,
					 max_distance_arg, blocks_arg);
	memset(&st, 0, sizeof(st));
	st.in = &in;
	if (PG_ARGISNULL(linkage_arg))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("simhash_groups: linkage must not be NULL")));
	linkage = text_to_cstring(PG_GETARG_TEXT_PP(linkage_arg));
	if (strcmp(linkage, "connected") == 0)
		st.linkage = LINKAGE_CONNECTED;
	else if (strcmp(linkage, "leader") == 0)
		st.linkage = LINKAGE_LEADER;
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("simhash_groups: unknown linkage \"%s\"", linkage),
				 errhint("Use 'connected' (transitive: chains of near-duplicates form one group) or 'leader' (each row joins a nearby earlier leader; no chaining).")));

	InitMaterializedSRF(fcinfo, 0);
	if (dedup_citus_handover(&in, fcinfo, id_type_arg))
		return (Datum) 0;
	rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	jobcxt = AllocSetContextCreate(CurrentMemoryContext, "simhash_groups",
								   ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(jobcxt);
	dedup_progress_start(&progress, in.fname);
	simhash_progress_begin(SIMHASH_JOB_GROUPS, in.relid);
	st.tmpcxt = AllocSetContextCreate(jobcxt, "simhash_groups batch",
									  ALLOCSET_DEFAULT_SIZES);
	st.ids = dedup_ids_create(in.id_type);

	/* leader: the sort of the rows read gets a quarter of the budget, and so
	 * do the pairs' sort and the sort of the assignments after it */
	budget = in.budget;
	sort_kb = Max((int) (in.budget / 4 / 1024), 64);
	if (st.linkage == LINKAGE_LEADER)
		budget -= in.budget / 4;
	st.search = pair_search_create(&in.blocks, budget, in.reltuples, &progress);
	pair_search_set_star(st.search);
	if (st.linkage == LINKAGE_LEADER)
		leader_order_begin(&st, sort_kb);

	nrows = dedup_read(&in, groups_row, &st);
	if (st.linkage == LINKAGE_LEADER)
		leader_number(&st);
	if (nrows >= PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("simhash_groups: more than %u rows", PG_UINT32_MAX - 1)));

	if (st.linkage == LINKAGE_CONNECTED)
	{
		Size		uf = simhash_union_bytes(nrows);

		if (uf > in.budget - in.budget / 4)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("simhash_groups: maintenance_work_mem is too small for " UINT64_FORMAT " rows", nrows),
					 errdetail("Linkage 'connected' keeps 4 bytes per row, %zu kB in all, and leaves at least a quarter of maintenance_work_mem to the search.",
							   uf / 1024 + 1),
					 errhint("Raise maintenance_work_mem to at least %zu kB, or use linkage 'leader'.",
							 (uf / 1024 + 1) * 4 / 3 + 1)));
		st.uf = dedup_union_create(nrows);
		pair_search_run(st.search, in.budget - uf, connected_emit, &st);
		pair_search_free(st.search);
		simhash_progress_phase(SIMHASH_PHASE_GROUPING);
		dedup_union_output(st.uf, &in, st.ids, rsinfo, in.budget - uf);
	}
	else
	{
		leader_begin(&st, sort_kb);
		pair_search_run(st.search, budget, leader_emit, &st);
		pair_search_free(st.search);
		simhash_progress_phase(SIMHASH_PHASE_GROUPING);
		leader_output(&st, nrows, rsinfo, sort_kb, jobcxt);
		ExecDropSingleTupleTableSlot(st.sort_slot);
		ExecDropSingleTupleTableSlot(st.read_slot);
	}

	dedup_ids_close(st.ids);
	simhash_progress_end();
	MemoryContextSwitchTo(old);
	MemoryContextDelete(jobcxt);
	return (Datum) 0;
}

/*
 * simhash_groups(relation regclass, id_column name, hash_column name,
 *				  max_distance integer DEFAULT 3,
 *				  linkage text DEFAULT 'connected',
 *				  blocks integer DEFAULT NULL)
 * RETURNS TABLE (id bigint, group_id bigint)
 */
Datum
simhash_groups(PG_FUNCTION_ARGS)
{
	return groups_job(fcinfo, -1, 3, 4, 5);
}

/*
 * simhash_groups(relation regclass, id_column name, hash_column name,
 *				  id_type anyelement, max_distance integer DEFAULT 3,
 *				  linkage text DEFAULT 'connected',
 *				  blocks integer DEFAULT NULL)
 * RETURNS TABLE (id anyelement, group_id anyelement)
 */
Datum
simhash_groups_typed(PG_FUNCTION_ARGS)
{
	return groups_job(fcinfo, 3, 4, 5, 6);
}
