/*
 * probe.c
 *		Searching the simhash index (design: README.md): the entries of a run
 *		within a radius of a query, by probing the trees of the tables that
 *		the radius's probe plan names (core/probe_plan.h) at every prefix
 *		within the plan's error of the query's, in ascending order, each
 *		descent starting from the deepest inner page of the previous one
 *		that holds the prefix (or by reading the first tree whole when that
 *		is cheaper), inner pages from the backend's copies of them
 *		(inner_cache.c); the hashes other tables found resolved to their
 *		entries in table 0's tree; and of a list, by reading it.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/memutils.h"

#include "am.h"
#include "core/probe_plan.h"

#define MAX_PROBES_PER_TABLE 4096

/* probe plans computed in this backend, by (blocks, max_distance, radius) */
#define PLAN_CACHE 16
static SimhashProbePlan plan_cache[PLAN_CACHE];
static int	plans_cached = 0;
static int	plan_next = 0;

/*
 * The probe plan of radius r (0 .. 64) for these blocks: computed once per
 * backend (up to about 30 ms for large settings, microseconds at the
 * default) and kept.
 */
const SimhashProbePlan *
simhash_search_plan(const SimhashBlocks *blocks, int radius)
{
	SimhashProbePlan *plan;
	size_t		size;
	void	   *space;

	for (int i = 0; i < plans_cached; i++)
		if (plan_cache[i].nblocks == blocks->nblocks &&
			plan_cache[i].max_distance == blocks->max_distance &&
			plan_cache[i].radius == radius)
			return &plan_cache[i];
	size = simhash_probe_plan_space(blocks, radius);
	space = size > 0 ? palloc(size) : NULL;
	plan = &plan_cache[plan_next];
	plan->nblocks = 0;			/* not valid until computed */
	simhash_probe_plan(blocks, radius, space, plan);
	if (space)
		pfree(space);
	plan_next = (plan_next + 1) % PLAN_CACHE;
	plans_cached = Max(plans_cached, plan_next == 0 ? PLAN_CACHE : plan_next);
	return plan;
}

/*
 * The tables of the blocks searched last in this backend, by (blocks,
 * max_distance) as the plans are: a SimhashTable is about 2 kB and takes
 * O(m) to compute, which a lookup paid for each table it probed.  Kept for
 * up to TABLE_CACHE tables (larger settings compute them per search).
 */
#define TABLE_CACHE 64
static SimhashTable *table_cache;	/* [TABLE_CACHE], TopMemoryContext */
static int	tables_nblocks = 0;
static int	tables_max_distance = -1;

/*
 * The tables of these blocks (blocks->ntables of them), from the cache,
 * or NULL when there are more than TABLE_CACHE.
 */
static const SimhashTable *
probe_tables(const SimhashBlocks *blocks)
{
	if (blocks->ntables > TABLE_CACHE)
		return NULL;
	if (tables_nblocks != blocks->nblocks || tables_max_distance != blocks->max_distance)
	{
		if (table_cache == NULL)
			table_cache = MemoryContextAlloc(TopMemoryContext,
											 TABLE_CACHE * sizeof(SimhashTable));
		tables_nblocks = 0;		/* not valid until computed */
		for (int t = 0; t < blocks->ntables; t++)
			simhash_table_init(blocks, t, &table_cache[t]);
		tables_nblocks = blocks->nblocks;
		tables_max_distance = blocks->max_distance;
	}
	return table_cache;
}

/* Table t of these blocks: cached, or computed into *scratch. */
static const SimhashTable *
probe_table(const SimhashBlocks *blocks, int t, SimhashTable *scratch)
{
	const SimhashTable *tables = probe_tables(blocks);

	if (tables)
		return &tables[t];
	simhash_table_init(blocks, t, scratch);
	return scratch;
}

