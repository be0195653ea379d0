/*
 * merge.c
 *		The streaming merge of runs of the simhash index (design: README.md):
 *		for each table, a k-way merge of the runs' trees (each already in
 *		the table's order) and of a sorted in-memory list, written leaf by
 *		leaf as a new run.  Memory: one leaf per run, and the list.
 *
 * Which entries are dead: table 0's tree holds the dead bits (the other
 * trees hold keys only, format 2).  The hashes of the dead entries are
 * collected while merging table 0.  Before each later table they are
 * permuted into its keys and sorted, and the merged stream, which comes in
 * the same order, skips one entry for each dead key equal to its own: a
 * hash can occur several times among the runs merged, dead and live, and
 * the copies are alike in a table that holds keys only.  So the dead
 * entries cost one step each per table, not a search each.
 *
 * A run of format 1 (format1.c: its trees sorted by prefix only) is not
 * streamed: its live entries join the in-memory list.
 */
#include "postgres.h"

#include "am.h"

/* the dead entries of the runs merged (see the header comment) */
typedef struct MergeDead
{
	uint64	   *keys;			/* hashes; the current table's keys, sorted */
	size_t		n;
	size_t		cap;
	size_t		next;			/* later tables: the first key not yet skipped */
	bool		collecting;		/* table 0: collect, later tables: skip */
} MergeDead;

/*
 * A cursor over the entries of one tree of a run, leaf by leaf, or over an
 * in-memory list sorted for the table (keys[] permuted, order[] positions).
 */
typedef struct MergeSource
{
	SimhashChain leaves;		/* the tree's leaves */
	SimhashEntry entries[SV_LEAF_MAX_ENTRIES];	/* the current leaf's */
	int			n;
	int			pos;
	const SimhashRunInput *list;	/* the in-memory source, or NULL */
	const uint64 *keys;
	const uint32 *order;
	size_t		lpos;
	bool		done;
	uint64		key;			/* the current entry's permuted hash */
	MergeDead  *dead;
} MergeSource;

/* Table 0: is entry e of a run dead?  Its hash is then collected. */
static bool
entry_is_dead(MergeDead *dead, const SimhashEntry *e)
{
	if (!dead->collecting || !(e->flags & SIMHASH_ENTRY_DEAD))
		return false;
	if (dead->n >= dead->cap)
	{
		dead->cap = Max(dead->cap * 2, 64);
		dead->keys = dead->keys ? repalloc_huge(dead->keys, dead->cap * sizeof(uint64)) :
			MemoryContextAllocHuge(CurrentMemoryContext, dead->cap * sizeof(uint64));
	}
	dead->keys[dead->n++] = e->hash;
	return true;
}

#define ST_SORT sort_dead_keys
#define ST_ELEMENT_TYPE uint64
#define ST_COMPARE(a, b) (*(a) < *(b) ? -1 : *(a) > *(b) ? 1 : 0)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/* Before a later table: the dead hashes to its keys, sorted, none skipped. */
static void
dead_keys_begin(MergeDead *dead, const SimhashTable *tab)
{
	for (size_t i = 0; i < dead->n; i++)
		dead->keys[i] = simhash_table_permute(tab, dead->keys[i]);
	sort_dead_keys(dead->keys, dead->n);
	dead->next = 0;
	dead->collecting = false;
}

/* After a later table but the last: its dead keys back to hashes. */
static void
dead_keys_end(MergeDead *dead, const SimhashTable *tab)
{
	for (size_t i = 0; i < dead->n; i++)
		dead->keys[i] = simhash_table_unpermute(tab, dead->keys[i]);
}

/*
 * Later tables: should the merged stream's next entry, of key, be skipped
 * as one of the dead?  Called in key order.  A dead key that no entry
 * matches is passed by; the table's count of entries then differs from
 * table 0's, which the merge reports as corruption.
 */
static inline bool
dead_key_skip(MergeDead *dead, uint64 key)
{
	while (dead->next < dead->n && dead->keys[dead->next] < key)
		dead->next++;
	if (dead->next < dead->n && dead->keys[dead->next] == key)
	{
		dead->next++;
		return true;
	}
	return false;
}

/* Move to the next live entry (the first one on the first call). */
static void
source_advance(MergeSource *src, const SimhashTable *tab, bool first)
{
	if (src->list)
	{
		if (!first)
			src->lpos++;
		src->done = (src->lpos >= src->list->n);
		if (!src->done)
			src->key = src->keys[src->lpos];
		return;
	}
	if (!first)
		src->pos++;
	for (;;)
	{
		Buffer		buffer;

		while (src->pos < src->n && entry_is_dead(src->dead, &src->entries[src->pos]))
			src->pos++;
		if (src->pos < src->n)
		{
			src->key = simhash_table_permute(tab, src->entries[src->pos].hash);
			return;
		}
		buffer = simhash_chain_next(&src->leaves);
		if (!BufferIsValid(buffer))
		{
			src->done = true;
			return;
		}
		src->n = simhash_leaf_decode(src->leaves.index, buffer, tab, src->entries);
		src->pos = 0;
		UnlockReleaseBuffer(buffer);
	}
}

/*
 * The source whose current entry comes first in the table's order (the
 * whole permuted hash: leaves are fully sorted, format 2), or NULL.
 */
static MergeSource *
smallest_source(MergeSource *sources, int nsources, const SimhashTable *tab)
{
	MergeSource *best = NULL;

	for (int i = 0; i < nsources; i++)
		if (!sources[i].done && (best == NULL || sources[i].key < best->key))
			best = &sources[i];
	return best;
}

