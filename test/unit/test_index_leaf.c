/*
 * test/unit/test_index_leaf.c: the compressed leaves of the simhash index
 * (src/core/index_leaf.c, format 2): round trips of entry and key leaves,
 * duplicates of one hash, TID extremes, a full page, the layout check
 * (src/core/index_pages.c) on good and damaged leaves, and that table 0's
 * permutation is the identity (table 0's leaves store hashes as keys).
 */
#include "index_leaf.h"
#include "index_pages.h"
#include "blocks.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>

static SvLeafBuilder builder;
static uint64_t pagebuf[8192 / 8];

/* Encode builder into a page image of kind; returns its SV_OK verdict. */
static bool
encode_page(uint16_t kind)
{
	uint8_t    *page = (uint8_t *) pagebuf;
	SvPageHeader *h = (SvPageHeader *) page;
	SvOpaque   *o = (SvOpaque *) (page + SV_BLCKSZ - SV_SPECIAL);
	SvFacts		facts = {4, 100};
	const char *problem = NULL;

	memset(page, 0, sizeof(pagebuf));
	h->upper = h->special = SV_BLCKSZ - SV_SPECIAL;
	o->generation = 3;
	o->next = SV_INVALID_BLOCK;
	o->kind = kind;
	o->page_id = SV_PAGE_ID;
	h->lower = SV_PAGE_HEADER + sv_leaf_encode(&builder, page + SV_PAGE_HEADER);
	return sv_check_page(page, kind, 3, &facts, &problem) == SV_OK;
}

