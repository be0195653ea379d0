/*
 * build.c
 *		CREATE INDEX for the simhash access method (design: README.md): read the heap once,
 *		collect (hash, TID) of every non-NULL row, and write them as one
 *		run (sorted per table); WAL for the new pages at the end.  Within
 *		maintenance_work_mem: each chunk that fills it is written as a run,
 *		and the chunks are merged (streaming) into one run at the end.
 */
#include "postgres.h"

#include "access/tableam.h"
#include "access/xloginsert.h"
#include "catalog/storage.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "storage/indexfsm.h"
#include "utils/rel.h"

#include "am.h"
#include "simhash.h"

/* bytes of memory per entry while a chunk is sorted and written */
#define BUILD_BYTES_PER_ENTRY 40

typedef struct BuildState
{
	Relation	index;
	SimhashBlocks *blocks;
	SimhashRunInput input;		/* the current chunk */
	size_t		cap;			/* room in input */
	size_t		chunk;			/* entries that fit in maintenance_work_mem */
	SimhashRunRef *chunks;		/* chunks written as runs */
	int			nchunks;
	int			capchunks;
	uint64		next_generation;
	SimhashRunInput nulls;		/* rows whose key is NULL */
	double		indtuples;
} BuildState;

/* Write the current chunk as a run. */
static void
write_chunk(BuildState *bs)
{
	SimhashRunRef *ref;

	if (bs->nchunks >= bs->capchunks)
	{
		bs->capchunks = Max(bs->capchunks * 2, 8);
		bs->chunks = bs->chunks ? repalloc(bs->chunks, bs->capchunks * sizeof(SimhashRunRef))
			: palloc(bs->capchunks * sizeof(SimhashRunRef));
	}
	ref = &bs->chunks[bs->nchunks++];
	ref->generation = bs->next_generation++;
	ref->header = simhash_write_run(bs->index, bs->blocks, &bs->input, ref->generation,
									SIMHASH_WRITE_BUILD);
	ref->format = SIMHASH_VERSION;
	ref->nentries = bs->input.n;
	bs->input.n = 0;
}

/* A page of a merged chunk, free again (its WAL: the build's, at the end). */
static void
free_build_page(Relation index, BlockNumber blkno, void *arg)
{
	Buffer		buffer = simhash_lock_block(index, blkno, BUFFER_LOCK_EXCLUSIVE, NULL);

	simhash_init_page(BufferGetPage(buffer), SIMHASH_FREE, 0);
	MarkBufferDirty(buffer);
	UnlockReleaseBuffer(buffer);
	simhash_give_free_page(index, blkno);
}

/* Free the pages of the chunks, merged into one run. */
static void
free_chunks(BuildState *bs)
{
	for (int i = 0; i < bs->nchunks; i++)
		simhash_visit_run_pages(bs->index, bs->chunks[i].header, bs->chunks[i].generation,
								free_build_page, NULL, NULL);
	IndexFreeSpaceMapVacuum(bs->index);
}

/*
 * A chunked build's merged run lies above the chunks' pages, which are free
 * again: copy it into the lowest pages (a merge of that one run; it fits,
 * the chunks held the same entries in no fewer pages), free its pages and
 * cut them off the end of the file, so that a chunked build is no larger
 * than a build in memory.  *run becomes the copy.
 */
static void
move_run_down(BuildState *bs, SimhashRunRef *run)
{
	SimhashRunInput none = {NULL, NULL, 0};
	SimhashRunRef from = *run;
	uint64		nentries;

	simhash_alloc_restart(bs->index, SIMHASH_METAPAGE_BLKNO + 1);
	run->generation = bs->next_generation++;
	run->header = simhash_merge_runs(bs->index, bs->blocks, &from, 1, &none,
									 run->generation, SIMHASH_WRITE_BUILD, &nentries);
	simhash_visit_run_pages(bs->index, from.header, from.generation,
							free_build_page, NULL, NULL);
	RelationTruncate(bs->index,
					 simhash_without_free_tail(bs->index,
											   RelationGetNumberOfBlocks(bs->index), NULL));
	IndexFreeSpaceMapVacuum(bs->index);
}

