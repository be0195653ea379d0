/*
 * dedup.h
 *		The table-scale dedup jobs: simhash_pairs() (all near-duplicate
 *		pairs of a table, with its ids) and simhash_groups() (a group id for
 *		every row).  Their parts:
 *		- read.c: the job's input (relation, columns, id type,
 *		  parameters, checked), one read of the table through SPI with a
 *		  DestReceiver (the caller's privileges, a parallel plan when the
 *		  planner picks one), the ids by row number in a temporary file
 *		  (DedupIds) (progress NOTICEs: shared/progress.h);
 *		- read_parallel.c: the same read by a parallel table scan in
 *		  parallel workers and the leader, for the inputs a heap scan reads
 *		  as the SPI query would;
 *		- the pair search within maintenance_work_mem, which the radius
 *		  join shares, is shared/pair_search.h;
 *		- pairs.c, groups.c: the SQL functions (the union-find of groups
 *		  is core/union_find.c);
 *		- keys.c, minhash.c: the shared-key jobs and the MinHash jobs;
 *		  keys_sort.c: their sorts and the pairing of each key's rows;
 *		  minhash_bands.c: the signatures' parameters checked row by row;
 *		  keys_parallel.c: their read in parallel workers, which compute
 *		  the rows' keys; keys_split.c: their key runs paired by key
 *		  partition across parallel workers;
 *		- citus.c: the Citus design and the hand-over of a job on a
 *		  distributed table; citus_jobs.c: the jobs on the workers,
 *		  citus_work.c (citus_work.h): what each of them does,
 *		  citus_groups_into.c: simhash_groups_into(), citus_worker.c: the
 *		  SQL functions the workers run; citus_catalog.c: what the Citus
 *		  catalog says of a relation, simhash.citus_jobs and the NOTICE of
 *		  a read on this node; find_all.c: simhash_find_all().
 */
#ifndef SIMHASH_DEDUP_H
#define SIMHASH_DEDUP_H

#include "simhash.h"

#include "datatype/timestamp.h"
#include "nodes/execnodes.h"
#include "storage/buffile.h"
#include "tcop/dest.h"
#include "utils/sortsupport.h"
#include "utils/tuplesort.h"

#include "core/blocks.h"
#include "core/rowpairs.h"
#include "core/union_find.h"
#include "minhash/signature.h"
#include "shared/pair_search.h"
#include "shared/progress.h"
#include "shared/workers.h"

/* ---- read.c ---- */

/* A job's checked input */
typedef struct DedupInput
{
	const char *fname;			/* the SQL function, for messages */
	Oid			relid;
	char	   *relname;		/* quoted, schema-qualified */
	char	   *id_column;
	char	   *hash_column;	/* the value column: fingerprints, text... */
	AttrNumber	id_attnum;		/* the columns' numbers */
	AttrNumber	value_attnum;
	Oid			id_column_type; /* the id column's own type */
	int16		value_typlen;	/* the value column's type */
	bool		value_typbyval;
	Oid			id_type;		/* the ids' type (the id_type argument's) */
	int16		id_typlen;
	bool		id_typbyval;
	Oid			id_collation;
	SortSupportData id_order;	/* the id type's default ordering */
	Oid			id_lt_opr;
	SimhashBlocks blocks;		/* blocks and max_distance */
	Size		budget;			/* bytes: maintenance_work_mem */
	double		reltuples;		/* the planner's estimate; -1 if unknown */
	const char *citus_pull;		/* why a Citus distributed table is read
								 * here rather than by the job on the
								 * workers (NULL: not asked) */
} DedupInput;

/*
 * Check the arguments relation, id_column and the value column (arguments
 * 0 .. 2; the value column, named by value_arg in errors, must be of type
 * value_type, or a domain over it) and id_type (at id_type_arg; -1 for
 * bigint ids), and fill *in but its blocks.  Errors name fname.
 */
extern void dedup_input_init_columns(DedupInput *in, FunctionCallInfo fcinfo,
									 const char *fname, int id_type_arg,
									 const char *value_arg, Oid value_type,
									 const char *value_hint);

/*
 * The simhash jobs: the above with a simhash64 column (hash_column), and
 * max_distance and blocks at the given positions.
 */
extern void dedup_input_init(DedupInput *in, FunctionCallInfo fcinfo,
							 const char *fname, int id_type_arg,
							 int max_distance_arg, int blocks_arg);

