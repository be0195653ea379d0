/*
 * dedup/minhash_bands.c
 *		The parameters of the MinHash jobs' band keys: every signature of
 *		the column is checked against the others (the first one sets
 *		them), in the serial read (minhash.c) and in the parallel workers
 *		(keys_parallel.c) alike, with the same errors.  See dedup.h.
 */
#include "dedup.h"

/* The bands of a job on a signature column (fname, column: for messages). */
void
dedup_minhash_bands_init(MinhashBands *mb, const char *fname, const char *column,
						 int bands)
{
	memset(mb, 0, sizeof(*mb));
	mb->fname = fname;
	mb->column = column;
	mb->bands = bands;
}

/*
 * Check a signature's parameters against the others'; false if it is
 * empty (similar to nothing: no keys).
 */
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
