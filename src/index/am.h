/*
 * am.h
 *		The simhash index access method: its design (this comment is its one
 *		write-up; other documents point here), page layout, and the
 *		declarations shared by its files:
 *
 *	handler.c	the handler (callbacks, properties) and the reloptions
 *	build.c		CREATE INDEX: read the table, write one run (chunks merged)
 *	build_scan.c	its heap scan by parallel workers, merged into a serial
 *				scan's order (the same index, page for page)
 *	build_parallel.c	its run's trees built, WAL-logged and written by
 *				parallel workers, each into its block range (the same
 *				index, page for page)
 *	insert.c	aminsert: append to the pending lanes, flush when they are long
 *	pending.c	the pending lanes and the nulls list: appends (issue #13)
 *	scan.c		index and bitmap scans, ordered scans by distance rings
 *	vacuum.c	ambulkdelete and amvacuumcleanup
 *	cost.c		amcostestimate
 *	validate.c	amvalidate
 *	check.c		simhash_index_check()
 *	pages.c		page initialisation and allocation, the page-access helper
 *				(simhash_read_page(), chains of pages), the metapage
 *	recycle.c	retiring replaced runs and lists, recycling their pages
 *	alloc.c		where new pages go (lowest free first), early recycling
 *	run_write.c	writing runs (a static B+tree per table) and lists
 *	run_read.c	reading runs and lists, walking a run's pages
 *	merge.c		the streaming merge of runs
 *	probe.c		searching runs (probes) and lists
 *	policy.c	the flush and merge policy (merge_from()) and the flush
 *	tidset.c	a sorted set of (TID, hash): the dead entries of a run
 *	leaf.c		the compressed leaves: decoding, searching a prefix,
 *				resolving other tables' hashes in table 0, marking dead
 * and core/index_pages.c, the pure checks of a page image (fuzzed), and
 * core/index_leaf.c, the pure encoding, decoding and searching of the leaves.
 * Dependencies go one way: the callbacks -> policy -> merge -> run_read /
 * run_write -> pages -> alloc; recycle -> run_read, alloc; vacuum ->
 * recycle, policy, alloc.
 *
 * Design (Manku, Jain and Das Sarma 2007, as an LSM tree):
 *
 * The 64 bits are split into m blocks (reloption "blocks"); for k
 * ("max_distance") there are C(m, k) tables, each ordering the fingerprints
 * by a permutation that puts m - k chosen blocks first (blocks.h).  Two
 * fingerprints within k bits share the prefix in at least one table; within
 * r > k bits, they share it up to some error in some table, so a lookup
 * probes, in the tables of the radius's probe plan (core/probe_plan.h: the
 * cheapest cover of every way of spreading r differing bits over the
 * blocks, computed once per backend), every prefix within the table's
 * error of the query's (multi-probe), and every radius is answered
 * exactly.  At the default (4 blocks, 3) radius 4 / 5 / 6 probe 20 / 36 / 52
 * prefixes (one table at error 1 and three exact, ...) instead of 4 x 17 =
 * 68, and radius 0 / 1 / 2 need only 1 / 2 / 3 tables.  A table's prefixes
 * are probed in ascending order; each descent starts from the deepest inner
 * page of the previous one whose key range holds the prefix (the path is
 * kept pinned), and the last leaf is kept pinned and locked again when the
 * next prefix starts in it (probe.c).  Inner pages are read from copies each
 * backend keeps per index (a registry of at most 32 indexes, each in its
 * own memory context, dropped when the index's relcache entry is
 * invalidated: simhash_cache_token()), keyed by (block, generation)
 * (a live run never changes them; the leaves are still read and checked,
 * and a metapage whose next generation went down drops them), so a
 * radius-3 lookup at the default reads the metapage, the run header and
 * 4 leaves (plus table 0's leaf of each hash another table found); the
 * tables' permutations are computed once per backend.  A run is read
 * whole (table 0's leaves) instead only when its probes would visit more
 * pages than 6 times its leaves (decoding and testing a whole leaf costs
 * about 6 probe visits, probe.c): at radius 3 almost never, so the small
 * runs that merges leave beside a large one are probed too.
 *
 * Entries are (64-bit hash, heap TID, flags).  They live in:
 *	- runs: immutable sets of entries.  For each table a run holds a static
 *	  B+tree: compressed leaves sorted by the table's permuted hash, linked
 *	  left to right, and inner pages of (first key, child) items.  Table 0's
 *	  tree (whose permutation is the identity, blocks.h) holds the entries:
 *	  hash, TID and dead bit; the other tables' trees hold only their
 *	  permuted hashes, one per entry, and a search resolves a matching hash
 *	  to its TIDs in table 0's tree of the same run (see "Format").  A run
 *	  header page lists the trees' roots.  Only the entries' dead bits ever
 *	  change (VACUUM, in table 0's tree only).
 *	- the pending lanes: SIMHASH_MAX_LANES lists (meta->nlanes of them in
 *	  use) of pages of unsorted entries that inserts append to; every scan
 *	  reads all of them.  And the nulls list, of rows whose key is NULL.
 * When the lanes are long, they are sorted together into a new run; runs of
 * similar size are merged (geometrically: each entry is rewritten O(log n)
 * times; policy.c merges a run with the newer ones while it holds at most
 * twice their entries).  VACUUM marks dead entries, flushes, and rewrites runs with many
 * dead entries.  Pages of replaced runs and lists are "retired" with the
 * next transaction id and recycled (free space map) only once no snapshot
 * can still be reading them; every page carries the generation of the run
 * or list it belongs to, and readers check it.
 *
 * Size under churn (issue #13, goal 2).  The file's size is its high-water
 * mark, and a merge that takes the largest run needs room for the new run
 * beside the old one (about twice the index, briefly).  So:
 *	- new pages are the lowest free ones (alloc.c: the FSM's own search
 *	  returns any free page, which bounds a block-by-block search from a
 *	  per-backend cursor), so that runs fill holes at the start and free
 *	  pages gather at the end;
 *	- VACUUM truncates the free pages at the end (vacuum.c), under an
 *	  ExclusiveLock on the index taken without waiting and the heavyweight
 *	  lock on the metapage's block: that keeps out every backend that
 *	  allocates pages (inserts hold RowExclusiveLock; flushes, merges and
 *	  simhash_index_check() take the heavyweight lock), and scans never read
 *	  a free page.  Not an AccessExclusiveLock: that would need an xid,
 *	  which a parallel VACUUM (the default for a table with two indexes)
 *	  cannot assign, and would cancel every standby query on the index;
 *	- VACUUM compacts (vacuum.c) when the file, not counting its free end,
 *	  is more than 1.15 times (and 16 pages) what its live entries would
 *	  take as one run: it rewrites all runs and the pending lanes as one run into the lowest pages (first above the target size
 *	  and then back below it, when the pages below cannot take it), and
 *	  truncates.  What these merges replace is recycled at once when no
 *	  backend holds a snapshot old enough to read it (alloc.c; otherwise
 *	  the compaction is not done), not only once the global horizon has
 *	  passed (which needs a later transaction to complete);
 *	- a chunked CREATE INDEX copies its merged run into the chunks' pages
 *	  and truncates the rest (build.c), so it is as large as a build in
 *	  memory.
 * No page layout changed for this.
 *
 * Format (SIMHASH_VERSION 2, in the metapage; issue #13):
 *
 * Every page has the standard page header and SimhashPageOpaqueData as its
 * special space.  Run headers, inner pages (16-byte (key, child) items),
 * pending lane and nulls list pages (16-byte SimhashEntry items) and pages
 * of retired items are as in version 1; the metapage (block 0) has the
 * pending lanes (see "Concurrent inserts" below).  The leaves of a
 * run's trees are compressed (core/index_leaf.h):
 *	SvLeafHeader: base (8: the first key), count (2), key_bytes (1),
 *	              tid_bytes (1), off_bits (1), pad (3)
 *	count keys, each key - base in key_bytes bytes (little-endian)
 *	table 0 (SIMHASH_LEAF) only: count TIDs, each (block << off_bits) |
 *	offset in tid_bytes bytes, then a dead bitmap of ceil(count / 8) bytes
 * The widths are the smallest that hold the leaf's largest key - base and
 * TID code; the writer fills a leaf until the next entry would not fit in
 * the page (at most 4096 entries).  A lookup finds a prefix's range in a
 * leaf on the fixed-width keys by interpolation between the leaf's first
 * and last keys and galloping from the guess (sv_seek(), index_leaf.h: the
 * keys are near-uniform hashes, so the guess is usually a cache line or two
 * off, where a binary search of ~800 keys touched ~10 lines; a skewed leaf
 * still costs O(log n)), the range's start and then its end, prefetches
 * the range's lines and compares its keys with the query's without testing
 * the prefix (sv_leaf_match(): four keys a step with AVX2, else one by one
 * with popcnt or portably, chosen at run time); inner pages' children are
 * found by the same search.  VACUUM sets dead bits in place (generic WAL);
 * table 1 .. n-1's leaves (SIMHASH_KEY_LEAF) hold no TIDs and no flags.
 *
 * A search of table t >= 1 collects the hashes within the radius, and after
 * all tables resolves those table 0 did not find itself (sorted, unique) by
 * a descent of table 0's tree to the exact hash, passing on its live
 * entries (leaf.c).  Every TID is so reported at most once per run.
 * Merges stream each table as before; table 0's dead entries are collected
 * as hashes, and each other table skips one equal key per dead hash.
 *
 * The arithmetic (defaults: blocks 4, max_distance 3, 4 tables; 1M rows of
 * random hashes, a table of ~5,400 heap pages):
 *	- a leaf of n keys spans 2^64 * n / N of the key space, so key - base
 *	  needs 64 - log2(N / n) bits: with ~1,000 entries per leaf, 54 bits,
 *	  7 bytes (at 10M rows still 7: 51 bits);
 *	- a TID code needs log2(heap pages) + log2(tuples per page) bits:
 *	  13 + 8 = 21, 3 bytes (4 beyond 2^24 / tuples-per-page heap pages);
 *	- table 0: 7 + 3 + 1/8 = 10.1 bytes per entry; each other table: 7;
 *	  4 tables: 10.1 + 3 * 7 = 31.1 bytes per row, plus page headers and
 *	  the inner levels (~0.2%), against 4 * 16 = 64 in version 1.
 *	- the alternative, the same compression in every tree with TIDs and
 *	  dead bits in each: 4 * 10.1 = 40.5 bytes per row, above the goal of
 *	  40; keys shared by 16-entry groups (6 bytes) would have saved 1 byte
 *	  per key for a group header each and a slower decode.
 * Measured (shared 2-core machine, load 8-11, old and new in the same
 * session): 31.5 bytes per row at 1M rows (64.6 before), 31.4 at 10M (64.5);
 * blocks 5 / 6 / 8 with max_distance 3: 74 / 145 / 400 (161 / 323 / 904).
 * Radius-3 median lookups unchanged (1M: 0.014 against 0.013 ms; 10M:
 * 0.021-0.022 against 0.022); CREATE INDEX takes 0.82 times the CPU of
 * format 1 (half the pages to write, more than the full 64-bit sort and the
 * encoding cost).
 *
 * An index whose metapage has another format version is refused on every
 * path that reads its metapage (scans, inserts, VACUUM,
 * simhash_index_check()) with ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE
 * and a hint to REINDEX it (pages.c, check_meta()).
 *
 * Concurrency: the metapage lists the runs and pending lists; scans copy it
 * under a share lock and then read immutable pages (and the lists, which
 * only grow).  Flushes, merges and VACUUM's changes are serialised by a
 * heavyweight lock on the metapage's block number.  Every change is
 * WAL-logged with generic WAL records, except an append to a pending
 * lane's tail page (below), and each page a flush or merge writes whole
 * (a run's pages) or frees, logged as a full-page image (core XLOG_FPI
 * records, simhash_write_page_image()).  CREATE INDEX logs
 * its new pages as full images (log_newpage_range() at its end; a parallel
 * build's trees with log_newpages() from the participant that wrote them
 * past the buffers, the file fsynced before the commit, build_parallel.c).
 *
 * Concurrent inserts (issue #13, pending.c): an insert appends its entry to
 * its backend's own pending lane (its PGPROC number modulo nlanes), and
 * starts that lane or adds a page to it when the lane is empty or its tail
 * full; only when another backend holds that tail page's lock does it try
 * the other lanes' tails, without waiting, and then its own, waiting.  So
 * two inserters do not meet on one tail page (session 7: before, an insert
 * whose lane was empty or full appended to another backend's lane, and
 * the two then contended for its tail).  The common append holds the metapage's
 * lock in share mode (so that no flush swaps the lanes out meanwhile) and
 * the lane's tail page exclusively, and WAL-logs the tail page only: the
 * metapage is neither locked exclusively nor written.  Only starting a
 * lane or linking a new page to it locks the metapage exclusively (then the
 * tail page; the lock order is always metapage, then tail page, and a
 * flush locks no tail page).  An append to the tail page is WAL-logged as
 * a full-page image of it, a core XLOG_FPI record (log_newpage_buffer();
 * the page's used part, without its hole; redo restores the page), not a
 * generic record: GenericXLogFinish() compares the page's used part byte
 * by byte and copies and zeroes the rest, which cost more CPU than the
 * whole insert gained elsewhere (callgrind: the index's share of a
 * single-row insert 27.4k instructions before, ~12k after; WAL per insert
 * 331 bytes before, ~560 + 50 after with 64-entry pages; a table without
 * an index writes 116).  A lane's pages hold at most 64 entries (session 6;
 * 128 in session 5's format 2, 510 before; pending.c), which bounds that
 * image; readers accept any count up to a full page (SIMHASH_PAGE_ITEMS),
 * so indexes written with longer lane pages stay readable, and an append
 * finds such a tail full and links a new page.  A lane's nentries counts the entries of its pages before its tail page
 * (exact: those pages are full and only their dead flags change); the
 * tail's own entries are its item count.  The nulls list (rare) is
 * appended under the metapage's exclusive lock and its nentries is exact.
 * A flush, under the metapage's exclusive lock (so that no append is under
 * way), moves every pending lane to the flushing lane of the same number,
 * sorts the flushing lanes into a run and retires them:
 * an entry is in exactly one lane, pending or flushing, or in a run.
 * Metapage layout (part of format version 2): pending[SIMHASH_MAX_LANES]
 * and flushing[SIMHASH_MAX_LANES] replace version 1's one pending and one
 * flushing list, and nlanes (SIMHASH_DEFAULT_LANES, 4, at CREATE INDEX)
 * takes the place of the padding after nretired.
 *
 * Standby safety (issue #13): a scan on a hot standby copies the metapage
 * and reads pages afterwards, as on the primary, but the primary's
 * recycling horizon does not see standby snapshots (without
 * hot_standby_feedback).  So before it frees the pages of retired runs and
 * lists, simhash_recycle() WAL-logs the newest xid among them as a conflict
 * horizon; replaying it, the standby resolves the conflict as for
 * PostgreSQL's own indexes: it waits up to max_standby_streaming_delay for
 * the queries whose snapshot's xmin is at or before the horizon, then
 * cancels them with the standard "canceling statement due to conflict with
 * recovery" (or terminates an idle session in a transaction).  Only then
 * does it replay the freeing, so a standby scan never reads a recycled page
 * (simhash_read_page()'s 40001 stays as a safety net).  The record is
 * nbtree's XLOG_BTREE_REUSE_PAGE (RM_BTREE_ID), the one core record whose
 * redo does nothing but ResolveRecoveryConflictWithSnapshotFullXid() for
 * the record's database; it names the index's relfilenode and metapage
 * block, which its redo does not touch.  The options weighed:
 *	- a custom WAL resource manager (RegisterCustomRmgr, PostgreSQL 15) would
 *	  carry a record of our own, but must be loaded through
 *	  shared_preload_libraries on the primary and on every standby (else the
 *	  standby cannot replay and stops): not for a user who only runs
 *	  CREATE EXTENSION;
 *	- generic WAL has no field for a horizon, and hot_standby_feedback or
 *	  vacuum_defer_cleanup_age leave the problem to the user;
 *	- nbtree's record (chosen) works with CREATE EXTENSION alone.  Its cost:
 *	  it ties the extension to the server's nbtree record layout (compiled
 *	  from the server's own nbtxlog.h, so each major version is a rebuild and
 *	  a check of that redo), pg_waldump shows "Btree/REUSE_PAGE" for the
 *	  simhash index, and the conflict is as coarse as nbtree's (every query
 *	  of the database whose xmin is at or before the horizon).
 */
