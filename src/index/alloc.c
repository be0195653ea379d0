/*
 * alloc.c
 *		Where the simhash index (design: README.md) puts new pages, and whether
 *		VACUUM may recycle what it has just replaced.
 *
 * The file's size is its high-water mark, so new pages are taken from the
 * free space map lowest-first: runs fill the holes at the start of the
 * file, and the free pages gather at its end, where VACUUM truncates them.
 * The map's own search (GetFreeIndexPage()) returns a free page near a
 * moving hint, not the lowest one; so simhash_take_free_page() asks it for
 * any free page (an upper bound) and then looks, block by block from a
 * per-backend cursor, for the lowest page the map records as free.
 *
 * The cursor stays where it is from one flush to the next: a page this
 * backend gives back (simhash_give_free_page(), which every page freed by
 * the index's code goes through) moves it down to that page, and a page
 * the map offers below it (one that another backend freed) makes that
 * search start from the floor again.  So a flush looks at the few blocks
 * from the lowest page it recycled, not at every block from the start of
 * the file.  A page another backend freed below the cursor is taken as
 * soon as the map offers it; until then this backend takes the lowest free
 * page above it, never a new block while the map records a free page.
 * The cursor follows one index: a backend that writes to two simhash
 * indexes in turn starts from the floor each time it turns.
 *
 * A floor (simhash_alloc_restart(), for the current transaction) keeps
 * pages below it untouched: VACUUM's compaction first moves the index above
 * its target size, then back below.
 */
#include "postgres.h"

#include "access/transam.h"
#include "commands/vacuum.h"
#include "storage/freespace.h"
#include "storage/indexfsm.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/rel.h"

#include "am.h"

/* this backend's allocation cursor, for one index (by relfilenode) */
typedef struct AllocCursor
{
	SimhashRelFile node;
	BlockNumber from;			/* no free page below it, as far as we know */
	BlockNumber floor;			/* never take pages below it ... */
	LocalTransactionId floor_xact;	/* ... in this transaction */
} AllocCursor;

static AllocCursor cursor;

/*
 * The cursor of this index (reset when the index is another one, and to
 * the start when a transaction left a floor behind).
 */
static AllocCursor *
index_cursor(Relation index)
{
	if (!SimhashRelFileEquals(cursor.node, SimhashRelationFile(index)))
	{
		cursor.node = SimhashRelationFile(index);
		cursor.from = SIMHASH_METAPAGE_BLKNO + 1;
		cursor.floor = SIMHASH_METAPAGE_BLKNO + 1;
	}
	if (cursor.floor_xact != SimhashMyLocalTransactionId())
	{
		/* a floor set by an earlier transaction (one that failed half-way) */
		if (cursor.floor > SIMHASH_METAPAGE_BLKNO + 1)
			cursor.from = SIMHASH_METAPAGE_BLKNO + 1;
		cursor.floor = SIMHASH_METAPAGE_BLKNO + 1;
		cursor.floor_xact = SimhashMyLocalTransactionId();
	}
	return &cursor;
}

/*
 * Set the floor for the current transaction (1: none) and start taking
 * pages from the lowest free one at or above it; called before a build's
 * merge and the steps of VACUUM's compaction.  Flushes keep the cursor
 * where it is.
 */
void
simhash_alloc_restart(Relation index, BlockNumber floor)
{
	AllocCursor *c = index_cursor(index);

	c->floor = Max(floor, SIMHASH_METAPAGE_BLKNO + 1);
	c->from = c->floor;
}

/*
 * Give a page that is free (marked so on the page, or never used) to the
 * free space map; the next page this backend takes is looked for from
 * there if it is below the cursor.
 */
void
simhash_give_free_page(Relation index, BlockNumber blkno)
{
	AllocCursor *c = index_cursor(index);

	RecordFreeIndexPage(index, blkno);
	if (blkno < c->from)
		c->from = Max(blkno, c->floor);
}

/*
 * The lowest page at or above the floor that the free space map records as
 * free, taken out of the map; InvalidBlockNumber if there is none (the
 * caller extends the file).  The caller checks that the page is really
 * free (the map is not crash-safe).
 */
BlockNumber
simhash_take_free_page(Relation index)
{
	AllocCursor *c = index_cursor(index);
	BlockNumber any = GetPageWithFreeSpace(index, BLCKSZ / 2);
	BlockNumber from = Max(c->from, c->floor);
	BlockNumber to;

	if (any == InvalidBlockNumber)
		return InvalidBlockNumber;
	if (any >= from)
		to = any;				/* found at the latest there */
	else if (c->floor > SIMHASH_METAPAGE_BLKNO + 1)
		to = RelationGetNumberOfBlocks(index) - 1;	/* the map's is below the floor */
	else
	{
		/* a page below the cursor was freed since: look from the start */
		from = c->floor;
		to = any;
	}
	for (BlockNumber blkno = from; blkno <= to && blkno != InvalidBlockNumber; blkno++)
	{
		if (GetRecordedFreeSpace(index, blkno) >= BLCKSZ / 2)
		{
			RecordUsedIndexPage(index, blkno);
			c->from = blkno + 1;
			return blkno;
		}
	}
	c->from = to + 1;
	return InvalidBlockNumber;
}

/*
 * May pages retired at xid be recycled now, though the global horizon does
 * not say so yet?  Yes when no backend of any database (other than this
 * one, and those running VACUUM, which the global horizon ignores too: they
 * read no index but their table's) holds a snapshot whose xmin is at or
 * before xid and no replication slot holds such an xmin: a scan that copied the metapage
 * before the retirement would hold one.  A snapshot taken later reads the
 * metapage as it is now.  Standbys are told the horizon as always
 * (recycle.c), so no transaction with an xid before it may still run.  For VACUUM, which otherwise could recycle only at its next
 * run what it replaces (the global horizon passes xid only once a later
 * transaction has completed).
 */
bool
simhash_no_snapshot_before(FullTransactionId xid)
{
	TransactionId limit = XidFromFullTransactionId(xid);
	TransactionId slot_xmin;
	TransactionId slot_catalog_xmin;
	VirtualTransactionId *vxids;
	int			n;

	/*
	 * Every xid before it completed: the standby has replayed their commit
	 * or abort records, so its next xid is at least xid when it replays the
	 * horizon (else ResolveRecoveryConflictWithSnapshotFullXid() would take
	 * xid for one from before a wrap-around and resolve nothing).
	 */
	if (TransactionIdPrecedes(GetOldestActiveTransactionId(), limit))
		return false;
	ProcArrayGetReplicationSlotXmin(&slot_xmin, &slot_catalog_xmin);
	if (TransactionIdIsValid(slot_xmin) && TransactionIdPrecedesOrEquals(slot_xmin, limit))
		return false;
	vxids = GetCurrentVirtualXIDs(limit, true, true, PROC_IN_VACUUM, &n);
	pfree(vxids);
	return n == 0;
}
