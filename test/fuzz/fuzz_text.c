/*
 * test/fuzz/fuzz_text.c: libFuzzer target for the text pipeline (tokenizer,
 * shingler, vote) on arbitrary bytes.  Checks: no out-of-bounds access
 * (ASan), output within the documented buffer bound, tokens never empty and
 * free of spaces, shingle hashes equal to hashing the joined tokens, and
 * the streaming shingler (bounded buffer, chunks at token boundaries)
 * giving the same hashes as the whole-text one.
 */
#include "tfweight.h"
#include "tokenizer.h"
#include "vote.h"

#include <stdlib.h>
#include <string.h>

static void *
zalloc(size_t n)
{
	return calloc(1, n);
}

/* naive reference of the tf-weighted vote over a list of hashes */
static uint64_t
reference(const uint64_t *h, size_t n)
{
	long long	v[64] = {0};
	uint64_t	r = 0;

	for (size_t i = 0; i < n; i++)
	{
		size_t		cnt = 0;
		int			first = 1;

		for (size_t j = 0; j < n; j++)
		{
			if (h[j] == h[i])
			{
				cnt++;
				if (j < i)
					first = 0;
			}
		}
		if (!first)
			continue;
		for (int b = 0; b < 64; b++)
			v[b] += ((h[i] >> b) & 1) ? (long long) simhash_tf_weight(cnt) : -(long long) simhash_tf_weight(cnt);
	}
	for (int b = 0; b < 64; b++)
		if (v[b] > 0)
			r |= UINT64_C(1) << b;
	return r;
}

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
	uint64_t   *all = malloc(sizeof(uint64_t) * (size + 1));
	size_t		nall = 0;
	SimhashFeatureCounts counts;

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
	simhash_counts_init(&counts, size % 7, zalloc, free);
	while ((k = simhash_shingler_next(&s, hashes, NULL, 64)) > 0)
	{
		simhash_vote_add(&v, hashes, k);
		/* few distinct values, so counts above 1 are common */
		for (size_t i = 0; i < k; i++)
			hashes[i] = (size > 1 && data[1] & 1) ? hashes[i] % 5 : hashes[i];
		simhash_counts_add(&counts, hashes, k);
		memcpy(all + nall, hashes, k * sizeof(uint64_t));
		nall += k;
		nsh += k;
	}
	if (simhash_counts_fingerprint(&counts) != reference(all, nall))
		abort();
	simhash_counts_free(&counts);

	/*
	 * simhash_v2's shingler: the same hashes, in the same order; a shingle
	 * flagged CJK has no ASCII letter or digit; without flags v2 votes as v1
	 */
	{
		SimhashShingler s2;
		SimhashFeatureCounts c1,
					c2;
		uint64_t	h2[64];
		bool		cjk[64],
					none[64] = {false};
		size_t		spans[128],
					k2,
					pos = 0;

		simhash_shingler_init(&s2, (const char *) data, size, buf2, window, ring);
		simhash_counts_init(&c1, 0, zalloc, free);
		simhash_counts_init(&c2, 0, zalloc, free);
		while ((k2 = simhash_shingler_next_cjk(&s2, h2, spans, cjk, 64)) > 0)
		{
			for (size_t i = 0; i < k2; i++)
			{
				const char *sh = buf2 + spans[2 * i];

				if (pos + i >= nall ||
					(!(size > 1 && data[1] & 1) && all[pos + i] != h2[i]))
					abort();
				for (size_t b = 0; cjk[i] && b < spans[2 * i + 1]; b++)
					if ((sh[b] >= 'a' && sh[b] <= 'z') || (sh[b] >= '0' && sh[b] <= '9'))
						abort();
			}
			pos += k2;
			simhash_counts_add_cjk(&c1, h2, none, k2);
			simhash_counts_add(&c2, h2, k2);
		}
		if (pos != nall)
			abort();
		if (simhash_counts_fingerprint_v2(&c1) != simhash_counts_fingerprint(&c2) ||
			(simhash_counts_distinct(&c1) == 0) != (nall == 0))
			abort();
		simhash_counts_free(&c1);
		simhash_counts_free(&c2);
	}
	free(all);
	if (ntok == 0 ? nsh != 0 : nsh != (ntok < (size_t) window ? 1 : ntok - window + 1))
		abort();
	if (memcmp(buf, buf2, t.outlen) != 0)
		abort();
	(void) simhash_vote_result(&v);

	/* streaming, with the smallest buffers: the same hashes */
	{
		uint64_t   *whole = malloc(sizeof(uint64_t) * (size + 1));
		size_t		nwhole = 0,
					nstream = 0;
		SimhashShingler ws,
					ss;
		size_t		outsize = SIMHASH_STREAM_MIN_BUF + (size > 2 ? data[2] : 0);
		char	   *sbuf = malloc(outsize);

		simhash_shingler_init(&ws, (const char *) data, size, buf2, window, ring);
		while ((k = simhash_shingler_next(&ws, whole + nwhole, NULL, 64)) > 0)
			nwhole += k;
		simhash_shingler_init_stream(&ss, (const char *) data, size, sbuf, outsize,
									 window, ring, realloc);
		while ((k = simhash_shingler_next(&ss, hashes, NULL, 1 + size % 64)) > 0)
		{
			if (ss.tok.outlen > ss.outsize || nstream + k > nwhole ||
				memcmp(hashes, whole + nstream, k * sizeof(uint64_t)) != 0)
				abort();
			nstream += k;
		}
		if (nstream != nwhole)
			abort();
		free(ss.tok.out);
		free(whole);
	}
	free(buf);
	free(buf2);
	free(ring);
	return 0;
}
