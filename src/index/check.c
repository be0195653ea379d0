/*
 * check.c
 *		simhash_index_check(index regclass, heapallindexed boolean): verify
 *		a simhash index's invariants, and optionally that every live heap
 *		tuple has its entry (like amcheck's heapallindexed).  Raises an
 *		error describing the first problem found.
 *
 * Checked: the metapage; for each run, that every table's tree has the
 * run's number of entries, compressed leaves (format 2, README.md) well formed
 * (core/index_pages.c) with keys sorted by the table's permuted hash and
 * valid heap TIDs, inner items equal to their child's first prefix, and
 * pages of the run's generation; that all trees hold the same hashes (an
 * order-independent checksum); the pending lists' lengths.  Runs of format 1
 * (format1.c, release 1.0) are checked as that format has them: entries of
 * 16 bytes in every tree, sorted by the table's prefix.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "commands/progress.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "am.h"
#include "simhash.h"

PG_FUNCTION_INFO_V1(simhash_index_check);

#define corrupt(index, ...) \
	ereport(ERROR, \
			(errcode(ERRCODE_INDEX_CORRUPTED), \
			 errmsg("simhash index \"%s\" is corrupted", RelationGetRelationName(index)), \
			 errdetail(__VA_ARGS__)))

typedef struct TreeSummary
{
	uint64		count;
	uint64		checksum;
	uint64		first_key;
} TreeSummary;

/*
 * An order-independent checksum term of an entry's hash (format 2: the
 * trees of tables 1 .. n-1 hold hashes only, and must hold table 0's).
 */
static uint64
hash_checksum(uint64 hash)
{
	uint64		x = hash * UINT64CONST(0x9E3779B97F4A7C15);

	return hash_bytes_uint32_extended((uint32) x, x >> 32) ^ x;
}

/* Is a heap TID (of an index entry) valid? */
static bool
heap_tid_ok(uint32 block, uint16 offset)
{
	return offset >= FirstOffsetNumber && offset <= MaxHeapTuplesPerPage &&
		block != InvalidBlockNumber;
}

/*
 * Check a format-1 leaf (format1.c: entries sorted by the table's prefix,
 * the inner items' keys the whole permuted hash of a leaf's first entry).
 */
static TreeSummary
check_format1_leaf(Relation index, BlockNumber blkno, Page page, const SimhashTable *tab,
				   uint64 *last_key)
{
	SimhashEntry *entries = SimhashPageEntries(page);
	int			n = SimhashPageItems(page);	/* checked: 1 .. SIMHASH_PAGE_ITEMS */
	TreeSummary sum = {0, 0, 0};

	for (int i = 0; i < n; i++)
	{
		uint64		key = simhash_table_permute(tab, entries[i].hash);

		if ((key & tab->prefix_mask) < (*last_key & tab->prefix_mask))
			corrupt(index, "Leaf %u entry %d is out of order in table %d.",
					blkno, i, tab->table);
		*last_key = key;
		if (i == 0)
			sum.first_key = key;
		if (!heap_tid_ok(ItemPointerGetBlockNumberNoCheck(&entries[i].tid),
						 ItemPointerGetOffsetNumberNoCheck(&entries[i].tid)))
			corrupt(index, "Leaf %u entry %d has an invalid heap TID (%u,%u).",
					blkno, i, ItemPointerGetBlockNumberNoCheck(&entries[i].tid),
					ItemPointerGetOffsetNumberNoCheck(&entries[i].tid));
		sum.count++;
		sum.checksum += hash_checksum(entries[i].hash);
	}
	return sum;
}

