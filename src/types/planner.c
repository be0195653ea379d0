/*
 * planner.c
 *		Planner support: how `h <~> q <= k` reaches an index, and how many
 *		rows it is expected to return.
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
 *    SupportRequestSelectivity and SupportRequestCost: see below.
 *
 * Selectivity (simhash_within and the `<@` / `@>` operators share it).  For
 * uniformly random 64-bit fingerprints, P(distance <= r) = sum_{i<=r}
 * C(64,i) / 2^64, negligible for small r; real data matters through
 * duplicates.  With a constant center and the column's statistics:
 *
 *     sel = (frequencies of MCVs within r of the center)
 *         + (non-null, non-MCV fraction) * min(1, P_random(r) + dup)
 *
 * where dup = 1 / (ndistinct - number of MCVs), the share of one distinct
 * value (as eqsel), unless the center itself is an MCV (then its rows are
 * already counted).  Without a constant center (a Param of a generic plan,
 * a join) the center is assumed to be one of the column's values:
 * sel = nonnull * min(1, P_random(r) + 1/ndistinct) (as var_eq_non_const,
 * and for joins as eqjoinsel without MCVs, with max(ndistinct1, ndistinct2)
 * and both non-null fractions).  An unknown radius counts as
 * SIMHASH_DEFAULT_RADIUS.  A restriction estimate is at least one row
 * (1 / reltuples) unless the ball is empty; all estimates are clamped to
 * [0, 1].  The estimate is computed here, not by calling a function on the
 * MCVs, and only numbers leave it (the functions are leakproof).
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
#include "planner.h"

#include <math.h>

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
PG_FUNCTION_INFO_V1(simhash_ball_sel);
PG_FUNCTION_INFO_V1(simhash_ball_joinsel);

/* the radius assumed when it is not a constant at planning time */
#define SIMHASH_DEFAULT_RADIUS	3

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
static bool
lookup_oids(FunctionCallInfo fcinfo, SimhashOids *oids)
{
	if (fcinfo->flinfo == NULL || !OidIsValid(fcinfo->flinfo->fn_oid))
		return false;
	return simhash_lookup_oids(get_func_namespace(fcinfo->flinfo->fn_oid), oids);
}

/* node without its binary-compatible casts */
static Node *
strip_relabel(Node *node)
{
	while (node && IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	return node;
}

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
	node = strip_relabel(node);
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
	node = strip_relabel(node);
	return node && IsA(node, OpExpr);
}

