/*
 * am_vacuum.c
 *		VACUUM of a simhash index: mark the entries of dead heap tuples (in
 *		every table of every run, and in the pending lists), recycle pages
 *		of replaced runs and lists once no snapshot can read them, flush
 *		the pending list and rewrite runs that have many dead entries.
 */
#include "postgres.h"

#include "access/transam.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "am.h"
#include "core/index_pages.h"

/* a run is rewritten by VACUUM when this share of its entries is dead */
#define SIMHASH_VACUUM_DEAD_FRACTION 0.1

/*
 * Which entries are dead: VACUUM's callback, asked once per entry in the
 * first tree of a run (and in the lists); the TIDs it reports are kept,
 * sorted, so that the run's other trees are marked without asking again.
 */
typedef struct DeadSet
{
	IndexBulkDeleteCallback callback;
	void	   *callback_state;
	bool		collect;		/* ask the callback, and remember dead TIDs */
	ItemPointerData *tids;		/* when !collect: the dead TIDs, sorted */
	size_t		n;
	size_t		cap;
} DeadSet;

static void
remember(DeadSet *d, ItemPointer tid)
{
	if (d->n >= d->cap)
	{
		d->cap = Max(d->cap * 2, 256);
		d->tids = d->tids ? repalloc_huge(d->tids, d->cap * sizeof(ItemPointerData))
			: palloc_extended(d->cap * sizeof(ItemPointerData), MCXT_ALLOC_HUGE);
	}
	d->tids[d->n++] = *tid;
}