/* The prefix width of table t of these blocks. */
static int
probe_prefix_bits(const SimhashBlocks *blocks, int t)
{
	const SimhashTable *tables = probe_tables(blocks);

	return tables ? tables[t].prefix_bits : simhash_prefix_bits(blocks, t);
}

/*
 * One inner page of the path of the last descent of a tree, with the
 * range of prefixes P whose descent passes through it, low < P <= high
 * (masked keys; a missing bound is unbounded): read from its copy, or
 * kept pinned (not locked) while the tree is probed.
 */
typedef struct PathPage
{
	bool		valid;			/* the path holds a page at this level */
	Buffer		buffer;			/* InvalidBuffer: none pinned */
	BlockNumber blkno;
	bool		has_low;
	bool		has_high;
	uint64		low;
	uint64		high;
} PathPage;

/* what a search of one tree looks for, and where its matches go */
typedef struct SearchState
{
	Relation	index;
	uint64		generation;
	const SimhashTable *tab;
	const SimhashRunTree *tree;
	uint64		mask;			/* the prefixes' mask: the table's prefix_mask */
	uint64		center;
	int			radius;
	SimhashMatches *out;
	SimhashResolver *resolver;	/* other tables' hashes, to resolve */
	PathPage   *path;			/* [1 .. tree->height]: level 1 is above the leaves */
	Buffer		leaf;			/* the last leaf read, kept pinned (unlocked) */
	BlockNumber leaf_blkno;
} SearchState;

/* Is entry e live and within radius of center? */
static inline bool
entry_matches(const SimhashEntry *e, uint64 center, int radius)
{
	return !(e->flags & SIMHASH_ENTRY_DEAD) && pg_popcount64(e->hash ^ center) <= radius;
}

/* Unpin the kept path of a tree's last descent and its last leaf. */
static void
path_release(SearchState *s)
{
	for (int level = 1; level <= s->tree->height; level++)
	{
		if (BufferIsValid(s->path[level].buffer))
			ReleaseBuffer(s->path[level].buffer);
		s->path[level].buffer = InvalidBuffer;
		s->path[level].valid = false;
	}
	if (BufferIsValid(s->leaf))
		ReleaseBuffer(s->leaf);
	s->leaf = InvalidBuffer;
}

/*
 * Is a kept (pinned, now locked) page still the one simhash_read_page()
 * checked: of this kind and generation?
 */
static inline bool
still_ours(Buffer buffer, uint16 kind, uint64 generation)
{
	SimhashPageOpaque opaque = SimhashPageGetOpaque(BufferGetPage(buffer));

	return opaque->kind == kind && opaque->generation == generation;
}

/* Does prefix lie in the range of the kept page p? */
static inline bool
path_holds(const PathPage *p, uint64 prefix)
{
	return p->valid &&
		(!p->has_low || p->low < prefix) && (!p->has_high || prefix <= p->high);
}

/*
 * simhash_descend() for a masked prefix, from the deepest page of the kept
 * path whose range holds it (prefixes probed in ascending order share most
 * of their path), keeping the new path pinned: the same leaf, fewer pages
 * read.
 */
