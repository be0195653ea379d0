/*
 * policy.c
 *		When the simhash index (design: README.md) sorts its pending lanes into a
 *		run and which runs it merges: the policy (merge_from()), and the
 *		flush that carries it out, serialised by a heavyweight lock on the
 *		metapage's block.
 */
#include "postgres.h"

#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"

#include "am.h"
#include "simhash.h"

/*
 * How much larger than the entries taken so far a run may be and still be
 * merged with them (merge_from()).  The smaller, the fewer times an entry
 * is rewritten while the small runs grow, and the more runs lookups probe.
 * At 2 a flushed entry is rewritten about 3 times instead of about 6 at 4,
 * which roughly halves the instructions flushes and merges cost an insert
 * (bench/inserts_instructions.sh), for about one more small run beside the
 * large one, which lookups probe rather than read whole (probe.c,
 * SIMHASH_WHOLE_LEAF_COST).  1 gains little more and leaves more runs.
 */
#define SIMHASH_MERGE_FACTOR 2

/*
 * The merge policy: which runs to rewrite with the list being flushed.
 * Returns i such that runs[i ..] (the newest ones, the list's entries
 * included) are merged into one run:
 *	- merge_all: every run (i = 0);
 *	- otherwise geometric: take the newest run while it is at most
 *	  SIMHASH_MERGE_FACTOR (2) times the entries taken so far, so that
 *	  each entry is rewritten O(log n) times and the runs' sizes grow by
 *	  more than 2 from newest to oldest (at most about log2(N / flush) + 1
 *	  runs); when the metapage's run list is full and nothing was taken,
 *	  the two newest runs;
 *	- and, further back, from the oldest run whose share of dead entries
 *	  exceeds dead_fraction (1.0: never; VACUUM passes a lower one), to
 *	  drop those entries.
 * i == meta->nruns: no run is merged (only the list, if any, is flushed).
 */
static int
merge_from(Relation index, const SimhashMetaPageData *meta, bool merge_all,
		   double dead_fraction)
{
	uint64		acc = 0;
	int			first = meta->nruns;

	for (int i = 0; i < meta->nlanes; i++)
		acc += meta->flushing[i].nentries + (meta->flushing[i].head != InvalidBlockNumber);

	if (merge_all)
		return 0;
	while (first > 0 && acc > 0 &&
		   meta->runs[first - 1].nentries <= SIMHASH_MERGE_FACTOR * acc)
	{
		first--;
		acc += meta->runs[first].nentries;
	}
	if (first == meta->nruns && meta->nruns >= SIMHASH_MAX_RUNS)
		first = meta->nruns - 2;	/* a full list: merge two */
	for (int i = 0; i < first && dead_fraction < 1.0; i++)
	{
		SimhashRunHeader *h = simhash_read_run_header(index, meta->runs[i].header,
													  meta->runs[i].generation, NULL);

		if ((double) h->ndead > dead_fraction * (double) h->nentries)
			first = i;
		pfree(h);
	}
	return first;
}

/*
 * Sort the pending lanes into a run, and merge runs as merge_from() says.
 * Dead entries are dropped.  Serialised by a heavyweight lock on the
 * metapage's block; without wait, give up if another backend holds it.
 */
void
simhash_flush_and_merge(Relation index, bool wait, bool merge_all,
						double dead_fraction)
{
	Buffer		metabuf;
	SimhashMetaPageData meta;
	SimhashBlocks blocks;
	SimhashRunInput input = {NULL, NULL, 0};
	uint64		generation;
	int			first_merged;
	BlockNumber newheader = InvalidBlockNumber;
	uint64		newcount = 0;
	int			nruns_before;
	int			nflushing;
	MemoryContext oldcxt,
				cxt;

	if (wait)
		LockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
	else if (!ConditionalLockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock))
		return;

	cxt = AllocSetContextCreate(CurrentMemoryContext, "simhash merge",
								ALLOCSET_DEFAULT_SIZES);
	oldcxt = MemoryContextSwitchTo(cxt);

	/* pages replaced earlier and seen by no snapshot now: reuse them */
	if (simhash_recycle(index, NULL) > 0)
		IndexFreeSpaceMapVacuum(index);	/* searches start at the upper levels */

	metabuf = simhash_lock_meta(index, BUFFER_LOCK_EXCLUSIVE);
	memcpy(&meta, SimhashPageGetMeta(BufferGetPage(metabuf)), sizeof(meta));
	/* the pending lanes will become the flushing lanes */
	nflushing = simhash_take_pending(&meta);
	first_merged = merge_from(index, &meta, merge_all, dead_fraction);

	/* nothing to do */
	if (nflushing == 0 && first_merged >= meta.nruns)
	{
		UnlockReleaseBuffer(metabuf);
		MemoryContextSwitchTo(oldcxt);
		MemoryContextDelete(cxt);
		UnlockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
		return;
	}

	/* publish the flushing list, and take a generation for the new run */
	generation = meta.next_generation++;
	nruns_before = meta.nruns;
	simhash_log_meta(index, metabuf, &meta);
	LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);

	/* merge the live entries of the list and the runs into one run */
	for (int i = 0; i < meta.nlanes; i++)
		if (meta.flushing[i].head != InvalidBlockNumber)
			simhash_read_list_entries(index, &meta.flushing[i], &input, true);
	simhash_meta_blocks(&meta, &blocks);
	newheader = simhash_merge_runs(index, &blocks, meta.runs + first_merged,
								   meta.nruns - first_merged, &input, generation,
								   SIMHASH_WRITE_LOGGED, &newcount);
	/* the flushing lanes are published, the new run is not yet */
	simhash_test_hold_phase(SIMHASH_HOLD_FLUSH_WRITTEN);

	/* swap: only we change runs and the flushing list (heavyweight lock) */
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	memcpy(&meta, SimhashPageGetMeta(BufferGetPage(metabuf)), sizeof(meta));
	if (meta.nruns != nruns_before)
		simhash_report_corrupt(index, SIMHASH_METAPAGE_BLKNO,
							   "The metapage's runs changed during a merge.");
	for (int i = first_merged; i < meta.nruns; i++)
		simhash_retire(index, &meta, meta.runs[i].header, SIMHASH_RETIRED_RUN,
					   meta.runs[i].generation);
	for (int i = 0; i < meta.nlanes; i++)
		if (meta.flushing[i].head != InvalidBlockNumber)
			simhash_retire(index, &meta, meta.flushing[i].head, SIMHASH_RETIRED_LIST,
						   meta.flushing[i].generation);
	meta.nruns = first_merged;
	if (newheader != InvalidBlockNumber)
	{
		SimhashRunRef *ref = &meta.runs[meta.nruns++];

		ref->header = newheader;
		ref->format = SIMHASH_VERSION;
		ref->nentries = newcount;
		ref->generation = generation;
	}
	for (int i = 0; i < meta.nlanes; i++)
		simhash_clear_list(&meta.flushing[i]);
	simhash_log_meta(index, metabuf, &meta);
	UnlockReleaseBuffer(metabuf);

	MemoryContextSwitchTo(oldcxt);
	MemoryContextDelete(cxt);
	UnlockPage(index, SIMHASH_METAPAGE_BLKNO, ExclusiveLock);
}
