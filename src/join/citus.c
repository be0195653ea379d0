/*
 * src/join/citus.c
 *		Radius joins between two Citus distributed tables, rewritten before
 *		Citus plans them (a planner_hook, simhash.citus_joins).
 *
 * Citus joins two distributed tables only on an "=" condition (between
 * their distribution columns, or by repartitioning both on another one); a
 * join on `a.h <~> b.h <= k` alone is refused ("complex joins are only
 * supported ...").  This hook runs before Citus's planner (simhash's
 * _PG_init runs after Citus's, which must be first in
 * shared_preload_libraries, so its planner_hook wraps Citus's) and turns
 * two shapes of SELECT into queries Citus plans, with the same rows:
 *
 * (A SELECT alone, or the SELECT of an INSERT ... SELECT.)
 *
 * 1. The self-join: the same table twice, `a.id < b.id` (or `>`) on its
 *    distribution column, which is an integer column with a unique index,
 *    and a radius condition between the same simhash64 column of both
 *    sides with a constant radius k.  The side with the smaller id becomes
 *    a materialised CTE: simhash_pairs(table, id, h, id_type, k) -- the
 *    pairs searched on the workers, or read on this node where the job
 *    would be (doc/citus.md) -- joined on the id with the table, one row per
 *    pair, the pair's larger id in an extra column; the query then joins it
 *    with the other side on that id, the distribution column, which Citus
 *    runs on every shard.  The job reports every pair of rows within k
 *    exactly once, ids ordered, so the rows kept are exactly the pairs
 *    that can meet the radius and id conditions.  The job is named in the
 *    schema of the radius operator, which must be the extension's own; if
 *    the call resolves to a function that is not the extension's (one of
 *    the same name with a concrete id_type, created there by another role,
 *    would win it), the statement is refused (42725).
 *
 * 2. Two different distributed tables (a batch of new rows against the
 *    corpus): the first in the range table (the first in FROM) becomes a
 *    materialised CTE of its rows, which Citus reads here and sends to the
 *    workers, where each shard of the other joins it with its own index.
 *
 * Both keep the query as it is -- every condition (the radius and id
 * conditions included, evaluated again on the kept rows), target, GROUP
 * BY, ORDER BY, LIMIT -- and only replace one side's table by a CTE with
 * the same columns in the same positions (the columns the query does not
 * use are NULL, so that they do not travel), so every Var stays valid.
 * Only shapes the hook is sure of are rewritten: a SELECT of exactly two
 * plain tables, inner joins, no sublinks, CTEs, locking clauses or row
 * security on them, no "=" between the two sides (Citus may plan those
 * itself), both hash-distributed.  Anything else reaches Citus unchanged.
 *
 * The hook needs the library loaded before the statement is planned:
 * with simhash in shared_preload_libraries after citus, every statement;
 * otherwise once the session has loaded it (any simhash function, type
 * input or index use).
 */
#include "join.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/pg_index.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "lib/stringinfo.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "optimizer/planner.h"
#include "parser/parsetree.h"
#include "parser/analyze.h"
#include "parser/parse_oper.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "shared/citus_catalog.h"
#include "utils/typcache.h"

#include "compat.h"
#include "types/clauses.h"

static bool simhash_citus_joins = true;
static planner_hook_type prev_planner_hook = NULL;

/* what the shape test found */
typedef struct CitusJoin
{
	Index		rti[2];			/* the two tables' range-table indexes */
	RangeTblEntry *rte[2];
	int64		radius;			/* the smallest constant radius between them */
	AttrNumber	hash_att[2];	/* its columns, side by side */
	Oid			radius_func;	/* the radius condition's function */
	Oid			extnsp;			/* its schema */
	int			low;			/* 0 or 1: the side with the smaller id; -1 */
	AttrNumber	id_att;			/* the id column of the id condition */
	AttrNumber	dist[2];		/* the distribution columns */
} CitusJoin;


