/*
 * scan.c
 *		Scanning a simhash index (design: README.md): for `h <@ simhash_ball(center, radius)`
 *		(and `key && ball` on an index of simhash_ball keys: the centers
 *		within the ball's radius, rechecked), search every run (probing its
 *		tables) and read the pending lists,
 *		keep entries within every ball of the scan keys, and return the
 *		heap TIDs once each, in TID order (amgettuple) or as a bitmap; for
 *		`ORDER BY h <~> q`, return them by increasing distance, ring by ring.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/itup.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "pgstat.h"
#include "port/pg_bitutils.h"
#include "utils/memutils.h"
#include "utils/tuplesort.h"
#include "catalog/pg_operator_d.h"
#include "catalog/pg_type_d.h"

#include "am.h"
#include "simhash.h"

/*
 * A batch of matches as 64-bit keys that sort in the order they are
 * returned: (distance code << 48) | (heap block << 16) | offset.  The
 * distance code is the distance to the ORDER BY argument, 0 in unordered
 * scans, BATCH_NULL_DIST where the distance is NULL.  A TID found by
 * several tables of a run appears several times with the same key: equal
 * neighbours once sorted, returned once.  The keys stay in memory while
 * they fit in work_mem, then go to a tuplesort that spills to disk.
 */
#define BATCH_NULL_DIST 127

typedef struct Batch
{
	uint64	   *keys;			/* in memory (sort == NULL) */
	size_t		n;
	size_t		cap;
	size_t		limit;			/* keys that fit in work_mem */
	size_t		next;
	Tuplesortstate *sort;		/* spilled */
	bool		open;
	bool		have_last;
	uint64		last;
} Batch;

typedef struct SimhashScanOpaqueData
{
	MemoryContext cxt;			/* matches of the current scan */
	bool		computed;		/* started: meta, blocks and radius are set */
	SimhashMetaPageData *meta;	/* the index as the scan sees it (palloc'd
								 * apart: zeroing it with the rest cost a
								 * lookup more than its copy) */
	SimhashBlocks blocks;
	int			max_radius;		/* the smallest ball of the keys (64: none) */
	bool		empty;			/* a key matches nothing */
	bool		keyless;		/* no keys: every row, NULL keys included */
	bool		recheck;		/* a key is `ball && ball` (see start_scan) */
	/* ordered scans: distance rings 0, 1, ... up to max_radius */
	bool		ordered;
	bool		order_null;		/* ORDER BY h <~> NULL */
	uint64		query;
	int			ring;			/* next ring to read */
	bool		tail;			/* rings past here are read in slices */
	uint64		tail_counts[65];	/* entries per ring, from one counting pass */
	uint64		slice;			/* entries the next slice should hold */
	bool		nulls_done;
	BlockNumber heap_blocks;	/* the heap's size as last read (TID checks) */
	Batch		batch;			/* the batch being returned */
	IndexTuple	nothing;		/* what an index-only scan gets (see gettuple) */
} SimhashScanOpaqueData;

typedef SimhashScanOpaqueData *SimhashScanOpaque;

/* Free a batch's keys or sort (the batch is empty and closed after). */
static void
batch_end(Batch *b)
{
	if (b->sort)
		tuplesort_end(b->sort);
	if (b->keys)
		pfree(b->keys);
	memset(b, 0, sizeof(Batch));
}

/* A new, empty batch (in the current memory context). */
static void
batch_begin(Batch *b)
{
	batch_end(b);
	b->limit = Max((size_t) work_mem * 1024 / sizeof(uint64), 64);
	b->open = true;
}

/* Add a key to the batch, spilling to a tuplesort past work_mem. */
static void
batch_add(Batch *b, uint64 key)
{
	if (b->sort == NULL && b->n >= b->limit)
	{
		/* over work_mem: from now on, a sort that spills */
		b->sort = tuplesort_begin_datum(INT8OID, Int8LessOperator, InvalidOid, false,
										work_mem, NULL, TUPLESORT_NONE);
		for (size_t i = 0; i < b->n; i++)
			tuplesort_putdatum(b->sort, Int64GetDatum((int64) b->keys[i]), false);
		pfree(b->keys);
		b->keys = NULL;
		b->n = b->cap = 0;
	}
	if (b->sort)
	{
		tuplesort_putdatum(b->sort, Int64GetDatum((int64) key), false);
		return;
	}
	if (b->n >= b->cap)
	{
		b->cap = Min(Max(b->cap * 2, 64), b->limit);
		b->keys = b->keys ? repalloc(b->keys, b->cap * sizeof(uint64)) :
			palloc(b->cap * sizeof(uint64));
	}
	b->keys[b->n++] = key;
}

