/*
 * pending.c
 *		The pending lanes of a simhash index (design: README.md, "Concurrent
 *		inserts"), which inserts append to without a global lock, and the
 *		nulls list; helpers for the readers of both.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/rel.h"

#include "am.h"

/*
 * Write one entry at the end of a lane or nulls list page (registered for
 * generic WAL, or in a critical section); the caller checked that it has
 * room.
 */
static void
put_entry(Page page, uint64 hash, ItemPointer tid, uint16 flags)
{
	SimhashEntry *entry = SimhashPageEntries(page) + SimhashPageItems(page);

	entry->hash = hash;
	entry->tid = *tid;
	entry->flags = flags;
	((PageHeader) page)->pd_lower += sizeof(SimhashEntry);
}

/*
 * The tail page of a non-empty list of the metapage (locked by the
 * caller), locked exclusively; InvalidBuffer if flags has
 * SIMHASH_READ_NOWAIT and another backend holds its lock.
 */
static Buffer
lock_tail(Relation index, const SimhashList *list, int flags)
{
	Buffer		buffer = simhash_read_page(index, list->tail, BUFFER_LOCK_EXCLUSIVE,
										   SIMHASH_PENDING, list->generation,
										   flags | SIMHASH_READ_META_LOCKED, NULL);

	if (BufferIsValid(buffer) &&
		SimhashPageGetOpaque(BufferGetPage(buffer))->next != InvalidBlockNumber)
		simhash_report_corrupt(index, list->tail, "The tail of a list has a next page.");
	return buffer;
}

/*
 * Entries per page of a pending lane, fewer than a page holds: the lanes'
 * pages other than their tails count towards a flush (insert.c), so
 * smaller pages keep the entries pending at a flush, which every scan
 * reads, closer to its limit; larger ones add a page to a lane (the
 * metapage's exclusive lock and a generic WAL record of the metapage) less
 * often.  The first append to a tail after a checkpoint logs the image of
 * its used part.  Lane pages holding more entries are read as they are (any
 * count up to a full page is valid); an append finds such a tail full and
 * links a new page.  The nulls list fills pages.
 */
#define SIMHASH_LANE_PAGE_ITEMS 64

StaticAssertDecl(SIMHASH_LANE_PAGE_ITEMS <= SIMHASH_PAGE_ITEMS, "lane pages are pages");

/* Does the (locked) page of a lane (or of the nulls list) have room for one more entry? */
static inline bool
has_room(Buffer buffer, bool lane)
{
	return SimhashPageItems(BufferGetPage(buffer)) <
		(int) (lane ? SIMHASH_LANE_PAGE_ITEMS : SIMHASH_PAGE_ITEMS);
}

/*
 * Describe for simhash_log_pages() one more changed range of buffer's page:
 * the field at field, length bytes.
 */
static void
logged_range(SimhashLoggedPage *logged, Buffer buffer, const void *field, uint16 length)
{
	logged->buffer = buffer;
	logged->offsets[logged->n] = (const char *) field - (const char *) BufferGetPage(buffer);
	logged->lengths[logged->n++] = length;
}

/*
 * Put an entry on a page (as put_entry()) and describe for
 * simhash_log_pages() the two ranges that change: the page header's
 * pd_lower and the new entry.
 */
static void
put_logged_entry(SimhashLoggedPage *logged, Buffer buffer, uint64 hash, ItemPointer tid,
				 uint16 flags)
{
	Page		page = BufferGetPage(buffer);

	logged_range(logged, buffer, &((PageHeader) page)->pd_lower, sizeof(LocationIndex));
	logged_range(logged, buffer, (char *) page + ((PageHeader) page)->pd_lower,
				 sizeof(SimhashEntry));
	put_entry(page, hash, tid, flags);
}

/*
 * Append to the tail page (locked exclusively, with room), logging only
 * what the append changes, the page header's pd_lower and the new entry
 * (simhash_log_pages(): 26 bytes of delta).  GenericXLogFinish() would log
 * the same delta but copy and compare the whole page first, and a
 * full-page image of the page's used part grows with the page (at 64
 * entries about 560 bytes on average).  See README.md, "Concurrent
 * inserts".
 */
static void
append_to_tail(Relation index, Buffer tailbuf, uint64 hash, ItemPointer tid, uint16 flags)
{
	SimhashLoggedPage logged = {0};

	START_CRIT_SECTION();
	put_logged_entry(&logged, tailbuf, hash, tid, flags);
	MarkBufferDirty(tailbuf);
	simhash_log_pages(index, &logged, 1);
	END_CRIT_SECTION();
}

/*
 * Return a free page taken by simhash_new_buffer() (locked, unchanged) and
 * not used, if any, to the free space map.
 */
static void
give_back(Relation index, Buffer spare)
{
	BlockNumber blkno;

	if (!BufferIsValid(spare))
		return;
	blkno = BufferGetBlockNumber(spare);
	UnlockReleaseBuffer(spare);
	simhash_give_free_page(index, blkno);
}

