/*
 * src/join/exec.c
 *		The radius join's executor: `a.h <~> b.h <= k` between two inputs
 *		(or an input and itself) as one permuted-table search over both
 *		(shared/pair_search.h): read both sides, keeping their rows
 *		(spill.c), search, check the candidate pairs against the join
 *		quals, and return the joined rows (inner, semi or anti).
 *
 * The design -- why a join path, the search over both sides, self-joins of
 * identical scans, kept rows, memory and spilling, planning and costs,
 * parallel plans -- with its invariants and a worked example is in
 * src/join/README.md.
 */
#include "join.h"

#include "access/htup_details.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "shared/pair_search.h"
#include "types/clauses.h"

static void join_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *join_exec(CustomScanState *node);
static void join_end(CustomScanState *node);
static void join_rescan(CustomScanState *node);

/* the executor node's methods; EXPLAIN is explain.c's */
static const CustomExecMethods join_exec_methods = {
	.CustomName = JOIN_NAME,
	.BeginCustomScan = join_begin,
	.ExecCustomScan = join_exec,
	.EndCustomScan = join_end,
	.ReScanCustomScan = join_rescan,
	.ExplainCustomScan = join_explain,
};

/* CreateCustomScanState: the node's state */
Node *
join_create_state(CustomScan *cscan)
{
	RadiusJoinState  *js = (RadiusJoinState *) newNode(sizeof(RadiusJoinState), T_CustomScanState);

	js->css.methods = &join_exec_methods;
	js->css.flags = cscan->flags;
	return (Node *) js;
}