/* qsort order of the keys: unsigned. */
static int
key_cmp(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a;
	uint64		y = *(const uint64 *) b;

	return (x > y) - (x < y);
}

/* All keys added: sort them. */
static void
batch_done(Batch *b)
{
	if (b->sort)
		tuplesort_performsort(b->sort);
	else if (b->n > 1)
		qsort(b->keys, b->n, sizeof(uint64), key_cmp);
}

/* The next distinct key of the batch; false at its end. */
static bool
batch_next(Batch *b, ItemPointer tid, int32 *dist)
{
	for (;;)
	{
		uint64		key;

		if (!b->open)
			return false;
		if (b->sort)
		{
			Datum		d;
			bool		isnull;

			if (!simhash_tuplesort_getdatum(b->sort, true, &d, &isnull, NULL))
				return false;
			key = (uint64) DatumGetInt64(d);
		}
		else
		{
			if (b->next >= b->n)
				return false;
			key = b->keys[b->next++];
		}
		if (b->have_last && key == b->last)
			continue;
		b->have_last = true;
		b->last = key;
		simhash_tid_decode(key & ((UINT64CONST(1) << 48) - 1), tid);
		*dist = (int32) (key >> 48) == BATCH_NULL_DIST ? -1 : (int32) (key >> 48);
		return true;
	}
}

IndexScanDesc
simhash_beginscan(Relation index, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(index, nkeys, norderbys);
	SimhashScanOpaque so = palloc0(sizeof(SimhashScanOpaqueData));

	so->cxt = AllocSetContextCreate(CurrentMemoryContext, "simhash scan",
									ALLOCSET_DEFAULT_SIZES);
	so->meta = palloc(sizeof(SimhashMetaPageData));
	scan->opaque = so;
	so->nothing = NULL;
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
	batch_end(&so->batch);
	MemoryContextReset(so->cxt);
	so->computed = false;
}

void
simhash_endscan(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	batch_end(&so->batch);
	MemoryContextDelete(so->cxt);
	pfree(so->meta);
	pfree(so);
}

/*
 * The radius a scan key asks the index for.  `indexed ball && key ball`
 * holds when the centers are within the smaller radius; the index keeps
 * only the indexed balls' centers, and their radii are at most
 * SIMHASH_BALL_KEY_MAX_RADIUS (ball_keys.c), so the centers within the
 * key's radius, or that bound, are the candidates, and the executor (or an
 * exclusion constraint's check) rechecks the operator on each.
 */
static int
key_radius(ScanKey key)
{
	int			radius = DatumGetSimhashBallP(key->sk_argument)->radius;

	if (key->sk_strategy == SIMHASH_NEAR_STRATEGY)
		radius = Min(radius, SIMHASH_BALL_KEY_MAX_RADIUS);
	return radius;
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
	so->recheck = false;
	for (int i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		key = &scan->keyData[i];

		/* `ball && ball`: candidates, rechecked (see key_radius()) */
		if (key->sk_strategy == SIMHASH_NEAR_STRATEGY)
			so->recheck = true;

		if (key->sk_flags & SK_ISNULL)
			so->empty = true;	/* nothing is within a NULL ball */
		else
			so->max_radius = Min(so->max_radius, key_radius(key));
	}
	if (so->max_radius < 0)
		so->empty = true;
	so->ordered = (scan->numberOfOrderBys > 0);
	so->order_null = so->ordered && (scan->orderByData[0].sk_flags & SK_ISNULL);
	so->query = (so->ordered && !so->order_null) ?
		DatumGetSimhash64(scan->orderByData[0].sk_argument) : 0;
	so->ring = 0;
	so->tail = false;
	so->nulls_done = false;
	simhash_read_meta(scan->indexRelation, so->meta);
	/* the searches' copies of inner pages must not outlive a rebuild */
	simhash_inner_cache_seen(scan->indexRelation, so->meta->next_generation);
	simhash_meta_blocks(so->meta, &so->blocks);
}

/*
 * An entry's TID, before it is returned: an offset a heap page can hold
 * (a bitmap needs that of any table), and for a heap read by an index scan
 * a block inside the table (a bitmap heap scan skips blocks past the end by
 * itself).  The heap's size is read again when a block at or past the size
 * last read turns up: the heap grows.  Index scans of other table AMs
 * return their TIDs as they are.
 */
