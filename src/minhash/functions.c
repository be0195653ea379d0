/*
 * functions.c
 *		SQL-callable MinHash/LSH: the minhash_signature type (text and binary I/O),
 *		minhash(text, ...) and minhash(text[], ...), minhash_jaccard,
 *		jaccard (exact), minhash_shingles, minhash_slots, minhash_bands,
 *		minhash_shared_bands, minhash_lsh_probability and
 *		minhash_lsh_params.  The algorithms are in core/minhash.c.
 */
#include "simhash.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "core/minhash.h"
#include "minhash/signature.h"
#include "text/text.h"

PG_FUNCTION_INFO_V1(minhash_signature_in);
PG_FUNCTION_INFO_V1(minhash_signature_out);
PG_FUNCTION_INFO_V1(minhash_signature_recv);
PG_FUNCTION_INFO_V1(minhash_signature_send);
PG_FUNCTION_INFO_V1(minhash_text);
PG_FUNCTION_INFO_V1(minhash_array);
PG_FUNCTION_INFO_V1(minhash_jaccard);
PG_FUNCTION_INFO_V1(minhash_jaccard_text);
PG_FUNCTION_INFO_V1(minhash_jaccard_array);
PG_FUNCTION_INFO_V1(minhash_shingles);
PG_FUNCTION_INFO_V1(minhash_slots);
PG_FUNCTION_INFO_V1(minhash_bands);
PG_FUNCTION_INFO_V1(minhash_shared_bands_sql);
PG_FUNCTION_INFO_V1(minhash_lsh_probability_sql);
PG_FUNCTION_INFO_V1(minhash_lsh_params);

#define BATCH 1024

/* minhash_char_text()'s hook: long texts' normalisation can be cancelled */
static void
minhash_interrupts(void)
{
	CHECK_FOR_INTERRUPTS();
}

/* ---- signatures as varlena values ---- */

/*
 * The one reader of a minhash_signature value (SQL functions and the dedup
 * jobs): its header parsed and checked (XX001 if invalid), its slots.
 */
void
minhash_sig_read(Datum d, MinhashSig *sig)
{
	struct varlena *v = PG_DETOAST_DATUM_PACKED(d);
	const uint8_t *data = (const uint8_t *) VARDATA_ANY(v);
	size_t		len = VARSIZE_ANY_EXHDR(v);
	const char *problem = minhash_read_header(data, len, &sig->p, &sig->empty);

	if (problem)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid minhash signature: %s", problem)));
	sig->slots = sig->empty ? NULL : data + MINHASH_HEADER_SIZE;
}

/* reject two signatures with different parameters (22023) */
static void
sig_check_compatible(const MinhashSig *a, const MinhashSig *b)
{
	if (!minhash_params_equal(&a->p, &b->p))
	{
		char		da[160],
					db[160];

		minhash_format_params(da, sizeof(da), &a->p);
		minhash_format_params(db, sizeof(db), &b->p);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("minhash signatures with different parameters cannot be compared"),
				 errdetail("The first has %s, the second %s.", da, db),
				 errhint("Compute both with the same n_gram, n_gram_type, permutations and seed.")));
	}
}

/* A new signature value; slots (k values) are ignored when empty. */
static bytea *
sig_build(const MinhashParams *p, bool empty, const uint32_t *slots)
{
	size_t		size = minhash_size(p->permutations, empty);
	bytea	   *result = palloc(VARHDRSZ + size);
	uint8_t    *data = (uint8_t *) VARDATA(result);

	SET_VARSIZE(result, VARHDRSZ + size);
	minhash_write_header(data, p, empty);
	if (!empty)
		minhash_store_slots(data + MINHASH_HEADER_SIZE, slots, p->permutations);
	return result;
}

/* ---- parameter checks (22023) ---- */

/* reject an n_gram outside 1 .. MINHASH_MAX_NGRAM (22023) */
static void
check_n_gram(int32 n_gram)
{
	if (n_gram < 1 || n_gram > MINHASH_MAX_NGRAM)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("n_gram must be between 1 and %d, not %d",
						MINHASH_MAX_NGRAM, n_gram)));
}