#ifndef SIMHASH_AM_H
#define SIMHASH_AM_H

#include "access/amapi.h"
#include "access/tableam.h"
#include "access/generic_xlog.h"
#include <time.h>
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "access/transam.h"
#include "storage/block.h"
#include "storage/bufmgr.h"
#include "storage/itemptr.h"
#include "utils/rel.h"
#include "utils/relcache.h"

#include "compat.h"
#include "simhash.h"

#include "core/blocks.h"
#include "core/index_leaf.h"

#define SIMHASH_MAGIC			0x53485831	/* "SHX1" */
#define SIMHASH_VERSION			2	/* the on-disk format (see "Format" above) */
#define SIMHASH_METAPAGE_BLKNO	0
#define SIMHASH_PAGE_ID			0xFF8A

/* reloption defaults and limits */
#define SIMHASH_DEFAULT_BLOCKS			4
#define SIMHASH_DEFAULT_MAX_DISTANCE	3
/* the table limit, SIMHASH_MAX_INDEX_TABLES, is in core/blocks.h */

/* build phases reported in pg_stat_progress_create_index */
#define SIMHASH_BUILD_PHASE_SCAN	2	/* reading the table */
#define SIMHASH_BUILD_PHASE_WRITE	3	/* sorting the tables, writing the run */