/* a type of this extension, by name (in the calling function's schema) */
extern Oid	dedup_extension_type(FunctionCallInfo fcinfo, const char *name);

/* True if ids fit in a uint64 key themselves (by value, at most 8 bytes). */
static inline bool
dedup_ids_inline(const DedupInput *in)
{
	return in->id_typbyval && in->id_typlen <= (int) sizeof(uint64);
}

/* ids a < b (by the id type's ordering)? */
static inline int
dedup_id_compare(DedupInput *in, Datum a, Datum b)
{
	return ApplySortComparator(a, false, b, false, &in->id_order);
}

/*
 * Put (least id, other id, third) into the result: the pairs' output of
 * every pair job.
 */
extern void dedup_put_pair(DedupInput *in, ReturnSetInfo *rsinfo, Datum a,
						   Datum b, Datum third);

/*
 * Called for every row read, numbered from 0 in reading order: its id
 * (never NULL: a NULL id is an error) and value (e.g. its fingerprint).
 * Runs in a memory context reset after each row.
 */
typedef void (*DedupRowFn) (void *arg, uint64 row, Datum id,
							bool value_isnull, Datum value);

/* Read the table once; returns the number of rows. */
extern uint64 dedup_read(DedupInput *in, DedupRowFn fn, void *arg);

/*
 * citus_catalog.c: is Citus installed; the shard count of a Citus
 * distributed table, else -1 (connected to SPI); the NOTICE of a read of a
 * distributed table on this node; simhash.citus_jobs
 */
extern bool dedup_citus_installed(void);
extern int64 dedup_citus_shard_count(Oid relid, const char *fname);
extern void dedup_citus_notice(DedupInput *in);
extern bool simhash_citus_jobs;
extern void dedup_citus_define_gucs(void);

/*
 * citus.c: run the job on the workers (dedup_citus_run, with the call's
 * arguments) if in's relation is a Citus distributed table and
 * simhash.citus_jobs allows it, putting its rows into the call's result
 * (InitMaterializedSRF done); true if it did.  Otherwise records in
 * in->citus_pull why not, for the NOTICE of the read.
 */
extern bool dedup_citus_handover(DedupInput *in, FunctionCallInfo fcinfo,
								 int id_type_arg);

/*
 * citus_jobs.c: run the plain job of in (in->fname; the call's arguments in
 * fcinfo, the id type's at id_type_arg or -1) on the workers, its rows
 * (bigint ids) into dest.  The caller is connected to SPI.
 */
extern void dedup_citus_run(DedupInput *in, FunctionCallInfo fcinfo, int id_type_arg,
							DestReceiver *dest);

/*
 * The ids of all rows by row number, in a temporary file: fixed-size ids
 * are found by position, variable-length ones from a mark every
 * DEDUP_IDS_MARK rows.  Reading in row order is sequential.
 */
#define DEDUP_IDS_MARK 16

typedef struct DedupIds
{
	BufFile    *file;
	int16		typlen;
	bool		typbyval;
	uint64		n;				/* ids appended */
	uint64		size;			/* bytes written */
	uint64	   *marks;			/* byte position of rows 0, MARK, 2 MARK.. */
	uint64		maxmarks;
	uint64		cursor;			/* the row at the file position, or
								 * PG_UINT64_MAX if unknown */
} DedupIds;

extern DedupIds *dedup_ids_create(Oid typid);
extern void dedup_ids_append(DedupIds *ids, Datum id);

/*
 * Row row's id; a by-reference id is palloc'd in CurrentMemoryContext.  No
 * more appends after the first fetch.
 */
extern Datum dedup_ids_fetch(DedupIds *ids, uint64 row);
extern void dedup_ids_close(DedupIds *ids);

/*
 * read_parallel.c: the read by a table scan, for inputs a heap scan can
 * read as SPI would (a plain table readable by the user without row
 * security, by-value ids of the column's type or integers widened to
 * bigint, a by-value value column): a parallel scan in workers and the
 * leader when the table has at least simhash.parallel_min_rows rows
 * (estimated) and workers are allowed, else a scan in the leader alone.
 * Calls fn for every row in the leader, as dedup_read() does, in another
 * order, and sets *nrows; false, having read nothing, if the input is for
 * SPI.
 */
extern bool dedup_read_parallel(DedupInput *in, DedupRowFn fn, void *arg,
								uint64 *nrows, DedupProgress *progress);

