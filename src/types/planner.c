/*
 * planner.c
 *		Planner support: how `h <~> q <= k` reaches an index (the rewrite and
 *		the index condition); how many rows it returns is selectivity.c's,
 *		the extension's objects and radius conditions clauses.c's.
 *
 * The planner only uses a clause as an index condition when it has the form
 * `indexcol OP value` with OP in the index's operator family.  In
 * `h <~> q <= k` the column is buried in the left operand of `<=`, so two
 * planner support functions rewrite it in two steps:
 *
 * 1. simhash_distance_support is attached (ALTER FUNCTION ... SUPPORT) to
 *    the functions behind the `<`, `<=`, `=`, `>=`, `>` operators between
 *    simhash_distance and smallint, integer, bigint or simhash_distance (both
 *    operand orders).  At constant simplification (SupportRequestSimplify,
 *    called by eval_const_expressions for every query, view, prepared
 *    statement and PL/pgSQL statement) it rewrites, where `a <~> b` is the
 *    extension's operator (possibly under a RelabelType):
 *
 *        (a <~> b) <= k    k >= (a <~> b)    ->  simhash_within(a, b, k::bigint)
 *        (a <~> b) <  k    k >  (a <~> b)    ->  simhash_within(a, b, k - 1)
 *        (a <~> b) =  0    0 =  (a <~> b)    ->  simhash_within(a, b, 0)
 *
 *    k is any expression without volatile functions (a constant, a Param of
 *    a generic plan, an outer column).  For `<` a constant k becomes the
 *    constant k - 1 (at least -1: no overflow); otherwise the expression is
 *    `k::bigint - 1`, or `int8larger(k, 0) - 1` when k is a bigint (which
 *    cannot overflow and, being strict, keeps a NULL k NULL: GREATEST would
 *    not).  The rewrite is exactly equivalent: distances are integers in
 *    0..64, and simhash_within is strict like the comparison it replaces.
 *    Nothing else is rewritten: not `>`/`>=` with the distance on the left,
 *    not `=` with anything but a constant 0, and not comparisons of other
 *    types such as `(a <~> b)::integer <= 3` (int4le has no support
 *    function).
 *
 * 2. simhash_within_support is the support function of simhash_within:
 *
 *    SupportRequestIndexCondition: when a (or b) is the index column, the
 *    column's operator family contains `<@ (simhash64, simhash_ball)`, and
 *    the other operand and the radius do not use the index's relation nor
 *    volatile functions (constants, Params, or outer columns of a
 *    parameterised nested loop), it returns the exact (non-lossy) index
 *    condition `col <@ simhash_ball(other, k)`; the ball is folded to a
 *    constant when both are constants.
 *
 *    SupportRequestSelectivity: selectivity.c; SupportRequestCost: an
 *    operator's cost.
 */
#include "ball.h"
#include "clauses.h"

#include "access/htup_details.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"

PG_FUNCTION_INFO_V1(simhash_distance_support);
PG_FUNCTION_INFO_V1(simhash_within_support);

/* pg_operator: bigint - bigint (int8mi); catalog OIDs below 10000 are fixed */
#define INT8_MINUS_OPERATOR		685

/* the comparisons simhash_distance_support knows, as `distance CMP k` */
typedef enum DistanceCmp
{
	CMP_NONE,
	CMP_LT,
	CMP_LE,
	CMP_EQ,
	CMP_GE,
	CMP_GT
} DistanceCmp;

/*--------------------------------------------------------------------------
 * simhash_distance_support: SupportRequestSimplify
 *--------------------------------------------------------------------------
 */

/*
 * The comparison a function implements, from its name: the functions the
 * support function is attached to are simhash_distance_<type>_<cmp>,
 * simhash_<type>_distance_<cmp> and simhash_distance_<cmp> (see
 * sql/distance_grid.sh, which generates them).
 */
static DistanceCmp
comparison_of(Oid funcid)
{
	char	   *name = get_func_name(funcid);
	size_t		len;
	DistanceCmp result = CMP_NONE;

	if (name == NULL)
		return CMP_NONE;
	len = strlen(name);
	if (len > 3 && strncmp(name, "simhash_", 8) == 0 && name[len - 3] == '_')
	{
		const char *suffix = name + len - 2;

		if (strcmp(suffix, "lt") == 0)
			result = CMP_LT;
		else if (strcmp(suffix, "le") == 0)
			result = CMP_LE;
		else if (strcmp(suffix, "eq") == 0)
			result = CMP_EQ;
		else if (strcmp(suffix, "ge") == 0)
			result = CMP_GE;
		else if (strcmp(suffix, "gt") == 0)
			result = CMP_GT;
	}
	pfree(name);
	return result;
}

