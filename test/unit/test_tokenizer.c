/*
 * test_tokenizer.c: unit tests of the tokenizer and shingler
 * (src/core/tokenizer.c), outside the server.  Prints "N passed, N failed".
 */
#include "tokenizer.h"
#include "unicode_table.h"

#include <stdio.h>

#include "unit.h"
#include <stdlib.h>
#include <string.h>

/* tokens of `in` joined by '|' */
static char *
tokens(const char *in, size_t len)
{
	char	   *buf = malloc(simhash_tokenizer_bufsize(len));
	char	   *res = malloc(simhash_tokenizer_bufsize(len) + 1);
	SimhashTokenizer t;
	size_t		start,
				n,
				r = 0;

	simhash_tokenizer_init(&t, in, len, buf);
	while (simhash_tokenizer_next(&t, &start, &n))
	{
		if (r > 0)
			res[r++] = '|';
		memcpy(res + r, buf + start, n);
		r += n;
	}
	res[r] = '\0';
	free(buf);
	return res;
}

static void
expect(const char *in, const char *want)
{
	char	   *got = tokens(in, strlen(in));

	if (strcmp(got, want) == 0)
		passed++;
	else
	{
		failed++;
		printf("FAIL tokens(\"%s\"): got \"%s\", want \"%s\"\n", in, got, want);
	}
	free(got);
}

/*
 * The tokenizer's rules (tokenizer.h) written the obvious way, one code
 * point at a time with table searches: the reference that the tokenizer's
 * fast paths (sixteen or eight bytes at a time, the character read ahead)
 * must match byte for byte.
 */
static int
ref_class(uint32_t c)
{
	size_t		lo = 0,
				hi = UNICODE_RANGES_COUNT;

	if (c < 128)
		return ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
				(c >= 'A' && c <= 'Z')) ? UC_WORD : UC_SEP;
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

static uint32_t
ref_fold(uint32_t c)
{
	if (c < 128)
		return (c >= 'A' && c <= 'Z') ? c + 32 : c;
	for (size_t i = 0; i < UNICODE_FOLDS_COUNT; i++)
		if (unicode_folds[i].from == c)
			return unicode_folds[i].to;
	return c;
}

static size_t
ref_encode(uint32_t c, char *out)
{
	if (c < 0x80)
		return out[0] = (char) c, 1;
	if (c < 0x800)
		return out[0] = (char) (0xC0 | (c >> 6)), out[1] = (char) (0x80 | (c & 0x3F)), 2;
	if (c < 0x10000)
		return out[0] = (char) (0xE0 | (c >> 12)), out[1] = (char) (0x80 | ((c >> 6) & 0x3F)),
			out[2] = (char) (0x80 | (c & 0x3F)), 3;
	out[0] = (char) (0xF0 | (c >> 18));
	out[1] = (char) (0x80 | ((c >> 12) & 0x3F));
	out[2] = (char) (0x80 | ((c >> 6) & 0x3F));
	out[3] = (char) (0x80 | (c & 0x3F));
	return 4;
}

/*
 * The normalised text of in (tokens joined by one space) into out; per
 * token its end offset in the input and its "single" flag.  Returns the
 * number of tokens.
 */
static size_t
ref_tokens(const unsigned char *in, size_t len, char *out, size_t *outlen,
		   size_t *ends, bool *single)
{
	size_t		pos = 0,
				o = 0,
				ntok = 0;
	int			cur = UC_SEP;	/* the token being built: UC_WORD, UC_SINGLE or none */

	while (pos < len)
	{
		uint32_t	c;
		size_t		n = simhash_utf8_decode(in + pos, len - pos, &c);
		int			cls;

		if (c == UINT32_MAX)
			cls = UC_SEP;
		else
		{
			if (c >= 0xFF01 && c <= 0xFF5E)
				c -= 0xFEE0;
			cls = ref_class(c);
		}
		if (cur != UC_SEP && (cls == UC_MARK || (cur == UC_WORD && cls == UC_WORD)))
			o += ref_encode(ref_fold(c), out + o);	/* extends the token */
		else
		{
			if (cur != UC_SEP)
				ends[ntok - 1] = pos;
			cur = UC_SEP;
			if (cls == UC_WORD || cls == UC_SINGLE)
			{
				if (o > 0)
					out[o++] = ' ';
				o += ref_encode(ref_fold(c), out + o);
				cur = cls;
				single[ntok++] = (cls == UC_SINGLE);
			}
		}
		pos += n;
	}
	if (cur != UC_SEP)
		ends[ntok - 1] = pos;
	*outlen = o;
	return ntok;
}

