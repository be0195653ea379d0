/*
 * vacuum.c
 *		VACUUM for the simhash index (design: README.md): mark the entries of dead
 *		heap tuples (in table 0's tree of every run, the one holding dead
 *		bits, and in the pending lists),
 *		recycle pages of replaced runs and lists once no snapshot can read
 *		them (recycle.c), give orphaned pages back, flush the pending list
 *		and rewrite runs that have many dead entries (policy.c).  Every page
 *		is read through VACUUM's buffer access strategy, as PostgreSQL's own
 *		indexes do.
 */
#include "postgres.h"

#include <math.h>

#include "access/transam.h"
#include "access/xact.h"
#include "catalog/storage.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "postmaster/autovacuum.h"
#include "storage/freespace.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "am.h"
#include "core/index_pages.h"
#include "simhash.h"

/* a run is rewritten by VACUUM when this share of its entries is dead */
#define SIMHASH_VACUUM_DEAD_FRACTION 0.1

/* free pages at the end of the index worth a truncation (or 1/16 of it) */
#define SIMHASH_TRUNCATE_MIN 1000

/*
 * VACUUM compacts the index when it is larger than this many times what
 * its live entries take in one run, and SIMHASH_COMPACT_MIN pages more
 * (compact_index())
 */
#define SIMHASH_COMPACT_SLACK 1.15
#define SIMHASH_COMPACT_MIN 16

/*
 * Which entries are dead: VACUUM's callback, asked once per entry of table
 * 0's tree of a run (the only tree with dead bits, format 2; in TID order,
 * mark_tree_in_tid_order()) and of the lists.  The dead entries of the
 * first tree are counted (marked now or before: the run's ndead); their
 * TIDs are kept in a set only for a format-1 run, whose other trees have
 * dead flags of their own and are marked by membership.  A format-2 run
 * keeps no set, so VACUUM needs no memory per dead entry beyond
 * PostgreSQL's own dead-TID store.
 */
typedef struct DeadMarker
{
	IndexBulkDeleteCallback callback;
	void	   *callback_state;
	bool		collect;		/* ask the callback (else look in tids) */
	bool		remember;		/* when collect: add the dead TIDs to tids */
	uint64		nseen;			/* when collect: dead entries, old and new */
	SimhashTidSet tids;			/* when !collect: the dead TIDs, sorted */
} DeadMarker;

/* Count a dead entry found while collecting (and remember its TID). */
static void
note_dead(DeadMarker *d, ItemPointer tid)
{
	d->nseen++;
	if (d->remember)
		simhash_tidset_add(&d->tids, tid, 0);
}

/* Is the heap tuple at tid dead? */
static bool
is_dead(DeadMarker *d, ItemPointer tid)
{
	if (!d->collect)
		return simhash_tidset_contains(&d->tids, tid);
	if (!d->callback(tid, d->callback_state))
		return false;
	note_dead(d, tid);
	return true;
}

/*
 * Mark the dead entries of a page (locked exclusively): a leaf of table 0
 * (dead bits, format 2: decoded into decoded), or a list page or format-1
 * leaf (flags; decoded NULL); returns how many.
 */
static int
mark_page(Relation index, Buffer buffer, DeadMarker *marker, double *live,
		  SimhashEntry *decoded)
{
	Page		page = BufferGetPage(buffer);
	bool		leaf = (decoded != NULL);
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
				note_dead(marker, &entries[i].tid);
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

/*
 * Mark the dead entries of a chain of leaves (kind SIMHASH_LEAF or
 * SIMHASH_FORMAT1_LEAF) or list pages.
 */
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
		simhash_vacuum_delay_point();
	}
	if (decoded)
		pfree(decoded);
	return ndead;
}

/*
 * Table 0's tree of a format-2 run is marked in TID order.  VACUUM's
 * callback searches PostgreSQL's store of dead TIDs (a sorted array up to
 * PostgreSQL 16, a radix tree from 17); asked in the tree's hash order,
 * every question lands somewhere else in a store that outgrows the
 * processor's caches on a large table.  So the leaves are read in batches
 * (their entries' TIDs and positions, within the VACUUM's memory setting
 * and 64 MB), each batch's TIDs are sorted and asked in order, and the dead
 * bits are then set leaf by leaf.  The leaves do not move meanwhile: the caller holds the
 * metapage's lock, which every flush and merge takes, and only VACUUM sets
 * dead bits.
 */

/* bytes of memory per entry of a batch: key, position and the sort's copies */
#define MARK_BATCH_BYTES_PER_ENTRY (2 * (sizeof(uint64) + sizeof(uint32)))

