/*
 * aggregate.c
 *		simhash_agg(text) and simhash_agg(text, real): the bit vote as an
 *		aggregate over feature rows.  The state is the exact weighted vote
 *		(vote.c), so partial states from parallel workers combine to the
 *		same bits as a serial run, in any order.
 */
#include "simhash.h"

#include "utils/builtins.h"

#include "core/vote.h"
#include "text/text.h"

PG_FUNCTION_INFO_V1(simhash_agg_transfn);
PG_FUNCTION_INFO_V1(simhash_agg_weighted_transfn);
PG_FUNCTION_INFO_V1(simhash_agg_combinefn);
PG_FUNCTION_INFO_V1(simhash_agg_serialfn);
PG_FUNCTION_INFO_V1(simhash_agg_deserialfn);
PG_FUNCTION_INFO_V1(simhash_agg_finalfn);

/* the aggregate's memory context; an error outside an aggregate */
static MemoryContext
agg_context(FunctionCallInfo fcinfo, const char *fn)
{
	MemoryContext aggcontext;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "%s called in non-aggregate context", fn);
	return aggcontext;
}

/* a new transition state (a weighted vote) in aggcontext */
static SimhashWeightedVote *
new_state(MemoryContext aggcontext)
{
	SimhashWeightedVote *state = MemoryContextAlloc(aggcontext, sizeof(SimhashWeightedVote));

	simhash_wvote_init(state);
	return state;
}

/* the transition: add argument 1's feature hash with weight */
static Datum
add_feature(FunctionCallInfo fcinfo, double weight)
{
	MemoryContext aggcontext = agg_context(fcinfo, "simhash_agg_transfn");
	SimhashWeightedVote *state = PG_ARGISNULL(0) ? NULL :
		(SimhashWeightedVote *) PG_GETARG_POINTER(0);
	text	   *feature = PG_GETARG_TEXT_PP(1);

	if (state == NULL)
		state = new_state(aggcontext);
	simhash_wvote_add(state,
					  simhash_text_hash(VARDATA_ANY(feature), VARSIZE_ANY_EXHDR(feature)),
					  simhash_weight_quantise(weight));
	PG_RETURN_POINTER(state);
}

Datum
simhash_agg_transfn(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(1))
	{
		agg_context(fcinfo, "simhash_agg_transfn");
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_POINTER(PG_GETARG_POINTER(0));
	}
	return add_feature(fcinfo, 1.0);
}

Datum
simhash_agg_weighted_transfn(PG_FUNCTION_ARGS)
{
	float4		w;

	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
	{
		agg_context(fcinfo, "simhash_agg_transfn");
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_POINTER(PG_GETARG_POINTER(0));
	}
	w = PG_GETARG_FLOAT4(2);
	if (!simhash_weight_valid(w))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid weight %g", (double) w),
				 errdetail("Weights must be finite and between 0 and %.0f.",
						   SIMHASH_MAX_WEIGHT)));
	return add_feature(fcinfo, w);
}

Datum
simhash_agg_combinefn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext = agg_context(fcinfo, "simhash_agg_combinefn");
	SimhashWeightedVote *a = PG_ARGISNULL(0) ? NULL : (SimhashWeightedVote *) PG_GETARG_POINTER(0);
	SimhashWeightedVote *b = PG_ARGISNULL(1) ? NULL : (SimhashWeightedVote *) PG_GETARG_POINTER(1);

	if (b == NULL)
	{
		if (a == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(a);
	}
	if (a == NULL)
		a = new_state(aggcontext);
	simhash_wvote_merge(a, b);
	PG_RETURN_POINTER(a);
}

/* The state between processes of one server: its bytes as they are. */
Datum
simhash_agg_serialfn(PG_FUNCTION_ARGS)
{
	SimhashWeightedVote *state = (SimhashWeightedVote *) PG_GETARG_POINTER(0);
	bytea	   *result = palloc(VARHDRSZ + sizeof(SimhashWeightedVote));

	agg_context(fcinfo, "simhash_agg_serialfn");
	SET_VARSIZE(result, VARHDRSZ + sizeof(SimhashWeightedVote));
	memcpy(VARDATA(result), state, sizeof(SimhashWeightedVote));
	PG_RETURN_BYTEA_P(result);
}

Datum
simhash_agg_deserialfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext = agg_context(fcinfo, "simhash_agg_deserialfn");
	bytea	   *data = PG_GETARG_BYTEA_PP(0);
	SimhashWeightedVote *state;

	if (VARSIZE_ANY_EXHDR(data) != sizeof(SimhashWeightedVote))
		elog(ERROR, "invalid simhash_agg state of %zu bytes",
			 (size_t) VARSIZE_ANY_EXHDR(data));
	state = MemoryContextAlloc(aggcontext, sizeof(SimhashWeightedVote));
	memcpy(state, VARDATA_ANY(data), sizeof(SimhashWeightedVote));
	PG_RETURN_POINTER(state);
}

/* No feature rows (or only NULLs): NULL, as for sum() */
Datum
simhash_agg_finalfn(PG_FUNCTION_ARGS)
{
	SimhashWeightedVote *state;

	agg_context(fcinfo, "simhash_agg_finalfn");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	state = (SimhashWeightedVote *) PG_GETARG_POINTER(0);
	if (simhash_wvote_overflowed(state))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("total feature weight is too large")));
	PG_RETURN_SIMHASH64(simhash_wvote_result(state));
}

/*
 * simhash_agg(text, double precision) and simhash_agg(text,
 * numeric).  The weight is rounded to real first, exactly as the implicit
 * cast to real did when only simhash_agg(text, real) existed, so a call
 * that now resolves to one of these (a numeric or integer weight) gives the
 * same fingerprint as before, and w::float8 gives what w::real gives.
 */
static Datum
weighted_transfn_as_real(FunctionCallInfo fcinfo, float4 w)
{
	fcinfo->args[2].value = Float4GetDatum(w);
	return simhash_agg_weighted_transfn(fcinfo);
}

PG_FUNCTION_INFO_V1(simhash_agg_float8_transfn);
PG_FUNCTION_INFO_V1(simhash_agg_numeric_transfn);

Datum
simhash_agg_float8_transfn(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		return simhash_agg_weighted_transfn(fcinfo);
	return weighted_transfn_as_real(fcinfo, (float4) PG_GETARG_FLOAT8(2));
}

Datum
simhash_agg_numeric_transfn(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		return simhash_agg_weighted_transfn(fcinfo);
	return weighted_transfn_as_real(fcinfo,
									DatumGetFloat4(DirectFunctionCall1(numeric_float4,
																	   PG_GETARG_DATUM(2))));
}