static bool
is_dead(DeadSet *d, ItemPointer tid)
{
	if (d->collect)
	{
		if (!d->callback(tid, d->callback_state))
			return false;
		remember(d, tid);
		return true;
	}
	else
	{
		size_t		lo = 0,
					hi = d->n;

		while (lo < hi)
		{
			size_t		mid = (lo + hi) / 2;
			int			c = ItemPointerCompare(&d->tids[mid], tid);

			if (c == 0)
				return true;
			if (c < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		return false;
	}
}

static int
tid_cmp(const void *a, const void *b)
{
	return ItemPointerCompare((ItemPointer) a, (ItemPointer) b);
}

/* Mark the dead entries of one page; returns how many were marked. */
static int
mark_page(Relation index, BlockNumber blkno, uint16 kind, uint64 generation,
		  DeadSet *deadset, double *live, BlockNumber *next)
{
	Buffer		buffer = simhash_read_page(index, blkno, BUFFER_LOCK_EXCLUSIVE,
										   kind, generation, 0);
	Page		page = BufferGetPage(buffer);
	SimhashEntry *entries;
	int			n,
				ndead = 0;
	bool	   *dead;

	entries = SimhashPageEntries(page);
	n = SimhashPageItems(page);
	dead = palloc0(n * sizeof(bool));
	for (int i = 0; i < n; i++)
	{
		if (entries[i].flags & SIMHASH_ENTRY_DEAD)
		{
			/* marked before, maybe by a VACUUM that crashed half-way */
			if (deadset->collect)
				remember(deadset, &entries[i].tid);
			continue;
		}
		if (is_dead(deadset, &entries[i].tid))
		{
			dead[i] = true;
			ndead++;
		}
		else
			*live += 1;
	}
	if (ndead > 0)
	{
		GenericXLogState *state = GenericXLogStart(index);

		page = GenericXLogRegisterBuffer(state, buffer, 0);
		entries = SimhashPageEntries(page);
		for (int i = 0; i < n; i++)
			if (dead[i])
				entries[i].flags |= SIMHASH_ENTRY_DEAD;
		GenericXLogFinish(state);
	}
	*next = SimhashPageGetOpaque(page)->next;
	UnlockReleaseBuffer(buffer);
	pfree(dead);
	return ndead;
}

static uint64
mark_chain(Relation index, BlockNumber blkno, uint16 kind, uint64 generation,
		   DeadSet *deadset, double *live)
{
	uint64		ndead = 0;
	BlockNumber steps = 0;

	while (blkno != InvalidBlockNumber)
	{
		simhash_chain_step(index, &steps, blkno);
		ndead += mark_page(index, blkno, kind, generation, deadset, live, &blkno);
		vacuum_delay_point();
	}
	return ndead;
}

/* Record in the run's header how many of its entries are marked dead. */
static void
set_run_dead(Relation index, const SimhashRunRef *run, uint64 ndead)
{
	Buffer		buffer = simhash_read_page(index, run->header, BUFFER_LOCK_EXCLUSIVE,
										   SIMHASH_RUN_HEADER, run->generation, 0);
	GenericXLogState *state;
	Page		page;

	state = GenericXLogStart(index);
	page = GenericXLogRegisterBuffer(state, buffer, 0);
	SimhashPageRunHeader(page)->ndead = ndead;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(buffer);
}

IndexBulkDeleteResult *
simhash_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				   IndexBulkDeleteCallback callback, void *callback_state)
{
	Relation	index = info->index;
	SimhashMetaPageData meta;
	double		live = 0;

	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));

	/* no flush or merge may copy entries while we mark them */
	LockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
	simhash_read_meta(index, &meta);
	for (int i = 0; i < meta.nruns; i++)
	{
		SimhashRunHeader *header = simhash_read_run_header(index, meta.runs[i].header,
														   meta.runs[i].generation);
		uint64		ndead = 0;
		DeadSet		deadset = {callback, callback_state, true, NULL, 0, 0};

		for (uint32 t = 0; t < header->ntables; t++)
		{
			double		ignored = 0;
			BlockNumber leaf = simhash_leftmost_leaf(index, &header->trees[t],
													 meta.runs[i].generation);
			uint64		marked = mark_chain(index, leaf, SIMHASH_LEAF,
											meta.runs[i].generation, &deadset,
											t == 0 ? &live : &ignored);

			if (t == 0)
			{
				ndead = marked;
				if (deadset.n == 0)
					break;		/* nothing dead in this run */
				qsort(deadset.tids, deadset.n, sizeof(ItemPointerData), tid_cmp);
				deadset.collect = false;
			}
		}
		/* all dead entries of the first tree: marked now or before */
		if (ndead > 0)
			set_run_dead(index, &meta.runs[i], deadset.n);
		if (deadset.tids)
			pfree(deadset.tids);
		pfree(header);
		stats->tuples_removed += ndead;
	}
	{
		DeadSet		deadset = {callback, callback_state, true, NULL, 0, 0};

		stats->tuples_removed += mark_chain(index, meta.flushing.head, SIMHASH_PENDING,
											meta.flushing.generation, &deadset, &live);
		stats->tuples_removed += mark_chain(index, meta.pending.head, SIMHASH_PENDING,
											meta.pending.generation, &deadset, &live);
		stats->tuples_removed += mark_chain(index, meta.nulls.head, SIMHASH_PENDING,
											meta.nulls.generation, &deadset, &live);
		if (deadset.tids)
			pfree(deadset.tids);
	}
	UnlockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);

	stats->num_index_tuples = live;
	stats->estimated_count = false;
	return stats;
}

/* Mark a page free (WAL-logged) and give it to the free space map. */
static void
free_page(Relation index, BlockNumber blkno, void *arg)
{
	Buffer		buffer = ReadBuffer(index, blkno);
	GenericXLogState *state;
	Page		page;

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	page = GenericXLogRegisterBuffer(state, buffer, GENERIC_XLOG_FULL_IMAGE);
	simhash_init_page(page, SIMHASH_FREE, 0);
	GenericXLogFinish(state);
	UnlockReleaseBuffer(buffer);
	RecordFreeIndexPage(index, blkno);
	(*(BlockNumber *) arg)++;
}

/*
 * Free a list's pages, head first.  Stop at a page that is not (any more)
 * the list's: the rest, if any, are found as orphans by reclaim_pages().
 */
static void
free_chain(Relation index, BlockNumber blkno, uint64 generation, BlockNumber *count)
{
	BlockNumber steps = 0;

	while (blkno != InvalidBlockNumber)
	{
		Buffer		buffer;
		BlockNumber next;

		simhash_chain_step(index, &steps, blkno);
		buffer = simhash_read_page(index, blkno, BUFFER_LOCK_SHARE, SIMHASH_PENDING,
								   generation, SIMHASH_READ_IF_OURS);
		if (!BufferIsValid(buffer))
			break;
		next = SimhashPageGetOpaque(BufferGetPage(buffer))->next;
		UnlockReleaseBuffer(buffer);
		free_page(index, blkno, count);
		blkno = next;
	}
}

