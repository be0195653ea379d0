/*
 * format1.c
 *		Reading the runs of an index written by format 1 (release 1.0), so
 *		that an index built by 1.0 is read and written after an upgrade of
 *		the library without a REINDEX.
 *
 * What differs (src/index/README.md, "Format"): format 1's metapage has one pending and
 * one flushing list where format 2 has lanes, and its runs' trees are
 * uncompressed: every table's tree holds (hash, TID, flags) entries of 16
 * bytes (page kind SIMHASH_LEAF in every table), sorted by the table's
 * permuted prefix (not the whole permuted hash), each tree with its own
 * dead flags.  Run headers, inner pages, pending and nulls list pages and
 * retired items are the same in both formats.
 *
 * The scheme: convert lazily, never all at once.
 *	- The metapage: a reader converts a format-1 metapage to format 2's
 *	  layout in memory (pages.c, core sv_meta_from_format1()); the first
 *	  write that locks it (an insert, a flush, VACUUM) rewrites it in place
 *	  in format 2's layout, WAL-logged as one generic record, so that crash
 *	  recovery and standbys see either the old or the new page.  Its runs
 *	  are then marked SIMHASH_RUN_FORMAT1 in their SimhashRunRef.format; the
 *	  pending and flushing lists become lane 0 (their pages need nothing).
 *	- A format-1 run stays as it is until a merge rewrites it (a flush that
 *	  takes it, VACUUM's rewrite of runs with many dead entries, its
 *	  compaction, which rewrites all runs): meanwhile this file searches it
 *	  (simhash_format1_search_run(), the probes of format 1 by the radius's
 *	  probe plan), merges read its live entries (simhash_read_run_entries(),
 *	  from table 0's tree, held in memory and sorted with the flushed lanes,
 *	  merge.c: about 14 bytes and the sort's 24 per entry), VACUUM marks dead entries in each of its
 *	  trees (vacuum.c), simhash_index_check() checks it (check.c) and the
 *	  recycling of its pages reads its leaves as SIMHASH_ANY_LEAF.
 * A REINDEX writes format 2 at once: smaller, and lookups read fewer pages.
 * Every page is read through simhash_read_page() with the kind
 * SIMHASH_FORMAT1_LEAF, whose check (core/index_pages.c) bounds the item
 * count before it sizes a loop.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "port/pg_bitutils.h"

#include "am.h"
#include "core/probe_plan.h"

/* what one table's probes of a format-1 run look for */
typedef struct Format1Search
{
	Relation	index;
	uint64		generation;
	const SimhashBlocks *blocks;
	const SimhashProbePlan *plan;
	SimhashTable *tabs;			/* every table of the plan, by number */
	int			table;			/* the table probed */
	const SimhashRunTree *tree;
	uint64		center;
	int			radius;
	SimhashMatches *out;
} Format1Search;

/* Would table t's probes (with the plan's error) find hash? */
static bool
table_finds(const Format1Search *s, int t, uint64 hash)
{
	const SimhashTable *tab = &s->tabs[t];
	uint64		diff = simhash_table_permute(tab, hash) ^ simhash_table_permute(tab, s->center);

	return s->plan->e[t] >= 0 &&
		pg_popcount64(diff & tab->prefix_mask) <= Min(s->plan->e[t], tab->prefix_bits);
}

/*
 * Pass on a live entry within the radius, unless an earlier table of the
 * plan finds it too (so each TID is passed on once per run).
 */
static void
match_entry(const Format1Search *s, const SimhashEntry *e)
{
	if ((e->flags & SIMHASH_ENTRY_DEAD) || pg_popcount64(e->hash ^ s->center) > s->radius)
		return;
	for (int t = 0; t < s->table; t++)
		if (table_finds(s, t, e->hash))
			return;
	s->out->fn(s->out->arg, (ItemPointer) &e->tid, e->hash);
}

