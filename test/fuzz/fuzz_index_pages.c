/*
 * test/fuzz/fuzz_index_pages.c: libFuzzer target for the page checks of the
 * simhash index (src/core/index_pages.c), the same functions the server runs on
 * every page it reads through the index's structure.
 *
 * Structure-aware: the input chooses a page kind and the facts (tables,
 * relation size), a valid page of that kind is built, and the rest of the
 * input is a list of (offset, byte) patches applied to it.  The page is
 * then checked, and when the check accepts it, read the way the server's
 * readers do (items, run header trees, metapage runs, lists and retired
 * items, the compressed leaves of format 2: keys, TIDs, dead bits) with
 * explicit checks of every bound they rely on; ASan catches a read outside
 * the page.  Format 1 (release 1.0, still read: src/index/format1.c) too: its
 * metapage (checked, then converted as the server converts it) and its
 * leaves of 16-byte entries (SV_FORMAT1_LEAF).
 *   make -C test/fuzz fuzz_index_pages && ./fuzz_index_pages -max_total_time=60
 */
#include "index_pages.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define GENERATION 5

/* the input's choices beyond the stored kinds 1 .. 8: format 1's pages */
#define FUZZ_META1	9			/* a format-1 metapage */
#define FUZZ_LEAF1	10			/* a format-1 leaf (SV_FORMAT1_LEAF) */
#define FUZZ_KINDS	10

static void
require(int cond)
{
	if (!cond)
		abort();
}

