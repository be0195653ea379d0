/*
 * src/core/index_pages.c
 *		Pure checks of simhash index pages (see index_pages.h): what a reader
 *		must know about a page before it uses a field of it to size a copy
 *		or a loop, or to find another page.  Cheap enough for every page a
 *		scan reads: a few comparisons, and one pass over a run header's
 *		trees (at most SV_MAX_INDEX_TABLES).
 */
#include "index_pages.h"
#include "blocks.h"

#include <stddef.h>
#include <string.h>

#define OPAQUE(page) \
	((const SvOpaque *) ((const char *) (page) + SV_BLCKSZ - SV_SPECIAL))
#define HEADER(page)	((const SvPageHeader *) (page))
#define CONTENTS(page)	((const char *) (page) + SV_PAGE_HEADER)

/* Items of a page of entries, inner items or retired items (-1: invalid). */
int
sv_page_items(const void *page, uint16_t kind)
{
	const SvPageHeader *h = HEADER(page);
	int			unit = (kind == SV_RETIRED_PAGE) ? (int) sizeof(SvRetired) : 16;
	int			limit = (kind == SV_RETIRED_PAGE) ? SV_RETIRED_PER_PAGE : SV_PAGE_ITEMS;
	int			bytes = (int) h->lower - SV_PAGE_HEADER;

	if (bytes < 0 || bytes % unit != 0 || bytes / unit > limit)
		return -1;
	return bytes / unit;
}

/* The page header and special space of one of our pages (not its kind). */
static SvVerdict
check_frame(const void *page, const char **problem)
{
	const SvPageHeader *h = HEADER(page);

	if (h->upper == 0)
	{
		*problem = "the page is new (all zeros)";
		return SV_OTHER;
	}
	if (h->special != SV_BLCKSZ - SV_SPECIAL || h->lower > h->upper || h->upper > h->special)
	{
		*problem = "the page header is invalid";
		return SV_OTHER;
	}
	if (OPAQUE(page)->page_id != SV_PAGE_ID)
	{
		*problem = "the page is not a simhash index page";
		return SV_OTHER;
	}
	return SV_OK;
}

SvVerdict
sv_check_page(const void *page, uint16_t kind, uint64_t generation,
			  const SvFacts *facts, const char **problem)
{
	const SvOpaque *opaque = OPAQUE(page);
	SvVerdict	v = check_frame(page, problem);
	int			n;

	if (v != SV_OK)
		return v;
	if (!(opaque->kind == kind ||
		  (kind == SV_FORMAT1_LEAF && opaque->kind == SV_LEAF) ||
		  (kind == SV_ANY_LEAF && (opaque->kind == SV_LEAF || opaque->kind == SV_KEY_LEAF))) ||
		opaque->generation != generation)
	{
		*problem = "the page is of another kind or generation";
		return SV_OTHER;
	}
	switch (kind)
	{
		case SV_ANY_LEAF:
			/* nothing of its contents is read */
			return SV_OK;
		case SV_LEAF:
		case SV_KEY_LEAF:
			/* compressed (index_leaf.h): its layout gives its size */
			if (!sv_leaf_layout_ok(CONTENTS(page), (size_t) (HEADER(page)->lower - SV_PAGE_HEADER),
								   kind == SV_LEAF, problem))
				return SV_BAD;
			if (opaque->next != SV_INVALID_BLOCK && !sv_block_ok(opaque->next, facts->nblocks))
			{
				*problem = "the page's next pointer is out of range";
				return SV_BAD;
			}
			return SV_OK;
		case SV_INNER:
		case SV_PENDING:
		case SV_FORMAT1_LEAF:
		case SV_RETIRED_PAGE:
			n = sv_page_items(page, kind);
			if (n < 0)
			{
				*problem = "the page's item count is out of range";
				return SV_BAD;
			}
			if (n == 0 && (kind == SV_INNER || kind == SV_FORMAT1_LEAF))
			{
				*problem = "the page has no items";
				return SV_BAD;
			}
			if ((kind == SV_PENDING || kind == SV_FORMAT1_LEAF) &&
				opaque->next != SV_INVALID_BLOCK && !sv_block_ok(opaque->next, facts->nblocks))
			{
				*problem = "the page's next pointer is out of range";
				return SV_BAD;
			}
			return SV_OK;
		case SV_RUN_HEADER:
			{
				const SvRunHeader *rh = (const SvRunHeader *) CONTENTS(page);

				if (facts->ntables < 1 || rh->ntables != (uint32_t) facts->ntables)
				{
					*problem = "the run header's table count differs from the metapage's";
					return SV_BAD;
				}
				if (HEADER(page)->lower != SV_PAGE_HEADER + offsetof(SvRunHeader, trees) +
					rh->ntables * sizeof(SvRunTree))
				{
					*problem = "the run header's size does not match its table count";
					return SV_BAD;
				}
				for (uint32_t t = 0; t < rh->ntables; t++)
				{
					if (!sv_block_ok(rh->trees[t].root, facts->nblocks))
					{
						*problem = "a tree's root is out of range";
						return SV_BAD;
					}
					if (rh->trees[t].height > SV_MAX_HEIGHT)
					{
						*problem = "a tree's height is out of range";
						return SV_BAD;
					}
				}
				return SV_OK;
			}
		default:
			return SV_OK;
	}
}