/*
 * A batch's memory, at most (and at most the VACUUM's memory setting, which
 * PostgreSQL's store of dead TIDs may fill beside it): 2.8M entries.  A
 * larger batch gains nothing: the TIDs asked one after the other are
 * already a few dead TIDs apart in the store, on the same cache lines.
 */
#define MARK_BATCH_MAX_BYTES ((size_t) 64 * 1024 * 1024)

/*
 * The memory setting of this VACUUM in kB, as PostgreSQL sizes its store of
 * dead TIDs: autovacuum_work_mem in an autovacuum worker when it is set,
 * else maintenance_work_mem.
 */
static int
vacuum_work_mem(void)
{
	if (AmAutoVacuumWorkerProcess() && autovacuum_work_mem != -1)
		return autovacuum_work_mem;
	return maintenance_work_mem;
}

typedef struct MarkLeaf
{
	BlockNumber blkno;
	uint32		first;			/* the batch position of its entry 0 */
	uint32		count;
} MarkLeaf;

typedef struct MarkBatch
{
	Relation	index;
	uint64		generation;		/* the run's */
	BufferAccessStrategy strategy;
	size_t		cap;			/* entries */
	uint64	   *keys;			/* TIDs, simhash_tid_code() << 16: the sort's top bits */
	uint32	   *positions;		/* of each key, in the batch's leaves */
	uint64	   *tmpkeys;
	uint32	   *tmppositions;
	size_t		n;				/* keys */
	uint32		npositions;		/* entries of the leaves read */
	MarkLeaf   *leaves;
	int			nleaves;
	int			capleaves;
} MarkBatch;

/* Set the dead bits of positions[0 .. n-1] (ascending) of the batch's leaves. */
static void
set_dead_bits(MarkBatch *b, const uint32 *positions, size_t n)
{
	size_t		k = 0;

	for (int l = 0; l < b->nleaves && k < n; l++)
	{
		const MarkLeaf *leaf = &b->leaves[l];
		Buffer		buffer;
		GenericXLogState *state;
		Page		page;
		SvLeaf		opened;

		if (positions[k] >= leaf->first + leaf->count)
			continue;
		buffer = simhash_read_page(b->index, leaf->blkno, BUFFER_LOCK_EXCLUSIVE,
								   SIMHASH_LEAF, b->generation, 0, b->strategy);
		sv_leaf_open(PageGetContents(BufferGetPage(buffer)), &opened);
		if (opened.count != leaf->count)
			simhash_report_corrupt(b->index, leaf->blkno, "leaf changed during VACUUM");
		state = GenericXLogStart(b->index);
		page = GenericXLogRegisterBuffer(state, buffer, 0);
		for (; k < n && positions[k] < leaf->first + leaf->count; k++)
			sv_leaf_set_dead(PageGetContents(page), (int) (positions[k] - leaf->first));
		GenericXLogFinish(state);
		UnlockReleaseBuffer(buffer);
		/* some of the run's dead entries are marked, its header not yet */
		simhash_test_hold_phase(SIMHASH_HOLD_VACUUM_MARKED);
		simhash_vacuum_delay_point();
	}
}

/*
 * Ask the callback about the batch's TIDs in TID order, set the dead bits
 * of the dead ones and empty the batch; returns how many were dead.
 */
static uint64
mark_batch(MarkBatch *b, DeadMarker *marker, double *live)
{
	size_t		ndead = 0;

	if (b->n > 0)
	{
		simhash_radix_sort(b->keys, b->positions, b->n, b->tmpkeys, b->tmppositions, 48);
		for (size_t i = 0; i < b->n; i++)
		{
			ItemPointerData tid;

			if ((i & 0xFFFF) == 0)
				CHECK_FOR_INTERRUPTS();
			simhash_tid_decode(b->keys[i] >> 16, &tid);
			if (marker->callback(&tid, marker->callback_state))
				b->tmpkeys[ndead++] = (uint64) b->positions[i] << 32;
			else
				*live += 1;
		}
		/* the dead ones' positions, in leaf order */
		if (ndead > 1)
			simhash_radix_sort(b->tmpkeys, NULL, ndead, b->keys, NULL, 32);
		for (size_t i = 0; i < ndead; i++)
			b->positions[i] = (uint32) (b->tmpkeys[i] >> 32);
		set_dead_bits(b, b->positions, ndead);
	}
	marker->nseen += ndead;
	b->n = 0;
	b->npositions = 0;
	b->nleaves = 0;
	return ndead;
}