/* a valid page of this kind */
static void
build_page(uint8_t *page, uint16_t kind, int nitems, int ntables, uint32_t nblocks)
{
	SvPageHeader *h = (SvPageHeader *) page;
	SvOpaque   *o = (SvOpaque *) (page + SV_BLCKSZ - SV_SPECIAL);
	uint8_t    *contents = page + SV_PAGE_HEADER;

	memset(page, 0, SV_BLCKSZ);
	h->upper = h->special = SV_BLCKSZ - SV_SPECIAL;
	h->pagesize_version = SV_BLCKSZ | 4;
	o->generation = kind == SV_META || kind == FUZZ_META1 || kind == SV_RETIRED_PAGE ? 0 : GENERATION;
	o->next = SV_INVALID_BLOCK;
	o->kind = kind;
	o->page_id = SV_PAGE_ID;
	switch (kind)
	{
		case SV_META:
			{
				SvMeta	   *m = (SvMeta *) contents;

				m->magic = SV_MAGIC;
				m->version = SV_VERSION;
				m->nblocks = 4;
				m->max_distance = 3;
				m->ntables = 4;
				m->next_generation = 10;
				m->nruns = nitems % (SV_MAX_RUNS + 1);
				for (int i = 0; i < m->nruns; i++)
				{
					m->runs[i].header = 1 + i % (nblocks - 1);
					m->runs[i].generation = 1 + i % 9;
				}
				m->nlanes = 1 + nitems % SV_MAX_LANES;
				for (int i = 0; i < SV_MAX_LANES; i++)
				{
					m->pending[i].head = m->pending[i].tail = 1 + i % (nblocks - 1);
					m->pending[i].generation = 9;
					m->flushing[i].head = m->flushing[i].tail = SV_INVALID_BLOCK;
				}
				m->nulls.head = m->nulls.tail = SV_INVALID_BLOCK;
				m->nretired = nitems % (SV_MAX_RETIRED + 1);
				for (int i = 0; i < m->nretired; i++)
				{
					m->retired[i].head = 1 + i % (nblocks - 1);
					m->retired[i].kind = 1 + i % 3;
				}
				h->lower = SV_PAGE_HEADER + sizeof(SvMeta);
				break;
			}
		case FUZZ_META1:
			{
				/* format 2's metapage of these choices, in format 1's layout */
				static uint64_t v2page[SV_BLCKSZ / 8];
				const SvMeta *m2 = (const SvMeta *) ((uint8_t *) v2page + SV_PAGE_HEADER);
				SvMeta1    *m = (SvMeta1 *) contents;

				build_page((uint8_t *) v2page, SV_META, nitems, ntables, nblocks);
				o->kind = SV_META;
				memcpy(m, m2, offsetof(SvMeta1, pending));	/* magic .. next_generation */
				m->version = SV_VERSION1;
				m->pending = m2->pending[0];
				m->pending.nentries = 1000;
				m->flushing = m2->flushing[0];
				m->nulls = m2->nulls;
				memcpy(m->runs, m2->runs, sizeof(m->runs));
				m->nretired = m2->nretired;
				memcpy(m->retired, m2->retired, sizeof(m->retired));
				h->lower = SV_PAGE_HEADER + sizeof(SvMeta1);
				break;
			}
		case SV_RUN_HEADER:
			{
				SvRunHeader *r = (SvRunHeader *) contents;

				r->nentries = 1000;
				r->ntables = ntables;
				for (int t = 0; t < ntables; t++)
				{
					r->trees[t].root = 1 + t % (nblocks - 1);
					r->trees[t].height = t % 3;
				}
				h->lower = SV_PAGE_HEADER + sizeof(SvRunHeader) + ntables * sizeof(SvRunTree);
				break;
			}
		case SV_LEAF:
		case SV_KEY_LEAF:
			{
				/* a compressed leaf (index_leaf.h): nitems entries, some equal */
				static SvLeafBuilder b;
				uint64_t	key = (uint64_t) nitems << 40;

				sv_leaf_builder_init(&b, kind == SV_LEAF);
				for (int i = 0; i < 1 + nitems * 4; i++)
				{
					key += (i % 3 == 0) ? 0 : (uint64_t) (i * 7919) << (nitems % 48);
					if (!sv_leaf_fits(&b, key, (uint32_t) i * 977, (uint16_t) (1 + i % 300)))
						break;
					sv_leaf_add(&b, key, (uint32_t) i * 977, (uint16_t) (1 + i % 300));
				}
				h->lower = SV_PAGE_HEADER + sv_leaf_encode(&b, contents);
				o->next = nblocks - 1;
				break;
			}
		case SV_RETIRED_PAGE:
			nitems %= SV_RETIRED_PER_PAGE + 1;
			for (int i = 0; i < nitems; i++)
			{
				SvRetired  *r = (SvRetired *) contents + i;

				r->head = 1 + i % (nblocks - 1);
				r->kind = 1 + i % 3;
			}
			h->lower = SV_PAGE_HEADER + nitems * sizeof(SvRetired);
			break;
		default:
			nitems = 1 + nitems % SV_PAGE_ITEMS;
			for (int i = 0; i < nitems; i++)
				memset(contents + 16 * i, i, 16);
			h->lower = SV_PAGE_HEADER + 16 * nitems;
			if (kind != SV_INNER)
				o->next = nblocks - 1;
			if (kind == FUZZ_LEAF1)
				o->kind = SV_LEAF;	/* stored as a leaf, read as format 1's */
			break;
	}
}

