/*
 * am_runs.c
 *		Runs of the simhash index (see am.h): writing one from a set of
 *		entries (a static B+tree per table, sorted by the table's permuted
 *		prefix), reading their entries back, searching them with probes,
 *		and the flush of the pending list into runs and merging of runs.
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"

#include "am.h"

/* ---- collecting entries and matches ---- */

void
simhash_run_input_reserve(SimhashRunInput *in, size_t n)
{
	size_t		need = in->n + n;

	if (in->hashes == NULL)
	{
		in->hashes = MemoryContextAllocHuge(CurrentMemoryContext, Max(need, 64) * sizeof(uint64));
		in->tids = MemoryContextAllocHuge(CurrentMemoryContext, Max(need, 64) * sizeof(ItemPointerData));
		return;
	}
	in->hashes = repalloc_huge(in->hashes, Max(need, 64) * sizeof(uint64));
	in->tids = repalloc_huge(in->tids, Max(need, 64) * sizeof(ItemPointerData));
}

void
simhash_matches_add(SimhashMatches *m, ItemPointer tid, uint64 hash)
{
	m->fn(m->arg, tid, hash);
}

/* ---- writing a run ---- */

typedef struct RunWriter
{
	Relation	index;
	SimhashWriteMode mode;
	uint64		generation;
	uint32		npages;
} RunWriter;

/* Finish a page filled by the caller: WAL-log it (or leave it to the build). */
static void
finish_page(RunWriter *w, Buffer buffer, Page image)
{
	if (w->mode == SIMHASH_WRITE_LOGGED)
	{
		GenericXLogState *state = GenericXLogStart(w->index);
		Page		page = GenericXLogRegisterBuffer(state, buffer, GENERIC_XLOG_FULL_IMAGE);

		memcpy(page, image, BLCKSZ);
		GenericXLogFinish(state);
	}
	else
	{
		memcpy(BufferGetPage(buffer), image, BLCKSZ);
		MarkBufferDirty(buffer);
	}
	UnlockReleaseBuffer(buffer);
	w->npages++;
}

/*
 * Writing one tree, entry by entry in the table's order: leaves are filled
 * and linked as they come, and their first keys collected for the inner
 * levels, written at the end.
 */
typedef struct TreeWriter
{
	RunWriter  *w;
	PGAlignedBlock image;		/* the leaf being filled */
	Buffer		cur;			/* its buffer, InvalidBuffer before the first */
	int			count;			/* entries in it */
	SimhashInnerItem *level;	/* (first key, leaf) of every leaf */
	size_t		nlevel;
	size_t		caplevel;
	uint64		nentries;
} TreeWriter;

static void
tree_begin(TreeWriter *tw, RunWriter *w)
{
	tw->w = w;
	tw->cur = InvalidBuffer;
	tw->count = 0;
	tw->caplevel = 64;
	tw->level = palloc(tw->caplevel * sizeof(SimhashInnerItem));
	tw->nlevel = 0;
	tw->nentries = 0;
}

static void
tree_add(TreeWriter *tw, uint64 hash, ItemPointer tid, uint64 key)
{
	Page		page = (Page) tw->image.data;
	SimhashEntry *e;

	if (BufferIsValid(tw->cur) && tw->count == (int) SIMHASH_PAGE_ITEMS)
	{
		Buffer		next = simhash_new_buffer(tw->w->index);

		SimhashPageGetOpaque(page)->next = BufferGetBlockNumber(next);
		finish_page(tw->w, tw->cur, page);
		tw->cur = next;
		tw->count = 0;
		CHECK_FOR_INTERRUPTS();
	}
	else if (!BufferIsValid(tw->cur))
		tw->cur = simhash_new_buffer(tw->w->index);
	if (tw->count == 0)
	{
		simhash_init_page(page, SIMHASH_LEAF, tw->w->generation);
		if (tw->nlevel >= tw->caplevel)
		{
			tw->caplevel *= 2;
			tw->level = repalloc_huge(tw->level, tw->caplevel * sizeof(SimhashInnerItem));
		}
		tw->level[tw->nlevel].key = key;
		tw->level[tw->nlevel].child = BufferGetBlockNumber(tw->cur);
		tw->level[tw->nlevel].pad = 0;
		tw->nlevel++;
	}
	e = SimhashPageEntries(page) + tw->count++;
	e->hash = hash;
	e->tid = *tid;
	e->flags = 0;
	((PageHeader) page)->pd_lower += sizeof(SimhashEntry);
	tw->nentries++;
}

