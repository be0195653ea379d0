/*
 * signature.h
 *		A minhash_signature value as the server reads it: one reader
 *		(minhash/functions.c) for the SQL functions and the dedup jobs
 *		(dedup/minhash.c).  The layout is core/minhash.h's.
 */
#ifndef SIMHASH_MINHASH_SIGNATURE_H
#define SIMHASH_MINHASH_SIGNATURE_H

#include "postgres.h"

#include "core/minhash.h"

/* A signature, detoasted (maybe with a short header) and its parsed header. */
typedef struct MinhashSig
{
	MinhashParams p;
	bool		empty;
	const uint8_t *slots;		/* k serialised slots, NULL when empty */
} MinhashSig;

/* Parse d's header into *sig; XX001 (data corrupted) if it is invalid. */
extern void minhash_sig_read(Datum d, MinhashSig *sig);

#endif							/* SIMHASH_MINHASH_SIGNATURE_H */
