/*
 * src/join/scan.c
 *		The radius join: `a.h <~> b.h <= k` between two relations (or a
 *		relation and itself, or subqueries) as one permuted-table search over
 *		both inputs, offered to the planner as a CustomScan ("SimhashJoin")
 *		through set_join_pathlist_hook.
 *
 * The design -- why a join path, the search over both sides, self-joins of
 * identical scans, kept rows, memory and spilling, planning and costs,
 * parallel plans -- with its invariants and a worked example is in
 * src/join/README.md.
 */
#include "simhash.h"

#include <math.h>

#include "access/htup_details.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/prep.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"
#include "storage/buffile.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"
#include "utils/tuplestore.h"

#include "compat.h"
#include "core/blocks.h"
#include "dedup/dedup.h"
#include "types/planner.h"

#define JOIN_NAME "SimhashJoin"

/* the radius assumed at planning time when it is not a constant */
#define JOIN_DEFAULT_RADIUS 3

/* the side of a row, in the top bit of its search key */
#define KEY_INNER (UINT64CONST(1) << 63)

/* kept rows are packed into chunks of this size */
#define ROW_ARENA_CHUNK (1024 * 1024)

/* candidates between interrupt checks in the all-pairs case */
#define CROSS_BATCH 4096

static bool simhash_enable_join = true;
static int	simhash_join_blocks = 0;
static set_join_pathlist_hook_type prev_join_pathlist_hook = NULL;

/* custom_exprs of the plan, by position */
enum
{
	EXPR_OUTER_HASH,
	EXPR_INNER_HASH,
	EXPR_RADIUS,
	EXPR_JOINQUALS,
	NUM_EXPRS
};

/*
 * custom_private of the plan, by position: Integers, and the inner's
 * columns among the outer's when the inputs are shared (NIL if not)
 */
enum
{
	PRIV_JOINTYPE,
	PRIV_OUTER_COLS,
	PRIV_INNER_MAP,
	NUM_PRIV
};

/* a kept row in a temporary file */
typedef struct RowPos
{
	int			fileno;
	off_t		offset;
} RowPos;

/* one input of the join and its kept rows */
typedef struct JoinSide
{
	PlanState  *ps;				/* the child plan */
	int			first;			/* its first column in the scan tuple */
	int			ncols;
	int		   *map;			/* shared inputs: the inner's columns among the outer's */
	ExprState  *hash;			/* its fingerprint */
	AttrNumber	hash_attno;		/* > 0: it is this column of the child's */
	TupleTableSlot *slot;		/* a kept row being read */
	uint64		nrows;
	uint64		cap;
	/* the side's columns used above the join (others are never read) */
	int			nneed;
	int		   *need;			/* positions among its ncols */
	/* compact rows: the kept columns only, as arrays of Datums */
	bool		can_compact;	/* every kept column is by value */
	bool		compact;		/* this run keeps its rows so */
	int			nstore;
	int		   *store;			/* the child's columns kept */
	Datum	  **colvals;		/* by child column: values by row number */
	bits8	  **colnulls;		/* ... NULL bitmaps (NULL: no NULL yet) */
	MemoryContext tupcxt;		/* the rows in memory */
	MinimalTuple *tuples;		/* ... by row number, or */
	char	   *arena;			/* where the next row in memory goes */
	Size		arena_left;
	BufFile    *file;			/* ... in a temporary file, at */
	RowPos	   *pos;
	char	   *buf;			/* a row read back */
	Size		bufsize;
	Size		mem;			/* bytes of rows in memory */
	uint64		spilled_bytes;
	bits8	   *hashed;			/* rows with a fingerprint (all-pairs case) */
	Size		hashed_size;
} JoinSide;

/*
 * A candidate pair waiting to be checked: the row numbers, that of the side
 * in a temporary file first (the outer's if both are).
 */
typedef struct JoinCandidate
{
	uint64		major;
	uint64		minor;
} JoinCandidate;

typedef struct RadiusJoinState
{
	CustomScanState css;
	JoinType	jointype;
	bool		shared;			/* identical inputs: the outer's rows serve both */
	bool		self_fails;		/* ... and a row with itself fails the quals */
	JoinSide	side[2];		/* outer, inner */
	ExprState  *radius;
	ExprState  *joinquals;
	MemoryContext cxt;			/* everything of one execution */
	Size		budget;
	Size		search_budget;	/* the search's share of it */
	Size		row_budget;		/* the kept rows' share */
	bool		done;			/* the join has run */
	Tuplestorestate *results;
	TupleTableSlot *result_slot;
	bits8	   *matched;		/* semi/anti: outer rows with a match */
	JoinCandidate *cand;		/* candidates waiting, when rows are in files */
	size_t		ncand;
	size_t		maxcand;
	uint64		next_outer;		/* semi/anti: the next outer row to return */
	/* what the last run did, for EXPLAIN ANALYZE */
	int64		radius_value;
	bool		radius_null;
	SimhashBlocks blocks;
	bool		searched;		/* with blocks (not all pairs, not none) */
	uint64		pairs_checked;
	uint64		spilled_bytes;
} RadiusJoinState;

