/*
 * recycle.c
 *		The life of a replaced run or list of the simhash index (design:
 *		README.md): it is retired on the metapage with the next transaction id,
 *		and its pages are marked free and given to the free space map once
 *		no snapshot can still be reading them (simhash_recycle(), by VACUUM
 *		and by each flush).
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/transam.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "catalog/catalog.h"
#include "miscadmin.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "am.h"
#include "core/index_pages.h"

/*
 * Put a replaced run or list on the metapage's retired list, to be
 * recycled by VACUUM once no snapshot taken before now remains.  The
 * caller holds the metapage exclusively and logs *meta.  When the list is
 * full, its items move to a new page, listed as one item whose xid is the
 * latest of theirs (recycling it then is safe for all of them).
 */
void
simhash_retire(Relation index, SimhashMetaPageData *meta, BlockNumber head,
			   uint16 kind, uint64 generation)
{
	SimhashRetired *r;

	if (head == InvalidBlockNumber)
		return;
	if (meta->nretired >= SIMHASH_MAX_RETIRED)
	{
		Buffer		buffer = simhash_new_buffer(index);
		GenericXLogState *state = GenericXLogStart(index);
		Page		page = GenericXLogRegisterBuffer(state, buffer, GENERIC_XLOG_FULL_IMAGE);
		FullTransactionId latest = meta->retired[0].xid;

		simhash_init_page(page, SIMHASH_RETIRED_PAGE, 0);
		memcpy(SimhashPageRetired(page), meta->retired,
			   meta->nretired * sizeof(SimhashRetired));
		((PageHeader) page)->pd_lower += meta->nretired * sizeof(SimhashRetired);
		for (int i = 1; i < meta->nretired; i++)
			if (FullTransactionIdFollows(meta->retired[i].xid, latest))
				latest = meta->retired[i].xid;
		GenericXLogFinish(state);
		meta->retired[0].head = BufferGetBlockNumber(buffer);
		meta->retired[0].kind = SIMHASH_RETIRED_MORE;
		meta->retired[0].pad = 0;
		meta->retired[0].xid = latest;
		meta->retired[0].generation = 0;
		meta->nretired = 1;
		UnlockReleaseBuffer(buffer);
	}
	r = &meta->retired[meta->nretired++];
	r->head = head;
	r->kind = kind;
	r->pad = 0;
	r->xid = ReadNextFullTransactionId();
	r->generation = generation;
}

/* Mark a page free (WAL-logged) and give it to the free space map. */
void
simhash_free_page(Relation index, BlockNumber blkno, BufferAccessStrategy strategy)
{
	Buffer		buffer = simhash_lock_block(index, blkno, BUFFER_LOCK_EXCLUSIVE, strategy);

	simhash_write_page_image(index, buffer, NULL);
	UnlockReleaseBuffer(buffer);
	simhash_give_free_page(index, blkno);
}

/* what recycling has freed so far, and how it reads */
typedef struct Recycler
{
	BufferAccessStrategy strategy;
	BlockNumber freed;
} Recycler;

/* A page visitor: free the page. */
static void
free_visited(Relation index, BlockNumber blkno, void *arg)
{
	Recycler   *rc = (Recycler *) arg;

	simhash_free_page(index, blkno, rc->strategy);
	rc->freed++;
}

/*
 * Free a list's pages, head first.  Stop at a page that is not (any more)
 * the list's: the rest, if any, are found as orphans by VACUUM's pass over
 * every block.
 */
static void
free_chain(Relation index, BlockNumber head, uint64 generation, Recycler *rc)
{
	SimhashChain chain;
	Buffer		buffer;

	simhash_chain_begin(&chain, index, head, SIMHASH_PENDING, generation,
						BUFFER_LOCK_SHARE, SIMHASH_READ_IF_OURS, rc->strategy);
	while (BufferIsValid(buffer = simhash_chain_next(&chain)))
	{
		UnlockReleaseBuffer(buffer);
		free_visited(index, chain.blkno, rc);
	}
}

/*
 * The items of a page of retired items (a palloc'd copy), or NULL if the
 * page is not one any more (recycled before a crash lost the metapage).
 */
