/*
 * pages.c
 *		Pages of the simhash index (design: README.md, layout: am.h):
 *		initialisation, allocation (reusing recycled pages, alloc.c), the
 *		free pages at the end of the file, the one way pages are read
 *		(simhash_read_page(): read, lock, check kind and generation, with a
 *		buffer access strategy) and walks along chains of them, and the
 *		metapage.  The pending lanes are in pending.c.
 */
#include "postgres.h"

#include "access/rmgr.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "am.h"
#include "core/index_pages.h"

/* Initialise a page of the given kind and generation. */
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
 * Move every block number a page of a run links to by delta: its next
 * page, an inner page's children, a run header's roots (a tree or run
 * written elsewhere than where it ends up).
 */
void
simhash_page_move_links(Page page, int64 delta)
{
	SimhashPageOpaque opaque = SimhashPageGetOpaque(page);

	if (opaque->next != InvalidBlockNumber)
		opaque->next = (BlockNumber) ((int64) opaque->next + delta);
	if (opaque->kind == SIMHASH_INNER)
	{
		SimhashInnerItem *items = SimhashPageInner(page);
		int			n = SimhashPageItems(page);

		for (int i = 0; i < n; i++)
			items[i].child = (BlockNumber) ((int64) items[i].child + delta);
	}
	else if (opaque->kind == SIMHASH_RUN_HEADER)
	{
		SimhashRunHeader *header = SimhashPageRunHeader(page);

		for (uint32 t = 0; t < header->ntables; t++)
			header->trees[t].root = (BlockNumber) ((int64) header->trees[t].root + delta);
	}
}

/*
 * Overwrite the page of buffer (locked exclusively) with image, or with a
 * free page if image is NULL, WAL-logged as a full-page image: a core
 * XLOG_FPI record (log_newpage_buffer()), whose redo restores the page
 * without its hole, on a standby as after a crash.  A generic record with
 * GENERIC_XLOG_FULL_IMAGE logs the same bytes but copies the page twice and
 * zeroes its hole first, a large share of a flush's cost per page.  Unlogged where the relation needs no WAL.
 */
void
simhash_write_page_image(Relation index, Buffer buffer, Page image)
{
	Page		page = BufferGetPage(buffer);

	START_CRIT_SECTION();
	if (image != NULL)
		memcpy(page, image, BLCKSZ);
	else
		simhash_init_page(page, SIMHASH_FREE, 0);
	MarkBufferDirty(buffer);
	if (RelationNeedsWAL(index))
		log_newpage_buffer(buffer, true);
	END_CRIT_SECTION();
}

/*
 * WAL-log the changes to npages pages (locked exclusively, changed and
 * marked dirty by the caller, in a critical section) as one generic WAL
 * record (RM_GENERIC_ID) built directly in the format generic_xlog.c
 * writes and generic_redo() applies: a page's data is fragments of
 * (offset, length: OffsetNumber each, then the bytes), and redo zeroes the
 * hole between pd_lower and pd_upper, which pages of entries appended at
 * pd_lower and the metapage keep zero too; a page logged whole is its
 * image (without its hole), which redo restores.  The same record as
 * GenericXLogFinish() would write for the change, without its copies of
 * each whole page before and after and their comparison, which cost more
 * than the rest of an append: a few dozen bytes where a full-page image of
 * a page's used part is up to a page.  After a checkpoint, XLogInsert()
 * logs a changed page's image instead (full_page_writes).
 */