/*
 * The cheaper way down for a merged run written on pages [first, end) in
 * order, past the chunks' pages and nothing else: every page is copied
 * down to block 1 onwards (the chunks' pages are overwritten or cut off),
 * each link moved by the same distance, with a new generation, and the
 * file is cut after it.  No entry is decoded or encoded again.  A copy
 * never overwrites a page not yet copied: each goes to a lower block.
 */
static void
copy_run_down(BuildState *bs, SimhashRunRef *run, BlockNumber first, BlockNumber end)
{
	BlockNumber delta = first - (SIMHASH_METAPAGE_BLKNO + 1);
	uint64		generation = bs->next_generation++;
	PGAlignedBlock image;
	Page		page = (Page) image.data;

	for (BlockNumber src = first; src < end; src++)
	{
		Buffer		buffer = simhash_lock_block(bs->index, src, BUFFER_LOCK_SHARE, NULL);
		SimhashPageOpaque opaque;

		memcpy(page, BufferGetPage(buffer), BLCKSZ);
		UnlockReleaseBuffer(buffer);
		opaque = SimhashPageGetOpaque(page);
		if (opaque->generation != run->generation)
			elog(ERROR, "simhash index build: page %u is not of the merged run", src);
		opaque->generation = generation;
		simhash_page_move_links(page, -(int64) delta);
		buffer = ReadBufferExtended(bs->index, MAIN_FORKNUM, src - delta,
									RBM_ZERO_AND_LOCK, NULL);
		memcpy(BufferGetPage(buffer), page, BLCKSZ);
		MarkBufferDirty(buffer);
		UnlockReleaseBuffer(buffer);
		CHECK_FOR_INTERRUPTS();
	}
	RelationTruncate(bs->index, end - delta);
	run->header -= delta;
	run->generation = generation;
}

/*
 * Was the run at header written on consecutive new pages, nblocks_before
 * up to the file's end, the header first?  (No page was free while it was
 * written: the chunks' pages are freed only after.)
 */
static bool
run_is_contiguous(BuildState *bs, const SimhashRunRef *run, BlockNumber nblocks_before)
{
	SimhashRunHeader *header = simhash_read_run_header(bs->index, run->header,
														run->generation, NULL);
	bool		contiguous = run->header == nblocks_before &&
		(BlockNumber) header->npages == RelationGetNumberOfBlocks(bs->index) - nblocks_before;

	pfree(header);
	return contiguous;
}

/* Collect one row of the table: into the nulls, or the current chunk. */
static void
build_callback(Relation index, ItemPointer tid, Datum *values,
			   bool *isnull, bool tupleIsAlive, void *state)
{
	BuildState *bs = (BuildState *) state;

	if (isnull[0])
	{
		/* kept apart, for ordered scans (which return every row) */
		simhash_run_input_reserve(&bs->nulls, 1);
		bs->nulls.hashes[bs->nulls.n] = 0;
		bs->nulls.tids[bs->nulls.n] = *tid;
		bs->nulls.n++;
		bs->indtuples += 1;
		return;
	}
	if (bs->input.n >= bs->chunk)
		write_chunk(bs);
	if (bs->input.n >= bs->cap)
	{
		size_t		grow = Min(Max(bs->cap, 1024), bs->chunk - bs->cap);

		simhash_run_input_reserve(&bs->input, bs->cap + grow - bs->input.n);
		bs->cap += grow;
	}
	bs->input.hashes[bs->input.n] = simhash_key_hash(index, values[0]);
	bs->input.tids[bs->input.n] = *tid;
	bs->input.n++;
	bs->indtuples += 1;
	if (((uint64) bs->indtuples & 1023) == 0)
		pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, (int64) bs->indtuples);
}

