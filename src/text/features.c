/*
 * features.c
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

#include "core/tfweight.h"
#include "core/tokenizer.h"
#include "text/text.h"

PG_FUNCTION_INFO_V1(simhash_tokens);
PG_FUNCTION_INFO_V1(simhash_shingle);
PG_FUNCTION_INFO_V1(simhash_features);
PG_FUNCTION_INFO_V1(simhash_features_v2);

/*
 * simhash_tokens(text): the tokens, as text[].  Two passes over the text:
 * the first measures the array (54000 when too large), the second fills it.
 */
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
	SimhashTextArray arr;
	uint64		n = 0;

	simhash_text_prepare(t, &data, &len, &buf);
	simhash_textarray_start(&arr, "simhash_tokens",
							"Tokenize a shorter text, or use simhash(text) for its fingerprint.");
	for (int pass = 0; pass < 2; pass++)
	{
		if (pass == 1)
			simhash_textarray_allocate(&arr);
		simhash_tokenizer_init(&tok, data, len, buf);
		while (simhash_tokenizer_next(&tok, &start, &toklen))
		{
			if (pass == 0)
				simhash_textarray_count(&arr, buf + start, toklen);
			else
				simhash_textarray_put(&arr, buf + start, toklen);
			if ((++n & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
		}
	}
	pfree(buf);
	PG_RETURN_ARRAYTYPE_P(simhash_textarray_finish(&arr));
}

/*
 * simhash_shingle(text[], window): overlapping windows of `window`
 * elements joined by one space; NULL elements are skipped.  Fewer elements
 * than the window (but at least one): one shingle of them all.  The result
 * is measured from the element lengths before it is allocated (54000 when
 * it would exceed 1 GB).
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
	size_t	   *prefix;			/* prefix[i]: bytes of elements before i */
	SimhashTextArray out;

	simhash_check_window(window);
	simhash_check_array_dims(arr, "tokens");
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &nelems);

	/* drop NULLs */
	for (int i = 0; i < nelems; i++)
		if (!nulls[i])
			elems[n++] = elems[i];

	nshingles = (n == 0) ? 0 : (n < window ? 1 : n - window + 1);
	prefix = palloc(sizeof(size_t) * (n + 1));
	prefix[0] = 0;
	for (int i = 0; i < n; i++)
		prefix[i + 1] = prefix[i] + VARSIZE_ANY_EXHDR(DatumGetPointer(elems[i]));

	simhash_textarray_start(&out, "simhash_shingle",
							"Use a smaller window or fewer tokens.");
	for (int pass = 0; pass < 2; pass++)
	{
		if (pass == 1)
			simhash_textarray_allocate(&out);
		for (int s = 0; s < nshingles; s++)
		{
			int			last = Min(s + window, n);
			size_t		total = prefix[last] - prefix[s] + (last - s - 1);

			if (pass == 0)
				simhash_textarray_count_len(&out, total);
			else
			{
				char	   *p = palloc(total);
				char	   *q = p;

				for (int i = s; i < last; i++)
				{
					text	   *e = (text *) DatumGetPointer(elems[i]);

					if (i > s)
						*q++ = ' ';
					memcpy(q, VARDATA_ANY(e), VARSIZE_ANY_EXHDR(e));
					q += VARSIZE_ANY_EXHDR(e);
				}
				simhash_textarray_put_server(&out, p, total);
				pfree(p);
			}
			if ((s & 1023) == 1023)
				CHECK_FOR_INTERRUPTS();
		}
	}
	pfree(prefix);
	PG_RETURN_ARRAYTYPE_P(simhash_textarray_finish(&out));
}

/*
 * The distinct shingles of simhash_features, in order of first occurrence:
 * entries[] grows in that order, and an open-addressing index of entry
 * numbers (+1; 0 is empty) finds a hash's entry.  Memory follows the
 * distinct shingles, not their occurrences.
 */
typedef struct FeatureEntry
{
	uint64		hash;
	uint64		count;
	size_t		start;			/* first occurrence in the normalised text */
	size_t		len;
	bool		cjk;			/* all its tokens are "CJK" (v2's weight) */
} FeatureEntry;

typedef struct FeatureTable
{
	FeatureEntry *entries;
	size_t		nentries;
	size_t	   *index;
	size_t		mask;			/* index capacity - 1 */
} FeatureTable;

/* an empty feature table of cap index slots */
static void
feature_table_init(FeatureTable *t, size_t cap)
{
	t->entries = MemoryContextAllocHuge(CurrentMemoryContext, (cap / 2) * sizeof(FeatureEntry));
	t->nentries = 0;
	t->index = MemoryContextAllocExtended(CurrentMemoryContext, cap * sizeof(size_t),
										  MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	t->mask = cap - 1;
}

/* one occurrence of hash at start, len */
static void
feature_table_add(FeatureTable *t, uint64 hash, size_t start, size_t len, bool cjk)
{
	size_t		slot = (size_t) (hash >> 7) & t->mask;
	FeatureEntry *e;

	while (t->index[slot] != 0)
	{
		e = &t->entries[t->index[slot] - 1];
		if (e->hash == hash)
		{
			e->count++;
			return;
		}
		slot = (slot + 1) & t->mask;
	}
	if (2 * (t->nentries + 1) > t->mask + 1)
	{
		/* double, then insert again */
		FeatureTable bigger;

		feature_table_init(&bigger, 2 * (t->mask + 1));
		memcpy(bigger.entries, t->entries, t->nentries * sizeof(FeatureEntry));
		bigger.nentries = t->nentries;
		for (size_t i = 0; i < t->nentries; i++)
		{
			size_t		s = (size_t) (t->entries[i].hash >> 7) & bigger.mask;

			while (bigger.index[s] != 0)
				s = (s + 1) & bigger.mask;
			bigger.index[s] = i + 1;
		}
		pfree(t->entries);
		pfree(t->index);
		*t = bigger;
		feature_table_add(t, hash, start, len, cjk);
		return;
	}
	e = &t->entries[t->nentries++];
	e->hash = hash;
	e->count = 1;
	e->start = start;
	e->len = len;
	e->cjk = cjk;
	t->index[slot] = t->nentries;
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
	FeatureTable table;
	uint64		batch[1024];
	size_t		where[2 * 1024];
	bool		cjk[1024];
	size_t		n;

	simhash_check_window(window);
	InitMaterializedSRF(fcinfo, 0);
	simhash_text_prepare(t, &data, &len, &buf);
	ring = palloc(sizeof(size_t) * window);
	simhash_shingler_init(&shingler, data, len, buf, window, ring);
	feature_table_init(&table, 1024);
	while ((n = simhash_shingler_next_cjk(&shingler, batch, where, cjk, 1024)) > 0)
	{
		for (size_t i = 0; i < n; i++)
			feature_table_add(&table, batch[i], where[2 * i], where[2 * i + 1], cjk[i]);
		CHECK_FOR_INTERRUPTS();
	}

	for (size_t i = 0; i < table.nentries; i++)
	{
		FeatureEntry *e = &table.entries[i];
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		values[0] = PointerGetDatum(simhash_utf8_text(buf + e->start, e->len));
		values[1] = Int32GetDatum((int32) e->count);
		values[2] = Int32GetDatum((int32) (v2 ? simhash_tf_weight_v2(e->count, e->cjk)
										   : simhash_tf_weight(e->count)));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		if ((i & 1023) == 1023)
			CHECK_FOR_INTERRUPTS();
	}
	pfree(table.entries);
	pfree(table.index);
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