/* random text from pieces that exercise every path, and random bytes */
static size_t
random_text(char *in, size_t cap)
{
	static const char *pieces[] = {
		"a", "Z", "word", "Mixed", "UPPERCASE", "0123456789",
		"averyveryverylongwordindeed", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcd",
		" ", "  ", ", ", ".\n", "                ", "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t",
		"-", "_", "'", "é", "É", "Ⱥ", "ǅ", "ß", "Σ", "中", "文", "ひ", "カ", "한",
		"ก", "ิ", "\xcc\x81", "Ａ", "ｚ", "１", "　", "\xe2\x84\xaa", "\xf0\xa0\x80\x80",
		"\xf0\x9f\x98\x80", "\xff", "\xc0\xaf", "\xed\xa0\x80", "\xe4\xb8", "\x80",
		"\xef\xbc", "Ⅻ", "①", "²",
		/* three-byte characters read without the general decoder */
		"\xe1\x80\x80", "\xec\xbf\xbf", "\xe0\xbf\xbf", "\xed\x9f\xbf",
		"\xe3\x80", "\xe9\x41", "\xe5\xc0\x80", "Ⴀ", "Ⓐ", "\xe3\x80\xaa",
		"\xe3\x82\x99", "가", "ខ", "က", "\xe3\x80\x80",
	};
	size_t		npieces = sizeof(pieces) / sizeof(pieces[0]);
	size_t		len = next() % cap;
	size_t		k = 0;

	if (next() % 8 == 0)
	{
		for (k = 0; k < len; k++)
			in[k] = (char) next();
		return len;
	}
	while (k < len)
	{
		const char *p = pieces[next() % npieces];
		size_t		pl = strlen(p);

		if (k + pl > len)
			break;
		memcpy(in + k, p, pl);
		k += pl;
	}
	return k;
}

/* the tokenizer against ref_tokens, token by token */
static void
test_reference(void)
{
	enum
	{
	CAP = 512};
	char		in[CAP];
	int			bad = 0;

	for (int round = 0; round < 200000 && bad < 5; round++)
	{
		size_t		len = random_text(in, CAP);
		char	   *buf = malloc(simhash_tokenizer_bufsize(len));
		char	   *want = malloc(simhash_tokenizer_bufsize(len));
		size_t		ends[CAP],
					wantlen,
					start,
					n,
					k = 0;
		bool		single[CAP];
		size_t		ntok = ref_tokens((const unsigned char *) in, len, want, &wantlen, ends, single);
		SimhashTokenizer t;
		bool		ok = true;

		simhash_tokenizer_init(&t, in, len, buf);
		while (ok && simhash_tokenizer_next(&t, &start, &n))
		{
			ok = k < ntok && t.pos == ends[k] && t.single == single[k] &&
				(k == 0 ? start == 0 : start > 0 && buf[start - 1] == ' ');
			k++;
		}
		ok = ok && k == ntok && t.outlen == wantlen && memcmp(buf, want, wantlen) == 0;
		if (ok)
			passed++;
		else
		{
			failed++;
			bad++;
			printf("FAIL reference tokens, round %d, %zu bytes: %.*s\n", round, len, (int) len, in);
		}
		free(buf);
		free(want);
	}
}

/* all shingle hashes of text, unbounded (stream = 0) or streaming */
static size_t
all_shingles(const char *text, size_t len, int window, size_t stream,
			 uint64_t *out, size_t *maxbuf)
{
	SimhashShingler s;
	size_t		ring[64];
	size_t		n = 0,
				k;
	char	   *buf = malloc(stream ? stream : simhash_tokenizer_bufsize(len));

	if (stream)
		simhash_shingler_init_stream(&s, text, len, buf, stream, window, ring, realloc);
	else
		simhash_shingler_init(&s, text, len, buf, window, ring);
	while ((k = simhash_shingler_next(&s, out + n, NULL, 7)) > 0)
	{
		n += k;
		if (stream && s.tok.outlen > s.outsize)
		{
			n = (size_t) -1;	/* overran the buffer */
			break;
		}
	}
	if (maxbuf)
		*maxbuf = stream ? s.outsize : 0;
	free(s.tok.out);
	return n;
}

