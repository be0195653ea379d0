/*
 * test/unit/test_index_format1.c: the pure part of reading indexes of format
 * 1 (release 1.0; src/index/format1.c): the conversion of a format-1
 * metapage to format 2's layout (sv_meta_from_format1()), the metapage check
 * of both formats and of a later one, and the check of a format-1 leaf
 * (SV_FORMAT1_LEAF: stored as SV_LEAF, 16-byte entries) and of a leaf read
 * by a page walk (SV_ANY_LEAF).  src/core/index_pages.c.
 */
#include "index_pages.h"
#include "unit.h"

#include <stddef.h>
#include <string.h>

static uint64_t pagebuf[8192 / 8];

/* A page header and special space of kind and generation, no contents. */
static uint8_t *
frame(uint16_t kind, uint64_t generation)
{
	uint8_t    *page = (uint8_t *) pagebuf;
	SvPageHeader *h = (SvPageHeader *) page;
	SvOpaque   *o = (SvOpaque *) (page + SV_BLCKSZ - SV_SPECIAL);

	memset(page, 0, sizeof(pagebuf));
	h->upper = h->special = SV_BLCKSZ - SV_SPECIAL;
	h->lower = SV_PAGE_HEADER;
	o->generation = generation;
	o->next = SV_INVALID_BLOCK;
	o->kind = kind;
	o->page_id = SV_PAGE_ID;
	return page;
}

/* A format-1 metapage as release 1.0 writes it: 2 runs, lists, retired items. */
static SvMeta1 *
format1_meta(void)
{
	uint8_t    *page = frame(SV_META, 0);
	SvMeta1    *m = (SvMeta1 *) (page + SV_PAGE_HEADER);

	m->magic = SV_MAGIC;
	m->version = SV_VERSION1;
	m->nblocks = 4;
	m->max_distance = 3;
	m->ntables = 4;
	m->nruns = 2;
	m->next_generation = 12;
	m->runs[0] = (SvRunRef) {7, 0, 30000, 3};
	m->runs[1] = (SvRunRef) {90, 0, 500, 9};
	m->pending = (SvList) {40, 41, 700, 10};
	m->flushing = (SvList) {SV_INVALID_BLOCK, SV_INVALID_BLOCK, 0, 0};
	m->nulls = (SvList) {50, 50, 3, 11};
	m->nretired = 1;
	m->retired[0] = (SvRetired) {60, 1, 0, {123}, 2};
	((SvPageHeader *) page)->lower = SV_PAGE_HEADER + sizeof(SvMeta1);
	return m;
}

static void
test_meta(void)
{
	const char *problem = NULL;
	SvMeta		c;
	SvMeta1    *m = format1_meta();
	const uint8_t *page = (const uint8_t *) pagebuf;

	CHECK(sv_meta_is_format1(page), "a format-1 metapage is recognised");
	CHECK(sv_meta_other_version(page) == 0, "format 1 is a version this library reads");
	CHECK(sv_check_meta(page, 100, &problem) == SV_OK, "the format-1 metapage passes: %s",
		  problem ? problem : "");
	sv_meta_from_format1(page, &c);
	CHECK(c.version == SV_VERSION && c.nlanes == SV_DEFAULT_LANES, "converted: version %u, %d lanes",
		  c.version, c.nlanes);
	CHECK(c.nblocks == 4 && c.max_distance == 3 && c.ntables == 4 && c.next_generation == 12,
		  "converted: geometry and next generation kept");
	CHECK(c.nruns == 2 && c.runs[0].header == 7 && c.runs[0].nentries == 30000 &&
		  c.runs[1].generation == 9, "converted: runs kept");
	CHECK(c.runs[0].format == SV_RUN_FORMAT1 && c.runs[1].format == SV_RUN_FORMAT1,
		  "converted: runs marked format 1");
	CHECK(c.pending[0].head == 40 && c.pending[0].tail == 41 && c.pending[0].nentries == 700 &&
		  c.pending[0].generation == 10, "converted: the pending list is lane 0");
	CHECK(c.flushing[0].head == SV_INVALID_BLOCK, "converted: the empty flushing list");
	{
		int			empty = 0;

		for (int i = 1; i < SV_MAX_LANES; i++)
			empty += c.pending[i].head == SV_INVALID_BLOCK && c.pending[i].tail == SV_INVALID_BLOCK &&
				c.flushing[i].head == SV_INVALID_BLOCK && c.flushing[i].tail == SV_INVALID_BLOCK;
		CHECK(empty == SV_MAX_LANES - 1, "converted: the other lanes are empty");
	}
	CHECK(c.nulls.head == 50 && c.nulls.nentries == 3, "converted: the nulls list kept");
	CHECK(c.nretired == 1 && c.retired[0].head == 60 && c.retired[0].xid.value == 123,
		  "converted: the retired items kept");

	/* its fields are checked as format 2's are */
	m->nruns = SV_MAX_RUNS + 1;
	CHECK(sv_check_meta(page, 100, &problem) == SV_BAD, "format 1: too many runs refused");
	m = format1_meta();
	m->pending.tail = 100;
	CHECK(sv_check_meta(page, 100, &problem) == SV_BAD, "format 1: a list beyond the index refused");
	m = format1_meta();
	m->nretired = -1;
	CHECK(sv_check_meta(page, 100, &problem) == SV_BAD, "format 1: a negative retired count refused");
	m = format1_meta();
	((SvPageHeader *) pagebuf)->lower = SV_PAGE_HEADER + sizeof(SvMeta1) - 8;
	CHECK(!sv_meta_is_format1(page) && sv_check_meta(page, 100, &problem) == SV_BAD,
		  "format 1: a metapage shorter than its layout refused");

	/* a later format is refused, named by its version */
	m = format1_meta();
	m->version = 3;
	CHECK(sv_meta_other_version(page) == 3, "format 3 is not read");
	CHECK(sv_check_meta(page, 100, &problem) == SV_BAD, "format 3's metapage does not pass");
}