/* The index's reloption blocks (which 0) or max_distance (which 1). */
static int
index_option(Relation index, int which)
{
	SimhashOptions *opts = (SimhashOptions *) index->rd_options;

	if (which == 0)
		return opts ? opts->blocks : SIMHASH_DEFAULT_BLOCKS;
	return opts ? opts->max_distance : SIMHASH_DEFAULT_MAX_DISTANCE;
}

/* Write the metapage of an empty index (its WAL: the build's, at the end). */
static void
write_metapage(Relation index, ForkNumber fork, const SimhashBlocks *blocks)
{
	Buffer		buffer = ReadBufferExtended(index, fork, P_NEW, RBM_NORMAL, NULL);

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	Assert(BufferGetBlockNumber(buffer) == SIMHASH_METAPAGE_BLKNO);
	simhash_init_metapage(BufferGetPage(buffer), blocks->nblocks,
						  blocks->max_distance, blocks->ntables);
	MarkBufferDirty(buffer);
	UnlockReleaseBuffer(buffer);
}

IndexBuildResult *
simhash_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;
	BuildState	bs;
	SimhashBlocks blocks;
	double		reltuples;
	BlockNumber direct_start = InvalidBlockNumber,
				direct_end = InvalidBlockNumber;
	double		cpu_scan = simhash_cpu_ms(),
				cpu_write;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data",
			 RelationGetRelationName(index));
	if (!simhash_blocks_init(&blocks, index_option(index, 0), index_option(index, 1)))
		elog(ERROR, "invalid simhash index options");
	simhash_check_declared_radius(index);

	write_metapage(index, MAIN_FORKNUM, &blocks);

	memset(&bs, 0, sizeof(bs));
	bs.index = index;
	bs.blocks = &blocks;
	bs.chunk = Max((size_t) maintenance_work_mem * 1024 / BUILD_BYTES_PER_ENTRY, 1024);
	bs.chunk = Min(bs.chunk, ((size_t) 1 << 32) - 2);
	bs.next_generation = 2;		/* 1: the nulls list */
	/* room for the rows pg_class expects (fewer copies and page faults) */
	bs.cap = (size_t) Min((double) bs.chunk,
						  Max(heap->rd_rel->reltuples * 1.05 + 1024.0, (double) (1 << 16)));
	simhash_run_input_reserve(&bs.input, bs.cap);
	/* tuples_done: rows collected, of tuples_total (pg_class's estimate) */
	{
		const int	index[] = {PROGRESS_CREATEIDX_SUBPHASE, PROGRESS_CREATEIDX_TUPLES_TOTAL,
		PROGRESS_CREATEIDX_TUPLES_DONE};
		int64		val[] = {SIMHASH_BUILD_PHASE_SCAN,
		(int64) Max(heap->rd_rel->reltuples, 0), 0};

		pgstat_progress_update_multi_param(3, index, val);
	}
	/* by parallel workers if worth it (build_scan.c), else here */
	reltuples = simhash_build_scan_parallel(heap, index, indexInfo, build_callback, &bs);
	if (reltuples < 0)
		reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
										   build_callback, (void *) &bs, NULL);

	/* every row collected: the totals are exact from here on */
	{
		const int	index[] = {PROGRESS_CREATEIDX_SUBPHASE, PROGRESS_CREATEIDX_TUPLES_TOTAL,
		PROGRESS_CREATEIDX_TUPLES_DONE};
		int64		val[] = {SIMHASH_BUILD_PHASE_WRITE, (int64) bs.indtuples,
		(int64) bs.indtuples};

		pgstat_progress_update_multi_param(3, index, val);
	}
	simhash_test_hold_phase(SIMHASH_BUILD_PHASE_WRITE);
	cpu_write = simhash_cpu_ms();
	cpu_scan = cpu_write - cpu_scan;
	{
		Buffer		metabuf;
		SimhashMetaPageData *meta;
		BlockNumber header = InvalidBlockNumber;
		uint64		nentries = 0;
		uint64		generation = bs.next_generation++;
		SimhashList nulls;

		if (bs.nchunks == 0 && bs.input.n > 0)
		{
			/* everything fitted in memory: one run (trees built in parallel) */
			header = simhash_build_write_run(index, &blocks, &bs.input, generation,
											 &direct_start, &direct_end);
			nentries = bs.input.n;
		}
		else if (bs.nchunks > 0)
		{
			SimhashRunInput none = {NULL, NULL, 0};

			BlockNumber nblocks_before;

			if (bs.input.n > 0)
				write_chunk(&bs);
			nblocks_before = RelationGetNumberOfBlocks(index);
			header = simhash_merge_runs(index, &blocks, bs.chunks, bs.nchunks, &none,
										generation, SIMHASH_WRITE_BUILD, &nentries);
			if (header != InvalidBlockNumber)
			{
				SimhashRunRef merged = {header, 0, nentries, generation};

				if (run_is_contiguous(&bs, &merged, nblocks_before))
					copy_run_down(&bs, &merged, nblocks_before,
								  RelationGetNumberOfBlocks(index));
				else
				{
					free_chunks(&bs);
					move_run_down(&bs, &merged);
				}
				header = merged.header;
				generation = merged.generation;
			}
			else
				free_chunks(&bs);
		}

		nulls.generation = 1;
		simhash_write_list(index, &bs.nulls, SIMHASH_ENTRY_NULL, &nulls, SIMHASH_WRITE_BUILD);

		metabuf = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
		meta = SimhashPageGetMeta(BufferGetPage(metabuf));
		if (header != InvalidBlockNumber)
		{
			meta->runs[0].header = header;
			meta->runs[0].format = SIMHASH_VERSION;
			meta->runs[0].nentries = nentries;
			meta->runs[0].generation = generation;
			meta->nruns = 1;
		}
		if (bs.nulls.n > 0)
			meta->nulls = nulls;
		meta->next_generation = bs.next_generation;
		MarkBufferDirty(metabuf);
		UnlockReleaseBuffer(metabuf);
	}

	/* WAL: every page but those build_parallel.c wrote and logged itself */
	if (RelationNeedsWAL(index))
	{
		BlockNumber nblocks = RelationGetNumberOfBlocks(index);

		if (direct_start == InvalidBlockNumber)
			direct_start = direct_end = nblocks;
		log_newpage_range(index, MAIN_FORKNUM, 0, direct_start, true);
		log_newpage_range(index, MAIN_FORKNUM, direct_end, nblocks, true);
	}
	elog(DEBUG2, "simhash index build: the leader's cpu ms: scan %.0f, write %.0f",
		 cpu_scan, simhash_cpu_ms() - cpu_write);

	result = (IndexBuildResult *) palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = bs.indtuples;
	return result;
}

char *
simhash_buildphasename(int64 phasenum)
{
	switch (phasenum)
	{
		case PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE:
			return "initializing";
		case SIMHASH_BUILD_PHASE_SCAN:
			return "scanning table";
		case SIMHASH_BUILD_PHASE_WRITE:
			return "sorting tables and writing the run";
		default:
			return NULL;
	}
}

/* The init fork of an unlogged index: just the metapage. */
void
simhash_buildempty(Relation index)
{
	SimhashBlocks blocks;
	Buffer		buffer;

	if (!simhash_blocks_init(&blocks, index_option(index, 0), index_option(index, 1)))
		elog(ERROR, "invalid simhash index options");
	buffer = ReadBufferExtended(index, INIT_FORKNUM, P_NEW, RBM_NORMAL, NULL);
	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	START_CRIT_SECTION();
	simhash_init_metapage(BufferGetPage(buffer), blocks.nblocks,
						  blocks.max_distance, blocks.ntables);
	MarkBufferDirty(buffer);
	log_newpage_buffer(buffer, true);
	END_CRIT_SECTION();
	UnlockReleaseBuffer(buffer);
}
