/*
 * run_read.c
 *		Reading runs and lists of the simhash index (design and layout:
 *		README.md): a run's header, the descent of a tree to a leaf, the
 *		entries of a chain of leaves or list pages, and a walk over every
 *		page of a run (to recycle them).
 */
#include "postgres.h"

#include "miscadmin.h"

#include "am.h"

/*
 * A palloc'd copy of a run's header, checked (its table count is the
 * metapage's, its roots and heights in range); NULL with
 * SIMHASH_READ_IF_OURS when the page is not the run's any more.
 */
static SimhashRunHeader *
copy_run_header(Relation index, BlockNumber blkno, uint64 generation, int flags,
				BufferAccessStrategy strategy)
{
	Buffer		buffer = simhash_read_page(index, blkno, BUFFER_LOCK_SHARE,
										   SIMHASH_RUN_HEADER, generation, flags,
										   strategy);
	Page		page;
	SimhashRunHeader *copy;
	Size		size;

	if (!BufferIsValid(buffer))
		return NULL;
	page = BufferGetPage(buffer);
	size = offsetof(SimhashRunHeader, trees) +
		SimhashPageRunHeader(page)->ntables * sizeof(SimhashRunTree);
	copy = palloc(size);
	memcpy(copy, SimhashPageRunHeader(page), size);
	UnlockReleaseBuffer(buffer);
	return copy;
}

/* A palloc'd, checked copy of the header of the run at blkno. */
SimhashRunHeader *
simhash_read_run_header(Relation index, BlockNumber blkno, uint64 generation,
						BufferAccessStrategy strategy)
{
	return copy_run_header(index, blkno, generation, 0, strategy);
}

/* Key i of an array of inner items (sv_seek()'s accessor). */
static uint64_t
inner_key_at(const void *items, int i)
{
	return ((const SimhashInnerItem *) items)[i].key;
}

/*
 * Which of an inner page's n items to descend to for a masked prefix: the
 * last whose first key (masked) is below it, or the first if none is.
 * Found by interpolation (sv_seek(): the first keys are near-uniform), so
 * that a descent through a copy of a page reads a line or two of it
 * instead of the ~9 of a binary search.
 */
int
simhash_inner_child(const SimhashInnerItem *items, int n, uint64 prefix, uint64 mask)
{
	/* the first item whose prefix >= prefix */
	int			a = sv_seek(items, inner_key_at, 0, n, prefix, mask, false);

	return a > 0 ? a - 1 : 0;
}

/*
 * Descend a tree (of a checked run header) to the leaf where the entries
 * whose permuted prefix (key & mask) is at least prefix & mask begin: at
 * each inner level, the last child whose first prefix is below it (the
 * first child if there is none).  With mask 0: the leftmost leaf.
 */
BlockNumber
simhash_descend(Relation index, const SimhashRunTree *tree, uint64 generation,
				uint64 prefix, uint64 mask, BufferAccessStrategy strategy)
{
	BlockNumber blkno = tree->root;

	prefix &= mask;
	for (int level = tree->height; level > 0; level--)
	{
		Buffer		buffer = simhash_read_page(index, blkno, BUFFER_LOCK_SHARE,
											   SIMHASH_INNER, generation, 0, strategy);
		Page		page = BufferGetPage(buffer);
		SimhashInnerItem *items = SimhashPageInner(page);

		blkno = items[simhash_inner_child(items, SimhashPageItems(page), prefix, mask)].child;
		UnlockReleaseBuffer(buffer);
	}
	return blkno;
}

/*
 * Call fn for the entries of every page of a chain of table 0's leaves
 * (decoded) or of list pages.
 */
void
simhash_walk_chain(Relation index, BlockNumber first, uint16 kind, uint64 generation,
				   SimhashEntriesFn fn, void *arg)
{
	SimhashChain chain;
	Buffer		buffer;

	SimhashEntry *decoded = NULL;

	Assert(kind == SIMHASH_LEAF || kind == SIMHASH_PENDING || kind == SIMHASH_FORMAT1_LEAF);
	if (kind == SIMHASH_LEAF)
		decoded = palloc(SV_LEAF_MAX_ENTRIES * sizeof(SimhashEntry));
	simhash_chain_begin(&chain, index, first, kind, generation, BUFFER_LOCK_SHARE, 0, NULL);
	while (BufferIsValid(buffer = simhash_chain_next(&chain)))
	{
		Page		page = BufferGetPage(buffer);

		if (decoded)
		{
			int			n = simhash_leaf_decode(index, buffer, NULL, decoded);

			UnlockReleaseBuffer(buffer);
			fn(decoded, n, arg);
		}
		else
		{
			fn(SimhashPageEntries(page), SimhashPageItems(page), arg);
			UnlockReleaseBuffer(buffer);
		}
		CHECK_FOR_INTERRUPTS();
	}
	if (decoded)
		pfree(decoded);
}

