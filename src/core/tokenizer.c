/*
 * tokenizer.c
 *		The Unicode tokenizer and the shingler (see tokenizer.h for the rules
 *		they implement).  Pure C: no PostgreSQL headers.
 */
#include "tokenizer.h"
#include "unicode_table.h"

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define XXH_INLINE_ALL
#include <xxhash.h>

/* classes in the BMP, built once from unicode_table.h; FOLDS flags a fold */
#define CLASS_MASK 0x03
#define HAS_FOLD 0x80
static uint8_t bmp_class[65536];
static bool bmp_ready = false;

/* ASCII: 0 for a separator, else the byte case-folded */
static uint8_t ascii_map[128];

/*
 * fill bmp_class (classes and fold flags of the Basic Multilingual Plane)
 * once
 */
static void
build_bmp_class(void)
{
	for (int c = 0; c < 128; c++)
	{
		if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'))
			bmp_class[c] = UC_WORD;
		else if (c >= 'A' && c <= 'Z')
			bmp_class[c] = UC_WORD | HAS_FOLD;
	}
	for (size_t i = 0; i < UNICODE_RANGES_COUNT; i++)
	{
		const UnicodeRange *r = &unicode_ranges[i];

		for (uint32_t c = r->first; c <= r->last && c < 65536; c++)
			bmp_class[c] = r->cls;
	}
	for (size_t i = 0; i < UNICODE_FOLDS_COUNT; i++)
		if (unicode_folds[i].from < 65536)
			bmp_class[unicode_folds[i].from] |= HAS_FOLD;
	for (int c = 0; c < 128; c++)
		ascii_map[c] = (bmp_class[c] == UC_SEP) ? 0 :
			(c >= 'A' && c <= 'Z') ? (uint8_t) (c + 32) : (uint8_t) c;
	bmp_ready = true;
}

/* the class of code point c, by binary search in the Unicode ranges */
static int
class_search(uint32_t c)
{
	size_t		lo = 0,
				hi = UNICODE_RANGES_COUNT;

	while (lo < hi)
	{
		size_t		mid = (lo + hi) / 2;

		if (c < unicode_ranges[mid].first)
			hi = mid;
		else if (c > unicode_ranges[mid].last)
			lo = mid + 1;
		else
			return unicode_ranges[mid].cls;
	}
	return UC_SEP;
}

/* the case fold of code point c, by binary search in the fold table */
static uint32_t
fold_search(uint32_t c)
{
	size_t		lo = 0,
				hi = UNICODE_FOLDS_COUNT;

	while (lo < hi)
	{
		size_t		mid = (lo + hi) / 2;

		if (c < unicode_folds[mid].from)
			hi = mid;
		else if (c > unicode_folds[mid].from)
			lo = mid + 1;
		else
			return unicode_folds[mid].to;
	}
	return c;
}

/* the class of code point c (table lookup in the BMP) */
static inline int
class_of(uint32_t c)
{
	if (c < 65536)
		return bmp_class[c] & CLASS_MASK;
	return class_search(c);
}

/* code point c case-folded */
static inline uint32_t
fold(uint32_t c)
{
	if (c < 128)
		return (c >= 'A' && c <= 'Z') ? c + 32 : c;
	if (c < 65536 && !(bmp_class[c] & HAS_FOLD))
		return c;
	return fold_search(c);
}

/*
 * SWAR classification of eight bytes: the high bit of each byte of the
 * result is set when that byte is in [lo, hi] (bytes >= 0x80 excluded).
 */
#define SWAR_HIGH UINT64_C(0x8080808080808080)
#define SWAR_REP(c) (UINT64_C(0x0101010101010101) * (uint8_t) (c))

