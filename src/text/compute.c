/*
 * compute.c
 *		SQL-callable fingerprint functions: simhash_compute() over text[],
 *		text[] with real[] weights and bigint[] (pre-hashed features),
 *		simhash_hash(), simhash(text, window), simhash_v2(text, width) and
 *		simhash(tsvector).  The algorithms themselves are in core/vote.c,
 *		core/tokenizer.c and core/tfweight.c; texts become UTF-8 in utf8.c.
 */
#include "simhash.h"

#include "miscadmin.h"
#include "tsearch/ts_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "core/tfweight.h"
#include "core/tokenizer.h"
#include "core/vote.h"
#include "text/text.h"

PG_FUNCTION_INFO_V1(simhash_compute_text);
PG_FUNCTION_INFO_V1(simhash_compute_text_weighted);
PG_FUNCTION_INFO_V1(simhash_compute_hashes);
PG_FUNCTION_INFO_V1(simhash_hash);
PG_FUNCTION_INFO_V1(simhash_text);
PG_FUNCTION_INFO_V1(simhash_text_v2);
PG_FUNCTION_INFO_V1(simhash_tsvector);

#define BATCH 1024

/* the feature hash of a text Datum */
static inline uint64
text_datum_hash(Datum d)
{
	text	   *t = (text *) DatumGetPointer(d);

	return simhash_text_hash(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
}

/* the feature hash of a bigint Datum (already a hash) */
static uint64
bigint_datum_hash(Datum d)
{
	return (uint64) DatumGetInt64(d);
}

/* simhash_array_hashes()'s sink: add a batch of hashes to the vote */
static void
vote_sink(void *arg, const uint64 *hashes, size_t n)
{
	simhash_vote_add((SimhashVote *) arg, hashes, n);
}

/* simhash_compute(text[]): unweighted vote over the elements' hashes */
Datum
simhash_compute_text(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	SimhashVote vote;

	simhash_check_array_dims(arr, "features");
	simhash_vote_init(&vote);
	simhash_array_hashes(arr, text_datum_hash, vote_sink, &vote);
	PG_RETURN_SIMHASH64(simhash_vote_result(&vote));
}

/* reject a weight that is not finite or out of range (22023) */
static void
check_weight(float4 w, int position)
{
	if (!simhash_weight_valid(w))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid weight %g for feature %d", (double) w, position),
				 errdetail("Weights must be finite and between 0 and %.0f.",
						   SIMHASH_MAX_WEIGHT)));
}

/* raise 22003 when the total weight overflowed */
static void
check_overflow(const SimhashWeightedVote *vote)
{
	if (simhash_wvote_overflowed(vote))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("total feature weight is too large")));
}

/* simhash_compute(text[], real[]): weighted vote */
Datum
simhash_compute_text_weighted(PG_FUNCTION_ARGS)
{
	ArrayType  *features = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *weights = PG_GETARG_ARRAYTYPE_P(1);
	ArrayIterator fit,
				wit;
	Datum		f,
				w;
	bool		fnull,
				wnull;
	int			nf,
				nw,
				position = 0;
	SimhashWeightedVote *vote;

	simhash_check_array_dims(features, "features");
	simhash_check_array_dims(weights, "weights");
	nf = ArrayGetNItems(ARR_NDIM(features), ARR_DIMS(features));
	nw = ArrayGetNItems(ARR_NDIM(weights), ARR_DIMS(weights));
	if (nf != nw)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("features and weights must have the same length"),
				 errdetail("There are %d features and %d weights.", nf, nw)));

	vote = palloc(sizeof(SimhashWeightedVote));
	simhash_wvote_init(vote);
	fit = array_create_iterator(features, 0, NULL);
	wit = array_create_iterator(weights, 0, NULL);
	while (array_iterate(fit, &f, &fnull) && array_iterate(wit, &w, &wnull))
	{
		position++;
		if (fnull || wnull)
			continue;
		check_weight(DatumGetFloat4(w), position);
		simhash_wvote_add(vote, text_datum_hash(f),
						  simhash_weight_quantise(DatumGetFloat4(w)));
		if ((position & (BATCH - 1)) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	array_free_iterator(fit);
	array_free_iterator(wit);
	check_overflow(vote);
	PG_RETURN_SIMHASH64(simhash_wvote_result(vote));
}

/* simhash_compute(bigint[]): the features are already hashed */
Datum
simhash_compute_hashes(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	SimhashVote vote;

	simhash_check_array_dims(arr, "hashes");
	simhash_vote_init(&vote);
	if (!ARR_HASNULL(arr))
	{
		const uint64 *h = (const uint64 *) ARR_DATA_PTR(arr);
		size_t		n = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));

		while (n > 0)
		{
			size_t		chunk = Min(n, (size_t) 65536);

			simhash_vote_add(&vote, h, chunk);
			h += chunk;
			n -= chunk;
			CHECK_FOR_INTERRUPTS();
		}
	}
	else
		simhash_array_hashes(arr, bigint_datum_hash, vote_sink, &vote);
	PG_RETURN_SIMHASH64(simhash_vote_result(&vote));
}

