/*
 * keys_parallel.c
 *		The table read of the shared-key and MinHash jobs (keys.c,
 *		minhash.c) by a parallel table scan, with the per-row work in the
 *		workers.  See dedup.h.
 *
 * Design.  The keys jobs' values are by reference (bigint[] keys,
 * minhash_signature), so read_parallel.c, which ships (id, value) as two
 * words, does not serve them; and the costly part of their read is not the
 * heap access but what each row then needs: detoasting the value and
 * unpacking its keys, or reading a signature's header, checking its
 * parameters and hashing its band keys.  Here the workers do that: the
 * leader puts a parallel table scan (table_parallelscan_initialize() with
 * its active snapshot, the one the SPI query would use) in a dynamic
 * shared memory segment; the workers and the leader take blocks from it.
 * The leader passes its own rows to the job's serial row callback; each
 * worker writes, per row, a record to its file of a SharedFileSet:
 *
 *		KeysRecord (id, number of keys, signature length or -1 for NULL)
 *		int64 keys[nkeys]
 *		the signature's bytes (MinHash only, as detoasted)
 *
 * and after the workers have finished the leader replays the files through
 * the job's replay callback, which appends the id (and the signature) by
 * row number and puts the ready keys into the (key, row) sort.  Rows are
 * numbered in the order the leader passes them on: another order than the
 * SPI read's, which no result depends on (pairs are a set, reported as
 * (least id, other id); groups are a union-find named by least ids; the
 * keys skipped for max_key_rows are counted per key).
 *
 * Checks.  Which inputs: dedup_read_by_scan() (read_parallel.c), the same
 * rules as the simhash jobs' parallel read (a plain table or populated
 * materialized view, no inheritance children, no row security for the
 * user, SELECT on both columns, by-value ids of the column's type or
 * integers widened to bigint, no Citus), and at least
 * simhash.parallel_min_rows rows (estimated).  Everything else is read
 * through SPI as before.  A NULL id fails the job with the SPI read's
 * error in the participant that meets it; a MinHash worker checks its
 * signatures' parameters among themselves and against bands
 * (dedup_minhash_check(), the serial job's check and errors), and the
 * leader checks every replayed signature's parameters against the rows
 * before it, so signatures of different parameters fail the job wherever
 * they are.  Records are checked for sane lengths when read back.
 *
 * Memory: a row's detoasted value and keys in a per-row context (workers
 * and leader), the files' buffers; the keys go to the job's sort, which
 * holds them as before.
 */
#include "dedup.h"

#include "access/parallel.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "storage/sharedfileset.h"
#include "storage/shm_toc.h"
#include "utils/array.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#define KEYS_MAX_WORKERS 64

/* What every participant shares */
typedef struct KeysReadShared
{
	DedupScanShared base;		/* columns, the workers' files, names */
	DedupKeysKind kind;
	int			bands;			/* MinHash */
	char		value_column[NAMEDATALEN];	/* for messages */
} KeysReadShared;

/* A row as a worker writes it; nkeys keys and siglen bytes follow */
typedef struct KeysRecord
{
	uint64		id;
	int32		nkeys;
	int32		siglen;			/* -1: the value is NULL */
} KeysRecord;

/* A participant's scan: where its rows go, and its scratch */
typedef struct KeysScan
{
	KeysReadShared *sh;
	/* the leader: the job's callback */
	const DedupKeysRead *job;
	uint64		nrows;
	DedupProgress *progress;
	/* a worker: its file, and the MinHash checks of its signatures */
	BufFile    *file;
	MinhashBands mb;
	MemoryContext rowcxt;		/* reset after each row */
	int64	   *keys;			/* room for maxkeys keys (in the scan's context) */
	int			maxkeys;
} KeysScan;

PGDLLEXPORT void dedup_keys_parallel_main(dsm_segment *seg, shm_toc *toc);

/* room for n keys in ks->keys */
static void
keys_room(KeysScan *ks, int n)
{
	if (n <= ks->maxkeys)
		return;
	ks->maxkeys = Max(n, Max(ks->maxkeys * 2, 64));
	if (ks->keys)
		pfree(ks->keys);
	ks->keys = MemoryContextAllocHuge(GetMemoryChunkContext(ks), sizeof(int64) * ks->maxkeys);
}

