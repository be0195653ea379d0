/*
 * minhash.c
 *		MinHash signatures and LSH banding (see minhash.h for the algorithm,
 *		which is frozen): shingling, the shingle hash, one-permutation
 *		hashing with fast densification, the estimate, band keys, exact
 *		Jaccard of hash sets and the LSH S-curve.  Pure C: no PostgreSQL
 *		headers.
 *
 * One file of about 900 lines on purpose: it is the single implementation
 * of MinHash version 1, whose every part -- the serialised form, the
 * shingles, the hashes and the densification -- decides stored signatures
 * and must never change.  Kept together, the frozen definition is read,
 * unit-tested (test/unit/test_minhash.c) and fuzzed (fuzz_minhash,
 * fuzz_input) as one unit; the sections below follow minhash.h's order.
 */
#include "minhash.h"
#include "input.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#define DENSIFY_SEED_XOR UINT64_C(0x9E3779B97F4A7C15)

static const char *const type_names[MINHASH_NGRAM_TYPES] = {"char", "term", "feature"};

const char *
minhash_ngram_type_name(int type)
{
	if (type < 0 || type >= MINHASH_NGRAM_TYPES)
		return NULL;
	return type_names[type];
}

int
minhash_ngram_type_from_name(const char *name, size_t len)
{
	for (int i = 0; i < MINHASH_NGRAM_TYPES; i++)
		if (strlen(type_names[i]) == len && memcmp(type_names[i], name, len) == 0)
			return i;
	return -1;
}

/* ---- serialised form ---- */

/* v's low 16 bits at p, little-endian */
static inline void
put_le16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t) v;
	p[1] = (uint8_t) (v >> 8);
}

static inline uint32_t
get_le16(const uint8_t *p)
{
	return (uint32_t) p[0] | ((uint32_t) p[1] << 8);
}

/* v at p, little-endian */
static inline void
put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t) v;
	p[1] = (uint8_t) (v >> 8);
	p[2] = (uint8_t) (v >> 16);
	p[3] = (uint8_t) (v >> 24);
}

void
minhash_write_header(uint8_t *dst, const MinhashParams *p, bool empty)
{
	uint64_t	seed = (uint64_t) p->seed;

	dst[0] = (uint8_t) p->version;
	dst[1] = (uint8_t) p->n_gram_type;
	dst[2] = empty ? MINHASH_FLAG_EMPTY : 0;
	dst[3] = 0;
	put_le16(dst + 4, (uint32_t) p->n_gram);
	put_le16(dst + 6, (uint32_t) p->permutations);
	for (int i = 0; i < 8; i++)
		dst[8 + i] = (uint8_t) (seed >> (8 * i));
}

const char *
minhash_read_header(const uint8_t *src, size_t len, MinhashParams *p,
					bool *empty)
{
	uint64_t	seed = 0;

	if (len < MINHASH_HEADER_SIZE)
		return "signature is too short";
	p->version = src[0];
	p->n_gram_type = src[1];
	p->n_gram = (int) get_le16(src + 4);
	p->permutations = (int) get_le16(src + 6);
	for (int i = 0; i < 8; i++)
		seed |= (uint64_t) src[8 + i] << (8 * i);
	p->seed = (int64_t) seed;
	*empty = (src[2] & MINHASH_FLAG_EMPTY) != 0;
	if (p->version != MINHASH_VERSION)
		return "unknown signature version";
	if (p->n_gram_type >= MINHASH_NGRAM_TYPES)
		return "unknown n_gram_type";
	if ((src[2] & ~MINHASH_FLAG_EMPTY) != 0 || src[3] != 0)
		return "unknown flags";
	if (p->n_gram < 1 || p->n_gram > MINHASH_MAX_NGRAM ||
		(p->n_gram_type == MINHASH_FEATURE && p->n_gram != 1))
		return "n_gram out of range";
	if (p->permutations < 1 || p->permutations > MINHASH_MAX_PERMUTATIONS)
		return "permutations out of range";
	if (len != minhash_size(p->permutations, *empty))
		return "length does not match permutations";
	return NULL;
}

