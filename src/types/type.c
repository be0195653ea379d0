/*
 * type.c
 *		The simhash64 type: text and binary I/O, unsigned comparison (btree
 *		support), and casts to and from bit(64).  Equality, hashing and the
 *		bigint casts reuse int8's functions (same 8-byte representation).
 */
#include "simhash.h"

#include "lib/stringinfo.h"
#include "libpq/pqformat.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/sortsupport.h"
#include "utils/varbit.h"

PG_FUNCTION_INFO_V1(simhash64_in);
PG_FUNCTION_INFO_V1(simhash64_out);
PG_FUNCTION_INFO_V1(simhash64_recv);
PG_FUNCTION_INFO_V1(simhash64_send);
PG_FUNCTION_INFO_V1(simhash64_lt);
PG_FUNCTION_INFO_V1(simhash64_le);
PG_FUNCTION_INFO_V1(simhash64_gt);
PG_FUNCTION_INFO_V1(simhash64_ge);
PG_FUNCTION_INFO_V1(simhash64_cmp);
PG_FUNCTION_INFO_V1(simhash64_sortsupport);
PG_FUNCTION_INFO_V1(simhash64_larger);
PG_FUNCTION_INFO_V1(simhash64_smaller);
PG_FUNCTION_INFO_V1(simhash64_to_bit);
PG_FUNCTION_INFO_V1(bit_to_simhash64);
PG_FUNCTION_INFO_V1(simhash64_from_numeric);

/* 16 hex digits, either case, optional 0x, surrounding whitespace */
Datum
simhash64_in(PG_FUNCTION_ARGS)
{
	char	   *str = PG_GETARG_CSTRING(0);
	uint64_t	value;

	if (simhash64_parse(str, &value) != SIMHASH_INPUT_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s: \"%s\"",
						"simhash64", str),
				 errhint("A simhash64 is written as 16 hexadecimal digits, optionally prefixed by 0x.")));
	PG_RETURN_SIMHASH64(value);
}

Datum
simhash64_out(PG_FUNCTION_ARGS)
{
	simhash64	value = PG_GETARG_SIMHASH64(0);
	static const char digits[] = "0123456789abcdef";
	char	   *out = palloc(17);

	for (int i = 15; i >= 0; i--)
	{
		out[i] = digits[value & 0xf];
		value >>= 4;
	}
	out[16] = '\0';
	PG_RETURN_CSTRING(out);
}

/* binary format: 8 bytes, network byte order (as int8) */
Datum
simhash64_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	size_t		pos = buf->cursor;
	uint64_t	value;

	simhash_recv_check(simhash64_parse_binary((const uint8_t *) buf->data, buf->len,
											  &pos, &value));
	buf->cursor = (int) pos;
	PG_RETURN_SIMHASH64(value);
}

/*
 * What every binary input function does with input.c's result: the error
 * pq_getmsgint would raise for a short message; RANGE is for the caller.
 */
void
simhash_recv_check(SimhashInput r)
{
	if (r == SIMHASH_INPUT_SHORT)
		ereport(ERROR,
				(errcode(ERRCODE_PROTOCOL_VIOLATION),
				 errmsg("insufficient data left in message")));
}

Datum
simhash64_send(PG_FUNCTION_ARGS)
{
	simhash64	value = PG_GETARG_SIMHASH64(0);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendint64(&buf, (int64) value);
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/* ---- unsigned ordering ---- */

#define SIMHASH64_CMP(name, op) \
Datum \
name(PG_FUNCTION_ARGS) \
{ \
	PG_RETURN_BOOL(PG_GETARG_SIMHASH64(0) op PG_GETARG_SIMHASH64(1)); \
}

SIMHASH64_CMP(simhash64_lt, <)
SIMHASH64_CMP(simhash64_le, <=)
SIMHASH64_CMP(simhash64_gt, >)
SIMHASH64_CMP(simhash64_ge, >=)

static inline int
cmp_u64(uint64 a, uint64 b)
{
	return (a > b) - (a < b);
}

Datum
simhash64_cmp(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(cmp_u64(PG_GETARG_SIMHASH64(0), PG_GETARG_SIMHASH64(1)));
}

static int
simhash64_fastcmp(Datum x, Datum y, SortSupport ssup)
{
	return cmp_u64(DatumGetSimhash64(x), DatumGetSimhash64(y));
}

Datum
simhash64_sortsupport(PG_FUNCTION_ARGS)
{
	SortSupport ssup = (SortSupport) PG_GETARG_POINTER(0);

	ssup->comparator = simhash64_fastcmp;
	PG_RETURN_VOID();
}

/* for min() and max() */
Datum
simhash64_larger(PG_FUNCTION_ARGS)
{
	PG_RETURN_SIMHASH64(Max(PG_GETARG_SIMHASH64(0), PG_GETARG_SIMHASH64(1)));
}

Datum
simhash64_smaller(PG_FUNCTION_ARGS)
{
	PG_RETURN_SIMHASH64(Min(PG_GETARG_SIMHASH64(0), PG_GETARG_SIMHASH64(1)));
}

/* ---- bit(64) casts: most significant bit first, as printed in hex ---- */

Datum
simhash64_to_bit(PG_FUNCTION_ARGS)
{
	simhash64	value = PG_GETARG_SIMHASH64(0);
	int			len = VARBITTOTALLEN(64);
	VarBit	   *result = (VarBit *) palloc0(len);

	SET_VARSIZE(result, len);
	VARBITLEN(result) = 64;
	for (int i = 0; i < 8; i++)
		VARBITS(result)[i] = (bits8) (value >> (56 - 8 * i));
	PG_RETURN_VARBIT_P(result);
}

Datum
bit_to_simhash64(PG_FUNCTION_ARGS)
{
	VarBit	   *arg = PG_GETARG_VARBIT_P(0);
	simhash64	value = 0;

	if (VARBITLEN(arg) != 64)
		ereport(ERROR,
				(errcode(ERRCODE_STRING_DATA_LENGTH_MISMATCH),
				 errmsg("cannot cast bit string of length %d to simhash64",
						VARBITLEN(arg)),
				 errdetail("A simhash64 has exactly 64 bits.")));
	for (int i = 0; i < 8; i++)
		value = (value << 8) | VARBITS(arg)[i];
	PG_RETURN_SIMHASH64(value);
}

/* ---- numeric cast: the unsigned value, as clients send large integers ---- */

/* numeric -> simhash64: a whole number in 0 .. 2^64-1, else 22003 / 22023 */
Datum
simhash64_from_numeric(PG_FUNCTION_ARGS)
{
	char	   *str = DatumGetCString(DirectFunctionCall1(numeric_out,
														  PG_GETARG_DATUM(0)));
	uint64_t	value;

	switch (simhash64_parse_decimal(str, &value))
	{
		case SIMHASH_INPUT_OK:
			break;
		case SIMHASH_INPUT_RANGE:
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("value %s is out of range for type %s", str, "simhash64"),
					 errdetail("A simhash64 cast from numeric is an unsigned 64-bit value, from 0 to 18446744073709551615.")));
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cannot cast numeric %s to %s", str, "simhash64"),
					 errdetail("A simhash64 cast from numeric is a whole number.")));
	}
	PG_RETURN_SIMHASH64(value);
}