/* reject permutations outside 1 .. MINHASH_MAX_PERMUTATIONS (22023) */
static void
check_permutations(int32 permutations)
{
	if (permutations < 1 || permutations > MINHASH_MAX_PERMUTATIONS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("permutations must be between 1 and %d, not %d",
						MINHASH_MAX_PERMUTATIONS, permutations)));
}

/* the n_gram_type argument, 'char' or 'term' (22023 otherwise) */
static int
parse_n_gram_type(text *t)
{
	const char *s = VARDATA_ANY(t);
	size_t		len = VARSIZE_ANY_EXHDR(t);
	int			type = minhash_ngram_type_from_name(s, len);

	if (type != MINHASH_CHAR && type != MINHASH_TERM)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("n_gram_type must be 'char' or 'term', not \"%s\"",
						text_to_cstring(t)),
				 errhint("'char' shingles are n_gram Unicode characters, 'term' shingles n_gram words.")));
	return type;
}

/* bands and rows per band: rows defaults to permutations / bands */
static int
check_bands(int32 bands, int32 rows, bool have_rows, int permutations)
{
	if (bands < 1 || bands > permutations)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bands must be between 1 and the signature's %d permutations, not %d",
						permutations, bands)));
	if (!have_rows)
		return permutations / bands;
	if (rows < 1 || (int64) rows * bands > permutations)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bands × rows must be at most the signature's %d permutations, not %d × %d",
						permutations, bands, rows),
				 errhint("Use at least 1 and at most %d rows per band.", permutations / bands)));
	return rows;
}

/* ---- text I/O ---- */

/*
 * v1 n_gram=9 n_gram_type=char permutations=128 seed=0 slots=0a1b2c3d,...
 * (k groups of 8 hexadecimal digits) or slots=empty.
 */
Datum
minhash_signature_out(PG_FUNCTION_ARGS)
{
	MinhashSig	sig;
	StringInfoData buf;
	static const char hex[] = "0123456789abcdef";

	minhash_sig_read(PG_GETARG_DATUM(0), &sig);
	initStringInfo(&buf);
	appendStringInfo(&buf, "v%d n_gram=%d n_gram_type=%s permutations=%d seed=" INT64_FORMAT " slots=",
					 sig.p.version, sig.p.n_gram, minhash_ngram_type_name(sig.p.n_gram_type),
					 sig.p.permutations, sig.p.seed);
	if (sig.empty)
		appendStringInfoString(&buf, "empty");
	else
	{
		enlargeStringInfo(&buf, 9 * sig.p.permutations);
		for (int i = 0; i < sig.p.permutations; i++)
		{
			uint32		v = minhash_get_slot(sig.slots, i);
			char	   *o = buf.data + buf.len;

			if (i > 0)
				*o++ = ',';
			for (int d = 7; d >= 0; d--)
				*o++ = hex[(v >> (4 * d)) & 0xF];
			buf.len = o - buf.data;
		}
		buf.data[buf.len] = '\0';
	}
	PG_RETURN_CSTRING(buf.data);
}

/* raise 22P02 for a malformed minhash_signature literal */
static void
bad_input(const char *str, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			 errmsg("invalid input syntax for type %s: \"%s\"", "minhash_signature", str),
			 errdetail("%s", detail),
			 errhint("A minhash_signature is written as \"v1 n_gram=9 n_gram_type=char permutations=128 seed=0 slots=\" followed by \"empty\" or that many comma-separated 8-digit hexadecimal values.")));
}

/* the text form; parsed by minhash_parse_text (pure C, fuzzed) */
Datum
minhash_signature_in(PG_FUNCTION_ARGS)
{
	char	   *str = PG_GETARG_CSTRING(0);
	MinhashParams params;
	uint32	   *slots = palloc(sizeof(uint32) * MINHASH_MAX_PERMUTATIONS);
	bool		empty;
	char		detail[200];
	const char *problem = minhash_parse_text(str, &params, &empty, slots,
											 detail, sizeof(detail));

	if (problem)
		bad_input(str, problem);
	PG_RETURN_BYTEA_P(sig_build(&params, empty, slots));
}

/* ---- binary I/O ---- */

/*
 * version, n_gram_type, flags (bytes), n_gram, permutations (int16), seed
 * (int64), then the slots (int32 each), in network byte order.
 */