int
minhash_invalid_slot(const uint32_t *slots, int k)
{
	for (int i = 0; i < k; i++)
		if (slots[i] == MINHASH_EMPTY_SLOT)
			return i + 1;
	return 0;
}

/* "key=" then a decimal integer in [lo, hi] at *p (advanced) */
static const char *
parse_field(const char **p, const char *key, int64_t lo, int64_t hi,
			int64_t *value, char *detail, size_t size)
{
	size_t		klen = strlen(key);
	const char *s = *p;
	bool		neg = false;
	uint64_t	v = 0;
	int			digits = 0;

	while (simhash_is_space(*s))
		s++;
	if (strncmp(s, key, klen) != 0 || s[klen] != '=')
		return snprintf(detail, size, "Expected \"%s=\".", key), detail;
	s += klen + 1;
	if (*s == '-')
	{
		neg = true;
		s++;
	}
	for (; *s >= '0' && *s <= '9'; s++, digits++)
	{
		if (v > (UINT64_C(1) << 63) / 10)
			return snprintf(detail, size, "%s is out of range.", key), detail;
		v = v * 10 + (uint64_t) (*s - '0');
	}
	if (digits == 0 || (*s != '\0' && !simhash_is_space(*s)) ||
		v > (neg ? (UINT64_C(1) << 63) : (uint64_t) INT64_MAX))
		return snprintf(detail, size, "%s must be an integer.", key), detail;
	*p = s;
	if (neg)
	{
		int64_t		r = (v == (UINT64_C(1) << 63)) ? INT64_MIN : -(int64_t) v;

		if (r < lo)
			return snprintf(detail, size, "%s is out of range.", key), detail;
		*value = r;
		return NULL;
	}
	if ((int64_t) v < lo || (int64_t) v > hi)
		return snprintf(detail, size, "%s must be between %lld and %lld.", key,
						(long long) lo, (long long) hi), detail;
	*value = (int64_t) v;
	return NULL;
}

const char *
minhash_parse_text(const char *str, MinhashParams *params, bool *empty,
				   uint32_t *slots, char *detail, size_t size)
{
	const char *p = str;
	const char *problem;
	int64_t		v;
	size_t		tlen;
	int			bad;

	*empty = false;
	while (simhash_is_space(*p))
		p++;
	if (p[0] != 'v' || p[1] != '1' || !simhash_is_space(p[2]))
		return "Expected the version \"v1\".";
	params->version = MINHASH_VERSION;
	p += 2;
	if ((problem = parse_field(&p, "n_gram", 1, MINHASH_MAX_NGRAM, &v, detail, size)))
		return problem;
	params->n_gram = (int) v;

	while (simhash_is_space(*p))
		p++;
	if (strncmp(p, "n_gram_type=", 12) != 0)
		return "Expected \"n_gram_type=\".";
	p += 12;
	for (tlen = 0; p[tlen] && !simhash_is_space(p[tlen]); tlen++)
		;
	params->n_gram_type = minhash_ngram_type_from_name(p, tlen);
	if (params->n_gram_type < 0)
		return "n_gram_type must be char, term or feature.";
	if (params->n_gram_type == MINHASH_FEATURE && params->n_gram != 1)
		return "n_gram must be 1 for n_gram_type feature.";
	p += tlen;

	if ((problem = parse_field(&p, "permutations", 1, MINHASH_MAX_PERMUTATIONS, &v, detail, size)))
		return problem;
	params->permutations = (int) v;
	if ((problem = parse_field(&p, "seed", INT64_MIN, INT64_MAX, &v, detail, size)))
		return problem;
	params->seed = v;

	while (simhash_is_space(*p))
		p++;
	if (strncmp(p, "slots=", 6) != 0)
		return "Expected \"slots=\".";
	p += 6;
	if (strncmp(p, "empty", 5) == 0)
	{
		*empty = true;
		p += 5;
	}
	else
	{
		for (int i = 0; i < params->permutations; i++)
		{
			uint32_t	s = 0;
			int			digits;

			if (i > 0)
			{
				if (*p != ',')
					return snprintf(detail, size, "Expected %d slots, found %d.",
									params->permutations, i), detail;
				p++;
			}
			for (digits = 0; digits < 8 && simhash_hex_value(*p) >= 0; digits++, p++)
				s = (s << 4) | (uint32_t) simhash_hex_value(*p);
			if (digits != 8)
				return snprintf(detail, size, "Slot %d is not 8 hexadecimal digits.", i + 1), detail;
			slots[i] = s;
		}
	}
	while (simhash_is_space(*p))
		p++;
	if (*p != '\0')
		return snprintf(detail, size, "Unexpected \"%.40s\" after the slots (permutations=%d).",
						p, params->permutations), detail;
	if (!*empty && (bad = minhash_invalid_slot(slots, params->permutations)) != 0)
		return snprintf(detail, size, "Slot %d is ffffffff, the empty-slot marker: a signature with slots has none (a text without shingles has slots=empty).", bad), detail;
	return NULL;
}