static void plan_row_storage(RadiusJoinState *js, CustomScan *cscan);
static bool self_pair_fails(RadiusJoinState *js, List *quals);
static void compact_grow(RadiusJoinState *js, JoinSide *side, uint64 oldcap);

static CustomPathMethods join_path_methods;
static CustomScanMethods join_scan_methods;
static CustomExecMethods join_exec_methods;

/* ---------------------------------------------------------------------
 * Planning
 * ---------------------------------------------------------------------
 */

/* the number of blocks for radius k: simhash.join_blocks if valid, else k + 2 */
static int
join_nblocks(int k)
{
	if (simhash_join_blocks > 0 &&
		simhash_blocks_validate(simhash_join_blocks, k) == SIMHASH_BLOCKS_OK)
		return simhash_join_blocks;
	return Min(k + 2, SIMHASH_MAX_BLOCKS);
}

/*
 * PostgreSQL's estimate of the processes sharing a partial path's rows
 * (get_parallel_divisor() of costsize.c, static there): its workers and the
 * leader's part, which shrinks as the workers must be served.
 */
static double
parallel_divisor(Path *path)
{
	double		divisor = path->parallel_workers;

	if (parallel_leader_participation && 1.0 - 0.3 * path->parallel_workers > 0)
		divisor += 1.0 - 0.3 * path->parallel_workers;
	return divisor;
}

/*
 * Cost of the join (all of it is startup: nothing comes out before both
 * inputs are read and searched).  Per input row: cpu_tuple_cost and
 * JOIN_ROW_COST (reading and keeping it, its share of the sort by
 * fingerprint and of the candidates' cache misses), and JOIN_TABLE_COST
 * per table of the search (a radix sort pass and find_all over its runs).
 * Calibrated with bench/join.sh (doc/joins.md, "Costs"): the join of new
 * rows against its 10M-row corpus at radius 0 (1 table) and radius 3 (10
 * tables), timed beside a sequential count(*) of the corpus, whose cost in
 * units gives the time of one unit: the difference per table and row is
 * JOIN_TABLE_COST, the rest per row, less the two scans, cpu_tuple_cost
 * plus JOIN_ROW_COST.
 */
#define JOIN_ROW_COST		34.0	/* in cpu_operator_cost, per input row */
#define JOIN_TABLE_COST		2.0 /* in cpu_operator_cost, per row and table */
/*
 * Per comparison of two rows in a run of equal prefixes (a popcount in a
 * sequential scan of the run): 1,000 new rows against the 10M corpus took
 * 43.3 s at radius 6 (blocks 8, 28 tables of 16-bit prefixes, 2.2e10
 * comparisons) in the run above, where the rest of the model gives 2.53M
 * units (17.7 s): 25.6 s more, 1.2 ns or 0.07 cpu_operator_cost a
 * comparison (an upper bound: the load rose during that run).
 */
#define JOIN_PAIR_COST		0.07

/*
 * How the join will keep its rows (as plan_row_storage() decides at run
 * time, from the plan): the columns of each side used above the join (the
 * join relation's target list, the other join quals and the output quals),
 * and whether all are passed by value (*compact).  Returns the kept width of
 * the widest side in bytes (8 a column when compact; the sides' tuple
 * widths otherwise, for information only).
 */
static double
kept_width(RelOptInfo *joinrel, RelOptInfo *outerrel, List *joinquals,
		   List *otherquals, bool shared, bool *compact)
{
	List	   *vars;
	List	   *seen = NIL;
	ListCell   *lc;
	int			ncols[2] = {0, 0};

	*compact = true;
	vars = pull_var_clause((Node *) list_make3(joinrel->reltarget->exprs,
											   joinquals, otherquals),
						   PVC_RECURSE_AGGREGATES | PVC_RECURSE_WINDOWFUNCS |
						   PVC_INCLUDE_PLACEHOLDERS);
	foreach(lc, vars)
	{
		Var		   *v = lfirst(lc);

		if (!IsA(v, Var) || v->varattno <= 0)
		{
			*compact = false;	/* a placeholder or a whole row: tuples */
			continue;
		}
		if (list_member(seen, v))
			continue;
		seen = lappend(seen, v);
		if (!get_typbyval(v->vartype))
			*compact = false;
		ncols[bms_is_member(v->varno, outerrel->relids) ? 0 : 1]++;
	}
	/* a shared input's outer rows keep the inner's columns too */
	if (shared)
		return (double) (ncols[0] + ncols[1]) * sizeof(Datum);
	return (double) Max(ncols[0], ncols[1]) * sizeof(Datum);
}

/*
 * The path's rows and costs: reading both sides, the search, the
 * candidates, and temporary files when the search or the kept rows exceed
 * their share of work_mem * hash_mem_multiplier (set_budgets()).
 */