/* BeginCustomScan: start both children and the scan slot's layout */
static void
join_begin(CustomScanState *node, EState *estate, int eflags)
{
	RadiusJoinState  *js = (RadiusJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	int			child_eflags = eflags & ~(EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK | EXEC_FLAG_REWIND);
	int			outer_cols = intVal(lsecond(cscan->custom_private));

	js->jointype = (JoinType) intVal(linitial(cscan->custom_private));
	js->shared = lthird(cscan->custom_private) != NIL;
	js->cxt = AllocSetContextCreate(estate->es_query_cxt, "simhash join",
									ALLOCSET_DEFAULT_SIZES);
	for (int s = 0; s < 2; s++)
	{
		JoinSide   *side = &js->side[s];
		Plan	   *child;
		Expr	   *hash;

		if (s == 1 && js->shared)
		{
			/* no inner plan: the outer's rows, its columns mapped */
			List	   *map = lthird(cscan->custom_private);
			ListCell   *lc;

			side->first = outer_cols;
			side->ncols = list_length(map);
			side->map = palloc(sizeof(int) * side->ncols);
			foreach(lc, map)
				side->map[foreach_current_index(lc)] = intVal(lfirst(lc));
			side->slot = ExecInitExtraTupleSlot(estate, ExecGetResultType(js->side[0].ps),
												&TTSOpsMinimalTuple);
			break;
		}
		child = list_nth(cscan->custom_plans, s);
		side->ps = ExecInitNode(child, estate, child_eflags);
		node->custom_ps = lappend(node->custom_ps, side->ps);
		side->first = s == 0 ? 0 : outer_cols;
		side->ncols = list_length(child->targetlist);
		hash = list_nth(cscan->custom_exprs, s == 0 ? EXPR_OUTER_HASH : EXPR_INNER_HASH);
		side->hash = ExecInitExpr(hash, &node->ss.ps);
		side->hash_attno = 0;
		if (IsA(hash, Var) && ((Var *) hash)->varno == INDEX_VAR &&
			((Var *) hash)->varattno > side->first &&
			((Var *) hash)->varattno <= side->first + side->ncols)
			side->hash_attno = ((Var *) hash)->varattno - side->first;
		side->slot = ExecInitExtraTupleSlot(estate, ExecGetResultType(side->ps),
											&TTSOpsMinimalTuple);
	}
	js->radius = ExecInitExpr(list_nth(cscan->custom_exprs, EXPR_RADIUS), &node->ss.ps);
	js->joinquals = ExecInitQual(list_nth(cscan->custom_exprs, EXPR_JOINQUALS),
								 &node->ss.ps);
	js->result_slot = ExecInitExtraTupleSlot(estate,
											 node->ss.ps.ps_ResultTupleDesc,
											 &TTSOpsMinimalTuple);
	/* rows come from a tuplestore or the projection: no fixed slot type */
	node->ss.ps.resultopsfixed = false;
	join_plan_row_storage(js, cscan);
	/* the planner's self_pair_fails(): the search's pairs are the only candidates */
	js->self_fails = js->shared &&
		intVal(list_nth(cscan->custom_private, PRIV_SELF_FAILS)) != 0;
}

/*
 * Put side's row `row` into its part of the scan tuple: the columns used
 * above the join (the others are never read).
 */
static void
load_row(RadiusJoinState *js, JoinSide *side, uint64 row)
{
	TupleTableSlot *scan = js->css.ss.ss_ScanTupleSlot;

	if (side->compact)
	{
		for (int n = 0; n < side->nneed; n++)
		{
			int			c = side->need[n];
			int			src = side->map ? side->map[c] : c;

			scan->tts_values[side->first + c] = side->colvals[src][row];
			scan->tts_isnull[side->first + c] = side->colnulls[src] &&
				(side->colnulls[src][row / 8] & (1 << (row % 8)));
		}
	}
	else
		join_fill_side(js, side, join_side_fetch(js, side, row));
}

/* the target list on the scan tuple (which is the result when they match) */
static TupleTableSlot *
project(RadiusJoinState *js)
{
	if (js->css.ss.ps.ps_ProjInfo == NULL)
		return js->css.ss.ss_ScanTupleSlot;
	return ExecProject(js->css.ss.ps.ps_ProjInfo);
}

/*
 * A candidate pair: outer row o, inner row i.  Check the other quals on the
 * two rows; for an inner join, project and keep the result; for a semi or
 * anti join, mark o.
 */
static void
check_pair(RadiusJoinState *js, uint64 o, uint64 i)
{
	ExprContext *econtext = js->css.ss.ps.ps_ExprContext;
	TupleTableSlot *scan = js->css.ss.ss_ScanTupleSlot;
	TupleTableSlot *slot = NULL;

	if (js->matched && (js->matched[o / 8] & (1 << (o % 8))))
		return;					/* already has a match */
	js->pairs_checked++;
	ExecClearTuple(scan);
	if (js->side[0].compact)
		load_row(js, &js->side[0], o);
	else
	{
		slot = join_side_fetch(js, &js->side[0], o);
		join_fill_side(js, &js->side[0], slot);
	}
	if (js->side[1].compact)
		load_row(js, &js->side[1], i);
	else
	{
		/* a row paired with itself (shared inputs) is read once */
		if (slot == NULL || !js->shared || o != i)
			slot = join_side_fetch(js, &js->side[1], i);
		join_fill_side(js, &js->side[1], slot);
	}
	ExecStoreVirtualTuple(scan);
	ResetExprContext(econtext);
	econtext->ecxt_scantuple = scan;
	if (!ExecQual(js->joinquals, econtext))
		return;
	if (js->matched)
		js->matched[o / 8] |= 1 << (o % 8);
	else
		tuplestore_puttupleslot(js->results, project(js));
}

/* qsort order of candidates: by major (the row in the file), then minor */
static int
candidate_cmp(const void *a, const void *b)
{
	const JoinCandidate *x = a,
			   *y = b;

	if (x->major != y->major)
		return x->major < y->major ? -1 : 1;
	if (x->minor != y->minor)
		return x->minor < y->minor ? -1 : 1;
	return 0;
}

/*
 * Check the candidates waiting, in the order of the rows in the temporary
 * file (the outer's if it is in one, else the inner's), so that the file is
 * read forward rather than at random.  In a self-join the two inputs number
 * a row alike, so the many pairs of a row with itself are then in order
 * for both files.
 */
static void
check_candidates(RadiusJoinState *js)
{
	bool		outer_major = js->side[0].file != NULL;

	pg_qsort(js->cand, js->ncand, sizeof(JoinCandidate), candidate_cmp);
	for (size_t c = 0; c < js->ncand; c++)
	{
		const JoinCandidate *cd = &js->cand[c];

		if (c % CROSS_BATCH == 0)
			CHECK_FOR_INTERRUPTS();
		if (outer_major)
			check_pair(js, cd->major, cd->minor);
		else
			check_pair(js, cd->minor, cd->major);
	}
	js->ncand = 0;
}

/* a row's tuple in memory, or NULL if its side is in a file */
static inline MinimalTuple
side_tuple(const JoinSide *side, uint64 row)
{
	return side->file ? NULL : side->tuples[row];
}

/* compact rows: prefetch the first kept column of side's row `row` */
static inline void
side_prefetch(const JoinSide *side, uint64 row)
{
	if (side->nneed > 0)
		__builtin_prefetch(&side->colvals[side->map ? side->map[side->need[0]] :
										  side->need[0]][row]);
}

/* outer row o and inner row i are within the radius: check them now or later */
static inline void
add_candidate(RadiusJoinState *js, uint64 o, uint64 i)
{
	if (js->cand == NULL)
		check_pair(js, o, i);
	else
	{
		bool		outer_major = js->side[0].file != NULL;

		js->cand[js->ncand].major = outer_major ? o : i;
		js->cand[js->ncand].minor = outer_major ? i : o;
		if (++js->ncand == js->maxcand)
			check_candidates(js);
	}
}

/*
 * PairSearchFn: the search's pairs; those of an outer and an inner row are
 * candidates (with shared inputs every pair of rows is, both ways round).
 * They come in fingerprint order, their rows scattered in memory: the
 * batch's row pointers and then their tuples are prefetched before the
 * candidates are checked (this halved the join's time at 1M rows, where
 * nearly every candidate is a cache miss).
 */
static void
join_pairs(void *arg, const SimhashRowPair *pairs, size_t n)
{
	RadiusJoinState *js = (RadiusJoinState *) arg;
	JoinSide   *outer = &js->side[0],
			   *inner = &js->side[1];

	if (outer->compact && inner->compact)
	{
		for (size_t p = 0; p < n; p++)
		{
			side_prefetch(&js->side[(pairs[p].a & KEY_INNER) != 0], pairs[p].a & ~KEY_INNER);
			side_prefetch(&js->side[(pairs[p].b & KEY_INNER) != 0], pairs[p].b & ~KEY_INNER);
		}
	}
	else if (outer->file == NULL && inner->file == NULL &&
			 !outer->compact && !inner->compact)
	{
		for (size_t p = 0; p < n; p++)
		{
			__builtin_prefetch(&outer->tuples[pairs[p].a & ~KEY_INNER]);
			__builtin_prefetch(&inner->tuples[pairs[p].a & ~KEY_INNER]);
			__builtin_prefetch(&outer->tuples[pairs[p].b & ~KEY_INNER]);
			__builtin_prefetch(&inner->tuples[pairs[p].b & ~KEY_INNER]);
		}
		for (size_t p = 0; p < n; p++)
		{
			uint64		a = pairs[p].a,
						b = pairs[p].b;

			if (!js->shared && ((a ^ b) & KEY_INNER) == 0)
				continue;
			__builtin_prefetch(side_tuple(&js->side[(a & KEY_INNER) != 0], a & ~KEY_INNER));
			__builtin_prefetch(side_tuple(&js->side[(b & KEY_INNER) != 0], b & ~KEY_INNER));
		}
	}
	for (size_t p = 0; p < n; p++)
	{
		uint64		a = pairs[p].a,
					b = pairs[p].b;

		if (js->shared)
		{
			add_candidate(js, a, b);
			add_candidate(js, b, a);
		}
		else if (((a ^ b) & KEY_INNER) == 0)
			continue;			/* two rows of the same side */
		else if (a & KEY_INNER)
			add_candidate(js, b, a & ~KEY_INNER);
		else
			add_candidate(js, a, b & ~KEY_INNER);
	}
}

/* shared inputs: the inner side's rows are the outer's */
static void
share_rows(RadiusJoinState *js)
{
	JoinSide   *outer = &js->side[0],
			   *inner = &js->side[1];

	inner->nrows = outer->nrows;
	inner->compact = outer->compact;
	inner->colvals = outer->colvals;
	inner->colnulls = outer->colnulls;
	inner->tuples = outer->tuples;
	inner->file = outer->file;
	inner->pos = outer->pos;
	inner->hashed = outer->hashed;
	inner->hashed_size = outer->hashed_size;
}

/*
 * Read a child to the end: keep its rows, and give the fingerprints to the
 * search (or note them for the all-pairs case).
 */
static void
read_side(RadiusJoinState *js, int s, PairSearch *search, bool all_pairs, Size row_budget)
{
	JoinSide   *side = &js->side[s];
	ExprContext *econtext = js->css.ss.ps.ps_ExprContext;
	TupleTableSlot *scan = js->css.ss.ss_ScanTupleSlot;
	bool		any_pairs = search != NULL || all_pairs;
	/* the rows with a fingerprint: for all pairs, or each row with itself */
	bool		mark_hashed = all_pairs || (js->shared && !js->self_fails && search != NULL);

	ExecClearTuple(scan);
	join_clear_side(js, &js->side[1 - s]);
	for (;;)
	{
		TupleTableSlot *slot = ExecProcNode(side->ps);
		Datum		h;
		bool		isnull;

		if (TupIsNull(slot))
			break;
		CHECK_FOR_INTERRUPTS();
		/* an inner join without any possible pair needs no rows */
		if (!any_pairs && (js->jointype == JOIN_INNER || s == 1))
			continue;
		if (any_pairs && side->hash_attno > 0)
			h = slot_getattr(slot, side->hash_attno, &isnull);	/* a column */
		else if (any_pairs)
		{
			slot_getallattrs(slot);
			ExecClearTuple(scan);
			join_fill_side(js, side, slot);
			ExecStoreVirtualTuple(scan);
			ResetExprContext(econtext);
			econtext->ecxt_scantuple = scan;
			h = ExecEvalExprSwitchContext(side->hash, econtext, &isnull);
		}
		if (any_pairs)
		{
			if (mark_hashed && side->nrows / 8 >= side->hashed_size)
			{
				Size		size = Max(side->hashed_size * 2, 128);

				side->hashed = side->hashed ?
					repalloc_huge(side->hashed, size) :
					MemoryContextAllocHuge(js->cxt, size);
				memset(side->hashed + side->hashed_size, 0, size - side->hashed_size);
				side->hashed_size = size;
			}
			if (!isnull && search)
				pair_search_add(search, DatumGetSimhash64(h),
								 side->nrows | (s == 1 ? KEY_INNER : 0));
			if (!isnull && mark_hashed)
				side->hashed[side->nrows / 8] |= 1 << (side->nrows % 8);
		}
		join_side_keep(js, side, slot);
		if (side->file == NULL &&
			js->side[0].mem + js->side[1].mem > row_budget)
			join_side_spill(js, side);
	}
}

/* the all-pairs case (radius 64 or more): every pair of fingerprints */
static void
join_all_pairs(RadiusJoinState *js)
{
	JoinSide   *outer = &js->side[0],
			   *inner = &js->side[1];
	uint64		n = 0;

	for (uint64 o = 0; o < outer->nrows; o++)
	{
		if (!(outer->hashed[o / 8] & (1 << (o % 8))))
			continue;
		for (uint64 i = 0; i < inner->nrows; i++)
		{
			if (!(inner->hashed[i / 8] & (1 << (i % 8))))
				continue;
			if (++n % CROSS_BATCH == 0)
				CHECK_FOR_INTERRUPTS();
			check_pair(js, o, i);
		}
	}
}

/*
 * The shares of the budget: an eighth for the results, an eighth for the
 * candidates waiting when rows are in files, and the rest split between the
 * search (PAIR_SEARCH_ROW_BYTES a row) and the kept rows.  Rows kept as tuples
 * get a quarter (their width is only estimated); compact rows their exact
 * share (the 1M-row self-join, 8 bytes a row beside the search's 40: a
 * sixth of the three quarters), so that the budget holds more rows.
 */
static void
set_budgets(RadiusJoinState *js, Size budget)
{
	JoinSide   *outer = &js->side[0],
			   *inner = &js->side[1];

	if (outer->compact && inner->compact)
	{
		double		width = (double) Max(outer->nstore,
										 js->shared ? 0 : inner->nstore) * sizeof(Datum);
		double		rows = (double) budget * 3 / 4;

		js->search_budget = (Size) (rows * PAIR_SEARCH_ROW_BYTES / (PAIR_SEARCH_ROW_BYTES + width));
		js->row_budget = (Size) rows - js->search_budget;
	}
	else
	{
		js->search_budget = budget / 2;
		js->row_budget = budget / 4;
	}
}

/* Run the join: read both children, search, collect the results. */
static void
join_run(RadiusJoinState *js)
{
	ExprContext *econtext = js->css.ss.ps.ps_ExprContext;
	MemoryContext old = MemoryContextSwitchTo(js->cxt);
	Size		budget = get_hash_memory_limit();
	PairSearch *search = NULL;
	DedupProgress progress;
	bool		all_pairs = false;
	Datum		k;

	js->budget = budget;
	js->pairs_checked = 0;
	js->spilled_bytes = 0;
	js->searched = false;
	for (int s = 0; s < 2; s++)
	{
		js->side[s].tupcxt = AllocSetContextCreate(js->cxt, "simhash join rows",
												   ALLOCSET_DEFAULT_SIZES);
		js->side[s].compact = js->side[s].can_compact;
	}
	set_budgets(js, budget);

	/* the radius: no Vars, evaluated once */
	ResetExprContext(econtext);
	k = ExecEvalExprSwitchContext(js->radius, econtext, &js->radius_null);
	js->radius_value = js->radius_null ? -1 : DatumGetInt64(k);
	if (!js->radius_null && js->radius_value >= 64)
		all_pairs = true;
	else if (!js->radius_null && js->radius_value >= 0)
	{
		int			radius = (int) js->radius_value;

		simhash_blocks_init_checked(&js->blocks, join_nblocks(radius), radius);
		progress.fname = "simhash join";
		/* progress messages only when asked for every step */
		progress.last = DT_NOEND;
		search = pair_search_create(&js->blocks, js->search_budget,
									 js->side[0].ps->plan->plan_rows +
									 (js->shared ? 0 : js->side[1].ps->plan->plan_rows),
									 &progress);
		pair_search_set_budget_name(search,
									 "the join's search memory (a share of work_mem * hash_mem_multiplier)",
									 "work_mem or hash_mem_multiplier");
		js->searched = true;
	}

	/* the children run in the query's context: theirs must outlive js->cxt */
	MemoryContextSwitchTo(old);
	read_side(js, 0, search, all_pairs, js->row_budget);
	if (js->shared)
		share_rows(js);
	else
		read_side(js, 1, search, all_pairs, js->row_budget);

	MemoryContextSwitchTo(js->cxt);
	if (js->jointype != JOIN_INNER)
		js->matched = MemoryContextAllocHuge(js->cxt, js->side[0].nrows / 8 + 1);
	if (js->matched)
		memset(js->matched, 0, js->side[0].nrows / 8 + 1);
	else
		js->results = tuplestore_begin_heap(false, false,
											Max(64, (int) (budget / 8 / 1024)));
	/* rows in files: candidates are sorted by row before they are checked */
	if (js->side[0].file || js->side[1].file)
	{
		js->maxcand = Max(budget / 8 / sizeof(JoinCandidate), 1024);
		js->cand = MemoryContextAllocHuge(js->cxt, js->maxcand * sizeof(JoinCandidate));
		js->ncand = 0;
	}
	MemoryContextSwitchTo(old);

	if (search)
	{
		/* shared inputs: each row with itself, in row order, then the search's pairs */
		if (js->shared && !js->self_fails)
			for (uint64 r = 0; r < js->side[0].nrows; r++)
			{
				if (r % CROSS_BATCH == 0)
					CHECK_FOR_INTERRUPTS();
				if (js->side[0].hashed[r / 8] & (1 << (r % 8)))
					add_candidate(js, r, r);
			}
		pair_search_run(search, js->search_budget, join_pairs, js);
		if (js->cand)
			check_candidates(js);
		js->spilled_bytes = pair_search_spilled_bytes(search);
		pair_search_free(search);
	}
	else if (all_pairs)
		join_all_pairs(js);
	js->spilled_bytes += js->side[0].spilled_bytes +
		(js->shared ? 0 : js->side[1].spilled_bytes);

	/*
	 * Under EXPLAIN ANALYZE, also in the node's instrumentation: a parallel
	 * worker's is added to the leader's (and kept per worker) when the
	 * Gather above finishes, which a node that is not parallel-aware has no
	 * other way to do.  ntuples2 and nfiltered2 are not used for custom
	 * scans by PostgreSQL; see join_explain().
	 */
	if (js->css.ss.ps.instrument)
	{
		js->css.ss.ps.instrument->ntuples2 += js->pairs_checked;
		js->css.ss.ps.instrument->nfiltered2 += js->spilled_bytes;
	}
	js->next_outer = 0;
	js->done = true;
}

/* ExecCustomScan: the next joined row (the search runs on the first call) */
static TupleTableSlot *
join_exec(CustomScanState *node)
{
	RadiusJoinState  *js = (RadiusJoinState *) node;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;

	if (!js->done)
		join_run(js);

	if (js->jointype == JOIN_INNER)
	{
		if (tuplestore_gettupleslot(js->results, true, false, js->result_slot))
			return js->result_slot;
		return NULL;
	}

	/* semi/anti: the outer rows with (without) a match, in input order */
	while (js->next_outer < js->side[0].nrows)
	{
		uint64		o = js->next_outer++;
		bool		match = (js->matched[o / 8] & (1 << (o % 8))) != 0;
		TupleTableSlot *scan = node->ss.ss_ScanTupleSlot;

		CHECK_FOR_INTERRUPTS();
		if (match != (js->jointype == JOIN_SEMI))
			continue;
		ExecClearTuple(scan);
		load_row(js, &js->side[0], o);
		join_clear_side(js, &js->side[1]);
		ExecStoreVirtualTuple(scan);
		ResetExprContext(econtext);
		econtext->ecxt_scantuple = scan;
		if (node->ss.ps.qual && !ExecQual(node->ss.ps.qual, econtext))
			continue;
		return project(js);
	}
	return NULL;
}

/* forget the last run's rows and results */
static void
join_reset(RadiusJoinState *js)
{
	for (int s = 0; s < 2; s++)
	{
		JoinSide   *side = &js->side[s];

		if (side->file && !(s == 1 && js->shared))
			BufFileClose(side->file);
		side->file = NULL;
		side->tuples = NULL;
		side->compact = false;
		side->colvals = NULL;
		side->colnulls = NULL;
		side->pos = NULL;
		side->buf = NULL;
		side->bufsize = 0;
		side->hashed = NULL;
		side->hashed_size = 0;
		side->nrows = side->cap = 0;
		side->arena = NULL;
		side->arena_left = 0;
		side->mem = 0;
		side->spilled_bytes = 0;
		ExecClearTuple(side->slot);
	}
	if (js->results)
		tuplestore_end(js->results);
	js->results = NULL;
	js->matched = NULL;
	js->cand = NULL;
	js->ncand = 0;
	ExecClearTuple(js->result_slot);
	MemoryContextReset(js->cxt);
	js->done = false;
}

/* EndCustomScan: free the results and end both children */
static void
join_end(CustomScanState *node)
{
	RadiusJoinState  *js = (RadiusJoinState *) node;

	join_reset(js);
	for (int s = 0; s < 2; s++)
		if (js->side[s].ps)
			ExecEndNode(js->side[s].ps);
}

/*
 * Rescan: when no parameter changed, return the same rows again; else redo
 * the join (the children are rescanned by their first ExecProcNode when
 * their own parameters changed).
 */
static void
join_rescan(CustomScanState *node)
{
	RadiusJoinState  *js = (RadiusJoinState *) node;

	if (node->ss.ps.chgParam == NULL && js->done)
	{
		if (js->results)
			tuplestore_rescan(js->results);
		js->next_outer = 0;
		return;
	}
	join_reset(js);
	for (int s = 0; s < 2; s++)
	{
		PlanState  *child = js->side[s].ps;

		if (child == NULL)
			continue;
		if (node->ss.ps.chgParam != NULL)
			UpdateChangedParamSet(child, node->ss.ps.chgParam);
		if (child->chgParam == NULL)
			ExecReScan(child);
	}
}
