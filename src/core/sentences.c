/*
 * sentences.c
 *		Sentence fingerprints: sentence boundaries, normalisation through the
 *		tokenizer, selection of the n longest distinct sentences and their
 *		hashes (see sentences.h for the rules).  Pure C: no PostgreSQL
 *		headers.
 */
#include "sentences.h"
#include "tokenizer.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/*
 * Per byte: WEIGHT when the byte may start a character that counts in a
 * sentence's length (ASCII letters and digits, UTF-8 lead bytes), SPECIAL
 * when it may start a sentence boundary (ASCII line breaks and . ! ? ;,
 * and the lead bytes of the non-ASCII boundaries).
 */
#define WEIGHT 1
#define SPECIAL 2

static const uint8_t byte_class[256] = {
	/* 0x00 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, SPECIAL, SPECIAL, SPECIAL, SPECIAL, 0, 0,
	/* 0x10 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 0x20 */ 0, SPECIAL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, SPECIAL, 0,
	/* 0x30 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, SPECIAL, 0, 0, 0, SPECIAL,
	/* 0x40 */ 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* 0x50 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0,
	/* 0x60 */ 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* 0x70 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0,
	/* 0x80..0xBF: continuation bytes */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 0xC0 */ 1, 1, 1 | SPECIAL, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* 0xD0 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* 0xE0 */ 1, 1, 1 | SPECIAL, 1 | SPECIAL, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 | SPECIAL,
	/* 0xF0 */ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};

/* Whitespace (Unicode White_Space) at in[j]: its length in bytes, or 0. */
static size_t
whitespace_at(const unsigned char *in, size_t len, size_t j)
{
	unsigned char b = in[j];

	if (b == ' ' || (b >= '\t' && b <= '\r'))
		return 1;
	if (b == 0xC2 && j + 1 < len && (in[j + 1] == 0x85 || in[j + 1] == 0xA0))
		return 2;				/* U+0085, U+00A0 */
	if (j + 2 >= len)
		return 0;
	if (b == 0xE1)
		return (in[j + 1] == 0x9A && in[j + 2] == 0x80) ? 3 : 0;	/* U+1680 */
	if (b == 0xE2)
	{
		if (in[j + 1] == 0x80)
			return ((in[j + 2] >= 0x80 && in[j + 2] <= 0x8A) ||	/* U+2000..200A */
					in[j + 2] == 0xA8 || in[j + 2] == 0xA9 ||	/* U+2028, U+2029 */
					in[j + 2] == 0xAF) ? 3 : 0; /* U+202F */
		return (in[j + 1] == 0x81 && in[j + 2] == 0x9F) ? 3 : 0;	/* U+205F */
	}
	if (b == 0xE3)
		return (in[j + 1] == 0x80 && in[j + 2] == 0x80) ? 3 : 0;	/* U+3000 */
	return 0;
}

/* A closing quote or bracket, or another ASCII terminator, at in[j]. */
static size_t
closer_at(const unsigned char *in, size_t len, size_t j)
{
	unsigned char b = in[j];

	if (b == '"' || b == '\'' || b == ')' || b == ']' || b == '}' ||
		b == '.' || b == '!' || b == '?' || b == ';')
		return 1;
	if (b == 0xC2 && j + 1 < len && in[j + 1] == 0xBB)
		return 2;				/* » */
	if (b == 0xE2 && j + 2 < len && in[j + 1] == 0x80 &&
		(in[j + 2] == 0x9D || in[j + 2] == 0x99))
		return 3;				/* ” ’ */
	return 0;
}

/*
 * The sentence boundary starting at in[i] (a SPECIAL byte): its length in
 * bytes, or 0 when in[i] does not end a sentence.
 */
static size_t
boundary_at(const unsigned char *in, size_t len, size_t i)
{
	unsigned char b = in[i];

	if (b < 0x80)
	{
		size_t		j = i + 1,
					n;

		if (b <= '\r')
			return 1;			/* LF, VT, FF, CR */
		/* . ! ? ; then closers, then whitespace or the end */
		while (j < len && (n = closer_at(in, len, j)) > 0)
			j += n;
		return (j >= len || whitespace_at(in, len, j) > 0) ? 1 : 0;
	}
	if (b == 0xC2)
		return (i + 1 < len && in[i + 1] == 0x85) ? 2 : 0;	/* U+0085 */
	if (i + 2 >= len)
		return 0;
	if (b == 0xE2)
		return (in[i + 1] == 0x80 && (in[i + 2] == 0xA8 || in[i + 2] == 0xA9)) ? 3 : 0;
	if (b == 0xE3)
		return (in[i + 1] == 0x80 && in[i + 2] == 0x82) ? 3 : 0;	/* 。 */
	/* 0xEF: ！ ． ； ？ (U+FF01, FF0E, FF1B, FF1F), ｡ (U+FF61) */
	if (in[i + 1] == 0xBC)
		return (in[i + 2] == 0x81 || in[i + 2] == 0x8E ||
				in[i + 2] == 0x9B || in[i + 2] == 0x9F) ? 3 : 0;
	return (in[i + 1] == 0xBD && in[i + 2] == 0xA1) ? 3 : 0;
}

