/*
 * src/core/index_pages.h
 *		Checks of simhash index pages as pure functions of a page image and
 *		a few facts from the metapage and the relation's size.  No
 *		PostgreSQL headers: the same checks run in the server (index/pages.c,
 *		through simhash_read_page()) and in a fuzz target (test/fuzz).
 *
 * This file is the one definition of the on-disk layout of the index's
 * own structures (the special space, run headers, the metapage), in
 * fixed-width types; index/am.h gives the server's code these types under
 * its own names (SimhashMetaPageData = SvMeta, ...), so the checks and the
 * server read the same structs.  The page header is PostgreSQL's:
 * SvPageHeader restates the fields the checks read, and index/pages.c
 * asserts at compile time that they agree.  The format's design is in
 * src/index/README.md.
 *
 * A check answers with a verdict:
 *	- SV_OK: the page is what the caller expects, and every field that a
 *	  reader uses to size a copy or a loop, or to find another page, is in
 *	  range (item counts, ntables, tree heights and roots, next pointers,
 *	  a leaf's count and widths: sv_leaf_layout_ok());
 *	- SV_OTHER: not the page expected: of another kind or generation, or
 *	  not an index page at all (zeros, a foreign header).  Either it was
 *	  recycled while a scan read the run or list it belonged to (the caller
 *	  tells that apart, see simhash_read_page()), or the pointer that led
 *	  here is corrupted;
 *	- SV_BAD: the expected kind and generation, with fields out of range
 *	  (and, for the metapage, any problem).
 * with a static string describing the first problem.
 */
#ifndef SIMHASH_AM_VERIFY_H
#define SIMHASH_AM_VERIFY_H

#include <stdbool.h>
#include <stdint.h>

#include "blocks.h"
#include "index_leaf.h"

#define SV_BLCKSZ			8192
#define SV_PAGE_HEADER		24	/* MAXALIGN(SizeOfPageHeaderData) */
#define SV_SPECIAL			16	/* MAXALIGN(sizeof(SimhashPageOpaqueData)) */
#define SV_INVALID_BLOCK	0xFFFFFFFFU
#define SV_PAGE_ID			0xFF8A
#define SV_PAGE_ITEMS		((SV_BLCKSZ - SV_PAGE_HEADER - SV_SPECIAL) / 16)

/*
 * The highest tree a run can have: at most 2^32 entries, SV_PAGE_ITEMS per
 * leaf and per inner page, give at most 3 inner levels; one more for
 * margin.
 */
#define SV_MAX_HEIGHT		4

/* page kinds */
#define SV_META			1
#define SV_RUN_HEADER	2
#define SV_INNER		3
#define SV_LEAF			4
#define SV_PENDING		5
#define SV_FREE			6
#define SV_RETIRED_PAGE 7
#define SV_KEY_LEAF		8

/*
 * Kinds a reader may ask sv_check_page() for that name how to read a page,
 * not a kind stored on it:
 *	- SV_FORMAT1_LEAF: a leaf of a run written by format 1 (stored kind
 *	  SV_LEAF, in every table's tree): up to SV_PAGE_ITEMS 16-byte entries
 *	  (hash, TID, flags), as on a pending page (index/format1.c);
 *	- SV_ANY_LEAF: a leaf of either format (stored kind SV_LEAF or
 *	  SV_KEY_LEAF) whose contents the reader does not use (a walk that
 *	  frees a run's pages).
 */
#define SV_FORMAT1_LEAF	0x0104
#define SV_ANY_LEAF		0x0100

/*
 * A full transaction id (epoch and xid), 8 bytes: the server's
 * FullTransactionId, which index/am.h names as SV_FULL_XID before it
 * includes this file; the same layout here.
 */
#ifndef SV_FULL_XID
typedef struct SvFullXid
{
	uint64_t	value;
} SvFullXid;
#define SV_FULL_XID SvFullXid
#endif

/* PostgreSQL's page header (PageHeaderData), the fields the checks read */
typedef struct SvPageHeader
{
	uint64_t	lsn;
	uint16_t	checksum;
	uint16_t	flags;
	uint16_t	lower;
	uint16_t	upper;
	uint16_t	special;
	uint16_t	pagesize_version;
	uint32_t	prune_xid;
} SvPageHeader;

/* the special space of every page */
typedef struct SvOpaque
{
	uint64_t	generation;		/* the run or list the page belongs to */
	uint32_t	next;			/* leaves and pending pages: the next page */
	uint16_t	kind;
	uint16_t	page_id;		/* SV_PAGE_ID */
} SvOpaque;

/* a run's header page: one tree per table */
typedef struct SvRunTree
{
	uint32_t	root;
	uint16_t	height;			/* 0: the root is a leaf */
	uint16_t	pad;
} SvRunTree;

typedef struct SvRunHeader
{
	uint64_t	nentries;
	uint64_t	ndead;			/* entries marked dead (in each tree) */
	uint32_t	ntables;
	uint32_t	npages;			/* pages of the run, the header included */
	SvRunTree	trees[];
} SvRunHeader;

/* the metapage's reference to a run */
typedef struct SvRunRef
{
	uint32_t	header;
	uint32_t	format;
	uint64_t	nentries;
	uint64_t	generation;
} SvRunRef;