/*
 * Streaming gives the same hashes as the whole-text shingler, on random
 * mixes of ASCII, CJK, combining marks, invalid bytes and long tokens, and
 * its buffer follows the longest window, not the text.
 */
static void
test_streaming(void)
{
	static const char *pieces[] = {
		"ab ", "cd ", "Hello", ", ", "\xe4\xb8\xad", "\xe6\x96\x87", "e\xcc\x81",
		"\xcc\x81", "\xff", "\xe2\x82", "  ", "\xef\xbc\xa1", "x", "9", "\n",
		"\xc3\x89t\xc3\xa9", "\xf0\x9f\x98\x80", "\xe0\xb8\x81\xe0\xb8\xb1"
	};
	size_t		cap = 200000;
	char	   *text = malloc(cap + 64);
	uint64_t   *a = malloc(sizeof(uint64_t) * (cap + 64));
	uint64_t   *b = malloc(sizeof(uint64_t) * (cap + 64));
	int			bad = 0;

	unit_seed(10);
	for (int round = 0; round < 300; round++)
	{
		size_t		len = 0,
					target = next() % (round < 200 ? 20000 : cap);
		int			window = 1 + (int) (next() % 8);
		int			npieces = 1 + (int) (next() % (sizeof(pieces) / sizeof(pieces[0])));
		size_t		na,
					nb;

		if (round % 50 == 7)
			window = 64;
		while (len < target)
		{
			const char *p = pieces[next() % npieces];

			/* now and then a long token */
			if (next() % 500 == 0)
			{
				size_t		run = next() % 9000;

				for (size_t i = 0; i < run && len < cap; i++)
					text[len++] = 'q';
				continue;
			}
			memcpy(text + len, p, strlen(p));
			len += strlen(p);
		}
		na = all_shingles(text, len, window, 0, a, NULL);
		nb = all_shingles(text, len, window, SIMHASH_STREAM_MIN_BUF + next() % 5000, b, NULL);
		if (na != nb || na == (size_t) -1 || memcmp(a, b, na * sizeof(uint64_t)) != 0)
		{
			if (bad++ < 3)
				printf("FAIL streaming differs: round %d, len %zu, window %d, %zu vs %zu hashes\n",
					   round, len, window, na, nb);
		}
	}
	CHECK(bad == 0, "streaming shingler differs from the whole-text shingler in %d of 300 texts", bad);

	/* 8 MB of two words: the buffer stays at its first size */
	{
		size_t		big = 8u << 20,
					maxbuf,
					n;
		char	   *t = malloc(big);
		uint64_t   *h = malloc(sizeof(uint64_t) * (big + 8));

		for (size_t i = 0; i < big; i++)
			t[i] = "ab cd "[i % 6];
		n = all_shingles(t, big, 3, 65536, h, &maxbuf);
		CHECK(n == (big + 2) / 3 - 2 && maxbuf == 65536,
			  "streaming 8 MB: %zu shingles, buffer %zu bytes", n, maxbuf);
		free(t);
		free(h);
	}
	free(text);
	free(a);
	free(b);
}

