/*
 * src/join/path.c
 *		The radius join's paths: the planner hook (set_join_pathlist_hook)
 *		that recognises `a.h <~> b.h <= k` between two relations (or a
 *		relation and itself, or subqueries) and offers a CustomPath
 *		("SimhashJoin"), serial or partial, with its cost; and the join's
 *		registration at load time.  Design: src/join/README.md.
 */
#include "join.h"

#include <math.h>

#include "miscadmin.h"
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
#include "utils/lsyscache.h"

#include "shared/pair_search.h"
#include "types/clauses.h"

static set_join_pathlist_hook_type prev_join_pathlist_hook = NULL;

/* the path's methods: the plan is made by plan.c */
static const CustomPathMethods join_path_methods = {
	.CustomName = JOIN_NAME,
	.PlanCustomPath = join_plan_path,
};

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
 * How the join will keep its rows (as join_plan_row_storage() decides at run
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
 * Shared inputs: does a row paired with itself fail the join quals, whatever
 * its values?  True when one of them (they are ANDed) compares a column of
 * the outer with the same column of the inner (one table: the same
 * attribute number) by an operator that a btree operator family defines as
 * <, > or <> (the negator of its =): x < x is never true, NULL fails too.
 * Then the search's pairs are the only candidates: in `docs a JOIN docs b
 * ON a.id < b.id WHERE a.h <~> b.h <= 3` the million rows of a 1M-row
 * self-join are not each checked against themselves.  Decided here, for
 * the cost and for the executor (the plan's PRIV_SELF_FAILS).
 */
static bool
self_pair_fails(List *joinquals, Index outer_relid, Index inner_relid)
{
	ListCell   *lc;

	foreach(lc, joinquals)
	{
		OpExpr	   *op = lfirst(lc);
		Var		   *x,
				   *y;

		if (!IsA(op, OpExpr) || list_length(op->args) != 2 ||
			!IsA(linitial(op->args), Var) || !IsA(lsecond(op->args), Var))
			continue;
		x = linitial(op->args);
		y = lsecond(op->args);
		if (x->varlevelsup != 0 || y->varlevelsup != 0 || x->varattno != y->varattno ||
			!((x->varno == outer_relid && y->varno == inner_relid) ||
			  (x->varno == inner_relid && y->varno == outer_relid)))
			continue;
		if (simhash_op_is_lt_gt_ne(op->opno))
			return true;
	}
	return false;
}

/*
 * The bytes of a side's rows in a temporary file: minimal tuples of the
 * child's output (compact rows are written so, their columns not kept
 * NULL), about 24 bytes of header each.
 */
static double
file_bytes(Path *side, double width, bool compact)
{
	return side->rows * ((compact ? width : side->pathtarget->width) + 24);
}

/*
 * The path's rows and costs: reading both sides, the search, the
 * candidates, and temporary files when the search or the kept rows exceed
 * their share of work_mem * hash_mem_multiplier (set_budgets()).  nonnull:
 * the fraction of rows with a fingerprint; self_fails: shared inputs whose
 * row paired with itself fails the quals (self_pair_fails()).
 */
static void
join_cost(PlannerInfo *root, CustomPath *cp, Path *outer, Path *inner, bool shared,
		  bool self_fails, Node *k, List *quals, Selectivity pair_sel, double nonnull,
		  double width, bool compact)
{
	double		rows = shared ? outer->rows : outer->rows + inner->rows;
	int			radius = simhash_planned_radius(root, k, JOIN_DEFAULT_RADIUS);
	double		tables;
	double		pairs;
	double		self_pairs;
	double		found;
	double		checked;
	double		outer_mem;
	double		inner_mem;
	bool		outer_file;
	bool		inner_file;
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

	/*
	 * Candidates: pairs of an outer and an inner row within the radius,
	 * given to the other quals.  The radius clause's selectivity counts, as
	 * eqjoinsel does for equality, about one pair per distinct fingerprint
	 * and row (1 / ndistinct): statistics see duplicates, not
	 * near-duplicates.  With shared inputs those pairs include each row
	 * with itself (every row with a fingerprint: a column of distinct
	 * values has no other pairs), which the search does not report: they
	 * are checked in row order before it, or not at all when the quals
	 * fail them.  The search's pairs (found) are the rest: a self-join of
	 * distinct fingerprints under `a.id < b.id` expects the duplicates'
	 * pairs, not one candidate per row.
	 */
	if (tables < 0)
		pairs = outer->rows * inner->rows;
	else
		pairs = outer->rows * inner->rows * pair_sel;
	self_pairs = shared && tables >= 0 ? Min(outer->rows * nonnull, pairs) : 0;
	found = pairs - self_pairs;
	checked = clamp_row_est(found + (self_fails ? 0 : self_pairs));
	cost_qual_eval(&qcost, quals, root);
	cost += checked * (cpu_tuple_cost + qcost.per_tuple) + qcost.startup;

	/*
	 * The shares of the budget, as set_budgets() makes them, and which
	 * sides' rows go to a temporary file, as read_side() decides: the outer
	 * when its rows alone exceed the rows' share, then the inner when its
	 * rows and the outer's in memory do (one file for shared inputs).
	 */
	if (compact)
	{
		search_budget = budget * 3 / 4 * PAIR_SEARCH_ROW_BYTES / (PAIR_SEARCH_ROW_BYTES + width);
		row_budget = budget * 3 / 4 - search_budget;
		outer_mem = outer->rows * width;
		inner_mem = shared ? 0 : inner->rows * width;
	}
	else
	{
		search_budget = budget / 2;
		row_budget = budget / 4;
		outer_mem = outer->rows * (outer->pathtarget->width + 24);
		inner_mem = shared ? 0 : inner->rows * (inner->pathtarget->width + 24);
	}
	outer_file = outer_mem > row_budget;
	inner_file = shared ? outer_file :
		inner_mem + (outer_file ? 0 : outer_mem) > row_budget;

	/* past the search's share: fingerprints to temporary files and back */
	if (rows * PAIR_SEARCH_ROW_BYTES > search_budget)
	{
		double		pages = rows * 16 * (Max(radius, 0) + 1) / BLCKSZ;

		cost += 2 * pages * seq_page_cost;
	}

	/*
	 * Kept rows in a temporary file: written once, and read back for the
	 * candidates, which wait in batches (an eighth of the budget) sorted by
	 * the row of the side in a file (the outer's if both are), so that
	 * side's file is read forward: one sequential read a block at most per
	 * batch.  The other side's row, when it is in a file too, is a random
	 * block read per candidate.  Shared inputs have one file and one buffer:
	 * each candidate reads the block of its other row at random and then
	 * its sorted row's block again, going forward; the pairs of a row with
	 * itself, checked first and in row order, read the file once.
	 */
	if (outer_file || inner_file)
	{
		double		maxcand = Max(budget / 8 / sizeof(JoinCandidate), 1024);
		double		batches = ceil(found / maxcand);
		double		outer_pages = ceil(file_bytes(outer, width, compact) / BLCKSZ);
		double		inner_pages = shared ? 0 : ceil(file_bytes(inner, width, compact) / BLCKSZ);

		cost += ((outer_file ? outer_pages : 0) + (inner_file ? inner_pages : 0)) *
			seq_page_cost;
		if (shared)
		{
			cost += found * (random_page_cost + seq_page_cost);
			if (!self_fails && self_pairs > 0)
				cost += outer_pages * seq_page_cost;
		}
		else
		{
			cost += Min(found, batches * (outer_file ? outer_pages : inner_pages)) *
				seq_page_cost;
			if (outer_file && inner_file)
				cost += found * random_page_cost;
		}
	}

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
	bool		self_fails = shared != NIL &&
		self_pair_fails(joinquals, outerrel->relid, inner->parent->relid);

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
	cp->custom_private = lappend(cp->custom_private, makeInteger(self_fails));
	cp->methods = &join_path_methods;
	width = kept_width(joinrel, outerrel, joinquals, otherquals, shared != NIL,
					   &compact);
	join_cost(root, cp, outer, inner, shared != NIL, self_fails, k, joinquals,
			  clause_selectivity(root, (Node *) cond, 0, JOIN_INNER, extra->sjinfo),
			  simhash_nonnull_fraction(root, ha), width, compact);
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

/* ---------------------------------------------------------------------
 * Registration
 * ---------------------------------------------------------------------
 */

/* Called from _PG_init: the settings, the hook and the node methods. */
void
simhash_join_init(void)
{
	join_define_settings();
	join_citus_init();
	RegisterCustomScanMethods(&join_scan_methods);
	prev_join_pathlist_hook = set_join_pathlist_hook;
	set_join_pathlist_hook = join_pathlist_hook;
}