/* high bit of each ASCII byte of x within lo .. hi (eight bytes at once) */
static inline uint64_t
swar_between(uint64_t x, uint8_t lo, uint8_t hi)
{
	uint64_t	ascii = ~x & SWAR_HIGH;
	uint64_t	y = x | SWAR_HIGH;	/* no borrow across bytes */
	uint64_t	ge_lo = (y - SWAR_REP(lo)) & SWAR_HIGH;
	uint64_t	gt_hi = (y - SWAR_REP(hi + 1)) & SWAR_HIGH;

	return ascii & ge_lo & ~gt_hi;
}

static inline uint64_t
swar_upper(uint64_t x)
{
	return swar_between(x, 'A', 'Z');
}

static inline uint64_t
swar_ascii_word(uint64_t x)
{
	return swar_between(x, 'a', 'z') | swar_upper(x) | swar_between(x, '0', '9');
}

#ifdef __SSE2__
/*
 * Sixteen bytes at p at once: *word gets a bit per ASCII letter or digit,
 * *high a bit per byte >= 0x80, and lower[0..15] the bytes with 'A'..'Z'
 * case-folded (lower[16..31] zero).  A range test is one signed compare
 * after an add that moves the range's first byte to -128: letters are the
 * bytes whose x | 0x20 is in 'a'..'z' (which folds them too), digits
 * '0'..'9'; the adds leave bytes >= 0x80 at -65 or above, matching neither.
 */
static inline __attribute__((always_inline)) void
classify16(const unsigned char *p, unsigned *word, unsigned *high,
		   unsigned char lower[32])
{
	__m128i		x = _mm_loadu_si128((const __m128i *) p);
	__m128i		case_bit = _mm_set1_epi8(0x20);
	__m128i		letter = _mm_cmplt_epi8(_mm_add_epi8(_mm_or_si128(x, case_bit),
													 _mm_set1_epi8((char) (0x80 - 'a'))),
										_mm_set1_epi8((char) (-128 + 26)));
	__m128i		digit = _mm_cmplt_epi8(_mm_add_epi8(x, _mm_set1_epi8((char) (0x80 - '0'))),
									   _mm_set1_epi8((char) (-128 + 10)));

	*word = (unsigned) _mm_movemask_epi8(_mm_or_si128(letter, digit));
	*high = (unsigned) _mm_movemask_epi8(x);
	_mm_storeu_si128((__m128i *) lower,
					 _mm_or_si128(x, _mm_and_si128(letter, case_bit)));
	_mm_storeu_si128((__m128i *) (lower + 16), _mm_setzero_si128());
}
#endif

/* code point c as UTF-8 into out; its length */
static inline size_t
encode(uint32_t c, char *out)
{
	if (c < 0x80)
	{
		out[0] = (char) c;
		return 1;
	}
	if (c < 0x800)
	{
		out[0] = (char) (0xC0 | (c >> 6));
		out[1] = (char) (0x80 | (c & 0x3F));
		return 2;
	}
	if (c < 0x10000)
	{
		out[0] = (char) (0xE0 | (c >> 12));
		out[1] = (char) (0x80 | ((c >> 6) & 0x3F));
		out[2] = (char) (0x80 | (c & 0x3F));
		return 3;
	}
	out[0] = (char) (0xF0 | (c >> 18));
	out[1] = (char) (0x80 | ((c >> 12) & 0x3F));
	out[2] = (char) (0x80 | ((c >> 6) & 0x3F));
	out[3] = (char) (0x80 | (c & 0x3F));
	return 4;
}

void
simhash_tokenizer_init(SimhashTokenizer *t, const char *in, size_t inlen,
					   char *out)
{
	if (!bmp_ready)
		build_bmp_class();
	t->in = (const unsigned char *) in;
	t->inlen = inlen;
	t->pos = 0;
	t->out = out;
	t->outlen = 0;
	t->single = false;
	t->ahead_pos = SIZE_MAX;
}

