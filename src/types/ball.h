/*
 * ball.h
 *		The simhash_ball type: every fingerprint within a radius of a center.
 *		`h <@ ball` is the operator an index answers for `h <~> q <= k`
 *		(see planner.c); an index access method receives a simhash_ball as the
 *		argument of its scan key.
 */
#ifndef SIMHASH_BALL_H
#define SIMHASH_BALL_H

#include "simhash.h"

#include "port/pg_bitutils.h"

/*
 * SimhashBall (simhash.h): fixed length (16 bytes), passed by reference,
 * aligned as double.  The radius is normalised to -1..64: -1 is the empty
 * ball (matches nothing), 64 matches every fingerprint.  The padding is
 * always zero, so equal balls are equal byte for byte.
 */
/* SIMHASH_BALL_EMPTY (-1) and SIMHASH_BALL_MAX_RADIUS (64): input.h */

#define SimhashBallPGetDatum(X)		PointerGetDatum(X)
#define PG_RETURN_SIMHASH_BALL_P(x)	return SimhashBallPGetDatum(x)

/* any integer radius to -1..64, keeping "distance <= radius" exact */
static inline int32
simhash_ball_clamp_radius(int64 radius)
{
	if (radius < 0)
		return SIMHASH_BALL_EMPTY;
	if (radius > SIMHASH_BALL_MAX_RADIUS)
		return SIMHASH_BALL_MAX_RADIUS;
	return (int32) radius;
}

/* h <@ ball: hamming_distance(h, center) <= radius */
static inline bool
simhash_ball_holds(const SimhashBall *ball, simhash64 h)
{
	return (int32) pg_popcount64(ball->center ^ h) <= ball->radius;
}

/* ball.c: a palloc'd ball (radius clamped) */
extern SimhashBall *simhash_ball_new(simhash64 center, int64 radius);

#endif							/* SIMHASH_BALL_H */
