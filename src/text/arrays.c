/*
 * arrays.c
 *		text[] results whose size is known before they are allocated
 *		simhash_tokens, simhash_shingle and minhash_shingles
 *		first measure their output (a pass that allocates nothing per
 *		element), raise 54000 (program_limit_exceeded) when it would not fit
 *		in one allocation (MaxAllocSize, 1 GB) or has more than MaxArraySize
 *		elements, and only then allocate the array once, at its exact size,
 *		and write the elements into it.  Without this they accumulated one
 *		palloc'd text and one Datum per element and could use several GB
 *		before failing.
 *
 * The layout written is the one construct_array() builds for text: a
 * one-dimensional array without NULLs, each element a 4-byte-header
 * varlena aligned to 4 bytes.
 */
#include "simhash.h"

#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "utils/memutils.h"

#include "text/text.h"

/* a UTF-8 element as the database encoding (converted when needed) */
static const char *
server_bytes(const char *utf8, size_t len, size_t *outlen)
{
	const char *s;

	*outlen = len;
	if (GetDatabaseEncoding() == PG_UTF8 || GetDatabaseEncoding() == PG_SQL_ASCII)
		return utf8;
	s = pg_any_to_server(utf8, len, PG_UTF8);
	if (s != utf8)
		*outlen = strlen(s);
	return s;
}

/* element size in the array: header, bytes, alignment */
static inline size_t
element_size(size_t len)
{
	return INTALIGN(VARHDRSZ + len);
}

/* raise 54000: the result would exceed an array's limits */
static void
too_large(const char *what, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("the result of %s would be too large", what),
			 errdetail("An array value cannot exceed %zu bytes or %zu elements.",
					   (size_t) MaxAllocSize, (size_t) MaxArraySize),
			 errhint("%s", hint)));
}

void
simhash_textarray_start(SimhashTextArray *a, const char *what, const char *hint)
{
	memset(a, 0, sizeof(*a));
	a->what = what;
	a->hint = hint;
	a->bytes = ARR_OVERHEAD_NONULLS(1);
}

/* measuring pass: one more element of len UTF-8 bytes */
void
simhash_textarray_count(SimhashTextArray *a, const char *utf8, size_t len)
{
	size_t		slen = len;

	if (GetDatabaseEncoding() != PG_UTF8 && GetDatabaseEncoding() != PG_SQL_ASCII)
	{
		const char *s = server_bytes(utf8, len, &slen);

		if (s != utf8)
			pfree((char *) s);
	}
	simhash_textarray_count_len(a, slen);
}

/* measuring pass, when the element's length is known (database encoding) */
void
simhash_textarray_count_len(SimhashTextArray *a, size_t len)
{
	if (len > MaxAllocSize || a->nitems >= MaxArraySize ||
		a->bytes + element_size(len) > MaxAllocSize)
		too_large(a->what, a->hint);
	a->nitems++;
	a->bytes += element_size(len);
}

/* after the measuring pass: the array, allocated once at its final size */
void
simhash_textarray_allocate(SimhashTextArray *a)
{
	a->result = (ArrayType *) palloc(a->bytes);
	SET_VARSIZE(a->result, a->bytes);
	a->result->ndim = 1;
	a->result->dataoffset = 0;
	a->result->elemtype = TEXTOID;
	ARR_DIMS(a->result)[0] = (int) a->nitems;
	ARR_LBOUND(a->result)[0] = 1;
	/* the header padding: equal arrays must be equal byte for byte */
	memset(ARR_DIMS(a->result) + 2, 0,
		   (char *) ARR_DATA_PTR(a->result) - (char *) (ARR_DIMS(a->result) + 2));
	a->cursor = ARR_DATA_PTR(a->result);
	a->written = 0;
}

/* writing pass: the next element, given in the database encoding */
void
simhash_textarray_put_server(SimhashTextArray *a, const char *s, size_t len)
{
	char	   *end = (char *) a->result + a->bytes;
	size_t		size = element_size(len);

	/* the measuring pass saw the same elements */
	if (a->written >= a->nitems || size > (size_t) (end - a->cursor))
		elog(ERROR, "text array element %zu does not fit its measured size", a->written);
	SET_VARSIZE(a->cursor, VARHDRSZ + len);
	memcpy(a->cursor + VARHDRSZ, s, len);
	memset(a->cursor + VARHDRSZ + len, 0, size - VARHDRSZ - len);
	a->cursor += size;
	a->written++;
}

/* writing pass: the next element, given as UTF-8 */
void
simhash_textarray_put(SimhashTextArray *a, const char *utf8, size_t len)
{
	size_t		slen;
	const char *s = server_bytes(utf8, len, &slen);

	simhash_textarray_put_server(a, s, slen);
	if (s != utf8)
		pfree((char *) s);
}

/* the finished array (an empty one when there are no elements) */
ArrayType *
simhash_textarray_finish(SimhashTextArray *a)
{
	if (a->nitems == 0)
		return construct_empty_array(TEXTOID);
	if (a->written != a->nitems)
		elog(ERROR, "text array has %zu of its %zu elements", a->written, a->nitems);
	return a->result;
}
