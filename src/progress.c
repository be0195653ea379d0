/*-------------------------------------------------------------------------
 *
 * progress.c
 *		Progress of simhash's long jobs (simhash_pairs, simhash_groups),
 *		visible to other sessions in the view simhash_progress: job,
 *		relation, phase, rows done and total, pairs found, start time.
 *
 * The counters live in the running backend's progress slot, the shared
 * memory (PgBackendStatus.st_progress_param) that the pg_stat_progress_*
 * views read, so that the view works on every supported version without
 * shared_preload_libraries or a DSM registry.  PostgreSQL knows only its
 * own progress commands, so a job keeps the slot's command at
 * PROGRESS_COMMAND_INVALID (no pg_stat_progress_* view lists it) and marks
 * its parameters with a tag; simhash_progress_info() reads every backend's
 * slot and keeps the tagged ones.  A job started while the backend reports
 * another command (say, a job called inside CREATE INDEX) reports nothing,
 * so as not to overwrite that command's progress.  The slot is cleared when
 * the job ends, and by a transaction callback when it ends in an error.
 * Like pg_stat_progress_*, it needs track_activities (on by default), and
 * a session sees the counters of its own role's jobs, or of all with the
 * privileges of pg_read_all_stats.
 *
 *-------------------------------------------------------------------------
 */
#include "simhash.h"

#include "access/xact.h"
#include "catalog/pg_authid.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/acl.h"
#include "utils/backend_progress.h"
#include "utils/backend_status.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "compat.h"

PG_FUNCTION_INFO_V1(simhash_progress_info);

/* the slot's parameters while a job reports (the tag marks them as ours) */
#define PROGRESS_TAG		0
#define PROGRESS_JOB		1
#define PROGRESS_PHASE		2
#define PROGRESS_ROWS_DONE	3
#define PROGRESS_ROWS_TOTAL 4
#define PROGRESS_PAIRS		5
#define PROGRESS_STARTED	6
#define PROGRESS_NPARAMS	7

/* "simhash" in ASCII, in the tag parameter */
#define PROGRESS_TAG_VALUE	INT64CONST(0x73696d68617368)

static const char *const job_names[] = {
	[SIMHASH_JOB_PAIRS] = "simhash_pairs",
	[SIMHASH_JOB_GROUPS] = "simhash_groups",
};

static const char *const phase_names[] = {
	[SIMHASH_PHASE_READING] = "reading rows",
	[SIMHASH_PHASE_SEARCHING] = "searching pairs",
	[SIMHASH_PHASE_GROUPING] = "grouping",
};

static bool reporting = false;
static int64 pairs_found = 0;
static bool callback_registered = false;

/* Clear the slot of a job that ended in an error. */
static void
progress_xact_callback(XactEvent event, void *arg)
{
	if (reporting && (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT))
		simhash_progress_end();
}

static void
progress_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						  SubTransactionId parentSubid, void *arg)
{
	if (reporting && event == SUBXACT_EVENT_ABORT_SUB)
		simhash_progress_end();
}

/* A job starts on relid: its slot shows job, no phase yet, the start time. */
void
simhash_progress_begin(SimhashJob job, Oid relid)
{
	const int	index[] = {PROGRESS_TAG, PROGRESS_JOB, PROGRESS_STARTED};
	int64		val[3];

	if (reporting || IsParallelWorker() || !pgstat_track_activities ||
		MyBEEntry == NULL || MyBEEntry->st_progress_command != PROGRESS_COMMAND_INVALID)
		return;
	if (!callback_registered)
	{
		RegisterXactCallback(progress_xact_callback, NULL);
		RegisterSubXactCallback(progress_subxact_callback, NULL);
		callback_registered = true;
	}
	pgstat_progress_start_command(PROGRESS_COMMAND_INVALID, relid);
	val[0] = PROGRESS_TAG_VALUE;
	val[1] = job;
	val[2] = GetCurrentTimestamp();
	pgstat_progress_update_multi_param(3, index, val);
	pairs_found = 0;
	reporting = true;
}

/* The job enters phase (and a test may hold it there: test_hold.c). */
void
simhash_progress_phase(SimhashPhase phase)
{
	if (reporting)
		pgstat_progress_update_param(PROGRESS_PHASE, phase);
	simhash_test_hold_phase(phase);
}

/* Rows read so far, of total (-1: total unknown, left as it was). */
void
simhash_progress_rows(int64 done, int64 total)
{
	if (!reporting)
		return;
	if (total >= 0)
	{
		const int	index[] = {PROGRESS_ROWS_DONE, PROGRESS_ROWS_TOTAL};
		int64		val[] = {done, total};

		pgstat_progress_update_multi_param(2, index, val);
	}
	else
		pgstat_progress_update_param(PROGRESS_ROWS_DONE, done);
}

/* Pairs found so far. */
void
simhash_progress_pairs(int64 pairs)
{
	pairs_found = pairs;
	if (reporting)
		pgstat_progress_update_param(PROGRESS_PAIRS, pairs);
}

/* more pairs found (by a search that does not know the job's total) */
void
simhash_progress_add_pairs(int64 more)
{
	simhash_progress_pairs(pairs_found + more);
}

/* The job is over: the slot is empty again. */
void
simhash_progress_end(void)
{
	if (!reporting)
		return;
	reporting = false;
	pgstat_progress_start_command(PROGRESS_COMMAND_INVALID, InvalidOid);
}

/* one row of the view per backend whose slot a job has tagged */
Datum
simhash_progress_info(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			nbackends;
	bool		read_all = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);

	InitMaterializedSRF(fcinfo, 0);
	nbackends = pgstat_fetch_stat_numbackends();
	for (int i = 1; i <= nbackends; i++)
	{
		LocalPgBackendStatus *local = simhash_local_beentry(i);
		PgBackendStatus *be;
		Datum		values[8];
		bool		nulls[8] = {0};
		int64		job,
					phase;

		if (local == NULL)
			continue;
		be = &local->backendStatus;
		if (be->st_progress_command != PROGRESS_COMMAND_INVALID ||
			be->st_progress_param[PROGRESS_TAG] != PROGRESS_TAG_VALUE)
			continue;
		if (!read_all && !has_privs_of_role(GetUserId(), be->st_userid))
			continue;
		job = be->st_progress_param[PROGRESS_JOB];
		phase = be->st_progress_param[PROGRESS_PHASE];
		values[0] = Int32GetDatum(be->st_procpid);
		if (job >= 0 && job < lengthof(job_names) && job_names[job])
			values[1] = CStringGetTextDatum(job_names[job]);
		else
			nulls[1] = true;
		if (OidIsValid(be->st_progress_command_target))
			values[2] = ObjectIdGetDatum(be->st_progress_command_target);
		else
			nulls[2] = true;
		if (phase > 0 && phase < lengthof(phase_names) && phase_names[phase])
			values[3] = CStringGetTextDatum(phase_names[phase]);
		else
			values[3] = CStringGetTextDatum("starting");
		values[4] = Int64GetDatum(be->st_progress_param[PROGRESS_ROWS_DONE]);
		values[5] = Int64GetDatum(be->st_progress_param[PROGRESS_ROWS_TOTAL]);
		values[6] = Int64GetDatum(be->st_progress_param[PROGRESS_PAIRS]);
		values[7] = TimestampTzGetDatum(be->st_progress_param[PROGRESS_STARTED]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