/* Finish the last leaf and write the inner levels; returns the root. */
static BlockNumber
tree_end(TreeWriter *tw, uint16 *height)
{
	SimhashInnerItem *level = tw->level;
	size_t		nlevel = tw->nlevel;
	BlockNumber root;

	Assert(BufferIsValid(tw->cur));
	finish_page(tw->w, tw->cur, (Page) tw->image.data);

	/* inner levels, until one page holds them all */
	*height = 0;
	while (nlevel > 1)
	{
		size_t		nup = 0;

		for (size_t start = 0; start < nlevel; start += SIMHASH_PAGE_ITEMS)
		{
			size_t		count = Min((size_t) SIMHASH_PAGE_ITEMS, nlevel - start);
			Page		page = (Page) tw->image.data;
			Buffer		buf = simhash_new_buffer(tw->w->index);
			SimhashInnerItem first = level[start];

			simhash_init_page(page, SIMHASH_INNER, tw->w->generation);
			memcpy(SimhashPageInner(page), level + start, count * sizeof(SimhashInnerItem));
			((PageHeader) page)->pd_lower += count * sizeof(SimhashInnerItem);
			first.child = BufferGetBlockNumber(buf);
			finish_page(tw->w, buf, page);
			level[nup++] = first;	/* nup <= start: no overwrite ahead */
		}
		nlevel = nup;
		(*height)++;
	}
	root = level[0].child;
	pfree(tw->level);
	return root;
}

/* One tree from entries in order[] (keys[] are their permuted hashes). */
static BlockNumber
write_tree(RunWriter *w, const SimhashRunInput *in, const uint64 *keys,
		   const uint32 *order, uint16 *height)
{
	TreeWriter	tw;

	tree_begin(&tw, w);
	for (size_t i = 0; i < in->n; i++)
		tree_add(&tw, in->hashes[order[i]], &in->tids[order[i]], keys[i]);
	return tree_end(&tw, height);
}

/*
 * Write the entries of *input (n >= 1) as a run: one tree per table.
 * Returns the run's header page.
 */
BlockNumber
simhash_write_run(Relation index, const SimhashBlocks *blocks,
				  const SimhashRunInput *input, uint64 generation,
				  SimhashWriteMode mode)
{
	return simhash_write_run_sorted(index, blocks, input, generation, mode, NULL, NULL);
}

/*
 * As simhash_write_run, the tables' sorted entries given by sorted (if not
 * NULL; issue #14: sorted by parallel workers during CREATE INDEX).
 */
BlockNumber
simhash_write_run_sorted(Relation index, const SimhashBlocks *blocks,
						 const SimhashRunInput *input, uint64 generation,
						 SimhashWriteMode mode, SimhashSortedTableFn sorted,
						 void *arg)
{
	size_t		n = input->n;
	uint64	   *keys = NULL;
	uint64	   *tmpkeys = NULL;
	uint32	   *order = NULL;
	uint32	   *tmporder = NULL;
	SimhashTable *tab = palloc(sizeof(SimhashTable));
	Buffer		headbuf;
	BlockNumber headblk;
	PGAlignedBlock image;
	Page		page = (Page) image.data;
	SimhashRunHeader *header;
	RunWriter	w;

	Assert(n > 0 && n < ((size_t) 1 << 32));
	w.index = index;
	w.mode = mode;
	w.generation = generation;
	w.npages = 0;

	headbuf = simhash_new_buffer(index);
	headblk = BufferGetBlockNumber(headbuf);
	simhash_init_page(page, SIMHASH_RUN_HEADER, generation);
	header = SimhashPageRunHeader(page);
	header->nentries = n;
	header->ndead = 0;
	header->ntables = blocks->ntables;

	/*
	 * A build's sorted tables may have to be waited for: not with a buffer
	 * locked (interrupts, such as a worker's error, would be held off).  The
	 * index being built is not visible to others yet.
	 */
	if (sorted)
		LockBuffer(headbuf, BUFFER_LOCK_UNLOCK);
	else
	{
		keys = MemoryContextAllocHuge(CurrentMemoryContext, n * sizeof(uint64));
		tmpkeys = MemoryContextAllocHuge(CurrentMemoryContext, n * sizeof(uint64));
		order = MemoryContextAllocHuge(CurrentMemoryContext, n * sizeof(uint32));
		tmporder = MemoryContextAllocHuge(CurrentMemoryContext, n * sizeof(uint32));
	}
	for (int t = 0; t < blocks->ntables; t++)
	{
		const uint64 *tkeys = keys;
		const uint32 *torder = order;

		if (sorted)
			sorted(arg, t, &tkeys, &torder);
		else
		{
			simhash_table_init(blocks, t, tab);
			simhash_table_sort(tab, input->hashes, n, keys, order, tmpkeys, tmporder);
		}
		header->trees[t].root = write_tree(&w, input, tkeys, torder,
										   &header->trees[t].height);
		header->trees[t].pad = 0;
	}
	if (sorted)
		LockBuffer(headbuf, BUFFER_LOCK_EXCLUSIVE);
	header->npages = w.npages + 1;
	((PageHeader) page)->pd_lower +=
		offsetof(SimhashRunHeader, trees) + blocks->ntables * sizeof(SimhashRunTree);
	finish_page(&w, headbuf, page);

	if (sorted == NULL)
	{
		pfree(keys);
		pfree(tmpkeys);
		pfree(order);
		pfree(tmporder);
	}
	pfree(tab);
	return headblk;
}

/*
 * Write entries as a list of pages (the nulls list at CREATE INDEX), with
 * a new generation taken by the caller in list->generation.
 */