/* Read the character at the cursor: its class and folded code point. */
static inline __attribute__((always_inline)) size_t
peek(const SimhashTokenizer *t, uint32_t *cp, int *cls)
{
	const unsigned char *p = t->in + t->pos;
	size_t		len;
	uint32_t	c;

	/*
	 * U+1000..U+CFFF (Myanmar, Khmer, Kana, Han, Hangul, ...): lead bytes
	 * E1..EC begin no overlong form, surrogate or full-width ASCII, so a
	 * valid sequence needs only its continuation bytes checked.
	 */
	if (p[0] >= 0xE1 && p[0] <= 0xEC && t->inlen - t->pos >= 3 &&
		(p[1] & 0xC0) == 0x80 && (p[2] & 0xC0) == 0x80)
	{
		c = (uint32_t) (p[0] & 0x0F) << 12 | (uint32_t) (p[1] & 0x3F) << 6 | (p[2] & 0x3F);
		len = 3;
	}
	else
	{
		len = simhash_utf8_decode(p, t->inlen - t->pos, cp);
		c = *cp;
		if (c == UINT32_MAX)
		{
			*cls = UC_SEP;
			return len;
		}
		if (c >= 0xFF01 && c <= 0xFF5E)
			c -= 0xFEE0;		/* full-width ASCII */
	}
	*cls = class_of(c);
	*cp = (*cls == UC_SEP) ? c : fold(c);
	return len;
}

/*
 * Keep the character that ended a token (read at pos), which the next call
 * starts with.  The chunk end (inlen) only moves once pos has reached it,
 * so a character read before pos stays valid.
 */
static inline void
remember_ahead(SimhashTokenizer *t, size_t pos, uint32_t c, int cls, size_t n)
{
	t->ahead_pos = pos;
	t->ahead_cp = c;
	t->ahead_cls = cls;
	t->ahead_len = n;
}

/*
 * the next token: normalised into t->out, its start and length; false at the
 * end
 */