uint32_t
sv_meta_other_version(const void *page)
{
	const SvMeta *meta = (const SvMeta *) CONTENTS(page);
	const char *problem;

	if (check_frame(page, &problem) != SV_OK || OPAQUE(page)->kind != SV_META ||
		HEADER(page)->lower < SV_PAGE_HEADER + offsetof(SvMeta, nblocks) ||
		meta->magic != SV_MAGIC || meta->version == SV_VERSION ||
		meta->version == SV_VERSION1)
		return 0;
	return meta->version;
}

bool
sv_meta_is_format1(const void *page)
{
	const SvMeta1 *meta = (const SvMeta1 *) CONTENTS(page);
	const char *problem;

	return check_frame(page, &problem) == SV_OK && OPAQUE(page)->kind == SV_META &&
		HEADER(page)->lower >= SV_PAGE_HEADER + sizeof(SvMeta1) &&
		meta->magic == SV_MAGIC && meta->version == SV_VERSION1;
}

void
sv_meta_from_format1(const void *page, SvMeta *out)
{
	SvMeta1		old;

	memcpy(&old, CONTENTS(page), sizeof(old));
	memset(out, 0, sizeof(*out));
	out->magic = old.magic;
	out->version = SV_VERSION;
	out->nblocks = old.nblocks;
	out->max_distance = old.max_distance;
	out->ntables = old.ntables;
	out->nruns = old.nruns;
	out->next_generation = old.next_generation;
	for (int i = 0; i < SV_MAX_LANES; i++)
	{
		out->pending[i].head = out->pending[i].tail = SV_INVALID_BLOCK;
		out->flushing[i].head = out->flushing[i].tail = SV_INVALID_BLOCK;
	}
	out->pending[0] = old.pending;
	out->flushing[0] = old.flushing;
	out->nulls = old.nulls;
	memcpy(out->runs, old.runs, sizeof(out->runs));
	for (int i = 0; i < SV_MAX_RUNS; i++)
		out->runs[i].format = SV_RUN_FORMAT1;
	out->nretired = old.nretired;
	out->nlanes = SV_DEFAULT_LANES;
	memcpy(out->retired, old.retired, sizeof(out->retired));
}

/* Is a list of the metapage consistent (empty, or head and tail in range)? */
static bool
list_ok(const SvList *list, uint64_t next_generation, uint32_t nblocks)
{
	if (list->head == SV_INVALID_BLOCK)
		return list->tail == SV_INVALID_BLOCK;
	return sv_block_ok(list->head, nblocks) && sv_block_ok(list->tail, nblocks) &&
		list->generation >= 1 && list->generation < next_generation;
}

SvVerdict
sv_check_meta(const void *page, uint32_t nblocks, const char **problem)
{
	SvMeta		converted;
	const SvMeta *meta = (const SvMeta *) CONTENTS(page);
	const SvOpaque *opaque = OPAQUE(page);
	SvVerdict	v = check_frame(page, problem);

	if (v != SV_OK)
		return SV_BAD;
	if (opaque->kind == SV_META && opaque->generation == 0 && sv_meta_is_format1(page))
	{
		/* format 1: check its fields in format 2's layout */
		sv_meta_from_format1(page, &converted);
		meta = &converted;
	}
	else if (opaque->kind != SV_META || opaque->generation != 0 ||
			 HEADER(page)->lower < SV_PAGE_HEADER + sizeof(SvMeta) ||
			 meta->magic != SV_MAGIC || meta->version != SV_VERSION)
	{
		*problem = "the metapage is not a simhash metapage of a version this library reads";
		return SV_BAD;
	}
	if (simhash_blocks_validate(meta->nblocks, meta->max_distance) != SIMHASH_BLOCKS_OK ||
		meta->ntables < 1 || meta->ntables > SV_MAX_INDEX_TABLES ||
		simhash_binomial(meta->nblocks, meta->max_distance) != (uint64_t) meta->ntables)
	{
		*problem = "the metapage's geometry (blocks, max_distance, tables) is invalid";
		return SV_BAD;
	}
	if (meta->nruns < 0 || meta->nruns > SV_MAX_RUNS)
	{
		*problem = "the metapage's run count is out of range";
		return SV_BAD;
	}
	for (int i = 0; i < meta->nruns; i++)
	{
		if (!sv_block_ok(meta->runs[i].header, nblocks) ||
			meta->runs[i].generation < 1 ||
			meta->runs[i].generation >= meta->next_generation)
		{
			*problem = "a run of the metapage is out of range";
			return SV_BAD;
		}
	}
	if (meta->nlanes < 1 || meta->nlanes > SV_MAX_LANES)
	{
		*problem = "the metapage's lane count is out of range";
		return SV_BAD;
	}
	for (int i = 0; i < meta->nlanes; i++)
	{
		if (!list_ok(&meta->pending[i], meta->next_generation, nblocks) ||
			!list_ok(&meta->flushing[i], meta->next_generation, nblocks))
		{
			*problem = "a list of the metapage is out of range";
			return SV_BAD;
		}
	}
	if (!list_ok(&meta->nulls, meta->next_generation, nblocks))
	{
		*problem = "a list of the metapage is out of range";
		return SV_BAD;
	}
	if (meta->nretired < 0 || meta->nretired > SV_MAX_RETIRED)
	{
		*problem = "the metapage's retired count is out of range";
		return SV_BAD;
	}
	for (int i = 0; i < meta->nretired; i++)
	{
		if (!sv_retired_ok(&meta->retired[i], nblocks))
		{
			*problem = "a retired item of the metapage is out of range";
			return SV_BAD;
		}
	}
	return SV_OK;
}