/*
 * Can a heap scan read in's rows and ids exactly as the SPI query would
 * (the rules above but the value column's, which is the caller's)?  Sets
 * *widen when integer ids are read as bigint.
 */
extern bool dedup_read_by_scan(DedupInput *in, Relation rel, bool *widen);

/*
 * What every participant of a parallel read shares (read_parallel.c; the
 * first member of keys_parallel.c's shared state): the columns, the
 * workers' files and the names for messages.
 */
typedef struct DedupScanShared
{
	Oid			relid;
	AttrNumber	id_attnum;
	AttrNumber	value_attnum;
	Oid			id_column_type; /* INT2OID / INT4OID: widened to bigint */
	bool		widen;
	SharedFileSet fileset;		/* the workers' rows */
	char		fname[NAMEDATALEN];
	char		id_column[NAMEDATALEN];
	char		relname[2 * (2 * NAMEDATALEN + 2) + 2];
} DedupScanShared;

/* shm_toc keys of a parallel read's segment */
#define DEDUP_SCAN_KEY_SHARED	UINT64CONST(0x5348520000000001)
#define DEDUP_SCAN_KEY_SCAN		UINT64CONST(0x5348520000000002)

struct ParallelContext;
struct ParallelTableScanDescData;
extern struct ParallelContext *dedup_scan_context(DedupInput *in, Relation rel, bool widen,
												  const char *worker_main, int nworkers,
												  Size shared_size, DedupScanShared **sh,
												  struct ParallelTableScanDescData **pscan);

/* ---- groups.c: connected components over row numbers ---- */

typedef SimhashUnion DedupUnion;

/*
 * A union-find over nrows rows (core/union_find.h; join rows with
 * simhash_union_pair()), allocated in the current context: 4 bytes per row
 * plus a bit (simhash_union_bytes()), which the caller must have checked
 * against its budget.  An error past SIMHASH_UNION_MAX_ROWS rows.
 */
extern DedupUnion *dedup_union_create(uint64 nrows);

/*
 * Emit (id, least id of its group) for every row into rsinfo's tuplestore,
 * reading ids from ids (every row's, by row number).  budget: bytes it may
 * use beyond the union-find (about 16 bytes per group of two or more rows);
 * an error if too small.  Frees u.
 */
extern void dedup_union_output(DedupUnion *u, DedupInput *in, DedupIds *ids,
							   ReturnSetInfo *rsinfo, Size budget);

/* ---- keys_sort.c: the sorts of the shared-key and MinHash jobs ---- */

/* a sort of (int8, int8) rows by both columns */
typedef struct PairSort
{
	Tuplesortstate *sort;
	TupleDesc	desc;
	TupleTableSlot *put;
	TupleTableSlot *get;
} PairSort;

/* sorts of (int8, int8) pairs: begin (work_mem_kb), put, get, end */
extern void dedup_pair_sort_begin(PairSort *ps, int work_mem_kb);
extern void dedup_pair_sort_put(PairSort *ps, int64 a, int64 b);
extern bool dedup_pair_sort_get(PairSort *ps, int64 *a, int64 *b);
extern void dedup_pair_sort_end(PairSort *ps);

/* Called with two rows of a key's run */
typedef void (*DedupRunPairFn) (void *arg, int64 a, int64 b);

/*
 * Perform a (key, row) sort and pass the pairs of each key's rows to fn
 * (adjacent: only consecutive rows); keys of more than max_key_rows rows
 * are skipped and counted (the return value).  Does not end the sort.
 */
extern uint64 dedup_keys_pair_runs(PairSort *keys, int max_key_rows, bool adjacent,
								   DedupRunPairFn fn, void *arg);

/* ---- keys.c: the shared-key machinery (shared_key_* and minhash_* jobs) ---- */

typedef struct KeysSplit KeysSplit;

/* A keys job: every row's id, and the (key, row) sort or split */
typedef struct KeysState
{
	DedupInput *in;
	DedupIds   *ids;
	PairSort	keys;			/* (key, row), unless split */
	KeysSplit  *split;			/* (key, row) by key partition (keys_split.c) */
	uint64		nkeys;
} KeysState;