/* A worker's row: unpack or compute its keys and write its record. */
static void
worker_row(KeysScan *ks, Datum id, bool value_isnull, Datum value)
{
	KeysRecord rec;
	struct varlena *sig = NULL;

	rec.id = (uint64) id;
	rec.nkeys = 0;
	rec.siglen = -1;
	if (!value_isnull && ks->sh->kind == DEDUP_KEYS_ARRAY)
	{
		ArrayType  *arr = DatumGetArrayTypeP(value);
		Datum	   *elems;
		bool	   *nulls;
		int			n;

		deconstruct_array(arr, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
						  &elems, &nulls, &n);
		keys_room(ks, n);
		for (int i = 0; i < n; i++)
			if (!nulls[i])
				ks->keys[rec.nkeys++] = DatumGetInt64(elems[i]);
		rec.siglen = 0;
	}
	else if (!value_isnull)
	{
		MinhashSig	s;

		sig = PG_DETOAST_DATUM_PACKED(value);
		rec.siglen = VARSIZE_ANY(sig);
		minhash_sig_read(PointerGetDatum(sig), &s);
		if (dedup_minhash_check(&ks->mb, &s))
		{
			keys_room(ks, ks->mb.bands);
			minhash_band_keys(s.slots, ks->mb.bands, ks->mb.rows, ks->keys);
			rec.nkeys = ks->mb.bands;
		}
	}
	BufFileWrite(ks->file, &rec, sizeof(rec));
	if (rec.nkeys > 0)
		BufFileWrite(ks->file, ks->keys, sizeof(int64) * rec.nkeys);
	if (sig != NULL)
		BufFileWrite(ks->file, sig, rec.siglen);
}

/*
 * Scan this participant's share of the table (blocks taken from the
 * parallel scan): the leader passes every row to the job, a worker writes
 * its records.
 */
static void
scan_share(KeysScan *ks, Relation rel, ParallelTableScanDesc pscan)
{
	KeysReadShared *sh = ks->sh;
	TableScanDesc scan = table_beginscan_parallel(rel, pscan);
	TupleTableSlot *slot = table_slot_create(rel, NULL);

	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		bool		id_isnull,
					value_isnull;
		Datum		id = slot_getattr(slot, sh->base.id_attnum, &id_isnull);
		Datum		value = slot_getattr(slot, sh->base.value_attnum, &value_isnull);
		MemoryContext old;

		CHECK_FOR_INTERRUPTS();
		if (id_isnull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s: column \"%s\" of relation %s contains NULL",
							sh->base.fname, sh->base.id_column, sh->base.relname),
					 errdetail("Every row needs an id to be reported by.")));
		if (sh->base.widen)
			id = Int64GetDatum(sh->base.id_column_type == INT2OID ?
							   (int64) DatumGetInt16(id) : (int64) DatumGetInt32(id));
		old = MemoryContextSwitchTo(ks->rowcxt);
		if (ks->file != NULL)
			worker_row(ks, id, value_isnull, value);
		else
		{
			ks->job->row_fn(ks->job->arg, ks->nrows++, id, value_isnull, value);
			if ((ks->nrows & 0xFFFF) == 0)
				dedup_progress(ks->progress, "read " UINT64_FORMAT " rows in the leader",
							   ks->nrows);
		}
		MemoryContextSwitchTo(old);
		MemoryContextReset(ks->rowcxt);
	}
	ExecDropSingleTupleTableSlot(slot);
	table_endscan(scan);
}

/* a worker's file of rows */
static void
worker_file_name(char *name, size_t size, int worker)
{
	snprintf(name, size, "simhash_keys.%d", worker);
}

/* The entry point of a worker (by name, through the ParallelContext) */
void
dedup_keys_parallel_main(dsm_segment *seg, shm_toc *toc)
{
	KeysReadShared *sh = shm_toc_lookup(toc, DEDUP_SCAN_KEY_SHARED, false);
	ParallelTableScanDesc pscan = shm_toc_lookup(toc, DEDUP_SCAN_KEY_SCAN, false);
	KeysScan   *ks = palloc0(sizeof(KeysScan));
	char		name[MAXPGPATH];
	Relation	rel;

	simhash_test_hold_point();

	/* the leader holds AccessShareLock: the lock group grants it here */
	rel = table_open(sh->base.relid, AccessShareLock);
	SharedFileSetAttach(&sh->base.fileset, seg);
	worker_file_name(name, sizeof(name), ParallelWorkerNumber);
	ks->sh = sh;
	ks->file = BufFileCreateFileSet(&sh->base.fileset.fs, name);
	ks->rowcxt = AllocSetContextCreate(CurrentMemoryContext, "simhash keys row",
									   ALLOCSET_DEFAULT_SIZES);
	dedup_minhash_bands_init(&ks->mb, sh->base.fname, sh->value_column, Max(sh->bands, 1));
	scan_share(ks, rel, pscan);
	BufFileClose(ks->file);
	table_close(rel, AccessShareLock);
}

/* read len bytes of a worker's file; false at its end (before a record) */
static bool
file_read(BufFile *file, void *p, size_t len, bool eof_ok)
{
	size_t		got = BufFileRead(file, p, len);

	if (got == 0 && eof_ok)
		return false;
	if (got != len)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read a temporary file of simhash keys: read only %zu of %zu bytes",
						got, len)));
	return true;
}