void
simhash_log_pages(Relation index, const SimhashLoggedPage *pages, int npages)
{
	char		delta[SIMHASH_MAX_LOGGED_PAGES][SIMHASH_MAX_LOGGED_RANGES * 2 * sizeof(OffsetNumber) +
											SIMHASH_MAX_LOGGED_BYTES];
	XLogRecPtr	lsn;

	Assert(CritSectionCount > 0);
	Assert(npages <= SIMHASH_MAX_LOGGED_PAGES);
	if (!RelationNeedsWAL(index))
		return;
	XLogBeginInsert();
	for (int p = 0; p < npages; p++)
	{
		const char *page = (const char *) BufferGetPage(pages[p].buffer);
		Size		len = 0;
		Size		bytes = 0;

		if (pages[p].image)
		{
			XLogRegisterBuffer(p, pages[p].buffer, REGBUF_FORCE_IMAGE | REGBUF_STANDARD);
			continue;
		}
		Assert(pages[p].n <= SIMHASH_MAX_LOGGED_RANGES);
		for (int i = 0; i < pages[p].n; i++)
		{
			OffsetNumber offset = pages[p].offsets[i];
			OffsetNumber length = pages[p].lengths[i];

			bytes += length;
			Assert(bytes <= SIMHASH_MAX_LOGGED_BYTES);
			memcpy(delta[p] + len, &offset, sizeof(offset));
			len += sizeof(offset);
			memcpy(delta[p] + len, &length, sizeof(length));
			len += sizeof(length);
			memcpy(delta[p] + len, page + offset, length);
			len += length;
		}
		XLogRegisterBuffer(p, pages[p].buffer, REGBUF_STANDARD);
		XLogRegisterBufData(p, delta[p], len);
	}
	lsn = XLogInsert(RM_GENERIC_ID, 0);
	/* not inside PageSetLSN(), a macro up to 15 that evaluates it twice */
	for (int p = 0; p < npages; p++)
		PageSetLSN(BufferGetPage(pages[p].buffer), lsn);
}

/*
 * A new page, locked exclusively: a recycled one from the free space map
 * (the lowest, alloc.c), or a new block.  The free space map is not
 * crash-safe, so a page it offers is used only if it is really free (new,
 * or marked free).
 */
Buffer
simhash_new_buffer(Relation index)
{
	Buffer		buffer;
	bool		needLock;

	for (;;)
	{
		BlockNumber blkno = simhash_take_free_page(index);

		if (blkno == InvalidBlockNumber)
			break;
		if (!simhash_block_exists(index, blkno))
			continue;			/* the map is not crash-safe */
		buffer = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, NULL);
		if (ConditionalLockBuffer(buffer))
		{
			if (simhash_page_is_free(BufferGetPage(buffer)))
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

/*
 * Block blkno of the index, read through strategy (VACUUM's ring, or NULL)
 * and locked in mode, unchecked: for pages about to be overwritten, and for
 * VACUUM's pass over every block.  Pages reached through the index's
 * structure are read with simhash_read_page().
 */
Buffer
simhash_lock_block(Relation index, BlockNumber blkno, int mode,
				   BufferAccessStrategy strategy)
{
	Buffer		buffer = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);

	LockBuffer(buffer, mode);
	return buffer;
}

/* The number of blocks left once the free pages at the end are cut off. */
BlockNumber
simhash_without_free_tail(Relation index, BlockNumber nblocks, BufferAccessStrategy strategy)
{
	BlockNumber keep;

	for (keep = nblocks; keep > SIMHASH_METAPAGE_BLKNO + 1; keep--)
	{
		Buffer		buffer = simhash_lock_block(index, keep - 1, BUFFER_LOCK_SHARE, strategy);
		bool		is_free = simhash_page_is_free(BufferGetPage(buffer));

		UnlockReleaseBuffer(buffer);
		if (!is_free)
			break;
		simhash_vacuum_delay_point();
	}
	return keep;
}

/*
 * The index's structures are core/index_pages.h's (am.h); what that header
 * assumes of PostgreSQL: the block size, the page header, and the retired
 * items' FullTransactionId (8 bytes, as the core's SvFullXid).
 */
StaticAssertDecl(SV_BLCKSZ == BLCKSZ, "core/index_pages.h assumes the block size");
StaticAssertDecl(SV_PAGE_HEADER == MAXALIGN(SizeOfPageHeaderData), "page header size");
StaticAssertDecl(SV_SPECIAL == MAXALIGN(sizeof(SimhashPageOpaqueData)), "special size");
StaticAssertDecl(offsetof(PageHeaderData, pd_lower) == offsetof(SvPageHeader, lower) &&
				 offsetof(PageHeaderData, pd_upper) == offsetof(SvPageHeader, upper) &&
				 offsetof(PageHeaderData, pd_special) == offsetof(SvPageHeader, special),
				 "page header layout");
StaticAssertDecl(sizeof(FullTransactionId) == sizeof(uint64), "full transaction id size");
StaticAssertDecl(SV_PAGE_ITEMS == SIMHASH_PAGE_ITEMS, "items per page");

/*
 * What this backend knows of the index between calls (rd_amcache, freed by
 * the relcache when the index changes identity): its size in blocks, read
 * again whenever a block number at or past it turns up (the index grows),
 * and its number of tables, from the last metapage read.
 */
typedef struct SimhashCache
{
	BlockNumber nblocks;
	int			ntables;
	uint64		token;			/* its name for inner_cache.c's copies; 0: none yet */
} SimhashCache;

/* the last token handed out by simhash_cache_token() in this backend */
static uint64 last_token = 0;

static SimhashCache *
index_cache(Relation index)
{
	if (index->rd_amcache == NULL)
		index->rd_amcache = MemoryContextAllocZero(index->rd_indexcxt, sizeof(SimhashCache));
	return (SimhashCache *) index->rd_amcache;
}

/*
 * This backend's name for the index's current relcache entry, for the
 * copies of its inner pages (inner_cache.c; kept outside the entry: the
 * relcache frees only rd_amcache when it reloads an open index, so
 * anything rd_amcache pointed to would leak): a new one whenever
 * rd_amcache is new, that is after every invalidation of the index
 * (REINDEX, TRUNCATE, VACUUM or ANALYZE updating its pg_class row), so the
 * copies of an earlier one are never used.
 */
uint64
simhash_cache_token(Relation index)
{
	SimhashCache *cache = index_cache(index);

	if (cache->token == 0)
		cache->token = ++last_token;
	return cache->token;
}

/* The index's size in blocks, read again from the storage manager. */
static BlockNumber
refresh_nblocks(Relation index)
{
	SimhashCache *cache = index_cache(index);

	cache->nblocks = RelationGetNumberOfBlocks(index);
	return cache->nblocks;
}

/* Report persistent corruption of the index at blkno. */
void
simhash_report_corrupt(Relation index, BlockNumber blkno, const char *problem)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("index \"%s\" is corrupted at block %u",
					RelationGetRelationName(index), blkno),
			 errdetail_internal("%s", problem),
			 errhint("REINDEX the index.  simhash_index_check() reports what is wrong.")));
}

