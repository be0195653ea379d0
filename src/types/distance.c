/*
 * distance.c
 *		Hamming distance between fingerprints: the <~> operator (returning
 *		simhash_distance) and hamming_distance() (returning integer); and
 *		the simhash_distance type's input functions and cast from integer,
 *		which enforce its domain 0..64 (from 1.1; 1.0 used int4in, int4recv
 *		and a binary-coercible cast, which accepted any integer).  Output
 *		and comparisons reuse int4's functions (see sql/distance_grid.sh).
 */
#include "simhash.h"

#include "lib/stringinfo.h"
#include "port/pg_bitutils.h"

PG_FUNCTION_INFO_V1(simhash64_distance);
PG_FUNCTION_INFO_V1(simhash_distance_in);
PG_FUNCTION_INFO_V1(simhash_distance_recv);
PG_FUNCTION_INFO_V1(simhash_distance_from_int4);

Datum
simhash64_distance(PG_FUNCTION_ARGS)
{
	simhash64	a = PG_GETARG_SIMHASH64(0);
	simhash64	b = PG_GETARG_SIMHASH64(1);

	PG_RETURN_SIMHASH_DISTANCE(pg_popcount64(a ^ b));
}

/* raise 22003 for a simhash_distance outside 0 .. 64 */
static void
distance_out_of_range(const char *value)
{
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("value \"%s\" is out of range for type %s", value, "simhash_distance"),
			 errdetail("A simhash_distance is a number of differing bits, from 0 to %d.",
					   SIMHASH_DISTANCE_MAX)));
}

/* an integer as int4in reads it, in 0..64 */
Datum
simhash_distance_in(PG_FUNCTION_ARGS)
{
	char	   *str = PG_GETARG_CSTRING(0);
	int32_t		value = 0;

	switch (simhash_distance_parse(str, &value))
	{
		case SIMHASH_INPUT_OK:
			break;
		case SIMHASH_INPUT_RANGE:
			distance_out_of_range(str);
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					 errmsg("invalid input syntax for type %s: \"%s\"",
							"simhash_distance", str)));
	}
	PG_RETURN_SIMHASH_DISTANCE(value);
}

/* binary: int4, network byte order, in 0..64 */
Datum
simhash_distance_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	size_t		pos = buf->cursor;
	int32_t		value = 0;
	SimhashInput r = simhash_distance_parse_binary((const uint8_t *) buf->data,
												   buf->len, &pos, &value);

	simhash_recv_check(r);
	if (r == SIMHASH_INPUT_RANGE)
	{
		size_t		at = buf->cursor;
		uint64_t	bad = 0;

		(void) simhash_read_be((const uint8_t *) buf->data, buf->len, &at, 4, &bad);
		distance_out_of_range(psprintf("%d", (int32) (uint32) bad));
	}
	buf->cursor = (int) pos;
	PG_RETURN_SIMHASH_DISTANCE(value);
}

/* the cast integer -> simhash_distance (assignment), in 0..64 */
Datum
simhash_distance_from_int4(PG_FUNCTION_ARGS)
{
	int32		value = PG_GETARG_INT32(0);

	if (!simhash_distance_valid(value))
		distance_out_of_range(psprintf("%d", value));
	PG_RETURN_SIMHASH_DISTANCE(value);
}
