/*
 * minhash.h
 *		MinHash signatures and LSH banding: shingling (Unicode characters or
 *		tokenizer terms), the shingle hash, one-permutation hashing with fast
 *		densification, the Jaccard estimate, band keys and the LSH parameter
 *		search.  Pure C: no PostgreSQL headers, so that other C code (the
 *		table-scale dedup job) can compute and compare signatures directly.
 *
 * The algorithm (version 1; frozen: stored signatures depend on it)
 * ---------------------------------------------------------------
 * Shingles.  n_gram_type 'term': the tokens of tokenizer.h, a shingle is
 * n_gram consecutive tokens joined by one space (as simhash_shingle).
 * n_gram_type 'char': the same tokens joined into one text, with one space
 * where the input had at least one separator between two tokens and
 * nothing where it had none (between Han characters, say); a shingle is
 * n_gram consecutive Unicode characters of that text.  Either way a text
 * with fewer units than n_gram (but at least one) has one shingle: all of
 * them.  n_gram_type 'feature' (minhash(text[])): each array element is a
 * shingle, its UTF-8 bytes as they are.
 *
 * Shingle hash.  h = XXH3-64 of the shingle's UTF-8 bytes with the seed
 * (seed 0 included: XXH3's seed 0, the feature hash of tokenizer.h).
 *
 * Slots (one-permutation hashing).  With k = permutations slots, shingle h
 * goes to slot ((h >> 32) * k) >> 32 with value v = h mod 2^32, except that
 * 0xFFFFFFFF counts as 0xFFFFFFFE; each slot keeps the smallest value it
 * receives.  Slots that received nothing are empty (0xFFFFFFFF).
 *
 * Densification (Mai et al., "On densification for minwise hashing", UAI
 * 2019: the "fast" reverse scheme).  For rounds t = 1, 2, ... and, within
 * a round, each slot j that was not empty after the shingles, in
 * increasing j: g = XXH3-64 of the 8 bytes le32(j) || le32(t) with seed
 * (seed XOR 0x9E3779B97F4A7C15); slot i = ((g >> 32) * k) >> 32; if slot i
 * is still empty it takes slot j's value.  Stop when no slot is empty.  For
 * two sets A and B a slot then holds equal values with probability
 * |A ∩ B| / |A ∪ B| (up to 32-bit value collisions), and the work is
 * O(k log k) however few shingles there are.
 *
 * A text without shingles has an empty signature (no slots): its Jaccard
 * estimate with anything, itself included, is 0 and it has no band keys.
 *
 * Serialised form (after the varlena header; all integers little-endian):
 *	byte 0		version (1)
 *	byte 1		n_gram_type (0 char, 1 term, 2 feature)
 *	byte 2		flags (bit 0: empty, no slots follow)
 *	byte 3		0
 *	bytes 4-5	n_gram
 *	bytes 6-7	permutations (k)
 *	bytes 8-15	seed (int64)
 *	bytes 16-	k slots, uint32 each (absent when empty)
 *
 * Band keys.  With rows r per band, band b (0-based) covers slots
 * [b r, b r + r); its key is (b << 48) | (XXH3-64 of the band's 4r
 * serialised bytes, seed 0) >> 16, as a signed 64-bit integer: the top 16
 * bits are the band number, so keys of different bands never collide.
 */
#ifndef SIMHASH_MINHASH_H
#define SIMHASH_MINHASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tokenizer.h"

#define MINHASH_VERSION			1
#define MINHASH_MAX_NGRAM		SIMHASH_MAX_WINDOW	/* 1024 */
#define MINHASH_MAX_PERMUTATIONS 8192
#define MINHASH_HEADER_SIZE		16
#define MINHASH_EMPTY_SLOT		UINT32_MAX
#define MINHASH_FLAG_EMPTY		0x01

typedef enum MinhashNgramType
{
	MINHASH_CHAR = 0,
	MINHASH_TERM = 1,
	MINHASH_FEATURE = 2
} MinhashNgramType;

#define MINHASH_NGRAM_TYPES		3

/* What a signature records; two signatures are comparable when equal. */
typedef struct MinhashParams
{
	int			version;
	int			n_gram_type;	/* MinhashNgramType */
	int			n_gram;
	int			permutations;
	int64_t		seed;
} MinhashParams;