Datum
minhash_signature_send(PG_FUNCTION_ARGS)
{
	MinhashSig	sig;
	StringInfoData buf;

	minhash_sig_read(PG_GETARG_DATUM(0), &sig);
	pq_begintypsend(&buf);
	pq_sendbyte(&buf, (uint8) sig.p.version);
	pq_sendbyte(&buf, (uint8) sig.p.n_gram_type);
	pq_sendbyte(&buf, sig.empty ? MINHASH_FLAG_EMPTY : 0);
	pq_sendint16(&buf, (uint16) sig.p.n_gram);
	pq_sendint16(&buf, (uint16) sig.p.permutations);
	pq_sendint64(&buf, sig.p.seed);
	if (!sig.empty)
		for (int i = 0; i < sig.p.permutations; i++)
			pq_sendint32(&buf, minhash_get_slot(sig.slots, i));
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

Datum
minhash_signature_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	MinhashParams params;
	bool		empty;
	size_t		pos = buf->cursor;
	uint32	   *slots = palloc(sizeof(uint32) * MINHASH_MAX_PERMUTATIONS);
	const char *problem = minhash_parse_binary((const uint8_t *) buf->data, buf->len,
											   &pos, &params, &empty, slots);

	if (problem == minhash_binary_short)
		simhash_recv_check(SIMHASH_INPUT_SHORT);
	if (problem)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid binary minhash_signature: %s", problem)));
	buf->cursor = (int) pos;
	if (buf->cursor != buf->len)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid binary minhash_signature: %d bytes left over",
						buf->len - buf->cursor)));
	PG_RETURN_BYTEA_P(sig_build(&params, empty, slots));
}

/* ---- minhash(text, ...) ---- */

/*
 * What minhash(text) keeps between the rows of one query (fn_extra): the
 * work buffer, and room for the slots and the densification list.
 */
typedef struct TextState
{
	char	   *buf;
	size_t		bufsize;
	uint32		slots[MINHASH_MAX_PERMUTATIONS];
	int			work[MINHASH_MAX_PERMUTATIONS];
	size_t		ring[MINHASH_MAX_NGRAM];
	uint64		batch[BATCH];
} TextState;

/*
 * the buffers kept across rows in fn_extra, large enough for a text of len
 * bytes
 */
static TextState *
text_state(FunctionCallInfo fcinfo, size_t len)
{
	TextState  *st = (TextState *) fcinfo->flinfo->fn_extra;

	if (st == NULL)
	{
		st = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(TextState));
		fcinfo->flinfo->fn_extra = st;
	}
	if (st->bufsize < minhash_bufsize(len))
	{
		if (st->buf)
			pfree(st->buf);
		st->buf = NULL;
		st->bufsize = Max(minhash_bufsize(len), 16384);
		st->buf = MemoryContextAllocHuge(fcinfo->flinfo->fn_mcxt, st->bufsize);
	}
	return st;
}

/* a buffer grown by a huge text is not kept for the next row */
static void
text_state_trim(TextState *st)
{
	if (st->bufsize > 64 * 1024 * 1024)
	{
		pfree(st->buf);
		st->buf = NULL;
		st->bufsize = 0;
	}
}

/*
 * minhash(body text, n_gram integer DEFAULT 9, n_gram_type text DEFAULT
 * 'char', permutations integer DEFAULT 128, seed bigint DEFAULT 0)
 */
Datum
minhash_text(PG_FUNCTION_ARGS)
{
	text	   *t = PG_GETARG_TEXT_PP(0);
	MinhashParams params;
	const char *data;
	size_t		len;
	TextState  *st;
	MinhashShingler shingler;
	MinhashSketch sketch;
	size_t		n;
	bool		nonempty;

	params.version = MINHASH_VERSION;
	params.n_gram = PG_GETARG_INT32(1);
	check_n_gram(params.n_gram);
	params.n_gram_type = parse_n_gram_type(PG_GETARG_TEXT_PP(2));
	params.permutations = PG_GETARG_INT32(3);
	check_permutations(params.permutations);
	params.seed = PG_GETARG_INT64(4);

	simhash_text_utf8(t, &data, &len);
	st = text_state(fcinfo, len);
	minhash_check_hook = minhash_interrupts;
	minhash_shingler_init(&shingler, params.n_gram_type, params.n_gram,
						  (uint64) params.seed, data, len, st->buf, st->ring);
	minhash_sketch_init(&sketch, st->slots, params.permutations, (uint64) params.seed);
	while ((n = minhash_shingler_next(&shingler, st->batch, NULL, BATCH)) > 0)
	{
		minhash_sketch_add(&sketch, st->batch, n);
		CHECK_FOR_INTERRUPTS();
	}
	nonempty = minhash_sketch_finish(&sketch, st->work);
	text_state_trim(st);
	PG_RETURN_BYTEA_P(sig_build(&params, !nonempty, st->slots));
}