SimhashRetired *
simhash_read_retired_page(Relation index, BlockNumber blkno, int *n,
						  BufferAccessStrategy strategy)
{
	Buffer		buffer = simhash_read_page(index, blkno, BUFFER_LOCK_SHARE,
										   SIMHASH_RETIRED_PAGE, 0, SIMHASH_READ_IF_OURS,
										   strategy);
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

/* Free the pages of one retired item (a run, a list, or a page of items). */
static void
recycle_item(Relation index, const SimhashRetired *r, Recycler *rc, BlockNumber *depth)
{
	if (r->kind == SIMHASH_RETIRED_RUN)
		simhash_visit_run_pages(index, r->head, r->generation, free_visited, rc,
								rc->strategy);
	else if (r->kind == SIMHASH_RETIRED_LIST)
		free_chain(index, r->head, r->generation, rc);
	else
	{
		int			n;
		SimhashRetired *items = simhash_read_retired_page(index, r->head, &n, rc->strategy);

		if (items == NULL)
			return;				/* recycled before a crash lost the metapage */

		/* pages of items nest: a cycle would never end */
		check_stack_depth();
		simhash_chain_step(index, depth, r->head);
		for (int i = 0; i < n; i++)
			recycle_item(index, &items[i], rc, depth);
		pfree(items);
		free_visited(index, r->head, rc);
	}
}

static BlockNumber recycle(Relation index, BufferAccessStrategy strategy, bool early);

/*
 * Tell hot standbys, before any page of the items about to be recycled is
 * freed, the horizon those pages need: a standby query whose snapshot's
 * xmin is at or before `latest` (the newest xid of the items) may still be
 * reading them, so the standby must resolve the conflict before it
 * replays the freeing.  The record is nbtree's XLOG_BTREE_REUSE_PAGE (the
 * one record of core whose redo only resolves a snapshot conflict, see
 * README.md for why this and not a custom resource manager); its block is the
 * metapage's, which its redo does not touch.
 */
static void
log_recycle_horizon(Relation index, FullTransactionId latest)
{
	Relation	heap;
	bool		is_catalog;

	if (!RelationNeedsWAL(index) || !XLogStandbyInfoActive())
		return;
	/* whoever recycles holds a lock on the table as well as on the index */
	heap = relation_open(index->rd_index->indrelid, NoLock);
	is_catalog = RelationIsAccessibleInLogicalDecoding(heap);
	relation_close(heap, NoLock);
	simhash_log_reuse_horizon(index, is_catalog, SIMHASH_METAPAGE_BLKNO, latest);
}

/*
 * Recycle retired runs and lists that no snapshot can see any more; returns
 * the number of pages freed.  The caller holds the heavyweight lock on the
 * metapage (VACUUM, with its strategy, or a flush).
 */
BlockNumber
simhash_recycle(Relation index, BufferAccessStrategy strategy)
{
	return recycle(index, strategy, false);
}

/*
 * The same for VACUUM, which also recycles what is retired after the
 * global horizon when no snapshot that old exists (alloc.c): what its own
 * merges replaced, before it truncates the file.
 */
BlockNumber
simhash_recycle_early(Relation index, BufferAccessStrategy strategy)
{
	return recycle(index, strategy, true);
}

/* simhash_recycle(), and with early, simhash_recycle_early(). */
static BlockNumber
recycle(Relation index, BufferAccessStrategy strategy, bool early)
{
	Buffer		metabuf;
	SimhashMetaPageData meta;
	Recycler	rc = {strategy, 0};
	int			kept = 0;
	bool		any = false;
	FullTransactionId latest = InvalidFullTransactionId;
	bool		recyclable[SIMHASH_MAX_RETIRED];
	GenericXLogState *state;
	Page		page;

	simhash_read_meta(index, &meta);
	for (int i = 0; i < meta.nretired; i++)
	{
		recyclable[i] = GlobalVisCheckRemovableFullXid(NULL, meta.retired[i].xid) ||
			(early && simhash_no_snapshot_before(meta.retired[i].xid));
		if (recyclable[i] && (!any || FullTransactionIdFollows(meta.retired[i].xid, latest)))
			latest = meta.retired[i].xid;
		any |= recyclable[i];
	}
	if (any)
		log_recycle_horizon(index, latest);
	for (int i = 0; i < meta.nretired; i++)
	{
		SimhashRetired *r = &meta.retired[i];
		BlockNumber depth = 0;

		if (!recyclable[i])
		{
			meta.retired[kept++] = *r;
			continue;
		}
		recycle_item(index, r, &rc, &depth);
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
	return rc.freed;
}