/* strategy numbers of the operator class */
#define SIMHASH_WITHIN_STRATEGY			1	/* simhash64 <@ simhash_ball */
#define SIMHASH_DISTANCE_STRATEGY		2	/* ORDER BY simhash64 <~> simhash64 */
#define SIMHASH_NEAR_STRATEGY			3	/* simhash_ball && simhash_ball */
#define SIMHASH_NSTRATEGIES				3

/* page kinds */
#define SIMHASH_META		1
#define SIMHASH_RUN_HEADER	2
#define SIMHASH_INNER		3
#define SIMHASH_LEAF		4
#define SIMHASH_PENDING		5
#define SIMHASH_FREE		6	/* recycled; listed in the free space map */
#define SIMHASH_RETIRED_PAGE 7	/* retired items that overflowed the metapage */
#define SIMHASH_KEY_LEAF	8	/* a leaf of keys only (tables 1 ..) */

/* special space of every page */
typedef struct SimhashPageOpaqueData
{
	uint64		generation;		/* the run or list the page belongs to */
	BlockNumber next;			/* leaves and pending pages: the next page */
	uint16		kind;
	uint16		page_id;		/* SIMHASH_PAGE_ID */
} SimhashPageOpaqueData;

typedef SimhashPageOpaqueData *SimhashPageOpaque;