/* Is blkno a page of the index other than the metapage? */
bool
simhash_block_exists(Relation index, BlockNumber blkno)
{
	if (sv_block_ok(blkno, index_cache(index)->nblocks))
		return true;
	return sv_block_ok(blkno, refresh_nblocks(index));
}

/*
 * One more page of a chain (a leaf chain, a list, nested retired pages):
 * a chain longer than the index has pages has a cycle.
 */
void
simhash_chain_step(Relation index, BlockNumber *steps, BlockNumber blkno)
{
	if (++(*steps) <= index_cache(index)->nblocks)
		return;
	if (*steps <= refresh_nblocks(index))
		return;
	simhash_report_corrupt(index, blkno, "A chain of pages is longer than the index (a cycle).");
}

/*
 * Is the run or list of this generation still in the index?  Reads the
 * metapage as it is now.
 */
static bool
generation_is_live(Relation index, uint64 generation)
{
	SimhashMetaPageData meta;

	simhash_read_meta(index, &meta);
	for (int i = 0; i < meta.nruns; i++)
		if (meta.runs[i].generation == generation)
			return true;
	for (int i = 0; i < meta.nlanes; i++)
		if (meta.pending[i].generation == generation ||
			meta.flushing[i].generation == generation)
			return true;
	return meta.nulls.generation == generation;
}