static void
join_cost(PlannerInfo *root, CustomPath *cp, Path *outer, Path *inner, bool shared,
		  Node *k, List *quals, Selectivity pair_sel, double width, bool compact)
{
	double		rows = shared ? outer->rows : outer->rows + inner->rows;
	int			radius = simhash_planned_radius(root, k, JOIN_DEFAULT_RADIUS);
	double		tables;
	double		candidates;
	double		row_bytes;
	double		budget = (double) get_hash_memory_limit();
	double		search_budget;
	double		row_budget;
	QualCost	qcost;
	Cost		cost;

	SimhashBlocks blocks;

	if (radius < 0)
		tables = 0;
	else if (radius >= 64)
		tables = -1;			/* all pairs */
	else
		tables = (double) simhash_binomial(join_nblocks(radius), radius);

	cost = outer->total_cost + (shared ? 0 : inner->total_cost);
	SimhashSetDisabledNodes(&cp->path, SimhashPathDisabledNodes(outer) +
							(shared ? 0 : SimhashPathDisabledNodes(inner)));
	cost += rows * (cpu_tuple_cost + JOIN_ROW_COST * cpu_operator_cost);
	if (tables >= 0)
		cost += rows * tables * JOIN_TABLE_COST * cpu_operator_cost;

	/*
	 * A partial path: the outer's rows and cost above are one process's
	 * share (PostgreSQL's partial paths are divided by the parallel divisor,
	 * 2.4 for 2 workers and the leader), the inner's whole, as PostgreSQL
	 * costs a hash join that is not parallel-aware.  That assumes a core
	 * for every process and a leader that mostly gathers.  Here the leader,
	 * when it joins, reads and searches the whole inner and its share of
	 * the outer before it returns a row, on a core the workers need (with
	 * max_parallel_workers_per_gather set to the cores, as the project's
	 * 2-core machine has it): so the outer's shares are spread over the
	 * workers' cores only (divisor / workers: 1.2 times one share), and the
	 * leader's copy of the inner's work is charged in full on top of a
	 * worker's (2 times the inner).  With the leader only gathering this is
	 * PostgreSQL's cost.  With a large inner the partial plan loses (every
	 * process searches the whole inner), with a small one it gains
	 * (doc/joins.md, "Parallel workers").
	 */
	if (cp->path.parallel_workers > 0)
	{
		double		workers = cp->path.parallel_workers;
		double		divisor = parallel_divisor(&cp->path);
		double		row_cost = cpu_tuple_cost + JOIN_ROW_COST * cpu_operator_cost +
			Max(tables, 0) * JOIN_TABLE_COST * cpu_operator_cost;
		Cost		outer_part = outer->total_cost + outer->rows * row_cost;
		Cost		inner_part = inner->total_cost + inner->rows * row_cost;

		cost += outer_part * (divisor / workers - 1);
		if (parallel_leader_participation)
			cost += inner_part;
	}

	/*
	 * Each table compares the rows of a run of equal prefixes pairwise:
	 * about rows^2 / 2^(prefix bits) / 2 comparisons, nothing at radius 3
	 * and blocks 5 (26-bit prefixes) but 28 tables of 16-bit prefixes at
	 * radius 6 (blocks 8): 2.2e10 comparisons for 10M rows.
	 */
	if (tables > 0 &&
		simhash_blocks_init(&blocks, join_nblocks(radius), radius))
		for (int t = 0; t < blocks.ntables; t++)
			cost += rows * rows / ldexp(1.0, simhash_prefix_bits(&blocks, t)) / 2 *
				JOIN_PAIR_COST * cpu_operator_cost;

	/* candidates: pairs within the radius, given to the other quals */
	candidates = tables < 0 ? outer->rows * inner->rows :
		clamp_row_est(outer->rows * inner->rows * pair_sel);
	cost_qual_eval(&qcost, quals, root);
	cost += candidates * (cpu_tuple_cost + qcost.per_tuple) + qcost.startup;

	/* the shares of the budget, as set_budgets() makes them */
	if (compact)
	{
		search_budget = budget * 3 / 4 * DEDUP_ROW_BYTES / (DEDUP_ROW_BYTES + width);
		row_budget = budget * 3 / 4 - search_budget;
		row_bytes = (shared ? outer->rows : rows) * width;
	}
	else
	{
		search_budget = budget / 2;
		row_budget = budget / 4;
		row_bytes = outer->rows * (outer->pathtarget->width + 24) +
			(shared ? 0 : inner->rows * (inner->pathtarget->width + 24));
	}

	/* past the search's share: fingerprints to temporary files and back */
	if (rows * DEDUP_ROW_BYTES > search_budget)
	{
		double		pages = rows * 16 * (Max(radius, 0) + 1) / BLCKSZ;

		cost += 2 * pages * seq_page_cost;
	}

	/*
	 * Kept rows past their share are read back from a temporary file for
	 * each candidate: two random block reads, which dominate a join whose
	 * rows do not fit.
	 */
	if (row_bytes > row_budget)
		cost += 2 * row_bytes / BLCKSZ * seq_page_cost +
			candidates * 2 * random_page_cost;

	cp->path.startup_cost = cost;
	cp->path.total_cost = cost + cp->path.rows *
		(cpu_tuple_cost + cp->path.pathtarget->cost.per_tuple);
}

/* node, with the Vars of relation from renamed to relation to (a copy) */
static Node *
rename_rel(Node *node, Index from, Index to)
{
	node = copyObject(node);
	ChangeVarNodes(node, (int) from, (int) to, 0);
	return node;
}