/* read an accepted page as the server's readers do */
static uint64_t
consume(const uint8_t *page, uint16_t kind, const SvFacts *facts)
{
	const SvOpaque *o = (const SvOpaque *) (page + SV_BLCKSZ - SV_SPECIAL);
	const uint8_t *contents = page + SV_PAGE_HEADER;
	uint64_t	sum = 0;

	switch (kind)
	{
		case FUZZ_META1:
			{
				/* converted as the server does, then read as format 2's */
				static uint64_t converted[SV_BLCKSZ / 8];
				SvMeta		m;

				sv_meta_from_format1(page, &m);
				memcpy(converted, page, SV_BLCKSZ);
				memcpy((uint8_t *) converted + SV_PAGE_HEADER, &m, sizeof(m));
				return consume((const uint8_t *) converted, SV_META, facts);
			}
		case SV_META:
			{
				const SvMeta *m = (const SvMeta *) contents;

				require(m->nruns >= 0 && m->nruns <= SV_MAX_RUNS);
				require(m->nretired >= 0 && m->nretired <= SV_MAX_RETIRED);
				require(m->ntables >= 1 && m->ntables <= SV_MAX_INDEX_TABLES);
				for (int i = 0; i < m->nruns; i++)
					require(sv_block_ok(m->runs[i].header, facts->nblocks));
				for (int i = 0; i < m->nretired; i++)
					require(sv_retired_ok(&m->retired[i], facts->nblocks));
				require(m->nlanes >= 1 && m->nlanes <= SV_MAX_LANES);
				for (int i = 0; i < m->nlanes; i++)
					require((m->pending[i].head == SV_INVALID_BLOCK ||
							 sv_block_ok(m->pending[i].tail, facts->nblocks)) &&
							(m->flushing[i].head == SV_INVALID_BLOCK ||
							 sv_block_ok(m->flushing[i].tail, facts->nblocks)));
				break;
			}
		case SV_RUN_HEADER:
			{
				const SvRunHeader *r = (const SvRunHeader *) contents;

				require((int) r->ntables == facts->ntables);
				for (uint32_t t = 0; t < r->ntables; t++)
				{
					require(sv_block_ok(r->trees[t].root, facts->nblocks));
					require(r->trees[t].height <= SV_MAX_HEIGHT);
					sum += r->trees[t].root;
				}
				break;
			}
		case SV_LEAF:
		case SV_KEY_LEAF:
			{
				SvLeaf		leaf;
				const uint8_t *end = page + ((const SvPageHeader *) page)->lower;

				sv_leaf_open(contents, &leaf);
				require(leaf.count >= 1 && leaf.count <= SV_LEAF_MAX_ENTRIES);
				require(leaf.key_bytes <= 8);
				require(leaf.keys + (size_t) leaf.count * leaf.key_bytes <= end);
				for (int i = 0; i < leaf.count; i++)
					sum += sv_leaf_key(&leaf, i);
				if (kind == SV_LEAF)
				{
					require(leaf.tids != NULL && leaf.tid_bytes >= 1 && leaf.tid_bytes <= 6);
					require(leaf.dead + ((size_t) leaf.count + 7) / 8 <= end);
					for (int i = 0; i < leaf.count; i++)
					{
						uint32_t	block;
						uint16_t	offset;

						sv_leaf_tid(&leaf, i, &block, &offset);
						sum += block + offset + sv_leaf_is_dead(&leaf, i);
					}
				}
				else
					require(leaf.tids == NULL && leaf.tid_bytes == 0);
				(void) sv_leaf_lower_bound(&leaf, sum, ~(uint64_t) 0);
				{
					/* the interpolating search stays within the leaf, sorted or not */
					int			from = (int) (sum % ((uint64_t) leaf.count + 1));
					int			at = sv_leaf_seek(&leaf, from, sum, ~(uint64_t) 0 << (sum % 64),
												  (sum >> 6) & 1);

					require(at >= from && at <= leaf.count);
				}
				{
					/* the key loop (AVX2: 16-byte loads) reads within the page */
					static uint16_t hits[SV_LEAF_MAX_ENTRIES];
					int			from = (int) ((sum >> 8) % ((uint64_t) leaf.count + 1));

					require(sv_leaf_match(&leaf, from, leaf.count, sum, (int) (sum % 65), hits) <=
							leaf.count - from);
				}
				require(o->next == SV_INVALID_BLOCK || sv_block_ok(o->next, facts->nblocks));
				break;
			}
		default:
			{
				int			n = sv_page_items(page, kind == FUZZ_LEAF1 ? SV_PENDING : kind);
				size_t		unit = kind == SV_RETIRED_PAGE ? sizeof(SvRetired) : 16;

				require(n >= 0);
				require(SV_PAGE_HEADER + n * unit <= SV_BLCKSZ - SV_SPECIAL);
				require(kind == SV_PENDING || kind == SV_RETIRED_PAGE || n >= 1);
				for (size_t i = 0; i < n * unit; i++)
					sum += contents[i];
				if (kind == FUZZ_LEAF1 || kind == SV_PENDING)
					require(o->next == SV_INVALID_BLOCK || sv_block_ok(o->next, facts->nblocks));
				break;
			}
	}
	return sum;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t pagebuf[SV_BLCKSZ / 8];	/* aligned as a buffer page */
	uint8_t    *page = (uint8_t *) pagebuf;
	uint16_t	kind;
	uint16_t	check_kind;
	int			is_meta;
	SvFacts		facts;
	const char *problem = NULL;
	SvVerdict	v;
	volatile uint64_t sink;

	if (size < 5)
		return 0;
	kind = 1 + data[0] % FUZZ_KINDS;
	facts.ntables = 1 + data[1] % 40;
	facts.nblocks = 2 + (data[2] | data[3] << 8);
	build_page(page, kind == SV_FREE ? SV_LEAF : kind, data[4], facts.ntables, facts.nblocks);
	check_kind = kind == SV_FREE ? SV_LEAF : kind == FUZZ_LEAF1 ? SV_FORMAT1_LEAF : kind;
	is_meta = (kind == SV_META || kind == FUZZ_META1);

	/* the valid page passes */
	if (is_meta)
		require(sv_check_meta(page, facts.nblocks, &problem) == SV_OK);
	else if (kind != SV_FREE)
		require(sv_check_page(page, check_kind, GENERATION * (kind != SV_RETIRED_PAGE), &facts, &problem) == SV_OK);
	if (kind == FUZZ_LEAF1)
	{
		/* a format-1 leaf is not a format-2 one, and any leaf to a page walk */
		require(sv_check_page(page, SV_LEAF, GENERATION, &facts, &problem) == SV_BAD);
		require(sv_check_page(page, SV_ANY_LEAF, GENERATION, &facts, &problem) == SV_OK);
	}

	/* patches: (offset low, offset high, byte) */
	for (size_t i = 5; i + 3 <= size; i += 3)
		page[(data[i] | data[i + 1] << 8) % SV_BLCKSZ] = data[i + 2];

	if (is_meta)
		v = sv_check_meta(page, facts.nblocks, &problem);
	else
		v = sv_check_page(page, check_kind, GENERATION * (kind != SV_RETIRED_PAGE), &facts, &problem);
	if (v == SV_OK)
		sink = consume(page, is_meta ? (sv_meta_is_format1(page) ? FUZZ_META1 : SV_META) :
					   kind == SV_FREE ? SV_LEAF : kind, &facts);
	else
		require(problem != NULL && problem[0] != '\0');
	(void) sink;
	return 0;
}