/*
 * Read page blkno of the index through strategy (VACUUM passes its
 * info->strategy, everyone else NULL), lock it in mode, and check that it is a
 * page of this kind and generation whose fields are all in range
 * (core/index_pages.c).  The one way the index's pages are read through its
 * structure.  When it is not:
 *	- with SIMHASH_READ_IF_OURS (walks that recycle pages), the page is
 *	  simply not the run's or list's any more: InvalidBuffer;
 *	- when the run or list expected is no longer in the index (the current
 *	  metapage does not list its generation), its pages were recycled while
 *	  a scan that copied the metapage earlier was reading them (on a standby
 *	  without hot_standby_feedback): a serialization failure, which a retry
 *	  resolves;
 *	- otherwise the index is corrupted (ERRCODE_INDEX_CORRUPTED), and so
 *	  always with SIMHASH_READ_META_LOCKED (the caller holds the metapage's
 *	  buffer lock: nothing can be recycled, and we cannot read it again).
 * With SIMHASH_READ_NOWAIT, a page whose lock another backend holds is not
 * waited for: InvalidBuffer.
 * The block number is checked against the relation's size first.
 */
Buffer
simhash_read_page(Relation index, BlockNumber blkno, int mode, uint16 kind,
				  uint64 generation, int flags, BufferAccessStrategy strategy)
{
	SimhashCache *cache = index_cache(index);
	Buffer		buffer;
	SvFacts		facts;
	SvVerdict	verdict;
	const char *problem = NULL;
	SimhashPageOpaqueData found;

	CHECK_FOR_INTERRUPTS();		/* every page read: long walks stay cancellable */
	if (!simhash_block_exists(index, blkno))
		simhash_report_corrupt(index, blkno,
							   "A page of the index points to a block number outside it.");
	if (kind == SIMHASH_RUN_HEADER && cache->ntables == 0 &&
		!(flags & SIMHASH_READ_META_LOCKED))
	{
		SimhashMetaPageData meta;

		simhash_read_meta(index, &meta);	/* sets cache->ntables */
	}
	if (flags & SIMHASH_READ_NOWAIT)
	{
		Assert(mode == BUFFER_LOCK_EXCLUSIVE);
		buffer = ReadBufferExtended(index, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);
		if (!ConditionalLockBuffer(buffer))
		{
			ReleaseBuffer(buffer);
			return InvalidBuffer;
		}
	}
	else
		buffer = simhash_lock_block(index, blkno, mode, strategy);
	facts.ntables = cache->ntables;
	facts.nblocks = cache->nblocks;
	verdict = sv_check_page(BufferGetPage(buffer), kind, generation, &facts, &problem);
	if (verdict == SV_BAD && facts.nblocks != refresh_nblocks(index))
	{
		/* a next page or root beyond the size we knew: maybe the index grew */
		facts.nblocks = cache->nblocks;
		verdict = sv_check_page(BufferGetPage(buffer), kind, generation, &facts, &problem);
	}
	if (verdict == SV_OK)
		return buffer;

	memcpy(&found, SimhashPageGetOpaque(BufferGetPage(buffer)), sizeof(found));
	UnlockReleaseBuffer(buffer);
	if (verdict == SV_OTHER && (flags & SIMHASH_READ_IF_OURS))
		return InvalidBuffer;
	if (verdict == SV_OTHER && !(flags & SIMHASH_READ_META_LOCKED) &&
		!generation_is_live(index, generation))
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("page %u of index \"%s\" was reused while it was being read",
						blkno, RelationGetRelationName(index)),
				 errdetail("Expected page kind %u of generation " UINT64_FORMAT ", found kind %u of generation " UINT64_FORMAT ".",
						   kind, generation, found.kind, found.generation),
				 errhint("Retry the query.  On a standby, hot_standby_feedback avoids this.")));
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("index \"%s\" is corrupted at block %u",
					RelationGetRelationName(index), blkno),
			 errdetail_internal("Expected page kind %u of generation " UINT64_FORMAT ": %s.",
								kind, generation, problem),
			 errhint("REINDEX the index.  simhash_index_check() reports what is wrong.")));
	return InvalidBuffer;		/* keep compiler quiet */
}

/*
 * Start a walk along the chain of pages from first (InvalidBlockNumber: an
 * empty chain), each of this kind and generation, read as
 * simhash_read_page() does.
 */
