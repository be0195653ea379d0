/*
 * clauses.h
 *		The planner support's lookups of the extension's objects, and its
 *		recognition of radius conditions (clauses.c: also for the join
 *		path, join/path.c, and the index's cost, index/cost.c); the
 *		selectivity of a radius condition (selectivity.c).
 */
#ifndef SIMHASH_CLAUSES_H
#define SIMHASH_CLAUSES_H

#include "postgres.h"
#include "fmgr.h"
#include "nodes/nodes.h"
#include "nodes/pg_list.h"

/* the extension's objects, looked up in its schema */
typedef struct SimhashOids
{
	Oid			hash_type;		/* simhash64 */
	Oid			dist_type;		/* simhash_distance */
	Oid			ball_type;		/* simhash_ball */
	Oid			distance_op;	/* <~> (simhash64, simhash64) */
	Oid			within_op;		/* <@ (simhash64, simhash_ball) */
	Oid			within_func;	/* simhash_within(simhash64, simhash64, bigint) */
	Oid			ball_func;		/* simhash_ball(simhash64, bigint) */
} SimhashOids;

/* the radius assumed when it is not a constant at planning time */
#define SIMHASH_DEFAULT_RADIUS	3

/* Fill *oids from schema nsp; false if an object is missing. */
extern bool simhash_lookup_oids(Oid nsp, SimhashOids *oids);

/* The same from the schema of the function fcinfo calls. */
extern bool simhash_call_oids(FunctionCallInfo fcinfo, SimhashOids *oids);

/* node without its binary-compatible casts; a bigint constant */
extern Node *simhash_strip_relabel(Node *node);
struct Const;
extern struct Const *simhash_int8_const(int64 value);

/*
 * The arguments of `h <@ ball` or `ball @> h` as the (a, b, k) of
 * simhash_within(a, b, k): false if they are not a simhash64 and a
 * simhash_ball constant or simhash_ball(b, k) call.
 */
extern bool simhash_ball_operator_args(List *args, const SimhashOids *oids,
									   Node **a, Node **b, Node **k);

/*
 * True if clause is simhash_within(a, b, k), `a <@ simhash_ball(b, k)` or
 * `simhash_ball(b, k) @> a`, with *a, *b, *k set.
 */
extern bool simhash_radius_condition(Node *clause, Node **a, Node **b, Node **k);

/*
 * The radius expression k (bigint) as the planner sees it, clamped to
 * -1 .. 64: a constant's value, a parameter's estimated value, else dflt.
 * root may be NULL (constants only).
 */
struct PlannerInfo;
extern int	simhash_planned_radius(struct PlannerInfo *root, Node *k, int dflt);

/*
 * The smallest radius of the radius conditions in clauses (a List of
 * RestrictInfo or of clauses), or dflt if none is one.
 */
extern int	simhash_clauses_radius(struct PlannerInfo *root, List *clauses, int dflt);

/* selectivity.c: SupportRequestSelectivity of simhash_within */
struct SupportRequestSelectivity;
extern Selectivity simhash_within_selectivity(FunctionCallInfo fcinfo,
											  struct SupportRequestSelectivity *req);
/* ... and the fraction of rows whose fingerprint expr is not NULL */
extern double simhash_nonnull_fraction(struct PlannerInfo *root, Node *expr);

#endif							/* SIMHASH_CLAUSES_H */