static inline __attribute__((always_inline)) bool
tokenizer_next(SimhashTokenizer *t, size_t *start, size_t *len)
{
	/* cursor state in locals: stores through char * would force reloads */
	const unsigned char *in = t->in;
	size_t		inlen = t->inlen;
	size_t		pos = t->pos;
	char	   *out = t->out;
	size_t		outlen = t->outlen;
	uint32_t	c = 0;
	int			cls = UC_SEP;
	size_t		n = 0;
	size_t		begin;

	/*
	 * The non-ASCII character that ended the last token, when it is a letter
	 * or digit, starts this one: nothing to skip (the loop below would reach
	 * the same through its test of ahead_pos).
	 */
	if (pos == t->ahead_pos &&
		(t->ahead_cls == UC_WORD || t->ahead_cls == UC_SINGLE))
	{
		c = t->ahead_cp;
		cls = t->ahead_cls;
		n = t->ahead_len;
	}
	else
	{
		/* skip separators, and marks that follow no token */
		for (;;)
		{
			if (pos >= inlen)
			{
				t->pos = pos;
				return false;
			}
#ifdef __SSE2__

			/*
			 * Sixteen bytes at a time: past ASCII separators, and a whole
			 * ASCII word that an ASCII separator ends within them.  Anything
			 * else (non-ASCII bytes, a word running on) takes the paths
			 * below.
			 */
			if (pos + 16 <= inlen && in[pos] < 0x80)
			{
				unsigned	word,
							high,
							stop,
							s,
							e,
							rest;
				unsigned char lower[32];

				classify16(in + pos, &word, &high, lower);
				stop = word | high;
				if (stop == 0)
				{
					pos += 16;
					continue;
				}
				s = (unsigned) __builtin_ctz(stop);
				rest = ~word & 0xFFFF & ~((1u << s) - 1);
				if ((high >> s & 1) == 0 && rest != 0 &&
					(high >> (e = (unsigned) __builtin_ctz(rest)) & 1) == 0)
				{
					/* out has room for 16-byte stores past the token */
					if (outlen > 0)
						out[outlen++] = ' ';
					memcpy(out + outlen, lower + s, 16);
					t->pos = pos + e;
					t->outlen = outlen + (e - s);
					t->single = false;
					*start = outlen;
					*len = e - s;
					return true;
				}
				pos += s;
			}
#endif
			/* ASCII: the common case */
			if (in[pos] < 0x80)
			{
				if (ascii_map[in[pos]] == 0)
				{
					pos++;
					continue;
				}
				break;
			}
			if (pos == t->ahead_pos)
			{
				/* read by the previous call, where its token ended */
				c = t->ahead_cp;
				cls = t->ahead_cls;
				n = t->ahead_len;
			}
			else
			{
				t->pos = pos;
				n = peek(t, &c, &cls);
			}
			if (cls == UC_WORD || cls == UC_SINGLE)
				break;
			pos += n;
		}

	}

	if (outlen > 0)
		out[outlen++] = ' ';
	begin = outlen;

	t->single = (in[pos] >= 0x80 && cls == UC_SINGLE);
	if (t->single)
	{
		/* a letter of a script without spaces, with its marks */
		if (n == 3 && c < 0x10000 && !(bmp_class[c] & HAS_FOLD) && in[pos] != 0xEF)
		{
			/* as it was (no fold; U+F000.. may be full-width ASCII) */
			memcpy(out + outlen, in + pos, 3);
			outlen += 3;
		}
		else
			outlen += encode(c, out + outlen);
		pos += n;
		while (pos < inlen && in[pos] >= 0x80)
		{
			t->pos = pos;
			n = peek(t, &c, &cls);
			if (cls != UC_MARK)
			{
				remember_ahead(t, pos, c, cls, n);
				break;
			}
			outlen += encode(c, out + outlen);
			pos += n;
		}
	}
	else
	{
		/* a word: letters, digits and marks */
		while (pos < inlen)
		{
			unsigned char b;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			/* eight ASCII bytes at a time */
			while (pos + 8 <= inlen)
			{
				uint64_t	x,
							word;
				unsigned	n8;

				memcpy(&x, in + pos, 8);
				word = swar_ascii_word(x);
				x |= swar_upper(x) >> 2;	/* 'A'..'Z' + 0x20 */
				memcpy(out + outlen, &x, 8);	/* bufsize leaves room */
				if (word == SWAR_HIGH)
				{
					pos += 8;
					outlen += 8;
					continue;
				}
				n8 = (unsigned) __builtin_ctzll(~word & SWAR_HIGH) / 8;
				pos += n8;
				outlen += n8;
				break;
			}
			if (pos >= inlen)
				break;
#endif
			b = in[pos];

			if (b < 0x80)
			{
				uint8_t		k = ascii_map[b];

				if (k == 0)
					break;
				out[outlen++] = (char) k;
				pos++;
				continue;
			}
			t->pos = pos;
			n = peek(t, &c, &cls);
			if (cls == UC_SEP || cls == UC_SINGLE)
			{
				remember_ahead(t, pos, c, cls, n);
				break;
			}
			outlen += encode(c, out + outlen);
			pos += n;
		}
	}
	t->pos = pos;
	t->outlen = outlen;
	*start = begin;
	*len = outlen - begin;
	return true;
}

bool
simhash_tokenizer_next(SimhashTokenizer *t, size_t *start, size_t *len)
{
	return tokenizer_next(t, start, len);
}

/*
 * XXH3-64 with seed 0.  Short inputs (most features) take xxHash's own
 * inlinable short-input paths, which XXH3_64bits would call after a
 * dispatch it cannot inline; test_tokenizer checks the two agree.  The
 * lengths of a letter of a script without spaces (1 to 3 bytes) and of
 * most words (4 to 8) are tested first.
 */
