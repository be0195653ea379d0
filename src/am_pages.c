/*
 * am_pages.c
 *		Pages of the simhash index: initialisation and checks, allocation
 *		(reusing recycled pages), the metapage, the pending list that
 *		inserts append to, and retiring replaced runs and lists.
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "storage/freespace.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"

#include "am.h"

void
simhash_init_page(Page page, uint16 kind, uint64 generation)
{
	SimhashPageOpaque opaque;

	PageInit(page, BLCKSZ, sizeof(SimhashPageOpaqueData));
	opaque = SimhashPageGetOpaque(page);
	opaque->generation = generation;
	opaque->next = InvalidBlockNumber;
	opaque->kind = kind;
	opaque->page_id = SIMHASH_PAGE_ID;
}

/*
 * A new page, locked exclusively: a recycled one from the free space map,
 * or a new block.  The free space map is not crash-safe, so a page it
 * offers is used only if it is really free (new, or marked free).
 */
Buffer
simhash_new_buffer(Relation index)
{
	Buffer		buffer;
	bool		needLock;

	for (;;)
	{
		BlockNumber blkno = GetFreeIndexPage(index);
		Page		page;

		if (blkno == InvalidBlockNumber)
			break;
		buffer = ReadBuffer(index, blkno);
		if (ConditionalLockBuffer(buffer))
		{
			page = BufferGetPage(buffer);
			if (PageIsNew(page) ||
				(SimhashPageGetOpaque(page)->page_id == SIMHASH_PAGE_ID &&
				 SimhashPageGetOpaque(page)->kind == SIMHASH_FREE))
				return buffer;
			LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
		}
		ReleaseBuffer(buffer);
	}

	needLock = !RELATION_IS_LOCAL(index);
	if (needLock)
		LockRelationForExtension(index, ExclusiveLock);
	buffer = ReadBuffer(index, P_NEW);
	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	if (needLock)
		UnlockRelationForExtension(index, ExclusiveLock);
	return buffer;
}

/* Is this a page of ours, of this kind and generation? */
bool
simhash_page_is(Page page, uint16 kind, uint64 generation)
{
	SimhashPageOpaque opaque = SimhashPageGetOpaque(page);

	return !PageIsNew(page) &&
		PageGetSpecialSize(page) == MAXALIGN(sizeof(SimhashPageOpaqueData)) &&
		opaque->page_id == SIMHASH_PAGE_ID &&
		opaque->kind == kind && opaque->generation == generation;
}

/* Check that a page read through the index's structure is what we expect. */
void
simhash_check_page(Relation index, Page page, BlockNumber blkno,
				   uint16 kind, uint64 generation)
{
	SimhashPageOpaque opaque = SimhashPageGetOpaque(page);

	if (PageIsNew(page) || PageGetSpecialSize(page) != MAXALIGN(sizeof(SimhashPageOpaqueData)) ||
		opaque->page_id != SIMHASH_PAGE_ID)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" contains unexpected page at block %u",
						RelationGetRelationName(index), blkno)));
	if (opaque->kind != kind || opaque->generation != generation)
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("page %u of index \"%s\" was reused while it was being read",
						blkno, RelationGetRelationName(index)),
				 errdetail("Expected page kind %u of generation " UINT64_FORMAT ", found kind %u of generation " UINT64_FORMAT ".",
						   kind, generation, opaque->kind, opaque->generation),
				 errhint("Retry the query.  On a standby, hot_standby_feedback avoids this.")));
}

void
simhash_init_metapage(Page page, int nblocks, int max_distance, int ntables)
{
	SimhashMetaPageData *meta;

	simhash_init_page(page, SIMHASH_META, 0);
	meta = SimhashPageGetMeta(page);
	memset(meta, 0, sizeof(SimhashMetaPageData));
	meta->magic = SIMHASH_MAGIC;
	meta->version = SIMHASH_VERSION;
	meta->nblocks = nblocks;
	meta->max_distance = max_distance;
	meta->ntables = ntables;
	meta->nruns = 0;
	meta->next_generation = 1;
	meta->pending.head = meta->pending.tail = InvalidBlockNumber;
	meta->flushing.head = meta->flushing.tail = InvalidBlockNumber;
	meta->nulls.head = meta->nulls.tail = InvalidBlockNumber;
	((PageHeader) page)->pd_lower =
		((char *) meta + sizeof(SimhashMetaPageData)) - (char *) page;
}

