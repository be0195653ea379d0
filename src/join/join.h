/*
 * join.h
 *		The radius join's private declarations, shared by its files:
 *		path.c (paths and costs; the hook and the registration), plan.c
 *		(the CustomScan), exec.c (the executor), spill.c (the kept rows, in
 *		memory or in temporary files), explain.c (EXPLAIN) and settings.c
 *		(the settings and the search's blocks), citus.c (radius joins between
 *		Citus distributed tables, rewritten before Citus plans them).  The design is in
 *		src/join/README.md.
 */
#ifndef SIMHASH_JOIN_H
#define SIMHASH_JOIN_H

#include "simhash.h"

#include "commands/explain.h"
#include "nodes/execnodes.h"
#include "nodes/extensible.h"
#include "storage/buffile.h"
#include "utils/tuplestore.h"

#include "compat.h"
#include "core/blocks.h"

#define JOIN_NAME "SimhashJoin"

/* the radius assumed at planning time when it is not a constant */
#define JOIN_DEFAULT_RADIUS 3

/* the side of a row, in the top bit of its search key */
#define KEY_INNER (UINT64CONST(1) << 63)

/* kept rows are packed into chunks of this size */
#define ROW_ARENA_CHUNK (1024 * 1024)

/* candidates between interrupt checks in the all-pairs case */
#define CROSS_BATCH 4096

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
 * columns among the outer's when the inputs are shared (NIL if not); with
 * them, whether a row paired with itself fails the join quals (1 or 0)
 */
enum
{
	PRIV_JOINTYPE,
	PRIV_OUTER_COLS,
	PRIV_INNER_MAP,
	PRIV_SELF_FAILS,
	NUM_PRIV
};

/*
 * Where a row in a temporary file starts: kept for every ROW_POS_EVERY-th
 * row only; a row between is reached by skipping the rows before it.
 */
typedef struct RowPos
{
	int			fileno;
	off_t		offset;
} RowPos;

#define ROW_POS_EVERY 128

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
	RowPos	   *pos;			/* ... pos[r / ROW_POS_EVERY], then skipping */
	uint64		next_row;		/* the row the file is at after a read */
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

/* settings.c: the settings, and the blocks of the search for radius k */
extern bool simhash_enable_join;
extern void join_define_settings(void);
extern int	join_nblocks(int k);

/* citus.c: the rewrite of radius joins between Citus distributed tables */
extern void join_citus_init(void);

/* plan.c: PlanCustomPath, and the node's scan methods */
extern Plan *join_plan_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
							List *tlist, List *clauses, List *custom_plans);
extern const CustomScanMethods join_scan_methods;

/* exec.c: CreateCustomScanState (the executor's methods) */
extern Node *join_create_state(CustomScan *cscan);

/* spill.c: the kept rows of each side */
extern void join_plan_row_storage(RadiusJoinState *js, CustomScan *cscan);
extern void join_fill_side(RadiusJoinState *js, JoinSide *side, TupleTableSlot *slot);
extern void join_clear_side(RadiusJoinState *js, JoinSide *side);
extern void join_side_spill(RadiusJoinState *js, JoinSide *side);
extern void join_side_keep(RadiusJoinState *js, JoinSide *side, TupleTableSlot *slot);
extern TupleTableSlot *join_side_fetch(RadiusJoinState *js, JoinSide *side, uint64 row);

/* explain.c: ExplainCustomScan */
extern void join_explain(CustomScanState *node, List *ancestors, ExplainState *es);

#endif							/* SIMHASH_JOIN_H */
