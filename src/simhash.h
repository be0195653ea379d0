/*
 * simhash.h
 *		Declarations shared by the SQL-callable wrappers (the server side):
 *		the simhash64 Datum conversions and helpers for feature input.
 */
#ifndef SIMHASH_H
#define SIMHASH_H

#include "postgres.h"
#include "fmgr.h"
#include "utils/array.h"

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

/* compute.c: text in the server encoding to the UTF-8 feature hash */
extern uint64 simhash_text_hash(const char *data, int len);

/* compute.c: reject arrays that are not one-dimensional */
extern void simhash_check_array_dims(ArrayType *arr, const char *what);

/* compute.c: allocation callbacks for the pure C code */
extern void *simhash_palloc0_huge(size_t size);
extern void simhash_pfree(void *p);

/*
 * compute.c: a text as UTF-8 (features are hashed over UTF-8 whatever the
 * database encoding; SQL_ASCII bytes are taken as they are), and UTF-8
 * back to a text in the database encoding
 */
extern void simhash_text_utf8(text *t, const char **data, size_t *len);
extern text *simhash_utf8_text(const char *utf8, size_t len);

/* compute.c: window validation, and a text as UTF-8 with a tokenizer buffer */
extern void simhash_check_window(int32 window);
extern void simhash_text_prepare(text *t, const char **data, size_t *len,
								 char **buf);

/* find_all.c: reject an invalid blocks / max_distance pair (22023) */
extern void simhash_check_blocks(int32 blocks, int32 max_distance);

/* join.c: the radius join's settings, hook and node methods (_PG_init) */
extern void simhash_join_init(void);

#endif							/* SIMHASH_H */
