/*
 * dedup/citus_worker.c
 *		The SQL functions that the dedup jobs on a Citus distributed table
 *		(citus_jobs.c, citus_groups_into.c) name in the queries Citus runs
 *		on the workers: the partition key and the search of a part of the
 *		simhash search (simhash_group_block, simhash_group_pairs), the
 *		leader linkage of one connected group's pairs
 *		(simhash_leader_groups) and a MinHash signature's parameters
 *		(minhash_params).  They are pure functions of their arguments,
 *		documented in the README's Reference; the design is in citus.c.
 */
#include "dedup.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "compat.h"
#include "core/minhash.h"

/* ---- the simhash search, part by part ---- */

/* checked blocks and max_distance arguments at positions ba and ka */
static void
citus_blocks(FunctionCallInfo fcinfo, int ba, int ka, SimhashBlocks *b)
{
	int32		blocks = PG_GETARG_INT32(ba);
	int32		max_distance = PG_GETARG_INT32(ka);

	simhash_blocks_init_checked(b, blocks, max_distance);
}

/* the table group argument at position ga, checked against b */
static int
citus_group(FunctionCallInfo fcinfo, int ga, const SimhashBlocks *b)
{
	int32		grp = PG_GETARG_INT32(ga);

	if (grp < 0 || grp > b->max_distance)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("table group %d is out of range", grp),
				 errdetail("With max_distance %d the groups are 0 .. %d.",
						   b->max_distance, b->max_distance)));
	return grp;
}

/*
 * simhash_group_block(h, grp, blocks, max_distance) → bigint: the bits of
 * block grp of h (the others zero).  Two fingerprints are compared by table
 * group grp only if these agree, so rows partitioned by this value (and
 * grp) can be searched part by part, on different nodes.
 */
PG_FUNCTION_INFO_V1(simhash_group_block);
Datum
simhash_group_block(PG_FUNCTION_ARGS)
{
	simhash64	h = PG_GETARG_SIMHASH64(0);
	SimhashBlocks b;
	int			grp;

	citus_blocks(fcinfo, 2, 3, &b);
	grp = citus_group(fcinfo, 1, &b);
	PG_RETURN_INT64((int64) (h & b.mask[grp]));
}

/*
 * simhash_group_pairs(ids bigint[], hashes simhash64[], grp, blocks,
 * max_distance) → TABLE (id_a, id_b, distance): the pairs among these rows
 * that table group grp reports (those whose lowest table is in the group;
 * equal fingerprints by group 0 only), ids ordered.  Over the parts of a
 * partition by (grp, simhash_group_block()), the union is every pair within
 * max_distance exactly once: what simhash_pairs() finds in one search.
 */