/* Check a subtree (of a run of format 1 or 2); returns its summary. */
static TreeSummary
check_tree(Relation index, BlockNumber blkno, int height, uint64 generation,
		   const SimhashTable *tab, bool format1, BlockNumber *next_leaf,
		   uint64 *last_key)
{
	Buffer		buffer = simhash_read_page(index, blkno, BUFFER_LOCK_SHARE,
										   height > 0 ? SIMHASH_INNER :
										   format1 ? SIMHASH_FORMAT1_LEAF :
										   simhash_leaf_kind(tab->table),
										   generation, 0, NULL);
	Page		page = BufferGetPage(buffer);
	TreeSummary sum = {0, 0, 0};

	CHECK_FOR_INTERRUPTS();
	if (height > 0)
	{
		int			n = SimhashPageItems(page);
		SimhashInnerItem *items = palloc(n * sizeof(SimhashInnerItem));

		memcpy(items, SimhashPageInner(page), n * sizeof(SimhashInnerItem));
		UnlockReleaseBuffer(buffer);
		if (n == 0)
			corrupt(index, "Inner page %u is empty.", blkno);
		for (int i = 0; i < n; i++)
		{
			TreeSummary child = check_tree(index, items[i].child, height - 1,
										   generation, tab, format1, next_leaf, last_key);

			/* the whole key: resolutions descend table 0 by exact hashes */
			if (child.first_key != items[i].key)
				corrupt(index, "Inner page %u item %d does not match the first key of block %u.",
						blkno, i, items[i].child);
			if (i == 0)
				sum.first_key = child.first_key;
			sum.count += child.count;
			sum.checksum += child.checksum;
		}
		pfree(items);
		return sum;
	}
	else
	{
		SvLeaf		leaf;

		if (*next_leaf != InvalidBlockNumber && *next_leaf != blkno)
			corrupt(index, "Leaf %u is not linked from the previous leaf (which points to %u).",
					blkno, *next_leaf);
		if (format1)
		{
			sum = check_format1_leaf(index, blkno, page, tab, last_key);
			*next_leaf = SimhashPageGetOpaque(page)->next;
			UnlockReleaseBuffer(buffer);
			return sum;
		}
		sv_leaf_open(PageGetContents(page), &leaf);
		for (int i = 0; i < leaf.count; i++)
		{
			uint64		key = sv_leaf_key(&leaf, i);

			if (key < *last_key || (i == 0 && key != leaf.base))
				corrupt(index, "Leaf %u entry %d is out of order in table %d.",
						blkno, i, tab->table);
			*last_key = key;
			if (i == 0)
				sum.first_key = key;
			if (leaf.tids)
			{
				uint32		block;
				uint16		offset;

				sv_leaf_tid(&leaf, i, &block, &offset);
				if (!heap_tid_ok(block, offset))
					corrupt(index, "Leaf %u entry %d has an invalid heap TID (%u,%u).",
							blkno, i, block, offset);
			}
			sum.count++;
			sum.checksum += hash_checksum(simhash_table_unpermute(tab, key));
		}
		*next_leaf = SimhashPageGetOpaque(page)->next;
		UnlockReleaseBuffer(buffer);
		return sum;
	}
}

/*
 * Check a list.  Inserts may append to the pending lanes and the nulls list
 * while we read (growing lists): then the list may extend past the tail and
 * hold more entries than the metapage said when we copied it.  A lane's
 * nentries counts the entries before its tail page (README.md): exactly those
 * of the pages before the tail in our copy, which no append changes.
 */
static uint64
check_list(Relation index, const SimhashList *list, const char *what, bool growing,
		   bool lane)
{
	SimhashChain chain;
	Buffer		buffer;
	uint64		count = 0;
	uint64		before_tail = 0;
	bool		passed_tail = (list->head == InvalidBlockNumber);

	simhash_chain_begin(&chain, index, list->head, SIMHASH_PENDING, list->generation,
						BUFFER_LOCK_SHARE, 0, NULL);
	while (BufferIsValid(buffer = simhash_chain_next(&chain)))
	{
		count += SimhashPageItems(BufferGetPage(buffer));
		if (chain.blkno == list->tail)
			passed_tail = true;
		if (!passed_tail)
			before_tail += SimhashPageItems(BufferGetPage(buffer));
		if (chain.next == InvalidBlockNumber && !passed_tail)
			corrupt(index, "The %s list ends at block %u, before its tail %u.",
					what, chain.blkno, list->tail);
		if (chain.blkno == list->tail && !growing && chain.next != InvalidBlockNumber)
			corrupt(index, "The %s list goes on after its tail %u.", what, list->tail);
		UnlockReleaseBuffer(buffer);
		CHECK_FOR_INTERRUPTS();
	}
	if (lane && before_tail != list->nentries)
		corrupt(index, "The %s lane has " UINT64_FORMAT " entries before its tail, the metapage says " UINT64_FORMAT ".",
				what, before_tail, list->nentries);
	if (!lane && (growing ? count < list->nentries : count != list->nentries))
		corrupt(index, "The %s list has " UINT64_FORMAT " entries, the metapage says " UINT64_FORMAT ".",
				what, count, list->nentries);
	return count;
}