/*
 * Write, as one run, the live entries of runs[0 .. nruns-1] and of the
 * in-memory entries *list.  Returns the run's header, or InvalidBlockNumber
 * if there is no live entry; *nentries receives their number.
 */
BlockNumber
simhash_merge_runs(Relation index, const SimhashBlocks *blocks,
				   const SimhashRunRef *runs, int nruns,
				   const SimhashRunInput *list, uint64 generation,
				   SimhashWriteMode mode, uint64 *nentries)
{
	int			nsources;
	MergeSource *sources;
	SimhashRunRef *streamed = palloc(Max(nruns, 1) * sizeof(SimhashRunRef));
	SimhashRunInput *memory = palloc0(sizeof(SimhashRunInput));
	bool		copied = false;
	SimhashRunHeader **headers = palloc(Max(nruns, 1) * sizeof(SimhashRunHeader *));
	SimhashTable *tab = palloc(sizeof(SimhashTable));
	SimhashSortSpace space;
	PGAlignedBlock image;
	Page		page = (Page) image.data;
	SimhashRunHeader *header;
	Buffer		headbuf;
	BlockNumber headblk;
	SimhashRunWriter w;
	MergeDead	dead;

	/* format-1 runs into memory, with the list; the others streamed */
	*memory = *list;
	nsources = 0;
	for (int r = 0; r < nruns; r++)
	{
		if (!simhash_run_is_format1(&runs[r]))
		{
			streamed[nsources++] = runs[r];
			continue;
		}
		if (!copied)
		{
			/* the caller's list stays as it was */
			memset(memory, 0, sizeof(SimhashRunInput));
			if (list->n > 0)
			{
				simhash_run_input_reserve(memory, list->n);
				memcpy(memory->hashes, list->hashes, list->n * sizeof(uint64));
				memcpy(memory->tids, list->tids, list->n * sizeof(ItemPointerData));
				memory->n = list->n;
			}
			copied = true;
		}
		simhash_read_run_entries(index, &runs[r], memory, true);
	}
	runs = streamed;
	nruns = nsources;
	list = memory;
	nsources = nruns + 1;
	sources = palloc0(nsources * sizeof(MergeSource));

	memset(&dead, 0, sizeof(dead));
	dead.collecting = true;
	simhash_writer_init(&w, index, mode, generation);
	simhash_sort_space_alloc(&space, list->n);
	for (int r = 0; r < nruns; r++)
		headers[r] = simhash_read_run_header(index, runs[r].header, runs[r].generation, NULL);

	headbuf = simhash_run_header_begin(&w, page, blocks->ntables);
	headblk = BufferGetBlockNumber(headbuf);
	header = SimhashPageRunHeader(page);
	*nentries = 0;

	for (int t = 0; t < blocks->ntables; t++)
	{
		SimhashTreeWriter tw;
		MergeSource *best;

		simhash_table_init(blocks, t, tab);
		if (t > 0)
			dead_keys_begin(&dead, tab);
		for (int r = 0; r < nruns; r++)
		{
			MergeSource *src = &sources[r];

			src->n = src->pos = 0;
			src->list = NULL;
			src->done = false;
			src->dead = &dead;
			simhash_chain_begin(&src->leaves, index,
								simhash_leftmost_leaf(index, &headers[r]->trees[t],
													  runs[r].generation, NULL),
								simhash_leaf_kind(t), runs[r].generation,
								BUFFER_LOCK_SHARE, 0, NULL);
			source_advance(src, tab, true);
		}
		{
			MergeSource *src = &sources[nruns];

			src->list = list;
			src->lpos = 0;
			if (list->n > 0)
				simhash_table_sort(tab, list->hashes, list->n, space.keys, space.order,
								   space.tmpkeys, space.tmporder);
			src->keys = space.keys;
			src->order = space.order;
			source_advance(src, tab, true);
		}

		simhash_tree_begin(&tw, &w, t);
		while ((best = smallest_source(sources, nsources, tab)) != NULL)
		{
			if (t > 0 && dead_key_skip(&dead, best->key))
				;				/* its entry is dead in table 0 */
			else if (best->list)
				simhash_tree_add(&tw, list->hashes[best->order[best->lpos]],
								 &list->tids[best->order[best->lpos]], best->key);
			else
				simhash_tree_add(&tw, best->entries[best->pos].hash,
								 &best->entries[best->pos].tid, best->key);
			source_advance(best, tab, false);
		}

		if (t == 0)
		{
			*nentries = tw.nentries;
			if (tw.nentries == 0)
			{
				/* nothing live: give the header page back */
				pfree(tw.level);
				pfree(tw.leaf);
				simhash_init_page(page, SIMHASH_FREE, 0);
				simhash_finish_page(&w, headbuf, page);
				simhash_give_free_page(index, headblk);
				return InvalidBlockNumber;
			}
		}
		else
		{
			if (t + 1 < blocks->ntables)
				dead_keys_end(&dead, tab);
			if (tw.nentries != *nentries)
				simhash_report_corrupt(index, nruns > 0 ? runs[0].header : headblk,
									   psprintf("A merge found " UINT64_FORMAT " entries in table %d, " UINT64_FORMAT " in table 0.",
												tw.nentries, t, *nentries));
		}
		header->trees[t].root = simhash_tree_end(&tw, &header->trees[t].height);
		header->trees[t].pad = 0;
	}
	header->nentries = *nentries;
	simhash_run_header_end(&w, headbuf, page);
	return headblk;
}
