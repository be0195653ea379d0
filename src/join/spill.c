/*
 * src/join/spill.c
 *		The radius join's kept rows: which columns each side keeps (compact
 *		arrays of Datums or minimal tuples), in memory within the rows'
 *		share of the budget, past it in a temporary file; and reading a
 *		kept row back.
 */
#include "join.h"

#include "executor/executor.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/memutils.h"

#include "shared/memory.h"

/*
 * Which columns of each side the rows kept must hold: those the target list,
 * the join quals and the output quals use (the fingerprints are taken when
 * a row is read).  When they are all passed by value, rows are kept as one
 * array of Datums per such column (8 bytes a row and column, no tuple
 * header, nothing to deform: the 1M-row self-join keeps one bigint instead
 * of a 40-byte tuple); otherwise as minimal tuples of the child's output.
 */
void
join_plan_row_storage(RadiusJoinState *js, CustomScan *cscan)
{
	JoinSide   *outer = &js->side[0];
	int			ncols = outer->ncols + js->side[1].ncols;
	bool	   *used = palloc0(sizeof(bool) * Max(ncols, 1));
	bool		known = true;
	List	   *vars;
	ListCell   *lc;

	vars = pull_var_clause((Node *) list_make3(cscan->scan.plan.targetlist,
											   cscan->scan.plan.qual,
											   list_nth(cscan->custom_exprs, EXPR_JOINQUALS)),
						   PVC_RECURSE_AGGREGATES | PVC_RECURSE_WINDOWFUNCS |
						   PVC_INCLUDE_PLACEHOLDERS);
	foreach(lc, vars)
	{
		Var		   *v = lfirst(lc);

		if (!IsA(v, Var) || v->varno != INDEX_VAR || v->varattno <= 0 ||
			v->varattno > ncols)
			known = false;		/* a whole row or a placeholder: keep all */
		else
			used[v->varattno - 1] = true;
	}
	for (int s = 0; s < 2; s++)
	{
		JoinSide   *side = &js->side[s];

		side->need = palloc(sizeof(int) * Max(side->ncols, 1));
		side->nneed = 0;
		for (int c = 0; c < side->ncols; c++)
			if (!known || used[side->first + c])
				side->need[side->nneed++] = c;
	}
	/* the columns each child's rows keep: the shared outer keeps the inner's too */
	for (int s = 0; s < 2; s++)
	{
		JoinSide   *side = &js->side[s];
		TupleDesc	desc;
		bool	   *keep;

		if (side->ps == NULL)
			break;				/* shared inputs: the outer's rows */
		desc = ExecGetResultType(side->ps);
		keep = palloc0(sizeof(bool) * Max(side->ncols, 1));
		for (int n = 0; n < side->nneed; n++)
			keep[side->need[n]] = true;
		if (s == 0 && js->shared)
			for (int n = 0; n < js->side[1].nneed; n++)
				keep[js->side[1].map[js->side[1].need[n]]] = true;
		side->store = palloc(sizeof(int) * Max(side->ncols, 1));
		side->nstore = 0;
		side->can_compact = known;
		for (int c = 0; c < side->ncols; c++)
			if (keep[c])
			{
				side->store[side->nstore++] = c;
				if (!TupleDescAttr(desc, c)->attbyval)
					side->can_compact = false;
			}
		pfree(keep);
	}
	if (js->shared)
		js->side[1].can_compact = outer->can_compact;
	pfree(used);
}

/* put slot's columns (all deformed) into side's part of the scan tuple */
void
join_fill_side(RadiusJoinState *js, JoinSide *side, TupleTableSlot *slot)
{
	TupleTableSlot *scan = js->css.ss.ss_ScanTupleSlot;

	if (side->map)
		for (int c = 0; c < side->ncols; c++)
		{
			scan->tts_values[side->first + c] = slot->tts_values[side->map[c]];
			scan->tts_isnull[side->first + c] = slot->tts_isnull[side->map[c]];
		}
	else
	{
		memcpy(scan->tts_values + side->first, slot->tts_values,
			   side->ncols * sizeof(Datum));
		memcpy(scan->tts_isnull + side->first, slot->tts_isnull,
			   side->ncols * sizeof(bool));
	}
}

/* the scan slot's columns of one side set to NULL (a null-extended row) */
void
join_clear_side(RadiusJoinState *js, JoinSide *side)
{
	TupleTableSlot *scan = js->css.ss.ss_ScanTupleSlot;

	memset(scan->tts_isnull + side->first, true, side->ncols * sizeof(bool));
}

/* entries of a side's pos[] for cap rows */
static inline uint64
row_pos_slots(uint64 cap)
{
	return cap / ROW_POS_EVERY + 1;
}

