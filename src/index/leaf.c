/*
 * leaf.c
 *		The compressed leaves of the simhash index's runs (format: am.h,
 *		"Format"; the pure encoding: core/index_leaf.c): decoding a leaf to
 *		entries, the search of one prefix of one tree (probe.c's
 *		search_prefix()), and the resolution of other tables' matching
 *		hashes to their entries in table 0's tree.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"

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
 * The body of match_keys(): the entries from .. end - 1 of an opened leaf
 * (the range of one prefix, sv_leaf_seek()) within radius of qkey, their
 * positions into hits[]; returns their number.  hw: popcount by the
 * instruction (the caller's target has it).
 */
static pg_attribute_always_inline int
match_keys_body(const SvLeaf *leaf, int from, int end, uint64 qkey, int radius,
				uint16 *hits, bool hw)
{
	const uint8 *p = leaf->keys + (size_t) from * leaf->key_bytes;
	int			kb = leaf->key_bytes;
	uint64		keep = sv_load_mask(kb);
	uint64		base = leaf->base;
	int			n = 0;

	for (int i = from; i < end; i++, p += kb)
	{
		uint64		x = (base + (sv_load8_le(p) & keep)) ^ qkey;
		int			d;

#ifdef HAVE__BUILTIN_POPCOUNT
		d = hw ? __builtin_popcountll(x) : pg_popcount64(x);
#else
		d = pg_popcount64(x);
#endif
		if (unlikely(d <= radius))
			hits[n++] = (uint16) i;
	}
	return n;
}

#if defined(__x86_64__) && defined(__GNUC__) && defined(HAVE__BUILTIN_POPCOUNT)
/* match_keys_body() with the popcnt instruction inline */
__attribute__((target("popcnt")))
static int
match_keys_popcnt(const SvLeaf *leaf, int from, int end, uint64 qkey, int radius,
				  uint16 *hits)
{
	return match_keys_body(leaf, from, end, qkey, radius, hits, true);
}
#define HAVE_MATCH_KEYS_POPCNT 1
#endif

/*
 * match_keys_body(), the scan of a prefix's keys that every probe does (at
 * 10M rows about 150 keys a probe): by the popcnt instruction where the CPU
 * has it, instead of a call through pg_popcount64 per key.
 */
static int
match_keys(const SvLeaf *leaf, int from, int end, uint64 qkey, int radius, uint16 *hits)
{
#ifdef HAVE_MATCH_KEYS_POPCNT
	static int	has_popcnt = -1;

	if (unlikely(has_popcnt < 0))
		has_popcnt = __builtin_cpu_supports("popcnt") ? 1 : 0;
	if (has_popcnt)
		return match_keys_popcnt(leaf, from, end, qkey, radius, hits);
#endif
	return match_keys_body(leaf, from, end, qkey, radius, hits, false);
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
	n = match_keys(&leaf, from, end, qkey, radius, hits);
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
