/*
 * test_sentences.c: unit tests of the sentence fingerprints
 * (src/core/sentences.c) outside the server: boundaries, normalisation,
 * min_length in characters, repeated sentences, ties, the nshash edge
 * cases, and the pruned selection against a plain reference (every
 * sentence split by code points, normalised, sorted) on random texts.
 * Prints "test_sentences: N passed, N failed".
 */
#include "sentences.h"
#include "tokenizer.h"

#include <stdio.h>

#include "unit.h"
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

static size_t allocated_blocks;

static void *
test_realloc(void *arg, void *ptr, size_t size)
{
	void	   *p;

	(void) arg;
	if (size == 0)
	{
		free(ptr);
		allocated_blocks--;
		return NULL;
	}
	if (ptr == NULL)
		allocated_blocks++;
	p = realloc(ptr, size);
	if (p == NULL)
		abort();
	return p;
}

static SentenceWork work;

/* the fingerprints of a C string, copied into out[] (at most 64) */
static size_t
fp(const char *text, int n, int min_length, int64_t *out)
{
	const int64_t *h;
	size_t		k = sentence_hashes_compute(&work, text, strlen(text), n, min_length, &h);

	for (size_t i = 0; i < k && i < 64; i++)
		out[i] = h[i];
	return k;
}

/* XXH3 of a normalised sentence, as stored */
static int64_t
H(const char *normalised)
{
	return (int64_t) simhash_feature_hash(normalised, strlen(normalised));
}

static int
i64cmp(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

	return (x > y) - (x < y);
}

/* fp(text) is exactly the hashes of the given normalised sentences */
static void
expect(const char *text, int n, int min_length, int count, ...)
{
	int64_t		got[64],
				want[64];
	size_t		k = fp(text, n, min_length, got);
	va_list		ap;
	bool		same;

	va_start(ap, count);
	for (int i = 0; i < count; i++)
		want[i] = H(va_arg(ap, const char *));
	va_end(ap);
	qsort(want, count, sizeof(int64_t), i64cmp);
	same = (k == (size_t) count);
	for (int i = 0; same && i < count; i++)
		same = got[i] == want[i];
	CHECK(same, "fingerprints of \"%s\" (n %d, min_length %d): got %zu hashes, want %d",
		  text, n, min_length, k, count);
}

static bool
same_fp(const char *a, const char *b, int n, int min_length)
{
	int64_t		x[64],
				y[64];
	size_t		kx = fp(a, n, min_length, x),
				ky = fp(b, n, min_length, y);

	return kx == ky && memcmp(x, y, kx * sizeof(int64_t)) == 0;
}

/* ---------------------------------------------------------------- the reference */

static size_t
decode(const unsigned char *p, size_t n, uint32_t *cp)
{
	unsigned char b = p[0];
	size_t		len;
	uint32_t	c;

	*cp = 0xFFFFFFFF;
	if (b < 0x80)
	{
		*cp = b;
		return 1;
	}
	len = (b >= 0xC2 && b <= 0xDF) ? 2 : (b >= 0xE0 && b <= 0xEF) ? 3 :
		(b >= 0xF0 && b <= 0xF4) ? 4 : 0;
	if (len == 0 || len > n)
		return 1;
	c = b & (0xFF >> (len + 1));
	for (size_t i = 1; i < len; i++)
	{
		if ((p[i] & 0xC0) != 0x80)
			return 1;
		c = (c << 6) | (p[i] & 0x3F);
	}
	if ((len == 3 && (c < 0x800 || (c >= 0xD800 && c <= 0xDFFF))) ||
		(len == 4 && (c < 0x10000 || c > 0x10FFFF)))
		return 1;
	*cp = c;
	return len;
}