static void
check_tid(IndexScanDesc scan, ItemPointer tid)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	Relation	heap = scan->heapRelation;
	bool		heapam = heap != NULL && heap->rd_tableam == GetHeapamTableAmRoutine();
	BlockNumber blkno = ItemPointerGetBlockNumberNoCheck(tid);
	OffsetNumber off = ItemPointerGetOffsetNumberNoCheck(tid);
	bool		off_ok = off >= FirstOffsetNumber && off <= MaxHeapTuplesPerPage;

	if (heap != NULL && !heapam)
		return;
	if (off_ok && (!heapam || blkno < so->heap_blocks))
		return;
	if (heapam)
		so->heap_blocks = RelationGetNumberOfBlocks(heap);
	if (!off_ok || (heapam && blkno >= so->heap_blocks))
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("index \"%s\" is corrupted: an entry points to (%u,%u), outside its table",
						RelationGetRelationName(scan->indexRelation), blkno, off),
				 errhint("REINDEX the index.  simhash_index_check() reports what is wrong.")));
}

static void visit(IndexScanDesc scan, uint64 center, int radius, int lo, int hi,
				  uint64 *counts);

/* what gather_match() keeps, and where */
typedef struct GatherArg
{
	IndexScanDesc scan;
	int			lo;
	int			hi;
	uint64	   *counts;			/* count per distance instead of keeping */
} GatherArg;

/* A match of a run or list: keep it if inside every ball and ring. */
static void
gather_match(void *arg, ItemPointer tid, uint64 hash)
{
	GatherArg  *g = (GatherArg *) arg;
	IndexScanDesc scan = g->scan;
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	int			dist = pg_popcount64(hash ^ so->query);
	int			code = 0;

	for (int k = 0; k < scan->numberOfKeys; k++)
	{
		SimhashBall *ball = DatumGetSimhashBallP(scan->keyData[k].sk_argument);

		if (pg_popcount64(hash ^ ball->center) > key_radius(&scan->keyData[k]))
			return;
	}
	if (so->ordered && !so->order_null)
	{
		if (dist < g->lo || dist > g->hi)
			return;
		code = dist;
		if (g->counts)
		{
			g->counts[dist]++;
			return;
		}
	}
	else if (so->ordered)
		code = BATCH_NULL_DIST;
	check_tid(scan, tid);
	batch_add(&so->batch, ((uint64) code << 48) | simhash_tid_code(tid));
}

/*
 * Make the next batch the entries within radius of center that are inside
 * every ball of the keys, with their distance to `query` (when ordered);
 * lo..hi bounds that distance.
 */
static void
gather(IndexScanDesc scan, uint64 center, int radius, int lo, int hi)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	batch_begin(&so->batch);
	visit(scan, center, radius, lo, hi, NULL);
	batch_done(&so->batch);
}

/*
 * Pass every entry within radius of center, inside every ball of the keys
 * and lo..hi bits from the query, to gather_match(): kept in the batch, or
 * counted per distance into counts[65] when counts is not NULL.
 */
static void
visit(IndexScanDesc scan, uint64 center, int radius, int lo, int hi, uint64 *counts)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	GatherArg	arg = {scan, lo, hi, counts};
	SimhashMatches found = {gather_match, &arg};

	for (int i = 0; i < so->meta->nruns; i++)
	{
		if (simhash_run_is_format1(&so->meta->runs[i]))
			simhash_format1_search_run(scan->indexRelation, &so->blocks, &so->meta->runs[i],
									   center, radius, &found);
		else
			simhash_search_run(scan->indexRelation, &so->blocks, &so->meta->runs[i],
							   center, radius, &found);
	}
	for (int i = 0; i < so->meta->nlanes; i++)
	{
		simhash_search_list(scan->indexRelation, &so->meta->flushing[i], center, radius, &found);
		simhash_search_list(scan->indexRelation, &so->meta->pending[i], center, radius, &found);
	}
}

/* A match of the nulls list. */
static void
null_match(void *arg, ItemPointer tid, uint64 hash)
{
	IndexScanDesc scan = (IndexScanDesc) arg;
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;

	check_tid(scan, tid);
	batch_add(&so->batch, ((uint64) BATCH_NULL_DIST << 48) | simhash_tid_code(tid));
}

/* The rows whose key is NULL (key-less scans only). */
static void
null_batch(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	SimhashMatches found = {null_match, scan};

	batch_begin(&so->batch);
	/* every live entry is within 64 bits of anything */
	simhash_search_list(scan->indexRelation, &so->meta->nulls, 0, 64, &found);
	batch_done(&so->batch);
}