PG_FUNCTION_INFO_V1(simhash_group_pairs);
Datum
simhash_group_pairs(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ArrayType  *ida = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *ha = PG_GETARG_ARRAYTYPE_P(1);
	SimhashBlocks b;
	int			grp,
				lo,
				hi;
	Datum	   *ids,
			   *hs;
	bool	   *idnull,
			   *hnull;
	int			nid,
				nh;
	size_t		n = 0;
	uint64	   *hash,
			   *key;
	SimhashRowPairs *r;
	SimhashRowPair *pairs;
	void	   *work;

	citus_blocks(fcinfo, 3, 4, &b);
	grp = citus_group(fcinfo, 2, &b);
	InitMaterializedSRF(fcinfo, 0);

	deconstruct_array(ida, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &ids, &idnull, &nid);
	deconstruct_array(ha, ARR_ELEMTYPE(ha), 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &hs, &hnull, &nh);
	if (nid != nh)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("simhash_group_pairs: %d ids but %d fingerprints", nid, nh)));
	if ((size_t) nh >= (size_t) PG_UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("simhash_group_pairs: too many rows to search at once")));

	/* rows with a fingerprint; keys are positions in ids */
	hash = palloc(sizeof(uint64) * Max(nh, 1));
	key = palloc(sizeof(uint64) * Max(nh, 1));
	for (int i = 0; i < nh; i++)
	{
		if (idnull[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("simhash_group_pairs: a NULL id")));
		if (hnull[i])
			continue;
		hash[n] = DatumGetSimhash64(hs[i]);
		key[n] = (uint64) i;
		n++;
	}
	if (n < 2)
		return (Datum) 0;

	simhash_table_group(&b, grp, &lo, &hi);
	r = palloc(sizeof(SimhashRowPairs));
	pairs = palloc(sizeof(SimhashRowPair) * 1024);
	work = MemoryContextAllocHuge(CurrentMemoryContext, SIMHASH_ROW_PAIRS_WORK(n));
	simhash_row_pairs_begin(r, &b, hash, key, n, work, lo, hi, grp == 0);
	while (!simhash_row_pairs_done(r))
	{
		size_t		np;

		CHECK_FOR_INTERRUPTS();
		np = simhash_row_pairs_next(r, pairs, 1024);
		for (size_t i = 0; i < np; i++)
		{
			int64		a = DatumGetInt64(ids[pairs[i].a]);
			int64		c = DatumGetInt64(ids[pairs[i].b]);
			Datum		values[3];
			bool		nulls[3] = {false, false, false};

			values[0] = Int64GetDatum(Min(a, c));
			values[1] = Int64GetDatum(Max(a, c));
			values[2] = Int32GetDatum(pairs[i].distance);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	return (Datum) 0;
}

/* ---- the MinHash jobs' parameter check ---- */

/*
 * minhash_params(sig) → text: a signature's parameters, as the jobs'
 * errors print them ("n_gram=9 ... permutations=128 ..."), NULL for an
 * empty signature.  The distinct values over a table tell whether its
 * signatures can be compared, as minhash_pairs checks row by row.
 */
PG_FUNCTION_INFO_V1(minhash_params);
Datum
minhash_params(PG_FUNCTION_ARGS)
{
	struct varlena *v = PG_DETOAST_DATUM_PACKED(PG_GETARG_DATUM(0));
	MinhashParams p;
	bool		empty;
	const char *problem;
	char		buf[160];

	problem = minhash_read_header((const uint8_t *) VARDATA_ANY(v), VARSIZE_ANY_EXHDR(v),
								  &p, &empty);
	if (problem)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid minhash signature: %s", problem)));
	if (empty)
		PG_RETURN_NULL();
	minhash_format_params(buf, sizeof(buf), &p);
	PG_RETURN_TEXT_P(cstring_to_text(buf));
}

/* ---- the leader linkage of a group's pairs, on the worker holding them ---- */

/* a pair of simhash_leader_groups() */
typedef struct LeaderPair
{
	int64		a;				/* the smaller id */
	int64		b;
	int32		distance;
} LeaderPair;

/* pairs in the order the leader linkage visits them: b, distance, a */
static int
leader_pair_cmp(const void *x, const void *y)
{
	const LeaderPair *p = x;
	const LeaderPair *q = y;

	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	if (p->distance != q->distance)
		return p->distance < q->distance ? -1 : 1;
	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	return 0;
}

static int
int64_cmp(const void *x, const void *y)
{
	int64		a = *(const int64 *) x;
	int64		b = *(const int64 *) y;

	return a < b ? -1 : a > b ? 1 : 0;
}

/* the position of id among the n sorted ids (it is there) */
static size_t
leader_position(const int64 *ids, size_t n, int64 id)
{
	const int64 *found = bsearch(&id, ids, n, sizeof(int64), int64_cmp);

	Assert(found != NULL);
	return (size_t) (found - ids);
}

/*
 * simhash_leader_groups(id_a bigint[], id_b bigint[], distance integer[])
 * → TABLE (id, group_id): the leader linkage of simhash_groups over these
 * pairs (id_a < id_b; every pair among their rows, as a connected group's
 * are): rows in id order join the nearest earlier leader among the rows
 * they pair with (ties: the least id), else lead.  The rows of the groups
 * of more than one row, each once; group_id is its leader's id (a leader
 * without followers is a group of one row).  A group's pairs alone decide its
 * leaders, so groups can be linked apart, each on the node holding it.
 */
PG_FUNCTION_INFO_V1(simhash_leader_groups);
Datum
simhash_leader_groups(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ArrayType  *arrays[3];
	Datum	   *values[3];
	bool	   *nulls[3];
	int			counts[3];
	LeaderPair *pairs;
	int64	   *ids,
			   *leader;
	bool	   *follower,
			   *led;
	size_t		n,
				m = 0;

	for (int i = 0; i < 3; i++)
	{
		arrays[i] = PG_GETARG_ARRAYTYPE_P(i);
		if (i < 2)
			deconstruct_array(arrays[i], INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
							  &values[i], &nulls[i], &counts[i]);
		else
			deconstruct_array(arrays[i], INT4OID, 4, true, TYPALIGN_INT,
							  &values[i], &nulls[i], &counts[i]);
	}
	if (counts[0] != counts[1] || counts[0] != counts[2])
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("simhash_leader_groups: %d, %d and %d elements", counts[0],
						counts[1], counts[2])));
	InitMaterializedSRF(fcinfo, 0);
	n = (size_t) counts[0];
	if (n == 0)
		return (Datum) 0;

	pairs = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(LeaderPair) * n);
	ids = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * 2 * n);
	for (size_t i = 0; i < n; i++)
	{
		if (nulls[0][i] || nulls[1][i] || nulls[2][i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("simhash_leader_groups: a NULL element")));
		pairs[i].a = DatumGetInt64(values[0][i]);
		pairs[i].b = DatumGetInt64(values[1][i]);
		pairs[i].distance = DatumGetInt32(values[2][i]);
		if (pairs[i].a >= pairs[i].b)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("simhash_leader_groups: id_a " INT64_FORMAT " is not less than id_b " INT64_FORMAT,
							pairs[i].a, pairs[i].b)));
		ids[2 * i] = pairs[i].a;
		ids[2 * i + 1] = pairs[i].b;
	}
	qsort(pairs, n, sizeof(LeaderPair), leader_pair_cmp);
	qsort(ids, 2 * n, sizeof(int64), int64_cmp);
	for (size_t i = 0; i < 2 * n; i++)
		if (m == 0 || ids[m - 1] != ids[i])
			ids[m++] = ids[i];
	leader = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * m);
	follower = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(bool) * m);
	memset(follower, 0, sizeof(bool) * m);

	/*
	 * Each b in ascending order: its first pair (by distance, then a) whose
	 * a leads makes it a follower of a.  Every a is less than its b, so its
	 * own place was decided before.
	 */
	for (size_t i = 0; i < n;)
	{
		int64		b = pairs[i].b;
		size_t		j;

		CHECK_FOR_INTERRUPTS();
		for (j = i; j < n && pairs[j].b == b; j++)
		{
			if (!follower[leader_position(ids, m, pairs[j].a)])
			{
				size_t		pb = leader_position(ids, m, b);

				follower[pb] = true;
				leader[pb] = pairs[j].a;
				break;
			}
		}
		while (j < n && pairs[j].b == b)
			j++;
		i = j;
	}
	/* leaders without followers are groups of one row: not reported */
	led = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(bool) * m);
	memset(led, 0, sizeof(bool) * m);
	for (size_t k = 0; k < m; k++)
		if (follower[k])
			led[leader_position(ids, m, leader[k])] = true;
	for (size_t k = 0; k < m; k++)
	{
		Datum		out[2];
		bool		outnull[2] = {false, false};

		if (!follower[k] && !led[k])
			continue;
		out[0] = Int64GetDatum(ids[k]);
		out[1] = Int64GetDatum(follower[k] ? leader[k] : ids[k]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, out, outnull);
	}
	return (Datum) 0;
}