#define SimhashPageGetOpaque(page) \
	((SimhashPageOpaque) PageGetSpecialPointer(page))

/* Is the page free for reuse: never initialised, or marked free by us? */
static inline bool
simhash_page_is_free(Page page)
{
	return PageIsNew(page) ||
		(SimhashPageGetOpaque(page)->page_id == SIMHASH_PAGE_ID &&
		 SimhashPageGetOpaque(page)->kind == SIMHASH_FREE);
}

/* an index entry (pending and nulls list pages; leaves decoded, leaf.c) */
typedef struct SimhashEntry
{
	uint64		hash;
	ItemPointerData tid;
	uint16		flags;
} SimhashEntry;

#define SIMHASH_ENTRY_DEAD	0x0001
#define SIMHASH_ENTRY_NULL	0x0002	/* a NULL key (the nulls list only) */

/* an inner-page item: the first permuted key below child */
typedef struct SimhashInnerItem
{
	uint64		key;
	BlockNumber child;
	uint32		pad;
} SimhashInnerItem;

StaticAssertDecl(sizeof(SimhashEntry) == 16, "SimhashEntry must be 16 bytes");
StaticAssertDecl(sizeof(SimhashInnerItem) == 16, "SimhashInnerItem must be 16 bytes");

/* items per pending or inner page (leaves are compressed: index_leaf.h) */
#define SIMHASH_PAGE_ITEMS \
	((BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(SimhashPageOpaqueData))) / 16)