/* the shingle hash of a text element (database encoding to UTF-8) */
static inline uint64
element_hash(Datum d, uint64 seed)
{
	text	   *e = (text *) DatumGetPointer(d);
	const char *data;
	size_t		len;
	uint64		h;

	simhash_text_utf8(e, &data, &len);
	h = minhash_hash(data, len, seed);
	if (data != VARDATA_ANY(e))
		pfree((void *) data);
	return h;
}

/* minhash(features text[], permutations integer DEFAULT 128, seed bigint DEFAULT 0) */
Datum
minhash_array(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	MinhashParams params;
	uint32	   *slots;
	int		   *work;
	uint64		batch[BATCH];
	int			nbatch = 0;
	MinhashSketch sketch;
	ArrayIterator it;
	Datum		value;
	bool		isnull;
	bool		nonempty;

	simhash_check_array_dims(arr, "features");
	params.version = MINHASH_VERSION;
	params.n_gram_type = MINHASH_FEATURE;
	params.n_gram = 1;
	params.permutations = PG_GETARG_INT32(1);
	check_permutations(params.permutations);
	params.seed = PG_GETARG_INT64(2);

	slots = palloc(sizeof(uint32) * params.permutations);
	work = palloc(sizeof(int) * params.permutations);
	minhash_sketch_init(&sketch, slots, params.permutations, (uint64) params.seed);
	it = array_create_iterator(arr, 0, NULL);
	while (array_iterate(it, &value, &isnull))
	{
		if (isnull)
			continue;
		batch[nbatch++] = element_hash(value, (uint64) params.seed);
		if (nbatch == BATCH)
		{
			minhash_sketch_add(&sketch, batch, nbatch);
			nbatch = 0;
			CHECK_FOR_INTERRUPTS();
		}
	}
	minhash_sketch_add(&sketch, batch, nbatch);
	array_free_iterator(it);
	nonempty = minhash_sketch_finish(&sketch, work);
	PG_RETURN_BYTEA_P(sig_build(&params, !nonempty, slots));
}

/* ---- estimate ---- */

/* minhash_jaccard(minhash, minhash): the fraction of equal slots */
Datum
minhash_jaccard(PG_FUNCTION_ARGS)
{
	MinhashSig	a,
				b;

	minhash_sig_read(PG_GETARG_DATUM(0), &a);
	minhash_sig_read(PG_GETARG_DATUM(1), &b);
	sig_check_compatible(&a, &b);
	if (a.empty || b.empty)
		PG_RETURN_FLOAT8(0.0);
	PG_RETURN_FLOAT8((double) minhash_equal_slots(a.slots, b.slots, a.p.permutations) /
					 a.p.permutations);
}

/* ---- exact Jaccard ---- */

typedef struct HashSet
{
	uint64	   *h;
	size_t		n;
	size_t		cap;
} HashSet;

/* most hashes a set holds: one allocation of at most MaxAllocSize (1 GB) */
#define HASHSET_MAX_CAP (MaxAllocSize / sizeof(uint64))
/* most distinct hashes a set keeps: at most half of the largest set */
#define HASHSET_MAX_DISTINCT ((size_t) 1 << 26)

/* the hash set's sort lets the query be cancelled */
static void
hashset_interrupts(void *arg)
{
	CHECK_FOR_INTERRUPTS();
}

/* reduce the set to its distinct hashes: 54000 if more than HASHSET_MAX_DISTINCT */
static void
hashset_reduce(HashSet *s)
{
	s->n = minhash_hash_set(s->h, s->n, hashset_interrupts, NULL);
	if (s->n > HASHSET_MAX_DISTINCT)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("jaccard: more than %zu distinct shingles in one value",
						HASHSET_MAX_DISTINCT),
				 errdetail("The exact Jaccard similarity keeps the distinct shingle hashes of each value, 8 bytes each, in at most 1 GB."),
				 errhint("Compare MinHash signatures (minhash_jaccard), or use a larger n_gram or term shingles.")));
}

