/*
 * leaf.c
 *		The compressed leaves of the simhash index's runs (format: README.md,
 *		"Format"; the pure encoding: core/index_leaf.c): decoding a leaf to
 *		entries, the search of one prefix of one tree (probe.c's
 *		search_prefix()), and the resolution of other tables' matching
 *		hashes to their entries in table 0's tree.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "miscadmin.h"

#include "am.h"

/* Could a heap page hold this TID (a bitmap fails on one that cannot)? */
static inline bool
heap_tid_ok(uint32 block, uint16 offset)
{
	return offset >= FirstOffsetNumber && offset <= MaxHeapTuplesPerPage &&
		block != InvalidBlockNumber;
}

/* Report corruption: entry i of the leaf at blkno has an impossible TID. */
static void
report_bad_tid(Relation index, BlockNumber blkno, int i, uint32 block, uint16 offset)
{
	simhash_report_corrupt(index, blkno,
						   psprintf("Leaf entry %d has an invalid heap TID (%u,%u).",
									i, block, offset));
}

/*
 * Decode the leaf in a buffer (checked by simhash_read_page()) into
 * entries[] (room for SV_LEAF_MAX_ENTRIES); returns their number.  Table
 * 0's leaves give hash, TID and dead flag (an impossible TID is reported as
 * corruption); a key leaf (of table tab) gives hashes only (tab must then
 * be that table; TIDs invalid, flags 0).
 */
int
simhash_leaf_decode(Relation index, Buffer buffer, const SimhashTable *tab,
					SimhashEntry *entries)
{
	SvLeaf		leaf;

	sv_leaf_open(PageGetContents(BufferGetPage(buffer)), &leaf);
	for (int i = 0; i < leaf.count; i++)
	{
		uint64		key = sv_leaf_key(&leaf, i);

		if (leaf.tids)
		{
			uint32		block;
			uint16		offset;

			sv_leaf_tid(&leaf, i, &block, &offset);
			if (!heap_tid_ok(block, offset))
				report_bad_tid(index, BufferGetBlockNumber(buffer), i, block, offset);
			entries[i].hash = key;	/* table 0's permutation is the identity */
			ItemPointerSet(&entries[i].tid, block, offset);
			entries[i].flags = sv_leaf_is_dead(&leaf, i) ? SIMHASH_ENTRY_DEAD : 0;
		}
		else
		{
			Assert(tab != NULL && tab->table != 0);
			entries[i].hash = simhash_table_unpermute(tab, key);
			ItemPointerSetInvalid(&entries[i].tid);
			entries[i].flags = 0;
		}
	}
	return leaf.count;
}

/* Start an empty resolver. */
void
simhash_resolver_init(SimhashResolver *r)
{
	memset(r, 0, sizeof(*r));
}

/* Append v to a growing array. */
static void
push(uint64 **a, size_t *n, size_t *cap, uint64 v)
{
	if (*n >= *cap)
	{
		*cap = Max(*cap * 2, 16);
		*a = *a ? repalloc_huge(*a, *cap * sizeof(uint64)) :
			MemoryContextAllocHuge(CurrentMemoryContext, *cap * sizeof(uint64));
	}
	(*a)[(*n)++] = v;
}

/*
 * Pass on entry i of an entry leaf (key: its hash) if it is live; a TID
 * no heap page can hold (a bitmap would fail on it) is corruption.
 */
static inline void
emit_live(Relation index, BlockNumber blkno, const SvLeaf *leaf, int i,
		  uint64 hash, SimhashMatches *out)
{
	ItemPointerData tid;
	uint32		block;
	uint16		offset;

	if (sv_leaf_is_dead(leaf, i))
		return;
	sv_leaf_tid(leaf, i, &block, &offset);
	if (!heap_tid_ok(block, offset))
		report_bad_tid(index, blkno, i, block, offset);
	ItemPointerSet(&tid, block, offset);
	out->fn(out->arg, &tid, hash);
}

/*
 * Ask for the cache lines of keys from .. end - 1 of an opened leaf at
 * once (at 10M rows a prefix's ~150 keys span ~17 lines of a page that is
 * seldom in the CPU's cache), so that their misses overlap instead of
 * following the scan one by one.
 */
static inline void
prefetch_keys(const SvLeaf *leaf, int from, int end)
{
#if defined(__GNUC__)
	const uint8 *p = leaf->keys + (size_t) from * leaf->key_bytes;
	const uint8 *stop = leaf->keys + (size_t) end * leaf->key_bytes;

	for (p = (const uint8 *) ((uintptr_t) p & ~(uintptr_t) 63); p < stop; p += 64)
		__builtin_prefetch(p);
#endif
}