/* Add a leaf of table 0 (locked) to the batch: its live entries' TIDs. */
static void
batch_add_leaf(MarkBatch *b, Buffer buffer, SimhashEntry *decoded, DeadMarker *marker)
{
	int			n = simhash_leaf_decode(b->index, buffer, NULL, decoded);
	MarkLeaf   *leaf;

	if (b->nleaves >= b->capleaves)
	{
		b->capleaves *= 2;
		b->leaves = repalloc(b->leaves, b->capleaves * sizeof(MarkLeaf));
	}
	leaf = &b->leaves[b->nleaves++];
	leaf->blkno = BufferGetBlockNumber(buffer);
	leaf->first = b->npositions;
	leaf->count = n;
	for (int i = 0; i < n; i++)
	{
		if (decoded[i].flags & SIMHASH_ENTRY_DEAD)
		{
			/* marked before, maybe by a VACUUM that crashed half-way */
			marker->nseen++;
			continue;
		}
		b->keys[b->n] = simhash_tid_code(&decoded[i].tid) << 16;
		b->positions[b->n] = b->npositions + i;
		b->n++;
	}
	b->npositions += n;
}

/*
 * Mark the dead entries of table 0's tree of a format-2 run (whose leftmost
 * leaf is first), in TID order; returns how many it marked now, and counts
 * all its dead entries in marker->nseen.
 */
static uint64
mark_tree_in_tid_order(Relation index, BlockNumber first, uint64 nentries,
					   uint64 generation, DeadMarker *marker, double *live,
					   BufferAccessStrategy strategy)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "simhash VACUUM batch",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	MarkBatch	b;
	SimhashChain chain;
	Buffer		buffer;
	SimhashEntry *decoded = palloc(SV_LEAF_MAX_ENTRIES * sizeof(SimhashEntry));
	uint64		ndead = 0;
	size_t		cap = Min((size_t) vacuum_work_mem() * 1024, MARK_BATCH_MAX_BYTES) /
		MARK_BATCH_BYTES_PER_ENTRY;
	int			nbatches = 0;

	memset(&b, 0, sizeof(b));
	b.index = index;
	b.generation = generation;
	b.strategy = strategy;
	/* at least two leaves' worth, at most the run (and a radix sort's limit) */
	cap = Max(cap, 2 * SV_LEAF_MAX_ENTRIES);
	cap = Min(cap, Max(nentries, SV_LEAF_MAX_ENTRIES));
	cap = Min(cap, (size_t) PG_UINT32_MAX - SV_LEAF_MAX_ENTRIES);
	b.cap = cap;
	b.keys = MemoryContextAllocHuge(cxt, cap * sizeof(uint64));
	b.tmpkeys = MemoryContextAllocHuge(cxt, cap * sizeof(uint64));
	b.positions = MemoryContextAllocHuge(cxt, cap * sizeof(uint32));
	b.tmppositions = MemoryContextAllocHuge(cxt, cap * sizeof(uint32));
	b.capleaves = 64;
	b.leaves = palloc(b.capleaves * sizeof(MarkLeaf));

	simhash_chain_begin(&chain, index, first, SIMHASH_LEAF, generation,
						BUFFER_LOCK_SHARE, 0, strategy);
	while (BufferIsValid(buffer = simhash_chain_next(&chain)))
	{
		/* a leaf holds at most SV_LEAF_MAX_ENTRIES entries */
		if (b.n + SV_LEAF_MAX_ENTRIES > b.cap)
		{
			LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
			ndead += mark_batch(&b, marker, live);
			nbatches++;
			LockBuffer(buffer, BUFFER_LOCK_SHARE);
		}
		batch_add_leaf(&b, buffer, decoded, marker);
		UnlockReleaseBuffer(buffer);
		simhash_vacuum_delay_point();
	}
	ndead += mark_batch(&b, marker, live);
	nbatches++;
	elog(DEBUG2, "simhash index \"%s\": " UINT64_FORMAT " entries of a run asked in %d batches of at most %zu",
		 RelationGetRelationName(index), nentries, nbatches, cap);

	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
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

		BlockNumber leftmost = simhash_leftmost_leaf(index, &header->trees[0],
												 run->generation, strategy);

		/* the dead bits are in table 0's tree only (format 2) */
		marker.collect = true;
		marker.remember = simhash_run_is_format1(run);
		marker.nseen = 0;
		if (simhash_run_is_format1(run))
			ndead = mark_chain(index, leftmost, SIMHASH_FORMAT1_LEAF, run->generation,
							   &marker, &live, strategy);
		else
			ndead = mark_tree_in_tid_order(index, leftmost, header->nentries,
										   run->generation, &marker, &live, strategy);
		/* format 1 (format1.c): each tree has its flags; table 0's dead TIDs */
		if (simhash_run_is_format1(run))
		{
			double		ignored = 0;

			simhash_tidset_sort(&marker.tids);
			marker.collect = false;
			for (uint32 t = 1; t < header->ntables; t++)
				(void) mark_chain(index,
								  simhash_leftmost_leaf(index, &header->trees[t],
														run->generation, strategy),
								  SIMHASH_FORMAT1_LEAF, run->generation, &marker,
								  &ignored, strategy);
		}
		/* all dead entries of the first tree: marked now or before */
		if (ndead > 0)
			set_run_dead(index, run, marker.nseen, strategy);
		simhash_tidset_free(&marker.tids);
		pfree(header);
		stats->tuples_removed += ndead;
	}
	marker.collect = true;
	marker.remember = false;
	for (int i = 0; i < meta.nlanes; i++)
	{
		stats->tuples_removed += mark_chain(index, meta.flushing[i].head, SIMHASH_PENDING,
											meta.flushing[i].generation, &marker, &live,
											strategy);
		stats->tuples_removed += mark_chain(index, meta.pending[i].head, SIMHASH_PENDING,
											meta.pending[i].generation, &marker, &live,
											strategy);
	}
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
	for (int i = 0; i < meta.nlanes; i++)
	{
		live_add(&live, meta.pending[i].generation, InvalidBlockNumber);
		live_add(&live, meta.flushing[i].generation, InvalidBlockNumber);
	}
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
			simhash_give_free_page(index, blkno);
		else if (!referenced)
			simhash_free_page(index, blkno, strategy);
		simhash_vacuum_delay_point();
	}
	pfree(live.generations);
	pfree(live.pages);
}

