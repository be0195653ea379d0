/*
 * am.h
 *		The simhash index access method: its design (this comment is its one
 *		write-up; other documents point here), page layout, and the
 *		declarations shared by its files:
 *
 *	handler.c	the handler (callbacks, properties) and the reloptions
 *	build.c		CREATE INDEX: read the table, write one run (chunks merged)
 *	insert.c	aminsert: append to the pending list, flush when it is long
 *	scan.c		index and bitmap scans, ordered scans by distance rings
 *	vacuum.c	ambulkdelete and amvacuumcleanup
 *	cost.c		amcostestimate
 *	validate.c	amvalidate
 *	check.c		simhash_index_check()
 *	pages.c		page initialisation and allocation, the page-access helper
 *				(simhash_read_page(), chains of pages), the metapage, the
 *				pending list
 *	recycle.c	retiring replaced runs and lists, recycling their pages
 *	run_write.c	writing runs (a static B+tree per table) and lists
 *	run_read.c	reading runs and lists, walking a run's pages
 *	merge.c		the streaming merge of runs
 *	probe.c		searching runs (probes) and lists
 *	policy.c	the flush and merge policy (merge_from()) and the flush
 *	tidset.c	a sorted set of (TID, hash): the dead entries of a run
 * and core/index_pages.c, the pure checks of a page image (fuzzed).
 * Dependencies go one way: the callbacks -> policy -> merge -> run_read /
 * run_write -> pages; recycle -> run_read; vacuum -> recycle, policy.
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
 * next prefix starts in it (probe.c).
 *
 * Entries are (64-bit hash, heap TID, flags), 16 bytes.  They live in:
 *	- runs: immutable sets of entries.  For each table a run holds a static
 *	  B+tree: leaves of entries sorted by the table's permuted hash, linked
 *	  left to right, and inner pages of (first key, child) items.  A run
 *	  header page lists the trees' roots.  Only the entries' dead flags ever
 *	  change (VACUUM).
 *	- the pending list: pages of unsorted entries that inserts append to;
 *	  every scan reads all of them.
 * When the pending list is long, it is sorted into a new run; runs of
 * similar size are merged (geometrically: each entry is rewritten O(log n)
 * times).  VACUUM marks dead entries, flushes, and rewrites runs with many
 * dead entries.  Pages of replaced runs and lists are "retired" with the
 * next transaction id and recycled (free space map) only once no snapshot
 * can still be reading them; every page carries the generation of the run
 * or list it belongs to, and readers check it.  VACUUM truncates free pages
 * at the end of the file when it can lock the index exclusively without
 * waiting (vacuum.c); free pages inside it are reused through the FSM.
 *
 * Concurrency: the metapage lists the runs and pending lists; scans copy it
 * under a share lock and then read immutable pages.  Inserts append under
 * the metapage's exclusive lock.  Flushes, merges and VACUUM's changes are
 * serialised by a heavyweight lock on the metapage's block number.
 * Every change is WAL-logged with generic WAL records.
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
#include "access/generic_xlog.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "access/transam.h"
#include "storage/block.h"
#include "storage/bufmgr.h"
#include "storage/itemptr.h"
#include "utils/relcache.h"

#include "core/blocks.h"

#define SIMHASH_MAGIC			0x53485831	/* "SHX1" */
#define SIMHASH_VERSION			1
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

/* page kinds */
#define SIMHASH_META		1
#define SIMHASH_RUN_HEADER	2
#define SIMHASH_INNER		3
#define SIMHASH_LEAF		4
#define SIMHASH_PENDING		5
#define SIMHASH_FREE		6	/* recycled; listed in the free space map */
#define SIMHASH_RETIRED_PAGE 7	/* retired items that overflowed the metapage */

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

/* an index entry (leaves and pending pages) */
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

/* items per leaf, pending or inner page */
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
	uint64		nentries;
	uint64		generation;
} SimhashList;

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
	SimhashList pending;		/* appended to by inserts */
	SimhashList flushing;		/* being sorted into a run */
	SimhashList nulls;			/* rows whose key is NULL (for ordered scans) */
	SimhashRunRef runs[SIMHASH_MAX_RUNS];	/* oldest (largest) first */
	int32		nretired;
	int32		pad;
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

