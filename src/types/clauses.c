/*
 * clauses.c
 *		The extension's objects and clauses as the planner support sees
 *		them: the objects looked up by name, simhash_ball expressions taken
 *		apart, and radius conditions recognised (for the index's cost and
 *		the join path).
 *
 * OIDs: the extension is relocatable and its objects have no fixed OIDs, so
 * they are looked up by name (syscache) in the schema of the function being
 * called: every support and selectivity function lives in the extension's
 * schema, and flinfo->fn_oid tells which one runs.  Nothing is cached across
 * calls, so DROP/CREATE EXTENSION and ALTER EXTENSION SET SCHEMA need no
 * invalidation; the lookups are a few hash probes and happen only once a
 * clause has the right shape.
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

/* the OID of type name in namespace nsp, or InvalidOid */
static Oid
lookup_type(const char *name, Oid nsp)
{
	return GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
						   CStringGetDatum(name), ObjectIdGetDatum(nsp));
}

/* the OID of function name(argtypes) in namespace nsp, or InvalidOid */
static Oid
lookup_function(const char *name, Oid nsp, int nargs, const Oid *argtypes)
{
	oidvector  *args = buildoidvector(argtypes, nargs);
	Oid			result;

	result = GetSysCacheOid3(PROCNAMEARGSNSP, Anum_pg_proc_oid,
							 CStringGetDatum(name), PointerGetDatum(args),
							 ObjectIdGetDatum(nsp));
	pfree(args);
	return result;
}

/* the OID of operator name(left, right) in namespace nsp, or InvalidOid */
static Oid
lookup_operator(const char *name, Oid nsp, Oid left, Oid right)
{
	return GetSysCacheOid4(OPERNAMENSP, Anum_pg_operator_oid,
						   CStringGetDatum(name), ObjectIdGetDatum(left),
						   ObjectIdGetDatum(right), ObjectIdGetDatum(nsp));
}

/*
 * Fill *oids from the schema nsp.  False when an object is missing (the
 * caller then declines to help).
 */
bool
simhash_lookup_oids(Oid nsp, SimhashOids *oids)
{
	Oid			argtypes[3];

	if (!OidIsValid(nsp))
		return false;
	oids->hash_type = lookup_type("simhash64", nsp);
	oids->dist_type = lookup_type("simhash_distance", nsp);
	oids->ball_type = lookup_type("simhash_ball", nsp);
	if (!OidIsValid(oids->hash_type) || !OidIsValid(oids->dist_type) ||
		!OidIsValid(oids->ball_type))
		return false;

	oids->distance_op = lookup_operator("<~>", nsp,
										oids->hash_type, oids->hash_type);
	oids->within_op = lookup_operator("<@", nsp,
									  oids->hash_type, oids->ball_type);
	argtypes[0] = oids->hash_type;
	argtypes[1] = oids->hash_type;
	argtypes[2] = INT8OID;
	oids->within_func = lookup_function("simhash_within", nsp, 3, argtypes);
	argtypes[1] = INT8OID;
	oids->ball_func = lookup_function("simhash_ball", nsp, 2, argtypes);
	return OidIsValid(oids->distance_op) && OidIsValid(oids->within_op) &&
		OidIsValid(oids->within_func) && OidIsValid(oids->ball_func);
}

/* *oids from the schema of the function being called */
bool
simhash_call_oids(FunctionCallInfo fcinfo, SimhashOids *oids)
{
	if (fcinfo->flinfo == NULL || !OidIsValid(fcinfo->flinfo->fn_oid))
		return false;
	return simhash_lookup_oids(get_func_namespace(fcinfo->flinfo->fn_oid), oids);
}