void
simhash_write_list(Relation index, const SimhashRunInput *input, uint16 flags,
				   SimhashList *list, SimhashWriteMode mode)
{
	RunWriter	w;
	PGAlignedBlock image;
	Buffer		cur;

	w.index = index;
	w.mode = mode;
	w.generation = list->generation;
	w.npages = 0;
	list->head = list->tail = InvalidBlockNumber;
	list->nentries = input->n;
	if (input->n == 0)
		return;
	cur = simhash_new_buffer(index);
	list->head = BufferGetBlockNumber(cur);
	for (size_t start = 0; start < input->n; start += SIMHASH_PAGE_ITEMS)
	{
		size_t		count = Min((size_t) SIMHASH_PAGE_ITEMS, input->n - start);
		Page		page = (Page) image.data;
		SimhashEntry *entries;
		Buffer		next = InvalidBuffer;

		simhash_init_page(page, SIMHASH_PENDING, list->generation);
		entries = SimhashPageEntries(page);
		for (size_t i = 0; i < count; i++)
		{
			entries[i].hash = input->hashes[start + i];
			entries[i].tid = input->tids[start + i];
			entries[i].flags = flags;
		}
		((PageHeader) page)->pd_lower += count * sizeof(SimhashEntry);
		if (start + count < input->n)
		{
			next = simhash_new_buffer(index);
			SimhashPageGetOpaque(page)->next = BufferGetBlockNumber(next);
		}
		else
			list->tail = BufferGetBlockNumber(cur);
		finish_page(&w, cur, page);
		cur = next;
	}
}

/* ---- reading runs ---- */

/*
 * Read a run's header into a palloc'd copy, checked (its table count is
 * the metapage's, its roots and heights in range).
 */
SimhashRunHeader *
simhash_read_run_header(Relation index, BlockNumber blkno, uint64 generation)
{
	Buffer		buffer = simhash_read_page(index, blkno, BUFFER_LOCK_SHARE,
										   SIMHASH_RUN_HEADER, generation, 0);
	Page		page = BufferGetPage(buffer);
	SimhashRunHeader *copy;
	Size		size;

	size = offsetof(SimhashRunHeader, trees) +
		SimhashPageRunHeader(page)->ntables * sizeof(SimhashRunTree);
	copy = palloc(size);
	memcpy(copy, SimhashPageRunHeader(page), size);
	UnlockReleaseBuffer(buffer);
	return copy;
}

/* The leftmost leaf of a tree (of a checked run header). */
BlockNumber
simhash_leftmost_leaf(Relation index, const SimhashRunTree *tree, uint64 generation)
{
	BlockNumber blkno = tree->root;

	for (int level = tree->height; level > 0; level--)
	{
		Buffer		buffer = simhash_read_page(index, blkno, BUFFER_LOCK_SHARE,
											   SIMHASH_INNER, generation, 0);

		blkno = SimhashPageInner(BufferGetPage(buffer))[0].child;
		UnlockReleaseBuffer(buffer);
	}
	return blkno;
}

/* Call fn for the entries of every page of a chain of leaves or list pages. */
typedef void (*SimhashEntriesFn) (const SimhashEntry *entries, int n, void *arg);

static void
walk_chain(Relation index, BlockNumber blkno, uint16 kind, uint64 generation,
		   SimhashEntriesFn fn, void *arg)
{
	BlockNumber steps = 0;

	while (blkno != InvalidBlockNumber)
	{
		Buffer		buffer;
		Page		page;

		simhash_chain_step(index, &steps, blkno);
		buffer = simhash_read_page(index, blkno, BUFFER_LOCK_SHARE, kind, generation, 0);
		page = BufferGetPage(buffer);
		fn(SimhashPageEntries(page), SimhashPageItems(page), arg);
		blkno = SimhashPageGetOpaque(page)->next;
		UnlockReleaseBuffer(buffer);
		CHECK_FOR_INTERRUPTS();
	}
}

typedef struct CollectArg
{
	SimhashRunInput *out;
	bool		skip_dead;
} CollectArg;

static void
collect_entries(const SimhashEntry *entries, int n, void *arg)
{
	CollectArg *c = (CollectArg *) arg;

	simhash_run_input_reserve(c->out, n);
	for (int i = 0; i < n; i++)
	{
		if (c->skip_dead && (entries[i].flags & SIMHASH_ENTRY_DEAD))
			continue;
		c->out->hashes[c->out->n] = entries[i].hash;
		c->out->tids[c->out->n] = entries[i].tid;
		c->out->n++;
	}
}

static void
read_chain(Relation index, BlockNumber blkno, uint16 kind, uint64 generation,
		   SimhashRunInput *out, bool skip_dead)
{
	CollectArg	c = {out, skip_dead};

	walk_chain(index, blkno, kind, generation, collect_entries, &c);
}

/* Append a run's entries (from its first tree) to *out. */
void
simhash_read_run_entries(Relation index, const SimhashRunRef *run,
						 SimhashRunInput *out, bool skip_dead)
{
	SimhashRunHeader *header = simhash_read_run_header(index, run->header, run->generation);

	read_chain(index, simhash_leftmost_leaf(index, &header->trees[0], run->generation),
			   SIMHASH_LEAF, run->generation, out, skip_dead);
	pfree(header);
}

