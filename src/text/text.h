/*
 * text.h
 *		The text part's helpers that other parts use too (MinHash, sentence
 *		fingerprints): texts as UTF-8 and back (utf8.c), the shingle window
 *		check (compute.c) and text[] results measured before they are
 *		allocated (arrays.c).
 */
#ifndef SIMHASH_TEXT_H
#define SIMHASH_TEXT_H

#include "simhash.h"

/* utf8.c: text in the server encoding to the UTF-8 feature hash */
extern uint64 simhash_text_hash(const char *data, int len);

/*
 * utf8.c: a text as UTF-8 (features are hashed over UTF-8 whatever the
 * database encoding; SQL_ASCII bytes are taken as they are), and UTF-8
 * back to a text in the database encoding
 */
extern void simhash_text_utf8(text *t, const char **data, size_t *len);
extern text *simhash_utf8_text(const char *utf8, size_t len);

/* utf8.c: a text as UTF-8 with a tokenizer buffer */
extern void simhash_text_prepare(text *t, const char **data, size_t *len,
								 char **buf);

/* compute.c: the shingle window, 1 .. SIMHASH_MAX_WINDOW (22023) */
extern void simhash_check_window(int32 window);

/*
 * arrays.c: a text[] result measured before it is allocated (54000
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

#endif							/* SIMHASH_TEXT_H */