static inline __attribute__((always_inline)) uint64_t
feature_hash(const void *data, size_t len)
{
	if (len - 1 < 3)
		return XXH3_len_1to3_64b(data, len, XXH3_kSecret, 0);
	if (len - 4 < 5)
		return XXH3_len_4to8_64b(data, len, XXH3_kSecret, 0);
	if (len <= 16)
		return XXH3_len_0to16_64b(data, len, XXH3_kSecret, 0);
	if (len <= 128)
		return XXH3_len_17to128_64b(data, len, XXH3_kSecret, sizeof(XXH3_kSecret), 0);
	return XXH3_64bits(data, len);
}

uint64_t
simhash_feature_hash(const void *data, size_t len)
{
	return feature_hash(data, len);
}

uint64_t
simhash_feature_hash_reference(const void *data, size_t len)
{
	return XXH3_64bits(data, len);
}

void
simhash_shingler_init(SimhashShingler *s, const char *in, size_t inlen,
					  char *out, int window, size_t *ring)
{
	simhash_tokenizer_init(&s->tok, in, inlen, out);
	s->window = window;
	s->ring = ring;
	s->next = 0;
	s->ntokens = 0;
	s->last_end = 0;
	s->words = 0;
	s->done = false;
	s->end = inlen;
	s->outsize = 0;
	s->grow = NULL;
}

void
simhash_shingler_init_stream(SimhashShingler *s, const char *in, size_t inlen,
							 char *out, size_t outsize, int window,
							 size_t *ring, void *(*grow) (void *ptr, size_t size))
{
	simhash_shingler_init(s, in, inlen, out, window, ring);
	s->outsize = outsize;
	s->grow = grow;
	s->tok.inlen = 0;			/* the first chunk is chosen by refill() */
}

/*
 * Can a chunk end before in[q]?  Yes when the character starting there
 * ends any token and starts none that could join the one before: a
 * separator (an invalid byte included) or a letter of a script without
 * spaces.  Every byte that is not a UTF-8 continuation byte starts a
 * character in the tokenizer's decoding, and decoding before q never
 * looks at q, so a chunk ending there yields the same tokens.
 */
static bool
chunk_boundary(const SimhashTokenizer *t, size_t end, size_t q)
{
	SimhashTokenizer at = *t;
	uint32_t	c;
	int			cls;

	if (t->in[q] < 0x80)
		return ascii_map[t->in[q]] == 0;
	if ((t->in[q] & 0xC0) == 0x80)
		return false;
	at.pos = q;
	at.inlen = end;
	(void) peek(&at, &c, &cls);
	return cls == UC_SEP || cls == UC_SINGLE;
}

/*
 * Streaming: drop the normalised text no later shingle needs, then extend
 * the input to the next chunk, growing the buffer when no token boundary
 * fits in it.  A chunk of n input bytes writes at most 2n + 1 bytes (+8
 * for the eight-byte stores), as simhash_tokenizer_bufsize() assumes.
 */
static void
refill(SimhashShingler *s)
{
	SimhashTokenizer *t = &s->tok;
	size_t		keep,
				nring = s->ntokens < (uint64_t) s->window ? (size_t) s->ntokens : (size_t) s->window;

	/* the oldest token start in the ring is the first byte still needed */
	keep = t->outlen;
	for (size_t i = 0; i < nring; i++)
		if (s->ring[i] < keep)
			keep = s->ring[i];
	if (keep > 0)
	{
		memmove(t->out, t->out + keep, t->outlen - keep);
		t->outlen -= keep;
		for (size_t i = 0; i < nring; i++)
			s->ring[i] -= keep;
		s->last_end -= keep;
	}

	for (;;)
	{
		size_t		room = s->outsize - t->outlen;
		size_t		n = room > 32 ? (room - 32) / 2 : 0;

		if (n >= s->end - t->pos)
		{
			t->inlen = s->end;
			return;
		}
		if (n >= SIMHASH_STREAM_MIN_BUF / 4)
		{
			for (size_t q = t->pos + n; q > t->pos; q--)
			{
				if (chunk_boundary(t, s->end, q))
				{
					t->inlen = q;
					return;
				}
			}
		}
		/* one long run of tokens: a larger buffer */
		s->outsize *= 2;
		t->out = s->grow(t->out, s->outsize);
	}
}

