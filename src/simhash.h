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

/* compute.c: text in the server encoding to the UTF-8 feature hash */
extern uint64 simhash_text_hash(const char *data, int len);

/* compute.c: reject arrays that are not one-dimensional */
extern void simhash_check_array_dims(ArrayType *arr, const char *what);

/* compute.c: allocation callbacks for the pure C code */
extern void *simhash_palloc0_huge(size_t size);
extern void simhash_pfree(void *p);
extern void *simhash_repalloc_huge(void *p, size_t size);

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

/*
 * text_array.c: a text[] result measured before it is allocated (54000
 * when above MaxAllocSize or MaxArraySize): start, count every element,
 * allocate, put every element again in the same order, finish.
 */
typedef struct SimhashTextArray
{
	const char *what;			/* for the error: "simhash_tokens" */
	const char *hint;
	size_t		nitems;
	size_t		bytes;			/* the whole array value */
	ArrayType  *result;
	char	   *cursor;			/* where the next element goes */
	size_t		written;
} SimhashTextArray;

extern void simhash_textarray_start(SimhashTextArray *a, const char *what,
									const char *hint);
extern void simhash_textarray_count(SimhashTextArray *a, const char *utf8,
									size_t len);
extern void simhash_textarray_count_len(SimhashTextArray *a, size_t len);
extern void simhash_textarray_allocate(SimhashTextArray *a);
extern void simhash_textarray_put(SimhashTextArray *a, const char *utf8,
								  size_t len);
extern void simhash_textarray_put_server(SimhashTextArray *a, const char *s,
										 size_t len);
extern ArrayType *simhash_textarray_finish(SimhashTextArray *a);

/*
 * simhash.c: the one check of a search's blocks / max_distance (22023, at
 * most max_tables tables), and a SimhashBlocks checked by it
 */
extern void simhash_check_blocks(int32 blocks, int32 max_distance, int max_tables);
extern void simhash_blocks_init_checked(SimhashBlocks *b, int32 blocks,
										int32 max_distance);

/*
 * Each part's init, called by _PG_init (simhash.c): settings, reloptions,
 * hooks and node methods
 */
extern void simhash_index_init(void);	/* index/handler.c: reloptions */
extern void simhash_dedup_init(void);	/* dedup/read.c: settings */
extern void simhash_join_init(void);	/* join/scan.c: settings, hook */

#endif							/* SIMHASH_H */