/* before row r is written to side's file: note where it starts, if pos[] keeps it */
static inline void
row_pos_note(JoinSide *side, uint64 r)
{
	if (r % ROW_POS_EVERY == 0)
		BufFileTell(side->file, &side->pos[r / ROW_POS_EVERY].fileno,
					&side->pos[r / ROW_POS_EVERY].offset);
}

/* move a side's rows in memory to a temporary file */
void
join_side_spill(RadiusJoinState *js, JoinSide *side)
{
	MemoryContext old = MemoryContextSwitchTo(js->cxt);

	side->file = BufFileCreateTemp(false);
	side->pos = MemoryContextAllocHuge(js->cxt, row_pos_slots(side->cap) * sizeof(RowPos));
	side->next_row = PG_UINT64_MAX;
	if (side->compact)
	{
		/* compact rows become tuples of their kept columns (the others NULL) */
		TupleDesc	desc = ExecGetResultType(side->ps);
		Datum	   *values = palloc0(sizeof(Datum) * Max(side->ncols, 1));
		bool	   *isnull = palloc(sizeof(bool) * Max(side->ncols, 1));

		memset(isnull, true, sizeof(bool) * Max(side->ncols, 1));
		for (uint64 i = 0; i < side->nrows; i++)
		{
			MinimalTuple tup;

			for (int n = 0; n < side->nstore; n++)
			{
				int			c = side->store[n];

				values[c] = side->colvals[c][i];
				isnull[c] = side->colnulls[c] &&
					(side->colnulls[c][i / 8] & (1 << (i % 8)));
			}
			tup = simhash_form_minimal_tuple(desc, values, isnull);
			row_pos_note(side, i);
			BufFileWrite(side->file, tup, tup->t_len);
			side->spilled_bytes += tup->t_len;
			pfree(tup);
		}
		pfree(values);
		pfree(isnull);
		side->compact = false;
		side->colvals = NULL;
		side->colnulls = NULL;
	}
	else
	{
		for (uint64 i = 0; i < side->nrows; i++)
		{
			row_pos_note(side, i);
			BufFileWrite(side->file, side->tuples[i], side->tuples[i]->t_len);
			side->spilled_bytes += side->tuples[i]->t_len;
		}
		pfree(side->tuples);
	}
	side->tuples = NULL;
	MemoryContextReset(side->tupcxt);
	side->arena = NULL;
	side->arena_left = 0;
	side->mem = 0;
	MemoryContextSwitchTo(old);
}

/* compact rows: the kept columns' arrays grown from oldcap to side->cap rows */
static void
join_compact_grow(RadiusJoinState *js, JoinSide *side, uint64 oldcap)
{
	if (side->colvals == NULL)
	{
		side->colvals = MemoryContextAllocZero(js->cxt, sizeof(Datum *) * Max(side->ncols, 1));
		side->colnulls = MemoryContextAllocZero(js->cxt, sizeof(bits8 *) * Max(side->ncols, 1));
	}
	for (int n = 0; n < side->nstore; n++)
	{
		int			c = side->store[n];

		side->colvals[c] = side->colvals[c] ?
			repalloc_huge(side->colvals[c], side->cap * sizeof(Datum)) :
			simhash_alloc_huge(side->tupcxt, side->cap * sizeof(Datum));
		side->mem += (side->cap - oldcap) * sizeof(Datum);
		if (side->colnulls[c])
		{
			side->colnulls[c] = repalloc_huge(side->colnulls[c], side->cap / 8 + 1);
			memset(side->colnulls[c] + oldcap / 8 + 1, 0, side->cap / 8 - oldcap / 8);
			side->mem += side->cap / 8 - oldcap / 8;
		}
	}
}