int
main(void)
{
	unit_seed(7);
	expect("", "");
	expect("  \t\n ,.;!? ", "");
	expect("Hello, World!", "hello|world");
	expect("don't stop-me now3.14", "don|t|stop|me|now3|14");
	expect("ÉCOLE Straße ΣΊΣΥΦΟΣ", "école|straße|σίσυφοσ");
	expect("中文分词", "中|文|分|词");
	expect("abc中文def", "abc|中|文|def");
	expect("ひらがな カタカナー", "ひ|ら|が|な|カ|タ|カ|ナ|ー");
	expect("한국어 텍스트", "한|국|어|텍|스|트");
	expect("ภาษาไทย", "ภ|า|ษ|า|ไ|ท|ย");
	expect("กิน", "กิ|น");				/* Thai vowel mark stays with its letter */
	expect("ＦＵＬＬ　ｗｉｄｔｈ１２", "full|width12");	/* full-width ASCII, ideographic space */
	expect("e\xcc\x81t\xc3\xa9", "e\xcc\x81t\xc3\xa9");	/* combining acute extends the word */
	expect("\xcc\x81" "abc", "abc");	/* a mark that follows no token is dropped */
	expect("caf\xff\xfe" "e", "caf|e");	/* invalid bytes separate */
	expect("a\xc0\xaf" "b", "a|b");		/* overlong form */
	expect("a\xed\xa0\x80" "b", "a|b");	/* surrogate */
	expect("a\xe4\xb8", "a");			/* truncated sequence */
	expect("\xf0\x9f\x98\x80smile", "smile");	/* emoji separates */
	expect("\xf0\xa0\x80\x80\xf0\xa0\x80\x81", "\xf0\xa0\x80\x80|\xf0\xa0\x80\x81");	/* CJK ext. B */
	expect("Ⅻ ①② x²", "ⅻ|①②|x²");
	expect("\xe2\x84\xaa" "elvin", "kelvin");	/* KELVIN SIGN folds to k */
	test_reference();

	/* output never exceeds the buffer bound; random bytes and random UTF-8 */
	for (int round = 0; round < 20000; round++)
	{
		size_t		len = next() % 64;
		char		in[64];
		char	   *buf = malloc(simhash_tokenizer_bufsize(len) + 16);
		SimhashTokenizer t;
		size_t		start,
					n;
		static const char *pieces[] = {"a", "Ⱥ", "中", " ", "\xcc\x81", "ǅ", "Ａ", "\xff", "ก"};

		if (round % 2)
			for (size_t k = 0; k < len; k++)
				in[k] = (char) next();
		else
		{
			size_t		k = 0;

			while (k < len)
			{
				const char *p = pieces[next() % 9];
				size_t		pl = strlen(p);

				if (k + pl > len)
					break;
				memcpy(in + k, p, pl);
				k += pl;
			}
			len = k;
		}
		memset(buf, 0x5a, simhash_tokenizer_bufsize(len) + 16);
		simhash_tokenizer_init(&t, in, len, buf);
		while (simhash_tokenizer_next(&t, &start, &n))
			;
		if (t.outlen <= simhash_tokenizer_bufsize(len) && buf[simhash_tokenizer_bufsize(len)] == 0x5a)
			passed++;
		else
		{
			failed++;
			printf("FAIL buffer bound: in %zu bytes, out %zu bytes\n", len, t.outlen);
		}
		free(buf);
	}

	/* shingles: hashes of the tokens joined by one space */
	{
		const char *text = "One two, THREE four five";
		const char *want3[] = {"one two three", "two three four", "three four five"};
		char		buf[128];
		size_t		ring[8];
		uint64_t	h[8];
		SimhashShingler s;
		size_t		n;

		simhash_shingler_init(&s, text, strlen(text), buf, 3, ring);
		n = simhash_shingler_next(&s, h, NULL, 8);
		passed += (n == 3);
		for (size_t i = 0; i < 3 && i < n; i++)
		{
			if (h[i] == simhash_feature_hash(want3[i], strlen(want3[i])))
				passed++;
			else
			{
				failed++;
				printf("FAIL shingle %zu\n", i);
			}
		}
		if (n != 3)
		{
			failed++;
			printf("FAIL shingle count %zu\n", n);
		}
		/* fewer tokens than the window: one shingle of all */
		simhash_shingler_init(&s, "Just two", 8, buf, 5, ring);
		n = simhash_shingler_next(&s, h, NULL, 8);
		if (n == 1 && h[0] == simhash_feature_hash("just two", 8))
			passed++;
		else
		{
			failed++;
			printf("FAIL short text shingle\n");
		}
		simhash_shingler_init(&s, " ,. ", 4, buf, 5, ring);
		if (simhash_shingler_next(&s, h, NULL, 8) == 0)
			passed++;
		else
		{
			failed++;
			printf("FAIL no tokens, no shingles\n");
		}
		/* XXH3-64 seed 0 known answer: empty input */
		if (simhash_feature_hash("", 0) == UINT64_C(0x2D06800538D394C2))
			passed++;
		else
		{
			failed++;
			printf("FAIL XXH3 empty = %016llx\n", (unsigned long long) simhash_feature_hash("", 0));
		}
	}

	/* the short-input hash paths agree with XXH3_64bits at every length */
	{
		unsigned char data[600];
		int			bad = 0;

		for (size_t k = 0; k < sizeof(data); k++)
			data[k] = (unsigned char) next();
		for (size_t len = 0; len <= sizeof(data); len++)
			for (size_t off = 0; off < 3 && off + len <= sizeof(data); off++)
				bad += simhash_feature_hash(data + off, len) !=
					simhash_feature_hash_reference(data + off, len);
		if (bad == 0)
			passed++;
		else
		{
			failed++;
			printf("FAIL feature hash differs from XXH3_64bits in %d cases\n", bad);
		}
	}

	test_streaming();

	/* simhash_v2's flags: a shingle is "CJK" when all its tokens are single letters */
	{
		const char *text = "中文，文本 ab 한국 x";
		/* tokens: 中 文 文 本 ab 한 국 x */
		const bool	want1[] = {1, 1, 1, 1, 0, 1, 1, 0};
		const bool	want2[] = {1, 1, 1, 0, 0, 1, 0};
		char		buf[128];
		size_t		ring[80];
		uint64_t	h[16],
					h2[16];
		bool		cjk[16];
		SimhashShingler s;
		size_t		n,
					n2;
		char		big[3 * 70 + 1];

		simhash_shingler_init(&s, text, strlen(text), buf, 1, ring);
		n = simhash_shingler_next_cjk(&s, h, NULL, cjk, 16);
		CHECK(n == 8, "cjk flags width 1: %zu shingles", n);
		for (size_t i = 0; i < n && i < 8; i++)
			CHECK(cjk[i] == want1[i], "cjk flag width 1, shingle %zu", i);
		simhash_shingler_init(&s, text, strlen(text), buf, 2, ring);
		n = simhash_shingler_next_cjk(&s, h, NULL, cjk, 16);
		CHECK(n == 7, "cjk flags width 2: %zu shingles", n);
		for (size_t i = 0; i < n && i < 7; i++)
			CHECK(cjk[i] == want2[i], "cjk flag width 2, shingle %zu", i);
		/* the same hashes as the plain shingler */
		simhash_shingler_init(&s, text, strlen(text), buf, 2, ring);
		n2 = simhash_shingler_next(&s, h2, NULL, 16);
		CHECK(n2 == n && memcmp(h, h2, n * sizeof(uint64_t)) == 0, "cjk shingler hashes differ");
		/* fewer tokens than the window */
		simhash_shingler_init(&s, "中文", strlen("中文"), buf, 5, ring);
		n = simhash_shingler_next_cjk(&s, h, NULL, cjk, 16);
		CHECK(n == 1 && cjk[0], "short CJK text: one CJK shingle");
		simhash_shingler_init(&s, "中 a", strlen("中 a"), buf, 5, ring);
		n = simhash_shingler_next_cjk(&s, h, NULL, cjk, 16);
		CHECK(n == 1 && !cjk[0], "short mixed text: not CJK");
		/* windows above 64 tokens are never CJK; up to 64 they can be */
		for (int i = 0; i < 70; i++)
			memcpy(big + 3 * i, "中", 3);
		big[210] = 0;
		{
			char		bigbuf[600];

			simhash_shingler_init(&s, big, 210, bigbuf, 64, ring);
			n = simhash_shingler_next_cjk(&s, h, NULL, cjk, 16);
			CHECK(n == 7 && cjk[0] && cjk[6], "window 64 of CJK: %zu", n);
			simhash_shingler_init(&s, big, 210, bigbuf, 65, ring);
			n = simhash_shingler_next_cjk(&s, h, NULL, cjk, 16);
			CHECK(n == 6 && !cjk[0], "window 65 is never CJK: %zu", n);
			simhash_shingler_init(&s, big, 210, bigbuf, 80, ring);
			n = simhash_shingler_next_cjk(&s, h, NULL, cjk, 16);
			CHECK(n == 1 && !cjk[0], "70 tokens, window 80: not CJK");
		}
	}

	return unit_report("test_tokenizer");
}
