/*
 * progress.h
 *		Progress NOTICEs of the long jobs (simhash.progress_interval) and
 *		the phase clock that logs a phase's wall and CPU time at DEBUG1.
 */
#ifndef SIMHASH_SHARED_PROGRESS_H
#define SIMHASH_SHARED_PROGRESS_H

#include "postgres.h"

#include "datatype/timestamp.h"

/* Progress NOTICEs, at most every simhash.progress_interval seconds */
typedef struct DedupProgress
{
	const char *fname;
	TimestampTz last;
} DedupProgress;

extern int	simhash_progress_interval;
extern void dedup_progress_start(DedupProgress *p, const char *fname);
extern void dedup_progress(DedupProgress *p, const char *fmt,...) pg_attribute_printf(2, 3);

/*
 * A phase clock: wall and this thread's CPU time since the last mark.  At
 * DEBUG1, dedup_phase() logs both for the phase just ended ("simhash phase
 * <who> <what>: wall W ms, cpu C ms") and restarts the clock; the
 * parallel jobs mark their phases so that their serial share can be read
 * from the server log (SET client_min_messages = debug1 shows them).
 */
typedef struct DedupClock
{
	double		wall;			/* ms */
	double		cpu;			/* ms */
} DedupClock;
extern void dedup_clock_start(DedupClock *c);
extern void dedup_phase(DedupClock *c, const char *what);

#endif							/* SIMHASH_SHARED_PROGRESS_H */
