/*
 * test/fuzz/fuzz_sentences.c: libFuzzer target for the sentence splitter
 * and fingerprints (src/core/sentences.c) on arbitrary bytes.  Checks: no
 * out-of-bounds access or undefined behaviour, at most n hashes, strictly
 * ascending (distinct), the same result when the work space is reused, and
 * no memory left behind (LeakSanitizer).
 */
#include "sentences.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, "check failed: %s\n", #cond); abort(); } } while (0)

static void *
re(void *arg, void *ptr, size_t size)
{
	(void) arg;
	if (size == 0)
	{
		free(ptr);
		return NULL;
	}
	ptr = realloc(ptr, size);
	if (ptr == NULL)
		abort();
	return ptr;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int			n = size > 0 ? 1 + data[0] % 8 : 5;
	int			min_length = size > 1 ? 1 + data[1] % 30 : 20;
	const char *text = size > 2 ? (const char *) data + 2 : "";
	size_t		len = size > 2 ? size - 2 : 0;
	SentenceWork w;
	const int64_t *h;
	int64_t		first[8];
	size_t		k,
				k2;

	sentence_work_init(&w, re, NULL);
	k = sentence_hashes_compute(&w, text, len, n, min_length, &h);
	CHECK(k <= (size_t) n);
	for (size_t i = 1; i < k; i++)
		CHECK(h[i - 1] < h[i]);
	if (k > 0)
		memcpy(first, h, k * sizeof(int64_t));
	k2 = sentence_hashes_compute(&w, text, len, n, min_length, &h);
	CHECK(k2 == k && (k == 0 || memcmp(first, h, k * sizeof(int64_t)) == 0));
	sentence_work_free(&w);
	return 0;
}
