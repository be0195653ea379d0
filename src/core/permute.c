/*
 * permute.c
 *		Table permutations of the permuted-table search: a table's
 *		precomputed segments (rotations and masks) and the one-off permute /
 *		unpermute forms.  Pure C; see blocks.h.
 */
#include "blocks.h"

#include <string.h>

/* Precompute table `table`'s permutation (segments) and skip masks into *t. */
void
simhash_table_init(const SimhashBlocks *b, int table, SimhashTable *t)
{
	uint64_t	set = simhash_table_blocks(b, table);
	int			dest[64];
	int			pos = 0,
				last = -1;

	memset(t, 0, sizeof(*t));
	t->table = table;
	t->max_distance = b->max_distance;

	/* destination offsets: chosen blocks first, then the others */
	for (int i = 0; i < b->nblocks; i++)
		if (set & (UINT64_C(1) << i))
		{
			dest[i] = pos;
			pos += b->width[i];
			last = i;
		}
	t->prefix_bits = pos;
	t->prefix_mask = simhash_bits_from_top(0, pos);
	for (int i = 0; i < b->nblocks; i++)
		if (!(set & (UINT64_C(1) << i)))
		{
			dest[i] = pos;
			pos += b->width[i];
			if (i < last)
				t->skip_mask[t->nskip++] = simhash_bits_from_top(dest[i], b->width[i]);
		}

	/* segments: maximal runs of blocks that are all chosen or all not */
	for (int i = 0; i < b->nblocks;)
	{
		bool		in = (set >> i) & 1;
		int			j = i,
					w = 0;

		while (j < b->nblocks && ((set >> j) & 1) == in)
			w += b->width[j++];
		t->rotate[t->nsegments] = (uint8_t) ((b->offset[i] - dest[i]) & 63);
		t->source_mask[t->nsegments] = simhash_bits_from_top(b->offset[i], w);
		t->permuted_mask[t->nsegments] = simhash_bits_from_top(dest[i], w);
		t->nsegments++;
		i = j;
	}
}


uint64_t
simhash_permute(const SimhashBlocks *b, int table, uint64_t h)
{
	SimhashTable t;

	simhash_table_init(b, table, &t);
	return simhash_table_permute(&t, h);
}

uint64_t
simhash_unpermute(const SimhashBlocks *b, int table, uint64_t p)
{
	SimhashTable t;

	simhash_table_init(b, table, &t);
	return simhash_table_unpermute(&t, p);
}
