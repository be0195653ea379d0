/*
 * distance.c
 *		Hamming distance between fingerprints: the <~> operator (returning
 *		simhash_distance) and hamming_distance() (returning integer).  The
 *		simhash_distance type itself is int4-like and reuses int4's I/O and
 *		comparison functions (see sql/simhash--1.0.sql).
 */
#include "simhash.h"

#include "port/pg_bitutils.h"

PG_FUNCTION_INFO_V1(simhash64_distance);

Datum
simhash64_distance(PG_FUNCTION_ARGS)
{
	simhash64	a = PG_GETARG_SIMHASH64(0);
	simhash64	b = PG_GETARG_SIMHASH64(1);

	PG_RETURN_SIMHASH_DISTANCE(pg_popcount64(a ^ b));
}
