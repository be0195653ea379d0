/*
 * progress.c
 *		Progress NOTICEs of the long jobs, at most every
 *		simhash.progress_interval seconds (defined in _PG_init), and the
 *		phase clock that logs a phase's wall and CPU time at DEBUG1.
 */
#include "shared/progress.h"

#include <time.h>

#include "access/parallel.h"
#include "utils/timestamp.h"

int			simhash_progress_interval = 10;

/* Start reporting the progress of the function fname (now is the last report) */
void
dedup_progress_start(DedupProgress *p, const char *fname)
{
	p->fname = fname;
	p->last = GetCurrentTimestamp();
}

/* A NOTICE "fname: message" if the interval has passed since the last one */
void
dedup_progress(DedupProgress *p, const char *fmt,...)
{
	TimestampTz now;
	va_list		args;
	char		buf[256];

	if (simhash_progress_interval < 0)
		return;
	now = GetCurrentTimestamp();
	if (simhash_progress_interval > 0 &&
		!TimestampDifferenceExceeds(p->last, now, simhash_progress_interval * 1000))
		return;
	p->last = now;
	va_start(args, fmt);
	vsnprintf(buf, sizeof(buf), fmt, args);
	va_end(args);
	ereport(NOTICE, (errmsg("%s: %s", p->fname, buf)));
}

/* the wall and thread CPU clocks in ms */
static void
clock_now(DedupClock *c)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	c->wall = ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	c->cpu = ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

/* Start a phase clock (only when DEBUG1 is logged) */
void
dedup_clock_start(DedupClock *c)
{
	if (message_level_is_interesting(DEBUG1))
		clock_now(c);
}

/* Log the phase just ended at DEBUG1 and restart the clock */
void
dedup_phase(DedupClock *c, const char *what)
{
	DedupClock	now;

	if (!message_level_is_interesting(DEBUG1))
		return;
	clock_now(&now);
	elog(DEBUG1, "simhash phase %s %s: wall %.1f ms, cpu %.1f ms",
		 IsParallelWorker() ? "worker" : "leader", what,
		 now.wall - c->wall, now.cpu - c->cpu);
	*c = now;
}

