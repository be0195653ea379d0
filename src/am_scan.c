/*
 * am_scan.c
 *		Scanning a simhash index: for `h <@ simhash_ball(center, radius)`,
 *		search every run (probing its tables) and read the pending lists,
 *		keep entries within every ball of the scan keys, and return the
 *		heap TIDs once each, in TID order (amgettuple) or as a bitmap; for
 *		`ORDER BY h <~> q`, return them by increasing distance, ring by ring.
 */
#include "postgres.h"

#include "access/relscan.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "pgstat.h"
#include "port/pg_bitutils.h"
#include "utils/memutils.h"

#include "am.h"
#include "simhash.h"

typedef struct SimhashScanOpaqueData
{
	MemoryContext cxt;			/* matches of the current scan */
	bool		computed;		/* started: meta, blocks and radius are set */
	SimhashMetaPageData meta;	/* the index as the scan sees it */
	SimhashBlocks blocks;
	int			max_radius;		/* the smallest ball of the keys (64: none) */
	bool		empty;			/* a key matches nothing */
	bool		keyless;		/* no keys: every row, NULL keys included */
	/* ordered scans: distance rings 0, 1, ... up to max_radius */
	bool		ordered;
	bool		order_null;		/* ORDER BY h <~> NULL */
	uint64		query;
	int			ring;			/* next ring to read */
	bool		nulls_done;
	/* the batch being returned */
	ItemPointerData *tids;
	int32	   *dists;			/* -1: NULL key */
	size_t		n;
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
	if (norderbys > 0)
	{
		scan->xs_orderbyvals = palloc0(sizeof(Datum) * norderbys);
		scan->xs_orderbynulls = palloc(sizeof(bool) * norderbys);
	}
	return scan;
}

void
simhash_rescan(IndexScanDesc scan, ScanKey keys, int nkeys,
			   ScanKey orderbys, int norderbys)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	if (keys && scan->numberOfKeys > 0)
		memmove(scan->keyData, keys, scan->numberOfKeys * sizeof(ScanKeyData));
	if (orderbys && scan->numberOfOrderBys > 0)
		memmove(scan->orderByData, orderbys, scan->numberOfOrderBys * sizeof(ScanKeyData));
	MemoryContextReset(so->cxt);
	so->computed = false;
	so->tids = NULL;
	so->dists = NULL;
	so->n = 0;
	so->next = 0;
}

void
simhash_endscan(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	MemoryContextDelete(so->cxt);
	pfree(so);
}

typedef struct Match
{
	ItemPointerData tid;
	int32		dist;
} Match;

static int
match_by_tid(const void *a, const void *b)
{
	Match	   *x = (Match *) a;
	Match	   *y = (Match *) b;

	return ItemPointerCompare(&x->tid, &y->tid);
}

static int
match_by_dist(const void *a, const void *b)
{
	Match	   *x = (Match *) a;
	Match	   *y = (Match *) b;

	if (x->dist != y->dist)
		return x->dist < y->dist ? -1 : 1;
	return ItemPointerCompare(&x->tid, &y->tid);
}

/* Start a scan: the metapage, the geometry and the radius of the keys. */
static void
start_scan(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	so->computed = true;
	pgstat_count_index_scan(scan->indexRelation);
	so->empty = false;
	so->max_radius = 64;
	so->keyless = (scan->numberOfKeys == 0);
	for (int i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		key = &scan->keyData[i];

		if (key->sk_flags & SK_ISNULL)
			so->empty = true;	/* nothing is within a NULL ball */
		else
			so->max_radius = Min(so->max_radius,
								 DatumGetSimhashBallP(key->sk_argument)->radius);
	}
	if (so->max_radius < 0)
		so->empty = true;
	so->ordered = (scan->numberOfOrderBys > 0);
	so->order_null = so->ordered && (scan->orderByData[0].sk_flags & SK_ISNULL);
	so->query = (so->ordered && !so->order_null) ?
		DatumGetSimhash64(scan->orderByData[0].sk_argument) : 0;
	so->ring = 0;
	so->nulls_done = false;
	simhash_read_meta(scan->indexRelation, &so->meta);
	simhash_meta_blocks(&so->meta, &so->blocks);
}

/*
 * Entries within radius of center that are inside every ball of the keys,
 * with their distance to `query` (or -1 when unordered); lo..hi bounds that
 * distance.  Returned in so->cxt; *n receives the count.
 */
static Match *
gather(IndexScanDesc scan, uint64 center, int radius, int lo, int hi, size_t *n)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	SimhashMatches found = {NULL, NULL, 0, 0};
	Match	   *out;
	size_t		m = 0;

	for (int i = 0; i < so->meta.nruns; i++)
		simhash_search_run(scan->indexRelation, &so->blocks, &so->meta.runs[i],
						   center, radius, &found);
	simhash_search_list(scan->indexRelation, &so->meta.flushing, center, radius, &found);
	simhash_search_list(scan->indexRelation, &so->meta.pending, center, radius, &found);

	out = palloc_extended(Max(found.n, 1) * sizeof(Match), MCXT_ALLOC_HUGE);
	for (size_t i = 0; i < found.n; i++)
	{
		bool		ok = true;
		int			dist = pg_popcount64(found.hashes[i] ^ so->query);

		for (int k = 0; k < scan->numberOfKeys && ok; k++)
		{
			SimhashBall *ball = DatumGetSimhashBallP(scan->keyData[k].sk_argument);

			ok = pg_popcount64(found.hashes[i] ^ ball->center) <= ball->radius;
		}
		if (ok && so->ordered && !so->order_null)
			ok = dist >= lo && dist <= hi;
		if (ok)
		{
			out[m].tid = found.tids[i];
			out[m].dist = (so->ordered && !so->order_null) ? dist : -1;
			m++;
		}
	}
	*n = m;
	return out;
}