/*
 * The shingler's loop; cjk (when not NULL) receives, per shingle, whether all
 * its tokens were "single" (the tokenizer's flag), tracked as a bit per token
 * of the last 64 in words.  The tokenizer and the shingler's counters live
 * in locals during the loop (the normalised text's char stores would
 * otherwise force their reloads) and go back to *s before a refill and at
 * the end.  fixed_window, when not 0, is s->window known at compile time
 * (the callers' common case, window 1 without spans, then needs no ring
 * lookups and fewer registers).
 */
static inline __attribute__((always_inline)) size_t
shingler_next(SimhashShingler *s, uint64_t *hashes, size_t *spans, bool *cjk,
			  size_t max, int fixed_window)
{
	SimhashTokenizer tok = s->tok;
	size_t	   *ring = s->ring;
	int			window = fixed_window ? fixed_window : s->window;
	int			next = window == 1 ? 0 : s->next;	/* 0 for window 1 */
	uint64_t	ntokens = s->ntokens;
	size_t		last_end = s->last_end;
	uint64_t	words = s->words;
	size_t		produced = 0;
	size_t		start,
				len;
	size_t		hashed = 0;
	uint64_t	w = (uint64_t) window;
	uint64_t	wmask = (w >= 64) ? ~UINT64_C(0) : (UINT64_C(1) << w) - 1;

	if (s->done)
		return 0;
	while (produced < max && hashed < SIMHASH_SHINGLER_CALL_BYTES)
	{
		if (!tokenizer_next(&tok, &start, &len))
		{
			if (s->outsize != 0 && tok.pos < s->end)
			{
				/* streaming: the next chunk (refill moves the text) */
				s->tok = tok;
				s->next = next;
				s->ntokens = ntokens;
				s->last_end = last_end;
				refill(s);
				tok = s->tok;
				last_end = s->last_end;
				continue;
			}
			s->done = true;
			/* fewer tokens than the window: one shingle of them all */
			if (ntokens > 0 && ntokens < w)
			{
				if (spans)
				{
					spans[2 * produced] = ring[0];
					spans[2 * produced + 1] = last_end - ring[0];
				}
				if (cjk)
					cjk[produced] = ntokens <= 64 && (words & wmask) == 0;
				hashes[produced++] = feature_hash(tok.out + ring[0],
												  last_end - ring[0]);
			}
			break;
		}
		/* ring[next] holds the oldest of the last `window` token starts */
		ring[next] = start;
		if (++next == window)
			next = 0;
		ntokens++;
		last_end = start + len;
		if (cjk)
			words = (words << 1) | !tok.single;
		if (ntokens >= w)
		{
			size_t		first = ring[next];

			if (spans)
			{
				spans[2 * produced] = first;
				spans[2 * produced + 1] = last_end - first;
			}
			if (cjk)
				cjk[produced] = w <= 64 && (words & wmask) == 0;
			hashes[produced++] = feature_hash(tok.out + first, last_end - first);
			hashed += last_end - first;
		}
	}
	s->tok = tok;
	s->next = next;
	s->ntokens = ntokens;
	s->last_end = last_end;
	s->words = words;
	return produced;
}

size_t
simhash_shingler_next(SimhashShingler *s, uint64_t *hashes, size_t *spans,
					  size_t max)
{
	if (spans == NULL && s->window == 1)
		return shingler_next(s, hashes, NULL, NULL, max, 1);
	return shingler_next(s, hashes, spans, NULL, max, 0);
}

size_t
simhash_shingler_next_cjk(SimhashShingler *s, uint64_t *hashes, size_t *spans,
						  bool *cjk, size_t max)
{
	if (spans == NULL && s->window == 1)
		return shingler_next(s, hashes, NULL, cjk, max, 1);
	return shingler_next(s, hashes, spans, cjk, max, 0);
}
