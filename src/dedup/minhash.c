/*
 * minhash.c
 *		The MinHash dedup jobs, minhash_pairs() and minhash_groups(), on the
 *		shared-key machinery of keys.c: the keys are a signature column's LSH
 *		band keys, and each candidate pair (sharing a band) is kept if its
 *		estimated Jaccard similarity reaches the threshold.
 *
 * The signatures wait in a temporary file (DedupIds) for that check.  When
 * threshold > 1 - bands/permutations every pair above it shares a band
 * (fewer than bands slots differ), so the result is exact on the estimate;
 * below, it is LSH's probability.
 */
#include "dedup.h"

#include "funcapi.h"
#include "utils/memutils.h"

#include "core/minhash.h"
#include "minhash/signature.h"

PG_FUNCTION_INFO_V1(minhash_pairs);
PG_FUNCTION_INFO_V1(minhash_pairs_typed);
PG_FUNCTION_INFO_V1(minhash_groups);
PG_FUNCTION_INFO_V1(minhash_groups_typed);

typedef struct MinhashJob
{
	KeysState	st;
	DedupIds   *sigs;			/* every row's signature (empty if NULL) */
	MinhashBands mb;			/* bands, and the signatures' parameters */
	double		threshold;
	int64	   *keys;
	/* output */
	ReturnSetInfo *rsinfo;
	DedupUnion *uf;
	MemoryContext tmpcxt;
	uint64		checked;
	uint64		kept;
} MinhashJob;

void
dedup_minhash_bands_init(MinhashBands *mb, const char *fname, const char *column,
						 int bands)
{
	memset(mb, 0, sizeof(*mb));
	mb->fname = fname;
	mb->column = column;
	mb->bands = bands;
}

bool
dedup_minhash_check(MinhashBands *mb, const MinhashSig *sig)
{
	if (sig->empty)
		return false;			/* similar to nothing */
	if (!mb->have_params)
	{
		if (mb->bands > sig->p.permutations)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s: bands (%d) must not exceed the signatures' permutations (%d)",
							mb->fname, mb->bands, sig->p.permutations)));
		mb->params = sig->p;
		mb->have_params = true;
		mb->rows = sig->p.permutations / mb->bands;
	}
	else if (!minhash_params_equal(&sig->p, &mb->params))
	{
		char		da[160],
					db[160];

		minhash_format_params(da, sizeof(da), &mb->params);
		minhash_format_params(db, sizeof(db), &sig->p);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s: the signatures of column \"%s\" have different parameters",
						mb->fname, mb->column),
				 errdetail("One has %s, another %s.", da, db)));
	}
	return true;
}

/* a row's id, and its signature (a placeholder if NULL) by row number */
static void
minhash_keep(MinhashJob *job, Datum id, bool value_isnull, Datum sig)
{
	dedup_ids_append(job->st.ids, id);
	if (value_isnull)
	{
		/* a placeholder, so that signatures are found by row number */
		bytea	   *none = palloc(VARHDRSZ);

		SET_VARSIZE(none, VARHDRSZ);
		dedup_ids_append(job->sigs, PointerGetDatum(none));
		return;
	}
	dedup_ids_append(job->sigs, sig);
}

/* a row of a MinHash job: its id and signature kept, its band keys sorted */
static void
minhash_row(void *arg, uint64 row, Datum id, bool value_isnull, Datum value)
{
	MinhashJob *job = (MinhashJob *) arg;
	MinhashSig	sig;
	struct varlena *v = NULL;

	if (!value_isnull)
		v = PG_DETOAST_DATUM_PACKED(value);
	minhash_keep(job, id, value_isnull, PointerGetDatum(v));
	if (value_isnull)
		return;
	minhash_sig_read(PointerGetDatum(v), &sig);
	if (!dedup_minhash_check(&job->mb, &sig))
		return;
	if (job->keys == NULL)		/* bands is checked now; in the job's context */
		job->keys = MemoryContextAlloc(GetMemoryChunkContext(job->sigs),
									   sizeof(int64) * job->mb.bands);
	minhash_band_keys(sig.slots, job->mb.bands, job->mb.rows, job->keys);
	for (int b = 0; b < job->mb.bands; b++)
		dedup_keys_add(&job->st, job->keys[b], row);
}

/*
 * a row a parallel worker read (keys_parallel.c): its band keys computed
 * there, its parameters checked against the other participants' here
 */
static void
minhash_replay(void *arg, uint64 row, Datum id, bool value_isnull,
			   const int64 *keys, int nkeys, Datum sig)
{
	MinhashJob *job = (MinhashJob *) arg;
	MinhashSig	s;

	minhash_keep(job, id, value_isnull, sig);
	if (value_isnull)
		return;
	minhash_sig_read(sig, &s);
	if (!dedup_minhash_check(&job->mb, &s))
		return;
	for (int b = 0; b < nkeys; b++)
		dedup_keys_add(&job->st, keys[b], row);
}

/* the estimate of two rows' signatures */
static double
job_estimate(MinhashJob *job, uint64 ra, uint64 rb)
{
	MinhashSig	a,
				b;

	job->checked++;
	minhash_sig_read(dedup_ids_fetch(job->sigs, ra), &a);
	minhash_sig_read(dedup_ids_fetch(job->sigs, rb), &b);
	if (a.empty || b.empty)
		return 0.0;
	return (double) minhash_equal_slots(a.slots, b.slots, a.p.permutations) / a.p.permutations;
}