static bool
ref_is_space(uint32_t c)
{
	return c == ' ' || (c >= 9 && c <= 13) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
		(c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
		c == 0x205F || c == 0x3000;
}

static bool
ref_is_closer(uint32_t c)
{
	return c == '"' || c == '\'' || c == ')' || c == ']' || c == '}' || c == '.' ||
		c == '!' || c == '?' || c == ';' || c == 0xBB || c == 0x201D || c == 0x2019;
}

typedef struct RefSentence
{
	int64_t		hash;
	size_t		chars;
	size_t		pos;
} RefSentence;

static int
ref_cmp(const void *a, const void *b)
{
	const RefSentence *x = a,
			   *y = b;

	if (x->chars != y->chars)
		return x->chars > y->chars ? -1 : 1;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

static void
ref_sentence(const char *in, size_t s, size_t e, RefSentence *out, size_t *nout)
{
	char	   *buf = malloc(simhash_tokenizer_bufsize(e - s));
	SimhashTokenizer t;
	size_t		start,
				len,
				chars = 0;

	simhash_tokenizer_init(&t, in + s, e - s, buf);
	while (simhash_tokenizer_next(&t, &start, &len))
		;
	for (size_t i = 0; i < t.outlen;)
	{
		uint32_t	c;

		i += decode((const unsigned char *) buf + i, t.outlen - i, &c);
		if (c != ' ')
			chars++;
	}
	out[*nout].hash = (int64_t) simhash_feature_hash(buf, t.outlen);
	out[*nout].chars = chars;
	out[*nout].pos = s;
	(*nout)++;
	free(buf);
}

/* every sentence, split code point by code point, normalised, then selected */
static size_t
reference(const char *in, size_t len, int n, int min_length, int64_t *out)
{
	RefSentence *all = malloc((len + 1) * sizeof(RefSentence));
	size_t		nall = 0,
				s = 0,
				i = 0,
				nd = 0,
				k;

	while (i < len)
	{
		uint32_t	c;
		size_t		cl = decode((const unsigned char *) in + i, len - i, &c);
		bool		end = false;

		if (c == 0x0A || c == 0x0B || c == 0x0C || c == 0x0D || c == 0x85 ||
			c == 0x2028 || c == 0x2029 || c == 0x3002 || c == 0xFF0E ||
			c == 0xFF01 || c == 0xFF1F || c == 0xFF1B || c == 0xFF61)
			end = true;
		else if (c == '.' || c == '!' || c == '?' || c == ';')
		{
			size_t		j = i + 1;
			uint32_t	d = 0;

			while (j < len)
			{
				size_t		dl = decode((const unsigned char *) in + j, len - j, &d);

				if (!ref_is_closer(d))
					break;
				j += dl;
			}
			end = (j >= len || ref_is_space(d));
		}
		if (end)
		{
			ref_sentence(in, s, i, all, &nall);
			s = i + cl;
		}
		i += cl;
	}
	ref_sentence(in, s, len, all, &nall);

	/* qualifying, distinct (first position), longest first */
	for (size_t a = 0; a < nall; a++)
	{
		bool		dup = false;

		if (all[a].chars < (size_t) min_length)
			continue;
		for (size_t b = 0; b < nd && !dup; b++)
			dup = all[b].hash == all[a].hash;
		if (!dup)
			all[nd++] = all[a];
	}
	qsort(all, nd, sizeof(RefSentence), ref_cmp);
	k = nd < (size_t) n ? nd : (size_t) n;
	for (size_t a = 0; a < k; a++)
		out[a] = all[a].hash;
	qsort(out, k, sizeof(int64_t), i64cmp);
	free(all);
	return k;
}

/* ---------------------------------------------------------------- random texts */

static const char *const pieces[] = {
	"alpha", "Beta", "GAMMA", "delta", "epsilon", "δέλτα", "Straße", "ＡＢＣ", "ｆｕｌｌ",
	"中", "文", "字", "句", "子", "转", "载", "3.14", "e.g.", "U.S.", "x",
	" ", " ", " ", "  ", "\t", "\n", "\r\n", "　", "\xc2\xa0", "\xe2\x80\x83",
	".", ".", "!", "?", ";", "...", "?!", "。", "！", "？", "；", "．", "｡", "\xc2\x85", "\xe2\x80\xa8",
	"\"", "'", ")", "]", "”", "’", "»", ",", "，", "、", "…", "-", "—",
	"\xff", "\xe3\x80", "\xef\xbc", "\xe2\x80",
};

/* repeated sentences, in case and space variants */
static const char *const sentences[] = {
	"The quick brown fox jumps over the lazy dog. ",
	"the  QUICK brown fox\tjumps over the lazy dog! ",
	"转载请注明出处。",
	"本文来源于网络，如有侵权请联系删除。",
	"Alpha beta gamma; ",
	"Ａｌｐｈａ ｂｅｔａ ｇａｍｍａ；",
};

static size_t
random_text(char *buf, size_t cap)
{
	size_t		len = 0,
				npieces = next() % 120;

	for (size_t i = 0; i < npieces; i++)
	{
		const char *p = (next() % 8 == 0)
			? sentences[next() % (sizeof(sentences) / sizeof(sentences[0]))]
			: pieces[next() % (sizeof(pieces) / sizeof(pieces[0]))];
		size_t		pl = strlen(p);

		if (len + pl >= cap)
			break;
		memcpy(buf + len, p, pl);
		len += pl;
	}
	buf[len] = '\0';
	return len;
}

static void
test_random(int rounds)
{
	char		text[4096];
	int			bad = 0;

	for (int r = 0; r < rounds; r++)
	{
		size_t		len = random_text(text, sizeof(text));
		int			n = 1 + (int) (next() % 8);
		int			min_length = 1 + (int) (next() % 12);
		int64_t		want[4096];
		const int64_t *got;
		size_t		kw = reference(text, len, n, min_length, want),
					kg = sentence_hashes_compute(&work, text, len, n, min_length, &got);

		if (kw != kg || (kg > 0 && memcmp(want, got, kg * sizeof(int64_t)) != 0))
		{
			if (bad++ < 5)
				printf("FAIL random text %d (n %d, min_length %d): %zu hashes, reference %zu: \"%s\"\n",
					   r, n, min_length, kg, kw, text);
		}
	}
	CHECK(bad == 0, "%d of %d random texts differ from the reference", bad, rounds);
}

/* the work space's check: counts its calls; jumps out at the call numbered stop_at */
static size_t checks;
static size_t stop_at;
static jmp_buf stop_jump;

static void
count_check(void *arg)
{
	(void) arg;
	if (++checks == stop_at)
		longjmp(stop_jump, 1);
}

int
main(void)
{
	int64_t		a[64],
				b[64];
	size_t		ka,
				kb;

	unit_seed(20240606);
	sentence_work_init(&work, test_realloc, NULL);

	/* empty text, text without a qualifying sentence */
	CHECK(fp("", 5, 1, a) == 0, "empty text has no fingerprint");
	CHECK(fp("  \n\t 。。！ ...", 5, 1, a) == 0, "punctuation only has no fingerprint");
	CHECK(fp("Short one.", 5, 20, a) == 0, "a short text has no fingerprint");

	/* nshash: short texts ending in 。 shared the hash of the empty sentence */
	ka = fp("你好。", 5, 1, a);
	kb = fp("谢谢。", 5, 1, b);
	CHECK(ka == 1 && kb == 1 && a[0] != b[0] && a[0] != H("") && b[0] != H(""),
		  "two short texts ending in 。 share no fingerprint");
	expect("你好。", 5, 1, 1, "你 好");
	CHECK(fp("你好。", 5, 20, a) == 0 && fp("谢谢。", 5, 20, b) == 0,
		  "short texts ending in 。 have no fingerprint at min_length 20");

	/* boundaries */
	expect("One two. Three four! Five six? Seven eight; nine", 10, 1, 5,
		   "one two", "three four", "five six", "seven eight", "nine");
	expect("pi is 3.14 and e.g. this", 10, 1, 2, "pi is 3 14 and e g", "this");
	expect("a.b.c x", 10, 1, 1, "a b c x");
	expect("He said \"stop.\" Then left.", 10, 1, 2, "he said stop", "then left");
	expect("(Done.) Next one", 10, 1, 2, "done", "next one");
	expect("Wait?! Really... yes", 10, 1, 3, "wait", "really", "yes");
	expect("Ends here.", 10, 1, 1, "ends here");
	expect("no space.after", 10, 1, 1, "no space after");
	expect("full stop.\xe3\x80\x80" "next", 10, 1, 2, "full stop", "next");
	expect("nbsp.\xc2\xa0" "next", 10, 1, 2, "nbsp", "next");
	expect("line one\nline two\r\nline three\rfour\vfive\fsix", 10, 1, 6,
		   "line one", "line two", "line three", "four", "five", "six");
	expect("nel\xc2\x85" "ls\xe2\x80\xa8" "ps\xe2\x80\xa9" "end", 10, 1, 4, "nel", "ls", "ps", "end");
	expect("第一句。第二句！第三句？第四句；第五句．第六句｡第七句", 10, 1, 7,
		   "第 一 句", "第 二 句", "第 三 句", "第 四 句", "第 五 句", "第 六 句", "第 七 句");
	expect("中文，逗号不分句、顿号也不分句", 10, 1, 1, "中 文 逗 号 不 分 句 顿 号 也 不 分 句");
	expect("mixed 中文 text。English part. 混合", 10, 1, 3, "mixed 中 文 text", "english part", "混 合");
	expect("truncated \xe3\x80", 10, 1, 1, "truncated");
	expect("\xff\xfe bytes\xe3\x80\x82" "ok", 10, 1, 2, "bytes", "ok");

	/* whitespace, case and width variants hash equal */
	CHECK(same_fp("Hello   World. The End", "  hello world.\tTHE end  ", 5, 1),
		  "whitespace and case variants are equal");
	CHECK(same_fp("ＨＥＬＬＯ　ｗｏｒｌｄ！", "hello world!", 5, 1), "full-width variants are equal");
	CHECK(same_fp("ΣΊΣΥΦΟΣ and Straße.", "σίσυφοσ AND STRASSE.", 5, 1) == false,
		  "simple case folding: ß is not ss");
	CHECK(same_fp("ΣΊΣΥΦΟΣ and STRAßE.", "σίσυφοσ and straße.", 5, 1),
		  "Unicode case folding");
	CHECK(same_fp("中文 English", "中文English", 5, 1), "spaces between scripts do not matter");
	CHECK(!same_fp("one two three", "one two four", 5, 1), "different sentences differ");

	/* min_length counts characters, not bytes nor spaces or punctuation */
	CHECK(fp("一二三四五六七八九十。", 5, 10, a) == 1, "10 Chinese characters reach min_length 10");
	CHECK(fp("一二三四五六七八九十。", 5, 11, a) == 0, "10 Chinese characters (30 bytes) do not reach 11");
	CHECK(fp("abcde fghij.", 5, 10, a) == 1 && fp("abcde fghij.", 5, 11, a) == 0,
		  "spaces and punctuation do not count");
	CHECK(fp("ＡＢＣＤＥ", 5, 5, a) == 1 && fp("ＡＢＣＤＥ", 5, 6, a) == 0,
		  "a full-width letter is one character");
	CHECK(fp("e\xcc\x81" "e\xcc\x81", 5, 4, a) == 1 && fp("e\xcc\x81" "e\xcc\x81", 5, 5, a) == 0,
		  "combining marks count");

	/* the n longest, ties by position, fewer than n */
	expect("aaaa. bbb. cc. d. eeeee", 2, 1, 2, "eeeee", "aaaa");
	expect("xx. yy. zz. ww", 2, 1, 2, "xx", "yy");
	expect("xx. yy. zz. ww", 3, 1, 3, "xx", "yy", "zz");
	expect("aaaa. bbb", 5, 1, 2, "aaaa", "bbb");
	expect("aaaa. bbb. cc", INT_MAX, 1, 3, "aaaa", "bbb", "cc");
	expect("aaaa. bbb. cc", 5, 3, 2, "aaaa", "bbb");

	/* repeated sentences count once */
	expect("Same sentence here. Same sentence here. same  SENTENCE here! Other one. Third",
		   2, 1, 2, "same sentence here", "other one");
	ka = fp("Repeat me now. Repeat me now. Repeat me now. Repeat me now. Repeat me now. Short. Tiny",
			5, 1, a);
	CHECK(ka == 3, "five copies of a sentence leave room for the others (%zu)", ka);
	expect("dup. dup. longer one. dup", 2, 1, 2, "longer one", "dup");

	/* ascending as signed 64-bit values */
	ka = fp("one sentence. another sentence. a third sentence. the fourth one. and a fifth. six",
			10, 1, a);
	{
		bool		sorted = ka == 6;

		for (size_t i = 1; i < ka; i++)
			sorted = sorted && a[i - 1] < a[i];
		CHECK(sorted, "hashes ascending (%zu)", ka);
	}

	/* a call that did not finish leaves garbage in the set: the next clears it */
	if (work.set)
	{
		for (size_t i = 0; i < work.set_cap; i++)
			work.set[i] = 1 + i % 3;
		work.set_dirty = true;
	}
	expect("Hello   World. The End", 5, 1, 2, "hello world", "the end");

	/* many sentences: the set and the heap grow */
	{
		char	   *big = malloc(200000);
		size_t		len = 0;
		int64_t    *want = malloc(20000 * sizeof(int64_t));
		const int64_t *got;
		size_t		kw,
					kg;

		for (int i = 0; i < 10000; i++)
			len += (size_t) sprintf(big + len, "s%d w%d. ", i % 7000, (i % 7000) % 13);
		kw = reference(big, len, 5000, 1, want);
		kg = sentence_hashes_compute(&work, big, len, 5000, 1, &got);
		CHECK(kw == 5000 && kg == kw && memcmp(want, got, kg * sizeof(int64_t)) == 0,
			  "10,000 sentences (7,000 distinct), n 5000: %zu, reference %zu", kg, kw);
		kw = reference(big, len, INT_MAX, 1, want);
		kg = sentence_hashes_compute(&work, big, len, INT_MAX, 1, &got);
		CHECK(kw == 7000 && kg == kw && memcmp(want, got, kg * sizeof(int64_t)) == 0,
			  "10,000 sentences, n INT_MAX: %zu, reference %zu", kg, kw);

		/*
		 * with a check: the same results (sorts of more than 4096 elements
		 * are heapsorts then), the check called; a call it leaves midway
		 * (an interrupt) leaves the work space usable
		 */
		sentence_work_set_check(&work, count_check, NULL);
		for (int round = 0; round < 2; round++)
		{
			kw = reference(big, len, round == 0 ? 5000 : INT_MAX, 1, want);
			checks = 0;
			kg = sentence_hashes_compute(&work, big, len, round == 0 ? 5000 : INT_MAX, 1, &got);
			CHECK(kg == kw && memcmp(want, got, kg * sizeof(int64_t)) == 0 && checks >= 10,
				  "with a check, n %s: %zu, reference %zu, %zu checks",
				  round == 0 ? "5000" : "INT_MAX", kg, kw, checks);
		}
		checks = 0;
		stop_at = 5;
		if (setjmp(stop_jump) == 0)
		{
			sentence_hashes_compute(&work, big, len, INT_MAX, 1, &got);
			CHECK(false, "the check's jump left the computation");
		}
		stop_at = 0;
		kw = reference(big, len, INT_MAX, 1, want);
		kg = sentence_hashes_compute(&work, big, len, INT_MAX, 1, &got);
		CHECK(kg == kw && memcmp(want, got, kg * sizeof(int64_t)) == 0,
			  "after a computation left midway: %zu, reference %zu", kg, kw);
		sentence_work_set_check(&work, NULL, NULL);
		free(big);
		free(want);
	}

	test_random(20000);

	sentence_work_free(&work);
	CHECK(allocated_blocks == 0, "every block freed (%zu left)", allocated_blocks);
	CHECK(sentence_work_size(&work) == 0, "no memory held after free");
	return unit_report("test_sentences");
}
