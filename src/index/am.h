/*
 * am.h
 *		The simhash index access method: its page layout and the declarations
 *		shared by its files (src/index/).
 *
 * The design -- permuted tables and probe plans, runs as static B+trees
 * with compressed leaves, the pending lanes, merges, compaction, page
 * recycling, concurrency, WAL and standby safety -- with its invariants and
 * a worked example is in src/index/README.md, which also lists the files
 * and the one way their dependencies go.
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
#include "utils/relcache.h"

#include "compat.h"

#include "core/blocks.h"
#include "core/index_leaf.h"

/*
 * The on-disk format is defined once, in core/index_pages.h (pure C, also
 * read by the page checks and the fuzz target); the server's code uses its
 * types under the names below.  A retired item's xid is a
 * FullTransactionId here.
 */
#define SV_FULL_XID FullTransactionId
#include "core/index_pages.h"

#define SIMHASH_MAGIC			SV_MAGIC
#define SIMHASH_VERSION			SV_VERSION	/* the on-disk format */
#define SIMHASH_VERSION1		SV_VERSION1	/* release 1.0's format, still read (format1.c) */
#define SIMHASH_METAPAGE_BLKNO	0
#define SIMHASH_PAGE_ID			SV_PAGE_ID

/* reloption defaults and limits */
#define SIMHASH_DEFAULT_BLOCKS			4
#define SIMHASH_DEFAULT_MAX_DISTANCE	3
/* the table limit, SIMHASH_MAX_INDEX_TABLES, is in core/blocks.h */

/* build phases reported in pg_stat_progress_create_index */
#define SIMHASH_BUILD_PHASE_SCAN	2	/* reading the table */
#define SIMHASH_BUILD_PHASE_WRITE	3	/* sorting the tables, writing the run */

/* hold points of index writes for tests (test_hold.c: simhash.test_hold_phases + n) */
#define SIMHASH_HOLD_FLUSH_WRITTEN	8	/* a flush's new run written, not yet in the metapage */
#define SIMHASH_HOLD_VACUUM_MARKED	9	/* VACUUM has set dead bits in a leaf of a run */

/* strategy numbers of the operator class */
#define SIMHASH_WITHIN_STRATEGY			1	/* simhash64 <@ simhash_ball */
#define SIMHASH_DISTANCE_STRATEGY		2	/* ORDER BY simhash64 <~> simhash64 */
#define SIMHASH_NEAR_STRATEGY			3	/* simhash_ball && simhash_ball */
#define SIMHASH_NSTRATEGIES				3

/* page kinds */
#define SIMHASH_META		SV_META
#define SIMHASH_RUN_HEADER	SV_RUN_HEADER
#define SIMHASH_INNER		SV_INNER
#define SIMHASH_LEAF		SV_LEAF
#define SIMHASH_PENDING		SV_PENDING
#define SIMHASH_FREE		SV_FREE /* recycled; listed in the free space map */
#define SIMHASH_RETIRED_PAGE SV_RETIRED_PAGE	/* retired items that overflowed the metapage */
#define SIMHASH_KEY_LEAF	SV_KEY_LEAF /* a leaf of keys only (tables 1 ..) */
/* how to read a page (simhash_read_page()), not stored kinds: index_pages.h */
#define SIMHASH_FORMAT1_LEAF SV_FORMAT1_LEAF	/* a format-1 leaf (stored as SIMHASH_LEAF) */
#define SIMHASH_ANY_LEAF	SV_ANY_LEAF	/* a leaf of any format, contents unused */

/* special space of every page */
typedef SvOpaque SimhashPageOpaqueData;

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
typedef SvRunTree SimhashRunTree;
typedef SvRunHeader SimhashRunHeader;

#define SimhashPageRunHeader(page)	((SimhashRunHeader *) PageGetContents(page))

/* the metapage */
#define SIMHASH_MAX_RUNS	SV_MAX_RUNS
#define SIMHASH_MAX_RETIRED SV_MAX_RETIRED

typedef SvRunRef SimhashRunRef;
typedef SvList SimhashList;

/* SimhashRunRef.format: 0 or SIMHASH_VERSION for a run of format 2 */
#define SIMHASH_RUN_FORMAT1		SV_RUN_FORMAT1

/* pending lanes: room in the metapage, and how many are used */
#define SIMHASH_MAX_LANES		SV_MAX_LANES
#define SIMHASH_DEFAULT_LANES	4

#define SIMHASH_RETIRED_RUN		SV_RETIRED_RUN
#define SIMHASH_RETIRED_LIST	SV_RETIRED_LIST
#define SIMHASH_RETIRED_MORE	SV_RETIRED_MORE /* a page of further retired items */

typedef SvRetired SimhashRetired;
typedef SvMeta SimhashMetaPageData;

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

/* ---- ball_keys.c: keys of simhash_ball (near-duplicate exclusion constraints) ---- */

/* the largest radius an index on simhash_ball takes (ball_keys.c) */
#define SIMHASH_BALL_KEY_MAX_RADIUS		16