static BlockNumber
probe_descend(SearchState *s, uint64 prefix)
{
	uint64		mask = s->mask;
	int			level = s->tree->height;
	BlockNumber blkno = s->tree->root;
	SimhashInnerCache *cache = simhash_inner_cache(s->index);

	for (int l = 1; l < s->tree->height; l++)
		if (path_holds(&s->path[l], prefix))
		{
			level = l;
			blkno = s->path[l].blkno;
			break;
		}
	for (; level > 0; level--)
	{
		PathPage   *p = &s->path[level];
		const SimhashInnerCopy *copy = simhash_inner_lookup(cache, blkno, s->generation);
		const SimhashInnerItem *items;
		int			n,
					c;

		if (BufferIsValid(p->buffer) && (copy != NULL || p->blkno != blkno))
		{
			ReleaseBuffer(p->buffer);
			p->buffer = InvalidBuffer;
		}
		if (copy == NULL && BufferIsValid(p->buffer))
		{
			LockBuffer(p->buffer, BUFFER_LOCK_SHARE);
			if (!still_ours(p->buffer, SIMHASH_INNER, s->generation))
			{
				/* not the page read before: read it again, checked */
				UnlockReleaseBuffer(p->buffer);
				p->buffer = InvalidBuffer;
			}
		}
		if (copy == NULL && !BufferIsValid(p->buffer))
		{
			p->buffer = simhash_read_page(s->index, blkno, BUFFER_LOCK_SHARE,
										  SIMHASH_INNER, s->generation, 0, NULL);
			copy = simhash_inner_keep(cache, p->buffer, s->generation,
									  level == s->tree->height);
			if (copy != NULL)
			{
				UnlockReleaseBuffer(p->buffer);
				p->buffer = InvalidBuffer;
			}
		}
		p->valid = true;
		p->blkno = blkno;
		if (copy != NULL)
		{
			items = copy->items;
			n = copy->n;
		}
		else
		{
			items = SimhashPageInner(BufferGetPage(p->buffer));
			n = SimhashPageItems(BufferGetPage(p->buffer));
		}
		c = simhash_inner_child(items, n, prefix, mask);
		blkno = items[c].child;
		if (level > 1)
		{
			PathPage   *below = &s->path[level - 1];

			below->has_low = c > 0 || p->has_low;
			below->low = c > 0 ? items[c].key & mask : p->low;
			below->has_high = c + 1 < n || p->has_high;
			below->high = c + 1 < n ? items[c + 1].key & mask : p->high;
			if (below->blkno != blkno)
			{
				if (BufferIsValid(below->buffer))
					ReleaseBuffer(below->buffer);
				below->buffer = InvalidBuffer;
				below->valid = false;
			}
		}
		if (BufferIsValid(p->buffer))
			LockBuffer(p->buffer, BUFFER_LOCK_UNLOCK);
	}
	return blkno;
}

/*
 * simhash_chain_next() for the leaves of a probe: the leaf read last (kept
 * pinned) is locked again instead of read, as probes in ascending order
 * often start in it.  Release with probe_leaf_release().
 */
static Buffer
probe_leaf_next(SearchState *s, SimhashChain *chain)
{
	Buffer		buffer;

	if (BufferIsValid(s->leaf) && chain->next == s->leaf_blkno)
	{
		IncrBufferRefCount(s->leaf);
		LockBuffer(s->leaf, BUFFER_LOCK_SHARE);
		if (still_ours(s->leaf, simhash_leaf_kind(s->tab->table), s->generation))
		{
			simhash_chain_step(chain->index, &chain->steps, chain->next);
			chain->blkno = chain->next;
			chain->next = SimhashPageGetOpaque(BufferGetPage(s->leaf))->next;
			return s->leaf;
		}
		/* not the page read before: read it again, checked */
		UnlockReleaseBuffer(s->leaf);
	}
	buffer = simhash_chain_next(chain);
	if (BufferIsValid(buffer))
	{
		if (BufferIsValid(s->leaf))
			ReleaseBuffer(s->leaf);
		IncrBufferRefCount(buffer);
		s->leaf = buffer;
		s->leaf_blkno = chain->blkno;
	}
	return buffer;
}

/* Unlock and unpin a leaf of probe_leaf_next() (s->leaf stays pinned). */
static inline void
probe_leaf_release(Buffer buffer)
{
	UnlockReleaseBuffer(buffer);
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
	uint64		qkey = simhash_table_permute(s->tab, s->center);
	SimhashChain leaves;
	Buffer		buffer;

	lo &= s->tab->prefix_mask;
	simhash_chain_begin(&leaves, s->index, probe_descend(s, lo),
						simhash_leaf_kind(s->tab->table), s->generation,
						BUFFER_LOCK_SHARE, 0, NULL);

	/* scan leaves from the first entry with prefix >= lo while it equals lo */
	while (BufferIsValid(buffer = probe_leaf_next(s, &leaves)))
	{
		bool		done = simhash_search_leaf(s->index, leaves.blkno, buffer, s->tab, lo,
											   qkey, s->radius, s->resolver, s->out);

		probe_leaf_release(buffer);
		if (done)
			break;
	}
}