/*
 * The items of a page of retired items (a palloc'd copy), or NULL if the
 * page is not one any more (recycled before a crash lost the metapage).
 */
static SimhashRetired *
read_retired_page(Relation index, BlockNumber blkno, int *n)
{
	Buffer		buffer = simhash_read_page(index, blkno, BUFFER_LOCK_SHARE,
										   SIMHASH_RETIRED_PAGE, 0, SIMHASH_READ_IF_OURS);
	Page		page;
	SimhashRetired *items;

	if (!BufferIsValid(buffer))
		return NULL;
	page = BufferGetPage(buffer);
	/* items of sizeof(SimhashRetired), not of 16 bytes (SimhashPageItems) */
	*n = sv_page_items(page, SIMHASH_RETIRED_PAGE);
	items = palloc(Max(*n, 1) * sizeof(SimhashRetired));
	memcpy(items, SimhashPageRetired(page), *n * sizeof(SimhashRetired));
	UnlockReleaseBuffer(buffer);
	for (int i = 0; i < *n; i++)
		if (!simhash_block_exists(index, items[i].head) ||
			!sv_retired_ok((SvRetired *) &items[i], MaxBlockNumber))
			simhash_report_corrupt(index, blkno, "A retired item is out of range.");
	return items;
}

static void
recycle_item(Relation index, const SimhashRetired *r, BlockNumber *freed,
			 BlockNumber *depth)
{
	if (r->kind == SIMHASH_RETIRED_RUN)
		simhash_visit_run_pages(index, r->head, r->generation, free_page, freed);
	else if (r->kind == SIMHASH_RETIRED_LIST)
		free_chain(index, r->head, r->generation, freed);
	else
	{
		int			n;
		SimhashRetired *items = read_retired_page(index, r->head, &n);

		if (items == NULL)
			return;				/* recycled before a crash lost the metapage */

		/* pages of items nest: a cycle would never end */
		check_stack_depth();
		simhash_chain_step(index, depth, r->head);
		for (int i = 0; i < n; i++)
			recycle_item(index, &items[i], freed, depth);
		pfree(items);
		free_page(index, r->head, freed);
	}
}

/*
 * Recycle retired runs and lists that no snapshot can see any more.  The
 * caller holds the heavyweight lock on the metapage (VACUUM, or a flush).
 */
BlockNumber
simhash_recycle(Relation index)
{
	Buffer		metabuf;
	SimhashMetaPageData meta;
	BlockNumber freed = 0;
	int			kept = 0;
	GenericXLogState *state;
	Page		page;

	simhash_read_meta(index, &meta);
	for (int i = 0; i < meta.nretired; i++)
	{
		SimhashRetired *r = &meta.retired[i];
		BlockNumber depth = 0;

		if (!GlobalVisCheckRemovableFullXid(NULL, r->xid))
		{
			meta.retired[kept++] = *r;
			continue;
		}
		recycle_item(index, r, &freed, &depth);
	}
	if (kept != meta.nretired)
	{
		metabuf = simhash_lock_meta(index, BUFFER_LOCK_EXCLUSIVE);
		state = GenericXLogStart(index);
		page = GenericXLogRegisterBuffer(state, metabuf, 0);
		/* only the holder of the heavyweight lock changes the retired list */
		memcpy(SimhashPageGetMeta(page)->retired, meta.retired, sizeof(meta.retired));
		SimhashPageGetMeta(page)->nretired = kept;
		GenericXLogFinish(state);
		UnlockReleaseBuffer(metabuf);
	}
	return freed;
}

/* generations (and pages of retired items) that are still referenced */
typedef struct LiveSet
{
	uint64	   *generations;
	int			ngenerations;
	BlockNumber *pages;
	int			npages;
	int			cap;
} LiveSet;

static void
live_add(LiveSet *live, uint64 generation, BlockNumber page)
{
	if (live->ngenerations >= live->cap || live->npages >= live->cap)
	{
		live->cap *= 2;
		live->generations = repalloc(live->generations, live->cap * sizeof(uint64));
		live->pages = repalloc(live->pages, live->cap * sizeof(BlockNumber));
	}
	if (page != InvalidBlockNumber)
		live->pages[live->npages++] = page;
	else
		live->generations[live->ngenerations++] = generation;
}