/*
 * Are the two inputs the same rows: plain sequential scans of one table
 * with the same filters and the same fingerprint, the inner's columns among
 * the outer's (a self-join such as docs a JOIN docs b ON a.h <~> b.h <= 3)?
 * Then the join reads the outer input once and uses its rows for both
 * sides.  Both scans would run under the query's snapshot and return the
 * same rows (maybe in another order, which a join does not promise anyway).
 * Not with volatile functions or subplans in the filters or columns, row
 * marks (FOR UPDATE), inheritance or sampling.  Returns, for each inner
 * column, its position among the outer's (Integers from 0), or NIL if the
 * inputs are not identical.
 */
static List *
inputs_identical(PlannerInfo *root, RelOptInfo *outerrel, RelOptInfo *innerrel,
				 Path *outer, Path *inner, Node *ha, Node *hb)
{
	List	   *map = NIL;
	RangeTblEntry *ro,
			   *ri;
	List	   *oq = NIL,
			   *iq = NIL;
	ListCell   *lc;

	if (outerrel->reloptkind != RELOPT_BASEREL || innerrel->reloptkind != RELOPT_BASEREL ||
		outer->pathtype != T_SeqScan || inner->pathtype != T_SeqScan ||
		outer->parallel_aware || inner->parallel_aware)
		return NIL;
	ro = planner_rt_fetch(outerrel->relid, root);
	ri = planner_rt_fetch(innerrel->relid, root);
	if (ro->rtekind != RTE_RELATION || ri->rtekind != RTE_RELATION ||
		ro->relid != ri->relid || ro->inh || ri->inh ||
		ro->tablesample || ri->tablesample ||
		get_plan_rowmark(root->rowMarks, outerrel->relid) ||
		get_plan_rowmark(root->rowMarks, innerrel->relid))
		return NIL;
	foreach(lc, outerrel->baserestrictinfo)
		oq = lappend(oq, lfirst_node(RestrictInfo, lc)->clause);
	foreach(lc, innerrel->baserestrictinfo)
		iq = lappend(iq, lfirst_node(RestrictInfo, lc)->clause);
	if (contain_volatile_functions((Node *) oq) || contain_subplans((Node *) oq) ||
		contain_volatile_functions((Node *) outer->pathtarget->exprs) ||
		contain_subplans((Node *) outer->pathtarget->exprs))
		return NIL;
	if (!equal(oq, rename_rel((Node *) iq, innerrel->relid, outerrel->relid)) ||
		!equal(ha, rename_rel(hb, innerrel->relid, outerrel->relid)))
		return NIL;
	foreach(lc, inner->pathtarget->exprs)
	{
		Node	   *e = rename_rel(lfirst(lc), innerrel->relid, outerrel->relid);
		ListCell   *oc;
		int			pos = -1;

		foreach(oc, outer->pathtarget->exprs)
			if (equal(e, lfirst(oc)))
			{
				pos = foreach_current_index(oc);
				break;
			}
		if (pos < 0)
			return NIL;
		map = lappend(map, makeInteger(pos));
	}
	return map;
}

/*
 * The join's path over outer and inner: serial (both whole; shared is the
 * inner's columns among the outer's when both are one scan) or partial
 * (outer a partial path: rows and costs are one process's share).
 */
static CustomPath *
make_join_path(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
			   Path *outer, Path *inner, List *shared, RestrictInfo *cond,
			   Node *k, Node *ha, Node *hb, List *joinquals, List *otherquals,
			   JoinType jointype, JoinPathExtraData *extra)
{
	CustomPath *cp = makeNode(CustomPath);
	double		width;
	bool		compact;

	cp->path.pathtype = T_CustomScan;
	cp->path.parent = joinrel;
	cp->path.pathtarget = joinrel->reltarget;
	cp->path.param_info = NULL;
	/*
	 * Not parallel-aware: each process runs the whole join on its rows.
	 * Parallel-safe with safe inputs, but not in the one-scan form: it has
	 * no partial form and would seldom help inside a worker, and as a
	 * parallel-safe path it would win add_path()'s tie-break against an
	 * index nested loop when enable_seqscan = off puts disable_cost into
	 * both (the README's index example), which it lost before.
	 */
	cp->path.parallel_aware = false;
	cp->path.parallel_safe = joinrel->consider_parallel && shared == NIL &&
		outer->parallel_safe && inner->parallel_safe;
	cp->path.parallel_workers = outer->parallel_workers;
	cp->path.rows = joinrel->rows;
	if (cp->path.parallel_workers > 0)
		cp->path.rows = clamp_row_est(joinrel->rows / parallel_divisor(&cp->path));
	cp->path.pathkeys = NIL;
	cp->flags = 0;
	cp->custom_paths = list_make2(outer, inner);
	cp->custom_private = list_make5(list_make3(ha, hb, k), joinquals, otherquals,
									makeInteger(jointype), shared);
	cp->methods = &join_path_methods;
	width = kept_width(joinrel, outerrel, joinquals, otherquals, shared != NIL,
					   &compact);
	join_cost(root, cp, outer, inner, shared != NIL, k, joinquals,
			  clause_selectivity(root, (Node *) cond, 0, JOIN_INNER, extra->sjinfo),
			  width, compact);
	return cp;
}