/* keep the row in slot as side's row side->nrows */
void
join_side_keep(RadiusJoinState *js, JoinSide *side, TupleTableSlot *slot)
{
	if (side->nrows == side->cap)
	{
		uint64		oldcap = side->cap;

		/* the planner's estimate first (within the rows' budget), then doubling */
		side->cap = side->cap == 0 ?
			Max(Min(side->ps->plan->plan_rows * 1.1,
					js->row_budget / (side->compact ? Max(side->nstore, 1) * sizeof(Datum) : 64)),
				1024) :
			side->cap * 2;
		if (side->compact)
		{
			join_compact_grow(js, side, oldcap);
			goto keep;
		}
		if (side->file)
			side->pos = repalloc_huge(side->pos, row_pos_slots(side->cap) * sizeof(RowPos));
		else if (side->tuples)
			side->tuples = repalloc_huge(side->tuples, side->cap * sizeof(MinimalTuple));
		else
			side->tuples = MemoryContextAllocHuge(js->cxt, side->cap * sizeof(MinimalTuple));
	}
keep:
	if (side->compact)
	{
		uint64		r = side->nrows;

		slot_getsomeattrs(slot, side->nstore > 0 ? side->store[side->nstore - 1] + 1 : 0);
		for (int n = 0; n < side->nstore; n++)
		{
			int			c = side->store[n];

			side->colvals[c][r] = slot->tts_values[c];
			if (slot->tts_isnull[c])
			{
				if (side->colnulls[c] == NULL)
				{
					side->colnulls[c] = MemoryContextAllocHuge(side->tupcxt, side->cap / 8 + 1);
					memset(side->colnulls[c], 0, side->cap / 8 + 1);
					side->mem += side->cap / 8 + 1;
				}
				side->colnulls[c][r / 8] |= 1 << (r % 8);
			}
		}
	}
	else if (side->file)
	{
		bool		shouldfree;
		MinimalTuple tup = ExecFetchSlotMinimalTuple(slot, &shouldfree);

		row_pos_note(side, side->nrows);
		BufFileWrite(side->file, tup, tup->t_len);
		side->spilled_bytes += tup->t_len;
		if (shouldfree)
			pfree(tup);
	}
	else
	{
		bool		shouldfree;
		/* a scan's buffer tuple is not copied: its minimal form goes to the arena */
		HeapTuple	ht = ExecFetchSlotHeapTuple(slot, false, &shouldfree);
		uint32		tlen = ht->t_len - MINIMAL_TUPLE_OFFSET;
		Size		len = MAXALIGN(tlen);
		MinimalTuple tup;

		/* packed into large chunks: no per-row chunk header or rounding */
		if (len > side->arena_left)
		{
			Size		size = Max(ROW_ARENA_CHUNK, len);

			side->arena = MemoryContextAllocHuge(side->tupcxt, size);
			side->arena_left = size;
			side->mem += size;
		}
		/* as minimal_tuple_from_heap_tuple() */
		tup = (MinimalTuple) side->arena;
		memcpy(tup, (char *) ht->t_data + MINIMAL_TUPLE_OFFSET, tlen);
		tup->t_len = tlen;
		side->tuples[side->nrows] = tup;
		side->arena += len;
		side->arena_left -= len;
		if (shouldfree)
			heap_freetuple(ht);
	}
	side->nrows++;
}

/* read the length word of the row the file is at; false at a bad length */
static bool
read_row_len(BufFile *file, uint32 *len)
{
	return BufFileRead(file, len, sizeof(*len)) == sizeof(*len) &&
		*len >= sizeof(*len) && *len <= MaxAllocSize;
}

/* a temporary file of kept rows could not be read back */
static void
report_read_error(void)
{
	ereport(ERROR,
			(errcode_for_file_access(),
			 errmsg("could not read a temporary file of simhash join rows")));
}

/*
 * side's row `row`, in side->slot (deformed).  In a temporary file the row
 * is found from the nearest position kept at or before it, or from where
 * the last read ended when that is nearer, by skipping the rows between
 * (candidates come in row order: mostly a few rows ahead).  Identical
 * inputs share the outer side's file and its position.
 */
TupleTableSlot *
join_side_fetch(RadiusJoinState *js, JoinSide *side, uint64 row)
{
	MinimalTuple tup;

	if (side->file == NULL)
		tup = side->tuples[row];
	else
	{
		JoinSide   *f = js->shared ? &js->side[0] : side;
		uint64		at;
		uint32		len;

		if (f->next_row <= row && row - f->next_row < ROW_POS_EVERY)
			at = f->next_row;
		else
		{
			at = row - row % ROW_POS_EVERY;
			if (BufFileSeek(f->file, f->pos[row / ROW_POS_EVERY].fileno,
							f->pos[row / ROW_POS_EVERY].offset, SEEK_SET) != 0)
				report_read_error();
		}
		/* the position is unknown until the row is read */
		f->next_row = PG_UINT64_MAX;
		for (; at < row; at++)
		{
			if (!read_row_len(f->file, &len) ||
				BufFileSeek(f->file, 0, (off_t) (len - sizeof(len)), SEEK_CUR) != 0)
				report_read_error();
		}
		if (!read_row_len(f->file, &len))
			report_read_error();
		if (len > side->bufsize)
		{
			if (side->buf)
				pfree(side->buf);
			side->buf = MemoryContextAlloc(js->cxt, len);
			side->bufsize = len;
		}
		memcpy(side->buf, &len, sizeof(len));
		if (BufFileRead(f->file, side->buf + sizeof(len), len - sizeof(len)) !=
			len - sizeof(len))
			report_read_error();
		f->next_row = row + 1;
		tup = (MinimalTuple) side->buf;
	}
	ExecStoreMinimalTuple(tup, side->slot, false);
	slot_getallattrs(side->slot);
	return side->slot;
}
