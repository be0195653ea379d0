/*
 * test_minhash.c: unit tests of MinHash signatures, shingling, band keys,
 * exact Jaccard and the LSH S-curve (src/core/minhash.c), outside the server.
 * Prints "N passed, N failed".
 */
#include "minhash.h"
#include "tokenizer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "unit.h"

/* minhash of {alpha, beta, gamma, delta, epsilon}, k = 8, seed 0 */
#define PINNED_ALPHA_EPSILON {0x6f9d29f6, 0x97dff641, 0x97dff641, 0x97dff641, 0x6f9d29f6, 0x3790b4b9, 0x97dff641, 0x6f9d29f6}

/* ---- helpers ---- */

static char *
char_text(const char *in)
{
	size_t		len = strlen(in);
	char	   *buf = malloc(minhash_bufsize(len) + 1);
	size_t		n = minhash_char_text(in, len, buf);

	buf[n] = '\0';
	return buf;
}

static void
expect_text(const char *in, const char *want)
{
	char	   *got = char_text(in);

	CHECK(strcmp(got, want) == 0, "char_text(\"%s\") = \"%s\", want \"%s\"", in, got, want);
	free(got);
}

/*
 * Reference of minhash_char_text: the whole text through the tokenizer,
 * tokens joined by one space where the input span before a token has more
 * units (characters or invalid bytes) than the token has characters.
 */
static size_t
ref_units(const unsigned char *p, size_t n)
{
	size_t		units = 0;

	for (size_t i = 0; i < n; units++)
	{
		unsigned char b = p[i];
		size_t		len = b < 0x80 ? 1 : (b >= 0xC2 && b <= 0xDF) ? 2 :
			(b >= 0xE0 && b <= 0xEF) ? 3 : (b >= 0xF0 && b <= 0xF4) ? 4 : 1;
		uint32_t	c = len == 2 ? (b & 0x1Fu) : len == 3 ? (b & 0x0Fu) : (b & 0x07u);
		bool		ok = len <= n - i;

		for (size_t k = 1; ok && k < len; k++)
		{
			ok = (p[i + k] & 0xC0) == 0x80;
			c = (c << 6) | (p[i + k] & 0x3Fu);
		}
		if (ok && ((len == 3 && (c < 0x800 || (c >= 0xD800 && c <= 0xDFFF))) ||
				   (len == 4 && (c < 0x10000 || c > 0x10FFFF))))
			ok = false;
		i += ok ? len : 1;
	}
	return units;
}

static char *
char_text_reference(const char *in, size_t len)
{
	char	   *tok = malloc(simhash_tokenizer_bufsize(len));
	char	   *out = malloc(simhash_tokenizer_bufsize(len) + 1);
	SimhashTokenizer t;
	size_t		start,
				n,
				w = 0;

	simhash_tokenizer_init(&t, in, len, tok);
	for (;;)
	{
		size_t		prev_end = t.pos;
		size_t		chars = 0;

		if (!simhash_tokenizer_next(&t, &start, &n))
			break;
		for (size_t i = 0; i < n; i++)
			chars += ((unsigned char) tok[start + i] & 0xC0) != 0x80;
		if (w > 0 && ref_units((const unsigned char *) in + prev_end, t.pos - prev_end) != chars)
			out[w++] = ' ';
		memcpy(out + w, tok + start, n);
		w += n;
	}
	out[w] = '\0';
	free(tok);
	return out;
}

/* shingles of in joined by '|' */
static char *
shingles(const char *in, int type, int n, uint64_t seed, bool *hashes_ok)
{
	size_t		len = strlen(in);
	char	   *buf = malloc(minhash_bufsize(len));
	char	   *res = malloc((size_t) (n + 1) * (2 * len + 16) + 64);
	size_t	   *ring = malloc(sizeof(size_t) * n);
	MinhashShingler s;
	uint64_t	h[3];
	size_t		spans[6];
	size_t		got,
				r = 0;

	*hashes_ok = true;
	minhash_shingler_init(&s, type, n, seed, in, len, buf, ring);
	/* small batches: shingles must continue across calls */
	while ((got = minhash_shingler_next(&s, h, spans, 3)) > 0)
	{
		const char *text = minhash_shingler_text(&s);

		for (size_t i = 0; i < got; i++)
		{
			if (r > 0)
				res[r++] = '|';
			memcpy(res + r, text + spans[2 * i], spans[2 * i + 1]);
			r += spans[2 * i + 1];
			if (h[i] != XXH3_64bits_withSeed(text + spans[2 * i], spans[2 * i + 1], seed))
				*hashes_ok = false;
		}
	}
	res[r] = '\0';
	free(buf);
	free(ring);
	return res;
}