const char minhash_binary_short[] = "the message ends too early";

const char *
minhash_parse_binary(const uint8_t *buf, size_t len, size_t *pos,
					 MinhashParams *params, bool *empty, uint32_t *slots)
{
	uint8_t		header[MINHASH_HEADER_SIZE] = {0};
	uint64_t	version,
				type,
				flags,
				n_gram,
				perms,
				seed;
	const char *problem;

	/* simhash_read_be: SIMHASH_INPUT_OK (0), or SHORT */
	if (simhash_read_be(buf, len, pos, 1, &version) || simhash_read_be(buf, len, pos, 1, &type) ||
		simhash_read_be(buf, len, pos, 1, &flags) || simhash_read_be(buf, len, pos, 2, &n_gram) ||
		simhash_read_be(buf, len, pos, 2, &perms) || simhash_read_be(buf, len, pos, 8, &seed))
		return minhash_binary_short;
	header[0] = (uint8_t) version;
	header[1] = (uint8_t) type;
	header[2] = (uint8_t) flags;
	put_le16(header + 4, (uint32_t) n_gram);
	put_le16(header + 6, (uint32_t) perms);
	for (int i = 0; i < 8; i++)
		header[8 + i] = (uint8_t) (seed >> (8 * i));
	/* the slots are read below: pass the length they will have */
	problem = minhash_read_header(header, minhash_size((int) perms, (flags & MINHASH_FLAG_EMPTY) != 0),
								  params, empty);
	if (problem)
		return problem;
	if (!*empty)
	{
		for (int i = 0; i < params->permutations; i++)
		{
			uint64_t	v;

			if (simhash_read_be(buf, len, pos, 4, &v) != SIMHASH_INPUT_OK)
				return minhash_binary_short;
			slots[i] = (uint32_t) v;
		}
		if (minhash_invalid_slot(slots, params->permutations))
			return "a slot is the empty-slot marker ffffffff";
	}
	return NULL;
}

bool
minhash_params_equal(const MinhashParams *a, const MinhashParams *b)
{
	return a->version == b->version && a->n_gram_type == b->n_gram_type &&
		a->n_gram == b->n_gram && a->permutations == b->permutations &&
		a->seed == b->seed;
}

void
minhash_format_params(char *buf, size_t size, const MinhashParams *p)
{
	const char *type = minhash_ngram_type_name(p->n_gram_type);

	snprintf(buf, size, "n_gram=%d n_gram_type=%s permutations=%d seed=%lld (v%d)",
			 p->n_gram, type ? type : "?", p->permutations,
			 (long long) p->seed, p->version);
}

void
minhash_store_slots(uint8_t *dst, const uint32_t *slots, int k)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(dst, slots, 4 * (size_t) k);
#else
	for (int i = 0; i < k; i++)
		put_le32(dst + 4 * (size_t) i, slots[i]);