/* the Var under node (through binary-compatible casts), or NULL */
static Var *
plain_var(Node *node)
{
	while (node && IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	if (node && IsA(node, Var) && ((Var *) node)->varlevelsup == 0)
		return (Var *) node;
	return NULL;
}

/* 0 or 1 if var is a column of that side of j, else -1 */
static int
side_of(const CitusJoin *j, Var *var)
{
	if (var == NULL || var->varattno <= 0)
		return -1;
	if (var->varno == j->rti[0])
		return 0;
	if (var->varno == j->rti[1])
		return 1;
	return -1;
}

/* the side whose columns alone appear in node: 0, 1, -1 none, 2 both */
static int
sides_of(const CitusJoin *j, Node *node)
{
	Relids		r = pull_varnos(NULL, node);
	bool		s0 = bms_is_member(j->rti[0], r);
	bool		s1 = bms_is_member(j->rti[1], r);

	return s0 && s1 ? 2 : s0 ? 0 : s1 ? 1 : -1;
}

/* the conditions of a join tree's inner joins and WHERE, as one list */
static bool
collect_quals(Node *node, List **quals)
{
	if (node == NULL)
		return true;
	if (IsA(node, RangeTblRef))
		return true;
	if (IsA(node, FromExpr))
	{
		FromExpr   *f = (FromExpr *) node;
		ListCell   *lc;

		foreach(lc, f->fromlist)
			if (!collect_quals(lfirst(lc), quals))
				return false;
		*quals = list_concat(*quals, make_ands_implicit((Expr *) f->quals));
		return true;
	}
	if (IsA(node, JoinExpr))
	{
		JoinExpr   *je = (JoinExpr *) node;

		if (je->jointype != JOIN_INNER)
			return false;
		if (!collect_quals(je->larg, quals) || !collect_quals(je->rarg, quals))
			return false;
		*quals = list_concat(*quals, make_ands_implicit((Expr *) je->quals));
		return true;
	}
	return false;
}

/*
 * The shape test: a SELECT of two hash-distributed tables, inner joins
 * only, a constant radius condition between them, no "=" between them;
 * fills *j (low = -1 without an id condition).
 */
static bool
recognise(Query *parse, ParamListInfo boundParams, CitusJoin *j)
{
	ListCell   *lc;
	List	   *quals = NIL;
	int			n = 0;
	Index		rti = 0;
	PlannerGlobal glob;
	PlannerInfo root;

	if (parse->commandType != CMD_SELECT || parse->utilityStmt != NULL ||
		parse->hasSubLinks || parse->cteList != NIL || parse->rowMarks != NIL ||
		parse->setOperations != NULL || parse->hasModifyingCTE)
		return false;
	memset(j, 0, sizeof(*j));
	foreach(lc, parse->rtable)
	{
		RangeTblEntry *rte = lfirst_node(RangeTblEntry, lc);

		rti++;
		if (rte->rtekind == RTE_RELATION)
		{
			if (n == 2 || rte->tablesample != NULL || rte->securityQuals != NIL ||
				(rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_PARTITIONED_TABLE))
				return false;
			j->rti[n] = rti;
			j->rte[n] = rte;
			n++;
		}
		else if (rte->rtekind == RTE_JOIN)
		{
			if (rte->jointype != JOIN_INNER)
				return false;
		}
		else if (!SimhashRteIsGroup(rte))
			return false;
	}
	if (n != 2 || !collect_quals((Node *) parse->jointree, &quals))
		return false;
	/* both hash-distributed by Citus (nothing more is done without Citus) */
	j->dist[0] = simhash_citus_hash_column(j->rte[0]->relid);
	if (j->dist[0] == InvalidAttrNumber)
		return false;
	j->dist[1] = simhash_citus_hash_column(j->rte[1]->relid);
	if (j->dist[1] == InvalidAttrNumber)
		return false;

	/*
	 * The conditions as the planner will see them: simplified (the
	 * spellings of a radius become simhash_within), with the values of
	 * parameters the plan is made for
	 */
	memset(&glob, 0, sizeof(glob));
	memset(&root, 0, sizeof(root));
	glob.boundParams = boundParams;
	root.glob = &glob;
	root.type = T_PlannerInfo;
	j->radius = -1;
	j->low = -1;
	foreach(lc, quals)
	{
		Node	   *q = eval_const_expressions(&root, copyObject(lfirst(lc)));
		ListCell   *lc2;

		foreach(lc2, make_ands_implicit((Expr *) q))
		{
			Node	   *c = lfirst(lc2);
			Node	   *a,
					   *b,
					   *k;

			if (simhash_radius_condition(c, &a, &b, &k))
			{
				Var		   *va = plain_var(a),
						   *vb = plain_var(b);
				int			sa = side_of(j, va),
							sb = side_of(j, vb);
				Const	   *kc = (Const *) k;

				if (sa < 0 || sb < 0 || sa == sb || !IsA(k, Const) ||
					kc->consttype != INT8OID || kc->constisnull ||
					DatumGetInt64(kc->constvalue) < 0 ||
					DatumGetInt64(kc->constvalue) > SIMHASH_MAX_DISTANCE)
					continue;
				if (j->radius < 0 || DatumGetInt64(kc->constvalue) < j->radius)
				{
					j->radius_func = IsA(c, FuncExpr) ? ((FuncExpr *) c)->funcid :
						get_opcode(((OpExpr *) c)->opno);
					j->extnsp = get_func_namespace(j->radius_func);
					j->radius = DatumGetInt64(kc->constvalue);
					j->hash_att[sa] = va->varattno;
					j->hash_att[sb] = vb->varattno;
				}
			}
			else if (IsA(c, OpExpr) && list_length(((OpExpr *) c)->args) == 2)
			{
				OpExpr	   *op = (OpExpr *) c;
				Node	   *l = linitial(op->args),
						   *r = lsecond(op->args);
				int			sl = sides_of(j, l),
							sr = sides_of(j, r);
				Var		   *vl = plain_var(l),
						   *vr = plain_var(r);
				TypeCacheEntry *tc;

				if (sl < 0 || sr < 0 || sl == 2 || sr == 2 || sl == sr)
					continue;
				/* an "=" between the sides: Citus may plan it itself */
				if (op_mergejoinable(op->opno, exprType(l)) ||
					op_hashjoinable(op->opno, exprType(l)))
					return false;
				/* the id condition a.id < b.id or a.id > b.id */
				if (vl == NULL || vr == NULL || vl->varattno != vr->varattno ||
					vl->vartype != vr->vartype)
					continue;
				tc = lookup_type_cache(vl->vartype, TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);
				if (op->opno == tc->lt_opr)
					j->low = sl;
				else if (op->opno == tc->gt_opr)
					j->low = sr;
				else
					continue;
				j->id_att = vl->varattno;
			}
		}
	}
	return j->radius >= 0;
}

/* whether relid has a unique, immediate, plain index on exactly column att */
static bool
unique_column(Oid relid, AttrNumber att)
{
	Relation	rel = table_open(relid, AccessShareLock);
	List	   *indexes = RelationGetIndexList(rel);
	ListCell   *lc;
	bool		found = false;

	foreach(lc, indexes)
	{
		HeapTuple	tuple = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(lfirst_oid(lc)));
		Form_pg_index index;

		if (!HeapTupleIsValid(tuple))
			continue;
		index = (Form_pg_index) GETSTRUCT(tuple);
		if (index->indisunique && index->indimmediate && index->indisvalid &&
			index->indnkeyatts == 1 && index->indkey.values[0] == att &&
			heap_attisnull(tuple, Anum_pg_index_indpred, NULL) &&
			heap_attisnull(tuple, Anum_pg_index_indexprs, NULL))
			found = true;
		ReleaseSysCache(tuple);
		if (found)
			break;
	}
	list_free(indexes);
	table_close(rel, AccessShareLock);
	return found;
}