extern uint64 simhash_key_hash(Relation index, Datum value);
extern bool simhash_keys_are_balls(Relation index);
extern void simhash_check_declared_radius(Relation index);

/* ---- pages.c: page initialisation, the page-access helper, metapage ---- */
extern void simhash_init_page(Page page, uint16 kind, uint64 generation);
extern void simhash_page_move_links(Page page, int64 delta);
extern void simhash_write_page_image(Relation index, Buffer buffer, Page image);
/*
 * A page of a record of simhash_log_pages(): the page's image (a page the
 * record initialises), or n ranges of it that changed (offsets[i],
 * lengths[i]: ascending, apart, outside the page's hole, together at most
 * SIMHASH_MAX_LOGGED_BYTES).
 */
#define SIMHASH_MAX_LOGGED_PAGES	3
#define SIMHASH_MAX_LOGGED_RANGES	2
#define SIMHASH_MAX_LOGGED_BYTES	48
typedef struct SimhashLoggedPage
{
	Buffer		buffer;
	bool		image;
	int			n;
	uint16		offsets[SIMHASH_MAX_LOGGED_RANGES];
	uint16		lengths[SIMHASH_MAX_LOGGED_RANGES];
} SimhashLoggedPage;
extern void simhash_log_pages(Relation index, const SimhashLoggedPage *pages, int npages);
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
extern BlockNumber simhash_without_free_tail(Relation index, BlockNumber nblocks,
											 BufferAccessStrategy strategy);
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

/* ---- pending.c: the pending lanes and the nulls list ---- */
extern uint64 simhash_pending_append(Relation index, uint64 hash, ItemPointer tid);
extern void simhash_nulls_append(Relation index, ItemPointer tid);
extern int	simhash_unsorted_lists(const SimhashMetaPageData *meta, bool flushing,
								   bool pending, SimhashList *lists);
extern uint64 simhash_unsorted_nentries(const SimhashMetaPageData *meta, bool *exact);
extern void simhash_clear_list(SimhashList *list);
extern int	simhash_take_pending(SimhashMetaPageData *meta);

/* ---- alloc.c: lowest-first page allocation, VACUUM's early recycling ---- */
extern void simhash_alloc_restart(Relation index, BlockNumber floor);
extern void simhash_give_free_page(Relation index, BlockNumber blkno);
extern BlockNumber simhash_take_free_page(Relation index);
extern bool simhash_no_snapshot_before(FullTransactionId xid);

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
extern BlockNumber simhash_leftmost_leaf(Relation index, const SimhashRunTree *tree,
										 uint64 generation, BufferAccessStrategy strategy);

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

/* ---- inner_cache.c: the backend's copies of inner pages and run headers ---- */

/* the copy of an inner page of a run of this generation */
typedef struct SimhashInnerCopy
{
	BlockNumber blkno;
	uint64		generation;
	int			n;
	SimhashInnerItem items[FLEXIBLE_ARRAY_MEMBER];
} SimhashInnerCopy;

typedef struct SimhashInnerCache SimhashInnerCache;

extern SimhashInnerCache *simhash_inner_cache(Relation index);
extern const SimhashInnerCopy *simhash_inner_lookup(SimhashInnerCache *cache,
													BlockNumber blkno, uint64 generation);
extern const SimhashInnerCopy *simhash_inner_keep(SimhashInnerCache *cache, Buffer buffer,
												  uint64 generation, bool root);
extern const SimhashRunHeader *simhash_run_header_cached(Relation index,
														 const SimhashRunRef *run);
extern BlockNumber simhash_descend_cached(Relation index, const SimhashRunTree *tree,
										  uint64 generation, uint64 prefix, uint64 mask);
extern void simhash_inner_cache_seen(Relation index, uint64 next_generation);

/* ---- format1.c: reading indexes written by format 1 (release 1.0) ---- */
extern void simhash_format1_search_run(Relation index, const SimhashBlocks *blocks,
									   const SimhashRunRef *run, uint64 center, int radius,
									   SimhashMatches *out);

/* Is the run one written by format 1 (uncompressed leaves in every tree)? */
static inline bool
simhash_run_is_format1(const SimhashRunRef *run)
{
	return run->format == SIMHASH_RUN_FORMAT1;
}

/*
 * A heap TID as the 48-bit number (block << 16) | offset, which orders as
 * TIDs do (scans' batches, VACUUM's batches), and back.
 */
static inline uint64
simhash_tid_code(ItemPointer tid)
{
	return ((uint64) ItemPointerGetBlockNumberNoCheck(tid) << 16) |
		ItemPointerGetOffsetNumberNoCheck(tid);
}

static inline void
simhash_tid_decode(uint64 code, ItemPointer tid)
{
	ItemPointerSet(tid, (BlockNumber) (code >> 16), (OffsetNumber) (code & 0xFFFF));
}

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
extern bool simhash_leaf_emit_hash(Relation index, BlockNumber blkno, Buffer buffer,
								   uint64 hash, SimhashMatches *out);

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
