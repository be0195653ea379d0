/*
 * bench/find_all_bench.c: CPU time of the permuted-table find_all
 * (src/core/find_all.c and the search it drives, the code that
 * simhash_find_all() runs) on a fixed data set, and
 * the data set itself for bench/find_all_baseline.cpp.  Run through
 * bench/find_all.sh.
 *
 *	find_all_bench N FILE DISTANCE BLOCKS...
 *
 * The data set (also built in SQL by bench/find_all.sh): with P = N / 1000,
 * values 1 .. N-P are XXH3-64 (seed 0) of the decimal strings "1" .. "N-P"
 * (what simhash_hash(i::text) gives), and P more are near-copies of the
 * first P at 1 .. 3 bits: value j (1 .. P) with bits x & 63, and for j % 3
 * >= 1 also (x >> 8) & 63, and for j % 3 == 2 also (x >> 16) & 63, flipped,
 * where x = XXH3-64 of "x" followed by j.  Written to FILE as raw
 * native-endian uint64.
 */
#define _POSIX_C_SOURCE 199309L
#include "blocks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

static double
cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t
hash_str(const char *prefix, size_t i)
{
	char		buf[64];
	int			len = snprintf(buf, sizeof(buf), "%s%zu", prefix, i);

	return XXH3_64bits(buf, (size_t) len);
}

int
main(int argc, char **argv)
{
	size_t		n,
				p;
	uint64_t   *h,
			   *keys,
			   *tmp,
				check = 0;
	int			distance;
	FILE	   *out;

	if (argc < 5)
	{
		fprintf(stderr, "usage: %s N FILE DISTANCE BLOCKS...\n", argv[0]);
		return 2;
	}
	n = strtoull(argv[1], NULL, 10);
	distance = atoi(argv[3]);
	p = n / 1000;
	h = malloc(n * sizeof(uint64_t));
	keys = malloc(n * sizeof(uint64_t));
	tmp = malloc(n * sizeof(uint64_t));
	if (!h || !keys || !tmp)
	{
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	for (size_t i = 1; i <= n - p; i++)
		h[i - 1] = hash_str("", i);
	for (size_t j = 1; j <= p; j++)
	{
		uint64_t	x = hash_str("x", j);
		uint64_t	mask = UINT64_C(1) << (x & 63);

		if (j % 3 >= 1)
			mask |= UINT64_C(1) << ((x >> 8) & 63);
		if (j % 3 == 2)
			mask |= UINT64_C(1) << ((x >> 16) & 63);
		h[n - p + j - 1] = hash_str("", j) ^ mask;
	}
	for (size_t i = 0; i < n; i++)
		check ^= h[i];
	out = fopen(argv[2], "wb");
	if (!out || fwrite(h, sizeof(uint64_t), n, out) != n || fclose(out) != 0)
	{
		fprintf(stderr, "cannot write %s\n", argv[2]);
		return 1;
	}
	printf("data n=%zu planted=%zu xor=%016llx\n", n, p, (unsigned long long) check);

	for (int a = 4; a < argc; a++)
	{
		int			blocks = atoi(argv[a]);
		int			reps = n <= 2000000 ? 3 : 1;
		double		best = 1e30;
		size_t		pairs = 0;
		SimhashBlocks b;

		if (!simhash_blocks_init(&b, blocks, distance))
		{
			fprintf(stderr, "blocks %d, distance %d: %s\n", blocks, distance,
					simhash_blocks_status_message(simhash_blocks_validate(blocks, distance)));
			return 1;
		}
		for (int r = 0; r < reps; r++)
		{
			SimhashFindAll *f = malloc(sizeof(SimhashFindAll));
			SimhashMatch buf[256];
			double		t0 = cpu_seconds(),
						t;

			pairs = 0;
			simhash_find_all_begin(f, &b, h, n, keys, tmp);
			while (!simhash_find_all_done(f))
				pairs += simhash_find_all_next(f, buf, 256);
			t = cpu_seconds() - t0;
			free(f);
			if (t < best)
				best = t;
		}
		printf("ours blocks=%d distance=%d tables=%d cpu_s=%.3f pairs=%zu\n",
			   blocks, distance, b.ntables, best, pairs);
		fflush(stdout);
	}
	free(h);
	free(keys);
	free(tmp);
	return 0;
}