#define SimhashPageItems(page) \
	((int) (((PageHeader) (page))->pd_lower - MAXALIGN(SizeOfPageHeaderData)) / 16)
#define SimhashPageEntries(page)	((SimhashEntry *) PageGetContents(page))
#define SimhashPageInner(page)		((SimhashInnerItem *) PageGetContents(page))

/* a run's header page: one tree per table */
typedef struct SimhashRunTree
{
	BlockNumber root;
	uint16		height;			/* 0: the root is a leaf */
	uint16		pad;
} SimhashRunTree;

typedef struct SimhashRunHeader
{
	uint64		nentries;
	uint64		ndead;			/* entries marked dead (in each tree) */
	uint32		ntables;
	uint32		npages;			/* pages of the run, the header included */
	SimhashRunTree trees[FLEXIBLE_ARRAY_MEMBER];
} SimhashRunHeader;

#define SimhashPageRunHeader(page)	((SimhashRunHeader *) PageGetContents(page))

/* the metapage */
#define SIMHASH_MAX_RUNS	48
#define SIMHASH_MAX_RETIRED 64

typedef struct SimhashRunRef
{
	BlockNumber header;
	uint32		pad;
	uint64		nentries;
	uint64		generation;
} SimhashRunRef;

typedef struct SimhashList
{
	BlockNumber head;			/* InvalidBlockNumber: empty */
	BlockNumber tail;
	uint64		nentries;		/* lanes: before the tail page (see above) */
	uint64		generation;
} SimhashList;

/* pending lanes (issue #13): room in the metapage, and how many are used */
#define SIMHASH_MAX_LANES		8
#define SIMHASH_DEFAULT_LANES	4

#define SIMHASH_RETIRED_RUN		1
#define SIMHASH_RETIRED_LIST	2
#define SIMHASH_RETIRED_MORE	3	/* a page of further retired items */

typedef struct SimhashRetired
{
	BlockNumber head;			/* run header, or first page of a list */
	uint16		kind;
	uint16		pad;
	FullTransactionId xid;		/* recyclable once no snapshot sees it */
	uint64		generation;		/* of the run or list (0: a page of items) */
} SimhashRetired;

typedef struct SimhashMetaPageData
{
	uint32		magic;
	uint32		version;
	int32		nblocks;
	int32		max_distance;
	int32		ntables;
	int32		nruns;
	uint64		next_generation;
	SimhashList pending[SIMHASH_MAX_LANES];	/* appended to by inserts */
	SimhashList flushing[SIMHASH_MAX_LANES];	/* being sorted into a run */
	SimhashList nulls;			/* rows whose key is NULL (for ordered scans) */
	SimhashRunRef runs[SIMHASH_MAX_RUNS];	/* oldest (largest) first */
	int32		nretired;
	int32		nlanes;			/* pending lanes in use, 1..SIMHASH_MAX_LANES */
	SimhashRetired retired[SIMHASH_MAX_RETIRED];
} SimhashMetaPageData;

#define SimhashPageGetMeta(page)	((SimhashMetaPageData *) PageGetContents(page))
#define SimhashPageRetired(page)	((SimhashRetired *) PageGetContents(page))

StaticAssertDecl(sizeof(SimhashMetaPageData) <= BLCKSZ - 200, "metapage too large");

/* reloptions */
typedef struct SimhashOptions
{
	int32		vl_len_;
	int			blocks;
	int			max_distance;
} SimhashOptions;

/*
 * The fingerprint an index stores for a key value.  An index on simhash64
 * (operator class simhash_ops) stores the value; an index on simhash_ball
 * (simhash_ball_ops, the key of a near-duplicate exclusion constraint)
 * stores the ball's center, and its scans recheck the radius (see
 * "Exclusion constraints" above).  The two are told apart by the key's
 * representation: simhash64 is 8 bytes by value, simhash_ball 16 by
 * reference.
 */
static inline bool
simhash_keys_are_balls(Relation index)
{
	Form_pg_attribute att = TupleDescAttr(RelationGetDescr(index), 0);

	return !att->attbyval && att->attlen == (int16) sizeof(SimhashBall);
}

static inline uint64
simhash_key_hash(Relation index, Datum value)
{
	if (simhash_keys_are_balls(index))
		return DatumGetSimhashBallP(value)->center;
	return (uint64) DatumGetSimhash64(value);
}

/* ---- pages.c: page initialisation, the page-access helper, metapage ---- */
extern void simhash_init_page(Page page, uint16 kind, uint64 generation);
extern void simhash_write_page_image(Relation index, Buffer buffer, Page image);
extern Buffer simhash_new_buffer(Relation index);
extern Buffer simhash_lock_block(Relation index, BlockNumber blkno, int mode,
								 BufferAccessStrategy strategy);

/* how simhash_read_page() treats a page that is not the one expected */
#define SIMHASH_READ_IF_OURS		0x01	/* return InvalidBuffer */
#define SIMHASH_READ_META_LOCKED	0x02	/* caller holds the metapage's lock */
#define SIMHASH_READ_NOWAIT		0x04	/* page locked by another: InvalidBuffer */

extern Buffer simhash_read_page(Relation index, BlockNumber blkno, int mode,
								uint16 kind, uint64 generation, int flags,
								BufferAccessStrategy strategy);
