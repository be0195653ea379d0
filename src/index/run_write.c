/*
 * run_write.c
 *		Writing runs of the simhash index (design: README.md, layout: am.h): one
 *		static B+tree per table, sorted by the table's permuted prefix,
 *		written leaf by leaf with the inner levels at the end, and the
 *		run's header page; and writing entries as a list of pages.  Pages
 *		are WAL-logged one by one, or left to CREATE INDEX's log at its end.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "am.h"
#include "shared/memory.h"

/* Make room in *in for n more entries. */
void
simhash_run_input_reserve(SimhashRunInput *in, size_t n)
{
	size_t		need = in->n + n;

	if (in->hashes == NULL)
	{
		in->hashes = simhash_alloc_huge(CurrentMemoryContext, Max(need, 64) * sizeof(uint64));
		in->tids = simhash_alloc_huge(CurrentMemoryContext, Max(need, 64) * sizeof(ItemPointerData));
		return;
	}
	in->hashes = repalloc_huge(in->hashes, Max(need, 64) * sizeof(uint64));
	in->tids = repalloc_huge(in->tids, Max(need, 64) * sizeof(ItemPointerData));
}

/*
 * Room to sort n (>= 0) entries for a table (in 2MB pages where the kernel
 * allows: a page fault per 4kB page would otherwise dominate the first
 * pass of a large sort).
 */
void
simhash_sort_space_alloc(SimhashSortSpace *space, size_t n)
{
	n = Max(n, 1);
	space->keys = simhash_alloc_huge(CurrentMemoryContext, n * sizeof(uint64));
	space->tmpkeys = simhash_alloc_huge(CurrentMemoryContext, n * sizeof(uint64));
	space->order = simhash_alloc_huge(CurrentMemoryContext, n * sizeof(uint32));
	space->tmporder = simhash_alloc_huge(CurrentMemoryContext, n * sizeof(uint32));
}

/* Free what simhash_sort_space_alloc() allocated. */
void
simhash_sort_space_free(SimhashSortSpace *space)
{
	pfree(space->keys);
	pfree(space->tmpkeys);
	pfree(space->order);
	pfree(space->tmporder);
}

/* Start writing the pages of a run or list of this generation. */
void
simhash_writer_init(SimhashRunWriter *w, Relation index, SimhashWriteMode mode,
					uint64 generation)
{
	w->index = index;
	w->mode = mode;
	w->generation = generation;
	w->npages = 0;
	w->mem = NULL;
	w->nalloc = 0;
	w->memcap = 0;
}

/*
 * A new page for w: its block and (unless in memory) its buffer, locked;
 * in memory the next block, numbered from 0.
 */
static BlockNumber
writer_new_page(SimhashRunWriter *w, Buffer *buffer)
{
	if (w->mode == SIMHASH_WRITE_MEMORY)
	{
		if (w->nalloc >= w->memcap)
		{
			w->memcap = Max(w->memcap * 2, 64);
			w->mem = w->mem ? repalloc_huge(w->mem, (Size) w->memcap * BLCKSZ)
				: MemoryContextAllocHuge(CurrentMemoryContext, (Size) w->memcap * BLCKSZ);
		}
		*buffer = InvalidBuffer;
		return w->nalloc++;
	}
	*buffer = simhash_new_buffer(w->index);
	return BufferGetBlockNumber(*buffer);
}

/* Finish page blkno (of writer_new_page()) with image. */
static void
writer_put_page(SimhashRunWriter *w, Buffer buffer, BlockNumber blkno, Page image)
{
	if (w->mode == SIMHASH_WRITE_MEMORY)
	{
		Assert(blkno < w->nalloc);
		memcpy(w->mem + (Size) blkno * BLCKSZ, image, BLCKSZ);
		w->npages++;
		return;
	}
	simhash_finish_page(w, buffer, image);
}

/* Finish a page filled by the caller: WAL-log it (or leave it to the build). */
void
simhash_finish_page(SimhashRunWriter *w, Buffer buffer, Page image)
{
	if (w->mode == SIMHASH_WRITE_LOGGED)
		simhash_write_page_image(w->index, buffer, image);
	else
	{
		memcpy(BufferGetPage(buffer), image, BLCKSZ);
		MarkBufferDirty(buffer);
	}
	UnlockReleaseBuffer(buffer);
	w->npages++;
}

/*
 * Start a run's header page in image (the caller fills its trees and
 * nentries); returns its buffer, locked, to pass to simhash_run_header_end().
 */