/*
 * set_join_pathlist_hook: offer the radius join when a join clause is a
 * radius condition between the two sides.
 */
static void
join_pathlist_hook(PlannerInfo *root, RelOptInfo *joinrel,
				   RelOptInfo *outerrel, RelOptInfo *innerrel,
				   JoinType jointype, JoinPathExtraData *extra)
{
	Path	   *outer = outerrel->cheapest_total_path;
	Path	   *inner = innerrel->cheapest_total_path;
	RestrictInfo *cond = NULL;
	Node	   *ha = NULL,
			   *hb = NULL,
			   *k = NULL;
	List	   *joinquals = NIL,
			   *otherquals = NIL;
	List	   *shared;
	ListCell   *lc;

	if (prev_join_pathlist_hook)
		prev_join_pathlist_hook(root, joinrel, outerrel, innerrel, jointype, extra);

	if (!simhash_enable_join ||
		(jointype != JOIN_INNER && jointype != JOIN_SEMI && jointype != JOIN_ANTI) ||
		outer == NULL || inner == NULL ||
		outer->param_info != NULL || inner->param_info != NULL ||
		!bms_is_empty(joinrel->lateral_relids))
		return;

	foreach(lc, extra->restrictlist)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		Node	   *a,
				   *b,
				   *r;
		Relids		ra,
					rb;

		if (rinfo->pseudoconstant)
			return;				/* would need a gating Result */
		if (cond != NULL ||
			!simhash_radius_condition((Node *) rinfo->clause, &a, &b, &r))
			continue;
		ra = pull_varnos(root, a);
		rb = pull_varnos(root, b);
		if (bms_is_empty(ra) || bms_is_empty(rb) ||
			!bms_is_empty(pull_varnos(root, r)) ||
			contain_volatile_functions((Node *) rinfo->clause) ||
			contain_subplans((Node *) rinfo->clause))
			continue;
		if (bms_is_subset(ra, outerrel->relids) && bms_is_subset(rb, innerrel->relids))
			;
		else if (bms_is_subset(rb, outerrel->relids) && bms_is_subset(ra, innerrel->relids))
		{
			Node	   *t = a;

			a = b;
			b = t;
		}
		else
			continue;
		/* for an anti join the condition must decide the match */
		if (IS_OUTER_JOIN(jointype) && RINFO_IS_PUSHED_DOWN(rinfo, joinrel->relids))
			continue;
		cond = rinfo;
		ha = a;
		hb = b;
		k = r;
	}
	if (cond == NULL)
		return;

	/*
	 * The other clauses: for inner and semi joins all are quals of the pairs
	 * (as in create_nestloop_plan); an anti join's pushed-down ones filter
	 * its output.
	 */
	foreach(lc, extra->restrictlist)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		if (rinfo == cond)
			continue;
		if (!IS_OUTER_JOIN(jointype) || !RINFO_IS_PUSHED_DOWN(rinfo, joinrel->relids))
			joinquals = lappend(joinquals, rinfo->clause);
		else
			otherquals = lappend(otherquals, rinfo->clause);
	}

	/* the serial path: both inputs whole */
	shared = inputs_identical(root, outerrel, innerrel, outer, inner, ha, hb);
	add_path(joinrel, (Path *) make_join_path(root, joinrel, outerrel, outer, inner,
											  shared, cond, k, ha, hb, joinquals,
											  otherquals, jointype, extra));

	/*
	 * The partial path (doc/joins.md, "Parallel workers"): the outer a
	 * partial path, the inner a whole parallel-safe one, each process
	 * joining its share of the outer rows to all the inner rows, as a hash
	 * join that is not parallel-aware does.  Every candidate pair has one
	 * outer row, read by exactly one process, so inner, semi and anti joins
	 * stay exact; the shared-input self-join does not apply (the inner is
	 * not the outer's rows).  Partial paths are never parameterized; the
	 * inner must not be either.  Not when the serial path reads identical
	 * inputs once: each process would search its share and the whole table,
	 * more than the serial join's one pass, and only the cost of spilled
	 * candidates, which divides among the processes, could make it look
	 * cheaper.
	 */
	if (joinrel->consider_parallel && outerrel->partial_pathlist != NIL && shared == NIL)
	{
		Path	   *pouter = linitial(outerrel->partial_pathlist);
		Path	   *pinner = inner->parallel_safe ? inner :
			get_cheapest_parallel_safe_total_inner(innerrel->pathlist);

		if (pinner != NULL && pouter->param_info == NULL && pinner->param_info == NULL)
			add_partial_path(joinrel, (Path *) make_join_path(root, joinrel, outerrel,
															  pouter, pinner, NIL, cond,
															  k, ha, hb, joinquals,
															  otherquals, jointype, extra));
	}
}

/* target entries for the columns of a child's output */
static List *
child_columns(List *tlist, List *result)
{
	ListCell   *lc;

	foreach(lc, tlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);

		result = lappend(result,
						 makeTargetEntry((Expr *) copyObject(tle->expr),
										 list_length(result) + 1, NULL, false));
	}
	return result;
}

