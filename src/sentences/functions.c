/*
 * functions.c
 *		SQL-callable sentence fingerprints: sentence_hashes(text, n,
 *		min_length) RETURNS bigint[].  The algorithm is in sentences.c; this
 *		file validates the parameters, converts the text to UTF-8, keeps the
 *		work space between rows (fn_extra) and builds the array.
 */
#include "simhash.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/memutils.h"

#include "core/sentences.h"
#include "text/text.h"

PG_FUNCTION_INFO_V1(sentence_hashes);

/* a work space larger than this after a row (a huge text) is released */
#define SENTENCE_WORK_KEEP ((size_t) 16 * 1024 * 1024)

/* realloc for sentences.c, in the function's memory context */
static void *
sentence_realloc(void *arg, void *ptr, size_t size)
{
	if (size == 0)
	{
		if (ptr)
			pfree(ptr);
		return NULL;
	}
	if (ptr == NULL)
		return MemoryContextAllocHuge((MemoryContext) arg, size);
	return repalloc_huge(ptr, size);
}

/* the sentence scan and its sorts let the query be cancelled */
static void
sentence_interrupts(void *arg)
{
	CHECK_FOR_INTERRUPTS();
}

/*
 * sentence_hashes(body text, n integer, min_length integer): the XXH3-64
 * hashes of the n longest distinct sentences of at least min_length
 * characters, ascending; an empty array when there is none.
 */
Datum
sentence_hashes(PG_FUNCTION_ARGS)
{
	text	   *t = PG_GETARG_TEXT_PP(0);
	int32		n = PG_GETARG_INT32(1);
	int32		min_length = PG_GETARG_INT32(2);
	SentenceWork *w = (SentenceWork *) fcinfo->flinfo->fn_extra;
	const char *data;
	size_t		len;
	const int64_t *hashes;
	size_t		count;
	ArrayType  *result;

	if (n < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("n must be at least 1, not %d", n),
				 errhint("n is how many of the longest sentences are hashed; 5 is the usual choice.")));
	if (min_length < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("min_length must be at least 1, not %d", min_length),
				 errdetail("Sentences are measured in letters and digits; an empty sentence is never a fingerprint.")));

	simhash_text_utf8(t, &data, &len);

	if (w == NULL)
	{
		w = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, sizeof(SentenceWork));
		sentence_work_init(w, sentence_realloc, fcinfo->flinfo->fn_mcxt);
		sentence_work_set_check(w, sentence_interrupts, NULL);
		fcinfo->flinfo->fn_extra = w;
	}
	count = sentence_hashes_compute(w, data, len, n, min_length, &hashes);

	if (count > MaxArraySize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many sentence fingerprints: %zu", count),
				 errhint("Use a smaller n.")));
	if (count == 0)
		result = construct_empty_array(INT8OID);
	else
	{
		Datum	   *elems = palloc(count * sizeof(Datum));

		for (size_t i = 0; i < count; i++)
			elems[i] = Int64GetDatum(hashes[i]);
		result = construct_array(elems, (int) count, INT8OID, sizeof(int64),
								 FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
		pfree(elems);
	}

	if (sentence_work_size(w) > SENTENCE_WORK_KEEP)
		sentence_work_free(w);
	if (data != VARDATA_ANY(t))
		pfree((char *) data);
	PG_FREE_IF_COPY(t, 0);
	PG_RETURN_ARRAYTYPE_P(result);
}
