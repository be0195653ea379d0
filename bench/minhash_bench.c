/*
 * minhash_bench.c: the MinHash algorithm choice, measured outside the
 * server (run by bench/minhash.sh).  Over the bytes of a file taken as
 * 4,000-byte texts, with 9-character shingles and 128 permutations:
 *	- the shipped pipeline (src/core/minhash.c): normalise, hash each shingle
 *	  once (XXH3-64), one-permutation hashing, densification;
 *	- its stages: normalising only, and normalising + hashing;
 *	- the classic alternative on the same shingle hashes: 128 hash
 *	  functions per shingle, h_i(x) = a_i x + b_i mod 2^32 on the low 32
 *	  bits (a vectorisable multiply-add family), keeping each minimum.
 * Prints MB/s and ns per shingle, best of 3 (CPU time).
 *
 *	cc -O2 -Isrc/core bench/minhash_bench.c src/core/minhash.c src/core/tokenizer.c src/core/input.c -lm
 *	./a.out bench/data/corpus_big.csv
 */
#include "minhash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define K 128
#define CHUNK 4000
#define BATCH 1024

static double
cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* the multiply-add family: k minima per shingle, no branches */
static void
multiply_add(uint32_t *mins, const uint32_t *a, const uint32_t *b,
			 const uint64_t *hashes, size_t n)
{
	for (size_t i = 0; i < n; i++)
	{
		uint32_t	x = (uint32_t) hashes[i];

		for (int j = 0; j < K; j++)
		{
			uint32_t	v = a[j] * x + b[j];

			mins[j] = v < mins[j] ? v : mins[j];
		}
	}
}

int
main(int argc, char **argv)
{
	FILE	   *f;
	long		size;
	char	   *data;
	char	   *buf = malloc(minhash_bufsize(CHUNK));
	size_t		ring[16];
	uint64_t	hashes[BATCH];
	uint32_t	slots[K],
				mins[K],
				a[K],
				b[K];
	int			work[K];
	uint64_t	rng = 42;
	static const char *const names[] = {
		"normalise only", "normalise + hash shingles",
		"minhash(): + one-permutation hashing + densification",
		"normalise + hash + 128 multiply-add functions"
	};

	if (argc != 2 || (f = fopen(argv[1], "rb")) == NULL)
	{
		fprintf(stderr, "usage: minhash_bench FILE\n");
		return 2;
	}
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fseek(f, 0, SEEK_SET);
	data = malloc(size);
	if (fread(data, 1, size, f) != (size_t) size)
		return 1;
	fclose(f);
	for (int j = 0; j < K; j++)
	{
		rng = rng * 6364136223846793005u + 1442695040888963407u;
		a[j] = (uint32_t) (rng >> 32) | 1;
		rng = rng * 6364136223846793005u + 1442695040888963407u;
		b[j] = (uint32_t) (rng >> 32);
	}

	printf("%ld bytes in %ld texts of %d bytes, n_gram 9, %d permutations\n",
		   size, size / CHUNK, CHUNK, K);
	for (int mode = 0; mode < 4; mode++)
	{
		double		best = 1e30;
		uint64_t	shingles = 0,
					check = 0;

		for (int rep = 0; rep < 3; rep++)
		{
			double		t0 = cpu_now();

			shingles = 0;
			check = 0;
			for (long p = 0; p + CHUNK <= size; p += CHUNK)
			{
				MinhashShingler s;
				MinhashSketch sk;
				size_t		n;

				if (mode == 0)
				{
					check += minhash_char_text(data + p, CHUNK, buf);
					continue;
				}
				minhash_shingler_init(&s, MINHASH_CHAR, 9, 0, data + p, CHUNK, buf, ring);
				minhash_sketch_init(&sk, slots, K, 0);
				memset(mins, 0xFF, sizeof(mins));
				while ((n = minhash_shingler_next(&s, hashes, NULL, BATCH)) > 0)
				{
					shingles += n;
					if (mode == 1)
						check += hashes[0];
					else if (mode == 2)
						minhash_sketch_add(&sk, hashes, n);
					else
						multiply_add(mins, a, b, hashes, n);
				}
				if (mode == 2)
				{
					minhash_sketch_finish(&sk, work);
					check += slots[0];
				}
				else if (mode == 3)
					check += mins[0];
			}
			{
				double		t = cpu_now() - t0;

				best = t < best ? t : best;
			}
		}
		if (mode == 0)
			printf("%-55s %7.1f MB/s\n", names[mode], size / 1e6 / best);
		else
			printf("%-55s %7.1f MB/s %7.2f ns/shingle  (check %llu)\n", names[mode],
				   size / 1e6 / best, best * 1e9 / shingles, (unsigned long long) (check & 0xFFFF));
	}
	free(data);
	free(buf);
	return 0;
}