/*
 * The entries of one leaf of table tab->table (locked in `buffer`, block
 * blkno) whose permuted prefix equals `prefix` and within radius of center
 * (qkey: center permuted by the table): table 0's live ones go to *out
 * (and their hashes, dead or not, to resolver->found); other tables'
 * hashes go to resolver->want, for simhash_resolve().  Returns true when
 * the leaf holds a key past the prefix (the following leaves need not be
 * read).
 */
bool
simhash_search_leaf(Relation index, BlockNumber blkno, Buffer buffer,
					const SimhashTable *tab, uint64 prefix, uint64 qkey, int radius,
					SimhashResolver *resolver, SimhashMatches *out)
{
	uint64		mask = tab->prefix_mask;
	bool		entries = (tab->table == 0);
	SvLeaf		leaf;
	uint16		hits[SV_LEAF_MAX_ENTRIES];
	int			from,
				end,
				n;

	prefix &= mask;
	sv_leaf_open(PageGetContents(BufferGetPage(buffer)), &leaf);
	from = sv_leaf_seek(&leaf, 0, prefix, mask, false);
	end = sv_leaf_seek(&leaf, from, prefix, mask, true);
	prefetch_keys(&leaf, from, end);
	n = sv_leaf_match(&leaf, from, end, qkey, radius, hits);
	for (int j = 0; j < n; j++)
	{
		uint64		key = sv_leaf_key(&leaf, hits[j]);

		if (!entries)
			push(&resolver->want, &resolver->nwant, &resolver->capwant,
				 simhash_table_unpermute(tab, key));
		else
		{
			push(&resolver->found, &resolver->nfound, &resolver->capfound, key);
			emit_live(index, blkno, &leaf, hits[j], key, out);
		}
	}
	return end < leaf.count;
}

/* qsort comparator of uint64 (also merge.c's and probe.c's) */
int
simhash_cmp_uint64(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a,
				y = *(const uint64 *) b;

	return x < y ? -1 : x > y;
}

/* Pass on the live entries of table 0's tree whose hash is exactly hash. */
static void
resolve_one(Relation index, const SimhashRunTree *tree0, uint64 generation,
			uint64 hash, SimhashMatches *out)
{
	SimhashChain leaves;
	Buffer		buffer;

	simhash_chain_begin(&leaves, index,
						simhash_descend_cached(index, tree0, generation, hash, ~UINT64CONST(0)),
						SIMHASH_LEAF, generation, BUFFER_LOCK_SHARE, 0, NULL);
	while (BufferIsValid(buffer = simhash_chain_next(&leaves)))
	{
		SvLeaf		leaf;
		bool		done = false;
		int			i;

		sv_leaf_open(PageGetContents(BufferGetPage(buffer)), &leaf);
		for (i = sv_leaf_lower_bound(&leaf, hash, ~UINT64CONST(0)); i < leaf.count; i++)
		{
			if (sv_leaf_key(&leaf, i) != hash)
			{
				done = true;
				break;
			}
			emit_live(index, leaves.blkno, &leaf, i, hash, out);
		}
		UnlockReleaseBuffer(buffer);
		if (done)
			break;
	}
}

/*
 * Resolve the hashes other tables found (each once, in order, skipping
 * those table 0 found itself) to table 0's live entries, into *out; frees
 * what the resolver holds.
 */
void
simhash_resolve(Relation index, const SimhashRunTree *tree0, uint64 generation,
				SimhashResolver *r, SimhashMatches *out)
{
	size_t		f = 0;

	if (r->nwant > 1)
		qsort(r->want, r->nwant, sizeof(uint64), simhash_cmp_uint64);
	if (r->nfound > 1)
		qsort(r->found, r->nfound, sizeof(uint64), simhash_cmp_uint64);
	for (size_t i = 0; i < r->nwant; i++)
	{
		uint64		hash = r->want[i];

		if (i > 0 && hash == r->want[i - 1])
			continue;
		while (f < r->nfound && r->found[f] < hash)
			f++;
		if (f < r->nfound && r->found[f] == hash)
			continue;
		resolve_one(index, tree0, generation, hash, out);
		CHECK_FOR_INTERRUPTS();
	}
	if (r->want)
		pfree(r->want);
	if (r->found)
		pfree(r->found);
	simhash_resolver_init(r);
}