Buffer
simhash_run_header_begin(SimhashRunWriter *w, Page image, int ntables)
{
	Buffer		buffer = simhash_new_buffer(w->index);
	SimhashRunHeader *header;

	simhash_init_page(image, SIMHASH_RUN_HEADER, w->generation);
	header = SimhashPageRunHeader(image);
	header->nentries = 0;
	header->ndead = 0;
	header->ntables = ntables;
	return buffer;
}

/* Write the run's header page, once all its trees are written. */
void
simhash_run_header_end(SimhashRunWriter *w, Buffer buffer, Page image)
{
	SimhashRunHeader *header = SimhashPageRunHeader(image);

	header->npages = w->npages + 1;
	((PageHeader) image)->pd_lower +=
		offsetof(SimhashRunHeader, trees) + header->ntables * sizeof(SimhashRunTree);
	simhash_finish_page(w, buffer, image);
}

/* Start writing the tree of table `table` of a run. */
void
simhash_tree_begin(SimhashTreeWriter *tw, SimhashRunWriter *w, int table)
{
	tw->w = w;
	tw->table = table;
	tw->leaf = palloc(sizeof(SvLeafBuilder));
	sv_leaf_builder_init(tw->leaf, table == 0);
	tw->cur = InvalidBuffer;
	tw->curblk = InvalidBlockNumber;
	tw->caplevel = 64;
	tw->level = palloc(tw->caplevel * sizeof(SimhashInnerItem));
	tw->nlevel = 0;
	tw->nentries = 0;
}

/* Write the leaf being filled to its buffer, linked to next. */
static void
write_leaf(SimhashTreeWriter *tw, BlockNumber next)
{
	Page		page = (Page) tw->image.data;

	simhash_init_page(page, simhash_leaf_kind(tw->table), tw->w->generation);
	((PageHeader) page)->pd_lower += sv_leaf_encode(tw->leaf, PageGetContents(page));
	SimhashPageGetOpaque(page)->next = next;
	writer_put_page(tw->w, tw->cur, tw->curblk, page);
}

/*
 * Append an entry (key: its permuted hash) to the tree, after all others
 * (table 0's keys are the hashes; other tables store no TID: hash and tid
 * are then unused, tid may be NULL).
 */
void
simhash_tree_add(SimhashTreeWriter *tw, uint64 hash, ItemPointer tid, uint64 key)
{
	BlockNumber block = 0;
	OffsetNumber offset = 0;

	if (tw->table == 0)
	{
		Assert(key == hash);
		block = ItemPointerGetBlockNumberNoCheck(tid);
		offset = ItemPointerGetOffsetNumberNoCheck(tid);
	}
	if (tw->curblk != InvalidBlockNumber && !sv_leaf_fits(tw->leaf, key, block, offset))
	{
		Buffer		next;
		BlockNumber nextblk = writer_new_page(tw->w, &next);

		write_leaf(tw, nextblk);
		tw->cur = next;
		tw->curblk = nextblk;
		CHECK_FOR_INTERRUPTS();
	}
	else if (tw->curblk == InvalidBlockNumber)
		tw->curblk = writer_new_page(tw->w, &tw->cur);
	if (tw->leaf->count == 0)
	{
		if (tw->nlevel >= tw->caplevel)
		{
			tw->caplevel *= 2;
			tw->level = repalloc_huge(tw->level, tw->caplevel * sizeof(SimhashInnerItem));
		}
		tw->level[tw->nlevel].key = key;
		tw->level[tw->nlevel].child = tw->curblk;
		tw->level[tw->nlevel].pad = 0;
		tw->nlevel++;
	}
	sv_leaf_add(tw->leaf, key, block, offset);
	tw->nentries++;
}

/* Finish the last leaf and write the inner levels; returns the root. */
BlockNumber
simhash_tree_end(SimhashTreeWriter *tw, uint16 *height)
{
	SimhashInnerItem *level = tw->level;
	size_t		nlevel = tw->nlevel;
	BlockNumber root;

	Assert(tw->curblk != InvalidBlockNumber);
	write_leaf(tw, InvalidBlockNumber);
	pfree(tw->leaf);

	/* inner levels, until one page holds them all */
	*height = 0;
	while (nlevel > 1)
	{
		size_t		nup = 0;

		for (size_t start = 0; start < nlevel; start += SIMHASH_PAGE_ITEMS)
		{
			size_t		count = Min((size_t) SIMHASH_PAGE_ITEMS, nlevel - start);
			Page		page = (Page) tw->image.data;
			Buffer		buf;
			BlockNumber blk = writer_new_page(tw->w, &buf);
			SimhashInnerItem first = level[start];

			simhash_init_page(page, SIMHASH_INNER, tw->w->generation);
			memcpy(SimhashPageInner(page), level + start, count * sizeof(SimhashInnerItem));
			((PageHeader) page)->pd_lower += count * sizeof(SimhashInnerItem);
			first.child = blk;
			writer_put_page(tw->w, buf, blk, page);
			level[nup++] = first;	/* nup <= start: no overwrite ahead */
		}
		nlevel = nup;
		(*height)++;
	}
	root = level[0].child;
	pfree(tw->level);
	return root;
}