/* Add to keys[*n] every prefix within `left` more flipped bits, below `bit`. */
static void
list_prefixes(uint64 prefix, int bit, int lowest, int left, uint64 *keys, int *n)
{
	keys[(*n)++] = prefix;
	if (left == 0)
		return;
	for (int b = bit - 1; b >= lowest; b--)
		list_prefixes(prefix ^ ((uint64) 1 << b), b, lowest, left - 1, keys, n);
}

/*
 * Would probing cost more than reading a run's first tree whole, for this
 * radius and a run of nentries, when a leaf read whole costs leaf_cost
 * page visits of a probe?  The plan's probes (a descent each) touch
 * plan->cost * height pages; the first tree has about nentries /
 * SIMHASH_LEAF_ENTRIES_EST leaves (format 2; the inner pages' fan-out is
 * SIMHASH_PAGE_ITEMS).  Always when a table would need more than
 * MAX_PROBES_PER_TABLE probes.
 */
static bool
reads_all(const SimhashBlocks *blocks, int radius, uint64 nentries, double leaf_cost)
{
	const SimhashProbePlan *plan = simhash_search_plan(blocks, Min(Max(radius, 0), 64));
	double		leaves = (double) nentries / SIMHASH_LEAF_ENTRIES_EST + 1;
	double		height = 1;

	for (int t = 0; t < plan->ntables; t++)
		if (plan->e[t] >= 0 &&
			simhash_probe_count(probe_prefix_bits(blocks, t), plan->e[t]) > MAX_PROBES_PER_TABLE)
			return true;
	for (double pages = leaves; pages > 1; pages /= SIMHASH_PAGE_ITEMS)
		height++;
	return (double) plan->cost * height > leaves * leaf_cost;
}

/*
 * Would a search read a whole tree, counting pages (a leaf read whole as
 * one page): the planner's estimate (cost.c) and ordered scans' rings
 * (scan.c).
 */
bool
simhash_search_reads_all(const SimhashBlocks *blocks, int radius, uint64 nentries)
{
	return reads_all(blocks, radius, nentries, 1.0);
}

/* Pass on the live entries of table 0's tree whose hash is exactly hash. */
static void
resolve_one(Relation index, const SimhashRunTree *tree0, uint64 generation,
			uint64 hash, SimhashMatches *out)
{
	SimhashChain leaves;
	Buffer		buffer;

	simhash_chain_begin(&leaves, index,
						simhash_descend_cached(index, tree0, generation, hash, ~UINT64CONST(0)),
						SIMHASH_LEAF, generation, BUFFER_LOCK_SHARE, 0, NULL);
	while (BufferIsValid(buffer = simhash_chain_next(&leaves)))
	{
		bool		done = simhash_leaf_emit_hash(index, leaves.blkno, buffer, hash, out);

		UnlockReleaseBuffer(buffer);
		if (done)
			break;
	}
}

/*
 * Resolve the hashes other tables found (each once, in order, skipping
 * those table 0 found itself) to table 0's live entries, into *out; frees
 * what the resolver holds.
 */
static void
resolve(Relation index, const SimhashRunTree *tree0, uint64 generation,
				SimhashResolver *r, SimhashMatches *out)
{
	size_t		f = 0;

	if (r->nwant > 1)
		qsort(r->want, r->nwant, sizeof(uint64), simhash_cmp_uint64);
	if (r->nfound > 1)
		qsort(r->found, r->nfound, sizeof(uint64), simhash_cmp_uint64);
	for (size_t i = 0; i < r->nwant; i++)
	{
		uint64		hash = r->want[i];

		if (i > 0 && hash == r->want[i - 1])
			continue;
		while (f < r->nfound && r->found[f] < hash)
			f++;
		if (f < r->nfound && r->found[f] == hash)
			continue;
		resolve_one(index, tree0, generation, hash, out);
		CHECK_FOR_INTERRUPTS();
	}
	if (r->want)
		pfree(r->want);
	if (r->found)
		pfree(r->found);
	simhash_resolver_init(r);
}

