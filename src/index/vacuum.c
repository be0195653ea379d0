/*
 * vacuum.c
 *		VACUUM for the simhash index (design: am.h): mark the entries of dead
 *		heap tuples (in table 0's tree of every run, the one holding dead
 *		bits, and in the pending lists),
 *		recycle pages of replaced runs and lists once no snapshot can read
 *		them (recycle.c), give orphaned pages back, flush the pending list
 *		and rewrite runs that have many dead entries (policy.c).  Every page
 *		is read through VACUUM's buffer access strategy, as PostgreSQL's own
 *		indexes do.
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "catalog/storage.h"
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

/* free pages at the end of the index worth a truncation (or 1/16 of it) */
#define SIMHASH_TRUNCATE_MIN 1000

/*
 * Which entries are dead: VACUUM's callback, asked once per entry of table
 * 0's tree of a run (the only tree with dead bits, format 2) and of the
 * lists; the dead TIDs are kept in a set (their number is the run's ndead).
 */
typedef struct DeadMarker
{
	IndexBulkDeleteCallback callback;
	void	   *callback_state;
	bool		collect;		/* ask the callback, and remember dead TIDs */
	SimhashTidSet tids;			/* when !collect: the dead TIDs, sorted */
} DeadMarker;

/* Is the heap tuple at tid dead? */
static bool
is_dead(DeadMarker *d, ItemPointer tid)
{
	if (!d->collect)
		return simhash_tidset_contains(&d->tids, tid);
	if (!d->callback(tid, d->callback_state))
		return false;
	simhash_tidset_add(&d->tids, tid, 0);
	return true;
}

/*
 * Mark the dead entries of a page (locked exclusively): a leaf of table 0
 * (dead bits, format 2) or a list page (flags); returns how many.
 */
static int
mark_page(Relation index, Buffer buffer, DeadMarker *marker, double *live,
		  SimhashEntry *decoded)
{
	Page		page = BufferGetPage(buffer);
	bool		leaf = (SimhashPageGetOpaque(page)->kind == SIMHASH_LEAF);
	SimhashEntry *entries;
	int			n,
				ndead = 0;
	bool	   *dead;

	if (leaf)
	{
		n = simhash_leaf_decode(index, buffer, NULL, decoded);
		entries = decoded;
	}
	else
	{
		n = SimhashPageItems(page);
		entries = SimhashPageEntries(page);
	}
	dead = palloc0(Max(n, 1) * sizeof(bool));
	for (int i = 0; i < n; i++)
	{
		if (entries[i].flags & SIMHASH_ENTRY_DEAD)
		{
			/* marked before, maybe by a VACUUM that crashed half-way */
			if (marker->collect)
				simhash_tidset_add(&marker->tids, &entries[i].tid, 0);
			continue;
		}
		if (is_dead(marker, &entries[i].tid))
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
			{
				if (leaf)
					sv_leaf_set_dead(PageGetContents(page), i);
				else
					entries[i].flags |= SIMHASH_ENTRY_DEAD;
			}
		GenericXLogFinish(state);
	}
	pfree(dead);
	return ndead;
}

/* Mark the dead entries of a chain of leaves or list pages. */
static uint64
mark_chain(Relation index, BlockNumber first, uint16 kind, uint64 generation,
		   DeadMarker *marker, double *live, BufferAccessStrategy strategy)
{
	SimhashChain chain;
	Buffer		buffer;
	uint64		ndead = 0;

	SimhashEntry *decoded = NULL;

	if (kind == SIMHASH_LEAF)
		decoded = palloc(SV_LEAF_MAX_ENTRIES * sizeof(SimhashEntry));
	simhash_chain_begin(&chain, index, first, kind, generation,
						BUFFER_LOCK_EXCLUSIVE, 0, strategy);
	while (BufferIsValid(buffer = simhash_chain_next(&chain)))
	{
		ndead += mark_page(index, buffer, marker, live, decoded);
		UnlockReleaseBuffer(buffer);
		vacuum_delay_point();
	}
	if (decoded)
		pfree(decoded);
	return ndead;
}

/* Record in the run's header how many of its entries are marked dead. */
static void
set_run_dead(Relation index, const SimhashRunRef *run, uint64 ndead,
			 BufferAccessStrategy strategy)
{
	Buffer		buffer = simhash_read_page(index, run->header, BUFFER_LOCK_EXCLUSIVE,
										   SIMHASH_RUN_HEADER, run->generation, 0,
										   strategy);
	GenericXLogState *state;
	Page		page;

	state = GenericXLogStart(index);
	page = GenericXLogRegisterBuffer(state, buffer, 0);
	SimhashPageRunHeader(page)->ndead = ndead;
	GenericXLogFinish(state);
	UnlockReleaseBuffer(buffer);
}