void
simhash_read_list_entries(Relation index, const SimhashList *list,
						  SimhashRunInput *out, bool skip_dead)
{
	read_chain(index, list->head, SIMHASH_PENDING, list->generation, out, skip_dead);
}

/* ---- merging runs, streaming ---- */

/*
 * A cursor over the entries of one tree of a run, leaf by leaf, or over an
 * in-memory list sorted for the table (keys[] permuted, order[] positions).
 */
typedef struct MergeSource
{
	Relation	index;
	uint64		generation;
	BlockNumber next;			/* the next leaf to read */
	SimhashEntry entries[SIMHASH_PAGE_ITEMS];
	int			n;
	int			pos;
	const SimhashRunInput *list;	/* the in-memory source, or NULL */
	const uint64 *keys;
	const uint32 *order;
	size_t		lpos;
	bool		done;
	uint64		key;			/* the current entry's permuted hash */
	BlockNumber steps;			/* leaves read (a cycle is corruption) */
	struct DeadTids *dead;		/* see source_advance() */
} MergeSource;

/*
 * Which entries are dead: the first tree's marks decide (VACUUM marks the
 * trees in order, so an interrupted VACUUM may have marked only the first
 * ones).  Collected while merging table 0 as (TID, hash): a TID can occur
 * twice among the runs merged (a dead entry, and a live one of a newer
 * tuple that reuses the TID).  The later tables then skip, for each
 * collected pair, one entry equal to it (a multiset).
 */
typedef struct DeadEntry
{
	ItemPointerData tid;
	bool		used;			/* matched in the current table */
	uint64		hash;
} DeadEntry;

typedef struct DeadTids
{
	bool		collecting;
	DeadEntry  *entries;
	size_t		n;
	size_t		cap;
} DeadTids;

static int
dead_cmp(const void *a, const void *b)
{
	const DeadEntry *x = a;
	const DeadEntry *y = b;
	int			c = ItemPointerCompare((ItemPointer) &x->tid, (ItemPointer) &y->tid);

	if (c != 0)
		return c;
	return (x->hash > y->hash) - (x->hash < y->hash);
}