/* PlanCustomPath: the CustomScan over the two children's plans */
static Plan *
join_plan_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
			   List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	Plan	   *outer = linitial(custom_plans);
	Plan	   *inner = lsecond(custom_plans);
	List	   *cond = linitial(best_path->custom_private);
	List	   *joinquals = lsecond(best_path->custom_private);
	List	   *otherquals = lthird(best_path->custom_private);
	int			jointype = intVal(lfourth(best_path->custom_private));
	List	   *shared = list_nth(best_path->custom_private, 4);

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = otherquals;
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	/* identical inputs: the inner's plan is not run, its columns are the outer's */
	cscan->custom_plans = shared != NIL ? list_make1(outer) : custom_plans;
	cscan->custom_scan_tlist = child_columns(inner->targetlist,
											 child_columns(outer->targetlist, NIL));
	cscan->custom_exprs = list_make4(linitial(cond), lsecond(cond), lthird(cond),
									 joinquals);
	cscan->custom_private = list_make3(makeInteger(jointype),
									   makeInteger(list_length(outer->targetlist)),
									   shared);
	cscan->custom_relids = bms_copy(rel->relids);
	cscan->methods = &join_scan_methods;
	return &cscan->scan.plan;
}

/* ---------------------------------------------------------------------
 * Execution
 * ---------------------------------------------------------------------
 */

/* CreateCustomScanState: the node's state */
static Node *
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
	plan_row_storage(js, cscan);
	js->self_fails = js->shared &&
		self_pair_fails(js, list_nth(cscan->custom_exprs, EXPR_JOINQUALS));
}

/*
 * Shared inputs: does a row paired with itself fail the join quals, whatever
 * its values?  True when one of them (they are ANDed) compares a column of
 * the outer with the same column of the inner by an operator that a btree
 * operator family defines as <, > or <> (the negator of its =): x < x is
 * never true, NULL fails too.  Then the search's pairs are the only
 * candidates: in `docs a JOIN docs b ON a.id < b.id WHERE a.h <~> b.h <= 3`
 * the million rows of a 1M-row self-join are not each checked against
 * themselves.
 */
static bool
self_pair_fails(RadiusJoinState *js, List *quals)
{
	JoinSide   *inner = &js->side[1];
	ListCell   *lc;

	foreach(lc, quals)
	{
		OpExpr	   *op = lfirst(lc);
		Var		   *x,
				   *y;

		if (!IsA(op, OpExpr) || list_length(op->args) != 2 ||
			!IsA(linitial(op->args), Var) || !IsA(lsecond(op->args), Var))
			continue;
		x = linitial(op->args);
		y = lsecond(op->args);
		if (x->varno != INDEX_VAR || y->varno != INDEX_VAR)
			continue;
		if (x->varattno > inner->first)
		{
			Var		   *t = x;

			x = y;
			y = t;
		}
		/* x: an outer column, y: the inner column that is the same */
		if (x->varattno < 1 || x->varattno > inner->first ||
			y->varattno <= inner->first || y->varattno > inner->first + inner->ncols ||
			inner->map[y->varattno - inner->first - 1] != x->varattno - 1)
			continue;
		if (simhash_op_is_lt_gt_ne(op->opno))
			return true;
	}
	return false;
}

/*
 * Which columns of each side the rows kept must hold: those the target list,
 * the join quals and the output quals use (the fingerprints are taken when
 * a row is read).  When they are all passed by value, rows are kept as one
 * array of Datums per such column (8 bytes a row and column, no tuple
 * header, nothing to deform: the 1M-row self-join keeps one bigint instead
 * of a 40-byte tuple); otherwise as minimal tuples of the child's output.
 */
static void
plan_row_storage(RadiusJoinState *js, CustomScan *cscan)
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
static void
fill_side(RadiusJoinState *js, JoinSide *side, TupleTableSlot *slot)
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
static void
clear_side(RadiusJoinState *js, JoinSide *side)
{
	TupleTableSlot *scan = js->css.ss.ss_ScanTupleSlot;

	memset(scan->tts_isnull + side->first, true, side->ncols * sizeof(bool));
}

/* move a side's rows in memory to a temporary file */
static void
side_spill(RadiusJoinState *js, JoinSide *side)
{
	MemoryContext old = MemoryContextSwitchTo(js->cxt);

	side->file = BufFileCreateTemp(false);
	side->pos = MemoryContextAllocHuge(js->cxt, side->cap * sizeof(RowPos));
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
			BufFileTell(side->file, &side->pos[i].fileno, &side->pos[i].offset);
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
			BufFileTell(side->file, &side->pos[i].fileno, &side->pos[i].offset);
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
compact_grow(RadiusJoinState *js, JoinSide *side, uint64 oldcap)
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
			dedup_alloc_huge(side->tupcxt, side->cap * sizeof(Datum));
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
static void
side_keep(RadiusJoinState *js, JoinSide *side, TupleTableSlot *slot)
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
			compact_grow(js, side, oldcap);
			goto keep;
		}
		if (side->file)
			side->pos = repalloc_huge(side->pos, side->cap * sizeof(RowPos));
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

		BufFileTell(side->file, &side->pos[side->nrows].fileno,
					&side->pos[side->nrows].offset);
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