/* ambulkdelete: mark the entries of dead heap tuples dead (table 0 and lists). */
IndexBulkDeleteResult *
simhash_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				   IndexBulkDeleteCallback callback, void *callback_state)
{
	Relation	index = info->index;
	BufferAccessStrategy strategy = info->strategy;
	SimhashMetaPageData meta;
	double		live = 0;
	DeadMarker	marker;

	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
	memset(&marker, 0, sizeof(marker));
	marker.callback = callback;
	marker.callback_state = callback_state;

	/* no flush or merge may copy entries while we mark them */
	LockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
	simhash_read_meta(index, &meta);
	for (int i = 0; i < meta.nruns; i++)
	{
		const SimhashRunRef *run = &meta.runs[i];
		SimhashRunHeader *header = simhash_read_run_header(index, run->header,
														   run->generation, strategy);
		uint64		ndead = 0;

		/* the dead bits are in table 0's tree only (format 2) */
		marker.collect = true;
		ndead = mark_chain(index,
						   simhash_leftmost_leaf(index, &header->trees[0],
												 run->generation, strategy),
						   SIMHASH_LEAF, run->generation, &marker, &live, strategy);
		/* all dead entries of the first tree: marked now or before */
		if (ndead > 0)
			set_run_dead(index, run, marker.tids.n, strategy);
		simhash_tidset_free(&marker.tids);
		pfree(header);
		stats->tuples_removed += ndead;
	}
	marker.collect = true;
	stats->tuples_removed += mark_chain(index, meta.flushing.head, SIMHASH_PENDING,
										meta.flushing.generation, &marker, &live, strategy);
	stats->tuples_removed += mark_chain(index, meta.pending.head, SIMHASH_PENDING,
										meta.pending.generation, &marker, &live, strategy);
	stats->tuples_removed += mark_chain(index, meta.nulls.head, SIMHASH_PENDING,
										meta.nulls.generation, &marker, &live, strategy);
	simhash_tidset_free(&marker.tids);
	UnlockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);

	stats->num_index_tuples = live;
	stats->estimated_count = false;
	return stats;
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

/* Add a live generation, or (page valid) a live page of retired items. */
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

/* Add what a retired item keeps referenced (its pages of items, nested). */
static void
live_add_retired(Relation index, LiveSet *live, const SimhashRetired *r,
				 BlockNumber *depth, BufferAccessStrategy strategy)
{
	if (r->kind == SIMHASH_RETIRED_MORE)
	{
		int			n;
		SimhashRetired *items = simhash_read_retired_page(index, r->head, &n, strategy);

		if (items == NULL)
			return;				/* recycled already */
		check_stack_depth();
		simhash_chain_step(index, depth, r->head);
		live_add(live, 0, r->head);
		for (int i = 0; i < n; i++)
			live_add_retired(index, live, &items[i], depth, strategy);
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

		live_add_retired(index, &live, &meta.retired[i], &depth, strategy);
	}

	for (BlockNumber blkno = SIMHASH_METAPAGE_BLKNO + 1; blkno < nblocks; blkno++)
	{
		Buffer		buffer = simhash_lock_block(index, blkno, BUFFER_LOCK_SHARE, strategy);
		Page		page;
		SimhashPageOpaque opaque;
		bool		referenced = false;
		bool		is_free;

		page = BufferGetPage(buffer);
		opaque = SimhashPageGetOpaque(page);
		is_free = simhash_page_is_free(page);
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
			simhash_free_page(index, blkno, strategy);
		vacuum_delay_point();
	}
	pfree(live.generations);
	pfree(live.pages);
}

/* The number of blocks left once the free pages at the end are cut off. */
static BlockNumber
without_free_tail(Relation index, BlockNumber nblocks, BufferAccessStrategy strategy)
{
	BlockNumber keep;

	for (keep = nblocks; keep > SIMHASH_METAPAGE_BLKNO + 1; keep--)
	{
		Buffer		buffer = simhash_lock_block(index, keep - 1, BUFFER_LOCK_SHARE, strategy);
		bool		is_free = simhash_page_is_free(BufferGetPage(buffer));

		UnlockReleaseBuffer(buffer);
		if (!is_free)
			break;
		vacuum_delay_point();
	}
	return keep;
}

/*
 * Give the free pages at the end of the index back to the file system,
 * where that is safe and worth it.  Safe: under an AccessExclusiveLock on
 * the index, taken without waiting (as VACUUM truncates a table), so that
 * no backend reads or allocates pages meanwhile.  Worth it: the lock is
 * WAL-logged and conflicts with every standby query using the index, so it
 * is taken only when a first look, without it, finds at least
 * SIMHASH_TRUNCATE_MIN free pages at the end (or a sixteenth of the index).
 * Not during a parallel VACUUM (no xid may be assigned there).  Free pages
 * inside the index stay in the free space map for reuse.
 */
static void
truncate_free_tail(Relation index, BufferAccessStrategy strategy)
{
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	BlockNumber keep = without_free_tail(index, nblocks, strategy);

	if (nblocks - keep < Min(SIMHASH_TRUNCATE_MIN, Max(nblocks / 16, 1)))
		return;
	/* the lock's WAL record needs an xid: none in a parallel VACUUM */
	if (IsInParallelMode())
		return;
	if (!ConditionalLockRelation(index, AccessExclusiveLock))
		return;
	nblocks = RelationGetNumberOfBlocks(index);
	keep = without_free_tail(index, nblocks, strategy);
	if (keep < nblocks)
		RelationTruncate(index, keep);
	UnlockRelation(index, AccessExclusiveLock);
}

/*
 * amvacuumcleanup: recycle what no snapshot sees any more, find orphaned
 * pages, flush the pending list and rewrite runs with many dead entries.
 */
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
	(void) simhash_recycle(index, info->strategy);
	reclaim_pages(index, info->strategy);
	UnlockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
	/* the merge below takes its pages from the map: searches start at the top */
	IndexFreeSpaceMapVacuum(index);
	simhash_flush_and_merge(index, true, false, SIMHASH_VACUUM_DEAD_FRACTION);
	truncate_free_tail(index, info->strategy);
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
