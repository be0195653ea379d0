/*
 * simhash.h
 *		Declarations shared by every part of the server side: the simhash64
 *		and simhash_ball Datum conversions, the argument checks of
 *		shared/checks.c and the parts' init functions.  Text helpers:
 *		text/text.h.
 */
#ifndef SIMHASH_H
#define SIMHASH_H

#include "postgres.h"
#include "fmgr.h"
#include "utils/array.h"

#include "core/blocks.h"
#include "core/input.h"

/* simhash64 is an unsigned 64-bit value stored like int8, passed by value */
typedef uint64 simhash64;

#define DatumGetSimhash64(X)	((simhash64) DatumGetInt64(X))
#define Simhash64GetDatum(X)	Int64GetDatum((int64) (X))
#define PG_GETARG_SIMHASH64(n)	DatumGetSimhash64(PG_GETARG_DATUM(n))
#define PG_RETURN_SIMHASH64(x)	return Simhash64GetDatum(x)

/* simhash_distance is an int4-like value: the Hamming distance 0..64 */
#define PG_RETURN_SIMHASH_DISTANCE(x)	PG_RETURN_INT32(x)

/*
 * simhash_ball: the query of the index operator simhash64 <@ simhash_ball,
 * "within radius bits of center" (pass by reference, 16 bytes).  A negative
 * radius matches nothing.
 */
typedef struct SimhashBall
{
	uint64		center;
	int32		radius;
	int32		pad;			/* zero */
} SimhashBall;

#define DatumGetSimhashBallP(X)		((SimhashBall *) DatumGetPointer(X))
#define PG_GETARG_SIMHASH_BALL_P(n)	DatumGetSimhashBallP(PG_GETARG_DATUM(n))

/* type.c: 08P01 for a binary input that ends too early */
extern void simhash_recv_check(SimhashInput r);

/* shared/checks.c: reject arrays that are not one-dimensional (2202E) */
extern void simhash_check_array_dims(ArrayType *arr, const char *what);
extern void simhash_array_hashes(ArrayType *arr, uint64 (*hash) (Datum),
								 void (*sink) (void *arg, const uint64 *hashes, size_t n),
								 void *arg);

/*
 * shared/checks.c: the one check of a search's blocks / max_distance (22023, at
 * most max_tables tables), and a SimhashBlocks checked by it
 */
extern void simhash_check_blocks(int32 blocks, int32 max_distance, int max_tables);
extern void simhash_blocks_init_checked(SimhashBlocks *b, int32 blocks,
										int32 max_distance);

/*
 * Each part's init, called by _PG_init (module.c): settings, reloptions,
 * hooks and node methods
 */
extern void simhash_index_init(void);	/* index/handler.c: reloptions */
extern void simhash_join_init(void);	/* join/scan.c: settings, hook */
extern void simhash_test_hold_init(void);	/* shared/test_hold.c: setting */

/* shared/test_hold.c: a parallel worker's hold point for tests (first in its entry) */
extern void simhash_test_hold_point(void);

/* progress.c: a long job's counters, for the view simhash_progress */
typedef enum SimhashJob
{
	SIMHASH_JOB_PAIRS = 1,
	SIMHASH_JOB_GROUPS
} SimhashJob;

typedef enum SimhashPhase
{
	SIMHASH_PHASE_READING = 1,
	SIMHASH_PHASE_SEARCHING,
	SIMHASH_PHASE_GROUPING
} SimhashPhase;

extern void simhash_progress_begin(SimhashJob job, Oid relid);
extern void simhash_progress_phase(SimhashPhase phase);
extern void simhash_progress_rows(int64 done, int64 total);
extern void simhash_progress_pairs(int64 pairs);
extern void simhash_progress_add_pairs(int64 more);
extern void simhash_progress_end(void);

/*
 * test_hold.c: a job's or an index build's hold point for tests, where it
 * enters a phase (the job's SimhashPhase; an index build's subphase number)
 */
extern void simhash_test_hold_phase(int phase);

#endif							/* SIMHASH_H */