#endif
}

/* ---- hashing ---- */

/*
 * XXH3-64 with a seed.  Inputs of up to 16 bytes (ASCII char shingles of
 * the usual sizes) take xxHash's short-input path, inlined into the loops;
 * longer ones its 17-128 byte path or XXH3_64bits_withSeed out of line.
 * These are what XXH3_64bits_withSeed runs after a dispatch that does not
 * inline; test_minhash checks the two agree.
 */
static __attribute__((noinline)) uint64_t
shingle_hash_long(const void *data, size_t len, uint64_t seed)
{
	if (len <= 128)
		return XXH3_len_17to128_64b((const xxh_u8 *) data, len, XXH3_kSecret,
									sizeof(XXH3_kSecret), seed);
	return XXH3_64bits_withSeed(data, len, seed);
}

/* a shingle's 64-bit hash: XXH3 inline up to 16 bytes */
static inline __attribute__((always_inline)) uint64_t
shingle_hash(const void *data, size_t len, uint64_t seed)
{
	if (len <= 16)
		return XXH3_len_0to16_64b((const xxh_u8 *) data, len, XXH3_kSecret, seed);
	return shingle_hash_long(data, len, seed);
}

uint64_t
minhash_hash(const void *data, size_t len, uint64_t seed)
{
	return shingle_hash(data, len, seed);
}

/* Lemire's multiply-shift range reduction of the high 32 bits to [0, k) */
static inline uint32_t
slot_of(uint64_t h, uint64_t k)
{
	return (uint32_t) (((h >> 32) * k) >> 32);
}

/* ---- sketch: one-permutation hashing ---- */

void
minhash_sketch_init(MinhashSketch *s, uint32_t *slots, int k, uint64_t seed)
{
	s->slots = slots;
	s->k = k;
	s->seed = seed;
	s->nhashes = 0;
	for (int i = 0; i < k; i++)
		slots[i] = MINHASH_EMPTY_SLOT;
}

void
minhash_sketch_add(MinhashSketch *s, const uint64_t *hashes, size_t n)
{
	uint32_t   *slots = s->slots;
	uint64_t	k = (uint64_t) s->k;

	for (size_t i = 0; i < n; i++)
	{
		uint64_t	h = hashes[i];
		uint32_t	slot = slot_of(h, k);
		uint32_t	v = (uint32_t) h;
		uint32_t	cur = slots[slot];

		v -= (v == MINHASH_EMPTY_SLOT);		/* 0xFFFFFFFF marks empty */
		slots[slot] = v < cur ? v : cur;
	}
	s->nhashes += n;
}

/*
 * the hash choosing the donor of empty slot j in densification round `round`
 */
static inline uint64_t
densify_hash(uint32_t j, uint32_t round, uint64_t seed)
{
	uint8_t		b[8];

	put_le32(b, j);
	put_le32(b + 4, round);
	return XXH3_len_0to16_64b(b, 8, XXH3_kSecret, seed ^ DENSIFY_SEED_XOR);
}

bool
minhash_sketch_finish(MinhashSketch *s, int *work)
{
	uint32_t   *slots = s->slots;
	int			k = s->k;
	int			nfull = 0,
				nempty;

	for (int j = 0; j < k; j++)
		if (slots[j] != MINHASH_EMPTY_SLOT)
			work[nfull++] = j;
	if (nfull == 0)
		return false;
	nempty = k - nfull;

	/* fast densification: each non-empty slot throws into a random slot */
	for (uint32_t round = 1; nempty > 0; round++)
	{
		for (int f = 0; f < nfull && nempty > 0; f++)
		{
			uint32_t	j = (uint32_t) work[f];
			uint32_t	i = slot_of(densify_hash(j, round, s->seed), (uint64_t) k);

			if (slots[i] == MINHASH_EMPTY_SLOT)
			{
				slots[i] = slots[j];
				nempty--;
			}
		}
	}
	return true;
}