extern bool simhash_block_exists(Relation index, BlockNumber blkno);
extern uint64 simhash_cache_token(Relation index);
extern void simhash_chain_step(Relation index, BlockNumber *steps, BlockNumber blkno);

/* a walk along a chain of pages (the leaves of a tree, or a list) */
typedef struct SimhashChain
{
	Relation	index;
	BufferAccessStrategy strategy;
	uint16		kind;
	int			mode;			/* buffer lock mode */
	int			flags;			/* of simhash_read_page() */
	uint64		generation;
	BlockNumber blkno;			/* the page last returned */
	BlockNumber next;			/* the page to return next */
	BlockNumber steps;			/* pages read (a cycle is corruption) */
} SimhashChain;

extern void simhash_chain_begin(SimhashChain *chain, Relation index, BlockNumber first,
								uint16 kind, uint64 generation, int mode, int flags,
								BufferAccessStrategy strategy);
extern Buffer simhash_chain_next(SimhashChain *chain);
pg_noreturn extern void simhash_report_corrupt(Relation index, BlockNumber blkno,
											   const char *problem);
extern void simhash_init_metapage(Page page, int nblocks, int max_distance, int ntables);
extern Buffer simhash_lock_meta(Relation index, int mode);
extern void simhash_read_meta(Relation index, SimhashMetaPageData *meta);
extern void simhash_log_meta(Relation index, Buffer metabuf, const SimhashMetaPageData *meta);
extern void simhash_meta_blocks(const SimhashMetaPageData *meta, SimhashBlocks *blocks);

/* ---- pending.c: the pending lanes and the nulls list (issue #13) ---- */
extern uint64 simhash_pending_append(Relation index, uint64 hash, ItemPointer tid);
extern void simhash_nulls_append(Relation index, ItemPointer tid);
extern int	simhash_unsorted_lists(const SimhashMetaPageData *meta, bool flushing,
								   bool pending, SimhashList *lists);
extern uint64 simhash_unsorted_nentries(const SimhashMetaPageData *meta, bool *exact);
extern void simhash_clear_list(SimhashList *list);
extern int	simhash_take_pending(SimhashMetaPageData *meta);

/* ---- alloc.c: lowest-first page allocation, VACUUM's early recycling ---- */
extern void simhash_alloc_restart(Relation index, BlockNumber floor);
extern BlockNumber simhash_take_free_page(Relation index);
extern bool simhash_no_snapshot_before(FullTransactionId xid);
extern BlockNumber simhash_without_free_tail(Relation index, BlockNumber nblocks,
											 BufferAccessStrategy strategy);

/* ---- recycle.c: retiring replaced runs and lists, recycling their pages ---- */
extern void simhash_retire(Relation index, SimhashMetaPageData *meta,
						   BlockNumber head, uint16 kind, uint64 generation);
extern BlockNumber simhash_recycle(Relation index, BufferAccessStrategy strategy);
extern BlockNumber simhash_recycle_early(Relation index, BufferAccessStrategy strategy);
extern void simhash_free_page(Relation index, BlockNumber blkno,
							  BufferAccessStrategy strategy);
extern SimhashRetired *simhash_read_retired_page(Relation index, BlockNumber blkno,
												 int *n, BufferAccessStrategy strategy);

/* ---- run_write.c: writing runs and lists ---- */

/* entries to write as a run (arrays of n, in any order) */
typedef struct SimhashRunInput
{
	uint64	   *hashes;
	ItemPointerData *tids;
	size_t		n;
} SimhashRunInput;

/*
 * how to write pages: during CREATE INDEX (WAL at the end), logged each, or
 * into memory (a parallel build's tree: blocks numbered from 0, moved to
 * their place and written by build_parallel.c)
 */
typedef enum SimhashWriteMode
{
	SIMHASH_WRITE_BUILD,
	SIMHASH_WRITE_LOGGED,
	SIMHASH_WRITE_MEMORY
} SimhashWriteMode;

/* the pages of one run or list being written */
typedef struct SimhashRunWriter
{
	Relation	index;
	SimhashWriteMode mode;
	uint64		generation;
	uint32		npages;			/* pages written */
	/* SIMHASH_WRITE_MEMORY: pages 0 .. nalloc - 1, room for memcap */
	char	   *mem;
	uint32		nalloc;
	uint32		memcap;
} SimhashRunWriter;

/*
 * One tree being written, entry by entry in its table's order: leaves are
 * filled (compressed) and linked as they come, and their first keys
 * collected for the inner levels, written by simhash_tree_end().
 */
typedef struct SimhashTreeWriter
{
	SimhashRunWriter *w;
	int			table;			/* 0: entry leaves, else key leaves */
	PGAlignedBlock image;		/* a page being written */
	SvLeafBuilder *leaf;		/* the leaf being filled (core/index_leaf.h) */
	Buffer		cur;			/* its buffer (none in memory) */
	BlockNumber curblk;			/* its block, InvalidBlockNumber before the first */
	SimhashInnerItem *level;	/* (first key, leaf) of every leaf */
	size_t		nlevel;
	size_t		caplevel;
	uint64		nentries;
} SimhashTreeWriter;