/* a bigint constant */
static Const *
int8_const(int64 value)
{
	return makeConst(INT8OID, -1, InvalidOid, sizeof(int64),
					 Int64GetDatum(value), false, FLOAT8PASSBYVAL);
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
								  (Expr *) int8_const(1),
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
	if (cmp == CMP_NONE || !lookup_oids(fcinfo, &oids))
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
		radius = (Expr *) int8_const(value);
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
									 list_make2(k, int8_const(0)),
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
 * Selectivity
 *--------------------------------------------------------------------------
 */

/* P(popcount(x ^ c) <= radius) for a uniformly random 64-bit x */
static double
random_within_fraction(int radius)
{
	double		sum = 0.0;
	double		binom = 1.0;	/* C(64, i) */
	int			i;

	if (radius < 0)
		return 0.0;
	if (radius >= SIMHASH_BALL_MAX_RADIUS)
		return 1.0;
	for (i = 0; i <= radius; i++)
	{
		sum += binom;
		binom = binom * (64 - i) / (i + 1);
	}
	return ldexp(sum, -64);
}

/* the null fraction of a column's statistics (0 without statistics) */
static double
null_fraction(VariableStatData *vardata)
{
	if (HeapTupleIsValid(vardata->statsTuple))
		return ((Form_pg_statistic) GETSTRUCT(vardata->statsTuple))->stanullfrac;
	return 0.0;
}

/* a radius expression (already estimated) to -1..64 */
static int
radius_of(Node *k, bool *isnull)
{
	*isnull = false;
	if (k && IsA(k, Const))
	{
		Const	   *c = (Const *) k;

		if (c->constisnull)
		{
			*isnull = true;
			return SIMHASH_BALL_EMPTY;
		}
		if (c->consttype == INT8OID)
			return simhash_ball_clamp_radius(DatumGetInt64(c->constvalue));
	}
	return SIMHASH_DEFAULT_RADIUS;
}

/*
 * Fraction of the rows of vardata's column within radius of center (when
 * center_known) or of one of the column's own values (otherwise).
 */
static Selectivity
restriction_selectivity(VariableStatData *vardata, const SimhashOids *oids,
						bool center_known, simhash64 center, int radius)
{
	double		prand = random_within_fraction(radius);
	double		nullfrac = null_fraction(vardata);
	double		nd;
	double		mcv_total = 0.0;
	double		mcv_match = 0.0;
	int			nmcv = 0;
	bool		center_is_mcv = false;
	bool		isdefault;
	double		rest;
	double		dup;
	Selectivity selec;

	if (radius < 0)
		return 0.0;
	nd = get_variable_numdistinct(vardata, &isdefault);

	if (center_known && HeapTupleIsValid(vardata->statsTuple) &&
		getBaseType(vardata->atttype) == oids->hash_type &&
		statistic_proc_security_check(vardata, oids->within_func))
	{
		AttStatsSlot sslot;

		if (get_attstatsslot(&sslot, vardata->statsTuple, STATISTIC_KIND_MCV,
							 InvalidOid,
							 ATTSTATSSLOT_VALUES | ATTSTATSSLOT_NUMBERS))
		{
			int			i;

			nmcv = sslot.nvalues;
			for (i = 0; i < sslot.nvalues && i < sslot.nnumbers; i++)
			{
				int			d = pg_popcount64(DatumGetSimhash64(sslot.values[i]) ^ center);

				mcv_total += sslot.numbers[i];
				if (d <= radius)
					mcv_match += sslot.numbers[i];
				if (d == 0)
					center_is_mcv = true;
			}
			free_attstatsslot(&sslot);
		}
	}

	rest = 1.0 - nullfrac - mcv_total;
	CLAMP_PROBABILITY(rest);
	if (center_is_mcv)
		dup = 0.0;
	else if (nd - nmcv >= 1.0)
		dup = 1.0 / (nd - nmcv);
	else
		dup = 1.0;
	selec = mcv_match + rest * Min(1.0, prand + dup);

	/* a probe usually finds at least itself */
	if (nullfrac < 1.0 && vardata->rel && vardata->rel->tuples >= 1.0)
		selec = Max(selec, 1.0 / vardata->rel->tuples);
	CLAMP_PROBABILITY(selec);
	return selec;
}

/* pairs of rows within radius of each other */
static Selectivity
join_selectivity(VariableStatData *vardata1, VariableStatData *vardata2,
				 int radius)
{
	double		prand = random_within_fraction(radius);
	double		nd1,
				nd2;
	bool		isdefault1,
				isdefault2;
	Selectivity selec;

	if (radius < 0)
		return 0.0;
	nd1 = get_variable_numdistinct(vardata1, &isdefault1);
	nd2 = get_variable_numdistinct(vardata2, &isdefault2);
	selec = (1.0 - null_fraction(vardata1)) * (1.0 - null_fraction(vardata2)) *
		Min(1.0, prand + 1.0 / Max(Max(nd1, nd2), 1.0));
	CLAMP_PROBABILITY(selec);
	return selec;
}

/*
 * Restriction selectivity of `a within radius of b`: one of a, b must be a
 * column (or expression) of the relation and the other a pseudo-constant.
 */
static Selectivity
within_restriction(PlannerInfo *root, const SimhashOids *oids, Node *a,
				   Node *b, Node *k, int varRelid)
{
	VariableStatData vardata;
	Node	   *other;
	bool		varonleft;
	bool		knull;
	int			radius;
	Selectivity selec;

	radius = radius_of(k ? estimate_expression_value(root, k) : NULL, &knull);
	if (knull)
		return 0.0;

	if (!get_restriction_variable(root, list_make2(a, b), varRelid,
								  &vardata, &other, &varonleft))
	{
		/* e.g. two columns of the same row: no statistics to use */
		selec = Min(1.0, random_within_fraction(radius) + DEFAULT_EQ_SEL);
		return radius < 0 ? 0.0 : selec;
	}

	if (IsA(other, Const) && ((Const *) other)->constisnull)
		selec = 0.0;
	else if (IsA(other, Const) && exprType(other) == oids->hash_type)
		selec = restriction_selectivity(&vardata, oids, true,
										DatumGetSimhash64(((Const *) other)->constvalue),
										radius);
	else
		selec = restriction_selectivity(&vardata, oids, false, 0, radius);

	ReleaseVariableStats(vardata);
	return selec;
}

/* the selectivity of a <@ b's ball of radius k as a join clause */
static Selectivity
within_join(PlannerInfo *root, Node *a, Node *b, Node *k,
			SpecialJoinInfo *sjinfo)
{
	VariableStatData vardata1;
	VariableStatData vardata2;
	bool		reversed;
	bool		knull;
	int			radius;
	Selectivity selec;

	radius = radius_of(k ? estimate_expression_value(root, k) : NULL, &knull);
	if (knull)
		return 0.0;

	get_join_variables(root, list_make2(a, b), sjinfo,
					   &vardata1, &vardata2, &reversed);
	selec = join_selectivity(&vardata1, &vardata2, radius);
	ReleaseVariableStats(vardata1);
	ReleaseVariableStats(vardata2);
	return selec;
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
	ball = strip_relabel(ball);
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
			*radius = (Node *) int8_const(b->radius);
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
static bool
ball_operator_args(List *args, const SimhashOids *oids, Node **a, Node **b,
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

/* simhash_ball_sel(internal, oid, internal, integer): <@ and @> restriction */
Datum
simhash_ball_sel(PG_FUNCTION_ARGS)
{
	PlannerInfo *root = (PlannerInfo *) PG_GETARG_POINTER(0);
	List	   *args = (List *) PG_GETARG_POINTER(2);
	int			varRelid = PG_GETARG_INT32(3);
	SimhashOids oids;
	Node	   *a,
			   *b,
			   *k;

	if (!lookup_oids(fcinfo, &oids) ||
		!ball_operator_args(args, &oids, &a, &b, &k))
		PG_RETURN_FLOAT8(Min(1.0, random_within_fraction(SIMHASH_DEFAULT_RADIUS) +
							 DEFAULT_EQ_SEL));
	PG_RETURN_FLOAT8(within_restriction(root, &oids, a, b, k, varRelid));
}

/* simhash_ball_joinsel(internal, oid, internal, smallint, internal) */
Datum
simhash_ball_joinsel(PG_FUNCTION_ARGS)
{
	PlannerInfo *root = (PlannerInfo *) PG_GETARG_POINTER(0);
	List	   *args = (List *) PG_GETARG_POINTER(2);
	SpecialJoinInfo *sjinfo = (SpecialJoinInfo *) PG_GETARG_POINTER(4);
	SimhashOids oids;
	Node	   *a,
			   *b,
			   *k;

	if (!lookup_oids(fcinfo, &oids) ||
		!ball_operator_args(args, &oids, &a, &b, &k))
	{
		/* not decomposable: treat the ball's expression as the other side */
		if (list_length(args) != 2)
			PG_RETURN_FLOAT8(DEFAULT_EQ_SEL);
		PG_RETURN_FLOAT8(within_join(root, linitial(args), lsecond(args),
									 NULL, sjinfo));
	}
	PG_RETURN_FLOAT8(within_join(root, a, b, k, sjinfo));
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
	if (!lookup_oids(fcinfo, &oids) ||
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

/* SupportRequestSelectivity of a within-radius call */
static Selectivity
within_selectivity(FunctionCallInfo fcinfo, SupportRequestSelectivity *req)
{
	SimhashOids oids;
	Node	   *a,
			   *b,
			   *k;

	if (list_length(req->args) != 3 || !lookup_oids(fcinfo, &oids))
		return Min(1.0, random_within_fraction(SIMHASH_DEFAULT_RADIUS) +
				   DEFAULT_EQ_SEL);
	a = linitial(req->args);
	b = lsecond(req->args);
	k = lthird(req->args);
	if (req->is_join)
		return within_join(req->root, a, b, k, req->sjinfo);
	return within_restriction(req->root, &oids, a, b, k, req->varRelid);
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

		req->selectivity = within_selectivity(fcinfo, req);
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

/*--------------------------------------------------------------------------
 * Radius conditions, for the join path (join/scan.c)
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
			!(IsA(strip_relabel(linitial(op->args)), FuncExpr) ||
			  IsA(strip_relabel(lsecond(op->args)), FuncExpr) ||
			  IsA(strip_relabel(linitial(op->args)), Const) ||
			  IsA(strip_relabel(lsecond(op->args)), Const)) ||
			!simhash_lookup_oids(get_func_namespace(get_opcode(op->opno)), &oids) ||
			(op->opno != oids.within_op && op->opno != get_commutator(oids.within_op)))
			return false;
		return ball_operator_args(op->args, &oids, a, b, k);
	}
	return false;
}

/* the radius a condition's k is planned for (planner.h) */
int
simhash_planned_radius(PlannerInfo *root, Node *k, int dflt)
{
	Node	   *v = root ? estimate_expression_value(root, k) : k;

	v = strip_relabel(v);
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