/*
 * Give the free pages at the end of the index back to the file system,
 * where that is safe and worth it.  Worth it: a first look, without a lock,
 * finds at least SIMHASH_TRUNCATE_MIN free pages at the end (or a
 * sixteenth of the index).  Safe: the truncated pages are free, so only a
 * backend that allocates pages or reads every block could touch them;
 * allocating backends insert (they hold RowExclusiveLock on the index, so
 * an ExclusiveLock taken without waiting keeps them out) or flush and
 * merge (as simhash_index_check() reads, under the heavyweight lock on the
 * metapage's block, which we hold meanwhile).  Scans read only pages that
 * runs and lists reference, or that retired ones did and that no snapshot
 * can read any more (on a standby: the recycling horizon of recycle.c
 * cancelled those queries before the pages were freed), never a free page.
 * So neither an AccessExclusiveLock (which is WAL-logged, would cancel
 * every standby query using the index, and needs an xid, which a parallel
 * VACUUM cannot assign; PostgreSQL runs VACUUM of a table with two indexes
 * or more in parallel by default) nor waiting is needed.  Free pages inside
 * the index stay in the free space map for reuse.
 */
static void
truncate_free_tail(Relation index, BufferAccessStrategy strategy)
{
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	BlockNumber keep = simhash_without_free_tail(index, nblocks, strategy);

	if (nblocks - keep < Min(SIMHASH_TRUNCATE_MIN, Max(nblocks / 16, 1)))
		return;
	if (!ConditionalLockRelation(index, ExclusiveLock))
		return;
	LockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
	nblocks = RelationGetNumberOfBlocks(index);
	keep = simhash_without_free_tail(index, nblocks, strategy);
	if (keep < nblocks)
		RelationTruncate(index, keep);
	UnlockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
	UnlockRelation(index, ExclusiveLock);
}

/* The number of pages the free space map records as free. */
static BlockNumber
count_free_pages(Relation index, BlockNumber below)
{
	BlockNumber nfree = 0;

	for (BlockNumber blkno = SIMHASH_METAPAGE_BLKNO + 1; blkno < below; blkno++)
		if (GetRecordedFreeSpace(index, blkno) >= BLCKSZ / 2)
			nfree++;
	return nfree;
}

/* Recycle early what VACUUM's merges replaced; update the map's upper levels. */
static void
recycle_now(Relation index, BufferAccessStrategy strategy)
{
	LockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
	(void) simhash_recycle_early(index, strategy);
	UnlockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
	IndexFreeSpaceMapVacuum(index);
}