int
minhash_equal_slots(const uint8_t *a, const uint8_t *b, int k)
{
	int			n = 0;

	/* equality does not depend on byte order */
	for (int i = 0; i < k; i++)
	{
		uint32_t	x,
					y;

		memcpy(&x, a + 4 * (size_t) i, 4);
		memcpy(&y, b + 4 * (size_t) i, 4);
		n += (x == y);
	}
	return n;
}

void
minhash_band_keys(const uint8_t *slots, int bands, int rows, int64_t *keys)
{
	size_t		bytes = 4 * (size_t) rows;

	for (int b = 0; b < bands; b++)
	{
		uint64_t	h = shingle_hash(slots + (size_t) b * bytes, bytes, 0);

		keys[b] = (int64_t) (((uint64_t) b << 48) | (h >> 16));
	}
}

int
minhash_shared_bands(const uint8_t *a, const uint8_t *b, int bands, int rows)
{
	size_t		bytes = 4 * (size_t) rows;
	int			n = 0;

	for (int i = 0; i < bands; i++)
		n += memcmp(a + (size_t) i * bytes, b + (size_t) i * bytes, bytes) == 0;
	return n;
}

/* ---- shingling ---- */

/*
 * Length of the UTF-8 unit at p (n > 0 bytes available): a character, or
 * 1 for a byte that does not start a valid sequence: the tokenizer's
 * decoder, so that units line up with what it skips.
 */
static inline size_t
unit_length(const unsigned char *p, size_t n)
{
	uint32_t	cp;

	return simhash_utf8_decode(p, n, &cp);
}

/* units (characters or invalid bytes) in p[0 .. n) */
static size_t
count_units(const unsigned char *p, size_t n)
{
	size_t		units = 0;

	for (size_t i = 0; i < n; units++)
		i += (p[i] < 0x80) ? 1 : unit_length(p + i, n - i);
	return units;
}

/* characters in valid UTF-8 */
static inline size_t
count_chars(const char *p, size_t n)
{
	size_t		c = 0;

	for (size_t i = 0; i < n; i++)
		c += ((unsigned char) p[i] & 0xC0) != 0x80;
	return c;
}

/* ASCII: 0 for a separator, else the character case-folded (as tokenizer.c) */
static uint8_t ascii_keep[128];
static bool ascii_ready = false;

/* fill ascii_keep (the ASCII fast path of the shingler) once */
static void
build_ascii_keep(void)
{
	for (int c = 0; c < 128; c++)
		ascii_keep[c] = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ? (uint8_t) c :
			(c >= 'A' && c <= 'Z') ? (uint8_t) (c + 32) : 0;
	ascii_ready = true;
}

/*
 * The tokens, with one space where the input separates them.  Character
 * by character: a kept character is a letter or digit (tokenizer classes
 * word and single), or a combining mark right after a kept character; the
 * rest are separators.  ASCII is done here; each maximal run of non-ASCII
 * bytes is tokenized by tokenizer.c (for its classes and case folding),
 * starting one byte early when an ASCII letter or digit precedes it so
 * that leading marks attach to it.  Between two tokens of a run there is a
 * separator when the input span from the end of the first to the end of
 * the second has more units than the second token has characters (case
 * folding and full-width folding map one character to one).
 */
void		(*minhash_check_hook) (void) = NULL;

/* bytes of text minhash_char_text() reads between two calls of the hook */
#define CHECK_BYTES ((size_t) 16 * 1024 * 1024)

