/*
 * blocks.c
 *		The block geometry of the permuted-table search: validation of
 *		(blocks, max_distance), block widths and offsets, which blocks each
 *		table chooses, the table that reports a pair, and the groups of
 *		tables sharing their first chosen block.  Pure C; see blocks.h.
 *		The rest of the search: permute.c (table permutations), radix_sort.c,
 *		pair_scan.c, find_all.c.
 */
#include "blocks.h"

#include <string.h>

/* ---- configuration ---- */

uint64_t
simhash_binomial(int n, int r)
{
	uint64_t	c = 1;

	if (r < 0 || r > n)
		return 0;
	if (r > n - r)
		r = n - r;
	for (int i = 0; i < r; i++)
	{
		/* c = C(n, i); C(n, i + 1) = c * (n - i) / (i + 1), exactly */
		uint64_t	f = (uint64_t) (n - i);
		uint64_t	g = (uint64_t) (i + 1);
		uint64_t	q = c / g,
					rem = c % g;

		/* c * f / g = q * f + rem * f / g, and g divides c * f */
		if (q > UINT64_MAX / f)
			return UINT64_MAX;
		q *= f;
		if (q > UINT64_MAX - rem * f / g)
			return UINT64_MAX;
		c = q + rem * f / g;
	}
	return c;
}

SimhashBlocksStatus
simhash_blocks_check(int nblocks, int max_distance, int max_tables)
{
	if (nblocks < 1 || nblocks > SIMHASH_MAX_BLOCKS)
		return SIMHASH_BLOCKS_BAD_NBLOCKS;
	if (max_distance < 0 || max_distance > SIMHASH_MAX_DISTANCE)
		return SIMHASH_BLOCKS_BAD_DISTANCE;
	if (max_distance >= nblocks)
		return SIMHASH_BLOCKS_DISTANCE_TOO_LARGE;
	if (max_tables < 1 || simhash_binomial(nblocks, max_distance) > (uint64_t) max_tables)
		return SIMHASH_BLOCKS_TOO_MANY_TABLES;
	return SIMHASH_BLOCKS_OK;
}

SimhashBlocksStatus
simhash_blocks_validate(int nblocks, int max_distance)
{
	return simhash_blocks_check(nblocks, max_distance, SIMHASH_MAX_TABLES);
}

const char *
simhash_blocks_status_message(SimhashBlocksStatus status)
{
	switch (status)
	{
		case SIMHASH_BLOCKS_OK:
			return "valid";
		case SIMHASH_BLOCKS_BAD_NBLOCKS:
			return "the number of blocks must be between 1 and 64";
		case SIMHASH_BLOCKS_BAD_DISTANCE:
			return "the distance must be between 0 and 63";
		case SIMHASH_BLOCKS_DISTANCE_TOO_LARGE:
			return "the number of blocks must be greater than the distance";
		case SIMHASH_BLOCKS_TOO_MANY_TABLES:
			return "too many tables: C(blocks, distance) must be at most 10000";
	}
	return "unknown status";
}

bool
simhash_blocks_init(SimhashBlocks *b, int nblocks, int max_distance)
{
	int			offset = 0;

	if (simhash_blocks_validate(nblocks, max_distance) != SIMHASH_BLOCKS_OK)
		return false;
	memset(b, 0, sizeof(*b));
	b->nblocks = nblocks;
	b->max_distance = max_distance;
	b->ntables = (int) simhash_binomial(nblocks, max_distance);
	b->chosen = nblocks - max_distance;
	for (int i = 0; i < nblocks; i++)
	{
		int			w = 64 / nblocks + (i < 64 % nblocks);

		b->width[i] = (uint8_t) w;
		b->offset[i] = (uint8_t) offset;
		b->mask[i] = simhash_bits_from_top(offset, w);
		offset += w;
	}
	return true;
}

/*
 * The t-th r-subset of {0 .. m-1} in lexicographic order, as a bit set.
 * Combinations starting with v at position p, after the earlier positions
 * are fixed, number C(m - 1 - v, r - 1 - p).
 */
uint64_t
simhash_table_blocks(const SimhashBlocks *b, int table)
{
	int			m = b->nblocks,
				r = b->chosen,
				v = 0;
	uint64_t	t = (uint64_t) table,
				set = 0;

	for (int p = 0; p < r; p++, v++)
	{
		for (;; v++)
		{
			uint64_t	cnt = simhash_binomial(m - 1 - v, r - 1 - p);

			if (t < cnt)
				break;
			t -= cnt;
		}
		set |= UINT64_C(1) << v;
	}
	return set;
}

int
simhash_prefix_bits(const SimhashBlocks *b, int table)
{
	uint64_t	set = simhash_table_blocks(b, table);
	int			bits = 0;

	for (int i = 0; i < b->nblocks; i++)
		if (set & (UINT64_C(1) << i))
			bits += b->width[i];
	return bits;
}

/* lexicographic rank of the r-subset `set` of {0 .. m-1} */
static int
table_rank(int m, int r, uint64_t set)
{
	uint64_t	rank = 0;
	int			p = 0,
				v = 0;

	for (int c = 0; c < m && p < r; c++)
	{
		if (!(set & (UINT64_C(1) << c)))
			continue;
		for (; v < c; v++)
			rank += simhash_binomial(m - 1 - v, r - 1 - p);
		v = c + 1;
		p++;
	}
	return (int) rank;
}

int
simhash_first_table(const SimhashBlocks *b, uint64_t h1, uint64_t h2)
{
	uint64_t	x = h1 ^ h2,
				first = 0;
	int			n = 0;

	for (int i = 0; i < b->nblocks && n < b->chosen; i++)
		if ((x & b->mask[i]) == 0)
		{
			first |= UINT64_C(1) << i;
			n++;
		}
	if (n < b->chosen)
		return -1;
	return table_rank(b->nblocks, b->chosen, first);
}


void
simhash_table_group(const SimhashBlocks *b, int c, int *lo, int *hi)
{
	int			t = 0;

	/* groups come in block order; group c has C(m - 1 - c, m - k - 1) tables */
	for (int g = 0; g < c; g++)
		t += (int) simhash_binomial(b->nblocks - 1 - g, b->chosen - 1);
	*lo = t;
	*hi = t + (int) simhash_binomial(b->nblocks - 1 - c, b->chosen - 1);
}