static void
expect_shingles(const char *in, int type, int n, const char *want)
{
	bool		ok;
	char	   *got = shingles(in, type, n, 42, &ok);

	CHECK(strcmp(got, want) == 0, "shingles(\"%s\", %s, %d) = \"%s\", want \"%s\"",
		  in, minhash_ngram_type_name(type), n, got, want);
	CHECK(ok, "shingle hashes of \"%s\" are XXH3-64 with the seed", in);
	free(got);
}

/* a signature of a set of integers (hashed as 8 bytes with the seed) */
static bool
int_signature(const uint64_t *items, size_t n, int k, uint64_t seed,
			  uint8_t *out)
{
	uint32_t   *slots = malloc(sizeof(uint32_t) * k);
	int		   *work = malloc(sizeof(int) * k);
	uint64_t   *h = malloc(sizeof(uint64_t) * (n + 1));
	MinhashSketch s;
	bool		nonempty;

	for (size_t i = 0; i < n; i++)
		h[i] = minhash_hash(&items[i], 8, seed);
	minhash_sketch_init(&s, slots, k, seed);
	minhash_sketch_add(&s, h, n);
	nonempty = minhash_sketch_finish(&s, work);
	minhash_store_slots(out, slots, k);
	free(slots);
	free(work);
	free(h);
	return nonempty;
}

/*
 * Two sets with |A ∩ B| = common, |A \ B| = a_only, |B \ A| = b_only;
 * returns the estimate with k slots.
 */
static double
estimate_pair(size_t common, size_t a_only, size_t b_only, int k, uint64_t seed,
			  uint64_t base)
{
	size_t		na = common + a_only,
				nb = common + b_only;
	uint64_t   *a = malloc(sizeof(uint64_t) * (na + 1));
	uint64_t   *b = malloc(sizeof(uint64_t) * (nb + 1));
	uint8_t    *sa = malloc(4 * (size_t) k);
	uint8_t    *sb = malloc(4 * (size_t) k);
	double		est;

	for (size_t i = 0; i < common; i++)
		a[i] = b[i] = base + i;
	for (size_t i = 0; i < a_only; i++)
		a[common + i] = base + (1u << 30) + i;
	for (size_t i = 0; i < b_only; i++)
		b[common + i] = base + (2u << 30) + i;
	int_signature(a, na, k, seed, sa);
	int_signature(b, nb, k, seed, sb);
	est = (double) minhash_equal_slots(sa, sb, k) / k;
	free(a);
	free(b);
	free(sa);
	free(sb);
	return est;
}

/* ---- tests ---- */

static void
test_hash(void)
{
	char		data[400];
	int			bad = 0;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (char) (next() & 0xFF);
	for (size_t len = 0; len <= 300; len++)
	{
		uint64_t	seeds[] = {0, 1, 42, UINT64_MAX, next()};

		for (int s = 0; s < 5; s++)
			if (minhash_hash(data, len, seeds[s]) != XXH3_64bits_withSeed(data, len, seeds[s]))
				bad++;
	}
	CHECK(bad == 0, "minhash_hash differs from XXH3_64bits_withSeed %d times", bad);
	/* seed 0 is the feature hash of tokenizer.h */
	CHECK(minhash_hash("simhash", 7, 0) == simhash_feature_hash("simhash", 7),
		  "seed 0 is the feature hash");
	CHECK(minhash_hash("simhash", 7, 1) != minhash_hash("simhash", 7, 0),
		  "seeds differ");
}