/* minhash_pairs: a candidate pair out if its estimate reaches the threshold */
static void
minhash_emit_pair(void *arg, uint64 ra, uint64 rb, int shared)
{
	MinhashJob *job = (MinhashJob *) arg;
	MemoryContext old = MemoryContextSwitchTo(job->tmpcxt);
	double		est = job_estimate(job, ra, rb);

	if (est >= job->threshold)
	{
		job->kept++;
		dedup_put_pair(job->st.in, job->rsinfo, dedup_ids_fetch(job->st.ids, ra),
					   dedup_ids_fetch(job->st.ids, rb), Float8GetDatum(est));
	}
	MemoryContextSwitchTo(old);
	MemoryContextReset(job->tmpcxt);
}

/* minhash_groups: a candidate pair joined if its estimate reaches the threshold */
static void
minhash_union_pair(void *arg, uint64 ra, uint64 rb, int shared)
{
	MinhashJob *job = (MinhashJob *) arg;
	MemoryContext old = MemoryContextSwitchTo(job->tmpcxt);

	if (job_estimate(job, ra, rb) >= job->threshold)
	{
		job->kept++;
		simhash_union_pair(job->uf, ra, rb);
	}
	MemoryContextSwitchTo(old);
	MemoryContextReset(job->tmpcxt);
}

/* arguments: relation, id_column, sig_column, [id_type], threshold, bands, max_key_rows */
static Datum
minhash_job(FunctionCallInfo fcinfo, bool groups, int id_type_arg, int threshold_arg)
{
	const char *fname = groups ? "minhash_groups" : "minhash_pairs";
	DedupInput	in;
	MinhashJob	job;
	DedupKeysRead kr;
	DedupProgress progress;
	MemoryContext jobcxt,
				old;
	int			max_key_rows,
				sort_kb;
	uint64		nrows;

	dedup_input_init_columns(&in, fcinfo, fname, id_type_arg, "sig_column",
							 dedup_extension_type(fcinfo, "minhash_signature"),
							 "Compute signatures into a minhash_signature column, for example with minhash(text).");
	if (PG_ARGISNULL(threshold_arg))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s: threshold must not be NULL", fname)));
	memset(&job, 0, sizeof(job));
	job.threshold = PG_GETARG_FLOAT8(threshold_arg);
	if (!(job.threshold > 0.0 && job.threshold <= 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s: threshold must be in (0, 1], not %g", fname, job.threshold)));
	dedup_minhash_bands_init(&job.mb, fname, in.hash_column,
							 dedup_int_arg(fcinfo, threshold_arg + 1, "bands", fname, 1));
	max_key_rows = dedup_max_key_rows_arg(fcinfo, threshold_arg + 2, fname);
	InitMaterializedSRF(fcinfo, 0);
	if (dedup_citus_handover(&in, fcinfo, id_type_arg))
		return (Datum) 0;
	job.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	jobcxt = AllocSetContextCreate(CurrentMemoryContext, "minhash job", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(jobcxt);
	dedup_progress_start(&progress, fname);
	sort_kb = dedup_keys_begin(&job.st, &in);
	job.sigs = dedup_ids_create(dedup_extension_type(fcinfo, "minhash_signature"));
	job.tmpcxt = AllocSetContextCreate(jobcxt, "minhash job batch", ALLOCSET_DEFAULT_SIZES);


	/* workers compute the band keys where the input allows, else SPI */
	kr.kind = DEDUP_KEYS_MINHASH;
	kr.bands = job.mb.bands;
	kr.row_fn = minhash_row;
	kr.replay_fn = minhash_replay;
	kr.arg = &job;
	if (!dedup_keys_read_parallel(&in, &kr, &nrows, &progress))
		nrows = dedup_read(&in, minhash_row, &job);

	if (!groups)
		dedup_keys_run(&job.st, 1, max_key_rows, sort_kb, NULL, minhash_emit_pair, &job, &progress);
	else
	{
		Size		ufb;

		job.uf = dedup_keys_union_create(&in, nrows, &ufb);
		dedup_keys_run(&job.st, 1, max_key_rows, sort_kb, NULL, minhash_union_pair, &job, &progress);
		dedup_union_output(job.uf, &in, job.st.ids, job.rsinfo, in.budget - ufb);
	}
	dedup_progress(&progress, "checked " UINT64_FORMAT " candidate pairs, kept " UINT64_FORMAT,
				   job.checked, job.kept);
	dedup_ids_close(job.st.ids);
	dedup_ids_close(job.sigs);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(jobcxt);
	return (Datum) 0;
}

/* minhash_pairs(relation, id_column, sig_column, threshold, bands, max_key_rows) */
Datum
minhash_pairs(PG_FUNCTION_ARGS)
{
	return minhash_job(fcinfo, false, -1, 3);
}

/* minhash_pairs(relation, id_column, sig_column, id_type, threshold, bands, max_key_rows) */
Datum
minhash_pairs_typed(PG_FUNCTION_ARGS)
{
	return minhash_job(fcinfo, false, 3, 4);
}

/* minhash_groups(relation, id_column, sig_column, threshold, bands, max_key_rows) */
Datum
minhash_groups(PG_FUNCTION_ARGS)
{
	return minhash_job(fcinfo, true, -1, 3);
}

/* minhash_groups(relation, id_column, sig_column, id_type, threshold, bands, max_key_rows) */
Datum
minhash_groups_typed(PG_FUNCTION_ARGS)
{
	return minhash_job(fcinfo, true, 3, 4);
}
