/*
 * text_features.c
 *		SQL-callable feature extraction: simhash_tokens(text) and
 *		simhash_shingle(text[], window).  simhash(text, window) equals
 *		simhash_compute(simhash_shingle(simhash_tokens(t), window)).
 */
#include "simhash.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "mb/pg_wchar.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "tokenizer.h"

PG_FUNCTION_INFO_V1(simhash_tokens);
PG_FUNCTION_INFO_V1(simhash_shingle);

/* A UTF-8 token as a text in the server encoding. */
static text *
token_to_text(const char *utf8, size_t len)
{
	int			enc = GetDatabaseEncoding();
	char	   *s;
	text	   *result;

	if (enc == PG_UTF8 || enc == PG_SQL_ASCII)
		return cstring_to_text_with_len(utf8, len);
	s = pg_any_to_server(utf8, len, PG_UTF8);
	result = cstring_to_text_with_len(s, strlen(s));
	if (s != utf8)
		pfree(s);
	return result;
}

Datum
simhash_tokens(PG_FUNCTION_ARGS)
{
	text	   *t = PG_GETARG_TEXT_PP(0);
	const char *data;
	size_t		len;
	char	   *buf;
	SimhashTokenizer tok;
	size_t		start,
				toklen;
	ArrayBuildState *astate = initArrayResult(TEXTOID, CurrentMemoryContext, false);
	uint64		n = 0;

	simhash_text_prepare(t, &data, &len, &buf);
	simhash_tokenizer_init(&tok, data, len, buf);
	while (simhash_tokenizer_next(&tok, &start, &toklen))
	{
		astate = accumArrayResult(astate,
								  PointerGetDatum(token_to_text(buf + start, toklen)),
								  false, TEXTOID, CurrentMemoryContext);
		if ((++n & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	pfree(buf);
	PG_RETURN_DATUM(makeArrayResult(astate, CurrentMemoryContext));
}

/*
 * simhash_shingle(text[], window): overlapping windows of `window`
 * elements joined by one space; NULL elements are skipped.  Fewer elements
 * than the window (but at least one): one shingle of them all.
 */
Datum
simhash_shingle(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	int32		window = PG_GETARG_INT32(1);
	Datum	   *elems;
	bool	   *nulls;
	int			nelems,
				n = 0,
				nshingles;
	Datum	   *shingles;

	simhash_check_window(window);
	simhash_check_array_dims(arr, "tokens");
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &nelems);

	/* drop NULLs */
	for (int i = 0; i < nelems; i++)
		if (!nulls[i])
			elems[n++] = elems[i];

	nshingles = (n == 0) ? 0 : (n < window ? 1 : n - window + 1);
	shingles = palloc(sizeof(Datum) * Max(nshingles, 1));
	for (int s = 0; s < nshingles; s++)
	{
		int			last = Min(s + window, n);
		size_t		total = 0;
		text	   *result;
		char	   *p;

		for (int i = s; i < last; i++)
			total += VARSIZE_ANY_EXHDR(DatumGetPointer(elems[i])) + 1;
		total--;				/* no space after the last one */
		if (total > MaxAllocSize - VARHDRSZ)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("shingle too long")));
		result = palloc(VARHDRSZ + total);
		SET_VARSIZE(result, VARHDRSZ + total);
		p = VARDATA(result);
		for (int i = s; i < last; i++)
		{
			text	   *e = (text *) DatumGetPointer(elems[i]);

			if (i > s)
				*p++ = ' ';
			memcpy(p, VARDATA_ANY(e), VARSIZE_ANY_EXHDR(e));
			p += VARSIZE_ANY_EXHDR(e);
		}
		shingles[s] = PointerGetDatum(result);
		if ((s & 1023) == 1023)
			CHECK_FOR_INTERRUPTS();
	}
	PG_RETURN_ARRAYTYPE_P(construct_array(shingles, nshingles, TEXTOID, -1,
										  false, TYPALIGN_INT));
}