/* What the first slice of an ordered scan's tail holds, and its growth. */
#define SLICE_FIRST 64
#define SLICE_GROWTH 8

/*
 * The next slice of an ordered scan's tail: once probing a ring would read
 * whole trees, one pass counts the entries at each distance from the query,
 * and each later pass keeps only the rings from the next one on that hold
 * the slice's number of entries (64 first, eight times more each time, at
 * most what fits in work_mem).  A nearest-neighbour query with a small
 * LIMIT so reads the index two or three times and sorts a few entries,
 * where keeping every entry at once would sort (and spill) the whole index.
 * The counts only size the slices: the last slice reaches max_radius
 * whatever they say, so the rings read are the same as ring by ring.
 */
static void
next_slice(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	uint64		sum;
	int			hi;

	if (!so->tail)
	{
		memset(so->tail_counts, 0, sizeof(so->tail_counts));
		visit(scan, so->query, so->max_radius, so->ring, so->max_radius, so->tail_counts);
		so->tail = true;
		so->slice = SLICE_FIRST;
	}
	hi = so->ring;
	sum = so->tail_counts[hi];
	while (hi < so->max_radius && sum < so->slice)
		sum += so->tail_counts[++hi];
	gather(scan, so->query, so->max_radius, so->ring, hi);
	so->ring = hi + 1;
	so->slice = Min(so->slice * SLICE_GROWTH,
					Max((uint64) work_mem * 1024 / sizeof(uint64) / 2, SLICE_FIRST));
}

/*
 * The next batch; false when the scan is over.  Unordered scans have one
 * batch (plus the NULL keys when key-less).  Ordered scans read distance
 * rings: ring r holds the entries exactly r bits from the query; once
 * probing a ring would read whole trees anyway, the rest is read in slices
 * of several rings (next_slice()).  NULL keys come last (NULLS LAST).
 */
static bool
next_batch(IndexScanDesc scan)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	MemoryContext oldcxt = MemoryContextSwitchTo(so->cxt);
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
				if (key_radius(&scan->keyData[i]) == so->max_radius)
				{
					center = DatumGetSimhashBallP(scan->keyData[i].sk_argument)->center;
					break;
				}
			}
			gather(scan, center, so->max_radius, 0, 64);
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

		for (int i = 0; i < so->meta->nruns; i++)
			largest = Max(largest, so->meta->runs[i].nentries);
		if (so->tail || simhash_search_reads_all(&so->blocks, so->ring, largest))
			next_slice(scan);
		else
		{
			gather(scan, so->query, so->ring, so->ring, so->ring);
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
	if (!more)
		batch_end(&so->batch);
	MemoryContextSwitchTo(oldcxt);
	return more;
}

bool
simhash_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	int32		dist;

	while (!so->computed || !batch_next(&so->batch, &scan->xs_heaptid, &dist))
	{
		CHECK_FOR_INTERRUPTS();
		if (!next_batch(scan))
			return false;
	}
	scan->xs_recheck = so->recheck;

	/*
	 * The index returns no column (amcanreturn is NULL), so the planner
	 * chooses an index-only scan only when the query needs no column of the
	 * table at all (count(*), EXISTS): that scan reads nothing from the
	 * index tuple but needs one, so it gets a tuple whose one column is NULL.
	 */
	if (scan->xs_want_itup)
	{
		if (so->nothing == NULL)
		{
			MemoryContext old = MemoryContextSwitchTo(GetMemoryChunkContext(so));
			Datum		value = (Datum) 0;
			bool		isnull = true;

			so->nothing = index_form_tuple(RelationGetDescr(scan->indexRelation),
										   &value, &isnull);
			MemoryContextSwitchTo(old);
		}
		scan->xs_itup = so->nothing;
		scan->xs_itupdesc = RelationGetDescr(scan->indexRelation);
	}
	if (so->ordered)
	{
		scan->xs_orderbyvals[0] = Int32GetDatum(dist);
		scan->xs_orderbynulls[0] = (dist < 0);
		scan->xs_recheckorderby = false;
	}
	return true;
}

int64
simhash_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	SimhashScanOpaque so = (SimhashScanOpaque) scan->opaque;
	int64		total = 0;
	ItemPointerData tid;
	int32		dist;

	while (next_batch(scan))
	{
		while (batch_next(&so->batch, &tid, &dist))
		{
			tbm_add_tuples(tbm, &tid, 1, so->recheck);
			total++;
			if ((total & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
		}
	}
	return total;
}