void
simhash_chain_begin(SimhashChain *chain, Relation index, BlockNumber first,
					uint16 kind, uint64 generation, int mode, int flags,
					BufferAccessStrategy strategy)
{
	chain->index = index;
	chain->strategy = strategy;
	chain->kind = kind;
	chain->mode = mode;
	chain->flags = flags;
	chain->generation = generation;
	chain->blkno = InvalidBlockNumber;
	chain->next = first;
	chain->steps = 0;
}

/*
 * The next page of the chain, locked and checked (the caller unlocks and
 * releases it), or InvalidBuffer at its end (and, with
 * SIMHASH_READ_IF_OURS, at a page that is no longer the chain's).
 */
Buffer
simhash_chain_next(SimhashChain *chain)
{
	Buffer		buffer;

	if (chain->next == InvalidBlockNumber)
		return InvalidBuffer;
	simhash_chain_step(chain->index, &chain->steps, chain->next);
	buffer = simhash_read_page(chain->index, chain->next, chain->mode, chain->kind,
							   chain->generation, chain->flags, chain->strategy);
	if (!BufferIsValid(buffer))
	{
		chain->next = InvalidBlockNumber;
		return InvalidBuffer;
	}
	chain->blkno = chain->next;
	chain->next = SimhashPageGetOpaque(BufferGetPage(buffer))->next;
	return buffer;
}

/* Initialise the metapage of an empty index. */
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
	meta->nlanes = SIMHASH_DEFAULT_LANES;
	for (int i = 0; i < SIMHASH_MAX_LANES; i++)
	{
		meta->pending[i].head = meta->pending[i].tail = InvalidBlockNumber;
		meta->flushing[i].head = meta->flushing[i].tail = InvalidBlockNumber;
	}
	meta->nulls.head = meta->nulls.tail = InvalidBlockNumber;
	((PageHeader) page)->pd_lower =
		((char *) meta + sizeof(SimhashMetaPageData)) - (char *) page;
}

/*
 * Refuse an index of an on-disk format version this library does not read
 * (one written by a later release), with a hint naming the REINDEX that
 * rebuilds it.  Formats 1 (release 1.0, format1.c) and 2 are read.  The
 * metapage's buffer (locked) is released first: the hint reads the catalog.
 */
static void
check_version(Relation index, Buffer buffer)
{
	uint32		version = sv_meta_other_version(BufferGetPage(buffer));

	if (version == 0)
		return;
	UnlockReleaseBuffer(buffer);
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("simhash index \"%s\" has on-disk format version %u, this version of the extension reads versions %d to %d",
					RelationGetRelationName(index), version, SIMHASH_VERSION1, SIMHASH_VERSION),
			 errhint("Rebuild it with REINDEX INDEX %s.",
					 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(index)),
												RelationGetRelationName(index)))));
}

/*
 * Check the metapage (its buffer locked by the caller): its format version,
 * then its fields; remember its table count.
 */
static void
check_meta(Relation index, Buffer buffer)
{
	Page		page = BufferGetPage(buffer);
	const char *problem;

	check_version(index, buffer);
	if (sv_check_meta(page, index_cache(index)->nblocks, &problem) != SV_OK &&
		sv_check_meta(page, refresh_nblocks(index), &problem) != SV_OK)
		simhash_report_corrupt(index, SIMHASH_METAPAGE_BLKNO, problem);
	/* at the same place in both formats */
	index_cache(index)->ntables = SimhashPageGetMeta(page)->ntables;
}

/* The metapage's buffer, locked in mode, checked, in any format read. */
static Buffer
lock_meta_any_format(Relation index, int mode)
{
	Buffer		buffer = simhash_lock_block(index, SIMHASH_METAPAGE_BLKNO, mode, NULL);

	check_meta(index, buffer);
	return buffer;
}

/*
 * A format-1 metapage (checked, its buffer locked) in format 2's layout
 * (format1.c): lane 0 takes the pending and flushing lists, whose nentries
 * then count the entries before their tail page, as a lane's do.
 */
