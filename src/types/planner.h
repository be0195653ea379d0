/*
 * planner.h
 *		The planner support's lookups of the extension's objects, and its
 *		recognition of radius conditions (for the join path, join/scan.c).
 */
#ifndef SIMHASH_PLANNER_H
#define SIMHASH_PLANNER_H

#include "postgres.h"
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

/* Fill *oids from schema nsp; false if an object is missing. */
extern bool simhash_lookup_oids(Oid nsp, SimhashOids *oids);

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

#endif							/* SIMHASH_PLANNER_H */