/* side's row `row`, in side->slot (deformed) */
static TupleTableSlot *
side_fetch(RadiusJoinState *js, JoinSide *side, uint64 row)
{
	MinimalTuple tup;

	if (side->file == NULL)
		tup = side->tuples[row];
	else
	{
		uint32		len;

		if (BufFileSeek(side->file, side->pos[row].fileno, side->pos[row].offset,
						SEEK_SET) != 0 ||
			BufFileRead(side->file, &len, sizeof(len)) != sizeof(len) ||
			len < sizeof(len) || len > MaxAllocSize)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read a temporary file of simhash join rows")));
		if (len > side->bufsize)
		{
			if (side->buf)
				pfree(side->buf);
			side->buf = MemoryContextAlloc(js->cxt, len);
			side->bufsize = len;
		}
		memcpy(side->buf, &len, sizeof(len));
		if (BufFileRead(side->file, side->buf + sizeof(len), len - sizeof(len)) !=
			len - sizeof(len))
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read a temporary file of simhash join rows")));
		tup = (MinimalTuple) side->buf;
	}
	ExecStoreMinimalTuple(tup, side->slot, false);
	slot_getallattrs(side->slot);
	return side->slot;
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
		fill_side(js, side, side_fetch(js, side, row));
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
		slot = side_fetch(js, &js->side[0], o);
		fill_side(js, &js->side[0], slot);
	}
	if (js->side[1].compact)
		load_row(js, &js->side[1], i);
	else
	{
		/* a row paired with itself (shared inputs) is read once */
		if (slot == NULL || !js->shared || o != i)
			slot = side_fetch(js, &js->side[1], i);
		fill_side(js, &js->side[1], slot);
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
 * DedupPairFn: the search's pairs; those of an outer and an inner row are
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
read_side(RadiusJoinState *js, int s, DedupSearch *search, bool all_pairs, Size row_budget)
{
	JoinSide   *side = &js->side[s];
	ExprContext *econtext = js->css.ss.ps.ps_ExprContext;
	TupleTableSlot *scan = js->css.ss.ss_ScanTupleSlot;
	bool		any_pairs = search != NULL || all_pairs;
	/* the rows with a fingerprint: for all pairs, or each row with itself */
	bool		mark_hashed = all_pairs || (js->shared && !js->self_fails && search != NULL);

	ExecClearTuple(scan);
	clear_side(js, &js->side[1 - s]);
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
			fill_side(js, side, slot);
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
				dedup_search_add(search, DatumGetSimhash64(h),
								 side->nrows | (s == 1 ? KEY_INNER : 0));
			if (!isnull && mark_hashed)
				side->hashed[side->nrows / 8] |= 1 << (side->nrows % 8);
		}
		side_keep(js, side, slot);
		if (side->file == NULL &&
			js->side[0].mem + js->side[1].mem > row_budget)
			side_spill(js, side);
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
 * search (DEDUP_ROW_BYTES a row) and the kept rows.  Rows kept as tuples
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

		js->search_budget = (Size) (rows * DEDUP_ROW_BYTES / (DEDUP_ROW_BYTES + width));
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
	DedupSearch *search = NULL;
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
		search = dedup_search_create(&js->blocks, js->search_budget,
									 js->side[0].ps->plan->plan_rows +
									 (js->shared ? 0 : js->side[1].ps->plan->plan_rows),
									 &progress);
		dedup_search_set_budget_name(search,
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
		dedup_search_run(search, js->search_budget, join_pairs, js);
		if (js->cand)
			check_candidates(js);
		js->spilled_bytes = dedup_search_spilled_bytes(search);
		dedup_search_free(search);
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
		clear_side(js, &js->side[1]);
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

/* the join type as EXPLAIN names it */
static const char *
join_type_name(JoinType jointype)
{
	switch (jointype)
	{
		case JOIN_INNER:
			return "Inner";
		case JOIN_SEMI:
			return "Semi";
		case JOIN_ANTI:
			return "Anti";
		default:
			return "?";
	}
}

/*
 * EXPLAIN ANALYZE under a Gather: the pairs checked and the bytes spilled by
 * all processes (the leader's and each worker's runs, added up in the
 * instrumentation by join_run()); with VERBOSE, each worker's, as
 * PostgreSQL shows each worker's rows (not with debug_parallel_query's
 * hidden Gather).
 */
static void
explain_workers(CustomScanState *node, ExplainState *es)
{
	Instrumentation *total = node->ss.ps.instrument;
	WorkerInstrumentation *w = node->ss.ps.worker_instrument;

	ExplainPropertyUInteger("Pairs Checked", NULL, (uint64) total->ntuples2, es);
	if (total->nfiltered2 > 0 || es->format != EXPLAIN_FORMAT_TEXT)
		ExplainPropertyUInteger("Spilled", "kB",
								((uint64) total->nfiltered2 + 1023) / 1024, es);
	if (!es->verbose || es->hide_workers)
		return;
	for (int n = 0; n < w->num_workers; n++)
	{
		Instrumentation *i = &w->instrument[n];

		if (i->nloops <= 0)
			continue;			/* not launched, or never ran the join */
		if (es->format == EXPLAIN_FORMAT_TEXT)
		{
			appendStringInfoSpaces(es->str, es->indent * 2);
			appendStringInfo(es->str, "Worker %d:  Pairs Checked: " UINT64_FORMAT, n,
							 (uint64) i->ntuples2);
			if (i->nfiltered2 > 0)
				appendStringInfo(es->str, "  Spilled: " UINT64_FORMAT "kB",
								 ((uint64) i->nfiltered2 + 1023) / 1024);
			appendStringInfoChar(es->str, '\n');
		}
		else
		{
			char		label[64];

			snprintf(label, sizeof(label), "Worker %d Pairs Checked", n);
			ExplainPropertyUInteger(label, NULL, (uint64) i->ntuples2, es);
			snprintf(label, sizeof(label), "Worker %d Spilled", n);
			ExplainPropertyUInteger(label, "kB", ((uint64) i->nfiltered2 + 1023) / 1024, es);
		}
	}
}

/* EXPLAIN: the join type, the condition, its table groups, the work done */
static void
join_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	RadiusJoinState  *js = (RadiusJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *context;
	bool		useprefix = list_length(es->rtable) > 1 || es->verbose;
	Node	   *k = list_nth(cscan->custom_exprs, EXPR_RADIUS);
	List	   *quals = list_nth(cscan->custom_exprs, EXPR_JOINQUALS);
	char	   *cond;

	context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan, ancestors);
	ExplainPropertyText("Join Type",
						join_type_name((JoinType) intVal(linitial(cscan->custom_private))),
						es);
	cond = psprintf("(%s <~> %s) <= %s",
					deparse_expression(list_nth(cscan->custom_exprs, EXPR_OUTER_HASH),
									   context, useprefix, false),
					deparse_expression(list_nth(cscan->custom_exprs, EXPR_INNER_HASH),
									   context, useprefix, false),
					deparse_expression(k, context, useprefix, false));
	ExplainPropertyText("Distance Condition", cond, es);
	if (lthird(cscan->custom_private) != NIL)
		ExplainPropertyText("Inner Input", "the outer's rows (identical scans, read once)", es);
	if (quals != NIL)
		ExplainPropertyText("Join Filter",
							deparse_expression((Node *) make_ands_explicit(quals),
											   context, useprefix, false),
							es);

	/* the table groups: known now for a constant radius, else after a run */
	if (es->analyze && js->done)
	{
		if (js->searched)
			ExplainPropertyText("Table Groups",
								psprintf("%d (blocks %d, %d tables)",
										 js->blocks.max_distance + 1,
										 js->blocks.nblocks, js->blocks.ntables),
								es);
		else
			ExplainPropertyText("Table Groups",
								js->radius_null || js->radius_value < 0 ?
								"none (nothing within the distance)" :
								"none (every pair within the distance)", es);
	}
	else if (IsA(k, Const) && !((Const *) k)->constisnull &&
			 DatumGetInt64(((Const *) k)->constvalue) >= 0 &&
			 DatumGetInt64(((Const *) k)->constvalue) < 64)
	{
		int			radius = (int) DatumGetInt64(((Const *) k)->constvalue);
		int			m = join_nblocks(radius);

		ExplainPropertyText("Table Groups",
							psprintf("%d (blocks %d, %d tables)", radius + 1, m,
									 (int) simhash_binomial(m, radius)),
							es);
	}
	else
		ExplainPropertyText("Table Groups", "distance + 1, chosen at run time", es);

	if (es->analyze && node->ss.ps.worker_instrument != NULL)
		explain_workers(node, es);
	else if (es->analyze && js->done)
	{
		ExplainPropertyUInteger("Pairs Checked", NULL, js->pairs_checked, es);
		if (js->spilled_bytes > 0 || es->format != EXPLAIN_FORMAT_TEXT)
			ExplainPropertyUInteger("Spilled", "kB",
									(js->spilled_bytes + 1023) / 1024, es);
	}
}

/* ---------------------------------------------------------------------
 * Registration
 * ---------------------------------------------------------------------
 */

/* Called from _PG_init: the settings, the hook and the node methods. */
void
simhash_join_init(void)
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

	join_path_methods.CustomName = JOIN_NAME;
	join_path_methods.PlanCustomPath = join_plan_path;

	join_scan_methods.CustomName = JOIN_NAME;
	join_scan_methods.CreateCustomScanState = join_create_state;
	RegisterCustomScanMethods(&join_scan_methods);

	join_exec_methods.CustomName = JOIN_NAME;
	join_exec_methods.BeginCustomScan = join_begin;
	join_exec_methods.ExecCustomScan = join_exec;
	join_exec_methods.EndCustomScan = join_end;
	join_exec_methods.ReScanCustomScan = join_rescan;
	join_exec_methods.ExplainCustomScan = join_explain;

	prev_join_pathlist_hook = set_join_pathlist_hook;
	set_join_pathlist_hook = join_pathlist_hook;
}