static void
test_char_text(void)
{
	expect_text("", "");
	expect_text("  ,.!? \n", "");
	expect_text("Hello, World!", "hello world");
	expect_text("  two   spaces\t\tand\ntabs  ", "two spaces and tabs");
	expect_text("don't", "don t");
	expect_text("ÉCOLE Straße ΣΊΣΥΦΟΣ", "école straße σίσυφοσ");
	expect_text("ＦＵＬＬ１２ width", "full12 width");
	expect_text("中文字", "中文字");
	expect_text("中文，字", "中文 字");
	expect_text("中 文", "中 文");
	expect_text("a中b", "a中b");
	expect_text("日本語のテキスト", "日本語のテキスト");
	expect_text("e\xcc\x81t\xc3\xa9", "e\xcc\x81t\xc3\xa9");	/* combining acute kept */
	expect_text("\xcc\x81" "abc", "abc");	/* a mark after nothing is a separator */
	expect_text("\xe2\x84\xaa" "elvin", "kelvin");	/* KELVIN SIGN folds to k */
	expect_text("\xe2\x84\xaa,x", "k x");
	expect_text("中\x80文", "中 文");	/* an invalid byte separates */
	expect_text("ab\xff" "cd", "ab cd");
	expect_text("\xc3", "");	/* truncated sequence */

	/* the text without its spaces is the tokens, concatenated */
	{
		static const char *const pieces[] = {
			"a", "B", " ", ",", "中", "文", "\xe2\x84\xaa", "é", "\xcc\x81", "Σ", "ｆ",
			"\x80", "\xff", "9", "-", "\t", "ß", "ア", "x", "\xcc\x81\xcc\x81", "\xe4\xb8", "Ａ", "𐐀",
			"\xf0\x9f\x98\x80", "\xed\xa0\x80", "\xc0\xaf"
		};
		int			bad = 0,
					mismatches = 0;

		unit_seed(11);
		for (int iter = 0; iter < 20000; iter++)
		{
			char		in[512];
			size_t		len = 0;
			char	   *text,
					   *tokbuf;
			SimhashTokenizer t;
			size_t		start,
						tlen,
						j = 0;
			int			n = (int) (next() % 30);
			bool		same = true;

			for (int i = 0; i < n; i++)
			{
				const char *p = pieces[next() % (sizeof(pieces) / sizeof(pieces[0]))];

				memcpy(in + len, p, strlen(p));
				len += strlen(p);
			}
			in[len] = '\0';
			text = char_text(in);
			{
				char	   *ref = char_text_reference(in, len);

				if (strcmp(ref, text) != 0)
				{
					mismatches++;
					if (mismatches <= 3)
						printf("  char text of \"%s\": \"%s\", reference \"%s\"\n", in, text, ref);
				}
				free(ref);
			}
			tokbuf = malloc(simhash_tokenizer_bufsize(len));
			simhash_tokenizer_init(&t, in, len, tokbuf);
			while (simhash_tokenizer_next(&t, &start, &tlen))
			{
				for (size_t i = 0; i < tlen; i++)
				{
					while (text[j] == ' ')
						j++;
					if (text[j] != tokbuf[start + i])
						same = false;
					j++;
				}
			}
			while (text[j] == ' ')
				j++;
			if (text[j] != '\0' || !same || text[0] == ' ' ||
				(strlen(text) > 0 && text[strlen(text) - 1] == ' ') || strstr(text, "  "))
				bad++;
			free(text);
			free(tokbuf);
		}
		CHECK(bad == 0, "%d random texts: char text is not the tokens with single spaces", bad);
		CHECK(mismatches == 0, "%d random texts differ from the reference", mismatches);
	}
}

