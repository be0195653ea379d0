/*
 * unit.h: what the pure-C unit tests share: pass/fail counters with a
 * CHECK macro, the closing line, and a seeded splitmix64 generator.
 */
#ifndef SIMHASH_UNIT_H
#define SIMHASH_UNIT_H

#include <stdint.h>
#include <stdio.h>

static int	passed,
			failed;

#define CHECK(cond, ...) \
	do { \
		if (cond) passed++; \
		else { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } \
	} while (0)

/* "name: N passed, N failed"; the exit status of main */
static inline int
unit_report(const char *name)
{
	printf("%s: %d passed, %d failed\n", name, passed, failed);
	return failed != 0;
}

static uint64_t unit_rng_state;

static inline void
unit_seed(uint64_t seed)
{
	unit_rng_state = seed;
}

/* splitmix64 */
static inline uint64_t
next(void)
{
	uint64_t	z = (unit_rng_state += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

#endif							/* SIMHASH_UNIT_H */
