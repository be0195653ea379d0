/*
 * union_find.c
 *		The union-find over row numbers of the group jobs.  Pure C; see
 *		union_find.h.
 */
#include "union_find.h"

#include <string.h>

size_t
simhash_union_bytes(uint64_t nrows)
{
	return (size_t) (nrows * sizeof(uint32_t) + nrows / 8 + 1);
}

void
simhash_union_init(SimhashUnion *u, uint64_t nrows, uint32_t *parent,
				   uint8_t *linked)
{
	u->nrows = nrows;
	u->parent = parent;
	u->linked = linked;
	for (uint64_t i = 0; i < nrows; i++)
		parent[i] = (uint32_t) i;
	memset(linked, 0, (size_t) (nrows / 8 + 1));
}

uint32_t
simhash_union_find(SimhashUnion *u, uint64_t row)
{
	uint32_t   *parent = u->parent;
	uint32_t	x = (uint32_t) row;

	while (parent[x] != x)
	{
		parent[x] = parent[parent[x]];	/* path halving */
		x = parent[x];
	}
	return x;
}

void
simhash_union_pair(SimhashUnion *u, uint64_t a, uint64_t b)
{
	uint32_t	ra = simhash_union_find(u, a);
	uint32_t	rb = simhash_union_find(u, b);

	u->linked[a / 8] |= 1 << (a % 8);
	u->linked[b / 8] |= 1 << (b % 8);
	if (ra < rb)
		u->parent[rb] = ra;
	else if (rb < ra)
		u->parent[ra] = rb;
}