/* A format-1 leaf of n 16-byte entries, its next pointer next. */
static uint8_t *
format1_leaf(int n, uint32_t next)
{
	uint8_t    *page = frame(SV_LEAF, 5);

	for (int i = 0; i < n; i++)
		memset(page + SV_PAGE_HEADER + 16 * i, i + 1, 16);
	((SvPageHeader *) page)->lower = SV_PAGE_HEADER + 16 * n;
	((SvOpaque *) (page + SV_BLCKSZ - SV_SPECIAL))->next = next;
	return page;
}

static void
test_leaf(void)
{
	SvFacts		facts = {4, 100};
	const char *problem = NULL;
	uint8_t    *page;

	page = format1_leaf(1, SV_INVALID_BLOCK);
	CHECK(sv_check_page(page, SV_FORMAT1_LEAF, 5, &facts, &problem) == SV_OK, "a 1-entry format-1 leaf");
	page = format1_leaf(SV_PAGE_ITEMS, 99);
	CHECK(sv_check_page(page, SV_FORMAT1_LEAF, 5, &facts, &problem) == SV_OK, "a full format-1 leaf");
	CHECK(sv_check_page(page, SV_ANY_LEAF, 5, &facts, &problem) == SV_OK, "any leaf: a format-1 leaf");
	CHECK(sv_check_page(page, SV_FORMAT1_LEAF, 6, &facts, &problem) == SV_OTHER, "another generation");
	page = format1_leaf(0, SV_INVALID_BLOCK);
	CHECK(sv_check_page(page, SV_FORMAT1_LEAF, 5, &facts, &problem) == SV_BAD, "an empty leaf refused");
	page = format1_leaf(3, 100);
	CHECK(sv_check_page(page, SV_FORMAT1_LEAF, 5, &facts, &problem) == SV_BAD, "a next pointer beyond the index refused");
	page = format1_leaf(3, SV_INVALID_BLOCK);
	((SvPageHeader *) page)->lower += 8;
	CHECK(sv_check_page(page, SV_FORMAT1_LEAF, 5, &facts, &problem) == SV_BAD, "a partial entry refused");
	((SvPageHeader *) page)->lower = SV_PAGE_HEADER + 16 * (SV_PAGE_ITEMS + 1);
	CHECK(sv_check_page(page, SV_FORMAT1_LEAF, 5, &facts, &problem) != SV_OK, "more entries than a page holds refused");
	page = format1_leaf(3, SV_INVALID_BLOCK);
	((SvOpaque *) (page + SV_BLCKSZ - SV_SPECIAL))->kind = SV_KEY_LEAF;
	CHECK(sv_check_page(page, SV_FORMAT1_LEAF, 5, &facts, &problem) == SV_OTHER, "a key leaf is not a format-1 leaf");
	CHECK(sv_check_page(page, SV_ANY_LEAF, 5, &facts, &problem) == SV_OK, "any leaf: a key leaf");
	((SvOpaque *) (page + SV_BLCKSZ - SV_SPECIAL))->kind = SV_PENDING;
	CHECK(sv_check_page(page, SV_ANY_LEAF, 5, &facts, &problem) == SV_OTHER, "any leaf: not a list page");
}

int
main(void)
{
	test_meta();
	test_leaf();
	return unit_report("test_index_format1");
}
