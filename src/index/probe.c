/*
 * probe.c
 *		Searching the simhash index (design: am.h): the entries of a run
 *		within a radius of a query, by probing each table's tree at every
 *		prefix within the probe distance of the query's (or by reading the
 *		first tree whole when that is cheaper), and of a list, by reading
 *		it.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "port/pg_bitutils.h"

#include "am.h"

#define MAX_PROBES_PER_TABLE 4096

/*
 * The prefix distance to probe for radius r: if two fingerprints are
 * within r bits, some table's chosen m - k blocks differ in at most this
 * many bits (the m - k blocks with the fewest differences, with the r
 * differing bits spread as evenly as possible over the m blocks).
 */
static int
probe_distance(const SimhashBlocks *blocks, int radius)
{
	int			m = blocks->nblocks;
	int			k = blocks->max_distance;

	return (m - k) * (radius / m) + Max(0, radius % m - k);
}

/* what a search of one tree looks for, and where its matches go */
typedef struct SearchState
{
	Relation	index;
	uint64		generation;
	const SimhashTable *tab;
	const SimhashRunTree *tree;
	uint64		center;
	int			radius;
	SimhashMatches *out;
	SimhashResolver *resolver;	/* other tables' hashes, to resolve */
} SearchState;

/* Is entry e live and within radius of center? */
static inline bool
entry_matches(const SimhashEntry *e, uint64 center, int radius)
{
	return !(e->flags & SIMHASH_ENTRY_DEAD) && pg_popcount64(e->hash ^ center) <= radius;
}

/*
 * All live entries of a tree whose permuted prefix equals that of permuted
 * key `lo` and within the radius: table 0's go to s->out, other tables'
 * hashes are resolved in table 0 at the end of simhash_search_run()
 * (leaf.c).
 */
static void
search_prefix(SearchState *s, uint64 lo)
{
	simhash_search_leaves(s->index, s->tree, s->generation, s->tab, lo,
						  s->center, s->radius, s->resolver, s->out);
}

/* Probe every prefix within `left` more flipped bits, at bits below `bit`. */
static void
probe(SearchState *s, uint64 prefix, int bit, int lowest, int left)
{
	search_prefix(s, prefix);
	if (left == 0)
		return;
	for (int b = bit - 1; b >= lowest; b--)
		probe(s, prefix ^ ((uint64) 1 << b), b, lowest, left - 1);
}

/* How many prefixes of `bits` bits lie within e bits of one (saturating). */
static uint64
count_probes(int bits, int e)
{
	uint64		total = 0;

	for (int j = 0; j <= e && j <= bits; j++)
	{
		uint64		c = simhash_binomial(bits, j);

		if (c == UINT64_MAX || total + c < total)
			return UINT64_MAX;
		total += c;
	}
	return total;
}

/*
 * Would simhash_search_run() read a whole tree, for this radius and a run
 * of nentries?  When the probes (a descent of each table's tree each) would
 * touch more pages than the first tree's leaves, reading those is cheaper.
 */
bool
simhash_search_reads_all(const SimhashBlocks *blocks, int radius, uint64 nentries)
{
	SimhashTable tab;
	uint64		probes;
	double		leaves = (double) nentries / SIMHASH_PAGE_ITEMS + 1;
	double		height = 1;

	simhash_table_init(blocks, 0, &tab);
	probes = count_probes(tab.prefix_bits, probe_distance(blocks, Min(radius, 64)));
	if (probes > MAX_PROBES_PER_TABLE)
		return true;
	for (double pages = leaves; pages > 1; pages /= SIMHASH_PAGE_ITEMS)
		height++;
	return (double) probes * blocks->ntables * height > leaves;
}

/* what match_entries() looks for, and where its matches go */
typedef struct MatchArg
{
	uint64		center;
	int			radius;
	SimhashMatches *out;
} MatchArg;

/* Pass on the live entries of a page within the radius. */
static void
match_entries(const SimhashEntry *entries, int n, void *arg)
{
	MatchArg   *m = (MatchArg *) arg;

	for (int i = 0; i < n; i++)
		if (entry_matches(&entries[i], m->center, m->radius))
			m->out->fn(m->out->arg, (ItemPointer) &entries[i].tid, entries[i].hash);
}

/* Matching live entries of a chain of leaves or list pages. */
static void
scan_chain(Relation index, BlockNumber blkno, uint16 kind, uint64 generation,
		   uint64 center, int radius, SimhashMatches *out)
{
	MatchArg	m = {center, radius, out};

	simhash_walk_chain(index, blkno, kind, generation, match_entries, &m);
}

/*
 * Add to *out the TIDs of a run's live entries within radius of center.
 * Each TID is added once.
 */
void
simhash_search_run(Relation index, const SimhashBlocks *blocks,
				   const SimhashRunRef *run, uint64 center, int radius,
				   SimhashMatches *out)
{
	SimhashRunHeader *header;
	int			e;
	SimhashTable *tab;
	SimhashResolver resolver;

	if (radius < 0)
		return;
	radius = Min(radius, 64);
	header = simhash_read_run_header(index, run->header, run->generation, NULL);

	/* probing would cost more than reading one tree in full */
	if (simhash_search_reads_all(blocks, radius, header->nentries))
	{
		scan_chain(index, simhash_leftmost_leaf(index, &header->trees[0],
												run->generation, NULL),
				   SIMHASH_LEAF, run->generation, center, radius, out);
		pfree(header);
		return;
	}

	e = probe_distance(blocks, radius);
	tab = palloc(sizeof(SimhashTable));
	simhash_resolver_init(&resolver);
	for (int t = 0; t < blocks->ntables; t++)
	{
		SearchState s;
		uint64		qkey;

		simhash_table_init(blocks, t, tab);
		s.index = index;
		s.generation = run->generation;
		s.tab = tab;
		s.tree = &header->trees[t];
		s.center = center;
		s.radius = radius;
		s.out = out;
		s.resolver = &resolver;
		qkey = simhash_table_permute(tab, center) & tab->prefix_mask;
		probe(&s, qkey, 64, 64 - tab->prefix_bits, Min(e, tab->prefix_bits));
		CHECK_FOR_INTERRUPTS();
	}
	simhash_resolve(index, &header->trees[0], run->generation, &resolver, out);
	pfree(tab);
	pfree(header);
}

/* Add to *out the TIDs of a list's live entries within radius of center. */
void
simhash_search_list(Relation index, const SimhashList *list,
					uint64 center, int radius, SimhashMatches *out)
{
	if (radius >= 0)
		scan_chain(index, list->head, SIMHASH_PENDING, list->generation,
				   center, radius, out);
}
