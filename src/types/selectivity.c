/*
 * selectivity.c
 *		How many rows a radius condition returns: the selectivity of
 *		simhash_within (its support function's SupportRequestSelectivity)
 *		and of the `<@` / `@>` operators (simhash_ball_sel,
 *		simhash_ball_joinsel).
 *
 * The two share one estimate.  For uniformly random 64-bit fingerprints, P(distance <= r) = sum_{i<=r}
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
 */
#include "ball.h"
#include "clauses.h"

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

PG_FUNCTION_INFO_V1(simhash_ball_sel);
PG_FUNCTION_INFO_V1(simhash_ball_joinsel);

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

/*
 * The radius expression k (NULL: none given), as the planner estimates it,
 * to -1..64 in *radius; false when it is NULL (no row is within it).
 */
static bool
estimated_radius(PlannerInfo *root, Node *k, int *radius)
{
	Node	   *est = k ? estimate_expression_value(root, k) : NULL;

	*radius = SIMHASH_DEFAULT_RADIUS;
	if (est && IsA(est, Const))
	{
		Const	   *c = (Const *) est;

		if (c->constisnull)
		{
			*radius = SIMHASH_BALL_EMPTY;
			return false;
		}
		if (c->consttype == INT8OID)
			*radius = simhash_ball_clamp_radius(DatumGetInt64(c->constvalue));
	}
	return true;
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
 * The fraction of its relation's rows in which the fingerprint expression
 * expr is not NULL, by the statistics (1 without): the pairs of a row with
 * itself in a self-join (the radius join's cost).
 */
double
simhash_nonnull_fraction(PlannerInfo *root, Node *expr)
{
	VariableStatData vardata;
	double		nonnull;

	examine_variable(root, expr, 0, &vardata);
	nonnull = 1.0 - null_fraction(&vardata);
	ReleaseVariableStats(vardata);
	return nonnull;
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
	int			radius;
	Selectivity selec;

	if (!estimated_radius(root, k, &radius))
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
	int			radius;
	Selectivity selec;

	if (!estimated_radius(root, k, &radius))
		return 0.0;

	get_join_variables(root, list_make2(a, b), sjinfo,
					   &vardata1, &vardata2, &reversed);
	selec = join_selectivity(&vardata1, &vardata2, radius);
	ReleaseVariableStats(vardata1);
	ReleaseVariableStats(vardata2);
	return selec;
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

	if (!simhash_call_oids(fcinfo, &oids) ||
		!simhash_ball_operator_args(args, &oids, &a, &b, &k))
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

	if (!simhash_call_oids(fcinfo, &oids) ||
		!simhash_ball_operator_args(args, &oids, &a, &b, &k))
	{
		/* not decomposable: treat the ball's expression as the other side */
		if (list_length(args) != 2)
			PG_RETURN_FLOAT8(DEFAULT_EQ_SEL);
		PG_RETURN_FLOAT8(within_join(root, linitial(args), lsecond(args),
									 NULL, sjinfo));
	}
	PG_RETURN_FLOAT8(within_join(root, a, b, k, sjinfo));
}

/* SupportRequestSelectivity of a within-radius call */
Selectivity
simhash_within_selectivity(FunctionCallInfo fcinfo, SupportRequestSelectivity *req)
{
	SimhashOids oids;
	Node	   *a,
			   *b,
			   *k;

	if (list_length(req->args) != 3 || !simhash_call_oids(fcinfo, &oids))
		return Min(1.0, random_within_fraction(SIMHASH_DEFAULT_RADIUS) +
				   DEFAULT_EQ_SEL);
	a = linitial(req->args);
	b = lsecond(req->args);
	k = lthird(req->args);
	if (req->is_join)
		return within_join(req->root, a, b, k, req->sjinfo);
	return within_restriction(req->root, &oids, a, b, k, req->varRelid);
}