/*
 * append n hashes to the set; when it is full, it is first reduced to its
 * distinct hashes, and grows only if they fill more than half of it, so that
 * its size stays within 2 x (distinct hashes + n) however often a shingle
 * repeats (each reduction sorts at most cap hashes, after at least cap / 2
 * appends: the sorting stays linear-logarithmic in the appended hashes).
 * The set is one allocation of at most 1 GB (HASHSET_MAX_CAP hashes, twice
 * HASHSET_MAX_DISTINCT): more distinct hashes are an error (54000) at the
 * reduction that finds them.
 */
static void
hashset_add(HashSet *s, const uint64 *h, size_t n)
{
	if (n == 0)
		return;					/* s->h may be NULL: no memcpy (UBSan) */
	if (s->n + n > s->cap)
	{
		if (s->h != NULL)
			hashset_reduce(s);
		if (s->n + n > s->cap / 2)
		{
			s->cap = Min(Max(s->cap * 2, (s->n + n) * 2), HASHSET_MAX_CAP);
			s->h = s->h ? repalloc_huge(s->h, s->cap * sizeof(uint64)) :
				MemoryContextAllocHuge(CurrentMemoryContext, s->cap * sizeof(uint64));
		}
	}
	memcpy(s->h + s->n, h, n * sizeof(uint64));
	s->n += n;
}

/* the distinct shingle hashes (seed 0) of a text */
static void
text_shingle_set(text *t, int type, int n_gram, HashSet *set)
{
	const char *data;
	size_t		len;
	char	   *buf;
	size_t	   *ring = palloc(sizeof(size_t) * n_gram);
	MinhashShingler shingler;
	uint64		batch[BATCH];
	size_t		n;

	simhash_text_utf8(t, &data, &len);
	buf = MemoryContextAllocHuge(CurrentMemoryContext, minhash_bufsize(len));
	set->h = NULL;
	set->n = set->cap = 0;
	minhash_check_hook = minhash_interrupts;
	minhash_shingler_init(&shingler, type, n_gram, 0, data, len, buf, ring);
	while ((n = minhash_shingler_next(&shingler, batch, NULL, BATCH)) > 0)
	{
		hashset_add(set, batch, n);
		CHECK_FOR_INTERRUPTS();
	}
	if (set->h != NULL)
		hashset_reduce(set);
	pfree(buf);
	pfree(ring);
}

/*
 * jaccard(a text, b text, n_gram integer DEFAULT 9, n_gram_type text
 * DEFAULT 'char'): |A ∩ B| / |A ∪ B| of the shingle sets (shingles
 * identified by their 64-bit hash); 0 when neither has a shingle.
 */
Datum
minhash_jaccard_text(PG_FUNCTION_ARGS)
{
	text	   *a = PG_GETARG_TEXT_PP(0);
	text	   *b = PG_GETARG_TEXT_PP(1);
	int32		n_gram = PG_GETARG_INT32(2);
	int			type;
	HashSet		sa,
				sb;
	double		j;

	check_n_gram(n_gram);
	type = parse_n_gram_type(PG_GETARG_TEXT_PP(3));
	text_shingle_set(a, type, n_gram, &sa);
	text_shingle_set(b, type, n_gram, &sb);
	j = minhash_set_jaccard(sa.h, sa.n, sb.h, sb.n);
	if (sa.h)
		pfree(sa.h);
	if (sb.h)
		pfree(sb.h);
	PG_RETURN_FLOAT8(j);
}

/* the shingle hash of a text element, unseeded (simhash_array_hashes()) */
static uint64
element_hash_unseeded(Datum d)
{
	return element_hash(d, 0);
}

/* simhash_array_hashes()'s sink: add a batch of hashes to a set */
static void
hashset_sink(void *arg, const uint64 *hashes, size_t n)
{
	hashset_add((HashSet *) arg, hashes, n);
}

