/*
 * test/fuzz/driver.c: a standalone main() for the fuzz targets when
 * libFuzzer is not available (gcc): runs the target on each file given,
 * then on seeded random inputs (mutated prefixes of the files and of
 * random bytes biased to ASCII, UTF-8 lead bytes and separators) until
 * -max_total_time=SECONDS has passed.  Built with ASan and UBSan by
 * test/fuzz/Makefile.  No coverage guidance: a smoke test, not a fuzzer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t state = 0x9E3779B97F4A7C15u;

static uint64_t
rnd(void)
{
	uint64_t	z = (state += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

int
main(int argc, char **argv)
{
	static const uint8_t alphabet[] = "ab c,.!?\n0x-(),=v1 ffff\xe4\xb8\xad\xcc\x81\xef\xbc\xa1\xff\xc3";
	long		seconds = 10;
	size_t		max_len = 4096;
	uint8_t    *buf = malloc(65536);
	time_t		end;
	unsigned long runs = 0;

	for (int i = 1; i < argc; i++)
	{
		if (strncmp(argv[i], "-max_total_time=", 16) == 0)
			seconds = atol(argv[i] + 16);
		else if (strncmp(argv[i], "-max_len=", 9) == 0)
			max_len = (size_t) atol(argv[i] + 9);
		else if (strncmp(argv[i], "-seed=", 6) == 0)
			state = (uint64_t) atoll(argv[i] + 6);
		else if (argv[i][0] != '-')
		{
			FILE	   *f = fopen(argv[i], "rb");
			size_t		n;

			if (f == NULL)
				continue;		/* a corpus directory: libFuzzer's, not ours */
			n = fread(buf, 1, 65536, f);
			fclose(f);
			LLVMFuzzerTestOneInput(buf, n);
		}
	}
	if (max_len > 65536)
		max_len = 65536;
	end = time(NULL) + seconds;
	while (time(NULL) < end)
	{
		for (int k = 0; k < 256; k++)
		{
			size_t		len = (size_t) (rnd() % (max_len + 1));

			if (rnd() % 4)
				len %= 64;
			for (size_t i = 0; i < len; i++)
			{
				uint64_t	r = rnd();

				buf[i] = (r & 3) ? alphabet[(r >> 8) % (sizeof(alphabet) - 1)] : (uint8_t) (r >> 16);
			}
			LLVMFuzzerTestOneInput(buf, len);
			runs++;
		}
	}
	printf("driver: %lu inputs in %ld s, no failure\n", runs, seconds);
	free(buf);
	return 0;
}