static void
check_meta(Relation index, Page page)
{
	SimhashMetaPageData *meta = SimhashPageGetMeta(page);

	simhash_check_page(index, page, SIMHASH_METAPAGE_BLKNO, SIMHASH_META, 0);
	if (meta->magic != SIMHASH_MAGIC || meta->version != SIMHASH_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is not a simhash index of version %d",
						RelationGetRelationName(index), SIMHASH_VERSION)));
}

/* A copy of the metapage's contents. */
void
simhash_read_meta(Relation index, SimhashMetaPageData *meta)
{
	Buffer		buffer = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
	Page		page;

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buffer);
	check_meta(index, page);
	memcpy(meta, SimhashPageGetMeta(page), sizeof(SimhashMetaPageData));
	UnlockReleaseBuffer(buffer);
}

void
simhash_meta_blocks(const SimhashMetaPageData *meta, SimhashBlocks *blocks)
{
	if (!simhash_blocks_init(blocks, meta->nblocks, meta->max_distance))
		elog(ERROR, "invalid simhash index geometry: blocks %d, max_distance %d",
			 meta->nblocks, meta->max_distance);
}

/*
 * Append one entry to the pending list (or, for a NULL key, to the nulls
 * list).  The metapage stays locked exclusively throughout, which
 * serialises appends.  Returns the list's length after the append.
 */
uint64
simhash_list_append(Relation index, uint64 hash, ItemPointer tid, bool isnull)
{
	Buffer		metabuf = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
	Buffer		tailbuf = InvalidBuffer;
	Buffer		newbuf = InvalidBuffer;
	GenericXLogState *state;
	SimhashMetaPageData *meta;
	Page		tailpage = NULL;
	Page		newpage = NULL;
	Page		target;
	SimhashEntry *entry;

	SimhashList *list;
	uint64		appended;

	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	check_meta(index, BufferGetPage(metabuf));
	meta = SimhashPageGetMeta(BufferGetPage(metabuf));
	list = isnull ? &meta->nulls : &meta->pending;

	if (list->head != InvalidBlockNumber)
	{
		tailbuf = ReadBuffer(index, list->tail);
		LockBuffer(tailbuf, BUFFER_LOCK_EXCLUSIVE);
		simhash_check_page(index, BufferGetPage(tailbuf), list->tail,
						   SIMHASH_PENDING, list->generation);
		if (SimhashPageItems(BufferGetPage(tailbuf)) >= (int) SIMHASH_PAGE_ITEMS)
			newbuf = simhash_new_buffer(index);
	}
	else
		newbuf = simhash_new_buffer(index);

	state = GenericXLogStart(index);
	meta = SimhashPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	list = isnull ? &meta->nulls : &meta->pending;
	if (BufferIsValid(tailbuf))
		tailpage = GenericXLogRegisterBuffer(state, tailbuf, 0);
	if (BufferIsValid(newbuf))
	{
		newpage = GenericXLogRegisterBuffer(state, newbuf, GENERIC_XLOG_FULL_IMAGE);
		if (list->head == InvalidBlockNumber)
		{
			/* a new list */
			list->generation = meta->next_generation++;
			list->head = BufferGetBlockNumber(newbuf);
			list->nentries = 0;
		}
		else
			SimhashPageGetOpaque(tailpage)->next = BufferGetBlockNumber(newbuf);
		simhash_init_page(newpage, SIMHASH_PENDING, list->generation);
		list->tail = BufferGetBlockNumber(newbuf);
		target = newpage;
	}
	else
		target = tailpage;

	entry = SimhashPageEntries(target) + SimhashPageItems(target);
	entry->hash = isnull ? 0 : hash;
	entry->tid = *tid;
	entry->flags = isnull ? SIMHASH_ENTRY_NULL : 0;
	((PageHeader) target)->pd_lower += sizeof(SimhashEntry);
	list->nentries++;
	appended = list->nentries;

	GenericXLogFinish(state);
	if (BufferIsValid(newbuf))
		UnlockReleaseBuffer(newbuf);
	if (BufferIsValid(tailbuf))
		UnlockReleaseBuffer(tailbuf);
	UnlockReleaseBuffer(metabuf);
	return appended;
}

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