static void
test_shingles(void)
{
	expect_shingles("abcd", MINHASH_CHAR, 3, "abc|bcd");
	expect_shingles("ABCD", MINHASH_CHAR, 4, "abcd");
	expect_shingles("abc", MINHASH_CHAR, 9, "abc");	/* shorter: one shingle */
	expect_shingles("aab", MINHASH_CHAR, 1, "a|a|b");
	expect_shingles("", MINHASH_CHAR, 3, "");
	expect_shingles("...", MINHASH_CHAR, 1, "");
	expect_shingles("a, b", MINHASH_CHAR, 2, "a | b");
	expect_shingles("中文字。", MINHASH_CHAR, 2, "中文|文字");
	expect_shingles("éa", MINHASH_CHAR, 1, "é|a");
	expect_shingles("one two three four", MINHASH_CHAR, 16, "one two three fo|ne two three fou|e two three four");
	expect_shingles("The cat, the hat", MINHASH_TERM, 2, "the cat|cat the|the hat");
	expect_shingles("The cat", MINHASH_TERM, 5, "the cat");
	expect_shingles("a b c d e f g", MINHASH_TERM, 1, "a|b|c|d|e|f|g");
	expect_shingles("", MINHASH_TERM, 1, "");
	expect_shingles("中文字", MINHASH_TERM, 2, "中 文|文 字");

	/* minhash_text_slots: the shingles' hashes through a sketch */
	{
		const char *in = "The quick brown fox jumps over the lazy dog; le renard brun 狐狸";
		size_t		len = strlen(in);
		char	   *buf = malloc(minhash_bufsize(len));
		size_t		ring[5];
		uint32_t	a[64],
					b[64];
		int			work[64];
		uint64_t	h[256];
		size_t		n;
		MinhashShingler sh;
		MinhashSketch sk;

		for (int type = MINHASH_CHAR; type <= MINHASH_TERM; type++)
		{
			CHECK(minhash_text_slots(in, len, type, 5, 64, 99, buf, ring, a, work), "nonempty");
			minhash_shingler_init(&sh, type, 5, 99, in, len, buf, ring);
			minhash_sketch_init(&sk, b, 64, 99);
			while ((n = minhash_shingler_next(&sh, h, NULL, 7)) > 0)
				minhash_sketch_add(&sk, h, n);
			minhash_sketch_finish(&sk, work);
			CHECK(memcmp(a, b, sizeof(a)) == 0, "minhash_text_slots, type %d", type);
		}
		CHECK(!minhash_text_slots("...", 3, MINHASH_CHAR, 5, 64, 99, buf, ring, a, work), "empty");
		free(buf);
	}

	/* long texts: char shingles of an n_gram above 16 and 128 bytes */
	{
		char		in[2000];
		bool		ok;
		char	   *got;

		for (int i = 0; i < 1999; i++)
			in[i] = "abcdefghij klmnopqrstuvwxyz"[next() % 27];
		in[1999] = '\0';
		got = shingles(in, MINHASH_CHAR, 200, 7, &ok);
		CHECK(ok, "long char shingle hashes");
		free(got);
		got = shingles(in, MINHASH_TERM, 50, 7, &ok);
		CHECK(ok, "long term shingle hashes");
		free(got);
	}
}