/* ---------------------------------------------------------------- memory */

/* ptr grown (through w's allocator) to hold need elements of elem bytes */
static void *
grow(SentenceWork *w, void *ptr, size_t *cap, size_t need, size_t elem)
{
	size_t		newcap = *cap ? *cap : 16;

	if (need <= *cap)
		return ptr;
	while (newcap < need)
		newcap *= 2;
	ptr = w->realloc_fn(w->arg, ptr, newcap * elem);
	*cap = newcap;
	return ptr;
}

void
sentence_work_init(SentenceWork *w, SentenceReallocFn realloc_fn, void *arg)
{
	memset(w, 0, sizeof(SentenceWork));
	w->realloc_fn = realloc_fn;
	w->arg = arg;
}

size_t
sentence_work_size(const SentenceWork *w)
{
	return w->spans_cap * sizeof(SentenceSpan) +
		w->cands_cap * sizeof(SentenceCandidate) +
		w->heap_cap * sizeof(size_t) +
		w->set_cap * sizeof(size_t) +
		w->buf_cap +
		w->result_cap * sizeof(int64_t);
}

void
sentence_work_set_check(SentenceWork *w, void (*check) (void *arg), void *arg)
{
	w->check = check;
	w->check_arg = arg;
}

void
sentence_work_free(SentenceWork *w)
{
	void	   *blocks[] = {w->spans, w->cands, w->heap, w->set, w->buf, w->result};
	void		(*check) (void *) = w->check;
	void	   *check_arg = w->check_arg;

	for (size_t i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++)
		if (blocks[i])
			w->realloc_fn(w->arg, blocks[i], 0);
	sentence_work_init(w, w->realloc_fn, w->arg);
	sentence_work_set_check(w, check, check_arg);
}

/* ---------------------------------------------------------------- the set of hashes */

/* Slot of hash h: where it is, or the empty slot where it would go. */
static inline size_t
set_slot(const SentenceWork *w, uint64_t h)
{
	size_t		mask = w->set_cap - 1;
	size_t		s = (size_t) h & mask;

	while (w->set[s] != 0 && w->cands[w->set[s] - 1].hash != h)
		s = (s + 1) & mask;
	return s;
}

/*
 * Room in the set for one more than the ncands candidates it holds, at a
 * load of at most 1/2.
 */
static void
set_reserve(SentenceWork *w, size_t ncands)
{
	size_t		cap = w->set_cap ? w->set_cap : 64;

	if (w->set_cap && 2 * (ncands + 1) <= w->set_cap)
		return;
	while (2 * (ncands + 1) > cap)
		cap *= 2;
	if (w->set)
		w->realloc_fn(w->arg, w->set, 0);
	w->set = w->realloc_fn(w->arg, NULL, cap * sizeof(size_t));
	w->set_cap = cap;
	memset(w->set, 0, cap * sizeof(size_t));
	for (size_t i = 0; i < ncands; i++)
	{
		size_t		s = set_slot(w, w->cands[i].hash);

		w->set[s] = i + 1;
		w->cands[i].slot = s;
	}
}

/* ---------------------------------------------------------------- the heap of lengths */

/* restore the min-heap after its root was replaced */
static void
heap_sift_down(size_t *heap, size_t n)
{
	size_t		i = 0;

	for (;;)
	{
		size_t		l = 2 * i + 1,
					m = i,
					t;

		if (l < n && heap[l] < heap[m])
			m = l;
		if (l + 1 < n && heap[l + 1] < heap[m])
			m = l + 1;
		if (m == i)
			return;
		t = heap[i];
		heap[i] = heap[m];
		heap[m] = t;
		i = m;
	}
}

/* add v to the min-heap of n elements */
static void
heap_push(size_t *heap, size_t n, size_t v)
{
	size_t		i = n;

	heap[i] = v;
	while (i > 0 && heap[(i - 1) / 2] > heap[i])
	{
		size_t		p = (i - 1) / 2,
					t = heap[p];

		heap[p] = heap[i];
		heap[i] = t;
		i = p;
	}
}