/*
 * Append an entry to list `which` of the metapage, whose buffer the caller
 * holds locked exclusively: to its tail page if it has room, else to a new
 * page (spare, a page of simhash_new_buffer() taken beforehand, or
 * InvalidBuffer: one taken now) linked to it (or a new list); an unused
 * spare goes back to the free space map.  With exact_count (the nulls list) the
 * list's nentries counts every entry; otherwise (a pending lane) only those
 * before the tail page, so that the metapage is written only when a page
 * is added.  Returns the list's nentries afterwards.
 *
 * One generic WAL record, built directly (simhash_log_pages()): the
 * metapage's list (and its next generation, for a new list), the old
 * tail's link to the new page or the entry appended to it, and the new
 * page's image (its used part: a header and one entry).
 */
static uint64
append_meta_locked(Relation index, Buffer metabuf, SimhashList *(*which) (SimhashMetaPageData *, int),
				   int lane, uint64 hash, ItemPointer tid, uint16 flags, bool exact_count,
				   Buffer spare)
{
	SimhashMetaPageData *meta = SimhashPageGetMeta(BufferGetPage(metabuf));
	SimhashList *list = which(meta, lane);
	Buffer		tailbuf = InvalidBuffer;
	Buffer		newbuf = InvalidBuffer;
	SimhashLoggedPage logged[SIMHASH_MAX_LOGGED_PAGES] = {{0}};
	int			nlogged = 1;
	uint64		nentries;

	if (list->head != InvalidBlockNumber)
	{
		tailbuf = lock_tail(index, list, 0);
		if (has_room(tailbuf, true) && !exact_count)
		{
			/* another backend linked a page since we looked */
			append_to_tail(index, tailbuf, hash, tid, flags);
			UnlockReleaseBuffer(tailbuf);
			give_back(index, spare);
			return list->nentries;
		}
		if (!has_room(tailbuf, !exact_count))
			newbuf = BufferIsValid(spare) ? spare : simhash_new_buffer(index);
		else
			give_back(index, spare);
	}
	else
		newbuf = BufferIsValid(spare) ? spare : simhash_new_buffer(index);

	/* the metapage: the list, and the next generation before it */
	if (list->head == InvalidBlockNumber)
		logged_range(&logged[0], metabuf, &meta->next_generation, sizeof(meta->next_generation));
	logged_range(&logged[0], metabuf, list, sizeof(SimhashList));

	START_CRIT_SECTION();
	if (BufferIsValid(newbuf))
	{
		Page		newpage = BufferGetPage(newbuf);

		if (list->head == InvalidBlockNumber)
		{
			/* a new list */
			list->generation = meta->next_generation++;
			list->head = BufferGetBlockNumber(newbuf);
			list->nentries = 0;
		}
		else
		{
			Page		tailpage = BufferGetPage(tailbuf);
			SimhashPageOpaque opaque = SimhashPageGetOpaque(tailpage);

			opaque->next = BufferGetBlockNumber(newbuf);
			if (!exact_count)
				list->nentries += SimhashPageItems(tailpage);
			logged_range(&logged[nlogged++], tailbuf, &opaque->next, sizeof(opaque->next));
		}
		simhash_init_page(newpage, SIMHASH_PENDING, list->generation);
		list->tail = BufferGetBlockNumber(newbuf);
		put_entry(newpage, hash, tid, flags);
		logged[nlogged].buffer = newbuf;
		logged[nlogged++].image = true;
	}
	else
		put_logged_entry(&logged[nlogged++], tailbuf, hash, tid, flags);
	if (exact_count)
		list->nentries++;
	nentries = list->nentries;
	for (int i = 0; i < nlogged; i++)
		MarkBufferDirty(logged[i].buffer);
	simhash_log_pages(index, logged, nlogged);
	END_CRIT_SECTION();

	if (BufferIsValid(newbuf))
		UnlockReleaseBuffer(newbuf);
	if (BufferIsValid(tailbuf))
		UnlockReleaseBuffer(tailbuf);
	return nentries;
}

/* the metapage's lists, for append_meta_locked() */
static SimhashList *
pending_lane(SimhashMetaPageData *meta, int lane)
{
	return &meta->pending[lane];
}

static SimhashList *
nulls_list(SimhashMetaPageData *meta, int lane)
{
	return &meta->nulls;
}

/* The number of lanes of a checked metapage (sv_check_meta() bounds it). */
static inline int
lanes_of(const SimhashMetaPageData *meta)
{
	return meta->nlanes;
}

/*
 * Append (hash, tid) to a pending lane.  Returns 0, or, when the append
 * added a page to a lane, the entries of the lanes' pages other than their
 * tails (the caller flushes when that is large).
 *
 * The common case locks the metapage in share mode only: no flush can take
 * the lanes meanwhile, and appends to other lanes go on in parallel.  Our
 * own lane's tail first, without waiting: if it has room, append there; if
 * the lane is empty or its tail full, add a page to it (or start it) under
 * the metapage's exclusive lock.  Only when another backend holds our
 * tail's lock, the other lanes' tails with room, without waiting, and then
 * our own, waiting.  So concurrent inserters keep to their own lanes: an
 * insert whose lane is empty or full does not append to a lane another
 * backend is filling (it did before: the two then met on one tail page,
 * and one slept on its lock).
 */
