/*
 * test/fuzz/fuzz_minhash.c: libFuzzer target for the MinHash shingler
 * (char and term shingles) and signatures (src/core/minhash.c) on arbitrary
 * bytes.  Checks: no out-of-bounds access or undefined behaviour; every
 * span inside the shingle text; each hash equal to hashing its span; the
 * shingle count that of the units (a text with fewer units than n_gram has
 * one shingle); a signature with shingles has no empty slot after
 * densification, and one without shingles is empty.
 */
#include "minhash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, "check failed: %s\n", #cond); abort(); } } while (0)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int			type = size > 0 ? data[0] % 2 : 0;	/* char or term */
	int			n_gram = size > 1 ? 1 + data[1] % 12 : 3;
	int			k = size > 2 ? 1 + data[2] % 64 : 8;
	uint64_t	seed = size > 3 ? data[3] : 0;
	const char *text = size > 4 ? (const char *) data + 4 : "";
	size_t		len = size > 4 ? size - 4 : 0;
	char	   *buf = malloc(minhash_bufsize(len));
	char	   *buf2 = malloc(minhash_bufsize(len));
	size_t	   *ring = malloc(sizeof(size_t) * n_gram);
	uint32_t   *slots = malloc(sizeof(uint32_t) * k);
	int		   *work = malloc(sizeof(int) * k);
	MinhashShingler s;
	uint64_t	hashes[32];
	size_t		spans[64];
	size_t		n,
				total = 0;
	bool		nonempty;

	minhash_shingler_init(&s, type, n_gram, seed, text, len, buf, ring);
	while ((n = minhash_shingler_next(&s, hashes, spans, 1 + len % 32)) > 0)
	{
		const char *t = minhash_shingler_text(&s);
		size_t		tlen = type == MINHASH_CHAR ? s.textlen : s.tok.outlen;

		for (size_t i = 0; i < n; i++)
		{
			CHECK(spans[2 * i] + spans[2 * i + 1] <= tlen);
			CHECK(minhash_hash(t + spans[2 * i], spans[2 * i + 1], seed) == hashes[i]);
		}
		total += n;
	}
	CHECK(s.nunits == 0 ? total == 0 :
		  total == (s.nunits < (uint64_t) n_gram ? 1 : s.nunits - n_gram + 1));

	nonempty = minhash_text_slots(text, len, type, n_gram, k, seed, buf2, ring, slots, work);
	CHECK(nonempty == (total > 0));
	if (nonempty)
		CHECK(minhash_invalid_slot(slots, k) == 0);

	free(buf);
	free(buf2);
	free(ring);
	free(slots);
	free(work);
	return 0;
}
