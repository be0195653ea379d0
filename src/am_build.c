/*
 * am_build.c
 *		CREATE INDEX for the simhash access method: read the heap once,
 *		collect (hash, TID) of every non-NULL row, and write them as one
 *		run (sorted per table); WAL for the new pages at the end.
 */
#include "postgres.h"

#include "access/tableam.h"
#include "access/xloginsert.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "am.h"
#include "simhash.h"

typedef struct BuildState
{
	SimhashRunInput input;
	size_t		cap;
	SimhashRunInput nulls;		/* rows whose key is NULL */
	double		indtuples;
} BuildState;

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
	if (bs->input.n >= bs->cap)
	{
		bs->cap = Max(bs->cap * 2, 1024);
		simhash_run_input_reserve(&bs->input, bs->cap - bs->input.n);
	}
	bs->input.hashes[bs->input.n] = DatumGetSimhash64(values[0]);
	bs->input.tids[bs->input.n] = *tid;
	bs->input.n++;
	bs->indtuples += 1;
}

static int
index_option(Relation index, int which)
{
	SimhashOptions *opts = (SimhashOptions *) index->rd_options;

	if (which == 0)
		return opts ? opts->blocks : SIMHASH_DEFAULT_BLOCKS;
	return opts ? opts->max_distance : SIMHASH_DEFAULT_MAX_DISTANCE;
}

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

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data",
			 RelationGetRelationName(index));
	if (!simhash_blocks_init(&blocks, index_option(index, 0), index_option(index, 1)))
		elog(ERROR, "invalid simhash index options");

	write_metapage(index, MAIN_FORKNUM, &blocks);

	memset(&bs, 0, sizeof(bs));
	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, SIMHASH_BUILD_PHASE_SCAN);
	reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
									   build_callback, (void *) &bs, NULL);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, SIMHASH_BUILD_PHASE_WRITE);
	if (bs.input.n > 0)
	{
		Buffer		metabuf;
		SimhashMetaPageData *meta;
		BlockNumber header;

		if (bs.input.n >= ((size_t) 1 << 32) - 1)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("too many rows for a simhash index")));
		header = simhash_write_run(index, &blocks, &bs.input, 1, SIMHASH_WRITE_BUILD);

		metabuf = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
		meta = SimhashPageGetMeta(BufferGetPage(metabuf));
		meta->runs[0].header = header;
		meta->runs[0].pad = 0;
		meta->runs[0].nentries = bs.input.n;
		meta->runs[0].generation = 1;
		meta->nruns = 1;
		MarkBufferDirty(metabuf);
		UnlockReleaseBuffer(metabuf);
	}
	if (bs.nulls.n > 0)
	{
		Buffer		metabuf;
		SimhashList nulls;

		nulls.generation = 2;	/* the run (if any) has 1 */
		simhash_write_list(index, &bs.nulls, SIMHASH_ENTRY_NULL, &nulls, SIMHASH_WRITE_BUILD);
		metabuf = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);
		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
		SimhashPageGetMeta(BufferGetPage(metabuf))->nulls = nulls;
		MarkBufferDirty(metabuf);
		UnlockReleaseBuffer(metabuf);
	}

	{
		Buffer		metabuf = ReadBuffer(index, SIMHASH_METAPAGE_BLKNO);

		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
		SimhashPageGetMeta(BufferGetPage(metabuf))->next_generation = 3;
		MarkBufferDirty(metabuf);
		UnlockReleaseBuffer(metabuf);
	}

	if (RelationNeedsWAL(index))
		log_newpage_range(index, MAIN_FORKNUM, 0,
						  RelationGetNumberOfBlocks(index), true);

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