/* room to sort n entries for one table (simhash_table_sort()) */
typedef struct SimhashSortSpace
{
	uint64	   *keys;			/* the permuted hashes, sorted */
	uint32	   *order;			/* their positions in the input */
	uint64	   *tmpkeys;
	uint32	   *tmporder;
} SimhashSortSpace;

extern void simhash_run_input_reserve(SimhashRunInput *in, size_t n);
extern void simhash_sort_space_alloc(SimhashSortSpace *space, size_t n);
extern void simhash_sort_space_free(SimhashSortSpace *space);
extern void simhash_writer_init(SimhashRunWriter *w, Relation index,
								SimhashWriteMode mode, uint64 generation);
extern Buffer simhash_run_header_begin(SimhashRunWriter *w, Page image, int ntables);
extern void simhash_run_header_end(SimhashRunWriter *w, Buffer buffer, Page image);
extern void simhash_finish_page(SimhashRunWriter *w, Buffer buffer, Page image);
extern void simhash_tree_begin(SimhashTreeWriter *tw, SimhashRunWriter *w, int table);
extern void simhash_tree_add(SimhashTreeWriter *tw, uint64 hash, ItemPointer tid, uint64 key);
extern BlockNumber simhash_tree_end(SimhashTreeWriter *tw, uint16 *height);
extern BlockNumber simhash_write_tree(SimhashRunWriter *w, int t, const SimhashRunInput *input,
									  const uint64 *keys, const uint32 *order,
									  uint16 *height);
extern BlockNumber simhash_write_run(Relation index, const SimhashBlocks *blocks,
									 const SimhashRunInput *input, uint64 generation,
									 SimhashWriteMode mode);
extern void simhash_write_list(Relation index, const SimhashRunInput *input,
							   uint16 flags, SimhashList *list, SimhashWriteMode mode);

/* ---- run_read.c: reading runs and lists, visiting a run's pages ---- */
extern SimhashRunHeader *simhash_read_run_header(Relation index, BlockNumber blkno,
												 uint64 generation,
												 BufferAccessStrategy strategy);
extern int	simhash_inner_child(const SimhashInnerItem *items, int n, uint64 prefix,
								uint64 mask);
extern BlockNumber simhash_descend(Relation index, const SimhashRunTree *tree,
								   uint64 generation, uint64 prefix, uint64 mask,
								   BufferAccessStrategy strategy);

/* The leftmost leaf of a tree (of a checked run header). */
static inline BlockNumber
simhash_leftmost_leaf(Relation index, const SimhashRunTree *tree, uint64 generation,
					  BufferAccessStrategy strategy)
{
	return simhash_descend(index, tree, generation, 0, 0, strategy);
}

/* receives the entries of each page of a chain */
typedef void (*SimhashEntriesFn) (const SimhashEntry *entries, int n, void *arg);
extern void simhash_walk_chain(Relation index, BlockNumber first, uint16 kind,
							   uint64 generation, SimhashEntriesFn fn, void *arg);

extern void simhash_read_run_entries(Relation index, const SimhashRunRef *run,
									 SimhashRunInput *out, bool skip_dead);
extern void simhash_read_list_entries(Relation index, const SimhashList *list,
									  SimhashRunInput *out, bool skip_dead);

/* callback over every page of a run (for recycling) */
typedef void (*SimhashPageVisitor) (Relation index, BlockNumber blkno, void *arg);
extern void simhash_visit_run_pages(Relation index, BlockNumber header,
									uint64 generation, SimhashPageVisitor visit,
									void *arg, BufferAccessStrategy strategy);

/* ---- tidset.c: a sorted set of (TID, hash) pairs, the dead entries ---- */
typedef struct SimhashTidSetItem
{
	ItemPointerData tid;
	bool		used;			/* taken (simhash_tidset_take()) */
	uint64		hash;
} SimhashTidSetItem;

typedef struct SimhashTidSet
{
	SimhashTidSetItem *items;
	size_t		n;
	size_t		cap;
	bool		sorted;			/* simhash_tidset_sort() since the last add */
} SimhashTidSet;

extern void simhash_tidset_add(SimhashTidSet *set, ItemPointer tid, uint64 hash);
extern void simhash_tidset_sort(SimhashTidSet *set);
extern bool simhash_tidset_contains(const SimhashTidSet *set, ItemPointer tid);
extern bool simhash_tidset_take(SimhashTidSet *set, ItemPointer tid, uint64 hash);
extern void simhash_tidset_reset(SimhashTidSet *set);
extern void simhash_tidset_free(SimhashTidSet *set);

/* ---- merge.c: the streaming merge of runs ---- */
extern BlockNumber simhash_merge_runs(Relation index, const SimhashBlocks *blocks,
									  const SimhashRunRef *runs, int nruns,
									  const SimhashRunInput *list, uint64 generation,
									  SimhashWriteMode mode, uint64 *nentries);

/* ---- probe.c: searching runs and lists ---- */

/* receives matching entries (a scan filters and batches them) */
typedef struct SimhashMatches
{
	void		(*fn) (void *arg, ItemPointer tid, uint64 hash);
	void	   *arg;
} SimhashMatches;

extern void simhash_search_run(Relation index, const SimhashBlocks *blocks,
							   const SimhashRunRef *run, uint64 center, int radius,
							   SimhashMatches *out);