/*
 * Write the entries of *input (n >= 1) as a run: one tree per table, each
 * sorted here.  Returns the run's header page.
 */
BlockNumber
simhash_write_run(Relation index, const SimhashBlocks *blocks,
				  const SimhashRunInput *input, uint64 generation,
				  SimhashWriteMode mode)
{
	size_t		n = input->n;
	SimhashSortSpace space;
	SimhashTable *tab = palloc(sizeof(SimhashTable));
	Buffer		headbuf;
	BlockNumber headblk;
	PGAlignedBlock image;
	Page		page = (Page) image.data;
	SimhashRunHeader *header;
	SimhashRunWriter w;

	Assert(n > 0 && n < ((size_t) 1 << 32));
	simhash_writer_init(&w, index, mode, generation);
	headbuf = simhash_run_header_begin(&w, page, blocks->ntables);
	headblk = BufferGetBlockNumber(headbuf);
	header = SimhashPageRunHeader(page);
	header->nentries = n;
	simhash_sort_space_alloc(&space, n);
	for (int t = 0; t < blocks->ntables; t++)
	{
		simhash_table_init(blocks, t, tab);
		simhash_table_sort(tab, input->hashes, n, space.keys, space.order,
						   space.tmpkeys, space.tmporder);
		header->trees[t].root = simhash_write_tree(&w, t, input, space.keys, space.order,
												   &header->trees[t].height);
		header->trees[t].pad = 0;
	}
	simhash_run_header_end(&w, headbuf, page);
	simhash_sort_space_free(&space);
	pfree(tab);
	return headblk;
}

/*
 * Write table t's tree of the entries of *input, sorted: keys[i] the
 * permuted hash of entry order[i].  Returns its root; *height its height.
 */
BlockNumber
simhash_write_tree(SimhashRunWriter *w, int t, const SimhashRunInput *input,
				   const uint64 *keys, const uint32 *order, uint16 *height)
{
	SimhashTreeWriter tw;

	simhash_tree_begin(&tw, w, t);
	/*
	 * Table 0's keys are the hashes and only its leaves hold TIDs: the other
	 * tables need nothing of the entries but their keys, so no entry is
	 * fetched for them (order[] jumps at random through arrays far larger
	 * than the caches).
	 */
	if (t == 0)
		for (size_t i = 0; i < input->n; i++)
			simhash_tree_add(&tw, keys[i], &input->tids[order[i]], keys[i]);
	else
		for (size_t i = 0; i < input->n; i++)
			simhash_tree_add(&tw, 0, NULL, keys[i]);
	return simhash_tree_end(&tw, height);
}

/*
 * Write entries as a list of pages (the nulls list at CREATE INDEX), with
 * a new generation taken by the caller in list->generation.
 */
void
simhash_write_list(Relation index, const SimhashRunInput *input, uint16 flags,
				   SimhashList *list, SimhashWriteMode mode)
{
	SimhashRunWriter w;
	PGAlignedBlock image;
	Buffer		cur;

	simhash_writer_init(&w, index, mode, list->generation);
	list->head = list->tail = InvalidBlockNumber;
	list->nentries = input->n;
	if (input->n == 0)
		return;
	cur = simhash_new_buffer(index);
	list->head = BufferGetBlockNumber(cur);
	for (size_t start = 0; start < input->n; start += SIMHASH_PAGE_ITEMS)
	{
		size_t		count = Min((size_t) SIMHASH_PAGE_ITEMS, input->n - start);
		Page		page = (Page) image.data;
		SimhashEntry *entries;
		Buffer		next = InvalidBuffer;

		simhash_init_page(page, SIMHASH_PENDING, list->generation);
		entries = SimhashPageEntries(page);
		for (size_t i = 0; i < count; i++)
		{
			entries[i].hash = input->hashes[start + i];
			entries[i].tid = input->tids[start + i];
			entries[i].flags = flags;
		}
		((PageHeader) page)->pd_lower += count * sizeof(SimhashEntry);
		if (start + count < input->n)
		{
			next = simhash_new_buffer(index);
			SimhashPageGetOpaque(page)->next = BufferGetBlockNumber(next);
		}
		else
			list->tail = BufferGetBlockNumber(cur);
		simhash_finish_page(&w, cur, page);
		cur = next;
	}
}