/* Round trip: n sorted keys with TIDs (entries) or without. */
static void
round_trip(const uint64_t *keys, const uint32_t *blocks, const uint16_t *offsets,
		   int n, bool entries, const char *what)
{
	SvLeaf		leaf;
	int			bad = 0;

	sv_leaf_builder_init(&builder, entries);
	for (int i = 0; i < n; i++)
	{
		CHECK(sv_leaf_fits(&builder, keys[i], blocks[i], offsets[i]), "%s: entry %d fits", what, i);
		sv_leaf_add(&builder, keys[i], blocks[i], offsets[i]);
	}
	CHECK(encode_page(entries ? SV_LEAF : SV_KEY_LEAF), "%s: the page check accepts it", what);
	sv_leaf_open((uint8_t *) pagebuf + SV_PAGE_HEADER, &leaf);
	CHECK(leaf.count == n, "%s: count %d", what, leaf.count);
	for (int i = 0; i < n; i++)
	{
		bad += sv_leaf_key(&leaf, i) != keys[i];
		if (entries)
		{
			uint32_t	b;
			uint16_t	o;

			sv_leaf_tid(&leaf, i, &b, &o);
			bad += b != blocks[i] || o != offsets[i] || sv_leaf_is_dead(&leaf, i);
		}
	}
	CHECK(bad == 0, "%s: %d entries differ", what, bad);
	/* the lower bound of every key is its first occurrence */
	bad = 0;
	for (int i = 0; i < n; i++)
	{
		int			lb = sv_leaf_lower_bound(&leaf, keys[i], ~UINT64_C(0));

		bad += lb > i || sv_leaf_key(&leaf, lb) != keys[i] ||
			(lb > 0 && sv_leaf_key(&leaf, lb - 1) == keys[i]);
	}
	CHECK(bad == 0, "%s: %d lower bounds wrong", what, bad);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a,
				y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

static void
test_round_trips(void)
{
	static uint64_t keys[SV_LEAF_MAX_ENTRIES];
	static uint32_t blocks[SV_LEAF_MAX_ENTRIES];
	static uint16_t offsets[SV_LEAF_MAX_ENTRIES];

	/* random keys and TIDs, sorted */
	for (int i = 0; i < 500; i++)
	{
		keys[i] = next();
		blocks[i] = (uint32_t) (next() % 100000);
		offsets[i] = (uint16_t) (1 + next() % 291);
	}
	qsort(keys, 500, 8, cmp_u64);
	round_trip(keys, blocks, offsets, 500, true, "random entries");
	round_trip(keys, blocks, offsets, 500, false, "random keys");

	/* one entry */
	round_trip(keys, blocks, offsets, 1, true, "one entry");

	/* duplicates of one hash: key_bytes 0 */
	for (int i = 0; i < 300; i++)
	{
		keys[i] = UINT64_C(0xDEADBEEF01234567);
		blocks[i] = (uint32_t) i;
		offsets[i] = 1;
	}
	round_trip(keys, blocks, offsets, 300, true, "duplicates");
	sv_leaf_builder_init(&builder, true);
	sv_leaf_add(&builder, keys[0], 0, 1);
	sv_leaf_add(&builder, keys[0], 1, 1);
	CHECK(builder.key_bytes == 0, "duplicates take no key bytes");

	/* TID extremes: block 0 and 2^32 - 2, offsets 1 and 65535 */
	keys[0] = 0;
	keys[1] = 1;
	keys[2] = UINT64_MAX - 1;
	keys[3] = UINT64_MAX;
	blocks[0] = 0;
	offsets[0] = 1;
	blocks[1] = 0xFFFFFFFEu;
	offsets[1] = 1;
	blocks[2] = 0xFFFFFFFFu;
	offsets[2] = 0xFFFF;
	blocks[3] = 7;
	offsets[3] = 0;
	round_trip(keys, blocks, offsets, 4, true, "TID and key extremes");
}

/* Fill a leaf until it does not fit: the page is full, and checked. */
static void
test_full_page(void)
{
	int			n = 0;
	uint64_t	key = UINT64_C(1) << 60;
	SvLeaf		leaf;
	bool		ok = true;

	sv_leaf_builder_init(&builder, true);
	for (;;)
	{
		uint32_t	block = (uint32_t) (next() % 5400);
		uint16_t	offset = (uint16_t) (1 + next() % 185);

		key += next() >> 20;	/* about 2^44 apart: 1M keys in 2^64 */
		if (!sv_leaf_fits(&builder, key, block, offset))
			break;
		sv_leaf_add(&builder, key, block, offset);
		n++;
	}
	CHECK(sv_leaf_bytes(builder.count, builder.key_bytes, builder.tid_bytes) <= SV_LEAF_CONTENTS,
		  "a full leaf fits the page");
	CHECK(builder.key_bytes == 7 && builder.tid_bytes == 3,
		  "1M-row density: 7 key bytes, 3 TID bytes (got %d, %d)",
		  builder.key_bytes, builder.tid_bytes);
	CHECK(n > 780, "a full entry leaf holds %d entries (10.1 bytes each)", n);
	CHECK(encode_page(SV_LEAF), "the full page passes the check");
	sv_leaf_open((uint8_t *) pagebuf + SV_PAGE_HEADER, &leaf);
	for (int i = 1; i < leaf.count; i++)
		ok &= sv_leaf_key(&leaf, i) > sv_leaf_key(&leaf, i - 1);
	CHECK(ok && leaf.count == n, "the full page decodes in order");

	/* a key leaf of duplicates is capped by SV_LEAF_MAX_ENTRIES */
	sv_leaf_builder_init(&builder, false);
	n = 0;
	while (sv_leaf_fits(&builder, 42, 0, 0))
	{
		sv_leaf_add(&builder, 42, 0, 0);
		n++;
	}
	CHECK(n == SV_LEAF_MAX_ENTRIES, "duplicate keys stop at %d (got %d)", SV_LEAF_MAX_ENTRIES, n);
	CHECK(encode_page(SV_KEY_LEAF), "the capped key leaf passes the check");

	/*
	 * Leaves of narrow fields that end at the page's special space: the
	 * encoder writes nothing past the leaf's last byte (the special space's
	 * generation, which the check compares, comes right after it).
	 */
	for (int kb = 1; kb <= 3; kb++)
	{
		int			bytes;

		for (int entries = 0; entries <= 1; entries++)
		{
			/* the first key, then keys kb bytes above it */
			uint64_t	top = 1000 + (UINT64_C(1) << (8 * kb)) - 1;

			sv_leaf_builder_init(&builder, entries);
			for (key = 1000; sv_leaf_fits(&builder, key, 0, 1); key = top)
				sv_leaf_add(&builder, key, 0, 1);
			CHECK(builder.key_bytes == kb, "a leaf of %d-byte keys (got %d)", kb, builder.key_bytes);
			bytes = (int) sv_leaf_bytes(builder.count, builder.key_bytes, builder.tid_bytes);
			CHECK(encode_page(entries ? SV_LEAF : SV_KEY_LEAF),
				  "a full leaf of %d-byte keys (%s, %d bytes of %d) leaves the special space intact",
				  kb, entries ? "entries" : "keys only", bytes, SV_LEAF_CONTENTS);
		}
	}
}

/* Dead bits set in place; damaged headers refused. */
static void
test_dead_and_damage(void)
{
	uint8_t    *page = (uint8_t *) pagebuf;
	uint8_t    *contents = page + SV_PAGE_HEADER;
	SvLeafHeader *lh = (SvLeafHeader *) contents;
	SvFacts		facts = {4, 100};
	const char *problem;
	SvLeaf		leaf;
	int			bad = 0;

	sv_leaf_builder_init(&builder, true);
	for (int i = 0; i < 20; i++)
		sv_leaf_add(&builder, (uint64_t) i * 1000, (uint32_t) i, 1);
	CHECK(encode_page(SV_LEAF), "a 20-entry leaf");
	sv_leaf_set_dead(contents, 0);
	sv_leaf_set_dead(contents, 9);
	sv_leaf_set_dead(contents, 19);
	sv_leaf_open(contents, &leaf);
	for (int i = 0; i < 20; i++)
		bad += sv_leaf_is_dead(&leaf, i) != (i == 0 || i == 9 || i == 19) ||
			sv_leaf_key(&leaf, i) != (uint64_t) i * 1000;
	CHECK(bad == 0, "dead bits: %d wrong", bad);

	/* the same page as a key leaf is refused (it has TIDs) */
	((SvOpaque *) (page + SV_BLCKSZ - SV_SPECIAL))->kind = SV_KEY_LEAF;
	CHECK(sv_check_page(page, SV_KEY_LEAF, 3, &facts, &problem) == SV_BAD,
		  "an entry leaf read as a key leaf is refused");
	((SvOpaque *) (page + SV_BLCKSZ - SV_SPECIAL))->kind = SV_LEAF;

	lh->count = 21;
	CHECK(sv_check_page(page, SV_LEAF, 3, &facts, &problem) == SV_BAD, "a count past the size");
	lh->count = 0;
	CHECK(sv_check_page(page, SV_LEAF, 3, &facts, &problem) == SV_BAD, "count 0");
	lh->count = 20;
	lh->key_bytes = 9;
	CHECK(sv_check_page(page, SV_LEAF, 3, &facts, &problem) == SV_BAD, "key width 9");
	lh->key_bytes = 2;
	lh->tid_bytes = 6;
	lh->off_bits = 1;
	CHECK(sv_check_page(page, SV_LEAF, 3, &facts, &problem) == SV_BAD, "a block of 47 bits");
	lh->tid_bytes = 1;
	lh->off_bits = 0;
	CHECK(sv_check_page(page, SV_LEAF, 3, &facts, &problem) == SV_BAD, "off_bits 0");
	lh->off_bits = 17;
	CHECK(sv_check_page(page, SV_LEAF, 3, &facts, &problem) == SV_BAD, "off_bits 17");
	lh->off_bits = 1;
	CHECK(sv_check_page(page, SV_LEAF, 3, &facts, &problem) == SV_OK, "restored");
	((SvPageHeader *) page)->lower -= 1;
	CHECK(sv_check_page(page, SV_LEAF, 3, &facts, &problem) == SV_BAD, "pd_lower one short");
}

/* Table 0's permutation is the identity: its leaves' keys are the hashes. */
static void
test_table0_identity(void)
{
	int			bad = 0;

	for (int m = 1; m <= 16; m++)
		for (int k = 0; k < m && k <= 6; k++)
		{
			SimhashBlocks b;

			if (!simhash_blocks_init(&b, m, k))
				continue;
			for (int i = 0; i < 100; i++)
			{
				uint64_t	h = next();

				bad += simhash_permute(&b, 0, h) != h;
			}
		}
	CHECK(bad == 0, "table 0 permutes %d hashes", bad);
}

/* The first entry at or after from whose key & mask reaches t (past: exceeds it), by a linear scan. */
static int
seek_reference(const SvLeaf *leaf, int from, uint64_t key, uint64_t mask, bool past)
{
	uint64_t	t = key & mask;

	for (int i = from; i < leaf->count; i++)
	{
		uint64_t	k = sv_leaf_key(leaf, i) & mask;

		if (past ? k > t : k >= t)
			return i;
	}
	return leaf->count;
}

/*
 * sv_leaf_seek() against the linear reference on one sorted key leaf, for
 * targets at, beside and between its keys and at the extremes, under masks
 * of the top 64, 16, 20 and 1 bits, from several starting entries.
 */
static void
seek_leaf(uint64_t *keys, int n, const char *what)
{
	static const uint64_t masks[] = {
		~UINT64_C(0), UINT64_C(0xFFFF) << 48, UINT64_C(0xFFFFF) << 44, UINT64_C(1) << 63
	};
	SvLeaf		leaf;
	int			bad = 0,
				tried = 0;

	qsort(keys, n, 8, cmp_u64);
	sv_leaf_builder_init(&builder, false);
	for (int i = 0; i < n; i++)
		sv_leaf_add(&builder, keys[i], 0, 0);
	CHECK(encode_page(SV_KEY_LEAF), "%s: the page check accepts it", what);
	sv_leaf_open((uint8_t *) pagebuf + SV_PAGE_HEADER, &leaf);
	for (int m = 0; m < 4; m++)
		for (int j = 0; j < 3 * n + 8; j++)
		{
			uint64_t	t;
			int			from;

			if (j < n)
				t = keys[j];
			else if (j < 2 * n)
				t = keys[j - n] + 1;
			else if (j < 3 * n)
				t = keys[j - 2 * n] - 1;
			else
				t = j == 3 * n ? 0 : j == 3 * n + 1 ? UINT64_MAX : next();
			from = (j % 3 == 0) ? 0 : (int) (next() % (n + 1));
			for (int past = 0; past <= 1; past++)
			{
				int			got = sv_leaf_seek(&leaf, from, t, masks[m], past),
							want = seek_reference(&leaf, from, t, masks[m], past);

				if (got != want && bad++ < 5)
					printf("%s: seek(from %d, %016llx, mask %d, past %d) = %d, not %d\n",
						   what, from, (unsigned long long) t, m, past, got, want);
				tried++;
			}
			/* the lower bound from entry 0 is the same search */
			bad += sv_leaf_lower_bound(&leaf, t, masks[m]) !=
				seek_reference(&leaf, 0, t, masks[m], false);
		}
	CHECK(bad == 0, "%s: %d of %d seeks differ from the linear search", what, bad, tried);
}

/*
 * The interpolating search of a leaf (sv_leaf_seek()) finds what a plain
 * search finds on uniform keys (what it is tuned for), on skewed and
 * clustered ones, on a leaf of one repeated key, and on short leaves.
 */
static void
test_seek(void)
{
	static uint64_t keys[1000];

	for (int i = 0; i < 800; i++)
		keys[i] = next();
	seek_leaf(keys, 800, "uniform keys");

	/* a narrow leaf, as at 10M rows: keys about 2^44 apart */
	keys[0] = next();
	for (int i = 1; i < 800; i++)
		keys[i] = keys[i - 1] + (next() >> 20);
	seek_leaf(keys, 800, "dense uniform keys");

	/* skewed: most keys near 0, a few spread up to 2^64 */
	for (int i = 0; i < 800; i++)
		keys[i] = next() >> (next() % 60);
	seek_leaf(keys, 800, "skewed keys");

	/* clustered: four values, 200 copies each, and a far outlier */
	for (int i = 0; i < 800; i++)
		keys[i] = UINT64_C(0x1234000000000000) + (uint64_t) (i % 4) * 3;
	keys[799] = UINT64_MAX - 5;
	seek_leaf(keys, 800, "clustered keys");

	/* one key, repeated */
	for (int i = 0; i < 600; i++)
		keys[i] = UINT64_C(0xDEADBEEF01234567);
	seek_leaf(keys, 600, "all-equal keys");

	/* powers of two: interpolation guesses far off */
	for (int i = 0; i < 64; i++)
		keys[i] = UINT64_C(1) << i;
	seek_leaf(keys, 64, "powers of two");

	for (int n = 1; n <= 4; n++)
	{
		for (int i = 0; i < n; i++)
			keys[i] = next();
		seek_leaf(keys, n, "short leaf");
	}
}

/*
 * The key loops of sv_leaf_match() (portable, popcnt, AVX2: those this CPU
 * has) find the same entries as a direct count of differing bits, on
 * leaves of every key width 0 .. 8, over ranges of every length mod 4 and
 * alignment, for queries near stored keys and random ones, radius 0 .. 64.
 */
static void
test_match(void)
{
	static uint64_t keys[900];
	static uint16_t hits[900],
				want[900];
	int			bad = 0,
				tried = 0,
				nhits = 0,
				impls = 0;

	for (int impl = SV_MATCH_PORTABLE; impl <= SV_MATCH_AVX2; impl++)
		impls += sv_leaf_match_has((SvMatchImpl) impl);
	for (int width = 0; width <= 8; width++)
	{
		SvLeaf		leaf;
		int			n = 600;

		/* gaps of up to width bytes: key_bytes is about width */
		keys[0] = next();
		for (int i = 1; i < n; i++)
			keys[i] = keys[i - 1] + (width == 0 ? 0 :
									 (next() >> (64 - 8 * width)) / (uint64_t) n);
		sv_leaf_builder_init(&builder, false);
		for (int i = 0; i < n; i++)
			sv_leaf_add(&builder, keys[i], 0, 0);
		CHECK(encode_page(SV_KEY_LEAF), "match width %d: the page check accepts it", width);
		sv_leaf_open((uint8_t *) pagebuf + SV_PAGE_HEADER, &leaf);
		for (int trial = 0; trial < 300; trial++)
		{
			int			from = (int) (next() % (n + 1)),
						end = from + (int) (next() % (n + 1 - from)),
						radius = trial % 10 == 9 ? 64 : (int) (next() % 7),
						nwant = 0;
			uint64_t	qkey = trial % 5 == 4 ? next() : keys[next() % n];

			/* flip up to radius + 1 bits: some within it, some just beyond */
			for (int f = (int) (next() % (radius + 2)); f > 0; f--)
				qkey ^= UINT64_C(1) << (next() % 64);
			for (int i = from; i < end; i++)
				if (__builtin_popcountll(sv_leaf_key(&leaf, i) ^ qkey) <= radius)
					want[nwant++] = (uint16_t) i;
			nhits += nwant;
			for (int impl = SV_MATCH_PORTABLE; impl <= SV_MATCH_AVX2; impl++)
			{
				int			got;

				if (!sv_leaf_match_has((SvMatchImpl) impl))
					continue;
				memset(hits, 0xFF, sizeof(hits));
				got = sv_leaf_match_with((SvMatchImpl) impl, &leaf, from, end, qkey, radius, hits);
				if ((got != nwant || memcmp(hits, want, nwant * sizeof(uint16_t)) != 0) &&
					bad++ < 5)
					printf("match impl %d, key_bytes %d, %d .. %d, radius %d: %d hits, not %d\n",
						   impl, leaf.key_bytes, from, end, radius, got, nwant);
				tried++;
			}
			bad += sv_leaf_match(&leaf, from, end, qkey, radius, hits) != nwant;
		}
	}
	printf("test_match: %d key loops on this CPU, %d hits expected in all\n", impls, nhits);
	CHECK(nhits > 1000, "the matching test finds matches (%d)", nhits);
	CHECK(bad == 0, "%d of %d key loops differ from the direct count", bad, tried);
}

int
main(void)
{
	unit_seed(13);
	test_round_trips();
	test_full_page();
	test_dead_and_damage();
	test_table0_identity();
	test_seek();
	test_match();
	return unit_report("test_index_leaf");
}
