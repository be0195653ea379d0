/*
 * pair_scan.c
 *		The pair scan of the permuted-table search: every pair within k bits
 *		in each run of equal prefixes of one table's sorted keys, each
 *		reported by one table only.  Pure C; see blocks.h.
 */
#include "blocks.h"

#include <string.h>

/*
 * Popcount: PGXS builds without -mpopcnt, where __builtin_popcountll is a
 * libgcc call.  On x86-64 the pair scan is also compiled for the popcnt
 * instruction and chosen at run time, more than twice as fast.
 */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__POPCNT__)
#define USE_POPCNT_DISPATCH 1
#endif

void
simhash_pair_scan_init(SimhashPairScan *s, const SimhashTable *t,
					   const uint64_t *keys, size_t n)
{
	s->keys = keys;
	s->n = n;
	s->prefix_mask = t->prefix_mask;
	s->max_distance = t->max_distance;
	s->nskip = t->nskip;
	memcpy(s->skip_mask, t->skip_mask, sizeof(s->skip_mask));
	s->i = 0;
	s->j = 1;
}

/*
 * The scan proper, inlined into a portable copy and, on x86-64 compilers
 * not already targeting it, a copy using the popcnt instruction.
 */
static inline __attribute__((always_inline)) size_t
pair_scan(SimhashPairScan *s, SimhashPair *out, size_t max)
{
	const uint64_t *keys = s->keys;
	const uint64_t pmask = s->prefix_mask;
	const int	k = s->max_distance;
	size_t		n = s->n,
				i = s->i,
				j = s->j,
				nout = 0;
	long		work = SIMHASH_SCAN_WORK;

	for (; i < n; i++, j = i + 1)
	{
		uint64_t	ki = keys[i];

		for (; j < n; j++)
		{
			uint64_t	x = ki ^ keys[j];
			int			d;

			if (x & pmask)
				break;
			d = __builtin_popcountll(x);
			if (d <= k)
			{
				bool		report = true;

				/* found by a lower table too? */
				for (int b = 0; b < s->nskip; b++)
					report &= (x & s->skip_mask[b]) != 0;
				if (report)
				{
					if (nout == max)
						goto out;
					out[nout].i = i;
					out[nout].j = j;
					out[nout].distance = d;
					nout++;
				}
			}
			if (--work <= 0)
			{
				j++;
				goto out;
			}
		}
		if (--work <= 0)
		{
			i++;
			j = i + 1;
			goto out;
		}
	}
out:
	s->i = i;
	s->j = j;
	return nout;
}

/* the scan with the portable popcount */
static size_t
pair_scan_portable(SimhashPairScan *s, SimhashPair *out, size_t max)
{
	return pair_scan(s, out, max);
}

#ifdef USE_POPCNT_DISPATCH
/* the scan compiled for the popcnt instruction (chosen at run time) */
__attribute__((target("popcnt")))
static size_t
pair_scan_popcnt(SimhashPairScan *s, SimhashPair *out, size_t max)
{
	return pair_scan(s, out, max);
}
#endif

size_t
simhash_pair_scan_next(SimhashPairScan *s, SimhashPair *out, size_t max)
{
#ifdef USE_POPCNT_DISPATCH
	static int	have_popcnt = -1;

	if (have_popcnt < 0)
	{
		__builtin_cpu_init();
		have_popcnt = __builtin_cpu_supports("popcnt") ? 1 : 0;
	}
	if (have_popcnt)
		return pair_scan_popcnt(s, out, max);
#endif
	return pair_scan_portable(s, out, max);
}
