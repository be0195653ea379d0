/*
 * inner_cache.c
 *		The copies of the simhash index's inner pages and run headers that
 *		each backend keeps per index (design: README.md, "Tables and
 *		probes"), and the descent of a tree through them.  Searches only
 *		(probe.c, leaf lookups of table 0 in the resolution of other
 *		tables' hashes): what they reach through a copy they read checked.
 *		A scan reports the metapage's next generation after reading it
 *		(simhash_inner_cache_seen()), which drops the copies of an index
 *		built again in the same storage.
 */
#include "postgres.h"

#include "utils/memutils.h"
#include "utils/rel.h"

#include "am.h"

/*
 * Copies of inner pages, kept per backend for each index: a run never
 * changes its inner pages while it is live, and a page is reused only
 * under another generation (never reused within the index's
 * storage, which REINDEX and TRUNCATE replace, changing the relcache
 * entry's token: simhash_cache_token()), so the copy keyed by (block,
 * generation) of a run the metapage lists is the page.  A lookup that
 * finds the copies reads only its leaves, which are read and checked, so
 * a run recycled under a reader is still found out there.
 * Set-associative by block: INNER_WAYS slots for each block number modulo
 * INNER_SETS.  A tree's inner pages lie in consecutive blocks, so those of
 * up to INNER_WAYS trees of up to INNER_SETS inner pages each (an index
 * of about 4 x 10^8 rows at the defaults) all have slots.  A root takes
 * a slot of its set (the last one when all are used), another inner page
 * only a free one, and only while the backend keeps fewer than
 * INNER_BUDGET copies over all indexes: a huge index cannot make the
 * copies churn, nor many indexes make them grow without bound.
 */
#define INNER_SETS 1024
#define INNER_WAYS 4

/* copies of inner pages a backend keeps, over all indexes, before it keeps only roots (64 MB) */
#define INNER_BUDGET 8192

/* copies this backend keeps, over all indexes */
static int	inner_kept = 0;

/* the run headers' copies (only their trees and nentries are used) */
#define HEADER_SLOTS 16

typedef struct HeaderCopy
{
	BlockNumber blkno;
	uint64		generation;
	SimhashRunHeader *header;
} HeaderCopy;

struct SimhashInnerCache
{
	uint64		next_generation;	/* the metapage's, as last read */
	MemoryContext cxt;			/* where the copies live */
	int			nkept;			/* copies in slot[][] */
	SimhashInnerCopy *slot[INNER_SETS][INNER_WAYS];
	HeaderCopy	headers[HEADER_SLOTS];
};

/*
 * The copies live outside the relcache entry, in a registry of this
 * backend: when the relcache reloads an open index it frees only
 * rd_amcache, so copies reached through it would leak (up to 2 MB on each
 * invalidation: every VACUUM or ANALYZE that updates the index's pg_class
 * row while the index is open, as under a cursor).  Each entry has its own
 * memory context, deleted when the relcache entry's token changes (the
 * entry was invalidated) or the entry is evicted: at most CACHED_INDEXES
 * indexes' copies (least recently used goes), at most INNER_BUDGET pages
 * but the roots over all of them.  A search
 * uses the copies only within one call, during which no invalidation is
 * processed.
 */
#define CACHED_INDEXES 32

typedef struct CachedIndex
{
	Oid			relid;			/* InvalidOid: a free entry */
	uint64		token;			/* of the relcache entry the copies are from */
	uint64		used;			/* when last used, for eviction */
	SimhashInnerCache *cache;	/* in its own context, cache->cxt */
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
SimhashInnerCache *
simhash_inner_cache(Relation index)
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
		{
			inner_kept -= e->cache->nkept;
			MemoryContextDelete(e->cache->cxt);
		}
		e->relid = InvalidOid;
		e->cache = NULL;
		cxt = AllocSetContextCreate(CacheMemoryContext, "simhash inner pages",
									ALLOCSET_SMALL_SIZES);
		MemoryContextCopyAndSetIdentifier(cxt, RelationGetRelationName(index));
		e->cache = MemoryContextAllocExtended(cxt, sizeof(SimhashInnerCache),
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
	SimhashInnerCache *cache = e ? e->cache : NULL;

	if (cache == NULL)
		return;
	if (next_generation < cache->next_generation)
	{
		for (int i = 0; i < INNER_SETS; i++)
			for (int w = 0; w < INNER_WAYS; w++)
			{
				if (cache->slot[i][w])
					pfree(cache->slot[i][w]);
				cache->slot[i][w] = NULL;
			}
		inner_kept -= cache->nkept;
		cache->nkept = 0;
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
const SimhashRunHeader *
simhash_run_header_cached(Relation index, const SimhashRunRef *run)
{
	SimhashInnerCache *cache = simhash_inner_cache(index);
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
const SimhashInnerCopy *
simhash_inner_lookup(SimhashInnerCache *cache, BlockNumber blkno, uint64 generation)
{
	SimhashInnerCopy *const *set = cache->slot[blkno % INNER_SETS];

	for (int w = 0; w < INNER_WAYS; w++)
	{
		const SimhashInnerCopy *c = set[w];

		if (c && c->blkno == blkno && c->generation == generation)
			return c;
	}
	return NULL;
}

/*
 * Keep a copy of the inner page (locked, checked) in `buffer`: a root
 * always, another page if a slot of its set is free and the backend's
 * budget allows.  Returns the copy or NULL.
 */
const SimhashInnerCopy *
simhash_inner_keep(SimhashInnerCache *cache, Buffer buffer, uint64 generation, bool root)
{
	Page		page = BufferGetPage(buffer);
	BlockNumber blkno = BufferGetBlockNumber(buffer);
	SimhashInnerCopy **set = cache->slot[blkno % INNER_SETS];
	SimhashInnerCopy **slot = &set[INNER_WAYS - 1];
	int			n = SimhashPageItems(page);
	SimhashInnerCopy *c;

	for (int w = 0; w < INNER_WAYS; w++)
		if (set[w] == NULL)
		{
			slot = &set[w];
			break;
		}
	if (!root && (*slot != NULL || inner_kept >= INNER_BUDGET))
		return NULL;
	if (*slot != NULL)
	{
		pfree(*slot);
		*slot = NULL;
		cache->nkept--;
		inner_kept--;
	}
	c = MemoryContextAlloc(cache->cxt,
						   offsetof(SimhashInnerCopy, items) + n * sizeof(SimhashInnerItem));
	c->blkno = blkno;
	c->generation = generation;
	c->n = n;
	memcpy(c->items, SimhashPageInner(page), n * sizeof(SimhashInnerItem));
	*slot = c;
	cache->nkept++;
	inner_kept++;
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
	SimhashInnerCache *cache = simhash_inner_cache(index);
	BlockNumber blkno = tree->root;

	prefix &= mask;
	for (int level = tree->height; level > 0; level--)
	{
		const SimhashInnerCopy *c = simhash_inner_lookup(cache, blkno, generation);

		if (c == NULL)
		{
			Buffer		buffer = simhash_read_page(index, blkno, BUFFER_LOCK_SHARE,
												   SIMHASH_INNER, generation, 0, NULL);
			Page		page = BufferGetPage(buffer);

			c = simhash_inner_keep(cache, buffer, generation, level == tree->height);
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
