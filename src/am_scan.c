/*
 * am_scan.c
 *		Scanning a simhash index: for `h <@ simhash_ball(center, radius)`,
 *		search every run (probing its tables) and read the pending lists,
 *		keep entries within every ball of the scan keys, and return the
 *		heap TIDs once each, in TID order (amgettuple) or as a bitmap.
 */
#include "postgres.h"

#include "access/relscan.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "port/pg_bitutils.h"
#include "utils/memutils.h"

#include "am.h"
#include "simhash.h"

typedef struct SimhashScanOpaqueData
{
	MemoryContext cxt;			/* matches of the current scan */
	bool		computed;
	SimhashMatches matches;
	size_t		next;
} SimhashScanOpaqueData;

typedef SimhashScanOpaqueData *SimhashScanOpaque;

IndexScanDesc
simhash_beginscan(Relation index, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(index, nkeys, norderbys);
	SimhashScanOpaque so = palloc0(sizeof(SimhashScanOpaqueData));

	so->cxt = AllocSetContextCreate(CurrentMemoryContext, "simhash scan",
									ALLOCSET_DEFAULT_SIZES);
	scan->opaque = so;
	return scan;
}

void
simhash_rescan(IndexScanDesc scan, ScanKey keys, int nkeys,
			   ScanKey orderbys, int norderbys)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	if (keys && scan->numberOfKeys > 0)
		memmove(scan->keyData, keys, scan->numberOfKeys * sizeof(ScanKeyData));
	MemoryContextReset(so->cxt);
	memset(&so->matches, 0, sizeof(so->matches));
	so->computed = false;
	so->next = 0;
}

void
simhash_endscan(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	MemoryContextDelete(so->cxt);
	pfree(so);
}

typedef struct TidHash
{
	ItemPointerData tid;
	uint64		hash;
} TidHash;

static int
tidhash_cmp(const void *a, const void *b)
{
	TidHash    *x = (TidHash *) a;
	TidHash    *y = (TidHash *) b;

	return ItemPointerCompare(&x->tid, &y->tid);
}

/* Find the matches of all scan keys, sorted by TID, each once. */
static void
compute_matches(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	MemoryContext oldcxt = MemoryContextSwitchTo(so->cxt);
	SimhashMetaPageData meta;
	SimhashBlocks blocks;
	SimhashMatches found = {NULL, NULL, 0, 0};
	uint64		center = 0;
	int			radius = 65;
	TidHash    *pairs;
	size_t		n = 0;

	so->computed = true;
	if (scan->numberOfKeys == 0)
		elog(ERROR, "simhash index scans need a search condition");

	/* the driving key: the smallest ball */
	for (int i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		key = &scan->keyData[i];
		SimhashBall *ball;

		if (key->sk_flags & SK_ISNULL)
		{
			MemoryContextSwitchTo(oldcxt);
			return;				/* nothing is within a NULL ball */
		}
		ball = DatumGetSimhashBallP(key->sk_argument);
		if (ball->radius < radius)
		{
			radius = ball->radius;
			center = ball->center;
		}
	}
	if (radius < 0)
	{
		MemoryContextSwitchTo(oldcxt);
		return;
	}

	simhash_read_meta(scan->indexRelation, &meta);
	simhash_meta_blocks(&meta, &blocks);
	for (int i = 0; i < meta.nruns; i++)
		simhash_search_run(scan->indexRelation, &blocks, &meta.runs[i],
						   center, radius, &found);
	simhash_search_list(scan->indexRelation, &meta.flushing, center, radius, &found);
	simhash_search_list(scan->indexRelation, &meta.pending, center, radius, &found);

	/* keep entries inside every ball; sort by TID; drop duplicates */
	pairs = palloc_extended(Max(found.n, 1) * sizeof(TidHash), MCXT_ALLOC_HUGE);
	for (size_t i = 0; i < found.n; i++)
	{
		bool		ok = true;

		for (int k = 0; k < scan->numberOfKeys && ok; k++)
		{
			SimhashBall *ball = DatumGetSimhashBallP(scan->keyData[k].sk_argument);

			ok = pg_popcount64(found.hashes[i] ^ ball->center) <= ball->radius;
		}
		if (ok)
		{
			pairs[n].tid = found.tids[i];
			pairs[n].hash = found.hashes[i];
			n++;
		}
	}
	qsort(pairs, n, sizeof(TidHash), tidhash_cmp);
	so->matches.n = 0;
	for (size_t i = 0; i < n; i++)
		if (so->matches.n == 0 ||
			!ItemPointerEquals(&so->matches.tids[so->matches.n - 1], &pairs[i].tid))
			simhash_matches_add(&so->matches, &pairs[i].tid, pairs[i].hash);
	MemoryContextSwitchTo(oldcxt);
}

bool
simhash_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	if (!so->computed)
		compute_matches(scan);
	if (so->next >= so->matches.n)
		return false;
	scan->xs_heaptid = so->matches.tids[so->next++];
	scan->xs_recheck = false;
	return true;
}

int64
simhash_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	if (!so->computed)
		compute_matches(scan);
	if (so->matches.n > 0)
		tbm_add_tuples(tbm, so->matches.tids, so->matches.n, false);
	return so->matches.n;
}
