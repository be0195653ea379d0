/*
 * bench/text_bench.c: throughput of the text pipeline (tokenizer, shingler,
 * tf counting, weighted vote) outside the server, on documents read from a file (one per line
 * group, split at 4 KB), for simhash(text) (version 1) and simhash_v2 (CJK
 * flags and weights), interleaved in one run; prints both and their ratio.
 * As in the server, one counting table serves every document (emptied
 * between them), and time is the process's CPU time.
 * Usage: text_bench FILE [window] [--print]
 * --print: no timing; each document's simhash and simhash_v2 in hex, one
 * line per document (bench/text_equiv.sh compares two builds with it).
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

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
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
	double		best[2] = {1e30, 1e30};
	SimhashFeatureCounts c;

	len = fread(data, 1, cap, f);
	if (argc > 3 && strcmp(argv[3], "--print") == 0)
	{
		SimhashFeatureCounts pc;

		simhash_counts_init(&pc, 512, zalloc, free);
		for (size_t off = 0; off < len; off += 4096)
		{
			size_t		n = len - off < 4096 ? len - off : 4096;
			SimhashShingler s;
			bool		cjk[1024];
			size_t		k;
			uint64_t	v1,
						v2;

			simhash_shingler_init(&s, data + off, n, buf, window, ring);
			while ((k = simhash_shingler_next(&s, batch, NULL, 1024)) > 0)
				simhash_counts_add(&pc, batch, k);
			v1 = simhash_counts_fingerprint(&pc);
			simhash_counts_reset(&pc);
			simhash_shingler_init(&s, data + off, n, buf, window, ring);
			while ((k = simhash_shingler_next_cjk(&s, batch, NULL, cjk, 1024)) > 0)
				simhash_counts_add_cjk(&pc, batch, cjk, k);
			v2 = simhash_counts_fingerprint_v2(&pc);
			simhash_counts_reset(&pc);
			printf("%016llx %016llx\n", (unsigned long long) v1, (unsigned long long) v2);
		}
		return 0;
	}
	simhash_counts_init(&c, 512, zalloc, free);
	for (int rep = 0; rep < 10; rep++)
	{
		for (int v2 = 0; v2 < 2; v2++)
		{
			double		t0 = now();

			for (size_t off = 0; off < len; off += 4096)
			{
				size_t		n = len - off < 4096 ? len - off : 4096;
				SimhashShingler s;
				bool		cjk[1024];
				size_t		k;

				simhash_shingler_init(&s, data + off, n, buf, window, ring);
				if (v2)
				{
					while ((k = simhash_shingler_next_cjk(&s, batch, NULL, cjk, 1024)) > 0)
						simhash_counts_add_cjk(&c, batch, cjk, k);
					acc += simhash_counts_fingerprint_v2(&c);
				}
				else
				{
					while ((k = simhash_shingler_next(&s, batch, NULL, 1024)) > 0)
						simhash_counts_add(&c, batch, k);
					acc += simhash_counts_fingerprint(&c);
				}
				simhash_counts_reset(&c);
			}
			t0 = now() - t0;
			if (t0 < best[v2])
				best[v2] = t0;
		}
	}
	printf("%zu bytes, window %d: simhash %.1f MB/s, simhash_v2 %.1f MB/s, v2/v1 time %.3f [%016llx]\n",
		   len, window, len / best[0] / 1e6, len / best[1] / 1e6, best[1] / best[0],
		   (unsigned long long) acc);
	return 0;
}