static void
meta_from_format1(Relation index, Buffer metabuf, SimhashMetaPageData *meta)
{
	SimhashList *lists[2];

	StaticAssertStmt(sizeof(SvMeta) == sizeof(SimhashMetaPageData), "metapage layout");
	sv_meta_from_format1(BufferGetPage(metabuf), (SvMeta *) meta);
	lists[0] = &meta->pending[0];
	lists[1] = &meta->flushing[0];
	for (int i = 0; i < 2; i++)
	{
		Buffer		tail;
		int			n;

		if (lists[i]->head == InvalidBlockNumber)
			continue;
		tail = simhash_read_page(index, lists[i]->tail, BUFFER_LOCK_SHARE, SIMHASH_PENDING,
								 lists[i]->generation, SIMHASH_READ_META_LOCKED, NULL);
		n = SimhashPageItems(BufferGetPage(tail));	/* checked */
		UnlockReleaseBuffer(tail);
		if ((uint64) n > lists[i]->nentries)
			simhash_report_corrupt(index, lists[i]->tail,
								   "A list's tail page holds more entries than the metapage counts.");
		lists[i]->nentries -= n;
	}
}

/*
 * Rewrite a format-1 metapage (its buffer locked exclusively) in format
 * 2's layout, in place, as one generic WAL record (format1.c).
 */
static void
upgrade_format1_meta(Relation index, Buffer metabuf)
{
	SimhashMetaPageData meta;
	GenericXLogState *state;
	Page		page;

	meta_from_format1(index, metabuf, &meta);
	state = GenericXLogStart(index);
	page = GenericXLogRegisterBuffer(state, metabuf, GENERIC_XLOG_FULL_IMAGE);
	memcpy(SimhashPageGetMeta(page), &meta, sizeof(SimhashMetaPageData));
	((PageHeader) page)->pd_lower =
		((char *) SimhashPageGetMeta(page) + sizeof(SimhashMetaPageData)) - (char *) page;
	GenericXLogFinish(state);
}

/*
 * The metapage's buffer, locked in mode, checked, in format 2's layout: a
 * writer's access.  The first one after an upgrade from release 1.0
 * rewrites a format-1 metapage in place (format1.c); readers copy it with
 * simhash_read_meta(), which converts without writing (as on a standby).
 */
Buffer
simhash_lock_meta(Relation index, int mode)
{
	Buffer		buffer = lock_meta_any_format(index, mode);

	if (!sv_meta_is_format1(BufferGetPage(buffer)))
		return buffer;
	if (mode != BUFFER_LOCK_EXCLUSIVE)
	{
		LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
		check_meta(index, buffer);
	}
	if (sv_meta_is_format1(BufferGetPage(buffer)))
		upgrade_format1_meta(index, buffer);
	if (mode != BUFFER_LOCK_EXCLUSIVE)
	{
		LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
		LockBuffer(buffer, mode);
		check_meta(index, buffer);
	}
	return buffer;
}

/*
 * A copy of the metapage's contents, checked, in format 2's layout (a
 * format-1 metapage converted, not written).
 */
void
simhash_read_meta(Relation index, SimhashMetaPageData *meta)
{
	Buffer		buffer = lock_meta_any_format(index, BUFFER_LOCK_SHARE);

	if (sv_meta_is_format1(BufferGetPage(buffer)))
		meta_from_format1(index, buffer, meta);
	else
		memcpy(meta, SimhashPageGetMeta(BufferGetPage(buffer)), sizeof(SimhashMetaPageData));
	UnlockReleaseBuffer(buffer);
}

/* Write *meta to the metapage (locked exclusively by the caller), logged. */
void
simhash_log_meta(Relation index, Buffer metabuf, const SimhashMetaPageData *meta)
{
	GenericXLogState *state = GenericXLogStart(index);
	Page		page = GenericXLogRegisterBuffer(state, metabuf, 0);

	memcpy(SimhashPageGetMeta(page), meta, sizeof(SimhashMetaPageData));
	GenericXLogFinish(state);
}

/* The permuted-block geometry of the index, from its metapage. */
void
simhash_meta_blocks(const SimhashMetaPageData *meta, SimhashBlocks *blocks)
{
	/* checked with the metapage (sv_check_meta) */
	if (!simhash_blocks_init(blocks, meta->nblocks, meta->max_distance))
		elog(ERROR, "invalid simhash index geometry: blocks %d, max_distance %d",
			 meta->nblocks, meta->max_distance);
}