/* ---- heapallindexed ---- */

typedef struct IndexedEntry
{
	ItemPointerData tid;		/* the key */
	uint64		hash;
	char		kind;			/* 'v': a value, 'n': a NULL key */
	char		status;			/* simplehash's */
} IndexedEntry;

#define SH_PREFIX indexed
#define SH_ELEMENT_TYPE IndexedEntry
#define SH_KEY_TYPE ItemPointerData
#define SH_KEY tid
#define SH_HASH_KEY(tb, key) \
	hash_bytes_uint32_extended(ItemPointerGetBlockNumberNoCheck(&key), \
							   ItemPointerGetOffsetNumberNoCheck(&key))
#define SH_EQUAL(tb, a, b) ItemPointerEquals(&a, &b)
#define SH_SCOPE static inline
#define SH_DEFINE
#define SH_DECLARE
#include "lib/simplehash.h"

typedef struct HeapCheckState
{
	Relation	index;
	indexed_hash *entries;
	uint64		missing;
} HeapCheckState;

/* heapallindexed: is this live heap tuple's entry in the index? */
static void
heap_check_callback(Relation index, ItemPointer tid, Datum *values,
					bool *isnull, bool tupleIsAlive, void *state)
{
	HeapCheckState *hs = (HeapCheckState *) state;
	IndexedEntry *e;
	uint64		hash;

	e = indexed_lookup(hs->entries, *tid);
	if (isnull[0])
	{
		if (e == NULL || e->kind != 'n')
			corrupt(hs->index, "Heap tuple (%u,%u) with a NULL key is not in the nulls list.",
					ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid));
		return;
	}
	hash = simhash_key_hash(index, values[0]);
	if (e == NULL || e->kind != 'v' || e->hash != hash)
		corrupt(hs->index, "Heap tuple (%u,%u) with hash %016llx has no index entry%s.",
				ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid),
				(unsigned long long) hash,
				e ? " with that hash" : "");
}

/*
 * Before any lock (a lock on the table would block its writers for as
 * long as a caller could make us wait): that indexoid is a simhash index
 * and that the user owns it.  Returns its table.  The catalog is read
 * without a lock, so the caller checks again once it holds its locks (the
 * order amcheck uses: the table, then the index).
 */
static Oid
checkable_index(Oid indexoid)
{
	HeapTuple	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(indexoid));
	Form_pg_class form;
	char		name[NAMEDATALEN];
	char		relkind;
	Oid			relam;
	Oid			heapoid;
	const IndexAmRoutine *am;

	if (!HeapTupleIsValid(tuple))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("index with OID %u does not exist", indexoid)));
	form = (Form_pg_class) GETSTRUCT(tuple);
	strlcpy(name, NameStr(form->relname), sizeof(name));
	relkind = form->relkind;
	relam = form->relam;
	ReleaseSysCache(tuple);

	if (relkind != RELKIND_INDEX)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an index", name)));
	if (!simhash_relation_ownercheck(indexoid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_INDEX, name);
	am = GetIndexAmRoutineByAmId(relam, true);
	if (am == NULL || am->ambuild != simhash_build)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a simhash index", name)));
	heapoid = IndexGetRelation(indexoid, true);
	if (!OidIsValid(heapoid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("index with OID %u does not exist", indexoid)));
	return heapoid;
}