/* what the walker over the query learns of one range-table entry's use */
typedef struct ColumnUse
{
	Query	   *parse;
	Index		rti;
	Bitmapset  *atts;			/* columns used */
	bool		whole;			/* a whole-row or system column is used */
} ColumnUse;

/* the columns of u->rti the query uses, through join alias Vars too */
static bool
column_use_walker(Node *node, ColumnUse *u)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
	{
		Var		   *v = (Var *) node;
		RangeTblEntry *rte;

		if (v->varlevelsup != 0)
			return false;
		if (v->varno == u->rti)
		{
			if (v->varattno <= 0)
				u->whole = true;
			else
				u->atts = bms_add_member(u->atts, v->varattno);
			return false;
		}
		rte = rt_fetch(v->varno, u->parse->rtable);
		if (rte->rtekind == RTE_JOIN)
		{
			if (v->varattno <= 0)
				u->whole = true;	/* of the join: maybe of this side */
			else if (v->varattno <= list_length(rte->joinaliasvars))
				return column_use_walker(list_nth(rte->joinaliasvars, v->varattno - 1), u);
		}
		return false;
	}
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, column_use_walker, u,
								 QTW_IGNORE_JOINALIASES);
	return expression_tree_walker(node, column_use_walker, u);
}

/*
 * The select list of side rte's CTE: for every column of the table, in
 * its position, alias.column if the query uses it, else a NULL of its type
 * (schema-qualified: the query is parsed under the caller's search_path; a
 * dropped column: a NULL integer); returns the number of columns.
 */
