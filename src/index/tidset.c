/*
 * tidset.c
 *		A sorted set of (heap TID, hash) pairs: the dead entries of a run.
 *		VACUUM collects the TIDs its callback reports while it marks a
 *		format-1 run's first tree, and marks the other trees by membership
 *		(simhash_tidset_contains()); a merge collects the entries the first
 *		tree had marked dead, and skips one equal pair per collected one in
 *		each later tree (simhash_tidset_take(): a multiset, as a TID can
 *		occur twice among the runs merged, once dead and once for a newer
 *		tuple that reuses the TID).
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "am.h"

/* Add (tid, hash); the set must be sorted again before lookups. */
void
simhash_tidset_add(SimhashTidSet *set, ItemPointer tid, uint64 hash)
{
	if (set->n >= set->cap)
	{
		set->cap = Max(set->cap * 2, 256);
		set->items = set->items ?
			repalloc_huge(set->items, set->cap * sizeof(SimhashTidSetItem)) :
			MemoryContextAllocHuge(CurrentMemoryContext, set->cap * sizeof(SimhashTidSetItem));
	}
	set->items[set->n].tid = *tid;
	set->items[set->n].hash = hash;
	set->items[set->n].used = false;
	set->n++;
	set->sorted = false;
}

/* Order of the set: by TID, then hash. */
static int
item_cmp(const void *a, const void *b)
{
	const SimhashTidSetItem *x = a;
	const SimhashTidSetItem *y = b;
	int			c = ItemPointerCompare((ItemPointer) &x->tid, (ItemPointer) &y->tid);

	if (c != 0)
		return c;
	return (x->hash > y->hash) - (x->hash < y->hash);
}

/* Sort the set (for lookups). */
void
simhash_tidset_sort(SimhashTidSet *set)
{
	if (set->n > 1)
		qsort(set->items, set->n, sizeof(SimhashTidSetItem), item_cmp);
	set->sorted = true;
}

/* The position of the first item not below (tid, hash). */
static size_t
lower_bound(const SimhashTidSet *set, ItemPointer tid, uint64 hash)
{
	SimhashTidSetItem key;
	size_t		lo = 0,
				hi = set->n;

	Assert(set->sorted);
	key.tid = *tid;
	key.hash = hash;
	while (lo < hi)
	{
		size_t		mid = (lo + hi) / 2;

		if (item_cmp(&set->items[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Is there an item with this TID (with any hash)? */
bool
simhash_tidset_contains(const SimhashTidSet *set, ItemPointer tid)
{
	size_t		pos = lower_bound(set, tid, 0);

	return pos < set->n && ItemPointerEquals(&set->items[pos].tid, tid);
}

/* Take the first item equal to (tid, hash) not taken yet; false if none. */
bool
simhash_tidset_take(SimhashTidSet *set, ItemPointer tid, uint64 hash)
{
	for (size_t pos = lower_bound(set, tid, hash);
		 pos < set->n && ItemPointerEquals(&set->items[pos].tid, tid) &&
		 set->items[pos].hash == hash;
		 pos++)
	{
		if (!set->items[pos].used)
		{
			set->items[pos].used = true;
			return true;
		}
	}
	return false;
}

/* Make every item available to simhash_tidset_take() again. */
void
simhash_tidset_reset(SimhashTidSet *set)
{
	for (size_t i = 0; i < set->n; i++)
		set->items[i].used = false;
}

/* Free the set's items (it is empty again). */
void
simhash_tidset_free(SimhashTidSet *set)
{
	if (set->items)
		pfree(set->items);
	memset(set, 0, sizeof(SimhashTidSet));
}