/* 'char', 'term', 'feature'; NULL for an unknown type */
extern const char *minhash_ngram_type_name(int type);
/* -1 when name (len bytes) is not one of them */
extern int	minhash_ngram_type_from_name(const char *name, size_t len);

/* ---- serialised signatures (the bytes after the varlena header) ---- */

static inline size_t
minhash_size(int permutations, bool empty)
{
	return MINHASH_HEADER_SIZE + (empty ? 0 : 4 * (size_t) permutations);
}

extern void minhash_write_header(uint8_t *dst, const MinhashParams *p,
								 bool empty);

/*
 * Parse and validate a header read from len bytes; NULL when valid, else
 * what is wrong (a static string).
 */
extern const char *minhash_read_header(const uint8_t *src, size_t len,
									   MinhashParams *p, bool *empty);

/*
 * The slots of a non-empty signature: densification fills every slot, so
 * none is MINHASH_EMPTY_SLOT (values are at most 0xFFFFFFFE).  A signature
 * of k empty-slot markers is not a signature of anything (the empty one
 * has no slots and the empty flag).  The slot number (1-based) of the
 * first invalid slot, 0 when all are valid.
 */
extern int	minhash_invalid_slot(const uint32_t *slots, int k);

/*
 * The text form: "v1 n_gram=9 n_gram_type=char permutations=128 seed=0
 * slots=" then "empty" or k comma-separated 8-digit hex values.  NULL when
 * valid (slots, room for MINHASH_MAX_PERMUTATIONS, filled unless *empty);
 * else what is wrong, written into detail (size bytes).
 */
extern const char *minhash_parse_text(const char *str, MinhashParams *p,
									  bool *empty, uint32_t *slots,
									  char *detail, size_t size);

/*
 * The binary form (network byte order): version, n_gram_type, flags
 * (bytes), n_gram, permutations (int16), seed (int64), then k int32 slots
 * unless empty, from buf[*pos .. len) (advancing *pos).  NULL when valid;
 * else what is wrong (minhash_binary_short when the message ends
 * too early).
 */
extern const char minhash_binary_short[];
extern const char *minhash_parse_binary(const uint8_t *buf, size_t len,
										size_t *pos, MinhashParams *p,
										bool *empty, uint32_t *slots);

extern bool minhash_params_equal(const MinhashParams *a,
								 const MinhashParams *b);

/* "n_gram=9 n_gram_type=char permutations=128 seed=0 (v1)" */
extern void minhash_format_params(char *buf, size_t size,
								  const MinhashParams *p);

/* slot i of serialised slots, and the reverse */
static inline uint32_t
minhash_get_slot(const uint8_t *slots, int i)
{
	const uint8_t *p = slots + 4 * (size_t) i;

	return (uint32_t) p[0] | ((uint32_t) p[1] << 8) |
		((uint32_t) p[2] << 16) | ((uint32_t) p[3] << 24);
}

extern void minhash_store_slots(uint8_t *dst, const uint32_t *slots, int k);

/* ---- signatures ---- */

/* XXH3-64 with a seed: the shingle hash */
extern uint64_t minhash_hash(const void *data, size_t len, uint64_t seed);

typedef struct MinhashSketch
{
	uint32_t   *slots;			/* k values, the caller's memory */
	int			k;
	uint64_t	seed;
	uint64_t	nhashes;		/* shingles added (with repeats) */
} MinhashSketch;

extern void minhash_sketch_init(MinhashSketch *s, uint32_t *slots, int k,
								uint64_t seed);
extern void minhash_sketch_add(MinhashSketch *s, const uint64_t *hashes,
							   size_t n);

/*
 * Densify the empty slots; false when no shingle was added (the signature
 * is empty).  work must have room for k ints.
 */
extern bool minhash_sketch_finish(MinhashSketch *s, int *work);

/* equal slots of two serialised slot arrays of k slots each */
extern int	minhash_equal_slots(const uint8_t *a, const uint8_t *b, int k);

/* band keys of serialised slots: keys[0 .. bands) */
extern void minhash_band_keys(const uint8_t *slots, int bands, int rows,
							  int64_t *keys);