/* The entries of the probed tree whose permuted prefix equals lo's. */
static void
search_prefix(const Format1Search *s, uint64 lo)
{
	const SimhashTable *tab = &s->tabs[s->table];
	uint64		mask = tab->prefix_mask;
	BlockNumber blkno = s->tree->root;
	SimhashChain chain;
	Buffer		buffer;

	lo &= mask;
	/* descend to the last child whose first prefix is below lo */
	for (int level = s->tree->height; level > 0; level--)
	{
		Page		page;
		SimhashInnerItem *items;
		int			a = 0,
					b;

		buffer = simhash_read_page(s->index, blkno, BUFFER_LOCK_SHARE, SIMHASH_INNER,
								   s->generation, 0, NULL);
		page = BufferGetPage(buffer);
		items = SimhashPageInner(page);
		b = SimhashPageItems(page);	/* checked: 1 .. SIMHASH_PAGE_ITEMS */
		while (a < b)
		{
			int			mid = (a + b) / 2;

			if ((items[mid].key & mask) < lo)
				a = mid + 1;
			else
				b = mid;
		}
		blkno = items[a > 0 ? a - 1 : 0].child;
		UnlockReleaseBuffer(buffer);
	}

	/* the leaves from the first entry whose prefix is >= lo, while it is lo */
	simhash_chain_begin(&chain, s->index, blkno, SIMHASH_FORMAT1_LEAF, s->generation,
						BUFFER_LOCK_SHARE, 0, NULL);
	while (BufferIsValid(buffer = simhash_chain_next(&chain)))
	{
		Page		page = BufferGetPage(buffer);
		SimhashEntry *entries = SimhashPageEntries(page);
		int			n = SimhashPageItems(page);	/* checked */
		int			a = 0,
					b = n;
		bool		done = false;

		while (a < b)
		{
			int			mid = (a + b) / 2;

			if ((simhash_table_permute(tab, entries[mid].hash) & mask) < lo)
				a = mid + 1;
			else
				b = mid;
		}
		for (int i = a; i < n && !done; i++)
		{
			if ((simhash_table_permute(tab, entries[i].hash) & mask) != lo)
				done = true;
			else
				match_entry(s, &entries[i]);
		}
		UnlockReleaseBuffer(buffer);
		if (done)
			break;
	}
}

/* Probe every prefix within `left` more flipped bits, at bits below `bit`. */
static void
probe(const Format1Search *s, uint64 prefix, int bit, int lowest, int left)
{
	search_prefix(s, prefix);
	CHECK_FOR_INTERRUPTS();
	if (left == 0)
		return;
	for (int b = bit - 1; b >= lowest; b--)
		probe(s, prefix ^ ((uint64) 1 << b), b, lowest, left - 1);
}

/* Receives the entries of table 0's leaves read whole. */
static void
match_page(const SimhashEntry *entries, int n, void *arg)
{
	const Format1Search *s = (const Format1Search *) arg;

	for (int i = 0; i < n; i++)
		match_entry(s, &entries[i]);
}

/*
 * Pass on to *out the TIDs of a format-1 run's live entries within radius
 * of center, each once: the tables of the radius's probe plan are probed at
 * every prefix within the plan's error (each table's tree holds every
 * entry), or table 0's leaves are read whole when that is cheaper.
 */
void
simhash_format1_search_run(Relation index, const SimhashBlocks *blocks,
						   const SimhashRunRef *run, uint64 center, int radius,
						   SimhashMatches *out)
{
	SimhashRunHeader *header;
	Format1Search s;

	if (radius < 0)
		return;
	radius = Min(radius, 64);
	header = simhash_read_run_header(index, run->header, run->generation, NULL);
	s.index = index;
	s.generation = run->generation;
	s.blocks = blocks;
	s.center = center;
	s.radius = radius;
	s.out = out;
	s.tabs = palloc(blocks->ntables * sizeof(SimhashTable));
	for (int t = 0; t < blocks->ntables; t++)
		simhash_table_init(blocks, t, &s.tabs[t]);

	if (simhash_search_reads_all(blocks, radius, header->nentries))
	{
		s.plan = NULL;
		s.table = 0;			/* no earlier table: every entry is tested */
		simhash_walk_chain(index, simhash_leftmost_leaf(index, &header->trees[0],
														run->generation, NULL),
						   SIMHASH_FORMAT1_LEAF, run->generation, match_page, &s);
	}
	else
	{
		/* at most MAX_PROBES_PER_TABLE prefixes a table: else reads_all */
		s.plan = simhash_search_plan(blocks, radius);
		for (int t = 0; t < blocks->ntables; t++)
		{
			const SimhashTable *tab = &s.tabs[t];

			if (s.plan->e[t] < 0)
				continue;
			s.table = t;
			s.tree = &header->trees[t];
			probe(&s, simhash_table_permute(tab, center) & tab->prefix_mask, 64,
				  64 - tab->prefix_bits, Min(s.plan->e[t], tab->prefix_bits));
		}
	}
	pfree(s.tabs);
	pfree(header);
}
