/*
 * dedup/citus_work.h
 *		What the dedup jobs on Citus distributed tables share (the design:
 *		citus.c): the running job and citus_work.c's services.  Calls go one
 *		way: citus.c (the hand-over) -> citus_jobs.c (the six jobs, declared
 *		in dedup.h) -> citus_work.c (what every job does: the search_path,
 *		SQL through SPI, work tables, checks, the repartitioned rows of the
 *		simhash search, simhash_groups' groups on the workers);
 *		citus_groups_into.c (simhash_groups_into) ->
 *		citus_work.c.  citus_worker.c holds the SQL functions that Citus
 *		runs on the workers; nothing here calls them but through SQL.
 */
#ifndef SIMHASH_DEDUP_CITUS_WORK_H
#define SIMHASH_DEDUP_CITUS_WORK_H

#include "dedup.h"

/*
 * A job running on the workers.  Every SQL statement it runs is built here
 * from identifiers (quoted), regclass values, numbers and the extension's
 * schema (quoted), never from text the caller passed; values of the caller
 * go in as typed $n parameters.
 */
typedef struct CitusJob
{
	const char *fname;			/* the job's name in messages */
	Oid			relid;
	const char *relation;		/* quoted, schema-qualified */
	const char *id_name;		/* the id column */
	const char *id_column;		/* the same, quoted */
	const char *ext;			/* the extension's schema, quoted */
	const char *nsp;			/* the relation's schema, quoted: the work
								 * tables' */
	Oid			nspoid;
	int			guc_level;		/* the GUC nest level of its search_path */
	DedupProgress progress;
} CitusJob;

/* ---- citus_work.c ---- */

/*
 * Start a job on in's relation (connected to SPI): search_path set to
 * pg_catalog, pg_temp until citus_job_end(), so that nothing another role
 * plants on the caller's path runs or is read.  ext_fn: a function of the
 * extension (its schema is the extension's).
 */
extern void citus_job_begin(CitusJob *job, const char *fname, Oid relid,
							const char *id_column, Oid ext_fn);
extern void citus_job_end(CitusJob *job);

/* Run sql (built as above) with typed parameters; returns SPI_processed. */
extern uint64 citus_exec(CitusJob *job, const char *sql, int nargs,
						 Oid *types, Datum *values, const char *nulls);

/* sql's rows into dest (parameters as citus_exec) */
extern uint64 citus_exec_into(CitusJob *job, const char *sql, DestReceiver *dest,
							  int nargs, Oid *types, Datum *values, const char *nulls);

/* The first column of sql's first row as an int64 (an error if none). */
extern int64 citus_exec_int64(CitusJob *job, const char *sql);

/*
 * A distributed work table simhash_part_<pid><suffix> in the relation's
 * schema, of one of the jobs' fixed shapes (kind), distributed by its first
 * column and co-located with colocate (NULL: Citus's default); returns its
 * quoted, qualified name.
 */
extern char *citus_work_table(CitusJob *job, const char *kind, const char *colocate);

/* An error if the id column has a NULL (unless declared NOT NULL). */
extern void citus_check_ids(CitusJob *job);

/*
 * The rows repartitioned by (table group, block) into a work table
 * (returned), with progress; *search: the query of their pairs (id_a,
 * id_b, distance), searched part by part on the workers.
 */
extern char *citus_parts(CitusJob *job, const char *hash_column,
						 const SimhashBlocks *b, char **search);

/*
 * Whether the relation is hash-distributed by the id column (then rows
 * found by id are found on their own shard).
 */
extern bool citus_distributed_by_id(CitusJob *job);

/*
 * simhash_groups' groups of more than one row (id, group_id), computed on
 * the workers into the distributed table target (its columns id,
 * group_id): the pairs kept there, connected groups by label propagation
 * (each row's label the least id among its own and its neighbours' labels,
 * round after round, until none changes), the leader linkage per connected
 * group on the shard holding the group's pairs (simhash_leader_groups).
 * Returns the rows written.
 */
extern uint64 citus_groups(CitusJob *job, const char *hash_column,
						   const SimhashBlocks *b, const char *target, bool leader);

#endif							/* SIMHASH_DEDUP_CITUS_WORK_H */