static int
append_columns(StringInfo sql, RangeTblEntry *rte, const char *alias, Bitmapset *used)
{
	Relation	rel = table_open(rte->relid, AccessShareLock);
	TupleDesc	desc = RelationGetDescr(rel);
	int			natts = desc->natts;

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (i > 0)
			appendStringInfoString(sql, ", ");
		if (att->attisdropped)
			appendStringInfo(sql, "NULL::pg_catalog.int4 AS simhash_dropped_%d", i + 1);
		else if (bms_is_member(i + 1, used))
			appendStringInfo(sql, "%s.%s", alias, quote_identifier(NameStr(att->attname)));
		else
			appendStringInfo(sql, "NULL::%s AS %s",
							 format_type_extended(att->atttypid, att->atttypmod,
												  FORMAT_TYPE_TYPEMOD_GIVEN | FORMAT_TYPE_FORCE_QUALIFY),
							 quote_identifier(NameStr(att->attname)));
	}
	table_close(rel, AccessShareLock);
	return natts;
}

/* the table of rte, schema-qualified, with ONLY if the query said so */
static char *
table_name(RangeTblEntry *rte)
{
	return psprintf("%s%s", rte->inh ? "" : "ONLY ",
					quote_qualified_identifier(get_namespace_name(get_rel_namespace(rte->relid)),
											   get_rel_name(rte->relid)));
}

/*
 * Replace range-table entry rti (a table) by a reference to a new
 * materialised CTE of the query sql, whose columns are the table's in the
 * same positions (and maybe more after them); returns the CTE's query.
 */
