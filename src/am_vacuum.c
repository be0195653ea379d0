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
	Buffer		buffer = ReadBuffer(index, blkno);
	Page		page;
	SimhashEntry *entries;
	int			n,
				ndead = 0;
	bool	   *dead;

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	page = BufferGetPage(buffer);
	simhash_check_page(index, page, blkno, kind, generation);
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

	while (blkno != InvalidBlockNumber)
	{
		ndead += mark_page(index, blkno, kind, generation, deadset, live, &blkno);
		vacuum_delay_point();
	}
	return ndead;
}

/* The leftmost leaf of tree t of a run, and the run's table count. */
static BlockNumber
tree_leftmost(Relation index, const SimhashRunRef *run, int t, int *ntables)
{
	Buffer		buffer = ReadBuffer(index, run->header);
	Page		page;
	SimhashRunTree tree;
	BlockNumber blkno;

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buffer);
	simhash_check_page(index, page, run->header, SIMHASH_RUN_HEADER, run->generation);
	tree = SimhashPageRunHeader(page)->trees[t];
	*ntables = SimhashPageRunHeader(page)->ntables;
	UnlockReleaseBuffer(buffer);

	blkno = tree.root;
	for (int level = tree.height; level > 0; level--)
	{
		buffer = ReadBuffer(index, blkno);
		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buffer);
		simhash_check_page(index, page, blkno, SIMHASH_INNER, run->generation);
		blkno = SimhashPageInner(page)[0].child;
		UnlockReleaseBuffer(buffer);
	}
	return blkno;
}

static void
add_run_dead(Relation index, const SimhashRunRef *run, uint64 ndead)
{
	Buffer		buffer = ReadBuffer(index, run->header);
	GenericXLogState *state;
	Page		page;

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	page = GenericXLogRegisterBuffer(state, buffer, 0);
	SimhashPageRunHeader(page)->ndead += ndead;
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
		int			ntables = 1;
		uint64		ndead = 0;
		DeadSet		deadset = {callback, callback_state, true, NULL, 0, 0};

		for (int t = 0; t < ntables; t++)
		{
			double		ignored = 0;
			BlockNumber leaf = tree_leftmost(index, &meta.runs[i], t, &ntables);
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
		if (deadset.tids)
			pfree(deadset.tids);
		if (ndead > 0)
			add_run_dead(index, &meta.runs[i], ndead);
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

static void
free_chain(Relation index, BlockNumber blkno, BlockNumber *count)
{
	while (blkno != InvalidBlockNumber)
	{
		Buffer		buffer = ReadBuffer(index, blkno);
		BlockNumber next;

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		next = SimhashPageGetOpaque(BufferGetPage(buffer))->next;
		UnlockReleaseBuffer(buffer);
		free_page(index, blkno, count);
		blkno = next;
	}
}

/* Recycle retired runs and lists that no snapshot can see any more. */
static BlockNumber
recycle(Relation index)
{
	Buffer		metabuf;
	SimhashMetaPageData meta;
	BlockNumber freed = 0;
	int			kept = 0;
	GenericXLogState *state;
	Page		page;

	LockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
	simhash_read_meta(index, &meta);
	for (int i = 0; i < meta.nretired; i++)
	{
		SimhashRetired *r = &meta.retired[i];

		if (!GlobalVisCheckRemovableFullXid(NULL, r->xid))
		{
			meta.retired[kept++] = *r;
			continue;
		}
		if (r->kind == SIMHASH_RETIRED_RUN)
			simhash_visit_run_pages(index, r->head, free_page, &freed);
		else
			free_chain(index, r->head, &freed);
	}
	if (kept != meta.nretired)
	{
		metabuf = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
		state = GenericXLogStart(index);
		page = GenericXLogRegisterBuffer(state, metabuf, 0);
		/* only the holder of the heavyweight lock changes the retired list */
		memcpy(SimhashPageGetMeta(page)->retired, meta.retired, sizeof(meta.retired));
		SimhashPageGetMeta(page)->nretired = kept;
		GenericXLogFinish(state);
		UnlockReleaseBuffer(metabuf);
	}
	UnlockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
	return freed;
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

	(void) recycle(index);
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