/*
 * keys_split.c: the (key, row) pairs split by a hash of the key into
 * partitions (temporary files of a SharedFileSet), each sorted and paired
 * by one participant of a parallel context.  create: NULL when the job is
 * not for workers (max_parallel_maintenance_workers, simhash.parallel_min_rows);
 * run: every run's pairs to fn in the leader, returns the keys skipped.
 */
extern KeysSplit *dedup_keys_split_create(DedupInput *in);
extern void dedup_keys_split_add(KeysSplit *ks, int64 key, uint64 row);
extern uint64 dedup_keys_split_run(KeysSplit *ks, int max_key_rows, bool adjacent,
								   int work_mem_kb, DedupRunPairFn fn, void *arg,
								   DedupProgress *progress);

/* Called with each pair of rows sharing keys, and how many they share */
typedef void (*KeyPairFn) (void *arg, uint64 a, uint64 b, int shared);

/*
 * Start a keys job: the ids file and the (key, row) sort, which gets a
 * quarter of maintenance_work_mem (as does the pairs' sort); returns that
 * in kB.
 */
extern int	dedup_keys_begin(KeysState *st, DedupInput *in);
/* A key of a row */
extern void dedup_keys_add(KeysState *st, int64 key, uint64 row);

/*
 * The pairs of rows sharing at least min_shared keys, to fn; or, with uf
 * and min_shared = 1, unite the rows sharing a key directly.  Keys shared
 * by more than max_key_rows rows are skipped (with a NOTICE).  Ends the
 * (key, row) sort.
 */
extern void dedup_keys_run(KeysState *st, int min_shared, int max_key_rows,
						   int work_mem_kb, DedupUnion *uf, KeyPairFn fn,
						   void *arg, DedupProgress *progress);

/* Argument checks: an int at least min (not NULL); max_key_rows */
extern int	dedup_int_arg(FunctionCallInfo fcinfo, int arg, const char *name,
						  const char *fname, int min);
extern int	dedup_max_key_rows_arg(FunctionCallInfo fcinfo, int arg, const char *fname);

/* A union-find for nrows rows if it fits in half of the budget; *bytes */
extern DedupUnion *dedup_keys_union_create(DedupInput *in, uint64 nrows, Size *bytes);

/* ---- minhash_bands.c: band keys of signatures, checked row by row ---- */

typedef struct MinhashBands
{
	const char *fname;			/* for messages */
	const char *column;
	int			bands;
	int			rows;			/* slots per band (from the first signature) */
	bool		have_params;	/* params: every signature's */
	MinhashParams params;
} MinhashBands;

extern void dedup_minhash_bands_init(MinhashBands *mb, const char *fname,
									 const char *column, int bands);

/*
 * Check a signature's parameters against the others' (the first one sets
 * them, and bands must not exceed its permutations); false if it is empty
 * (similar to nothing: no keys).
 */
extern bool dedup_minhash_check(MinhashBands *mb, const MinhashSig *sig);

/* ---- keys_parallel.c: the keys jobs' read in parallel workers ---- */

typedef enum DedupKeysKind
{
	DEDUP_KEYS_ARRAY,			/* bigint[]: its non-NULL elements */
	DEDUP_KEYS_MINHASH			/* minhash_signature: its band keys */
} DedupKeysKind;

/*
 * A row a worker read, replayed in the leader: its id, its keys (already
 * computed), and for MinHash its signature (a varlena, maybe with a short
 * header; 0 for arrays and NULL values).
 */
typedef void (*DedupKeysReplayFn) (void *arg, uint64 row, Datum id,
								   bool value_isnull, const int64 *keys,
								   int nkeys, Datum sig);

/* What a keys job gives the parallel read */
typedef struct DedupKeysRead
{
	DedupKeysKind kind;
	int			bands;			/* MinHash */
	DedupRowFn	row_fn;			/* the leader's own rows (the serial callback) */
	DedupKeysReplayFn replay_fn;	/* the workers' rows */
	void	   *arg;
} DedupKeysRead;

/*
 * Read the table by a parallel table scan where dedup_read_by_scan() allows
 * and simhash.parallel_min_rows is reached: workers detoast the values and
 * compute their keys (MinHash: check the signatures and compute the band
 * keys), the leader replays them; rows numbered as read.  False, having
 * read nothing, if not: then dedup_read().
 */
extern bool dedup_keys_read_parallel(DedupInput *in, const DedupKeysRead *job,
									 uint64 *nrows, DedupProgress *progress);

#endif							/* SIMHASH_DEDUP_H */