static Query *
replace_by_cte(Query *parse, Index rti, const char *sql)
{
	RangeTblEntry *rte = rt_fetch(rti, parse->rtable);
	RawStmt    *raw = linitial_node(RawStmt, pg_parse_query(sql));
	Query	   *q = parse_analyze_fixedparams(raw, sql, NULL, 0, NULL);
	CommonTableExpr *cte = makeNode(CommonTableExpr);
	List	   *colnames = NIL;
	ListCell   *lc;

	cte->ctename = psprintf("simhash_%s_%u", rte->eref->aliasname, rti);
	cte->ctematerialized = CTEMaterializeAlways;
	cte->ctequery = (Node *) q;
	cte->location = -1;
	cte->cterefcount = 1;
	foreach(lc, q->targetList)
	{
		TargetEntry *te = lfirst_node(TargetEntry, lc);

		if (te->resjunk)
			continue;
		colnames = lappend(colnames, makeString(pstrdup(te->resname)));
		cte->ctecoltypes = lappend_oid(cte->ctecoltypes, exprType((Node *) te->expr));
		cte->ctecoltypmods = lappend_int(cte->ctecoltypmods, exprTypmod((Node *) te->expr));
		cte->ctecolcollations = lappend_oid(cte->ctecolcollations, exprCollation((Node *) te->expr));
	}
	cte->ctecolnames = colnames;
	parse->cteList = lappend(parse->cteList, cte);

	simhash_rte_drop_permission(parse, rte);
	rte->rtekind = RTE_CTE;
	rte->relid = InvalidOid;
	rte->relkind = 0;
	rte->rellockmode = NoLock;
	rte->inh = false;
	rte->ctename = cte->ctename;
	rte->ctelevelsup = 0;
	rte->self_reference = false;
	rte->coltypes = cte->ctecoltypes;
	rte->coltypmods = cte->ctecoltypmods;
	rte->colcollations = cte->ctecolcollations;
	rte->eref = makeAlias(rte->eref->aliasname, colnames);
	return q;
}

/* whether function funcid is a member of extension simhash */
static bool
extension_member(Oid funcid)
{
	Oid			ext = get_extension_oid("simhash", true);

	return OidIsValid(ext) && getExtensionOfObject(ProcedureRelationId, funcid) == ext;
}

/*
 * The functions the self-join's CTE query q calls in its FROM (the pairs
 * job) must be the extension's own: the job is named in the extension's
 * schema, where a function of the same name that another role created with
 * a concrete id_type would win the call over the polymorphic original
 * (42725, as simhash_distance_histogram refuses to run beside one).
 */
static void
check_pairs_call(Query *q)
{
	ListCell   *lc;

	foreach(lc, q->rtable)
	{
		RangeTblEntry *rte = lfirst_node(RangeTblEntry, lc);
		ListCell   *lc2;

		if (rte->rtekind != RTE_FUNCTION)
			continue;
		foreach(lc2, rte->functions)
		{
			FuncExpr   *f = (FuncExpr *) lfirst_node(RangeTblFunction, lc2)->funcexpr;

			if (!IsA(f, FuncExpr))
				elog(ERROR, "unexpected node type in the simhash_pairs call: %d", (int) nodeTag(f));
			if (!extension_member(f->funcid))
				ereport(ERROR,
						(errcode(ERRCODE_AMBIGUOUS_FUNCTION),
						 errmsg("function %s is not a member of extension simhash but shares the name of its simhash_pairs",
								format_procedure(f->funcid)),
						 errhint("Drop or rename it: it could run in place of the extension's function.")));
		}
	}
}

/*
 * Rewrite parse if it is one of the two shapes (file header); false if it
 * is left as it is.
 */