/* k CMP d is d COMMUTE(CMP) k */
static DistanceCmp
commute(DistanceCmp cmp)
{
	switch (cmp)
	{
		case CMP_LT:
			return CMP_GT;
		case CMP_LE:
			return CMP_GE;
		case CMP_GE:
			return CMP_LE;
		case CMP_GT:
			return CMP_LT;
		default:
			return cmp;
	}
}

/* the <~> OpExpr under node (through RelabelTypes), or NULL */
static OpExpr *
distance_expr(Node *node, const SimhashOids *oids)
{
	node = simhash_strip_relabel(node);
	if (node && IsA(node, OpExpr) &&
		((OpExpr *) node)->opno == oids->distance_op &&
		list_length(((OpExpr *) node)->args) == 2)
		return (OpExpr *) node;
	return NULL;
}

/* whether node may be a distance expression (an operator call) */
static bool
maybe_distance_expr(Node *node)
{
	node = simhash_strip_relabel(node);
	return node && IsA(node, OpExpr);
}

/* k (smallint, integer, bigint or simhash_distance) as a bigint expression */
static Expr *
to_int8(Node *k, Oid ktype, const SimhashOids *oids)
{
	if (ktype == INT8OID)
		return (Expr *) k;
	if (ktype == oids->dist_type)
		k = (Node *) makeRelabelType((Expr *) k, INT4OID, -1, InvalidOid,
									 COERCE_IMPLICIT_CAST);
	return (Expr *) makeFuncExpr(ktype == INT2OID ? F_INT8_INT2 : F_INT8_INT4,
								 INT8OID, list_make1(k), InvalidOid,
								 InvalidOid, COERCE_IMPLICIT_CAST);
}

/* the expression arg - 1 (bigint) */
static Expr *
int8_minus_one(Expr *arg)
{
	OpExpr	   *op;

	op = (OpExpr *) make_opclause(INT8_MINUS_OPERATOR, INT8OID, false, arg,
								  (Expr *) simhash_int8_const(1),
								  InvalidOid, InvalidOid);
	op->opfuncid = F_INT8MI;
	return (Expr *) op;
}

/*
 * SupportRequestSimplify of a distance comparison: rewrite it as <@ on a
 * simhash_ball
 */