static void
test_sketch(void)
{
	uint64_t	items[1000];
	uint8_t		a[4 * 256],
				b[4 * 256];
	uint32_t	slots[256];
	int			work[256];
	MinhashSketch s;
	int			k;

	/* empty */
	minhash_sketch_init(&s, slots, 128, 0);
	CHECK(!minhash_sketch_finish(&s, work), "no shingles: empty");

	/* one shingle: every slot holds its value */
	items[0] = 12345;
	CHECK(int_signature(items, 1, 128, 0, a), "one shingle: not empty");
	{
		int			same = 0;

		for (int i = 0; i < 128; i++)
			same += minhash_get_slot(a, i) == minhash_get_slot(a, 0);
		CHECK(same == 128, "one shingle fills all slots (%d)", same);
		CHECK(minhash_get_slot(a, 0) == (uint32_t) minhash_hash(&items[0], 8, 0),
			  "the value is the low 32 bits of the hash");
	}

	/* no slot stays empty, for any k and set size */
	for (k = 1; k <= 256; k += 17)
		for (size_t n = 1; n <= 1000; n *= 3)
		{
			int			empties = 0;

			for (size_t i = 0; i < n; i++)
				items[i] = next();
			int_signature(items, n, k, 5, a);
			for (int i = 0; i < k; i++)
				empties += minhash_get_slot(a, i) == MINHASH_EMPTY_SLOT;
			CHECK(empties == 0, "k=%d n=%zu: %d empty slots", k, n, empties);
		}

	/* order and repeats do not matter */
	for (int i = 0; i < 100; i++)
		items[i] = (uint64_t) i;
	int_signature(items, 100, 128, 9, a);
	for (int i = 0; i < 100; i++)
		items[i] = (uint64_t) (99 - i / 2);	/* 99,99,98,98,...: half the set */
	for (int i = 0; i < 100; i++)
		items[100 + i] = (uint64_t) i;
	int_signature(items, 200, 128, 9, b);
	CHECK(memcmp(a, b, 4 * 128) == 0, "order and repeats do not change the signature");

	/* the same set, another seed: another signature */
	int_signature(items + 100, 100, 128, 10, b);
	CHECK(minhash_equal_slots(a, b, 128) < 10, "seeds give independent signatures (%d equal)",
		  minhash_equal_slots(a, b, 128));

	/* pinned: the algorithm is frozen */
	{
		static const char *const words[] = {"alpha", "beta", "gamma", "delta", "epsilon"};
		uint64_t	h[5];
		uint32_t	want[8];
		uint32_t	got[8];
		int			w[8];

		for (int i = 0; i < 5; i++)
			h[i] = minhash_hash(words[i], strlen(words[i]), 0);
		minhash_sketch_init(&s, got, 8, 0);
		minhash_sketch_add(&s, h, 5);
		minhash_sketch_finish(&s, w);
		/* by hand from the definition in minhash.h */
		for (int i = 0; i < 8; i++)
			want[i] = MINHASH_EMPTY_SLOT;
		for (int i = 0; i < 5; i++)
		{
			uint32_t	slot = (uint32_t) (((h[i] >> 32) * 8) >> 32);
			uint32_t	v = (uint32_t) h[i];

			if (v == UINT32_MAX)
				v--;
			if (v < want[slot])
				want[slot] = v;
		}
		{
			int			full[8],
						nfull = 0,
						nempty = 0;

			for (int j = 0; j < 8; j++)
				if (want[j] != MINHASH_EMPTY_SLOT)
					full[nfull++] = j;
				else
					nempty++;
			for (uint32_t t = 1; nempty > 0; t++)
				for (int f = 0; f < nfull && nempty > 0; f++)
				{
					uint8_t		bytes[8] = {(uint8_t) full[f], 0, 0, 0, (uint8_t) t, (uint8_t) (t >> 8), 0, 0};
					uint64_t	g = XXH3_64bits_withSeed(bytes, 8, UINT64_C(0x9E3779B97F4A7C15));
					uint32_t	i = (uint32_t) (((g >> 32) * 8) >> 32);

					if (want[i] == MINHASH_EMPTY_SLOT)
					{
						want[i] = want[full[f]];
						nempty--;
					}
				}
		}
		CHECK(memcmp(got, want, sizeof(want)) == 0, "signature follows the definition");
		/* pinned values (catch any change of the definition too) */
		{
			static const uint32_t pinned[8] = PINNED_ALPHA_EPSILON;
			int			same = memcmp(got, pinned, sizeof(pinned)) == 0;

			CHECK(same, "pinned signature");
			if (!same)
			{
				printf("  got {");
				for (int i = 0; i < 8; i++)
					printf("%s0x%08x", i ? ", " : "", got[i]);
				printf("}\n");
			}
		}
	}
}

static void
test_estimate(void)
{
	/*
	 * Large sets: |estimate - J| against the binomial standard deviation
	 * sqrt(J (1 - J) / k).  Small sets (fewer than k): the densified
	 * estimate must still be unbiased.
	 */
	int			k = 128;
	int			within = 0,
				total = 0,
				beyond4 = 0;
	double		maxerr = 0,
				bias = 0;

	unit_seed(2024);
	for (int i = 0; i < 400; i++)
	{
		size_t		common = 50 + next() % 2000;
		size_t		a_only = next() % 1500;
		size_t		b_only = next() % 1500;
		double		j = (double) common / (common + a_only + b_only);
		double		est = estimate_pair(common, a_only, b_only, k, (uint64_t) i, next() >> 2);
		double		err = fabs(est - j);
		double		sd = sqrt(j * (1 - j) / k);

		within += err <= 0.05;
		beyond4 += err > 4 * sd + 1e-9;
		maxerr = err > maxerr ? err : maxerr;
		bias += est - j;
		total++;
	}
	printf("  large sets: %d/%d within 0.05, max error %.3f, mean error %+.4f\n",
		   within, total, maxerr, bias / total);
	CHECK(within >= 0.80 * total, "large sets within 0.05: %d/%d", within, total);
	CHECK(beyond4 <= 1, "errors beyond 4 sd: %d", beyond4);
	CHECK(fabs(bias / total) < 0.01, "bias %.4f", bias / total);

	/* small sets: mean estimate over seeds approaches J */
	{
		static const size_t cases[][3] = {{1, 0, 0}, {1, 1, 1}, {5, 5, 0}, {10, 10, 10}, {3, 20, 7}, {60, 10, 10}};

		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
		{
			double		j = (double) cases[c][0] / (cases[c][0] + cases[c][1] + cases[c][2]);
			double		mean = 0;
			int			reps = 400;

			for (int r = 0; r < reps; r++)
				mean += estimate_pair(cases[c][0], cases[c][1], cases[c][2], k,
									  (uint64_t) r * 7919 + c, (uint64_t) r << 20);
			mean /= reps;
			CHECK(fabs(mean - j) < 0.02, "small sets %zu/%zu/%zu: mean estimate %.4f, J %.4f",
				  cases[c][0], cases[c][1], cases[c][2], mean, j);
		}
	}

	/* disjoint sets estimate ~0, identical sets exactly 1 */
	CHECK(estimate_pair(0, 500, 500, k, 1, 0) < 0.05, "disjoint");
	CHECK(estimate_pair(500, 0, 0, k, 1, 0) == 1.0, "identical");
}