#ifdef FUZZ_STANDALONE
/*
 * Without libFuzzer (test/unit builds this as test_index_pages): seeded
 * random inputs, for CI.  Usage: test_index_pages [iterations [seed]]
 */
#include <stdio.h>

int
main(int argc, char **argv)
{
	long		iterations = argc > 1 ? atol(argv[1]) : 300000;
	uint64_t	state = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
	uint8_t		input[64];

	for (long it = 0; it < iterations; it++)
	{
		size_t		size = 5 + 3 * (it % 8);

		for (size_t i = 0; i < size; i++)
		{
			/* xorshift64 */
			state ^= state << 13;
			state ^= state >> 7;
			state ^= state << 17;
			input[i] = (uint8_t) state;
		}
		/*
		 * half the patches hit the page header and special space, or the
		 * first 16 bytes of the contents (a leaf's header)
		 */
		for (size_t i = 5; i + 3 <= size; i += 6)
		{
			uint16_t	off = (input[i] & 1) ? 8176 + input[i + 1] % 16 :
				(input[i] & 2) ? 24 + input[i + 1] % 16 : 12 + input[i + 1] % 8;

			input[i] = off & 0xFF;
			input[i + 1] = off >> 8;
		}
		LLVMFuzzerTestOneInput(input, size);
	}
	printf("test_index_pages: %ld inputs, every check held\n", iterations);
	return 0;
}
#endif