size_t
minhash_char_text(const char *in, size_t inlen, char *buf)
{
	const unsigned char *u = (const unsigned char *) in;
	char	   *scratch = buf + simhash_tokenizer_bufsize(inlen);
	size_t		w = 0,
				p = 0;
	size_t		pending = 0;	/* 1: a separator since the last kept char */

	if (!ascii_ready)
		build_ascii_keep();
	while (p < inlen)
	{
		size_t		q,
					from,
					start,
					len,
					prev_end = 0,
					ntokens = 0,
					lim = inlen - p > CHECK_BYTES ? p + CHECK_BYTES : inlen;
		bool		first = true,
					prev_kept;
		SimhashTokenizer t;

		/*
		 * ASCII, without branches on the data: the space and the character
		 * are stored unconditionally and kept or overwritten (buf has room).
		 * At most CHECK_BYTES at a time.
		 */
		while (p < lim && u[p] < 0x80)
		{
			uint8_t		m = ascii_keep[u[p]];
			size_t		kept = (m != 0);

			buf[w] = ' ';
			w += pending & kept;
			buf[w] = (char) m;
			w += kept;
			pending = (kept ^ 1) & (w != 0);
			p++;
		}
		if (p >= inlen)
			break;
		if (u[p] < 0x80)
		{
			/* CHECK_BYTES of ASCII read */
			if (minhash_check_hook)
				minhash_check_hook();
			continue;
		}

		/* a run of non-ASCII bytes, after an ASCII byte or at the start */
		for (q = p; q < inlen && u[q] >= 0x80; q++)
			;
		prev_kept = p > 0 && ascii_keep[u[p - 1]] != 0;
		from = prev_kept ? p - 1 : p;
		simhash_tokenizer_init(&t, in + from, q - from, scratch);
		while (simhash_tokenizer_next(&t, &start, &len))
		{
			const char *tok = scratch + start;
			bool		space;

			if ((++ntokens & 0xFFFF) == 0 && minhash_check_hook)
				minhash_check_hook();

			if (first && prev_kept)
			{
				/* it starts with the ASCII character already written */
				tok++;
				len--;
				space = false;
			}
			else if (first)
				space = (w > 0);	/* after a separator, or at the start */
			else
				space = count_units(u + from + prev_end, t.pos - prev_end) !=
					count_chars(tok, len);
			if (space)
				buf[w++] = ' ';
			memcpy(buf + w, tok, len);
			w += len;
			prev_end = t.pos;
			first = false;
		}
		/* separators after the last token, or no token at all */
		pending = (first || prev_end < q - from) && w > 0;
		p = q;
	}
	return w;
}

void
minhash_shingler_init(MinhashShingler *s, int type, int n_gram, uint64_t seed,
					  const char *in, size_t inlen, char *buf, size_t *ring)
{
	s->type = type;
	s->n_gram = n_gram;
	s->seed = seed;
	s->ring = ring;
	s->next = 0;
	s->nunits = 0;
	s->last_end = 0;
	s->done = false;
	s->pos = 0;
	if (type == MINHASH_CHAR)
	{
		s->textlen = minhash_char_text(in, inlen, buf);
		s->text = buf;
	}
	else
	{
		simhash_tokenizer_init(&s->tok, in, inlen, buf);
		s->text = NULL;
		s->textlen = 0;
	}
}

/* UTF-8 sequence length by lead byte's high nibble (the text is valid) */
static const uint8_t utf8_len[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};

#define CHAR_LEN(b) ((size_t) utf8_len[(unsigned char) (b) >> 4])

/*
 * Char shingles: a leading cursor one character at a time, and a trailing
 * one n_gram characters behind it (the shingle's first character).
 */
static size_t
char_shingles(MinhashShingler *s, uint64_t *hashes, size_t *spans, size_t max)
{
	const char *text = s->text;
	size_t		textlen = s->textlen;
	size_t		pos = s->pos;
	size_t		first = s->last_end;	/* the trailing cursor */
	uint64_t	nunits = s->nunits;
	uint64_t	n = (uint64_t) s->n_gram;
	uint64_t	seed = s->seed;
	size_t		produced = 0;

	/* the first n_gram - 1 characters make no shingle yet */
	while (nunits + 1 < n && pos < textlen)
	{
		pos += CHAR_LEN(text[pos]);
		nunits++;
	}
	while (produced < max && pos < textlen)
	{
		pos += CHAR_LEN(text[pos]);
		nunits++;
		if (spans)
		{
			spans[2 * produced] = first;
			spans[2 * produced + 1] = pos - first;
		}
		hashes[produced++] = shingle_hash(text + first, pos - first, seed);
		first += CHAR_LEN(text[first]);
	}
	s->pos = pos;
	s->last_end = first;
	s->nunits = nunits;
	if (pos >= textlen && produced < max)
	{
		s->done = true;
		/* fewer characters than n_gram: one shingle of them all */
		if (nunits > 0 && nunits < n)
		{
			if (spans)
			{
				spans[2 * produced] = 0;
				spans[2 * produced + 1] = textlen;
			}
			hashes[produced++] = shingle_hash(text, textlen, seed);
		}
	}
	return produced;
}

