/*
 * bench/text_bench.c: throughput of the text pipeline (tokenizer, shingler,
 * tf counting, weighted vote) outside the server, on documents read from a file (one per line
 * group, split at 4 KB).  Usage: text_bench FILE [window]
 */
#define _POSIX_C_SOURCE 199309L
#include "tfweight.h"
#include "tokenizer.h"
#include "vote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *
zalloc(size_t n)
{
	return calloc(1, n);
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int
main(int argc, char **argv)
{
	FILE	   *f = fopen(argv[1], "rb");
	int			window = argc > 2 ? atoi(argv[2]) : 1;
	size_t		cap = 1 << 28,
				len;
	char	   *data = malloc(cap);
	char	   *buf = malloc(simhash_tokenizer_bufsize(4096));
	size_t		ring[64];
	uint64_t	batch[1024],
				acc = 0;
	double		best = 1e30;

	len = fread(data, 1, cap, f);
	for (int rep = 0; rep < 5; rep++)
	{
		double		t0 = now();

		for (size_t off = 0; off < len; off += 4096)
		{
			size_t		n = len - off < 4096 ? len - off : 4096;
			SimhashShingler s;
			SimhashFeatureCounts c;
			size_t		k;

			simhash_shingler_init(&s, data + off, n, buf, window, ring);
			simhash_counts_init(&c, n / 8, zalloc, free);
			while ((k = simhash_shingler_next(&s, batch, NULL, 1024)) > 0)
				simhash_counts_add(&c, batch, k);
			acc ^= simhash_counts_fingerprint(&c);
			simhash_counts_free(&c);
		}
		t0 = now() - t0;
		if (t0 < best)
			best = t0;
	}
	printf("%zu bytes, window %d: %.1f MB/s (%.2f ns/byte) [%016llx]\n", len, window,
		   len / best / 1e6, best * 1e9 / len, (unsigned long long) acc);
	return 0;
}