/* a list of pages: a pending lane, a lane being flushed, the nulls */
typedef struct SvList
{
	uint32_t	head;			/* SV_INVALID_BLOCK: empty */
	uint32_t	tail;
	uint64_t	nentries;		/* lanes: before the tail page */
	uint64_t	generation;
} SvList;

/* kinds of retired items */
#define SV_RETIRED_RUN		1
#define SV_RETIRED_LIST		2
#define SV_RETIRED_MORE		3	/* a page of further retired items */

/* a retired run or list, recyclable once no snapshot sees xid */
typedef struct SvRetired
{
	uint32_t	head;			/* run header, or first page of a list */
	uint16_t	kind;
	uint16_t	pad;
	SV_FULL_XID xid;
	uint64_t	generation;		/* of the run or list (0: a page of items) */
} SvRetired;

#define SV_MAX_RUNS		48
#define SV_MAX_RETIRED	64
#define SV_MAX_LANES	8
#define SV_MAGIC		0x53485831	/* "SHX1" */
#define SV_VERSION		2
#define SV_VERSION1		1	/* the format of release 1.0 (index/format1.c) */
#define SV_RUN_FORMAT1	1	/* SvRunRef.format of a run written by format 1 */
#define SV_DEFAULT_LANES 4
#define SV_MAX_INDEX_TABLES SIMHASH_MAX_INDEX_TABLES
#define SV_RETIRED_PER_PAGE ((SV_BLCKSZ - SV_PAGE_HEADER - SV_SPECIAL) / (int) sizeof(SvRetired))

/* the metapage */
typedef struct SvMeta
{
	uint32_t	magic;
	uint32_t	version;
	int32_t		nblocks;
	int32_t		max_distance;
	int32_t		ntables;
	int32_t		nruns;
	uint64_t	next_generation;
	SvList		pending[SV_MAX_LANES];	/* appended to by inserts */
	SvList		flushing[SV_MAX_LANES];	/* being sorted into a run */
	SvList		nulls;			/* rows whose key is NULL (for ordered scans) */
	SvRunRef	runs[SV_MAX_RUNS];	/* oldest (largest) first */
	int32_t		nretired;
	int32_t		nlanes;			/* pending lanes in use, 1..SV_MAX_LANES */
	SvRetired	retired[SV_MAX_RETIRED];
} SvMeta;

/*
 * The metapage of format 1 (release 1.0): one pending and one flushing
 * list where format 2 has SV_MAX_LANES of each, and padding where format 2
 * has nlanes.  Its runs have format-1 leaves (SV_FORMAT1_LEAF).
 */
typedef struct SvMeta1
{
	uint32_t	magic;
	uint32_t	version;
	int32_t		nblocks;
	int32_t		max_distance;
	int32_t		ntables;
	int32_t		nruns;
	uint64_t	next_generation;
	SvList		pending;
	SvList		flushing;
	SvList		nulls;
	SvRunRef	runs[SV_MAX_RUNS];
	int32_t		nretired;
	int32_t		pad;
	SvRetired	retired[SV_MAX_RETIRED];
} SvMeta1;

typedef enum SvVerdict
{
	SV_OK = 0,
	SV_OTHER,
	SV_BAD
} SvVerdict;

/*
 * What the checks may trust: the number of tables of the index (from its
 * metapage) and the relation's size in blocks.
 */
typedef struct SvFacts
{
	int			ntables;
	uint32_t	nblocks;
} SvFacts;

/* Is blkno a page other than the metapage, inside the relation? */
static inline bool
sv_block_ok(uint32_t blkno, uint32_t nblocks)
{
	return blkno != 0 && blkno < nblocks;
}

/* Is a retired item (of the metapage or of a page of them) in range? */
static inline bool
sv_retired_ok(const SvRetired *r, uint32_t nblocks)
{
	return sv_block_ok(r->head, nblocks) && r->kind >= SV_RETIRED_RUN &&
		r->kind <= SV_RETIRED_MORE;
}

extern SvVerdict sv_check_page(const void *page, uint16_t kind, uint64_t generation,
							   const SvFacts *facts, const char **problem);
extern SvVerdict sv_check_meta(const void *page, uint32_t nblocks, const char **problem);
extern int	sv_page_items(const void *page, uint16_t kind);

/*
 * The format version of a page that is a simhash metapage (its magic
 * number) of a version this library does not read (neither SV_VERSION nor
 * SV_VERSION1); 0 otherwise.
 */
extern uint32_t sv_meta_other_version(const void *page);

/* Is the page a metapage of format 1 (magic number and version)? */
extern bool sv_meta_is_format1(const void *page);

/*
 * The contents of a format-1 metapage in format 2's layout: the pending
 * and flushing lists become lane 0 of each (the other lanes empty, nlanes
 * SV_DEFAULT_LANES), every run and retired run is marked SV_RUN_FORMAT1.
 * The lists' nentries stay format 1's (every entry, the tail page's
 * included: the caller subtracts the tail's items).  Only the layout is
 * converted; sv_check_meta() checks the fields.
 */
extern void sv_meta_from_format1(const void *page, SvMeta *out);

#endif							/* SIMHASH_AM_VERIFY_H */