static void
test_bands(void)
{
	uint64_t	items[300];
	uint8_t		a[4 * 128],
				b[4 * 128];
	int64_t		ka[32],
				kb[32];
	int			shared_keys = 0;

	for (int i = 0; i < 300; i++)
		items[i] = (uint64_t) i;
	int_signature(items, 300, 128, 3, a);
	items[0] = 100000;			/* J = 299/301 */
	int_signature(items, 300, 128, 3, b);
	minhash_band_keys(a, 32, 4, ka);
	minhash_band_keys(b, 32, 4, kb);
	for (int i = 0; i < 32; i++)
	{
		CHECK((uint64_t) ka[i] >> 48 == (uint64_t) i, "band %d number in the key", i);
		shared_keys += ka[i] == kb[i];
	}
	CHECK(shared_keys == minhash_shared_bands(a, b, 32, 4),
		  "shared keys %d = shared bands %d", shared_keys, minhash_shared_bands(a, b, 32, 4));
	CHECK(shared_keys >= 28, "near-identical sets share most bands (%d)", shared_keys);
	/* pigeonhole: m unequal slots leave at least bands - m bands equal */
	CHECK(minhash_shared_bands(a, b, 32, 4) >= 32 - (128 - minhash_equal_slots(a, b, 128)),
		  "pigeonhole");
	/* equal slots, different bands: keys differ */
	{
		uint8_t		z[4 * 8] = {0};
		int64_t		kz[8];

		minhash_band_keys(z, 8, 1, kz);
		CHECK(kz[0] != kz[1] && (kz[0] & 0xFFFFFFFFFFFF) == (kz[1] & 0xFFFFFFFFFFFF),
			  "same band slots in two bands: same hash, different band number");
	}
}

static void
test_header(void)
{
	MinhashParams p = {MINHASH_VERSION, MINHASH_TERM, 5, 256, -7},
				q;
	uint8_t		buf[MINHASH_HEADER_SIZE + 4 * 256];
	bool		empty;
	char		text[200];

	minhash_write_header(buf, &p, false);
	CHECK(minhash_read_header(buf, minhash_size(256, false), &q, &empty) == NULL,
		  "header reads back");
	CHECK(minhash_params_equal(&p, &q) && !empty, "params round trip");
	CHECK(buf[8] == 0xF9 && buf[15] == 0xFF && buf[6] == 0 && buf[7] == 1, "little-endian");
	CHECK(minhash_read_header(buf, minhash_size(256, true), &q, &empty) != NULL,
		  "length checked");
	minhash_write_header(buf, &p, true);
	CHECK(minhash_read_header(buf, MINHASH_HEADER_SIZE, &q, &empty) == NULL && empty,
		  "empty signature");
	buf[0] = 2;
	CHECK(minhash_read_header(buf, MINHASH_HEADER_SIZE, &q, &empty) != NULL, "version checked");
	buf[0] = 1;
	buf[1] = 3;
	CHECK(minhash_read_header(buf, MINHASH_HEADER_SIZE, &q, &empty) != NULL, "type checked");
	buf[1] = 1;
	buf[4] = 0;
	CHECK(minhash_read_header(buf, MINHASH_HEADER_SIZE, &q, &empty) != NULL, "n_gram checked");
	minhash_format_params(text, sizeof(text), &p);
	CHECK(strcmp(text, "n_gram=5 n_gram_type=term permutations=256 seed=-7 (v1)") == 0,
		  "format: %s", text);
	CHECK(minhash_ngram_type_from_name("term", 4) == MINHASH_TERM &&
		  minhash_ngram_type_from_name("char", 4) == MINHASH_CHAR &&
		  minhash_ngram_type_from_name("chars", 5) == -1, "type names");
}