static bool
rewrite(Query *parse, ParamListInfo boundParams)
{
	CitusJoin	j;
	char	   *extschema;
	int			side,
				natts;
	ColumnUse	use;
	StringInfoData sql;
	RangeTblEntry *rte;

	if (!recognise(parse, boundParams, &j))
		return false;

	if (j.rte[0]->relid == j.rte[1]->relid)
	{
		Oid			idtype;

		/* the self-join: the pairs job */
		if (j.low < 0 || j.id_att != j.dist[0] || j.hash_att[0] != j.hash_att[1] ||
			!unique_column(j.rte[0]->relid, j.id_att))
			return false;
		idtype = get_atttype(j.rte[0]->relid, j.id_att);
		if (idtype != INT2OID && idtype != INT4OID && idtype != INT8OID)
			return false;
		/* the radius operator is the extension's: its schema names the job */
		if (!extension_member(j.radius_func))
			return false;
		side = j.low;
	}
	else
		side = 0;				/* a batch against the corpus: the first table */

	memset(&use, 0, sizeof(use));
	use.parse = parse;
	use.rti = j.rti[side];
	(void) query_tree_walker(parse, column_use_walker, &use, QTW_IGNORE_JOINALIASES);
	if (use.whole)
		return false;

	rte = j.rte[side];
	extschema = get_namespace_name(j.extnsp);
	initStringInfo(&sql);
	appendStringInfoString(&sql, "SELECT ");
	natts = append_columns(&sql, rte, "t", use.atts);
	if (j.rte[0]->relid == j.rte[1]->relid)
	{
		Oid			relid = rte->relid;
		Oid			idtype = get_atttype(relid, j.id_att);
		Index		other = j.rti[1 - side];
		Var		   *id_other;
		Var		   *id_pair;
		Oid			eq;
		Expr	   *cond;

		appendStringInfo(&sql,
						 ", p.id_b AS simhash_pair_id FROM %s.simhash_pairs(relation => %u::pg_catalog.oid::pg_catalog.regclass, id_column => %s::pg_catalog.name,"
						 " hash_column => %s::pg_catalog.name, id_type => NULL::%s, max_distance => " INT64_FORMAT ") p"
						 " JOIN %s t ON t.%s OPERATOR(pg_catalog.=) p.id_a",
						 quote_identifier(extschema), relid,
						 quote_literal_cstr(get_attname(relid, j.id_att, false)),
						 quote_literal_cstr(get_attname(relid, j.hash_att[side], false)),
						 format_type_be_qualified(idtype), j.radius,
						 table_name(rte), quote_identifier(get_attname(relid, j.id_att, false)));
		check_pairs_call(replace_by_cte(parse, j.rti[side], sql.data));

		/* the other side's id is the pair's larger id */
		id_other = makeVar(other, j.id_att, idtype, -1, InvalidOid, 0);
		id_pair = makeVar(j.rti[side], natts + 1, idtype, -1, InvalidOid, 0);
		eq = lookup_type_cache(idtype, TYPECACHE_EQ_OPR)->eq_opr;
		cond = make_opclause(eq, BOOLOID, false, (Expr *) id_other, (Expr *) id_pair,
							 InvalidOid, InvalidOid);
		set_opfuncid((OpExpr *) cond);
		parse->jointree->quals = make_and_qual(parse->jointree->quals, (Node *) cond);
	}
	else
	{
		appendStringInfo(&sql, " FROM %s t", table_name(rte));
		replace_by_cte(parse, j.rti[side], sql.data);
	}
	return true;
}

/*
 * planner_hook: the rewrite of a recognised radius join between Citus
 * distributed tables, then the planner this hook wraps (Citus's).
 */
static PlannedStmt *
citus_join_planner(Query *parse, const char *query_string, int cursorOptions,
				   ParamListInfo boundParams)
{
	if (simhash_citus_joins)
	{
		Query	   *select = parse;

		/* INSERT ... SELECT: the SELECT, a subquery in the range table */
		if (parse->commandType == CMD_INSERT && parse->cteList == NIL &&
			parse->jointree != NULL && list_length(parse->jointree->fromlist) == 1 &&
			IsA(linitial(parse->jointree->fromlist), RangeTblRef))
		{
			RangeTblEntry *rte = rt_fetch(linitial_node(RangeTblRef, parse->jointree->fromlist)->rtindex,
										  parse->rtable);

			if (rte->rtekind == RTE_SUBQUERY && !rte->lateral)
				select = rte->subquery;
		}
		(void) rewrite(select, boundParams);
	}
	if (prev_planner_hook)
		return prev_planner_hook(parse, query_string, cursorOptions, boundParams);
	return standard_planner(parse, query_string, cursorOptions, boundParams);
}

/* Called from simhash_join_init(): the setting and the hook. */
void
join_citus_init(void)
{
	DefineCustomBoolVariable("simhash.citus_joins",
							 "Rewrites radius joins between two Citus distributed tables so that Citus can plan them.",
							 "The self-join a.id < b.id AND a.h <~> b.h <= k runs the pairs job; a join of two tables sends the first to the workers.",
							 &simhash_citus_joins,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	prev_planner_hook = planner_hook;
	planner_hook = citus_join_planner;
}