uint64
simhash_pending_append(Relation index, uint64 hash, ItemPointer tid)
{
	Buffer		metabuf = simhash_lock_meta(index, BUFFER_LOCK_SHARE);
	SimhashMetaPageData *meta = SimhashPageGetMeta(BufferGetPage(metabuf));
	int			nlanes = lanes_of(meta);
	int			own = SimhashMyProcNumber() % nlanes;
	uint64		full = 0;
	Buffer		spare;

	/* i = 0: our lane; 1 .. nlanes - 1: the others; nlanes: ours, waiting */
	for (int i = 0; i <= nlanes; i++)
	{
		int			lane = (own + i) % nlanes;
		SimhashList *list = &meta->pending[lane];
		Buffer		tailbuf;

		if (list->head == InvalidBlockNumber)
		{
			if (lane == own)
				break;			/* start our lane */
			continue;
		}
		tailbuf = lock_tail(index, list, i < nlanes ? SIMHASH_READ_NOWAIT : 0);
		if (!BufferIsValid(tailbuf))
			continue;			/* another backend is appending there */
		if (has_room(tailbuf, true))
		{
			append_to_tail(index, tailbuf, hash, tid, 0);
			UnlockReleaseBuffer(tailbuf);
			UnlockReleaseBuffer(metabuf);
			return 0;
		}
		UnlockReleaseBuffer(tailbuf);
		if (lane == own)
			break;				/* add a page to our lane */
	}

	/*
	 * Our lane is empty or full: add a page, under the exclusive lock.  The
	 * page is taken first: finding a free page or extending the file can
	 * wait (for the extension lock, for I/O), and every other insert waits
	 * for the metapage meanwhile.  No backend that holds the metapage's lock
	 * waits for a page not yet linked into the index.
	 */
	LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);
	spare = simhash_new_buffer(index);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	(void) append_meta_locked(index, metabuf, pending_lane, own, hash, tid, 0, false, spare);
	meta = SimhashPageGetMeta(BufferGetPage(metabuf));
	for (int i = 0; i < lanes_of(meta); i++)
		full += meta->pending[i].nentries;
	UnlockReleaseBuffer(metabuf);
	return full;
}

/*
 * Append a row whose key is NULL to the nulls list (kept for ordered
 * scans, which return every row), under the metapage's exclusive lock.
 */
void
simhash_nulls_append(Relation index, ItemPointer tid)
{
	Buffer		metabuf = simhash_lock_meta(index, BUFFER_LOCK_EXCLUSIVE);

	(void) append_meta_locked(index, metabuf, nulls_list, 0, 0, tid,
							  SIMHASH_ENTRY_NULL, true, InvalidBuffer);
	UnlockReleaseBuffer(metabuf);
}

/*
 * Copy into lists[] (room for 2 * SIMHASH_MAX_LANES) the non-empty lists of
 * entries with keys that are not in a run: the flushing lanes and/or the
 * pending lanes of a copy of the metapage.  Returns how many.
 */
int
simhash_unsorted_lists(const SimhashMetaPageData *meta, bool flushing, bool pending,
					   SimhashList *lists)
{
	int			n = 0;

	for (int i = 0; i < lanes_of(meta); i++)
	{
		if (flushing && meta->flushing[i].head != InvalidBlockNumber)
			lists[n++] = meta->flushing[i];
		if (pending && meta->pending[i].head != InvalidBlockNumber)
			lists[n++] = meta->pending[i];
	}
	return n;
}

/*
 * The entries of the unsorted lists and the nulls list as the metapage
 * counts them; *exact is false when pending lanes' tail pages hold more.
 */
uint64
simhash_unsorted_nentries(const SimhashMetaPageData *meta, bool *exact)
{
	uint64		n = meta->nulls.nentries;

	*exact = true;
	for (int i = 0; i < lanes_of(meta); i++)
	{
		n += meta->flushing[i].nentries + meta->pending[i].nentries;
		if (meta->flushing[i].head != InvalidBlockNumber ||
			meta->pending[i].head != InvalidBlockNumber)
			*exact = false;
	}
	return n;
}

/* Make a list of the metapage empty. */
void
simhash_clear_list(SimhashList *list)
{
	list->head = list->tail = InvalidBlockNumber;
	list->nentries = 0;
	list->generation = 0;
}

/*
 * For a flush, in a copy of the metapage (locked exclusively: no append is
 * under way): unless a flush left flushing lanes behind (it failed), every
 * pending lane becomes the flushing lane of the same number, and the
 * pending lanes are empty.  Returns the number of non-empty flushing lanes.
 */
int
simhash_take_pending(SimhashMetaPageData *meta)
{
	int			n = 0;

	for (int i = 0; i < lanes_of(meta); i++)
		n += (meta->flushing[i].head != InvalidBlockNumber);
	if (n > 0)
		return n;
	for (int i = 0; i < lanes_of(meta); i++)
	{
		meta->flushing[i] = meta->pending[i];
		simhash_clear_list(&meta->pending[i]);
		n += (meta->flushing[i].head != InvalidBlockNumber);
	}
	return n;
}
