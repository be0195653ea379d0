/*
 * ball.c
 *		The simhash_ball type (a center fingerprint and a radius), its text
 *		and binary I/O, the constructor simhash_ball(center, radius), the
 *		operators `simhash64 <@ simhash_ball`, `simhash_ball @> simhash64` and
 *		`simhash_ball && simhash_ball` (the operator of near-duplicate
 *		exclusion constraints), and simhash_within(a, b, max_distance).  The
 *		planner support that turns `h <~> q <= k` into these lives in
 *		planner.c.
 */
#include "ball.h"

#include "lib/stringinfo.h"
#include "libpq/pqformat.h"

PG_FUNCTION_INFO_V1(simhash_ball_in);
PG_FUNCTION_INFO_V1(simhash_ball_out);
PG_FUNCTION_INFO_V1(simhash_ball_recv);
PG_FUNCTION_INFO_V1(simhash_ball_send);
PG_FUNCTION_INFO_V1(simhash_ball_make);
PG_FUNCTION_INFO_V1(simhash_ball_contained);
PG_FUNCTION_INFO_V1(simhash_ball_contains);
PG_FUNCTION_INFO_V1(simhash_within);
PG_FUNCTION_INFO_V1(simhash_ball_near);

SimhashBall *
simhash_ball_new(simhash64 center, int64 radius)
{
	SimhashBall *ball = (SimhashBall *) palloc0(sizeof(SimhashBall));

	ball->center = center;
	ball->radius = simhash_ball_clamp_radius(radius);
	return ball;
}

/* raise 22P02 for a malformed simhash_ball literal */
static void
ball_syntax_error(const char *str)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			 errmsg("invalid input syntax for type %s: \"%s\"",
					"simhash_ball", str),
			 errhint("A simhash_ball is written as (center,radius): 16 hexadecimal digits and an integer from -1 to 64.")));
}

/*
 * (center,radius): exactly 16 hex digits (either case) and a decimal integer
 * in -1..64 (-1 is the empty ball); see input.c.  Unlike the constructor,
 * input does not clamp the radius: text that reads back as another value
 * would not round-trip.
 */
Datum
simhash_ball_in(PG_FUNCTION_ARGS)
{
	char	   *str = PG_GETARG_CSTRING(0);
	uint64_t	center;
	int32_t		radius;

	switch (simhash_ball_parse(str, &center, &radius))
	{
		case SIMHASH_INPUT_OK:
			break;
		case SIMHASH_INPUT_RANGE:
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("radius of simhash_ball is out of range: \"%s\"", str),
					 errhint("The radius must be between -1 (the empty ball) and 64; the function simhash_ball(center, radius) clamps any radius.")));
			break;
		default:
			ball_syntax_error(str);
	}
	PG_RETURN_SIMHASH_BALL_P(simhash_ball_new(center, radius));
}

Datum
simhash_ball_out(PG_FUNCTION_ARGS)
{
	SimhashBall *ball = PG_GETARG_SIMHASH_BALL_P(0);
	static const char hexdigits[] = "0123456789abcdef";
	char		center[17];
	int			i;

	for (i = 0; i < 16; i++)
		center[i] = hexdigits[(ball->center >> (60 - 4 * i)) & 0xF];
	center[16] = '\0';
	PG_RETURN_CSTRING(psprintf("(%s,%d)", center, ball->radius));
}

/* binary: the center as int8, then the radius as int4, network byte order */
Datum
simhash_ball_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	size_t		pos = buf->cursor;
	uint64_t	center;
	int32_t		radius;
	SimhashInput r = simhash_ball_parse_binary((const uint8_t *) buf->data, buf->len,
											   &pos, &center, &radius);

	simhash_recv_check(r);
	if (r == SIMHASH_INPUT_RANGE)
	{
		/* the radius is the last 4 bytes read */
		size_t		at = pos - 4;
		uint64_t	bad = 0;

		(void) simhash_read_be((const uint8_t *) buf->data, buf->len, &at, 4, &bad);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid radius in external \"%s\" value: %d",
						"simhash_ball", (int32) (uint32) bad)));
	}
	buf->cursor = (int) pos;
	PG_RETURN_SIMHASH_BALL_P(simhash_ball_new(center, radius));
}

Datum
simhash_ball_send(PG_FUNCTION_ARGS)
{
	SimhashBall *ball = PG_GETARG_SIMHASH_BALL_P(0);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendint64(&buf, (int64) ball->center);
	pq_sendint32(&buf, ball->radius);
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/*
 * simhash_ball(center, radius): a negative radius gives the empty ball, one
 * above 64 gives 64, so that h <@ simhash_ball(c, r) is exactly
 * hamming_distance(h, c) <= r for every bigint r.
 */
Datum
simhash_ball_make(PG_FUNCTION_ARGS)
{
	PG_RETURN_SIMHASH_BALL_P(simhash_ball_new(PG_GETARG_SIMHASH64(0),
											  PG_GETARG_INT64(1)));
}

/* simhash64 <@ simhash_ball */
Datum
simhash_ball_contained(PG_FUNCTION_ARGS)
{
	simhash64	h = PG_GETARG_SIMHASH64(0);
	SimhashBall *ball = PG_GETARG_SIMHASH_BALL_P(1);

	PG_RETURN_BOOL(simhash_ball_holds(ball, h));
}

/* simhash_ball @> simhash64 */
Datum
simhash_ball_contains(PG_FUNCTION_ARGS)
{
	SimhashBall *ball = PG_GETARG_SIMHASH_BALL_P(0);
	simhash64	h = PG_GETARG_SIMHASH64(1);

	PG_RETURN_BOOL(simhash_ball_holds(ball, h));
}

/*
 * simhash_within(a, b, max_distance): hamming_distance(a, b) <= max_distance.
 * What the planner rewrites `a <~> b <= k` into (see planner.c); its support
 * function makes it indexable.
 */
Datum
simhash_within(PG_FUNCTION_ARGS)
{
	simhash64	a = PG_GETARG_SIMHASH64(0);
	simhash64	b = PG_GETARG_SIMHASH64(1);
	int64		max_distance = PG_GETARG_INT64(2);

	PG_RETURN_BOOL((int64) pg_popcount64(a ^ b) <= max_distance);
}

/*
 * simhash_ball && simhash_ball: each ball holds the other's center, i.e.
 * hamming_distance(a.center, b.center) <= min(a.radius, b.radius).
 * Commutative, as an exclusion constraint needs; for two balls of the same
 * radius k (a constraint's simhash_ball(h, k)) it is "within k bits".  It
 * is not "the balls share a point", which in Hamming space would be
 * distance <= a.radius + b.radius.  An empty ball is near nothing.
 */
Datum
simhash_ball_near(PG_FUNCTION_ARGS)
{
	SimhashBall *a = PG_GETARG_SIMHASH_BALL_P(0);
	SimhashBall *b = PG_GETARG_SIMHASH_BALL_P(1);

	PG_RETURN_BOOL((int32) pg_popcount64(a->center ^ b->center) <=
				   Min(a->radius, b->radius));
}