/* ---------------------------------------------------------------- orders */

/* spans: longest bound first, then by position */
static int
span_cmp(const void *a, const void *b)
{
	const SentenceSpan *x = a,
			   *y = b;

	if (x->bound != y->bound)
		return x->bound > y->bound ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

/* candidates: longest first, then by position */
static int
cand_cmp(const void *a, const void *b)
{
	const SentenceCandidate *x = a,
			   *y = b;

	if (x->length != y->length)
		return x->length > y->length ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

/* qsort order of int64 values */
static int
int64_cmp(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

	return (x > y) - (x < y);
}

/* ---------------------------------------------------------------- checked sorts */

/* call the work space's check, if any */
static inline void
check_now(SentenceWork *w)
{
	if (w->check)
		w->check(w->check_arg);
}

/* below this many elements a sort is libc's qsort, which is quick enough */
#define SORT_CHECKED_MIN 4096

typedef int (*OrderFn) (const void *, const void *);

static inline void
swap_elements(char *a, char *b, size_t size)
{
	char		tmp[64];

	memcpy(tmp, a, size);
	memcpy(a, b, size);
	memcpy(b, tmp, size);
}

/* sift element i down a heap of n elements whose root sorts first by cmp */
static void
order_heap_sift(char *a, size_t i, size_t n, size_t size, OrderFn cmp)
{
	for (;;)
	{
		size_t		l = 2 * i + 1,
					m = i;

		if (l < n && cmp(a + l * size, a + m * size) < 0)
			m = l;
		if (l + 1 < n && cmp(a + (l + 1) * size, a + m * size) < 0)
			m = l + 1;
		if (m == i)
			return;
		swap_elements(a + i * size, a + m * size, size);
		i = m;
	}
}

/* make a[0 .. n) a heap whose root sorts first */
static void
order_heap_make(SentenceWork *w, char *a, size_t n, size_t size, OrderFn cmp)
{
	for (size_t i = n / 2; i-- > 0;)
	{
		order_heap_sift(a, i, n, size, cmp);
		if ((i & 4095) == 0)
			check_now(w);
	}
}

/* move the heap a[0 .. n)'s first element to a[n - 1]; the heap is a[0 .. n - 1) */
static void
order_heap_pop(char *a, size_t n, size_t size, OrderFn cmp)
{
	swap_elements(a, a + (n - 1) * size, size);
	order_heap_sift(a, 0, n - 1, size, cmp);
}

/*
 * Sort n elements by cmp (a total order: the result is qsort's): small
 * arrays by qsort, large ones by a heapsort that calls the check every 4096
 * elements, in place.
 */
static void
sort_checked(SentenceWork *w, void *base, size_t n, size_t size, OrderFn cmp)
{
	char	   *a = base;

	if (n < SORT_CHECKED_MIN || w->check == NULL)
	{
		if (n > 1)
			qsort(base, n, size, cmp);
		return;
	}
	order_heap_make(w, a, n, size, cmp);
	for (size_t k = n; k > 1; k--)
	{
		order_heap_pop(a, k, size, cmp);
		if ((k & 4095) == 0)
			check_now(w);
	}
	/* first elements were popped to the end: reverse */
	for (size_t i = 0, j = n - 1; i < j; i++, j--)
		swap_elements(a + i * size, a + j * size, size);
}

/* ---------------------------------------------------------------- the fingerprints */

/* Record the sentence in[s .. e) when its bound allows min_length. */
static inline void
add_span(SentenceWork *w, size_t *nspans, size_t s, size_t e, size_t bound,
		 size_t min_length)
{
	if (bound < min_length)
		return;
	if (*nspans == w->spans_cap)
		w->spans = grow(w, w->spans, &w->spans_cap, *nspans + 1, sizeof(SentenceSpan));
	w->spans[*nspans].start = s;
	w->spans[*nspans].len = e - s;
	w->spans[*nspans].bound = bound;
	(*nspans)++;
}

/* bytes the boundary scan reads between two checks */
#define SPLIT_CHECK_EVERY ((size_t) 16 * 1024 * 1024)

/* The sentences that may reach min_length characters, in w->spans. */
static size_t
split(SentenceWork *w, const unsigned char *in, size_t len, size_t min_length)
{
	size_t		nspans = 0,
				s = 0,
				weight = 0,
				weight_at_s = 0,
				next_check = SPLIT_CHECK_EVERY;

	for (size_t i = 0; i < len; i++)
	{
		uint8_t		c = byte_class[in[i]];

		if (i >= next_check)
		{
			check_now(w);
			next_check = i + SPLIT_CHECK_EVERY;
		}
		if (c & SPECIAL)
		{
			size_t		n = boundary_at(in, len, i);

			if (n > 0)
			{
				add_span(w, &nspans, s, i, weight - weight_at_s, min_length);
				i += n - 1;
				s = i + 1;
				weight_at_s = weight;
				continue;
			}
		}
		weight += c & WEIGHT;
	}
	add_span(w, &nspans, s, len, weight - weight_at_s, min_length);
	return nspans;
}

/* Normalise the sentence into w->buf: its length in bytes and in characters. */
static size_t
normalise(SentenceWork *w, const char *in, const SentenceSpan *sp, size_t *chars)
{
	SimhashTokenizer tok;
	size_t		start,
				toklen,
				n = 0;

	w->buf = grow(w, w->buf, &w->buf_cap, simhash_tokenizer_bufsize(sp->len), 1);
	simhash_tokenizer_init(&tok, in + sp->start, sp->len, w->buf);
	while (simhash_tokenizer_next(&tok, &start, &toklen))
		if ((++n & 0xFFFF) == 0)
			check_now(w);			/* one sentence may be the whole text */
	n = 0;
	for (size_t i = 0; i < tok.outlen; i++)
	{
		unsigned char c = (unsigned char) w->buf[i];

		if ((i & 0xFFFFFF) == 0xFFFFFF)
			check_now(w);

		n += ((c & 0xC0) != 0x80) & (c != ' ');
	}
	*chars = n;
	return tok.outlen;
}

size_t
sentence_hashes_compute(SentenceWork *w, const char *in, size_t len, int n,
						int min_length, const int64_t **hashes)
{
	size_t		nspans,
				ncands = 0,
				nheap = 0,
				want = (size_t) (n < 1 ? 1 : n),
				minlen = (size_t) (min_length < 1 ? 1 : min_length),
				nresult;

	*hashes = NULL;
	if (w->set_dirty && w->set)
		memset(w->set, 0, w->set_cap * sizeof(size_t));	/* a call was interrupted */
	w->set_dirty = true;
	nspans = split(w, (const unsigned char *) in, len, minlen);
	/* longest bound first: a heap, popped as far as the scan goes */
	order_heap_make(w, (char *) w->spans, nspans, sizeof(SentenceSpan), span_cmp);

	for (size_t k = 0; k < nspans; k++)
	{
		const SentenceSpan *sp = &w->spans[nspans - 1 - k];
		size_t		chars,
					bytes,
					slot;
		uint64_t	h;

		order_heap_pop((char *) w->spans, nspans - k, sizeof(SentenceSpan), span_cmp);
		if ((k & 1023) == 1023)
			check_now(w);

		/* nothing left can reach the n-th longest (nor tie with it earlier) */
		if (nheap == want && sp->bound < w->heap[0])
			break;
		bytes = normalise(w, in, sp, &chars);
		if (chars < minlen)
			continue;
		h = simhash_feature_hash(w->buf, bytes);

		set_reserve(w, ncands);
		slot = set_slot(w, h);
		if (w->set[slot] != 0)
		{
			/* a repeated sentence: it counts once, at its first position */
			SentenceCandidate *c = &w->cands[w->set[slot] - 1];

			if (sp->start < c->start)
				c->start = sp->start;
			continue;
		}
		w->cands = grow(w, w->cands, &w->cands_cap, ncands + 1, sizeof(SentenceCandidate));
		w->cands[ncands].hash = h;
		w->cands[ncands].length = chars;
		w->cands[ncands].start = sp->start;
		w->cands[ncands].slot = slot;
		w->set[slot] = ++ncands;

		if (nheap < want)
		{
			w->heap = grow(w, w->heap, &w->heap_cap, nheap + 1, sizeof(size_t));
			heap_push(w->heap, nheap++, chars);
		}
		else if (chars > w->heap[0])
		{
			w->heap[0] = chars;
			heap_sift_down(w->heap, nheap);
		}
	}

	/* leave the set empty for the next text */
	for (size_t i = 0; i < ncands; i++)
		w->set[w->cands[i].slot] = 0;
	w->set_dirty = false;
	if (ncands == 0)
		return 0;

	sort_checked(w, w->cands, ncands, sizeof(SentenceCandidate), cand_cmp);
	nresult = ncands < want ? ncands : want;
	w->result = grow(w, w->result, &w->result_cap, nresult, sizeof(int64_t));
	for (size_t i = 0; i < nresult; i++)
		w->result[i] = (int64_t) w->cands[i].hash;
	sort_checked(w, w->result, nresult, sizeof(int64_t), int64_cmp);
	*hashes = w->result;
	return nresult;
}