/*
 * The pages the index would take with its runs and pending entries merged
 * into one run: its live entries at the density of its largest run (pages
 * per entry, whatever the leaf format), the nulls list as it is, and the
 * metapage.
 */
static BlockNumber
compacted_size(Relation index, BufferAccessStrategy strategy, BlockNumber *list_pages)
{
	SimhashMetaPageData meta;
	double		live;
	double		pages_per_entry;
	uint64		largest = 0;
	bool		exact;

	simhash_read_meta(index, &meta);
	/* the lanes' entries (tail pages not counted: an estimate) */
	live = (double) (simhash_unsorted_nentries(&meta, &exact) - meta.nulls.nentries);
	pages_per_entry = (double) meta.ntables / SIMHASH_PAGE_ITEMS;
	for (int i = 0; i < meta.nruns; i++)
	{
		SimhashRunHeader *h = simhash_read_run_header(index, meta.runs[i].header,
													  meta.runs[i].generation, strategy);

		live += (double) h->nentries - (double) Min(h->ndead, h->nentries);
		if (h->nentries > largest)
		{
			largest = h->nentries;
			pages_per_entry = (double) h->npages / (double) h->nentries;
		}
		pfree(h);
	}
	*list_pages = (meta.nulls.nentries + SIMHASH_PAGE_ITEMS - 1) / SIMHASH_PAGE_ITEMS;
	return SIMHASH_METAPAGE_BLKNO + 1 + *list_pages + (BlockNumber) ceil(live * pages_per_entry);
}

/*
 * Compaction: when the file, not counting the free
 * pages at its end, is more than SIMHASH_COMPACT_SLACK times what its live
 * entries would take as one run (compacted_size(): free pages, dead
 * entries, several runs, pending entries), rewrite every run and the
 * pending list as one run in the lowest pages, so that the rest of the
 * file is free at its end for truncate_free_tail().  If the free pages
 * below the goal (the compacted size and a tenth) cannot take the run, a
 * first rewrite moves everything above the goal (allocation floor,
 * alloc.c) and a second one back below it.  Each rewrite is an ordinary
 * merge (WAL-logged, crash-safe, concurrent scans keep reading the runs
 * they copied from the metapage), and what it replaces is recycled at once
 * only when no snapshot could still read it (simhash_recycle_early());
 * with an older snapshot, nothing is done.
 */
static void
compact_index(Relation index, BufferAccessStrategy strategy)
{
	BlockNumber nblocks;
	BlockNumber compacted;
	BlockNumber list_pages;
	BlockNumber goal;

	recycle_now(index, strategy);
	/* the free pages at the end need only a truncation */
	nblocks = simhash_without_free_tail(index, RelationGetNumberOfBlocks(index), strategy);
	compacted = compacted_size(index, strategy, &list_pages);
	if ((double) nblocks <= SIMHASH_COMPACT_SLACK * compacted + SIMHASH_COMPACT_MIN)
		return;
	/* what the rewrites replace could not be recycled now: it would only grow */
	if (!simhash_no_snapshot_before(ReadNextFullTransactionId()))
		return;
	goal = compacted + compacted / 10;
	if (count_free_pages(index, Min(goal, nblocks)) < compacted - list_pages - 1)
	{
		simhash_alloc_restart(index, goal);
		simhash_flush_and_merge(index, true, true, SIMHASH_VACUUM_DEAD_FRACTION);
		recycle_now(index, strategy);
	}
	simhash_alloc_restart(index, SIMHASH_METAPAGE_BLKNO + 1);
	simhash_flush_and_merge(index, true, true, SIMHASH_VACUUM_DEAD_FRACTION);
	recycle_now(index, strategy);
}

/*
 * amvacuumcleanup: recycle what no snapshot sees any more, find orphaned
 * pages, flush the pending lanes and rewrite runs with many dead entries.
 */
IndexBulkDeleteResult *
simhash_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	Relation	index = info->index;
	SimhashMetaPageData meta;
	bool		exact;

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
	compact_index(index, info->strategy);
	truncate_free_tail(index, info->strategy);
	IndexFreeSpaceMapVacuum(index);

	simhash_read_meta(index, &meta);
	stats->num_index_tuples = simhash_unsorted_nentries(&meta, &exact);
	for (int i = 0; i < meta.nruns; i++)
		stats->num_index_tuples += meta.runs[i].nentries;
	stats->num_pages = RelationGetNumberOfBlocks(index);
	stats->pages_free = 0;		/* in the free space map; not counted here */
	/* the lanes' tail pages (appended to meanwhile) are not counted */
	stats->estimated_count = !exact;
	return stats;
}
