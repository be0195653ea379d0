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
 *-------------------------------------------------------------------------
 */
#include "simhash.h"

#include "miscadmin.h"
#include "storage/lock.h"
#include "utils/guc.h"

static int	simhash_test_hold_workers = 0;

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
}

/* In a worker's entry: wait while a test holds the configured advisory lock. */
void
simhash_test_hold_point(void)
{
	LOCKTAG		tag;

	if (simhash_test_hold_workers == 0)
		return;
	/* the key of pg_advisory_lock(bigint) */
	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, 0, (uint32) simhash_test_hold_workers, 1);
	(void) LockAcquire(&tag, ShareLock, false, false);
	LockRelease(&tag, ShareLock, false);
}