/* Make matches[] the next batch (deduplicated: a tree each may find one). */
static void
set_batch(SimhashScanOpaque so, Match *matches, size_t n, bool by_dist)
{
	size_t		k = 0;

	qsort(matches, n, sizeof(Match), by_dist ? match_by_dist : match_by_tid);
	so->tids = palloc_extended(Max(n, 1) * sizeof(ItemPointerData), MCXT_ALLOC_HUGE);
	so->dists = palloc_extended(Max(n, 1) * sizeof(int32), MCXT_ALLOC_HUGE);
	for (size_t i = 0; i < n; i++)
	{
		if (k > 0 && ItemPointerEquals(&so->tids[k - 1], &matches[i].tid))
			continue;
		so->tids[k] = matches[i].tid;
		so->dists[k] = matches[i].dist;
		k++;
	}
	so->n = k;
	so->next = 0;
}

/* The rows whose key is NULL (key-less scans only). */
static void
null_batch(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	SimhashRunInput nulls = {NULL, NULL, 0};
	Match	   *matches;

	simhash_read_list_entries(scan->indexRelation, &so->meta.nulls, &nulls, true);
	matches = palloc_extended(Max(nulls.n, 1) * sizeof(Match), MCXT_ALLOC_HUGE);
	for (size_t i = 0; i < nulls.n; i++)
	{
		matches[i].tid = nulls.tids[i];
		matches[i].dist = -1;
	}
	set_batch(so, matches, nulls.n, false);
}

/*
 * The next batch; false when the scan is over.  Unordered scans have one
 * batch (plus the NULL keys when key-less).  Ordered scans read distance
 * rings: ring r holds the entries exactly r bits from the query; once
 * probing a ring would read whole trees anyway, everything left is read
 * at once and sorted by distance.  NULL keys come last (NULLS LAST).
 */
static bool
next_batch(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	MemoryContext oldcxt = MemoryContextSwitchTo(so->cxt);
	Match	   *matches;
	size_t		n;
	bool		more = true;

	if (!so->computed)
		start_scan(scan);
	if (so->empty)
		more = false;
	else if (!so->ordered || so->order_null)
	{
		if (so->ring == 0)
		{
			uint64		center = 0;

			/* the smallest ball drives the search */
			for (int i = 0; i < scan->numberOfKeys; i++)
			{
				SimhashBall *ball = DatumGetSimhashBallP(scan->keyData[i].sk_argument);

				if (ball->radius == so->max_radius)
				{
					center = ball->center;
					break;
				}
			}
			matches = gather(scan, center, so->max_radius, 0, 64, &n);
			set_batch(so, matches, n, false);
			so->ring = 65;
		}
		else if (so->keyless && !so->nulls_done)
		{
			null_batch(scan);
			so->nulls_done = true;
		}
		else
			more = false;
	}
	else if (so->ring <= so->max_radius)
	{
		uint64		largest = 0;

		for (int i = 0; i < so->meta.nruns; i++)
			largest = Max(largest, so->meta.runs[i].nentries);
		if (simhash_search_reads_all(&so->blocks, so->ring, largest))
		{
			matches = gather(scan, so->query, so->max_radius, so->ring, so->max_radius, &n);
			set_batch(so, matches, n, true);
			so->ring = so->max_radius + 1;
		}
		else
		{
			matches = gather(scan, so->query, so->ring, so->ring, so->ring, &n);
			set_batch(so, matches, n, false);
			so->ring++;
		}
	}
	else if (so->keyless && !so->nulls_done)
	{
		null_batch(scan);
		so->nulls_done = true;
	}
	else
		more = false;
	MemoryContextSwitchTo(oldcxt);
	return more;
}

bool
simhash_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	while (!so->computed || so->next >= so->n)
	{
		CHECK_FOR_INTERRUPTS();
		if (!next_batch(scan))
			return false;
	}
	scan->xs_heaptid = so->tids[so->next];
	scan->xs_recheck = false;
	if (so->ordered)
	{
		int32		dist = so->dists[so->next];

		scan->xs_orderbyvals[0] = Int32GetDatum(dist);
		scan->xs_orderbynulls[0] = (dist < 0);
		scan->xs_recheckorderby = false;
	}
	so->next++;
	return true;
}

int64
simhash_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	int64		total = 0;

	while (next_batch(scan))
	{
		if (so->n > 0)
			tbm_add_tuples(tbm, so->tids, so->n, false);
		total += so->n;
	}
	return total;
}