/*
 * the next shingles of n_gram tokens ("term" n-grams) into hashes, and their
 * spans
 */
static size_t
term_shingles(MinhashShingler *s, uint64_t *hashes, size_t *spans, size_t max)
{
	size_t		produced = 0;
	size_t		start,
				len;
	uint64_t	w = (uint64_t) s->n_gram;
	const char *out = s->tok.out;
	size_t		hashed = 0;

	/* returns early after SIMHASH_SHINGLER_CALL_BYTES (interrupt checks) */
	while (produced < max && hashed < SIMHASH_SHINGLER_CALL_BYTES)
	{
		if (!simhash_tokenizer_next(&s->tok, &start, &len))
		{
			s->done = true;
			/* fewer tokens than n_gram: one shingle of them all */
			if (s->nunits > 0 && s->nunits < w)
			{
				if (spans)
				{
					spans[2 * produced] = s->ring[0];
					spans[2 * produced + 1] = s->last_end - s->ring[0];
				}
				hashes[produced++] = shingle_hash(out + s->ring[0],
												  s->last_end - s->ring[0], s->seed);
			}
			break;
		}
		s->ring[s->next] = start;
		if (++s->next == s->n_gram)
			s->next = 0;
		s->nunits++;
		s->last_end = start + len;
		if (s->nunits >= w)
		{
			size_t		first = s->ring[s->next];

			if (spans)
			{
				spans[2 * produced] = first;
				spans[2 * produced + 1] = s->last_end - first;
			}
			hashes[produced++] = shingle_hash(out + first, s->last_end - first,
											  s->seed);
			hashed += s->last_end - first;
		}
	}
	return produced;
}

size_t
minhash_shingler_next(MinhashShingler *s, uint64_t *hashes, size_t *spans,
					  size_t max)
{
	if (s->done || max == 0)
		return 0;
	if (s->type == MINHASH_CHAR)
		return char_shingles(s, hashes, spans, max);
	return term_shingles(s, hashes, spans, max);
}

bool
minhash_text_slots(const char *text, size_t len, int type, int n_gram, int k,
				   uint64_t seed, char *buf, size_t *ring, uint32_t *slots,
				   int *work)
{
	MinhashShingler shingler;
	MinhashSketch sketch;
	uint64_t	batch[256];
	size_t		n;

	minhash_shingler_init(&shingler, type, n_gram, seed, text, len, buf, ring);
	minhash_sketch_init(&sketch, slots, k, seed);
	while ((n = minhash_shingler_next(&shingler, batch, NULL, 256)) > 0)
		minhash_sketch_add(&sketch, batch, n);
	return minhash_sketch_finish(&sketch, work);
}

/* ---- exact Jaccard ---- */

/* a bucket of at most this many values is sorted by insertion */
#define SORT_SMALL 32
/* values a sort handles between two calls of its check */
#define SORT_CHECK_EVERY (UINT64_C(1) << 20)

static void
insertion_sort_u64(uint64_t *a, size_t n)
{
	for (size_t i = 1; i < n; i++)
	{
		uint64_t	v = a[i];
		size_t		j = i;

		while (j > 0 && a[j - 1] > v)
		{
			a[j] = a[j - 1];
			j--;
		}
		a[j] = v;
	}
}