/* the hashes of a text[]'s non-NULL elements, as a set */
static void
array_shingle_set(ArrayType *arr, HashSet *set)
{
	set->h = NULL;
	set->n = set->cap = 0;
	simhash_array_hashes(arr, element_hash_unseeded, hashset_sink, set);
	if (set->h != NULL)
		hashset_reduce(set);
}

/* jaccard(a text[], b text[]): of the sets of non-NULL elements */
Datum
minhash_jaccard_array(PG_FUNCTION_ARGS)
{
	ArrayType  *a = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *b = PG_GETARG_ARRAYTYPE_P(1);
	HashSet		sa,
				sb;

	simhash_check_array_dims(a, "a");
	simhash_check_array_dims(b, "b");
	array_shingle_set(a, &sa);
	array_shingle_set(b, &sb);
	PG_RETURN_FLOAT8(minhash_set_jaccard(sa.h, sa.n, sb.h, sb.n));
}

/* ---- inspection ---- */

/*
 * minhash_shingles(body text, n_gram integer DEFAULT 9, n_gram_type text
 * DEFAULT 'char') RETURNS text[]: the shingles, in text order, repeats
 * included.  Two passes: the first measures the array and raises 54000
 * as soon as it would exceed 1 GB (n_gram characters per character of the
 * text can be much more than the text), the second fills it.
 */
Datum
minhash_shingles(PG_FUNCTION_ARGS)
{
	text	   *t = PG_GETARG_TEXT_PP(0);
	int32		n_gram = PG_GETARG_INT32(1);
	int			type;
	const char *data;
	size_t		len;
	char	   *buf;
	size_t	   *ring;
	MinhashShingler shingler;
	uint64		batch[BATCH];
	size_t		spans[2 * BATCH];
	size_t		n;
	SimhashTextArray arr;

	check_n_gram(n_gram);
	type = parse_n_gram_type(PG_GETARG_TEXT_PP(2));
	simhash_text_utf8(t, &data, &len);
	buf = MemoryContextAllocHuge(CurrentMemoryContext, minhash_bufsize(len));
	ring = palloc(sizeof(size_t) * n_gram);
	simhash_textarray_start(&arr, "minhash_shingles",
							"Use a smaller n_gram or a shorter text.");
	for (int pass = 0; pass < 2; pass++)
	{
		if (pass == 1)
			simhash_textarray_allocate(&arr);
		minhash_check_hook = minhash_interrupts;
		minhash_shingler_init(&shingler, type, n_gram, 0, data, len, buf, ring);
		while ((n = minhash_shingler_next(&shingler, batch, spans, BATCH)) > 0)
		{
			const char *s = minhash_shingler_text(&shingler);

			for (size_t i = 0; i < n; i++)
			{
				if (pass == 0)
					simhash_textarray_count(&arr, s + spans[2 * i], spans[2 * i + 1]);
				else
					simhash_textarray_put(&arr, s + spans[2 * i], spans[2 * i + 1]);
			}
			CHECK_FOR_INTERRUPTS();
		}
	}
	pfree(buf);
	pfree(ring);
	PG_RETURN_ARRAYTYPE_P(simhash_textarray_finish(&arr));
}