/*
 * What simhash_search_run() weighs a leaf read whole at, in a probe's page
 * visits: it decodes and tests each of its ~800 entries where a probe
 * binary-searches a leaf.  Counting it as one page (as
 * simhash_search_reads_all() does) would read the small runs that merges
 * leave beside the large one (below ~5,600 entries at radius 3) whole,
 * several times slower than probing them (bench/inserts_lookups.sh).
 */
#define SIMHASH_WHOLE_LEAF_COST 6.0

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
	const SimhashRunHeader *header;
	const SimhashProbePlan *plan;
	SimhashTable *scratch = NULL;
	SimhashResolver resolver;
	uint64	   *keys;
	uint64		maxkeys = 1;

	if (radius < 0)
		return;
	radius = Min(radius, 64);
	header = simhash_run_header_cached(index, run);

	/* probing would cost more than reading one tree in full */
	if (reads_all(blocks, radius, header->nentries, SIMHASH_WHOLE_LEAF_COST))
	{
		scan_chain(index, simhash_leftmost_leaf(index, &header->trees[0],
												run->generation, NULL),
				   SIMHASH_LEAF, run->generation, center, radius, out);
		return;
	}

	plan = simhash_search_plan(blocks, radius);
	if (probe_tables(blocks) == NULL)
		scratch = palloc(sizeof(SimhashTable));
	simhash_resolver_init(&resolver);
	for (int t = 0; t < blocks->ntables; t++)
		if (plan->e[t] >= 0)
			maxkeys = Max(maxkeys, simhash_probe_count(probe_prefix_bits(blocks, t), plan->e[t]));
	/* at most MAX_PROBES_PER_TABLE: else reads_all() */
	Assert(maxkeys <= MAX_PROBES_PER_TABLE);
	keys = palloc(sizeof(uint64) * maxkeys);
	for (int t = 0; t < blocks->ntables; t++)
	{
		SearchState s;
		const SimhashTable *tab;
		uint64		qkey;
		int			nkeys = 0;

		if (plan->e[t] < 0)
			continue;
		tab = probe_table(blocks, t, scratch);
		s.index = index;
		s.generation = run->generation;
		s.tab = tab;
		s.tree = &header->trees[t];
		s.mask = tab->prefix_mask;
		s.center = center;
		s.radius = radius;
		s.out = out;
		s.resolver = &resolver;
		s.path = palloc0(sizeof(PathPage) * (s.tree->height + 1));
		for (int level = 0; level <= s.tree->height; level++)
		{
			s.path[level].buffer = InvalidBuffer;
			s.path[level].valid = false;
			s.path[level].blkno = InvalidBlockNumber;
		}
		s.leaf = InvalidBuffer;
		s.leaf_blkno = InvalidBlockNumber;
		qkey = simhash_table_permute(tab, center) & tab->prefix_mask;
		list_prefixes(qkey, 64, 64 - tab->prefix_bits, Min(plan->e[t], tab->prefix_bits),
					  keys, &nkeys);
		if (nkeys > 1)
			qsort(keys, nkeys, sizeof(uint64), simhash_cmp_uint64);
		for (int i = 0; i < nkeys; i++)
			search_prefix(&s, keys[i]);
		path_release(&s);
		pfree(s.path);
		CHECK_FOR_INTERRUPTS();
	}
	resolve(index, &header->trees[0], run->generation, &resolver, out);
	pfree(keys);
	if (scratch)
		pfree(scratch);
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
