/*
 * probe.c
 *		Searching the simhash index (design: README.md): the entries of a run
 *		within a radius of a query, by probing the trees of the tables that
 *		the radius's probe plan names (core/probe_plan.h) at every prefix
 *		within the plan's error of the query's, in ascending order, each
 *		descent starting from the deepest inner page of the previous one
 *		that holds the prefix (or by reading the first tree whole when that
 *		is cheaper), inner pages from the backend's copies of them; and of
 *		a list, by reading it.
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
 * Copies of inner pages, kept per backend for each index (inner_cache()):
 * a run never changes its inner pages while it is live, and a page is
 * reused only under another generation (never reused within the index's
 * storage, which REINDEX and TRUNCATE replace, changing the relcache
 * entry's token: simhash_cache_token()), so the copy keyed by (block,
 * generation) of a run the metapage lists is the page.  A lookup that
 * finds the copies reads only its leaves: at 10M rows 8 of its 12 page
 * reads were the 4 trees' inner pages.  The leaves are read and checked as
 * before, so a run recycled under a reader is still found out there.
 * Direct-mapped by block; a root takes its slot, other inner pages only a
 * free one (a huge index cannot make the copies churn); at most
 * INNER_SLOTS pages (2 MB) per index.
 */
#define INNER_SLOTS 256

typedef struct InnerCopy
{
	BlockNumber blkno;
	uint64		generation;
	int			n;
	SimhashInnerItem items[FLEXIBLE_ARRAY_MEMBER];
} InnerCopy;

/* the run headers' copies (only their trees and nentries are used) */
#define HEADER_SLOTS 16

typedef struct HeaderCopy
{
	BlockNumber blkno;
	uint64		generation;
	SimhashRunHeader *header;
} HeaderCopy;

typedef struct InnerCache
{
	uint64		next_generation;	/* the metapage's, as last read */
	MemoryContext cxt;			/* where the copies live */
	InnerCopy  *slot[INNER_SLOTS];
	HeaderCopy	headers[HEADER_SLOTS];
} InnerCache;

/*
 * The copies live outside the relcache entry, in a registry of this
 * backend: when the relcache reloads an open index it frees only
 * rd_amcache, so copies reached through it would leak (up to 2 MB on each
 * invalidation: every VACUUM or ANALYZE that updates the index's pg_class
 * row while the index is open, as under a cursor).  Each entry has its own
 * memory context, deleted when the relcache entry's token changes (the
 * entry was invalidated) or the entry is evicted: at most CACHED_INDEXES
 * indexes' copies (least recently used goes), so at most 64 MB.  A search
 * uses the copies only within one call, during which no invalidation is
 * processed.
 */
#define CACHED_INDEXES 32

typedef struct CachedIndex
{
	Oid			relid;			/* InvalidOid: a free entry */
	uint64		token;			/* of the relcache entry the copies are from */
	uint64		used;			/* when last used, for eviction */
	InnerCache *cache;			/* in its own context, cache->cxt */
} CachedIndex;

static CachedIndex cached[CACHED_INDEXES];
static uint64 cached_clock = 0;
static int	cached_last = 0;	/* the entry found last */

/* The entry holding this index's copies under this token, or NULL. */
static inline CachedIndex *
cached_find(Oid relid, uint64 token)
{
	if (cached[cached_last].relid == relid && cached[cached_last].token == token)
		return &cached[cached_last];
	for (int i = 0; i < CACHED_INDEXES; i++)
		if (cached[i].relid == relid && cached[i].token == token)
		{
			cached_last = i;
			return &cached[i];
		}
	return NULL;
}

/* The copies of this index's inner pages (an empty set at first). */
static InnerCache *
inner_cache(Relation index)
{
	Oid			relid = RelationGetRelid(index);
	uint64		token = simhash_cache_token(index);
	CachedIndex *e = cached_find(relid, token);
	MemoryContext cxt;
	int			victim = 0;

	if (e == NULL)
	{
		/* this index's stale entry, else a free one, else the oldest */
		for (int i = 0; i < CACHED_INDEXES; i++)
		{
			if (cached[i].relid == relid)
			{
				victim = i;
				break;
			}
			if (cached[victim].relid != InvalidOid &&
				(cached[i].relid == InvalidOid || cached[i].used < cached[victim].used))
				victim = i;
		}
		e = &cached[victim];
		if (e->cache != NULL)
			MemoryContextDelete(e->cache->cxt);
		e->relid = InvalidOid;
		e->cache = NULL;
		cxt = AllocSetContextCreate(CacheMemoryContext, "simhash inner pages",
									ALLOCSET_SMALL_SIZES);
		MemoryContextCopyAndSetIdentifier(cxt, RelationGetRelationName(index));
		e->cache = MemoryContextAllocExtended(cxt, sizeof(InnerCache),
											  MCXT_ALLOC_ZERO | MCXT_ALLOC_NO_OOM);
		if (e->cache == NULL)
		{
			/* not the context: nothing would free it */
			MemoryContextDelete(cxt);
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory")));
		}
		e->cache->cxt = cxt;
		e->relid = relid;
		e->token = token;
		cached_last = victim;
	}
	e->used = ++cached_clock;
	return e->cache;
}

