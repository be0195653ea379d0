/*
 * tokenizer.h
 *		Text to features: the locale-independent Unicode tokenizer and the
 *		shingler.  Pure C: no PostgreSQL headers.
 *
 * Tokens (fixed forever; stored fingerprints depend on them):
 *	- input is UTF-8; each byte of an invalid sequence is a separator;
 *	- full-width ASCII (U+FF01..U+FF5E) is read as ASCII;
 *	- letters and digits (Unicode L*, N*) form words, combining marks (M*)
 *	  extend the current token, everything else separates;
 *	- letters of Han, Hiragana, Katakana, Hangul, Bopomofo, Thai, Lao, Khmer
 *	  and Myanmar (scripts written without spaces) are a token each, with
 *	  any combining marks that follow;
 *	- every character is case-folded (Unicode simple case folding).
 * Character classes and folding come from Unicode 15.0.0 (unicode_table.h).
 *
 * The tokenizer writes the normalised text: the tokens separated by single
 * spaces.  A shingle of w tokens is then a substring of that buffer, equal
 * to the tokens joined by ' ', and is hashed in place with XXH3-64 (seed 0).
 */
#ifndef SIMHASH_TOKENIZER_H
#define SIMHASH_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct SimhashTokenizer
{
	const unsigned char *in;	/* UTF-8 input */
	size_t		inlen;
	size_t		pos;			/* next input byte */
	char	   *out;			/* normalised text, simhash_tokenizer_bufsize() */
	size_t		outlen;			/* bytes written to out */
	bool		single;			/* the last token is a letter of a script
								 * written without spaces (a "CJK" token) */
	/* the non-ASCII character that ended the last token, already read */
	size_t		ahead_pos;		/* its offset in; SIZE_MAX: none */
	uint32_t	ahead_cp;		/* as peek() returns it: folded, class */
	int			ahead_cls;
	size_t		ahead_len;
} SimhashTokenizer;

/* Output buffer size needed for an input of inlen bytes. */
static inline size_t
simhash_tokenizer_bufsize(size_t inlen)
{
	return 2 * inlen + 32;		/* 16-byte stores may pass the end */
}

extern void simhash_tokenizer_init(SimhashTokenizer *t, const char *in,
								   size_t inlen, char *out);
/* Next token as out[*start .. *start + *len); false at the end. */
extern bool simhash_tokenizer_next(SimhashTokenizer *t, size_t *start,
								   size_t *len);

/* XXH3-64, seed 0: the feature hash (and xxHash's own entry, for tests). */
extern uint64_t simhash_feature_hash(const void *data, size_t len);
extern uint64_t simhash_feature_hash_reference(const void *data, size_t len);

#define SIMHASH_MAX_WINDOW 1024

/*
 * Shingler: hashes of the overlapping windows of `window` tokens.  When the
 * text has fewer tokens than the window (but at least one), one shingle of
 * all its tokens.  ring must have room for `window` entries.
 */
typedef struct SimhashShingler
{
	SimhashTokenizer tok;
	int			window;
	size_t	   *ring;			/* start offsets of the last `window` tokens */
	int			next;			/* where the next token start goes */
	uint64_t	ntokens;
	size_t		last_end;		/* end offset of the latest token */
	uint64_t	words;			/* bit k: token k (mod 64) was not "CJK" */
	bool		done;
	/* streaming (simhash_shingler_init_stream); outsize 0 otherwise */
	size_t		end;			/* input length; tok.inlen ends the chunk */
	size_t		outsize;		/* bytes of tok.out */
	void	   *(*grow) (void *ptr, size_t size);	/* realloc of tok.out */
} SimhashShingler;

extern void simhash_shingler_init(SimhashShingler *s, const char *in,
								  size_t inlen, char *out, int window,
								  size_t *ring);

/*
 * Streaming shingler: the same hashes as simhash_shingler_init, with a
 * bounded buffer.  The input is tokenized in chunks that end at token
 * boundaries (before a separator or a letter of a script without spaces),
 * and the normalised text the next shingles no longer need is dropped
 * before each chunk.  The buffer (out, outsize bytes, at least
 * SIMHASH_STREAM_MIN_BUF) grows through grow() (a realloc) only when one
 * window of tokens does not fit, so memory follows the longest shingle,
 * not the text.  spans must be NULL (the buffer moves).
 */
#define SIMHASH_STREAM_MIN_BUF 4096

extern void simhash_shingler_init_stream(SimhashShingler *s, const char *in,
										 size_t inlen, char *out,
										 size_t outsize, int window,
										 size_t *ring,
										 void *(*grow) (void *ptr, size_t size));

/*
 * Up to max feature hashes into hashes[]; returns how many, 0 at the end.
 * When spans is not NULL, spans[2k] and spans[2k+1] receive the offset and
 * length of shingle k in the normalised text (s->tok.out).  A call also
 * returns early (with at least one hash) once it has hashed
 * SIMHASH_SHINGLER_CALL_BYTES bytes, so that callers check for interrupts
 * often even when shingles are very long.
 */
#define SIMHASH_SHINGLER_CALL_BYTES ((size_t) 1 << 24)
extern size_t simhash_shingler_next(SimhashShingler *s, uint64_t *hashes,
									size_t *spans, size_t max);
/*
 * The same, and cjk[k] = true when every token of shingle k is a letter of a
 * script written without spaces (Han, Kana, Hangul, Thai, ...), as
 * simhash_v2's weighting needs.  Windows above 64 tokens are never "CJK".
 */
extern size_t simhash_shingler_next_cjk(SimhashShingler *s, uint64_t *hashes,
										size_t *spans, bool *cjk, size_t max);

/*
 * Decode one UTF-8 character at p (n > 0 bytes available).  Returns its length,
 * and sets *cp to the code point, or to UINT32_MAX for an invalid byte
 * (overlong forms, surrogates, values above U+10FFFF, truncated sequences).
 */
static inline __attribute__((always_inline)) size_t
simhash_utf8_decode(const unsigned char *p, size_t n, uint32_t *cp)
{
	unsigned char b = p[0];
	uint32_t	c;
	size_t		len;

	if (b < 0x80)
	{
		*cp = b;
		return 1;
	}
	if (b >= 0xC2 && b <= 0xDF)
	{
		len = 2;
		c = b & 0x1F;
	}
	else if (b >= 0xE0 && b <= 0xEF)
	{
		len = 3;
		c = b & 0x0F;
	}
	else if (b >= 0xF0 && b <= 0xF4)
	{
		len = 4;
		c = b & 0x07;
	}
	else
		goto invalid;
	if (len > n)
		goto invalid;
	for (size_t i = 1; i < len; i++)
	{
		if ((p[i] & 0xC0) != 0x80)
			goto invalid;
		c = (c << 6) | (p[i] & 0x3F);
	}
	if ((len == 3 && (c < 0x800 || (c >= 0xD800 && c <= 0xDFFF))) ||
		(len == 4 && (c < 0x10000 || c > 0x10FFFF)))
		goto invalid;
	*cp = c;
	return len;

invalid:
	*cp = UINT32_MAX;
	return 1;
}


#endif							/* SIMHASH_TOKENIZER_H */
