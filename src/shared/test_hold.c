/*-------------------------------------------------------------------------
 *
 * test_hold.c
 *		A hold point for tests: the parallel workers of simhash's jobs and
 *		index builds wait at their start while a test holds an advisory lock.
 *
 * The setting simhash.test_hold_workers (superuser only, default 0: off)
 * names an advisory-lock key.  When it is not 0, every parallel worker of
 * simhash_pairs, simhash_groups, shared_key_pairs, shared_key_groups and
 * CREATE INDEX ... USING simhash (workers inherit their leader's settings)
 * takes that key's advisory lock in share mode, and releases it, before it
 * does any work.  A test holds pg_advisory_lock(key) in another session,
 * starts the job, waits until the job's workers wait on the lock
 * (pg_stat_activity: wait_event 'advisory'), terminates or cancels them,
 * then unlocks: the workers are seen at a known point, whatever the load.
 * Off, the hold point costs one comparison per worker.
 *
 * The setting simhash.test_hold_phases names a base key: a job or an index
 * build entering a phase, or an index write at one of its hold points
 * (index/am.h), waits on base + that number (simhash_test_hold_phase()).
 *
 *-------------------------------------------------------------------------
 */
#include "simhash.h"

#include "miscadmin.h"
#include "storage/lock.h"
#include "utils/guc.h"

static int	simhash_test_hold_workers = 0;
static int	simhash_test_hold_phases = 0;

/* Called from _PG_init(): the hold point's setting */
void
simhash_test_hold_init(void)
{
	DefineCustomIntVariable("simhash.test_hold_workers",
							"Advisory-lock key on which the parallel workers of simhash jobs wait at their start (tests only; 0: off).",
							NULL,
							&simhash_test_hold_workers,
							0, 0, INT_MAX,
							PGC_SUSET, GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL,
							NULL, NULL, NULL);
	DefineCustomIntVariable("simhash.test_hold_phases",
							"Advisory-lock key base: a job or index build entering phase p waits on key base + p (tests only; 0: off).",
							NULL,
							&simhash_test_hold_phases,
							0, 0, INT_MAX - 16,
							PGC_SUSET, GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL,
							NULL, NULL, NULL);
}

/* Wait while another session holds pg_advisory_lock(key). */
static void
wait_for_advisory_lock(int key)
{
	LOCKTAG		tag;

	/* the key of pg_advisory_lock(bigint) */
	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, 0, (uint32) key, 1);
	(void) LockAcquire(&tag, ShareLock, false, false);
	LockRelease(&tag, ShareLock, false);
}

/* In a worker's entry: wait while a test holds the configured advisory lock. */
void
simhash_test_hold_point(void)
{
	if (simhash_test_hold_workers != 0)
		wait_for_advisory_lock(simhash_test_hold_workers);
}

/*
 * Where a job (progress.c) or an index build enters phase (1..16), or an
 * index write reaches a point a test must see (index/am.h: a flush with its
 * run written, VACUUM with dead bits set): wait while a test holds the
 * advisory lock simhash.test_hold_phases + phase, so that it can read the
 * progress views, or cancel the statement, at a known point.  A test holds
 * the keys of every phase it wants to see, and releases them one by one.
 */
void
simhash_test_hold_phase(int phase)
{
	if (simhash_test_hold_phases != 0 && phase > 0 && phase <= 16)
		wait_for_advisory_lock(simhash_test_hold_phases + phase);
}