/*
 * In-place MSD radix sort (American flag sort) of a[0 .. n - 1] by the byte
 * at shift and the bytes below it: count, move every value into its
 * bucket, then sort each bucket by the next byte.  No second array; check
 * (if not NULL) is called at least every SORT_CHECK_EVERY values moved or
 * counted, so that a caller can stop the sort (an error that leaves it).
 */
static void
flag_sort_u64(uint64_t *a, size_t n, int shift, void (*check) (void *), void *arg)
{
	size_t		count[256] = {0},
				next[256],
				end[256],
				sum = 0;

	if (n <= SORT_SMALL)
	{
		insertion_sort_u64(a, n);
		return;
	}
	for (size_t i = 0; i < n; i++)
	{
		if (check != NULL && (i & (SORT_CHECK_EVERY - 1)) == SORT_CHECK_EVERY - 1)
			check(arg);
		count[(a[i] >> shift) & 0xFF]++;
	}
	for (int b = 0; b < 256; b++)
	{
		next[b] = sum;
		sum += count[b];
		end[b] = sum;
	}
	for (int b = 0; b < 256; b++)
	{
		while (next[b] < end[b])
		{
			uint64_t	v = a[next[b]];
			int			d = (int) ((v >> shift) & 0xFF);

			/* carry v to its bucket, and what was there to its own */
			while (d != b)
			{
				uint64_t	t = a[next[d]];

				a[next[d]++] = v;
				v = t;
				d = (int) ((v >> shift) & 0xFF);
			}
			a[next[b]++] = v;
		}
		if (check != NULL && end[b] - (b > 0 ? end[b - 1] : 0) >= SORT_CHECK_EVERY)
			check(arg);
	}
	if (shift == 0)
		return;
	for (int b = 0; b < 256; b++)
		if (count[b] > 1)
			flag_sort_u64(a + end[b] - count[b], count[b], shift - 8, check, arg);
}

size_t
minhash_hash_set(uint64_t *hashes, size_t n, void (*check) (void *), void *arg)
{
	size_t		m = 0;

	if (n == 0)
		return 0;
	flag_sort_u64(hashes, n, 56, check, arg);
	for (size_t i = 1; i < n; i++)
		if (hashes[i] != hashes[m])
			hashes[++m] = hashes[i];
	return m + 1;
}

double
minhash_set_jaccard(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
	size_t		i = 0,
				j = 0,
				common = 0;

	if (na + nb == 0)
		return 0.0;
	while (i < na && j < nb)
	{
		if (a[i] < b[j])
			i++;
		else if (a[i] > b[j])
			j++;
		else
		{
			common++;
			i++;
			j++;
		}
	}
	return (double) common / (double) (na + nb - common);
}

/* ---- LSH S-curve ---- */

double
minhash_lsh_probability(double s, int bands, int rows)
{
	return 1.0 - pow(1.0 - pow(s, rows), bands);
}

#define SIMPSON_INTERVALS 512

/* Simpson's rule over [lo, hi] of P(s) (miss = false) or 1 - P(s) */
static double
integrate(double lo, double hi, int bands, int rows, bool miss)
{
	double		h = (hi - lo) / SIMPSON_INTERVALS;
	double		sum = 0.0;

	if (hi <= lo)
		return 0.0;
	for (int i = 0; i <= SIMPSON_INTERVALS; i++)
	{
		double		s = lo + h * i;
		double		p = minhash_lsh_probability(s, bands, rows);
		double		f = miss ? 1.0 - p : p;
		int			w = (i == 0 || i == SIMPSON_INTERVALS) ? 1 : (i % 2 ? 4 : 2);

		sum += w * f;
	}
	return sum * h / 3.0;
}

void
minhash_lsh_errors(double threshold, int bands, int rows,
				   double *false_positive, double *false_negative)
{
	*false_positive = integrate(0.0, threshold, bands, rows, false);
	*false_negative = integrate(threshold, 1.0, bands, rows, true);
}