static void
live_add_retired(Relation index, LiveSet *live, const SimhashRetired *r,
				 BlockNumber *depth)
{
	if (r->kind == SIMHASH_RETIRED_MORE)
	{
		int			n;
		SimhashRetired *items = read_retired_page(index, r->head, &n);

		if (items == NULL)
			return;				/* recycled already */
		check_stack_depth();
		simhash_chain_step(index, depth, r->head);
		live_add(live, 0, r->head);
		for (int i = 0; i < n; i++)
			live_add_retired(index, live, &items[i], depth);
		pfree(items);
	}
	else
		live_add(live, r->generation, InvalidBlockNumber);
}

/*
 * Give the free space map every free page again (it is not crash-safe), and
 * recycle pages that no run, list or retired item references: those of a
 * run being written when the server crashed.  Pages of a generation newer
 * than the metapage we read belong to lists created since, and are kept.
 */
static void
reclaim_pages(Relation index, BufferAccessStrategy strategy)
{
	SimhashMetaPageData meta;
	LiveSet		live;
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	BlockNumber freed = 0;

	simhash_read_meta(index, &meta);
	live.cap = 64;
	live.generations = palloc(live.cap * sizeof(uint64));
	live.pages = palloc(live.cap * sizeof(BlockNumber));
	live.ngenerations = live.npages = 0;
	for (int i = 0; i < meta.nruns; i++)
		live_add(&live, meta.runs[i].generation, InvalidBlockNumber);
	live_add(&live, meta.pending.generation, InvalidBlockNumber);
	live_add(&live, meta.flushing.generation, InvalidBlockNumber);
	live_add(&live, meta.nulls.generation, InvalidBlockNumber);
	for (int i = 0; i < meta.nretired; i++)
	{
		BlockNumber depth = 0;

		live_add_retired(index, &live, &meta.retired[i], &depth);
	}

	for (BlockNumber blkno = SIMHASH_METAPAGE_BLKNO + 1; blkno < nblocks; blkno++)
	{
		Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);
		Page		page;
		SimhashPageOpaque opaque;
		bool		referenced = false;
		bool		is_free;

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buffer);
		opaque = SimhashPageGetOpaque(page);
		is_free = PageIsNew(page) ||
			(opaque->page_id == SIMHASH_PAGE_ID && opaque->kind == SIMHASH_FREE);
		if (!is_free && opaque->page_id == SIMHASH_PAGE_ID)
		{
			if (opaque->kind == SIMHASH_RETIRED_PAGE)
			{
				for (int i = 0; i < live.npages && !referenced; i++)
					referenced = (live.pages[i] == blkno);
			}
			else if (opaque->kind == SIMHASH_META || opaque->generation >= meta.next_generation)
				referenced = true;
			else
			{
				for (int i = 0; i < live.ngenerations && !referenced; i++)
					referenced = (live.generations[i] == opaque->generation);
			}
		}
		else if (!is_free)
			referenced = true;	/* not ours to judge */
		UnlockReleaseBuffer(buffer);

		if (is_free)
			RecordFreeIndexPage(index, blkno);
		else if (!referenced)
			free_page(index, blkno, &freed);
		vacuum_delay_point();
	}
	pfree(live.generations);
	pfree(live.pages);
}

IndexBulkDeleteResult *
simhash_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	Relation	index = info->index;
	SimhashMetaPageData meta;

	if (info->analyze_only)
		return stats;
	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));

	/* no flush, merge or marking meanwhile */
	LockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
	(void) simhash_recycle(index);
	reclaim_pages(index, info->strategy);
	UnlockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
	simhash_flush_and_merge(index, true, false, SIMHASH_VACUUM_DEAD_FRACTION);
	IndexFreeSpaceMapVacuum(index);

	simhash_read_meta(index, &meta);
	stats->num_index_tuples = meta.pending.nentries + meta.flushing.nentries +
		meta.nulls.nentries;
	for (int i = 0; i < meta.nruns; i++)
		stats->num_index_tuples += meta.runs[i].nentries;
	stats->num_pages = RelationGetNumberOfBlocks(index);
	stats->pages_free = 0;		/* in the free space map; not counted here */
	stats->estimated_count = false;
	return stats;
}