/* simhash_hash(text): the feature hash, as a signed bigint */
Datum
simhash_hash(PG_FUNCTION_ARGS)
{
	text	   *t = PG_GETARG_TEXT_PP(0);

	PG_RETURN_INT64((int64) simhash_text_hash(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t)));
}

/* the shingle window of simhash(text, window) and the feature functions */
void
simhash_check_window(int32 window)
{
	if (window < 1 || window > SIMHASH_MAX_WINDOW)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("shingle window must be between 1 and %d, not %d",
						SIMHASH_MAX_WINDOW, window)));
}

/* zeroed "huge" memory for the feature counts (pure C callback) */
static void *
simhash_palloc0_huge(size_t size)
{
	return MemoryContextAllocExtended(CurrentMemoryContext, size,
									  MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
}

/* pfree for the pure C code */
static void
simhash_pfree(void *p)
{
	pfree(p);
}

/* repalloc for the pure C code ("huge": one window of tokens may be long) */
static void *
simhash_repalloc_huge(void *p, size_t size)
{
	return repalloc_huge(p, size);
}

/*
 * What simhash(text) keeps between rows of one query (fn_extra): the work
 * buffer and the counting table, so that each row neither allocates nor
 * zeroes them again (the table is emptied slot by slot).  Both are bounded
 * by what the text holds, not by its length: the shingler streams through
 * a buffer of TEXT_STREAM_BUF bytes (more only for a very long window of
 * tokens), and the table starts small and doubles with the distinct
 * features (a 300 MB text of two words needs kilobytes).
 */
typedef struct TextState
{
	char	   *buf;
	size_t		bufsize;
	SimhashFeatureCounts counts;
	bool		have_counts;
} TextState;

/* a table much larger than a typical document is not kept */
#define TEXT_STATE_MAX_SLOTS ((size_t) 1 << 20)

/*
 * The work buffer of the streaming shingler: texts up to about half of it
 * are tokenized in one chunk, longer ones in chunks, so memory does not
 * follow the text's length (only the longest window of tokens).
 */
#define TEXT_STREAM_BUF ((size_t) 1 << 20)

/*
 * simhash(text, window) and simhash_v2(text, width): tokens -> shingles ->
 * each distinct shingle votes once with its weight for n occurrences
 * (tfweight.h: bitlen(n^2), and in v2 min(n, 8) for shingles of "CJK"
 * tokens).  Equals simhash_compute(features, weights) over
 * simhash_features[_v2](text, window).  *found is false when the text has
 * no features (the fingerprint is then 0).
 */
static uint64
text_fingerprint(FunctionCallInfo fcinfo, bool v2, bool *found)
{
	text	   *t = PG_GETARG_TEXT_PP(0);
	int32		window = PG_GETARG_INT32(1);
	TextState  *st = (TextState *) fcinfo->flinfo->fn_extra;
	const char *data;
	size_t		len;
	size_t		ring[SIMHASH_MAX_WINDOW];
	SimhashShingler shingler;
	uint64		batch[BATCH];
	bool		cjk[BATCH];
	uint64		result;
	size_t		n;
	MemoryContext oldcxt;

	simhash_check_window(window);
	simhash_text_utf8(t, &data, &len);

	oldcxt = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	if (st == NULL)
	{
		st = palloc0(sizeof(TextState));
		fcinfo->flinfo->fn_extra = st;
	}
	if (st->bufsize < Min(simhash_tokenizer_bufsize(len), TEXT_STREAM_BUF))
	{
		if (st->buf)
			pfree(st->buf);
		st->bufsize = Max(Min(simhash_tokenizer_bufsize(len), TEXT_STREAM_BUF), 16384);
		st->buf = MemoryContextAllocHuge(fcinfo->flinfo->fn_mcxt, st->bufsize);
	}
	if (!st->have_counts)
	{
		/* sized for a typical document; grows with the distinct features */
		simhash_counts_init(&st->counts, 512, simhash_palloc0_huge, simhash_pfree);
		st->have_counts = true;
	}

	simhash_shingler_init_stream(&shingler, data, len, st->buf, st->bufsize,
								 window, ring, simhash_repalloc_huge);
	if (v2)
	{
		while ((n = simhash_shingler_next_cjk(&shingler, batch, NULL, cjk, BATCH)) > 0)
		{
			simhash_counts_add_cjk(&st->counts, batch, cjk, n);
			CHECK_FOR_INTERRUPTS();
		}
		result = simhash_counts_fingerprint_v2(&st->counts);
	}
	else
	{
		while ((n = simhash_shingler_next(&shingler, batch, NULL, BATCH)) > 0)
		{
			simhash_counts_add(&st->counts, batch, n);
			CHECK_FOR_INTERRUPTS();
		}
		result = simhash_counts_fingerprint(&st->counts);
	}
	*found = simhash_counts_distinct(&st->counts) > 0;
	/* the buffer grows (repalloc) when one window of tokens is very long */
	st->buf = shingler.tok.out;
	st->bufsize = shingler.outsize;

	/* keep the table for the next row, unless a huge text grew it */
	if (st->counts.mask + 1 > TEXT_STATE_MAX_SLOTS)
	{
		simhash_counts_free(&st->counts);
		st->have_counts = false;
	}
	else
		simhash_counts_reset(&st->counts);
	if (st->bufsize > 64 * 1024 * 1024)
	{
		pfree(st->buf);
		st->buf = NULL;
		st->bufsize = 0;
	}
	MemoryContextSwitchTo(oldcxt);
	return result;
}

/* simhash(text, window): frozen in 1.0; no features gives 0 */
Datum
simhash_text(PG_FUNCTION_ARGS)
{
	bool		found;

	PG_RETURN_SIMHASH64(text_fingerprint(fcinfo, false, &found));
}

/* simhash_v2(text, width): CJK weighting; no features gives NULL */
Datum
simhash_text_v2(PG_FUNCTION_ARGS)
{
	bool		found;
	uint64		result = text_fingerprint(fcinfo, true, &found);

	if (!found)
		PG_RETURN_NULL();
	PG_RETURN_SIMHASH64(result);
}

/*
 * simhash(tsvector): each lexeme votes with its number of positions (1 for
 * a stripped tsvector).  Equals simhash_compute(lexemes, counts).
 */
Datum
simhash_tsvector(PG_FUNCTION_ARGS)
{
	TSVector	tsv = PG_GETARG_TSVECTOR(0);
	WordEntry  *entries = ARRPTR(tsv);
	char	   *lexemes = STRPTR(tsv);
	SimhashWeightedVote *vote = palloc(sizeof(SimhashWeightedVote));

	simhash_wvote_init(vote);
	for (int i = 0; i < tsv->size; i++)
	{
		WordEntry  *e = &entries[i];
		uint64		count = e->haspos ? POSDATALEN(tsv, e) : 1;

		simhash_wvote_add(vote, simhash_text_hash(lexemes + e->pos, e->len),
						  simhash_weight_quantise((double) count));
	}
	PG_RETURN_SIMHASH64(simhash_wvote_result(vote));
}