/* minhash_slots(minhash) RETURNS bigint[]: the slot values (0 .. 2^32 - 1) */
Datum
minhash_slots(PG_FUNCTION_ARGS)
{
	MinhashSig	sig;
	Datum	   *values;
	int			k;

	minhash_sig_read(PG_GETARG_DATUM(0), &sig);
	k = sig.empty ? 0 : sig.p.permutations;
	values = palloc(sizeof(Datum) * Max(k, 1));
	for (int i = 0; i < k; i++)
		values[i] = Int64GetDatum((int64) minhash_get_slot(sig.slots, i));
	PG_RETURN_ARRAYTYPE_P(construct_array(values, k, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/* ---- LSH ---- */

/*
 * minhash_bands(minhash, bands integer [, rows integer]) RETURNS bigint[]:
 * one key per band; rows defaults to permutations / bands (trailing slots
 * that fill no band are not used).  An empty signature has no keys.
 */
Datum
minhash_bands(PG_FUNCTION_ARGS)
{
	MinhashSig	sig;
	int32		bands = PG_GETARG_INT32(1);
	int			rows;
	int64	   *keys;
	Datum	   *values;

	minhash_sig_read(PG_GETARG_DATUM(0), &sig);
	rows = check_bands(bands, PG_NARGS() > 2 ? PG_GETARG_INT32(2) : 0, PG_NARGS() > 2,
					   sig.p.permutations);
	if (sig.empty)
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(INT8OID));
	keys = palloc(sizeof(int64) * bands);
	values = palloc(sizeof(Datum) * bands);
	minhash_band_keys(sig.slots, bands, rows, keys);
	for (int i = 0; i < bands; i++)
		values[i] = Int64GetDatum(keys[i]);
	PG_RETURN_ARRAYTYPE_P(construct_array(values, bands, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/*
 * minhash_shared_bands(minhash, minhash, bands integer [, rows integer]):
 * the bands in which the two signatures are equal (SnaPy's sensitivity
 * counts these).
 */
Datum
minhash_shared_bands_sql(PG_FUNCTION_ARGS)
{
	MinhashSig	a,
				b;
	int32		bands = PG_GETARG_INT32(2);
	int			rows;

	minhash_sig_read(PG_GETARG_DATUM(0), &a);
	minhash_sig_read(PG_GETARG_DATUM(1), &b);
	sig_check_compatible(&a, &b);
	rows = check_bands(bands, PG_NARGS() > 3 ? PG_GETARG_INT32(3) : 0, PG_NARGS() > 3,
					   a.p.permutations);
	if (a.empty || b.empty)
		PG_RETURN_INT32(0);
	PG_RETURN_INT32(minhash_shared_bands(a.slots, b.slots, bands, rows));
}

/* reject a probability outside [0, 1] (22023) */
static void
check_probability(float8 x, const char *what)
{
	if (!(x >= 0.0 && x <= 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be between 0 and 1, not %g", what, x)));
}

/* minhash_lsh_probability(similarity, bands, rows): 1 - (1 - s^rows)^bands */
Datum
minhash_lsh_probability_sql(PG_FUNCTION_ARGS)
{
	float8		s = PG_GETARG_FLOAT8(0);
	int32		bands = PG_GETARG_INT32(1);
	int32		rows = PG_GETARG_INT32(2);

	check_probability(s, "similarity");
	if (bands < 1 || rows < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bands and rows must be at least 1, not %d and %d", bands, rows)));
	PG_RETURN_FLOAT8(minhash_lsh_probability(s, bands, rows));
}

/*
 * minhash_lsh_params(threshold, permutations DEFAULT 128,
 * false_positive_weight DEFAULT 0.5, false_negative_weight DEFAULT 0.5,
 * OUT bands, OUT rows, OUT false_positive, OUT false_negative): the bands ×
 * rows ≤ permutations minimising the weighted sum of the error areas
 * (datasketch's optimal_param); ties go to fewer bands, then fewer rows.
 */
Datum
minhash_lsh_params(PG_FUNCTION_ARGS)
{
	float8		threshold = PG_GETARG_FLOAT8(0);
	int32		k = PG_GETARG_INT32(1);
	float8		wfp = PG_GETARG_FLOAT8(2);
	float8		wfn = PG_GETARG_FLOAT8(3);
	TupleDesc	tupdesc;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};
	double		best = INFINITY,
				best_fp = 0,
				best_fn = 0;
	int			best_b = 1,
				best_r = 1;

	check_probability(threshold, "threshold");
	check_permutations(k);
	if (!(wfp >= 0 && wfn >= 0 && isfinite(wfp) && isfinite(wfn) && wfp + wfn > 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("false_positive_weight and false_negative_weight must be finite, non-negative and not both 0")));
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	for (int b = 1; b <= k; b++)
	{
		for (int r = 1; r <= k / b; r++)
		{
			double		fp,
						fn,
						err;

			minhash_lsh_errors(threshold, b, r, &fp, &fn);
			err = wfp * fp + wfn * fn;
			if (err < best)
			{
				best = err;
				best_b = b;
				best_r = r;
				best_fp = fp;
				best_fn = fn;
			}
		}
		CHECK_FOR_INTERRUPTS();
	}
	values[0] = Int32GetDatum(best_b);
	values[1] = Int32GetDatum(best_r);
	values[2] = Float8GetDatum(best_fp);
	values[3] = Float8GetDatum(best_fn);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls)));
}