Datum
simhash_index_check(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	bool		heapallindexed = PG_GETARG_BOOL(1);
	Relation	index;
	Relation	heap;
	SimhashMetaPageData meta;
	SimhashBlocks blocks;
	SimhashTable *tab;
	MemoryContext cxt,
				oldcxt;
	Oid			heapoid;

	/* the catalog's word, before any lock: checked again once locked */
	heapoid = checkable_index(indexoid);
	/* heapallindexed: no insert may sit between its heap and index steps */
	heap = table_open(heapoid, heapallindexed ? ShareLock : AccessShareLock);
	index = index_open(indexoid, AccessShareLock);
	if (checkable_index(indexoid) != heapoid)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("index \"%s\" was replaced while it was being opened",
						RelationGetRelationName(index))));

	cxt = AllocSetContextCreate(CurrentMemoryContext, "simhash_index_check",
								ALLOCSET_DEFAULT_SIZES);
	oldcxt = MemoryContextSwitchTo(cxt);

	/* no flush, merge or VACUUM while we read */
	LockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
	simhash_read_meta(index, &meta);
	simhash_meta_blocks(&meta, &blocks);
	if (meta.ntables != blocks.ntables)
		corrupt(index, "The metapage says %d tables, blocks %d and max_distance %d give %d.",
				meta.ntables, meta.nblocks, meta.max_distance, blocks.ntables);
	if (meta.nruns < 0 || meta.nruns > SIMHASH_MAX_RUNS ||
		meta.nretired < 0 || meta.nretired > SIMHASH_MAX_RETIRED)
		corrupt(index, "The metapage lists %d runs and %d retired items.",
				meta.nruns, meta.nretired);

	tab = palloc(sizeof(SimhashTable));
	for (int r = 0; r < meta.nruns; r++)
	{
		const SimhashRunRef *run = &meta.runs[r];
		SimhashRunHeader *header = simhash_read_run_header(index, run->header,
														   run->generation, NULL);
		TreeSummary first = {0, 0, 0};

		if (header->nentries != run->nentries || (int) header->ntables != meta.ntables)
			corrupt(index, "Run %d's header disagrees with the metapage.", r);

		for (int t = 0; t < meta.ntables; t++)
		{
			BlockNumber next_leaf = InvalidBlockNumber;
			uint64		last_key = 0;
			TreeSummary sum;

			simhash_table_init(&blocks, t, tab);
			sum = check_tree(index, header->trees[t].root, header->trees[t].height,
							 run->generation, tab, simhash_run_is_format1(run),
							 &next_leaf, &last_key);
			if (next_leaf != InvalidBlockNumber)
				corrupt(index, "The last leaf of run %d table %d links to block %u.", r, t, next_leaf);
			if (sum.count != header->nentries)
				corrupt(index, "Run %d table %d has " UINT64_FORMAT " entries, its header says " UINT64_FORMAT ".",
						r, t, sum.count, header->nentries);
			if (t == 0)
				first = sum;
			else if (sum.checksum != first.checksum)
				corrupt(index, "Run %d table %d holds other entries than table 0.", r, t);
		}
	}
	for (int i = 0; i < meta.nlanes; i++)
	{
		check_list(index, &meta.flushing[i], "flushing", false, true);
		check_list(index, &meta.pending[i], "pending", !heapallindexed, true);
	}
	check_list(index, &meta.nulls, "nulls", !heapallindexed, false);

	if (heapallindexed)
	{
		HeapCheckState hs;
		SimhashRunInput all = {NULL, NULL, 0};
		IndexInfo  *indexInfo = BuildIndexInfo(index);

		for (int r = 0; r < meta.nruns; r++)
			simhash_read_run_entries(index, &meta.runs[r], &all, true);
		{
			SimhashList lists[2 * SIMHASH_MAX_LANES];
			int			nlists = simhash_unsorted_lists(&meta, true, true, lists);

			for (int i = 0; i < nlists; i++)
				simhash_read_list_entries(index, &lists[i], &all, true);
		}
		hs.index = index;
		hs.entries = indexed_create(CurrentMemoryContext, Max(all.n, 16), NULL);
		hs.missing = 0;
		for (size_t i = 0; i < all.n; i++)
		{
			bool		found;
			IndexedEntry *e = indexed_insert(hs.entries, all.tids[i], &found);

			e->hash = all.hashes[i];
			e->kind = 'v';
		}
		{
			SimhashRunInput nulls = {NULL, NULL, 0};

			simhash_read_list_entries(index, &meta.nulls, &nulls, true);
			for (size_t i = 0; i < nulls.n; i++)
			{
				bool		found;
				IndexedEntry *e = indexed_insert(hs.entries, nulls.tids[i], &found);

				e->hash = 0;
				e->kind = 'n';
			}
		}
		/* the tuples an index build would index */
		table_index_build_scan(heap, index, indexInfo, false, false,
							   heap_check_callback, &hs, NULL);
	}
	UnlockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);

	MemoryContextSwitchTo(oldcxt);
	MemoryContextDelete(cxt);
	index_close(index, AccessShareLock);
	table_close(heap, heapallindexed ? ShareLock : AccessShareLock);
	PG_RETURN_VOID();
}