static void
test_jaccard(void)
{
	uint64_t	a[] = {5, 1, 3, 3, 9, 1},
				b[] = {3, 4, 5, 5};
	size_t		na = minhash_hash_set(a, 6, NULL, NULL),
				nb = minhash_hash_set(b, 4, NULL, NULL);

	CHECK(na == 4 && nb == 3, "distinct counts %zu %zu", na, nb);
	CHECK(fabs(minhash_set_jaccard(a, na, b, nb) - 2.0 / 5.0) < 1e-12, "J = 2/5");
	CHECK(minhash_set_jaccard(a, 0, b, 0) == 0.0, "both empty: 0");
	CHECK(minhash_set_jaccard(a, na, a, na) == 1.0, "same: 1");
	CHECK(minhash_set_jaccard(a, na, b, 0) == 0.0, "one empty: 0");
}

static int
u64_order(const void *pa, const void *pb)
{
	uint64_t	x = *(const uint64_t *) pa,
				y = *(const uint64_t *) pb;

	return (x > y) - (x < y);
}

/* minhash_hash_set's check: counts its calls */
static void
count_checks(void *arg)
{
	(*(size_t *) arg)++;
}

/*
 * The hash set's in-place radix sort against qsort and a deduplication by
 * hand: sizes around its small-bucket and check thresholds, values spread,
 * few distinct, sharing their high bytes, all equal; and the check called
 * at least once per million values.
 */
static void
test_hash_set_sort(void)
{
	static const size_t sizes[] = {0, 1, 2, 31, 32, 33, 257, 5000, 100000, 3000000};

	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
		for (int shape = 0; shape < 4; shape++)
		{
			size_t		n = sizes[si],
						want = 0,
						got,
						checks = 0;
			uint64_t   *a = malloc((n + 1) * sizeof(uint64_t)),
					   *r = malloc((n + 1) * sizeof(uint64_t));

			for (size_t i = 0; i < n; i++)
			{
				uint64_t	x = next();

				a[i] = shape == 0 ? x :
					shape == 1 ? x % 97 :
					shape == 2 ? (UINT64_C(0xABCDEF) << 40) | (x & 0xFFFFF) :
					UINT64_C(42);
			}
			memcpy(r, a, n * sizeof(uint64_t));
			qsort(r, n, sizeof(uint64_t), u64_order);
			for (size_t i = 0; i < n; i++)
				if (i == 0 || r[i] != r[i - 1])
					r[want++] = r[i];
			got = minhash_hash_set(a, n, count_checks, &checks);
			CHECK(got == want && memcmp(a, r, want * sizeof(uint64_t)) == 0,
				  "hash set of %zu values, shape %d: %zu distinct (want %zu)", n, shape, got, want);
			CHECK(checks >= n / 1048576, "hash set of %zu values, shape %d: %zu checks", n, shape, checks);
			free(a);
			free(r);
		}
}

static void
test_lsh(void)
{
	double		fp,
				fn;

	/* b = r = 1: P(s) = s, fp = t^2/2, fn = (1-t)^2/2 */
	minhash_lsh_errors(0.6, 1, 1, &fp, &fn);
	CHECK(fabs(fp - 0.18) < 1e-9 && fabs(fn - 0.08) < 1e-9, "b=r=1: %g %g", fp, fn);
	/* b = 1, r = 2: fp = t^3/3, fn = (1-t) - (1-t^3)/3 */
	minhash_lsh_errors(0.5, 1, 2, &fp, &fn);
	CHECK(fabs(fp - 0.125 / 3) < 1e-9 && fabs(fn - (0.5 - 0.875 / 3)) < 1e-9,
		  "b=1 r=2: %g %g", fp, fn);
	CHECK(fabs(minhash_lsh_probability(0.8, 32, 4) - (1 - pow(1 - pow(0.8, 4), 32))) < 1e-15,
		  "probability");
	CHECK(minhash_lsh_probability(0.0, 32, 4) == 0.0 && minhash_lsh_probability(1.0, 32, 4) == 1.0,
		  "probability ends");
}

int
main(void)
{
	unit_seed(1);
	test_hash();
	test_char_text();
	test_shingles();
	test_sketch();
	test_estimate();
	test_bands();
	test_header();
	test_jaccard();
	test_hash_set_sort();
	test_lsh();
	return unit_report("test_minhash");
}