/* bands (of rows slots) in which a and b are equal */
extern int	minhash_shared_bands(const uint8_t *a, const uint8_t *b,
								 int bands, int rows);

/* ---- shingling ---- */

/* Work buffer size for a text of inlen bytes (char and term shingles). */
static inline size_t
minhash_bufsize(size_t inlen)
{
	return 2 * simhash_tokenizer_bufsize(inlen);	/* char: text + scratch */
}

/*
 * Shingler over a UTF-8 text: hashes of its shingles (char or term, with
 * repeats, in text order).  buf: minhash_bufsize(inlen) bytes; ring: room
 * for n_gram entries (used by term shingles).  For char shingles the
 * normalised text is built at init time, in buf.
 */
typedef struct MinhashShingler
{
	int			type;
	int			n_gram;
	uint64_t	seed;
	SimhashTokenizer tok;		/* term shingles */
	const char *text;			/* normalised text (char shingles) */
	size_t		textlen;
	size_t		pos;			/* next byte of text (char) */
	size_t	   *ring;			/* term: starts of the last n_gram tokens */
	int			next;
	uint64_t	nunits;			/* characters or tokens so far */
	size_t		last_end;		/* term: end of the latest token; char: the
								 * start of the next shingle */
	bool		done;
} MinhashShingler;

extern void minhash_shingler_init(MinhashShingler *s, int type, int n_gram,
								  uint64_t seed, const char *in, size_t inlen,
								  char *buf, size_t *ring);

/*
 * Up to max shingle hashes; 0 at the end.  When spans is not NULL,
 * spans[2i], spans[2i + 1] receive the offset and length of shingle i in
 * minhash_shingler_text().
 */
extern size_t minhash_shingler_next(MinhashShingler *s, uint64_t *hashes,
									size_t *spans, size_t max);

/* the text the spans refer to */
static inline const char *
minhash_shingler_text(const MinhashShingler *s)
{
	return s->type == MINHASH_CHAR ? s->text : s->tok.out;
}

/*
 * A text's signature in one call (for C callers; the SQL function runs the
 * same steps with interrupt checks): the shingles of type and n_gram of
 * the UTF-8 text, hashed with seed, into k slots.  buf: minhash_bufsize(len)
 * bytes; ring: n_gram entries; work: k ints.  False when the text has no
 * shingles (the signature is empty).  Serialise with minhash_write_header
 * and minhash_store_slots.
 */
extern bool minhash_text_slots(const char *text, size_t len, int type,
							   int n_gram, int k, uint64_t seed, char *buf,
							   size_t *ring, uint32_t *slots, int *work);

/*
 * The normalised text of char shingles (see above) of in[0 .. inlen) into
 * buf (minhash_bufsize(inlen) bytes); returns its length.
 */
extern size_t minhash_char_text(const char *in, size_t inlen, char *buf);

/*
 * Called by minhash_char_text() (so by minhash_shingler_init() for char
 * shingles, which normalises the whole text at once) at least every 16 MB
 * of ASCII and every 65536 tokens of other text, if not NULL: the server
 * checks for interrupts there.
 */
extern void (*minhash_check_hook) (void);

/* ---- exact Jaccard of hash sets ---- */

/*
 * Sort (an in-place radix sort: no second array) and deduplicate in place;
 * returns the distinct count.  check, if not NULL, is called with arg at
 * least every million values the sort handles (the server checks for
 * interrupts there).
 */
extern size_t minhash_hash_set(uint64_t *hashes, size_t n,
							   void (*check) (void *), void *arg);

/*
 * |A ∩ B| / |A ∪ B| of two sets made by minhash_hash_set; 0 when both are
 * empty.
 */
extern double minhash_set_jaccard(const uint64_t *a, size_t na,
								  const uint64_t *b, size_t nb);

/* ---- LSH parameters ---- */

/* probability that a pair of Jaccard s shares a band: 1 - (1 - s^r)^b */
extern double minhash_lsh_probability(double s, int bands, int rows);

/*
 * datasketch's error areas under the S-curve: false_positive =
 * integral over [0, t] of P(s), false_negative = integral over [t, 1] of
 * 1 - P(s).
 */
extern void minhash_lsh_errors(double threshold, int bands, int rows,
							   double *false_positive, double *false_negative);

#endif							/* SIMHASH_MINHASH_H */