/* node without its binary-compatible casts */
Node *
simhash_strip_relabel(Node *node)
{
	while (node && IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	return node;
}

/* a bigint constant */
Const *
simhash_int8_const(int64 value)
{
	return makeConst(INT8OID, -1, InvalidOid, sizeof(int64),
					 Int64GetDatum(value), false, FLOAT8PASSBYVAL);
}

/*
 * The center and radius expressions of a simhash_ball expression: a
 * constant ball gives constants; simhash_ball(center, radius) gives its
 * arguments.  False for anything else (e.g. a simhash_ball column).
 */
static bool
decompose_ball(Node *ball, const SimhashOids *oids, Node **center,
			   Node **radius)
{
	ball = simhash_strip_relabel(ball);
	if (IsA(ball, Const))
	{
		Const	   *c = (Const *) ball;

		if (c->constisnull)
		{
			*center = (Node *) makeNullConst(oids->hash_type, -1, InvalidOid);
			*radius = (Node *) makeNullConst(INT8OID, -1, InvalidOid);
		}
		else
		{
			SimhashBall *b = DatumGetSimhashBallP(c->constvalue);

			*center = (Node *) makeConst(oids->hash_type, -1, InvalidOid,
										 sizeof(int64),
										 Simhash64GetDatum(b->center),
										 false, FLOAT8PASSBYVAL);
			*radius = (Node *) simhash_int8_const(b->radius);
		}
		return true;
	}
	if (IsA(ball, FuncExpr) && ((FuncExpr *) ball)->funcid == oids->ball_func &&
		list_length(((FuncExpr *) ball)->args) == 2)
	{
		*center = linitial(((FuncExpr *) ball)->args);
		*radius = lsecond(((FuncExpr *) ball)->args);
		return true;
	}
	return false;
}

/*
 * The arguments of `h <@ ball` or `ball @> h` as the (a, b, k) of
 * simhash_within(a, b, k): false if they are not a simhash64 and a
 * decomposable ball.
 */
bool
simhash_ball_operator_args(List *args, const SimhashOids *oids, Node **a, Node **b,
				   Node **k)
{
	Node	   *left,
			   *right;

	if (list_length(args) != 2)
		return false;
	left = linitial(args);
	right = lsecond(args);
	if (exprType(left) == oids->ball_type)
	{
		Node	   *tmp = left;

		left = right;
		right = tmp;
	}
	if (exprType(right) != oids->ball_type)
		return false;
	*a = left;
	return decompose_ball(right, oids, b, k);
}

/*--------------------------------------------------------------------------
 * Radius conditions, for the join path (join/path.c) and the index's cost
 *--------------------------------------------------------------------------
 */

/*
 * Is clause a radius condition of this extension: simhash_within(a, b, k)
 * (what `a <~> b <= k` and the other spellings become at simplification),
 * `a <@ simhash_ball(b, k)` or `simhash_ball(b, k) @> a`?  If so, set *a, *b
 * (the two fingerprints) and *k (the bigint radius expression).
 */
bool
simhash_radius_condition(Node *clause, Node **a, Node **b, Node **k)
{
	SimhashOids oids;

	if (clause == NULL)
		return false;
	if (IsA(clause, FuncExpr))
	{
		FuncExpr   *f = (FuncExpr *) clause;

		/* cheap shape test before any catalog lookup */
		if (f->funcresulttype != BOOLOID || list_length(f->args) != 3 ||
			!simhash_lookup_oids(get_func_namespace(f->funcid), &oids) ||
			f->funcid != oids.within_func)
			return false;
		*a = linitial(f->args);
		*b = lsecond(f->args);
		*k = lthird(f->args);
		return true;
	}
	if (IsA(clause, OpExpr))
	{
		OpExpr	   *op = (OpExpr *) clause;

		/* one operand is the ball: a function call (or a constant) */
		if (op->opresulttype != BOOLOID || list_length(op->args) != 2 ||
			!(IsA(simhash_strip_relabel(linitial(op->args)), FuncExpr) ||
			  IsA(simhash_strip_relabel(lsecond(op->args)), FuncExpr) ||
			  IsA(simhash_strip_relabel(linitial(op->args)), Const) ||
			  IsA(simhash_strip_relabel(lsecond(op->args)), Const)) ||
			!simhash_lookup_oids(get_func_namespace(get_opcode(op->opno)), &oids) ||
			(op->opno != oids.within_op && op->opno != get_commutator(oids.within_op)))
			return false;
		return simhash_ball_operator_args(op->args, &oids, a, b, k);
	}
	return false;
}

/* the radius a condition's k is planned for (planner.h) */
int
simhash_planned_radius(PlannerInfo *root, Node *k, int dflt)
{
	Node	   *v = root ? estimate_expression_value(root, k) : k;

	v = simhash_strip_relabel(v);
	if (v && IsA(v, Const) && ((Const *) v)->consttype == INT8OID)
	{
		Const	   *c = (Const *) v;

		if (c->constisnull)
			return -1;
		return (int) Max(Min(DatumGetInt64(c->constvalue), 64), -1);
	}
	return dflt;
}

/* the smallest radius of the radius conditions among clauses (planner.h) */
int
simhash_clauses_radius(PlannerInfo *root, List *clauses, int dflt)
{
	ListCell   *lc;
	int			radius = 65;

	foreach(lc, clauses)
	{
		Node	   *clause = lfirst(lc);
		Node	   *a,
				   *b,
				   *k;

		if (IsA(clause, RestrictInfo))
			clause = (Node *) ((RestrictInfo *) clause)->clause;
		if (simhash_radius_condition(clause, &a, &b, &k))
			radius = Min(radius, simhash_planned_radius(root, k, dflt));
	}
	return radius == 65 ? dflt : radius;
}
