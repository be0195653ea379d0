/*
 * text_features.c
 *		SQL-callable feature extraction: simhash_tokens(text),
 *		simhash_shingle(text[], window) and simhash_features(text, window)
 *		(simhash_features_v2(text, width)), the distinct shingles with their
 *		weights that simhash(text, window) (simhash_v2(text, width)) votes
 *		with.
 */
#include "simhash.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "tfweight.h"
#include "tokenizer.h"

PG_FUNCTION_INFO_V1(simhash_tokens);
PG_FUNCTION_INFO_V1(simhash_shingle);
PG_FUNCTION_INFO_V1(simhash_features);
PG_FUNCTION_INFO_V1(simhash_features_v2);

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
								  PointerGetDatum(simhash_utf8_text(buf + start, toklen)),
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

/* one shingle occurrence, for grouping by hash */
typedef struct ShingleSpan
{
	uint64		hash;
	size_t		start;
	size_t		len;
	bool		cjk;			/* all its tokens are "CJK" (v2's weight) */
} ShingleSpan;

static int
span_cmp(const void *a, const void *b)
{
	const ShingleSpan *x = a;
	const ShingleSpan *y = b;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

static int
first_cmp(const void *a, const void *b)
{
	const ShingleSpan *x = a;
	const ShingleSpan *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/*
 * simhash_features[_v2](text, window) RETURNS TABLE (feature text, count
 * integer, weight integer): the distinct shingles (by feature hash) in order
 * of first occurrence, how often each occurs, and its vote weight in
 * simhash (v2 = false) or simhash_v2.
 */
static Datum
features_srf(FunctionCallInfo fcinfo, bool v2)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	text	   *t = PG_GETARG_TEXT_PP(0);
	int32		window = PG_GETARG_INT32(1);
	const char *data;
	size_t		len;
	char	   *buf;
	size_t	   *ring;
	SimhashShingler shingler;
	ShingleSpan *spans;
	size_t		nspans = 0,
				cap = 1024,
				ngroups = 0;
	uint64		batch[1024];
	size_t		where[2 * 1024];
	bool		cjk[1024];
	size_t		n;

	simhash_check_window(window);
	InitMaterializedSRF(fcinfo, 0);
	simhash_text_prepare(t, &data, &len, &buf);
	ring = palloc(sizeof(size_t) * window);
	simhash_shingler_init(&shingler, data, len, buf, window, ring);
	spans = MemoryContextAllocHuge(CurrentMemoryContext, cap * sizeof(ShingleSpan));
	while ((n = simhash_shingler_next_cjk(&shingler, batch, where, cjk, 1024)) > 0)
	{
		if (nspans + n > cap)
		{
			cap *= 2;
			spans = repalloc_huge(spans, cap * sizeof(ShingleSpan));
		}
		for (size_t i = 0; i < n; i++)
		{
			spans[nspans].hash = batch[i];
			spans[nspans].start = where[2 * i];
			spans[nspans].len = where[2 * i + 1];
			spans[nspans].cjk = cjk[i];
			nspans++;
		}
		CHECK_FOR_INTERRUPTS();
	}

	/* group by hash: the first occurrence stands for the group */
	qsort(spans, nspans, sizeof(ShingleSpan), span_cmp);
	for (size_t i = 0; i < nspans;)
	{
		size_t		j = i + 1;

		while (j < nspans && spans[j].hash == spans[i].hash)
			j++;
		spans[ngroups] = spans[i];
		spans[ngroups].hash = j - i;	/* now: the count */
		ngroups++;
		i = j;
	}
	qsort(spans, ngroups, sizeof(ShingleSpan), first_cmp);

	for (size_t i = 0; i < ngroups; i++)
	{
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		values[0] = PointerGetDatum(simhash_utf8_text(buf + spans[i].start, spans[i].len));
		values[1] = Int32GetDatum((int32) spans[i].hash);
		values[2] = Int32GetDatum((int32) (v2 ? simhash_tf_weight_v2(spans[i].hash, spans[i].cjk)
										   : simhash_tf_weight(spans[i].hash)));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	pfree(spans);
	pfree(buf);
	pfree(ring);
	return (Datum) 0;
}

Datum
simhash_features(PG_FUNCTION_ARGS)
{
	return features_srf(fcinfo, false);
}

Datum
simhash_features_v2(PG_FUNCTION_ARGS)
{
	return features_srf(fcinfo, true);
}