/* ---- pages.c: page initialisation, the page-access helper, metapage ---- */
extern void simhash_init_page(Page page, uint16 kind, uint64 generation);
extern Buffer simhash_new_buffer(Relation index);
extern Buffer simhash_lock_block(Relation index, BlockNumber blkno, int mode,
								 BufferAccessStrategy strategy);

/* how simhash_read_page() treats a page that is not the one expected */
#define SIMHASH_READ_IF_OURS		0x01	/* return InvalidBuffer */
#define SIMHASH_READ_META_LOCKED	0x02	/* caller holds the metapage's lock */

extern Buffer simhash_read_page(Relation index, BlockNumber blkno, int mode,
								uint16 kind, uint64 generation, int flags,
								BufferAccessStrategy strategy);
extern bool simhash_block_exists(Relation index, BlockNumber blkno);
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
extern void simhash_report_corrupt(Relation index, BlockNumber blkno,
								   const char *problem) pg_attribute_noreturn();
extern void simhash_init_metapage(Page page, int nblocks, int max_distance, int ntables);
extern Buffer simhash_lock_meta(Relation index, int mode);
extern void simhash_read_meta(Relation index, SimhashMetaPageData *meta);
extern void simhash_log_meta(Relation index, Buffer metabuf, const SimhashMetaPageData *meta);
extern void simhash_meta_blocks(const SimhashMetaPageData *meta, SimhashBlocks *blocks);
extern uint64 simhash_list_append(Relation index, uint64 hash, ItemPointer tid, bool isnull);

/* ---- recycle.c: retiring replaced runs and lists, recycling their pages ---- */
extern void simhash_retire(Relation index, SimhashMetaPageData *meta,
						   BlockNumber head, uint16 kind, uint64 generation);
extern BlockNumber simhash_recycle(Relation index, BufferAccessStrategy strategy);
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

/* how to write pages: during CREATE INDEX (WAL at the end) or logged each */
typedef enum SimhashWriteMode
{
	SIMHASH_WRITE_BUILD,
	SIMHASH_WRITE_LOGGED
} SimhashWriteMode;

/* the pages of one run or list being written */
typedef struct SimhashRunWriter
{
	Relation	index;
	SimhashWriteMode mode;
	uint64		generation;
	uint32		npages;			/* pages written */
} SimhashRunWriter;

/*
 * One tree being written, entry by entry in its table's order: leaves are
 * filled and linked as they come, and their first keys collected for the
 * inner levels, written by simhash_tree_end().
 */
typedef struct SimhashTreeWriter
{
	SimhashRunWriter *w;
	PGAlignedBlock image;		/* the leaf being filled */
	Buffer		cur;			/* its buffer, InvalidBuffer before the first */
	int			count;			/* entries in it */
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
extern void simhash_tree_begin(SimhashTreeWriter *tw, SimhashRunWriter *w);
extern void simhash_tree_add(SimhashTreeWriter *tw, uint64 hash, ItemPointer tid, uint64 key);
extern BlockNumber simhash_tree_end(SimhashTreeWriter *tw, uint16 *height);
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

/*
 * The sorted entries of table `table` of a run being written: keys[] its
 * permuted hashes in prefix order, order[] their positions in the input;
 * valid until the next call (issue #14: parallel CREATE INDEX).
 */
typedef void (*SimhashSortedTableFn) (void *arg, int table, const uint64 **keys,
									  const uint32 **order);
extern BlockNumber simhash_write_run_sorted(Relation index, const SimhashBlocks *blocks,
											const SimhashRunInput *input, uint64 generation,
											SimhashWriteMode mode,
											SimhashSortedTableFn sorted, void *arg);
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

/* ---- policy.c: when to flush the pending list and which runs to merge ---- */
extern void simhash_flush_and_merge(Relation index, bool wait, bool merge_all,
									double dead_fraction);

/* ---- callbacks ---- */
/* build_parallel.c: the build's one run, its tables sorted by parallel workers */
extern BlockNumber simhash_build_write_run(Relation index, const SimhashBlocks *blocks,
										   const SimhashRunInput *input, uint64 generation);
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

#endif							/* SIMHASH_AM_H */