/*
 * The metapage was read, with this next generation: one lower than last
 * time means the index was built again in the same storage (generations
 * only grow otherwise), so its copies go, should the relcache entry have
 * outlived that.
 */
void
simhash_inner_cache_seen(Relation index, uint64 next_generation)
{
	CachedIndex *e = cached_find(RelationGetRelid(index), simhash_cache_token(index));
	InnerCache *cache = e ? e->cache : NULL;

	if (cache == NULL)
		return;
	if (next_generation < cache->next_generation)
	{
		for (int i = 0; i < INNER_SLOTS; i++)
		{
			if (cache->slot[i])
				pfree(cache->slot[i]);
			cache->slot[i] = NULL;
		}
		for (int i = 0; i < HEADER_SLOTS; i++)
		{
			if (cache->headers[i].header)
				pfree(cache->headers[i].header);
			cache->headers[i].header = NULL;
		}
	}
	cache->next_generation = next_generation;
}

/*
 * The header of a run the metapage lists, from its copy (read and kept
 * when missing): its trees never change while the run is live (VACUUM
 * updates only its count of dead entries, which searches do not use).
 */
static const SimhashRunHeader *
run_header_cached(Relation index, const SimhashRunRef *run)
{
	InnerCache *cache = inner_cache(index);
	HeaderCopy *c = &cache->headers[run->header % HEADER_SLOTS];
	SimhashRunHeader *header;

	if (c->header && c->blkno == run->header && c->generation == run->generation)
		return c->header;
	header = simhash_read_run_header(index, run->header, run->generation, NULL);
	if (c->header)
		pfree(c->header);
	c->header = MemoryContextAlloc(cache->cxt,
								   offsetof(SimhashRunHeader, trees) +
								   header->ntables * sizeof(SimhashRunTree));
	memcpy(c->header, header, offsetof(SimhashRunHeader, trees) +
		   header->ntables * sizeof(SimhashRunTree));
	c->blkno = run->header;
	c->generation = run->generation;
	pfree(header);
	return c->header;
}

/* The copy of inner page blkno of that generation, or NULL. */
static inline const InnerCopy *
inner_lookup(InnerCache *cache, BlockNumber blkno, uint64 generation)
{
	InnerCopy  *c = cache->slot[blkno % INNER_SLOTS];

	return (c && c->blkno == blkno && c->generation == generation) ? c : NULL;
}

/*
 * Keep a copy of the inner page (locked, checked) in `buffer`: a root
 * always, another page if its slot is free.  Returns the copy or NULL.
 */
static const InnerCopy *
inner_keep(Relation index, InnerCache *cache, Buffer buffer, uint64 generation, bool root)
{
	Page		page = BufferGetPage(buffer);
	BlockNumber blkno = BufferGetBlockNumber(buffer);
	InnerCopy **slot = &cache->slot[blkno % INNER_SLOTS];
	int			n = SimhashPageItems(page);
	InnerCopy  *c;

	if (*slot != NULL && !root)
		return NULL;
	if (*slot != NULL)
		pfree(*slot);
	*slot = NULL;
	c = MemoryContextAlloc(cache->cxt,
						   offsetof(InnerCopy, items) + n * sizeof(SimhashInnerItem));
	c->blkno = blkno;
	c->generation = generation;
	c->n = n;
	memcpy(c->items, SimhashPageInner(page), n * sizeof(SimhashInnerItem));
	*slot = c;
	return c;
}

/*
 * simhash_descend() through the copies of inner pages (read and kept when
 * missing): for searches only, whose leaves are then read checked.
 */
BlockNumber
simhash_descend_cached(Relation index, const SimhashRunTree *tree, uint64 generation,
					   uint64 prefix, uint64 mask)
{
	InnerCache *cache = inner_cache(index);
	BlockNumber blkno = tree->root;

	prefix &= mask;
	for (int level = tree->height; level > 0; level--)
	{
		const InnerCopy *c = inner_lookup(cache, blkno, generation);

		if (c == NULL)
		{
			Buffer		buffer = simhash_read_page(index, blkno, BUFFER_LOCK_SHARE,
												   SIMHASH_INNER, generation, 0, NULL);
			Page		page = BufferGetPage(buffer);

			c = inner_keep(index, cache, buffer, generation, level == tree->height);
			if (c == NULL)
			{
				SimhashInnerItem *items = SimhashPageInner(page);

				blkno = items[simhash_inner_child(items, SimhashPageItems(page),
												  prefix, mask)].child;
				UnlockReleaseBuffer(buffer);
				continue;
			}
			UnlockReleaseBuffer(buffer);
		}
		blkno = c->items[simhash_inner_child(c->items, c->n, prefix, mask)].child;
	}
	return blkno;
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
	InnerCache *cache = inner_cache(s->index);

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
		const InnerCopy *copy = inner_lookup(cache, blkno, s->generation);
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
			copy = inner_keep(s->index, cache, p->buffer, s->generation,
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
	header = run_header_cached(index, run);

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
	simhash_resolve(index, &header->trees[0], run->generation, &resolver, out);
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