extern void simhash_search_list(Relation index, const SimhashList *list,
								uint64 center, int radius, SimhashMatches *out);
extern bool simhash_search_reads_all(const SimhashBlocks *blocks, int radius, uint64 nentries);
/* the probe plan of a radius (0 .. 64) for these blocks, cached per backend */
struct SimhashProbePlan;
extern const struct SimhashProbePlan *simhash_search_plan(const SimhashBlocks *blocks,
														  int radius);

/*
 * Entries of a table-0 leaf, for estimates: 7-byte keys, 3-byte TIDs and a
 * dead bit each ("Format": 1M to 10M rows), about 805 a page; the other
 * tables' leaves hold about 1,160 (7 bytes each).
 */
#define SIMHASH_LEAF_ENTRIES_EST	((double) SV_LEAF_CONTENTS / (7 + 3 + 1.0 / 8))
extern BlockNumber simhash_descend_cached(Relation index, const SimhashRunTree *tree,
										  uint64 generation, uint64 prefix, uint64 mask);
extern void simhash_inner_cache_seen(Relation index, uint64 next_generation);

/* ---- leaf.c: the compressed leaves of runs (format: "Format" above) ---- */

/* The page kind of the leaves of table `table`'s tree. */
static inline uint16
simhash_leaf_kind(int table)
{
	return table == 0 ? SIMHASH_LEAF : SIMHASH_KEY_LEAF;
}

/*
 * What a search of a run's trees defers: the hashes table 0 found itself
 * (live or dead), and those other tables found, to resolve in table 0.
 */
typedef struct SimhashResolver
{
	uint64	   *found;
	size_t		nfound;
	size_t		capfound;
	uint64	   *want;
	size_t		nwant;
	size_t		capwant;
} SimhashResolver;

extern int	simhash_leaf_decode(Relation index, Buffer buffer, const SimhashTable *tab,
								SimhashEntry *entries);
extern int	simhash_cmp_uint64(const void *a, const void *b);
extern void simhash_resolver_init(SimhashResolver *r);
extern bool simhash_search_leaf(Relation index, BlockNumber blkno, Buffer buffer,
								const SimhashTable *tab, uint64 prefix, uint64 qkey,
								int radius, SimhashResolver *resolver,
								SimhashMatches *out);
extern void simhash_resolve(Relation index, const SimhashRunTree *tree0, uint64 generation,
							SimhashResolver *r, SimhashMatches *out);

/* ---- policy.c: when to flush the pending lanes and which runs to merge ---- */
extern void simhash_flush_and_merge(Relation index, bool wait, bool merge_all,
									double dead_fraction);

/* ---- callbacks ---- */
/*
 * build_scan.c: the build's heap scan by parallel workers and the leader,
 * every row passed to callback in the leader in a serial scan's order;
 * returns the heap tuples, or -1 having done nothing (then scan serially)
 */
extern double simhash_build_scan_parallel(Relation heap, Relation index,
										  IndexInfo *indexInfo,
										  IndexBuildCallback callback, void *state);
/*
 * build_parallel.c: the build's one run, its trees built and written by
 * parallel workers and the leader; *direct_start .. *direct_end: the blocks
 * written (and WAL-logged) past the buffers, empty if none
 */
extern BlockNumber simhash_build_write_run(Relation index, const SimhashBlocks *blocks,
										   const SimhashRunInput *input, uint64 generation,
										   BlockNumber *direct_start,
										   BlockNumber *direct_end);
extern IndexBuildResult *simhash_build(Relation heap, Relation index, IndexInfo *indexInfo);
extern void simhash_buildempty(Relation index);
extern bool simhash_insert(Relation index, Datum *values, bool *isnull,
						   ItemPointer ht_ctid, Relation heapRel,
						   IndexUniqueCheck checkUnique, bool indexUnchanged,
						   IndexInfo *indexInfo);
extern IndexScanDesc simhash_beginscan(Relation index, int nkeys, int norderbys);
extern void simhash_rescan(IndexScanDesc scan, ScanKey keys, int nkeys,
						   ScanKey orderbys, int norderbys);
extern bool simhash_gettuple(IndexScanDesc scan, ScanDirection dir);
extern int64 simhash_getbitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern void simhash_endscan(IndexScanDesc scan);
extern IndexBulkDeleteResult *simhash_bulkdelete(IndexVacuumInfo *info,
												 IndexBulkDeleteResult *stats,
												 IndexBulkDeleteCallback callback,
												 void *callback_state);
extern IndexBulkDeleteResult *simhash_vacuumcleanup(IndexVacuumInfo *info,
													IndexBulkDeleteResult *stats);
extern void simhash_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
								 Cost *indexStartupCost, Cost *indexTotalCost,
								 Selectivity *indexSelectivity, double *indexCorrelation,
								 double *indexPages);
extern bool simhash_validate(Oid opclassoid);
extern char *simhash_buildphasename(int64 phasenum);
extern bytea *simhash_options(Datum reloptions, bool validate);

/* CPU time of the calling process in ms (DEBUG1 phase timings of a build) */
static inline double
simhash_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000.0 + ts.tv_nsec / 1000000.0;
}

#endif							/* SIMHASH_AM_H */