static bool
entry_is_dead(DeadTids *dead, const SimhashEntry *e)
{
	DeadEntry	key;
	size_t		lo = 0,
				hi = dead->n;

	if (dead->collecting)
	{
		if (!(e->flags & SIMHASH_ENTRY_DEAD))
			return false;
		if (dead->n >= dead->cap)
		{
			dead->cap = Max(dead->cap * 2, 256);
			dead->entries = dead->entries ?
				repalloc_huge(dead->entries, dead->cap * sizeof(DeadEntry)) :
				MemoryContextAllocHuge(CurrentMemoryContext, dead->cap * sizeof(DeadEntry));
		}
		dead->entries[dead->n].tid = e->tid;
		dead->entries[dead->n].hash = e->hash;
		dead->entries[dead->n].used = false;
		dead->n++;
		return true;
	}

	/* the first unused pair equal to (tid, hash) */
	key.tid = e->tid;
	key.hash = e->hash;
	while (lo < hi)
	{
		size_t		mid = (lo + hi) / 2;

		if (dead_cmp(&dead->entries[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < dead->n && dead_cmp(&dead->entries[lo], &key) == 0; lo++)
	{
		if (!dead->entries[lo].used)
		{
			dead->entries[lo].used = true;
			return true;
		}
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
		while (src->pos < src->n && entry_is_dead(src->dead, &src->entries[src->pos]))
			src->pos++;
		if (src->pos < src->n)
		{
			src->key = simhash_table_permute(tab, src->entries[src->pos].hash);
			return;
		}
		if (src->next == InvalidBlockNumber)
		{
			src->done = true;
			return;
		}
		{
			Buffer		buffer;
			Page		page;

			simhash_chain_step(src->index, &src->steps, src->next);
			buffer = simhash_read_page(src->index, src->next, BUFFER_LOCK_SHARE,
									   SIMHASH_LEAF, src->generation, 0);
			page = BufferGetPage(buffer);
			src->n = SimhashPageItems(page);
			memcpy(src->entries, SimhashPageEntries(page), src->n * sizeof(SimhashEntry));
			src->next = SimhashPageGetOpaque(page)->next;
			src->pos = 0;
			UnlockReleaseBuffer(buffer);
		}
	}
}

/*
 * Write, as one run, the live entries of runs[0 .. nruns-1] and of the
 * in-memory entries *list: for each table, a k-way merge of the runs'
 * trees (already in the table's order) and the sorted list, written leaf
 * by leaf.  Memory: a leaf per source and the list.  Returns the run's
 * header, or InvalidBlockNumber if there is no live entry; *nentries
 * receives their number.
 */
BlockNumber
simhash_merge_runs(Relation index, const SimhashBlocks *blocks,
				   const SimhashRunRef *runs, int nruns,
				   const SimhashRunInput *list, uint64 generation,
				   SimhashWriteMode mode, uint64 *nentries)
{
	int			nsources = nruns + 1;
	MergeSource *sources = palloc0(nsources * sizeof(MergeSource));
	SimhashRunHeader **headers = palloc(Max(nruns, 1) * sizeof(SimhashRunHeader *));
	SimhashTable *tab = palloc(sizeof(SimhashTable));
	size_t		ln = list->n;
	uint64	   *keys = MemoryContextAllocHuge(CurrentMemoryContext, Max(ln, 1) * sizeof(uint64));
	uint64	   *tmpkeys = MemoryContextAllocHuge(CurrentMemoryContext, Max(ln, 1) * sizeof(uint64));
	uint32	   *order = MemoryContextAllocHuge(CurrentMemoryContext, Max(ln, 1) * sizeof(uint32));
	uint32	   *tmporder = MemoryContextAllocHuge(CurrentMemoryContext, Max(ln, 1) * sizeof(uint32));
	PGAlignedBlock image;
	Page		page = (Page) image.data;
	SimhashRunHeader *header;
	Buffer		headbuf;
	BlockNumber headblk;
	RunWriter	w;
	DeadTids	dead = {true, NULL, 0, 0};

	w.index = index;
	w.mode = mode;
	w.generation = generation;
	w.npages = 0;
	for (int r = 0; r < nruns; r++)
		headers[r] = simhash_read_run_header(index, runs[r].header, runs[r].generation);

	headbuf = simhash_new_buffer(index);
	headblk = BufferGetBlockNumber(headbuf);
	simhash_init_page(page, SIMHASH_RUN_HEADER, generation);
	header = SimhashPageRunHeader(page);
	header->ndead = 0;
	header->ntables = blocks->ntables;
	*nentries = 0;

	for (int t = 0; t < blocks->ntables; t++)
	{
		TreeWriter	tw;

		simhash_table_init(blocks, t, tab);
		for (size_t i = 0; i < dead.n; i++)
			dead.entries[i].used = false;
		for (int r = 0; r < nruns; r++)
		{
			MergeSource *src = &sources[r];

			memset(src, 0, offsetof(MergeSource, entries));
			src->index = index;
			src->generation = runs[r].generation;
			src->next = simhash_leftmost_leaf(index, &headers[r]->trees[t], runs[r].generation);
			src->n = src->pos = 0;
			src->list = NULL;
			src->done = false;
			src->dead = &dead;
			source_advance(src, tab, true);
		}
		{
			MergeSource *src = &sources[nruns];

			src->list = list;
			src->lpos = 0;
			if (ln > 0)
				simhash_table_sort(tab, list->hashes, ln, keys, order, tmpkeys, tmporder);
			src->keys = keys;
			src->order = order;
			source_advance(src, tab, true);
		}

		tree_begin(&tw, &w);
		for (;;)
		{
			MergeSource *best = NULL;

			for (int i = 0; i < nsources; i++)
				if (!sources[i].done &&
					(best == NULL ||
					 (sources[i].key & tab->prefix_mask) < (best->key & tab->prefix_mask)))
					best = &sources[i];
			if (best == NULL)
				break;
			if (best->list)
				tree_add(&tw, list->hashes[best->order[best->lpos]],
						 &list->tids[best->order[best->lpos]], best->key);
			else
				tree_add(&tw, best->entries[best->pos].hash,
						 &best->entries[best->pos].tid, best->key);
			source_advance(best, tab, false);
		}

		if (t == 0)
		{
			/* later tables skip what table 0 had marked dead */
			if (dead.n > 1)
				qsort(dead.entries, dead.n, sizeof(DeadEntry), dead_cmp);
			dead.collecting = false;
			*nentries = tw.nentries;
			if (tw.nentries == 0)
			{
				/* nothing live: give the header page back */
				pfree(tw.level);
				simhash_init_page(page, SIMHASH_FREE, 0);
				finish_page(&w, headbuf, page);
				RecordFreeIndexPage(index, headblk);
				return InvalidBlockNumber;
			}
		}
		else if (tw.nentries != *nentries)
			simhash_report_corrupt(index, nruns > 0 ? runs[0].header : headblk,
								   psprintf("A merge found " UINT64_FORMAT " entries in table %d, " UINT64_FORMAT " in table 0.",
											tw.nentries, t, *nentries));
		header->trees[t].root = tree_end(&tw, &header->trees[t].height);
		header->trees[t].pad = 0;
	}
	header->nentries = *nentries;
	header->npages = w.npages + 1;
	((PageHeader) page)->pd_lower +=
		offsetof(SimhashRunHeader, trees) + blocks->ntables * sizeof(SimhashRunTree);
	finish_page(&w, headbuf, page);
	return headblk;
}

/* ---- searching ---- */

/*
 * The prefix distance to probe for radius r: if two fingerprints are
 * within r bits, some table's chosen m - k blocks differ in at most this
 * many bits (the m - k blocks with the fewest differences, with the r
 * differing bits spread as evenly as possible over the m blocks).
 */
int
simhash_probe_distance(const SimhashBlocks *blocks, int radius)
{
	int			m = blocks->nblocks;
	int			k = blocks->max_distance;

	return (m - k) * (radius / m) + Max(0, radius % m - k);
}

#define MAX_PROBES_PER_TABLE 4096

typedef struct SearchState
{
	Relation	index;
	uint64		generation;
	const SimhashTable *tab;
	const SimhashRunTree *tree;
	uint64		center;
	int			radius;
	SimhashMatches *out;
} SearchState;

/* All entries of a tree whose prefix equals that of permuted key `lo`. */
static void
search_prefix(SearchState *s, uint64 lo)
{
	uint64		mask = s->tab->prefix_mask;
	BlockNumber blkno = s->tree->root;
	BlockNumber steps = 0;

	lo &= mask;
	/* descend to the last child whose first prefix is below lo */
	for (int level = s->tree->height; level > 0; level--)
	{
		Buffer		buffer = simhash_read_page(s->index, blkno, BUFFER_LOCK_SHARE,
											   SIMHASH_INNER, s->generation, 0);
		Page		page = BufferGetPage(buffer);
		SimhashInnerItem *items;
		int			n,
					a = 0,
					b;

		items = SimhashPageInner(page);
		n = SimhashPageItems(page);
		b = n;
		/* first item whose prefix >= lo */
		while (a < b)
		{
			int			mid = (a + b) / 2;

			if ((items[mid].key & mask) < lo)
				a = mid + 1;
			else
				b = mid;
		}
		blkno = items[a > 0 ? a - 1 : 0].child;
		UnlockReleaseBuffer(buffer);
	}

	/* scan leaves from the first entry with prefix >= lo while it equals lo */
	while (blkno != InvalidBlockNumber)
	{
		Buffer		buffer;
		Page		page;
		SimhashEntry *entries;
		int			n,
					a = 0,
					b;
		bool		done = false;

		simhash_chain_step(s->index, &steps, blkno);
		buffer = simhash_read_page(s->index, blkno, BUFFER_LOCK_SHARE,
								   SIMHASH_LEAF, s->generation, 0);
		page = BufferGetPage(buffer);
		entries = SimhashPageEntries(page);
		n = SimhashPageItems(page);
		b = n;
		while (a < b)
		{
			int			mid = (a + b) / 2;

			if ((simhash_table_permute(s->tab, entries[mid].hash) & mask) < lo)
				a = mid + 1;
			else
				b = mid;
		}
		for (int i = a; i < n; i++)
		{
			if ((simhash_table_permute(s->tab, entries[i].hash) & mask) != lo)
			{
				done = true;
				break;
			}
			if (!(entries[i].flags & SIMHASH_ENTRY_DEAD) &&
				pg_popcount64(entries[i].hash ^ s->center) <= s->radius)
				simhash_matches_add(s->out, &entries[i].tid, entries[i].hash);
		}
		blkno = SimhashPageGetOpaque(page)->next;
		UnlockReleaseBuffer(buffer);
		if (done)
			break;
	}
}

/* Probe every prefix within `left` more flipped bits, at bits below `bit`. */
static void
probe(SearchState *s, uint64 prefix, int bit, int lowest, int left)
{
	search_prefix(s, prefix);
	if (left == 0)
		return;
	for (int b = bit - 1; b >= lowest; b--)
		probe(s, prefix ^ ((uint64) 1 << b), b, lowest, left - 1);
}

static uint64
count_probes(int bits, int e);

/*
 * Would simhash_search_run() read a whole tree, for this radius and a run
 * of nentries?  When the probes (a descent of each table's tree each) would
 * touch more pages than the first tree's leaves, reading those is cheaper.
 */
bool
simhash_search_reads_all(const SimhashBlocks *blocks, int radius, uint64 nentries)
{
	SimhashTable tab;
	uint64		probes;
	double		leaves = (double) nentries / SIMHASH_PAGE_ITEMS + 1;
	double		height = 1;

	simhash_table_init(blocks, 0, &tab);
	probes = count_probes(tab.prefix_bits, simhash_probe_distance(blocks, Min(radius, 64)));
	if (probes > MAX_PROBES_PER_TABLE)
		return true;
	for (double pages = leaves; pages > 1; pages /= SIMHASH_PAGE_ITEMS)
		height++;
	return (double) probes * blocks->ntables * height > leaves;
}

static uint64
count_probes(int bits, int e)
{
	uint64		total = 0;

	for (int j = 0; j <= e && j <= bits; j++)
	{
		uint64		c = simhash_binomial(bits, j);

		if (c == UINT64_MAX || total + c < total)
			return UINT64_MAX;
		total += c;
	}
	return total;
}

typedef struct MatchArg
{
	uint64		center;
	int			radius;
	SimhashMatches *out;
} MatchArg;

static void
match_entries(const SimhashEntry *entries, int n, void *arg)
{
	MatchArg   *m = (MatchArg *) arg;

	for (int i = 0; i < n; i++)
		if (!(entries[i].flags & SIMHASH_ENTRY_DEAD) &&
			pg_popcount64(entries[i].hash ^ m->center) <= m->radius)
			simhash_matches_add(m->out, (ItemPointer) &entries[i].tid, entries[i].hash);
}

/* Matching live entries of a chain of leaves or list pages. */
static void
scan_chain(Relation index, BlockNumber blkno, uint16 kind, uint64 generation,
		   uint64 center, int radius, SimhashMatches *out)
{
	MatchArg	m = {center, radius, out};

	walk_chain(index, blkno, kind, generation, match_entries, &m);
}

/*
 * Add to *out the TIDs of a run's live entries within radius of center.
 * A TID may be added once per table that finds it.
 */
void
simhash_search_run(Relation index, const SimhashBlocks *blocks,
				   const SimhashRunRef *run, uint64 center, int radius,
				   SimhashMatches *out)
{
	SimhashRunHeader *header;
	int			e;
	SimhashTable *tab;

	if (radius < 0)
		return;
	radius = Min(radius, 64);
	header = simhash_read_run_header(index, run->header, run->generation);
	e = simhash_probe_distance(blocks, radius);
	tab = palloc(sizeof(SimhashTable));

	/* probing would cost more than reading one tree in full */
	simhash_table_init(blocks, 0, tab);
	if (simhash_search_reads_all(blocks, radius, header->nentries))
	{
		scan_chain(index, simhash_leftmost_leaf(index, &header->trees[0], run->generation),
				   SIMHASH_LEAF, run->generation, center, radius, out);
		pfree(tab);
		pfree(header);
		return;
	}

	for (int t = 0; t < blocks->ntables; t++)
	{
		SearchState s;
		uint64		qkey;

		if (t > 0)
			simhash_table_init(blocks, t, tab);
		s.index = index;
		s.generation = run->generation;
		s.tab = tab;
		s.tree = &header->trees[t];
		s.center = center;
		s.radius = radius;
		s.out = out;
		qkey = simhash_table_permute(tab, center) & tab->prefix_mask;
		probe(&s, qkey, 64, 64 - tab->prefix_bits, Min(e, tab->prefix_bits));
		CHECK_FOR_INTERRUPTS();
	}
	pfree(tab);
	pfree(header);
}

void
simhash_search_list(Relation index, const SimhashList *list,
					uint64 center, int radius, SimhashMatches *out)
{
	if (radius >= 0)
		scan_chain(index, list->head, SIMHASH_PENDING, list->generation,
				   center, radius, out);
}

/* ---- visiting pages ---- */

/*
 * Post-order walk of a tree: children before their parent.  A page that is
 * not (any more) of the run's generation is skipped with what lies below
 * it: a walk that recycles pages frees children first, so a page found
 * recycled (after a crash cut the previous walk short) has no children of
 * the run left to visit.
 */
static void
visit_tree(Relation index, BlockNumber blkno, int height, uint64 generation,
		   SimhashPageVisitor visit, void *arg)
{
	Buffer		buffer = simhash_read_page(index, blkno, BUFFER_LOCK_SHARE,
										   height > 0 ? SIMHASH_INNER : SIMHASH_LEAF,
										   generation, SIMHASH_READ_IF_OURS);
	Page		page;
	int			n = 0;
	BlockNumber *children = NULL;

	if (!BufferIsValid(buffer))
		return;
	page = BufferGetPage(buffer);
	if (height > 0)
	{
		n = SimhashPageItems(page);
		children = palloc(n * sizeof(BlockNumber));
		for (int i = 0; i < n; i++)
			children[i] = SimhashPageInner(page)[i].child;
	}
	UnlockReleaseBuffer(buffer);
	CHECK_FOR_INTERRUPTS();
	for (int i = 0; i < n; i++)
		visit_tree(index, children[i], height - 1, generation, visit, arg);
	if (children)
		pfree(children);
	visit(index, blkno, arg);
}

/*
 * Call visit for every page of a run (the header last).  Nothing if the
 * header is no longer the run's (it was recycled already).
 */
void
simhash_visit_run_pages(Relation index, BlockNumber headblk, uint64 generation,
						SimhashPageVisitor visit, void *arg)
{
	Buffer		buffer = simhash_read_page(index, headblk, BUFFER_LOCK_SHARE,
										   SIMHASH_RUN_HEADER, generation,
										   SIMHASH_READ_IF_OURS);
	SimhashRunHeader *header;
	Size		size;

	if (!BufferIsValid(buffer))
		return;
	size = offsetof(SimhashRunHeader, trees) +
		SimhashPageRunHeader(BufferGetPage(buffer))->ntables * sizeof(SimhashRunTree);
	header = palloc(size);
	memcpy(header, SimhashPageRunHeader(BufferGetPage(buffer)), size);
	UnlockReleaseBuffer(buffer);
	for (uint32 t = 0; t < header->ntables; t++)
		visit_tree(index, header->trees[t].root, header->trees[t].height,
				   generation, visit, arg);
	visit(index, headblk, arg);
	pfree(header);
}

/* ---- flushing and merging ---- */

static void
log_meta_update(Relation index, Buffer metabuf, SimhashMetaPageData *newmeta)
{
	GenericXLogState *state = GenericXLogStart(index);
	Page		page = GenericXLogRegisterBuffer(state, metabuf, 0);

	memcpy(SimhashPageGetMeta(page), newmeta, sizeof(SimhashMetaPageData));
	GenericXLogFinish(state);
}

/*
 * Sort the pending list into a run, and merge runs: the newest runs while
 * the next older one is at most 4 times their size (each entry is then
 * rewritten O(log n) times), or all runs with merge_all.  Dead entries are
 * dropped.  Serialised by a heavyweight lock on the metapage's block;
 * without wait, give up if another backend holds it.
 */
void
simhash_flush_and_merge(Relation index, bool wait, bool merge_all,
						double dead_fraction)
{
	Buffer		metabuf;
	SimhashMetaPageData meta;
	SimhashBlocks blocks;
	SimhashRunInput input = {NULL, NULL, 0};
	uint64		generation;
	int			first_merged;
	uint64		acc;
	BlockNumber newheader = InvalidBlockNumber;
	uint64		newcount = 0;
	int			nruns_before;
	MemoryContext oldcxt,
				cxt;

	if (wait)
		LockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
	else if (!ConditionalLockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock))
		return;

	cxt = AllocSetContextCreate(CurrentMemoryContext, "simhash merge",
								ALLOCSET_DEFAULT_SIZES);
	oldcxt = MemoryContextSwitchTo(cxt);

	/* pages replaced earlier and seen by no snapshot now: reuse them */
	if (simhash_recycle(index) > 0)
		IndexFreeSpaceMapVacuum(index);	/* searches start at the upper levels */

	metabuf = simhash_lock_meta(index, BUFFER_LOCK_EXCLUSIVE);
	memcpy(&meta, SimhashPageGetMeta(BufferGetPage(metabuf)), sizeof(meta));
	/* the pending list will become the flushing list */
	if (meta.flushing.head == InvalidBlockNumber && meta.pending.head != InvalidBlockNumber)
	{
		meta.flushing = meta.pending;
		meta.pending.head = meta.pending.tail = InvalidBlockNumber;
		meta.pending.nentries = 0;
		meta.pending.generation = 0;
	}

	/*
	 * Which runs to rewrite: a suffix runs[first_merged ..] (newest last).
	 * Geometric policy: take the newest run while it is at most 4 times
	 * what is taken so far; or everything; or from the oldest run whose
	 * share of dead entries exceeds dead_fraction.
	 */
	acc = meta.flushing.nentries;
	first_merged = meta.nruns;
	if (merge_all)
		first_merged = 0;
	else
	{
		while (first_merged > 0 && acc > 0 &&
			   meta.runs[first_merged - 1].nentries <= 4 * acc)
		{
			first_merged--;
			acc += meta.runs[first_merged].nentries;
		}
		if (first_merged == meta.nruns && meta.nruns >= SIMHASH_MAX_RUNS)
			first_merged = meta.nruns - 2;	/* a full list: merge two */
		for (int i = 0; i < first_merged && dead_fraction < 1.0; i++)
		{
			SimhashRunHeader *h = simhash_read_run_header(index, meta.runs[i].header,
											  meta.runs[i].generation);

			if ((double) h->ndead > dead_fraction * (double) h->nentries)
				first_merged = i;
		}
	}

	/* nothing to do */
	if (meta.flushing.head == InvalidBlockNumber && first_merged >= meta.nruns)
	{
		UnlockReleaseBuffer(metabuf);
		MemoryContextSwitchTo(oldcxt);
		MemoryContextDelete(cxt);
		UnlockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
		return;
	}

	/* publish the flushing list, and take a generation for the new run */
	generation = meta.next_generation++;
	nruns_before = meta.nruns;
	log_meta_update(index, metabuf, &meta);
	LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);

	/* merge the live entries of the list and the runs into one run */
	if (meta.flushing.head != InvalidBlockNumber)
		simhash_read_list_entries(index, &meta.flushing, &input, true);
	simhash_meta_blocks(&meta, &blocks);
	newheader = simhash_merge_runs(index, &blocks, meta.runs + first_merged,
								   meta.nruns - first_merged, &input, generation,
								   SIMHASH_WRITE_LOGGED, &newcount);

	/* swap: only we change runs and the flushing list (heavyweight lock) */
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	memcpy(&meta, SimhashPageGetMeta(BufferGetPage(metabuf)), sizeof(meta));
	if (meta.nruns != nruns_before)
		simhash_report_corrupt(index, SIMHASH_METAPAGE_BLKNO,
							   "The metapage's runs changed during a merge.");
	for (int i = first_merged; i < meta.nruns; i++)
		simhash_retire(index, &meta, meta.runs[i].header, SIMHASH_RETIRED_RUN,
					   meta.runs[i].generation);
	simhash_retire(index, &meta, meta.flushing.head, SIMHASH_RETIRED_LIST,
				   meta.flushing.generation);
	meta.nruns = first_merged;
	if (newheader != InvalidBlockNumber)
	{
		SimhashRunRef *ref = &meta.runs[meta.nruns++];

		ref->header = newheader;
		ref->pad = 0;
		ref->nentries = newcount;
		ref->generation = generation;
	}
	meta.flushing.head = meta.flushing.tail = InvalidBlockNumber;
	meta.flushing.nentries = 0;
	meta.flushing.generation = 0;
	log_meta_update(index, metabuf, &meta);
	UnlockReleaseBuffer(metabuf);

	MemoryContextSwitchTo(oldcxt);
	MemoryContextDelete(cxt);
	UnlockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
}
