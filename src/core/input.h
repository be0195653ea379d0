/*
 * input.h
 *		Parsing of the text and binary input forms of simhash64,
 *		simhash_distance and simhash_ball.  Pure C: no PostgreSQL headers, so
 *		that test/fuzz can fuzz exactly what the input functions run; the
 *		SQL wrappers (type.c, distance.c, ball.c) only turn the results into
 *		values or errors.  (minhash_signature's are in minhash.h.)
 */
#ifndef SIMHASH_INPUT_H
#define SIMHASH_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum SimhashInput
{
	SIMHASH_INPUT_OK = 0,
	SIMHASH_INPUT_SYNTAX,		/* 22P02 */
	SIMHASH_INPUT_RANGE,		/* 22003 */
	SIMHASH_INPUT_SHORT			/* binary: the message ends too early */
} SimhashInput;

/* the documented domains */
#define SIMHASH_DISTANCE_MAX 64
#define SIMHASH_BALL_EMPTY		(-1)
#define SIMHASH_BALL_MAX_RADIUS	64

/* ASCII whitespace and hex digits, for the text input functions */
static inline bool
simhash_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static inline int
simhash_hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static inline bool
simhash_distance_valid(int64_t d)
{
	return d >= 0 && d <= SIMHASH_DISTANCE_MAX;
}

/* 16 hex digits, either case, optional 0x, surrounding whitespace */
extern SimhashInput simhash64_parse(const char *str, uint64_t *value);

/*
 * An unsigned decimal integer as numeric_out prints one: digits, then
 * optionally a point and zeros ("5.000" is 5); SYNTAX for anything else
 * (NaN, Infinity, a fraction, a sign other than "-0"), RANGE for a negative
 * value or one above 2^64-1.  The numeric -> simhash64 cast.
 */
extern SimhashInput simhash64_parse_decimal(const char *str, uint64_t *value);

/*
 * An integer as int4in reads it (whitespace, sign, decimal digits,
 * whitespace): SYNTAX when it is not one, RANGE when it is outside 0..64.
 */
extern SimhashInput simhash_distance_parse(const char *str, int32_t *value);

/* (center,radius): 16 hex digits and an integer in -1..64 */
extern SimhashInput simhash_ball_parse(const char *str, uint64_t *center,
									   int32_t *radius);

/*
 * Binary forms (network byte order) read from buf[*pos .. len), advancing
 * *pos: simhash64 is 8 bytes, simhash_distance 4 (RANGE outside 0..64),
 * simhash_ball 8 + 4 (RANGE outside -1..64).
 */
extern SimhashInput simhash64_parse_binary(const uint8_t *buf, size_t len,
										   size_t *pos, uint64_t *value);
extern SimhashInput simhash_distance_parse_binary(const uint8_t *buf, size_t len,
												  size_t *pos, int32_t *value);
extern SimhashInput simhash_ball_parse_binary(const uint8_t *buf, size_t len,
											  size_t *pos, uint64_t *center,
											  int32_t *radius);

/* big-endian integers of n <= 8 bytes; SHORT when fewer remain */
extern SimhashInput simhash_read_be(const uint8_t *buf, size_t len, size_t *pos,
									int n, uint64_t *value);

#endif							/* SIMHASH_INPUT_H */
