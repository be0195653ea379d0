/*
 * ball_keys.c
 *		Indexes on simhash_ball keys, the indexes of near-duplicate exclusion
 *		constraints, EXCLUDE USING simhash (simhash_ball(h, k) WITH &&)
 *		(design: README.md, "Near-duplicate exclusion constraints"): the
 *		fingerprint such an index stores for a key (its center) and the
 *		range of radii it takes, checked where the constraint is declared
 *		and for every key stored.
 */
#include "postgres.h"

#include "nodes/primnodes.h"
#include "catalog/pg_type_d.h"
#include "utils/rel.h"

#include "am.h"
#include "simhash.h"

/*
 * Does the index store simhash_ball keys (operator class simhash_ball_ops)
 * rather than simhash64 ones (simhash_ops)?  The two are told apart by the
 * key's representation: simhash64 is 8 bytes by value, simhash_ball 16 by
 * reference.
 */
bool
simhash_keys_are_balls(Relation index)
{
	Form_pg_attribute att = TupleDescAttr(RelationGetDescr(index), 0);

	return !att->attbyval && att->attlen == (int16) sizeof(SimhashBall);
}

/* Refuse a radius the index does not take (22023). */
static void
check_radius(Relation index, int64 radius)
{
	if (radius < 0 || radius > SIMHASH_BALL_KEY_MAX_RADIUS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("radius %lld is out of range for the simhash index \"%s\"",
						(long long) radius, RelationGetRelationName(index)),
				 errdetail("An index on simhash_ball keys (a near-duplicate exclusion constraint) takes radii from 0 to %d.",
						   SIMHASH_BALL_KEY_MAX_RADIUS)));
}

/*
 * The fingerprint the index stores for a non-NULL key: the value of a
 * simhash64 key, the center of a simhash_ball key, whose radius must be in
 * 0 .. SIMHASH_BALL_KEY_MAX_RADIUS.  Scans of simhash_ball keys rely on that
 * bound (scan.c), and a ball that holds nothing (radius -1) or everything
 * is a mistake in a constraint.
 */
uint64
simhash_key_hash(Relation index, Datum value)
{
	SimhashBall *ball;

	if (!simhash_keys_are_balls(index))
		return (uint64) DatumGetSimhash64(value);
	ball = DatumGetSimhashBallP(value);
	check_radius(index, ball->radius);
	return (uint64) ball->center;
}

/*
 * At CREATE INDEX (and so where a constraint is declared, even on an empty
 * table): if the key is a call with a constant radius, simhash_ball(h, k),
 * refuse a k out of range now rather than at the first row.  The relcache
 * hands the expression over with its constants folded.
 */
void
simhash_check_declared_radius(Relation index)
{
	List	   *exprs;
	Node	   *expr;
	FuncExpr   *call;
	Const	   *k;

	if (!simhash_keys_are_balls(index) || index->rd_index->indkey.values[0] != 0)
		return;
	exprs = RelationGetIndexExpressions(index);
	if (exprs == NIL)
		return;
	expr = (Node *) linitial(exprs);
	if (!IsA(expr, FuncExpr))
		return;
	call = (FuncExpr *) expr;
	if (call->funcresulttype != TupleDescAttr(RelationGetDescr(index), 0)->atttypid ||
		list_length(call->args) != 2 || !IsA(lsecond(call->args), Const))
		return;
	k = (Const *) lsecond(call->args);
	if (k->consttype != INT8OID || k->constisnull)
		return;
	check_radius(index, DatumGetInt64(k->constvalue));
}
