/*
 * merge.c
 *		The streaming merge of runs of the simhash index (design: README.md):
 *		for each table, a k-way merge of the runs' trees (each already in
 *		the table's order) and of a sorted in-memory list, written leaf by
 *		leaf as a new run.  Memory: one leaf per run, and the list.
 *
 * Which entries are dead: table 0's tree holds the dead bits (the other
 * trees hold keys only, format 2).  The hashes of the dead entries are
 * collected while merging table 0; the later tables then skip, for each
 * collected hash, one key equal to it (a hash can occur several times among
 * the runs merged, dead and live).
 *
 * A run of format 1 (format1.c: its trees sorted by prefix only) is not
 * streamed: its live entries join the in-memory list.
 */
#include "postgres.h"

#include "storage/indexfsm.h"

#include "am.h"

/* the dead entries of the runs merged (see the header comment) */
typedef struct MergeDead
{
	uint64	   *hashes;			/* sorted once table 0 is merged */
	bool	   *used;			/* taken by the current table */
	size_t		n;
	size_t		cap;
	bool		collecting;		/* table 0: collect, later tables: take */
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

/* Take one unused dead hash equal to hash, if there is one. */
static bool
take_dead_hash(MergeDead *dead, uint64 hash)
{
	size_t		a = 0,
				b = dead->n;

	while (a < b)
	{
		size_t		mid = (a + b) / 2;

		if (dead->hashes[mid] < hash)
			a = mid + 1;
		else
			b = mid;
	}
	for (; a < dead->n && dead->hashes[a] == hash; a++)
		if (!dead->used[a])
		{
			dead->used[a] = true;
			return true;
		}
	return false;
}

/* Is entry e of a run dead (and so left out of the merge)? */
static bool
entry_is_dead(MergeDead *dead, const SimhashEntry *e)
{
	if (!dead->collecting)
		return dead->n > 0 && take_dead_hash(dead, e->hash);
	if (!(e->flags & SIMHASH_ENTRY_DEAD))
		return false;
	if (dead->n >= dead->cap)
	{
		dead->cap = Max(dead->cap * 2, 64);
		dead->hashes = dead->hashes ? repalloc_huge(dead->hashes, dead->cap * sizeof(uint64)) :
			MemoryContextAllocHuge(CurrentMemoryContext, dead->cap * sizeof(uint64));
	}
	dead->hashes[dead->n++] = e->hash;
	return true;
}

/* After table 0: sort the dead hashes for the later tables to take. */
static void
dead_hashes_ready(MergeDead *dead)
{
	if (dead->n > 1)
		qsort(dead->hashes, dead->n, sizeof(uint64), simhash_cmp_uint64);
	dead->used = palloc0(Max(dead->n, 1) * sizeof(bool));
	dead->collecting = false;
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
		if (dead.used)
			memset(dead.used, 0, Max(dead.n, 1) * sizeof(bool));
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
			if (best->list)
				simhash_tree_add(&tw, list->hashes[best->order[best->lpos]],
								 &list->tids[best->order[best->lpos]], best->key);
			else
				simhash_tree_add(&tw, best->entries[best->pos].hash,
								 &best->entries[best->pos].tid, best->key);
			source_advance(best, tab, false);
		}

		if (t == 0)
		{
			/* later tables skip what table 0 had marked dead */
			dead_hashes_ready(&dead);
			*nentries = tw.nentries;
			if (tw.nentries == 0)
			{
				/* nothing live: give the header page back */
				pfree(tw.level);
				pfree(tw.leaf);
				simhash_init_page(page, SIMHASH_FREE, 0);
				simhash_finish_page(&w, headbuf, page);
				RecordFreeIndexPage(index, headblk);
				return InvalidBlockNumber;
			}
		}
		else if (tw.nentries != *nentries)
			simhash_report_corrupt(index, nruns > 0 ? runs[0].header : headblk,
								   psprintf("A merge found " UINT64_FORMAT " entries in table %d, " UINT64_FORMAT " in table 0.",
											tw.nentries, t, *nentries));
		header->trees[t].root = simhash_tree_end(&tw, &header->trees[t].height);
		header->trees[t].pad = 0;
	}
	header->nentries = *nentries;
	simhash_run_header_end(&w, headbuf, page);
	return headblk;
}