/* Replay the rows of worker i's file through the job's callback. */
static void
replay_worker_rows(KeysScan *ks, int worker)
{
	char		name[MAXPGPATH];
	BufFile    *file;
	KeysRecord	rec;
	char	   *sig = NULL;
	int32		maxsig = 0;

	worker_file_name(name, sizeof(name), worker);
	file = BufFileOpenFileSet(&ks->sh->base.fileset.fs, name, O_RDONLY, false);
	while (file_read(file, &rec, sizeof(rec), true))
	{
		MemoryContext old;

		CHECK_FOR_INTERRUPTS();
		if (rec.nkeys < 0 || (Size) rec.nkeys > MaxAllocHugeSize / sizeof(int64) ||
			rec.siglen < -1 || (rec.siglen > 0 && (Size) rec.siglen > MaxAllocSize) ||
			(ks->sh->kind == DEDUP_KEYS_MINHASH && rec.siglen >= 0 && rec.siglen < 1))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("invalid record in a temporary file of simhash keys: %d keys, signature of %d bytes",
							rec.nkeys, rec.siglen)));
		keys_room(ks, rec.nkeys);
		if (rec.nkeys > 0)
			file_read(file, ks->keys, sizeof(int64) * rec.nkeys, false);
		if (ks->sh->kind == DEDUP_KEYS_MINHASH && rec.siglen > 0)
		{
			if (rec.siglen > maxsig)
			{
				if (sig)
					pfree(sig);
				maxsig = Max(rec.siglen, 256);
				sig = MemoryContextAlloc(GetMemoryChunkContext(ks), maxsig);
			}
			file_read(file, sig, rec.siglen, false);
			if ((int32) VARSIZE_ANY(sig) != rec.siglen)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("invalid signature in a temporary file of simhash keys")));
		}
		old = MemoryContextSwitchTo(ks->rowcxt);
		ks->job->replay_fn(ks->job->arg, ks->nrows++, (Datum) rec.id, rec.siglen < 0,
						   ks->keys, rec.nkeys,
						   rec.siglen > 0 && sig ? PointerGetDatum(sig) : (Datum) 0);
		MemoryContextSwitchTo(old);
		MemoryContextReset(ks->rowcxt);
	}
	BufFileClose(file);
	if (sig)
		pfree(sig);
}

bool
dedup_keys_read_parallel(DedupInput *in, const DedupKeysRead *job, uint64 *nrows,
						 DedupProgress *progress)
{
	Relation	rel;
	bool		widen;
	int			nworkers;
	DedupScanShared *base;
	ParallelContext *pcxt;
	KeysReadShared *sh;
	ParallelTableScanDesc pscan;
	KeysScan   *ks;

	/* the lock taken by dedup_input_init_columns() */
	rel = table_open(in->relid, NoLock);
	if (!dedup_read_by_scan(in, rel, &widen) ||
		(nworkers = simhash_scan_workers(rel, in->reltuples, KEYS_MAX_WORKERS)) <= 0)
	{
		table_close(rel, NoLock);
		return false;
	}

	pcxt = dedup_scan_context(in, rel, widen, "dedup_keys_parallel_main", nworkers,
							  sizeof(KeysReadShared), &base, &pscan);
	if (pcxt == NULL)
	{
		table_close(rel, NoLock);
		return false;
	}
	sh = (KeysReadShared *) base;
	sh->kind = job->kind;
	sh->bands = job->bands;
	strlcpy(sh->value_column, in->hash_column, sizeof(sh->value_column));

	LaunchParallelWorkers(pcxt);
	dedup_progress(progress, "reading %s, parallel workers: %d (they compute the keys)",
				   in->relname, pcxt->nworkers_launched);

	/*
	 * the leader's share (unless parallel_leader_participation is off) goes
	 * to the job at once, then the workers'
	 */
	ks = palloc0(sizeof(KeysScan));
	ks->sh = sh;
	ks->job = job;
	ks->progress = progress;
	ks->rowcxt = AllocSetContextCreate(CurrentMemoryContext, "simhash keys row",
									   ALLOCSET_DEFAULT_SIZES);
	if (parallel_leader_participation || pcxt->nworkers_launched == 0)
		scan_share(ks, rel, pscan);
	WaitForParallelWorkersToFinish(pcxt);
	for (int i = 0; i < pcxt->nworkers_launched; i++)
		replay_worker_rows(ks, i);

	DestroyParallelContext(pcxt);
	ExitParallelMode();
	table_close(rel, NoLock);
	*nrows = ks->nrows;
	dedup_progress(progress, "read " UINT64_FORMAT " rows", ks->nrows);
	MemoryContextDelete(ks->rowcxt);
	if (ks->keys)
		pfree(ks->keys);
	pfree(ks);
	return true;
}