static Node *
simplify_comparison(FunctionCallInfo fcinfo, SupportRequestSimplify *req)
{
	FuncExpr   *fcall = req->fcall;
	DistanceCmp cmp;
	SimhashOids oids;
	OpExpr	   *dist;
	Node	   *k;
	Oid			ktype;
	Expr	   *radius;

	if (list_length(fcall->args) != 2)
		return NULL;
	/* cheap shape test before any catalog lookup */
	if (!maybe_distance_expr(linitial(fcall->args)) &&
		!maybe_distance_expr(lsecond(fcall->args)))
		return NULL;
	cmp = comparison_of(fcall->funcid);
	if (cmp == CMP_NONE || !simhash_call_oids(fcinfo, &oids))
		return NULL;

	/* normalise to `distance CMP k` */
	if ((dist = distance_expr(linitial(fcall->args), &oids)) != NULL)
		k = lsecond(fcall->args);
	else if ((dist = distance_expr(lsecond(fcall->args), &oids)) != NULL)
	{
		k = linitial(fcall->args);
		cmp = commute(cmp);
	}
	else
		return NULL;

	ktype = exprType(k);
	if (ktype != INT2OID && ktype != INT4OID && ktype != INT8OID &&
		ktype != oids.dist_type)
		return NULL;
	if (contain_volatile_functions(k))
		return NULL;

	if (IsA(k, Const))
	{
		Const	   *c = (Const *) k;
		int64		value;

		/* never reached in practice: a strict function of NULL folds first */
		if (c->constisnull)
			return NULL;
		if (ktype == INT2OID)
			value = DatumGetInt16(c->constvalue);
		else if (ktype == INT8OID)
			value = DatumGetInt64(c->constvalue);
		else
			value = DatumGetInt32(c->constvalue);

		switch (cmp)
		{
			case CMP_LE:
				break;
			case CMP_LT:
				/* d < k  <=>  d <= k - 1; any k <= 0 matches nothing */
				value = (value <= 0) ? -1 : value - 1;
				break;
			case CMP_EQ:
				if (value != 0)
					return NULL;
				break;
			default:
				return NULL;
		}
		radius = (Expr *) simhash_int8_const(value);
	}
	else
	{
		switch (cmp)
		{
			case CMP_LE:
				radius = to_int8(k, ktype, &oids);
				break;
			case CMP_LT:
				if (ktype == INT8OID)
				{
					/* int8larger is strict: NULL stays NULL; no overflow */
					radius = (Expr *)
						makeFuncExpr(F_INT8LARGER, INT8OID,
									 list_make2(k, simhash_int8_const(0)),
									 InvalidOid, InvalidOid,
									 COERCE_EXPLICIT_CALL);
					radius = int8_minus_one(radius);
				}
				else
					radius = int8_minus_one(to_int8(k, ktype, &oids));
				break;
			default:
				return NULL;
		}
	}

	return (Node *) makeFuncExpr(oids.within_func, BOOLOID,
								 list_make3(linitial(dist->args),
											lsecond(dist->args),
											radius),
								 InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
}

Datum
simhash_distance_support(PG_FUNCTION_ARGS)
{
	Node	   *rawreq = (Node *) PG_GETARG_POINTER(0);
	Node	   *ret = NULL;

	if (IsA(rawreq, SupportRequestSimplify))
		ret = simplify_comparison(fcinfo, (SupportRequestSimplify *) rawreq);

	PG_RETURN_POINTER(ret);
}

/*--------------------------------------------------------------------------
 * simhash_within_support: index conditions, selectivity, cost
 *--------------------------------------------------------------------------
 */

/* simhash_ball(center, radius), folded when both are constants */
static Expr *
make_ball(Node *center, Node *radius, const SimhashOids *oids)
{
	if (IsA(center, Const) && IsA(radius, Const))
	{
		if (((Const *) center)->constisnull || ((Const *) radius)->constisnull)
			return (Expr *) makeNullConst(oids->ball_type, -1, InvalidOid);
		return (Expr *) makeConst(oids->ball_type, -1, InvalidOid,
								  sizeof(SimhashBall),
								  SimhashBallPGetDatum(simhash_ball_new(DatumGetSimhash64(((Const *) center)->constvalue),
																		DatumGetInt64(((Const *) radius)->constvalue))),
								  false, false);
	}
	return (Expr *) makeFuncExpr(oids->ball_func, oids->ball_type,
								 list_make2(center, radius),
								 InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
}

/* SupportRequestIndexCondition: the index condition of a within-radius call */
static List *
within_index_condition(FunctionCallInfo fcinfo,
					   SupportRequestIndexCondition *req)
{
	FuncExpr   *fexpr;
	SimhashOids oids;
	Node	   *key;
	Node	   *other;
	Node	   *radius;
	Index		relid;
	OpExpr	   *clause;

	if (!is_funcclause(req->node))
		return NIL;
	fexpr = (FuncExpr *) req->node;
	if (list_length(fexpr->args) != 3 ||
		(req->indexarg != 0 && req->indexarg != 1))
		return NIL;
	if (!simhash_call_oids(fcinfo, &oids) ||
		fexpr->funcid != oids.within_func ||
		!op_in_opfamily(oids.within_op, req->opfamily))
		return NIL;

	key = list_nth(fexpr->args, req->indexarg);
	other = list_nth(fexpr->args, 1 - req->indexarg);
	radius = lthird(fexpr->args);

	/* the comparison value must be computable before scanning the index */
	relid = req->index->rel->relid;
	if (bms_is_member(relid, pull_varnos(req->root, other)) ||
		bms_is_member(relid, pull_varnos(req->root, radius)) ||
		contain_volatile_functions(other) ||
		contain_volatile_functions(radius))
		return NIL;

	clause = (OpExpr *) make_opclause(oids.within_op, BOOLOID, false,
									  (Expr *) key,
									  make_ball(other, radius, &oids),
									  InvalidOid, InvalidOid);
	clause->opfuncid = get_opcode(oids.within_op);
	req->lossy = false;
	return list_make1(clause);
}

Datum
simhash_within_support(PG_FUNCTION_ARGS)
{
	Node	   *rawreq = (Node *) PG_GETARG_POINTER(0);
	Node	   *ret = NULL;

	if (IsA(rawreq, SupportRequestIndexCondition))
		ret = (Node *) within_index_condition(fcinfo,
											  (SupportRequestIndexCondition *) rawreq);
	else if (IsA(rawreq, SupportRequestSelectivity))
	{
		SupportRequestSelectivity *req = (SupportRequestSelectivity *) rawreq;

		req->selectivity = simhash_within_selectivity(fcinfo, req);
		ret = (Node *) req;
	}
	else if (IsA(rawreq, SupportRequestCost))
	{
		SupportRequestCost *req = (SupportRequestCost *) rawreq;

		/* an XOR and a popcount: as cheap as a built-in operator */
		req->startup = 0;
		req->per_tuple = cpu_operator_cost;
		ret = (Node *) req;
	}

	PG_RETURN_POINTER(ret);
}