/* where collect_entries() puts what it reads */
typedef struct CollectArg
{
	SimhashRunInput *out;
	bool		skip_dead;
} CollectArg;

/* Append the entries of a page (the live ones with skip_dead) to c->out. */
static void
collect_entries(const SimhashEntry *entries, int n, void *arg)
{
	CollectArg *c = (CollectArg *) arg;

	simhash_run_input_reserve(c->out, n);
	for (int i = 0; i < n; i++)
	{
		if (c->skip_dead && (entries[i].flags & SIMHASH_ENTRY_DEAD))
			continue;
		c->out->hashes[c->out->n] = entries[i].hash;
		c->out->tids[c->out->n] = entries[i].tid;
		c->out->n++;
	}
}

/*
 * Append a run's entries (from its first tree, which holds the dead bits in
 * both formats; format 1's leaves are entries as on list pages) to *out.
 */
void
simhash_read_run_entries(Relation index, const SimhashRunRef *run,
						 SimhashRunInput *out, bool skip_dead)
{
	SimhashRunHeader *header = simhash_read_run_header(index, run->header,
													   run->generation, NULL);
	CollectArg	c = {out, skip_dead};

	simhash_walk_chain(index, simhash_leftmost_leaf(index, &header->trees[0],
													run->generation, NULL),
					   simhash_run_is_format1(run) ? SIMHASH_FORMAT1_LEAF : SIMHASH_LEAF,
					   run->generation, collect_entries, &c);
	pfree(header);
}

/* Append a list's entries to *out. */
void
simhash_read_list_entries(Relation index, const SimhashList *list,
						  SimhashRunInput *out, bool skip_dead)
{
	CollectArg	c = {out, skip_dead};

	simhash_walk_chain(index, list->head, SIMHASH_PENDING, list->generation,
					   collect_entries, &c);
}

/*
 * Post-order walk of a tree: children before their parent.  A page that is
 * not (any more) of the run's generation is skipped with what lies below
 * it: a walk that recycles pages frees children first, so a page found
 * recycled (after a crash cut the previous walk short) has no children of
 * the run left to visit.
 */
static void
visit_tree(Relation index, BlockNumber blkno, int height, uint16 leafkind,
		   uint64 generation, SimhashPageVisitor visit, void *arg,
		   BufferAccessStrategy strategy)
{
	Buffer		buffer = simhash_read_page(index, blkno, BUFFER_LOCK_SHARE,
										   height > 0 ? SIMHASH_INNER : leafkind,
										   generation, SIMHASH_READ_IF_OURS, strategy);
	Page		page;
	int			n = 0;
	BlockNumber *children = NULL;

	if (!BufferIsValid(buffer))
		return;
	page = BufferGetPage(buffer);
	if (height > 0)
	{
		n = SimhashPageItems(page);
		children = palloc(n * sizeof(BlockNumber));
		for (int i = 0; i < n; i++)
			children[i] = SimhashPageInner(page)[i].child;
	}
	UnlockReleaseBuffer(buffer);
	CHECK_FOR_INTERRUPTS();
	for (int i = 0; i < n; i++)
		visit_tree(index, children[i], height - 1, leafkind, generation, visit, arg,
				   strategy);
	if (children)
		pfree(children);
	visit(index, blkno, arg);
}

/*
 * Call visit for every page of a run (the header last), of either format
 * (leaves are read as SIMHASH_ANY_LEAF: only their kind and generation).  Nothing if the
 * header is no longer the run's (it was recycled already).
 */
void
simhash_visit_run_pages(Relation index, BlockNumber headblk, uint64 generation,
						SimhashPageVisitor visit, void *arg,
						BufferAccessStrategy strategy)
{
	SimhashRunHeader *header = copy_run_header(index, headblk, generation,
											   SIMHASH_READ_IF_OURS, strategy);

	if (header == NULL)
		return;
	for (uint32 t = 0; t < header->ntables; t++)
		visit_tree(index, header->trees[t].root, header->trees[t].height,
				   SIMHASH_ANY_LEAF, generation, visit, arg, strategy);
	visit(index, headblk, arg);
	pfree(header);
}
