/* sql/simhash--1.0.sql: the SQL objects of the simhash extension, version 1.0 */

\echo Use "CREATE EXTENSION simhash" to load this file. \quit

--------------------------------------------------------------------------
-- simhash64: a 64-bit fingerprint, printed as 16 hex digits, ordered as an
-- unsigned integer.  Same representation as int8.
--------------------------------------------------------------------------

CREATE TYPE simhash64;

CREATE FUNCTION simhash64_in(cstring) RETURNS simhash64
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash64_out(simhash64) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash64_recv(internal) RETURNS simhash64
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash64_send(simhash64) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE simhash64 (
	INPUT = simhash64_in,
	OUTPUT = simhash64_out,
	RECEIVE = simhash64_recv,
	SEND = simhash64_send,
	INTERNALLENGTH = 8,
	PASSEDBYVALUE,
	ALIGNMENT = double,
	STORAGE = plain
);
COMMENT ON TYPE simhash64 IS '64-bit simhash fingerprint';

-- comparison: unsigned order; equality and hashing are int8's
CREATE FUNCTION simhash64_eq(simhash64, simhash64) RETURNS boolean
	AS 'int8eq' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash64_ne(simhash64, simhash64) RETURNS boolean
	AS 'int8ne' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash64_lt(simhash64, simhash64) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash64_le(simhash64, simhash64) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash64_gt(simhash64, simhash64) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash64_ge(simhash64, simhash64) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash64_cmp(simhash64, simhash64) RETURNS integer
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash64_sortsupport(internal) RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash64_hash(simhash64) RETURNS integer
	AS 'hashint8' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash64_hash_extended(simhash64, bigint) RETURNS bigint
	AS 'hashint8extended' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OPERATOR = (
	LEFTARG = simhash64, RIGHTARG = simhash64, FUNCTION = simhash64_eq,
	COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel,
	HASHES, MERGES
);
CREATE OPERATOR <> (
	LEFTARG = simhash64, RIGHTARG = simhash64, FUNCTION = simhash64_ne,
	COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel
);
CREATE OPERATOR < (
	LEFTARG = simhash64, RIGHTARG = simhash64, FUNCTION = simhash64_lt,
	COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);
CREATE OPERATOR <= (
	LEFTARG = simhash64, RIGHTARG = simhash64, FUNCTION = simhash64_le,
	COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);
CREATE OPERATOR > (
	LEFTARG = simhash64, RIGHTARG = simhash64, FUNCTION = simhash64_gt,
	COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);
CREATE OPERATOR >= (
	LEFTARG = simhash64, RIGHTARG = simhash64, FUNCTION = simhash64_ge,
	COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel
);

CREATE OPERATOR CLASS simhash64_ops DEFAULT FOR TYPE simhash64 USING btree AS
	OPERATOR 1 <,
	OPERATOR 2 <=,
	OPERATOR 3 =,
	OPERATOR 4 >=,
	OPERATOR 5 >,
	FUNCTION 1 simhash64_cmp(simhash64, simhash64),
	FUNCTION 2 simhash64_sortsupport(internal);

CREATE OPERATOR CLASS simhash64_ops DEFAULT FOR TYPE simhash64 USING hash AS
	OPERATOR 1 =,
	FUNCTION 1 simhash64_hash(simhash64),
	FUNCTION 2 simhash64_hash_extended(simhash64, bigint);

CREATE FUNCTION simhash64_larger(simhash64, simhash64) RETURNS simhash64
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash64_smaller(simhash64, simhash64) RETURNS simhash64
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE AGGREGATE min(simhash64) (
	SFUNC = simhash64_smaller, STYPE = simhash64, SORTOP = <,
	COMBINEFUNC = simhash64_smaller, PARALLEL = SAFE
);
CREATE AGGREGATE max(simhash64) (
	SFUNC = simhash64_larger, STYPE = simhash64, SORTOP = >,
	COMBINEFUNC = simhash64_larger, PARALLEL = SAFE
);

-- casts: bigint is bit-identical (two's complement); bit(64) is MSB first
CREATE CAST (simhash64 AS bigint) WITHOUT FUNCTION;
CREATE CAST (bigint AS simhash64) WITHOUT FUNCTION;

CREATE FUNCTION simhash64_to_bit(simhash64) RETURNS bit
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bit_to_simhash64(bit) RETURNS simhash64
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE CAST (simhash64 AS bit) WITH FUNCTION simhash64_to_bit(simhash64);
CREATE CAST (bit AS simhash64) WITH FUNCTION bit_to_simhash64(bit);

--------------------------------------------------------------------------
-- simhash_distance: what <~> returns.  An integer (int4 representation)
-- with its own type, so that the functions behind its comparison operators
-- can carry planner support; implicitly cast to integer.
--------------------------------------------------------------------------

CREATE TYPE simhash_distance;

CREATE FUNCTION simhash_distance_in(cstring) RETURNS simhash_distance
	AS 'int4in' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_distance_out(simhash_distance) RETURNS cstring
	AS 'int4out' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_distance_recv(internal) RETURNS simhash_distance
	AS 'int4recv' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_distance_send(simhash_distance) RETURNS bytea
	AS 'int4send' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE simhash_distance (
	INPUT = simhash_distance_in,
	OUTPUT = simhash_distance_out,
	RECEIVE = simhash_distance_recv,
	SEND = simhash_distance_send,
	INTERNALLENGTH = 4,
	PASSEDBYVALUE,
	ALIGNMENT = int4,
	STORAGE = plain,
	CATEGORY = 'N'
);
COMMENT ON TYPE simhash_distance IS 'Hamming distance between simhash64 values (0..64)';

CREATE CAST (simhash_distance AS integer) WITHOUT FUNCTION AS IMPLICIT;
CREATE CAST (integer AS simhash_distance) WITHOUT FUNCTION AS ASSIGNMENT;
-- PostgreSQL does not chain casts: (a <~> b)::bigint etc. need their own
CREATE FUNCTION simhash_distance_to_int8(simhash_distance) RETURNS bigint
	AS 'int48' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_distance_to_int2(simhash_distance) RETURNS smallint
	AS 'i4toi2' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_distance_to_numeric(simhash_distance) RETURNS numeric
	AS 'int4_numeric' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_distance_to_float8(simhash_distance) RETURNS double precision
	AS 'i4tod' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE CAST (simhash_distance AS bigint) WITH FUNCTION simhash_distance_to_int8(simhash_distance) AS ASSIGNMENT;
CREATE CAST (simhash_distance AS smallint) WITH FUNCTION simhash_distance_to_int2(simhash_distance) AS ASSIGNMENT;
CREATE CAST (simhash_distance AS numeric) WITH FUNCTION simhash_distance_to_numeric(simhash_distance) AS ASSIGNMENT;
CREATE CAST (simhash_distance AS double precision) WITH FUNCTION simhash_distance_to_float8(simhash_distance) AS ASSIGNMENT;

CREATE FUNCTION simhash64_distance(simhash64, simhash64) RETURNS simhash_distance
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR <~> (
	LEFTARG = simhash64, RIGHTARG = simhash64, FUNCTION = simhash64_distance,
	COMMUTATOR = <~>
);
COMMENT ON OPERATOR <~> (simhash64, simhash64) IS 'Hamming distance';

CREATE FUNCTION hamming_distance(simhash64, simhash64) RETURNS integer
	AS 'MODULE_PATHNAME', 'simhash64_distance'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION hamming_distance(simhash64, simhash64) IS 'number of differing bits';

-- comparison operators of simhash_distance with itself and with int2, int4, int8

CREATE FUNCTION simhash_distance_lt(simhash_distance, simhash_distance) RETURNS boolean
	AS 'int4lt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR < (
	LEFTARG = simhash_distance, RIGHTARG = simhash_distance, FUNCTION = simhash_distance_lt,
	COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);
CREATE FUNCTION simhash_distance_le(simhash_distance, simhash_distance) RETURNS boolean
	AS 'int4le' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR <= (
	LEFTARG = simhash_distance, RIGHTARG = simhash_distance, FUNCTION = simhash_distance_le,
	COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);
CREATE FUNCTION simhash_distance_eq(simhash_distance, simhash_distance) RETURNS boolean
	AS 'int4eq' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR = (
	LEFTARG = simhash_distance, RIGHTARG = simhash_distance, FUNCTION = simhash_distance_eq,
	COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel,
	HASHES, MERGES
);
CREATE FUNCTION simhash_distance_ge(simhash_distance, simhash_distance) RETURNS boolean
	AS 'int4ge' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR >= (
	LEFTARG = simhash_distance, RIGHTARG = simhash_distance, FUNCTION = simhash_distance_ge,
	COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel
);
CREATE FUNCTION simhash_distance_gt(simhash_distance, simhash_distance) RETURNS boolean
	AS 'int4gt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR > (
	LEFTARG = simhash_distance, RIGHTARG = simhash_distance, FUNCTION = simhash_distance_gt,
	COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);
CREATE FUNCTION simhash_distance_ne(simhash_distance, simhash_distance) RETURNS boolean
	AS 'int4ne' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR <> (
	LEFTARG = simhash_distance, RIGHTARG = simhash_distance, FUNCTION = simhash_distance_ne,
	COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel
);

CREATE FUNCTION simhash_distance_int2_lt(simhash_distance, smallint) RETURNS boolean
	AS 'int42lt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR < (
	LEFTARG = simhash_distance, RIGHTARG = smallint, FUNCTION = simhash_distance_int2_lt,
	COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);
CREATE FUNCTION simhash_distance_int2_le(simhash_distance, smallint) RETURNS boolean
	AS 'int42le' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR <= (
	LEFTARG = simhash_distance, RIGHTARG = smallint, FUNCTION = simhash_distance_int2_le,
	COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);
CREATE FUNCTION simhash_distance_int2_eq(simhash_distance, smallint) RETURNS boolean
	AS 'int42eq' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR = (
	LEFTARG = simhash_distance, RIGHTARG = smallint, FUNCTION = simhash_distance_int2_eq,
	COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel
);
CREATE FUNCTION simhash_distance_int2_ge(simhash_distance, smallint) RETURNS boolean
	AS 'int42ge' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR >= (
	LEFTARG = simhash_distance, RIGHTARG = smallint, FUNCTION = simhash_distance_int2_ge,
	COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel
);
CREATE FUNCTION simhash_distance_int2_gt(simhash_distance, smallint) RETURNS boolean
	AS 'int42gt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR > (
	LEFTARG = simhash_distance, RIGHTARG = smallint, FUNCTION = simhash_distance_int2_gt,
	COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);
CREATE FUNCTION simhash_distance_int2_ne(simhash_distance, smallint) RETURNS boolean
	AS 'int42ne' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR <> (
	LEFTARG = simhash_distance, RIGHTARG = smallint, FUNCTION = simhash_distance_int2_ne,
	COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel
);

CREATE FUNCTION simhash_distance_int4_lt(simhash_distance, integer) RETURNS boolean
	AS 'int4lt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR < (
	LEFTARG = simhash_distance, RIGHTARG = integer, FUNCTION = simhash_distance_int4_lt,
	COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);
CREATE FUNCTION simhash_distance_int4_le(simhash_distance, integer) RETURNS boolean
	AS 'int4le' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR <= (
	LEFTARG = simhash_distance, RIGHTARG = integer, FUNCTION = simhash_distance_int4_le,
	COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);
CREATE FUNCTION simhash_distance_int4_eq(simhash_distance, integer) RETURNS boolean
	AS 'int4eq' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR = (
	LEFTARG = simhash_distance, RIGHTARG = integer, FUNCTION = simhash_distance_int4_eq,
	COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel
);
CREATE FUNCTION simhash_distance_int4_ge(simhash_distance, integer) RETURNS boolean
	AS 'int4ge' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR >= (
	LEFTARG = simhash_distance, RIGHTARG = integer, FUNCTION = simhash_distance_int4_ge,
	COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel
);
CREATE FUNCTION simhash_distance_int4_gt(simhash_distance, integer) RETURNS boolean
	AS 'int4gt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR > (
	LEFTARG = simhash_distance, RIGHTARG = integer, FUNCTION = simhash_distance_int4_gt,
	COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);
CREATE FUNCTION simhash_distance_int4_ne(simhash_distance, integer) RETURNS boolean
	AS 'int4ne' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR <> (
	LEFTARG = simhash_distance, RIGHTARG = integer, FUNCTION = simhash_distance_int4_ne,
	COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel
);

CREATE FUNCTION simhash_distance_int8_lt(simhash_distance, bigint) RETURNS boolean
	AS 'int48lt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR < (
	LEFTARG = simhash_distance, RIGHTARG = bigint, FUNCTION = simhash_distance_int8_lt,
	COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);
CREATE FUNCTION simhash_distance_int8_le(simhash_distance, bigint) RETURNS boolean
	AS 'int48le' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR <= (
	LEFTARG = simhash_distance, RIGHTARG = bigint, FUNCTION = simhash_distance_int8_le,
	COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);
CREATE FUNCTION simhash_distance_int8_eq(simhash_distance, bigint) RETURNS boolean
	AS 'int48eq' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR = (
	LEFTARG = simhash_distance, RIGHTARG = bigint, FUNCTION = simhash_distance_int8_eq,
	COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel
);
CREATE FUNCTION simhash_distance_int8_ge(simhash_distance, bigint) RETURNS boolean
	AS 'int48ge' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR >= (
	LEFTARG = simhash_distance, RIGHTARG = bigint, FUNCTION = simhash_distance_int8_ge,
	COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel
);
CREATE FUNCTION simhash_distance_int8_gt(simhash_distance, bigint) RETURNS boolean
	AS 'int48gt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR > (
	LEFTARG = simhash_distance, RIGHTARG = bigint, FUNCTION = simhash_distance_int8_gt,
	COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);
CREATE FUNCTION simhash_distance_int8_ne(simhash_distance, bigint) RETURNS boolean
	AS 'int48ne' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR <> (
	LEFTARG = simhash_distance, RIGHTARG = bigint, FUNCTION = simhash_distance_int8_ne,
	COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel
);

CREATE FUNCTION simhash_int2_distance_lt(smallint, simhash_distance) RETURNS boolean
	AS 'int24lt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR < (
	LEFTARG = smallint, RIGHTARG = simhash_distance, FUNCTION = simhash_int2_distance_lt,
	COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);
CREATE FUNCTION simhash_int2_distance_le(smallint, simhash_distance) RETURNS boolean
	AS 'int24le' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR <= (
	LEFTARG = smallint, RIGHTARG = simhash_distance, FUNCTION = simhash_int2_distance_le,
	COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);
CREATE FUNCTION simhash_int2_distance_eq(smallint, simhash_distance) RETURNS boolean
	AS 'int24eq' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR = (
	LEFTARG = smallint, RIGHTARG = simhash_distance, FUNCTION = simhash_int2_distance_eq,
	COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel
);
CREATE FUNCTION simhash_int2_distance_ge(smallint, simhash_distance) RETURNS boolean
	AS 'int24ge' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR >= (
	LEFTARG = smallint, RIGHTARG = simhash_distance, FUNCTION = simhash_int2_distance_ge,
	COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel
);
CREATE FUNCTION simhash_int2_distance_gt(smallint, simhash_distance) RETURNS boolean
	AS 'int24gt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR > (
	LEFTARG = smallint, RIGHTARG = simhash_distance, FUNCTION = simhash_int2_distance_gt,
	COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);
CREATE FUNCTION simhash_int2_distance_ne(smallint, simhash_distance) RETURNS boolean
	AS 'int24ne' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR <> (
	LEFTARG = smallint, RIGHTARG = simhash_distance, FUNCTION = simhash_int2_distance_ne,
	COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel
);

CREATE FUNCTION simhash_int4_distance_lt(integer, simhash_distance) RETURNS boolean
	AS 'int4lt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR < (
	LEFTARG = integer, RIGHTARG = simhash_distance, FUNCTION = simhash_int4_distance_lt,
	COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);
CREATE FUNCTION simhash_int4_distance_le(integer, simhash_distance) RETURNS boolean
	AS 'int4le' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR <= (
	LEFTARG = integer, RIGHTARG = simhash_distance, FUNCTION = simhash_int4_distance_le,
	COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);
CREATE FUNCTION simhash_int4_distance_eq(integer, simhash_distance) RETURNS boolean
	AS 'int4eq' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR = (
	LEFTARG = integer, RIGHTARG = simhash_distance, FUNCTION = simhash_int4_distance_eq,
	COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel
);
CREATE FUNCTION simhash_int4_distance_ge(integer, simhash_distance) RETURNS boolean
	AS 'int4ge' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR >= (
	LEFTARG = integer, RIGHTARG = simhash_distance, FUNCTION = simhash_int4_distance_ge,
	COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel
);
CREATE FUNCTION simhash_int4_distance_gt(integer, simhash_distance) RETURNS boolean
	AS 'int4gt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR > (
	LEFTARG = integer, RIGHTARG = simhash_distance, FUNCTION = simhash_int4_distance_gt,
	COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);
CREATE FUNCTION simhash_int4_distance_ne(integer, simhash_distance) RETURNS boolean
	AS 'int4ne' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR <> (
	LEFTARG = integer, RIGHTARG = simhash_distance, FUNCTION = simhash_int4_distance_ne,
	COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel
);

CREATE FUNCTION simhash_int8_distance_lt(bigint, simhash_distance) RETURNS boolean
	AS 'int84lt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR < (
	LEFTARG = bigint, RIGHTARG = simhash_distance, FUNCTION = simhash_int8_distance_lt,
	COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel
);
CREATE FUNCTION simhash_int8_distance_le(bigint, simhash_distance) RETURNS boolean
	AS 'int84le' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR <= (
	LEFTARG = bigint, RIGHTARG = simhash_distance, FUNCTION = simhash_int8_distance_le,
	COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel
);
CREATE FUNCTION simhash_int8_distance_eq(bigint, simhash_distance) RETURNS boolean
	AS 'int84eq' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR = (
	LEFTARG = bigint, RIGHTARG = simhash_distance, FUNCTION = simhash_int8_distance_eq,
	COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel
);
CREATE FUNCTION simhash_int8_distance_ge(bigint, simhash_distance) RETURNS boolean
	AS 'int84ge' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR >= (
	LEFTARG = bigint, RIGHTARG = simhash_distance, FUNCTION = simhash_int8_distance_ge,
	COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel
);
CREATE FUNCTION simhash_int8_distance_gt(bigint, simhash_distance) RETURNS boolean
	AS 'int84gt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR > (
	LEFTARG = bigint, RIGHTARG = simhash_distance, FUNCTION = simhash_int8_distance_gt,
	COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel
);
CREATE FUNCTION simhash_int8_distance_ne(bigint, simhash_distance) RETURNS boolean
	AS 'int84ne' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR <> (
	LEFTARG = bigint, RIGHTARG = simhash_distance, FUNCTION = simhash_int8_distance_ne,
	COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel
);

-- btree and hash support for simhash_distance (ORDER BY, GROUP BY, indexes)
CREATE FUNCTION simhash_distance_cmp(simhash_distance, simhash_distance) RETURNS integer
	AS 'btint4cmp' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_distance_int2_cmp(simhash_distance, smallint) RETURNS integer
	AS 'btint42cmp' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_distance_int4_cmp(simhash_distance, integer) RETURNS integer
	AS 'btint4cmp' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_distance_int8_cmp(simhash_distance, bigint) RETURNS integer
	AS 'btint48cmp' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_int2_distance_cmp(smallint, simhash_distance) RETURNS integer
	AS 'btint24cmp' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_int4_distance_cmp(integer, simhash_distance) RETURNS integer
	AS 'btint4cmp' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_int8_distance_cmp(bigint, simhash_distance) RETURNS integer
	AS 'btint84cmp' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_distance_sortsupport(internal) RETURNS void
	AS 'btint4sortsupport' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_distance_hash(simhash_distance) RETURNS integer
	AS 'hashint4' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_distance_hash_extended(simhash_distance, bigint) RETURNS bigint
	AS 'hashint4extended' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OPERATOR CLASS simhash_distance_ops DEFAULT FOR TYPE simhash_distance USING btree AS
	OPERATOR 1 < (simhash_distance, simhash_distance),
	OPERATOR 2 <= (simhash_distance, simhash_distance),
	OPERATOR 3 = (simhash_distance, simhash_distance),
	OPERATOR 4 >= (simhash_distance, simhash_distance),
	OPERATOR 5 > (simhash_distance, simhash_distance),
	FUNCTION 1 simhash_distance_cmp(simhash_distance, simhash_distance),
	FUNCTION 2 simhash_distance_sortsupport(internal);

ALTER OPERATOR FAMILY simhash_distance_ops USING btree ADD
	OPERATOR 1 < (simhash_distance, smallint),
	OPERATOR 2 <= (simhash_distance, smallint),
	OPERATOR 3 = (simhash_distance, smallint),
	OPERATOR 4 >= (simhash_distance, smallint),
	OPERATOR 5 > (simhash_distance, smallint),
	FUNCTION 1 simhash_distance_int2_cmp(simhash_distance, smallint),
	OPERATOR 1 < (simhash_distance, integer),
	OPERATOR 2 <= (simhash_distance, integer),
	OPERATOR 3 = (simhash_distance, integer),
	OPERATOR 4 >= (simhash_distance, integer),
	OPERATOR 5 > (simhash_distance, integer),
	FUNCTION 1 simhash_distance_int4_cmp(simhash_distance, integer),
	OPERATOR 1 < (simhash_distance, bigint),
	OPERATOR 2 <= (simhash_distance, bigint),
	OPERATOR 3 = (simhash_distance, bigint),
	OPERATOR 4 >= (simhash_distance, bigint),
	OPERATOR 5 > (simhash_distance, bigint),
	FUNCTION 1 simhash_distance_int8_cmp(simhash_distance, bigint),
	OPERATOR 1 < (smallint, simhash_distance),
	OPERATOR 2 <= (smallint, simhash_distance),
	OPERATOR 3 = (smallint, simhash_distance),
	OPERATOR 4 >= (smallint, simhash_distance),
	OPERATOR 5 > (smallint, simhash_distance),
	FUNCTION 1 simhash_int2_distance_cmp(smallint, simhash_distance),
	OPERATOR 1 < (integer, simhash_distance),
	OPERATOR 2 <= (integer, simhash_distance),
	OPERATOR 3 = (integer, simhash_distance),
	OPERATOR 4 >= (integer, simhash_distance),
	OPERATOR 5 > (integer, simhash_distance),
	FUNCTION 1 simhash_int4_distance_cmp(integer, simhash_distance),
	OPERATOR 1 < (bigint, simhash_distance),
	OPERATOR 2 <= (bigint, simhash_distance),
	OPERATOR 3 = (bigint, simhash_distance),
	OPERATOR 4 >= (bigint, simhash_distance),
	OPERATOR 5 > (bigint, simhash_distance),
	FUNCTION 1 simhash_int8_distance_cmp(bigint, simhash_distance);

CREATE OPERATOR CLASS simhash_distance_ops DEFAULT FOR TYPE simhash_distance USING hash AS
	OPERATOR 1 = (simhash_distance, simhash_distance),
	FUNCTION 1 simhash_distance_hash(simhash_distance),
	FUNCTION 2 simhash_distance_hash_extended(simhash_distance, bigint);

--------------------------------------------------------------------------
-- fingerprints
--------------------------------------------------------------------------

CREATE FUNCTION simhash_hash(text) RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_hash(text) IS 'feature hash: XXH3-64 of the UTF-8 bytes';

CREATE FUNCTION simhash_compute(text[]) RETURNS simhash64
	AS 'MODULE_PATHNAME', 'simhash_compute_text'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10;
COMMENT ON FUNCTION simhash_compute(text[]) IS 'simhash of features (bit vote, weight 1)';

CREATE FUNCTION simhash_compute(text[], real[]) RETURNS simhash64
	AS 'MODULE_PATHNAME', 'simhash_compute_text_weighted'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10;
COMMENT ON FUNCTION simhash_compute(text[], real[]) IS 'simhash of weighted features';

CREATE FUNCTION simhash_compute(bigint[]) RETURNS simhash64
	AS 'MODULE_PATHNAME', 'simhash_compute_hashes'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10;
COMMENT ON FUNCTION simhash_compute(bigint[]) IS 'simhash of pre-hashed features';

CREATE FUNCTION simhash_tokens(text) RETURNS text[]
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10;
COMMENT ON FUNCTION simhash_tokens(text) IS 'Unicode words, case-folded; CJK and Thai letters one per token';

CREATE FUNCTION simhash_shingle(text[], "window" integer DEFAULT 4) RETURNS text[]
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10;
COMMENT ON FUNCTION simhash_shingle(text[], integer) IS 'overlapping windows of tokens, joined by a space';

CREATE FUNCTION simhash(body text, "window" integer DEFAULT 1) RETURNS simhash64
	AS 'MODULE_PATHNAME', 'simhash_text'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10;
COMMENT ON FUNCTION simhash(text, integer) IS 'simhash of a text: distinct shingles of tokens, weighted by 1 + floor(2 log2(count))';

CREATE FUNCTION simhash_features(body text, "window" integer DEFAULT 1,
		OUT feature text, OUT count integer, OUT weight integer) RETURNS SETOF record
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10 ROWS 100;
COMMENT ON FUNCTION simhash_features(text, integer) IS 'the weighted features simhash(text) votes with';

CREATE FUNCTION simhash(tsvector) RETURNS simhash64
	AS 'MODULE_PATHNAME', 'simhash_tsvector'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10;
COMMENT ON FUNCTION simhash(tsvector) IS 'simhash of lexemes weighted by occurrence count';

--------------------------------------------------------------------------
-- aggregates: features stored as rows
--------------------------------------------------------------------------

CREATE FUNCTION simhash_agg_transfn(internal, text) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION simhash_agg_transfn(internal, text, real) RETURNS internal
	AS 'MODULE_PATHNAME', 'simhash_agg_weighted_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION simhash_agg_combinefn(internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION simhash_agg_serialfn(internal) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_agg_deserialfn(bytea, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_agg_finalfn(internal) RETURNS simhash64
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE simhash_agg(text) (
	SFUNC = simhash_agg_transfn,
	STYPE = internal,
	SSPACE = 1100,
	FINALFUNC = simhash_agg_finalfn,
	COMBINEFUNC = simhash_agg_combinefn,
	SERIALFUNC = simhash_agg_serialfn,
	DESERIALFUNC = simhash_agg_deserialfn,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE simhash_agg(text) IS 'simhash of the feature rows';

CREATE AGGREGATE simhash_agg(text, real) (
	SFUNC = simhash_agg_transfn,
	STYPE = internal,
	SSPACE = 1100,
	FINALFUNC = simhash_agg_finalfn,
	COMBINEFUNC = simhash_agg_combinefn,
	SERIALFUNC = simhash_agg_serialfn,
	DESERIALFUNC = simhash_agg_deserialfn,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE simhash_agg(text, real) IS 'simhash of weighted feature rows';

--------------------------------------------------------------------------
-- find_all
-- Every pair of array elements within max_distance bits (the seed's
-- find_all), by sorted permuted tables: C(blocks, max_distance) passes.
-- The input parameter is max_distance because the output column is distance.
--------------------------------------------------------------------------

CREATE FUNCTION simhash_find_all(hashes simhash64[], blocks integer, max_distance integer)
	RETURNS TABLE (a simhash64, b simhash64, distance integer)
	AS 'MODULE_PATHNAME', 'simhash_find_all'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 1000;
COMMENT ON FUNCTION simhash_find_all(simhash64[], integer, integer) IS 'all pairs of elements within max_distance bits, each once, a <= b';

--------------------------------------------------------------------------
-- table-scale dedup jobs: every near-duplicate pair of a table with its
-- ids, and a group id for every row; one read of the table, within
-- maintenance_work_mem (temporary files beyond it), the caller's privileges.
--   SELECT * FROM simhash_pairs('docs', 'id', 'h', 3);
--   SELECT * FROM simhash_groups('docs', 'id', 'h', 3, 'leader');
-- Ids are bigint unless id_type (a NULL of the ids' type) says otherwise:
--   SELECT * FROM simhash_pairs('docs', 'id', 'h', id_type => NULL::uuid);
--------------------------------------------------------------------------

CREATE FUNCTION simhash_pairs(relation regclass, id_column name, hash_column name,
		max_distance integer DEFAULT 3, blocks integer DEFAULT NULL)
	RETURNS TABLE (id_a bigint, id_b bigint, distance integer)
	AS 'MODULE_PATHNAME', 'simhash_pairs'
	LANGUAGE C STABLE CALLED ON NULL INPUT PARALLEL RESTRICTED ROWS 1000;
COMMENT ON FUNCTION simhash_pairs(regclass, name, name, integer, integer) IS 'every pair of rows whose fingerprints are within max_distance bits, by bigint id, each once, id_a < id_b';

CREATE FUNCTION simhash_pairs(relation regclass, id_column name, hash_column name,
		id_type anyelement, max_distance integer DEFAULT 3, blocks integer DEFAULT NULL)
	RETURNS TABLE (id_a anyelement, id_b anyelement, distance integer)
	AS 'MODULE_PATHNAME', 'simhash_pairs_typed'
	LANGUAGE C STABLE CALLED ON NULL INPUT PARALLEL RESTRICTED ROWS 1000;
COMMENT ON FUNCTION simhash_pairs(regclass, name, name, anyelement, integer, integer) IS 'every pair of rows whose fingerprints are within max_distance bits, by id of id_type''s type, each once, id_a < id_b';

CREATE FUNCTION simhash_groups(relation regclass, id_column name, hash_column name,
		max_distance integer DEFAULT 3, linkage text DEFAULT 'connected',
		blocks integer DEFAULT NULL)
	RETURNS TABLE (id bigint, group_id bigint)
	AS 'MODULE_PATHNAME', 'simhash_groups'
	LANGUAGE C STABLE CALLED ON NULL INPUT PARALLEL RESTRICTED ROWS 1000;
COMMENT ON FUNCTION simhash_groups(regclass, name, name, integer, text, integer) IS 'a group id (the least bigint id of the group) for every row: connected components or leader clustering of near-duplicates';

CREATE FUNCTION simhash_groups(relation regclass, id_column name, hash_column name,
		id_type anyelement, max_distance integer DEFAULT 3,
		linkage text DEFAULT 'connected', blocks integer DEFAULT NULL)
	RETURNS TABLE (id anyelement, group_id anyelement)
	AS 'MODULE_PATHNAME', 'simhash_groups_typed'
	LANGUAGE C STABLE CALLED ON NULL INPUT PARALLEL RESTRICTED ROWS 1000;
COMMENT ON FUNCTION simhash_groups(regclass, name, name, anyelement, integer, text, integer) IS 'a group id (the least id of the group, of id_type''s type) for every row: connected components or leader clustering of near-duplicates';

-- rows sharing at least min_shared bigint keys (sentence fingerprints, LSH
-- band keys): their pairs, and connected groups; keys shared by more than
-- max_key_rows rows (boilerplate) are ignored.
CREATE FUNCTION shared_key_pairs(relation regclass, id_column name, keys_column name,
		min_shared integer DEFAULT 1, max_key_rows integer DEFAULT 1000)
	RETURNS TABLE (id_a bigint, id_b bigint, shared integer)
	AS 'MODULE_PATHNAME', 'shared_key_pairs'
	LANGUAGE C STABLE CALLED ON NULL INPUT PARALLEL RESTRICTED ROWS 1000;
COMMENT ON FUNCTION shared_key_pairs(regclass, name, name, integer, integer) IS 'pairs of rows (bigint ids) sharing at least min_shared keys of a bigint[] column, with the number shared';

CREATE FUNCTION shared_key_pairs(relation regclass, id_column name, keys_column name,
		id_type anyelement, min_shared integer DEFAULT 1, max_key_rows integer DEFAULT 1000)
	RETURNS TABLE (id_a anyelement, id_b anyelement, shared integer)
	AS 'MODULE_PATHNAME', 'shared_key_pairs_typed'
	LANGUAGE C STABLE CALLED ON NULL INPUT PARALLEL RESTRICTED ROWS 1000;
COMMENT ON FUNCTION shared_key_pairs(regclass, name, name, anyelement, integer, integer) IS 'pairs of rows (ids of id_type''s type) sharing at least min_shared keys of a bigint[] column, with the number shared';

CREATE FUNCTION shared_key_groups(relation regclass, id_column name, keys_column name,
		min_shared integer DEFAULT 1, max_key_rows integer DEFAULT 1000)
	RETURNS TABLE (id bigint, group_id bigint)
	AS 'MODULE_PATHNAME', 'shared_key_groups'
	LANGUAGE C STABLE CALLED ON NULL INPUT PARALLEL RESTRICTED ROWS 1000;
COMMENT ON FUNCTION shared_key_groups(regclass, name, name, integer, integer) IS 'connected groups of rows (bigint ids) sharing at least min_shared keys; group_id is the least id';

CREATE FUNCTION shared_key_groups(relation regclass, id_column name, keys_column name,
		id_type anyelement, min_shared integer DEFAULT 1, max_key_rows integer DEFAULT 1000)
	RETURNS TABLE (id anyelement, group_id anyelement)
	AS 'MODULE_PATHNAME', 'shared_key_groups_typed'
	LANGUAGE C STABLE CALLED ON NULL INPUT PARALLEL RESTRICTED ROWS 1000;
COMMENT ON FUNCTION shared_key_groups(regclass, name, name, anyelement, integer, integer) IS 'connected groups of rows (ids of id_type''s type) sharing at least min_shared keys; group_id is the least id';

--------------------------------------------------------------------------
-- planner support
-- `h <~> q <= k` becomes simhash_within(h, q, k) at planning time (support
-- function of the simhash_distance comparison functions), and
-- simhash_within(h, q, k) becomes the index condition
-- `h <@ simhash_ball(q, k)` for an index whose operator family has <@.
-- See src/planner.c.
--------------------------------------------------------------------------

-- simhash_ball: the fingerprints within radius bits of center.  16 bytes:
-- center, radius (-1 = empty .. 64), zero padding.  Text form (center,radius).
CREATE TYPE simhash_ball;

CREATE FUNCTION simhash_ball_in(cstring) RETURNS simhash_ball
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_ball_out(simhash_ball) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_ball_recv(internal) RETURNS simhash_ball
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_ball_send(simhash_ball) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE simhash_ball (
	INPUT = simhash_ball_in,
	OUTPUT = simhash_ball_out,
	RECEIVE = simhash_ball_recv,
	SEND = simhash_ball_send,
	INTERNALLENGTH = 16,
	ALIGNMENT = double,
	STORAGE = plain
);
COMMENT ON TYPE simhash_ball IS 'the simhash64 values within a radius of a center';

CREATE FUNCTION simhash_ball(center simhash64, radius bigint) RETURNS simhash_ball
	AS 'MODULE_PATHNAME', 'simhash_ball_make'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION simhash_ball(simhash64, bigint) IS 'ball of a center and radius (negative: empty, above 64: 64)';

-- selectivity of <@ and @> (and, through simhash_within_support, of simhash_within)
CREATE FUNCTION simhash_ball_sel(internal, oid, internal, integer) RETURNS double precision
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_ball_joinsel(internal, oid, internal, smallint, internal) RETURNS double precision
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE FUNCTION simhash_ball_contained(simhash64, simhash_ball) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_ball_contains(simhash_ball, simhash64) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OPERATOR <@ (
	LEFTARG = simhash64, RIGHTARG = simhash_ball, FUNCTION = simhash_ball_contained,
	COMMUTATOR = @>, RESTRICT = simhash_ball_sel, JOIN = simhash_ball_joinsel
);
COMMENT ON OPERATOR <@ (simhash64, simhash_ball) IS 'is within the ball';
CREATE OPERATOR @> (
	LEFTARG = simhash_ball, RIGHTARG = simhash64, FUNCTION = simhash_ball_contains,
	COMMUTATOR = <@, RESTRICT = simhash_ball_sel, JOIN = simhash_ball_joinsel
);
COMMENT ON OPERATOR @> (simhash_ball, simhash64) IS 'contains the fingerprint';

-- simhash_within(a, b, k) = hamming_distance(a, b) <= k; indexable
CREATE FUNCTION simhash_within_support(internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_within(a simhash64, b simhash64, max_distance bigint) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF
	SUPPORT simhash_within_support;
COMMENT ON FUNCTION simhash_within(simhash64, simhash64, bigint) IS 'hamming_distance(a, b) <= max_distance';

-- (a <~> b) <= k, < k, = 0 and their commuted forms become simhash_within
CREATE FUNCTION simhash_distance_support(internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

ALTER FUNCTION simhash_distance_lt(simhash_distance, simhash_distance) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_distance_le(simhash_distance, simhash_distance) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_distance_eq(simhash_distance, simhash_distance) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_distance_ge(simhash_distance, simhash_distance) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_distance_gt(simhash_distance, simhash_distance) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_distance_int2_lt(simhash_distance, smallint) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_distance_int2_le(simhash_distance, smallint) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_distance_int2_eq(simhash_distance, smallint) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_distance_int2_ge(simhash_distance, smallint) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_distance_int2_gt(simhash_distance, smallint) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_distance_int4_lt(simhash_distance, integer) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_distance_int4_le(simhash_distance, integer) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_distance_int4_eq(simhash_distance, integer) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_distance_int4_ge(simhash_distance, integer) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_distance_int4_gt(simhash_distance, integer) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_distance_int8_lt(simhash_distance, bigint) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_distance_int8_le(simhash_distance, bigint) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_distance_int8_eq(simhash_distance, bigint) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_distance_int8_ge(simhash_distance, bigint) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_distance_int8_gt(simhash_distance, bigint) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_int2_distance_lt(smallint, simhash_distance) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_int2_distance_le(smallint, simhash_distance) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_int2_distance_eq(smallint, simhash_distance) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_int2_distance_ge(smallint, simhash_distance) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_int2_distance_gt(smallint, simhash_distance) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_int4_distance_lt(integer, simhash_distance) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_int4_distance_le(integer, simhash_distance) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_int4_distance_eq(integer, simhash_distance) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_int4_distance_ge(integer, simhash_distance) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_int4_distance_gt(integer, simhash_distance) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_int8_distance_lt(bigint, simhash_distance) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_int8_distance_le(bigint, simhash_distance) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_int8_distance_eq(bigint, simhash_distance) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_int8_distance_ge(bigint, simhash_distance) SUPPORT simhash_distance_support;
ALTER FUNCTION simhash_int8_distance_gt(bigint, simhash_distance) SUPPORT simhash_distance_support;

--------------------------------------------------------------------------
-- the simhash index access method
-- CREATE INDEX ON docs USING simhash (h) WITH (blocks = 4, max_distance = 3)
-- answers h <@ simhash_ball(q, k), into which the planner support of the
-- simhash_distance comparisons rewrites h <~> q <= k.
--------------------------------------------------------------------------

CREATE FUNCTION simhash_handler(internal) RETURNS index_am_handler
	AS 'MODULE_PATHNAME' LANGUAGE C;
CREATE ACCESS METHOD simhash TYPE INDEX HANDLER simhash_handler;
COMMENT ON ACCESS METHOD simhash IS 'exact Hamming-distance search on permuted block prefixes';

CREATE OPERATOR CLASS simhash_ops DEFAULT FOR TYPE simhash64 USING simhash AS
	OPERATOR 1 <@ (simhash64, simhash_ball),
	OPERATOR 2 <~> (simhash64, simhash64) FOR ORDER BY simhash_distance_ops;

CREATE FUNCTION simhash_index_check(index regclass, heapallindexed boolean DEFAULT false)
	RETURNS void AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION simhash_index_check(regclass, boolean) IS 'verify a simhash index, optionally against its table';

--------------------------------------------------------------------------
-- sentence fingerprints (the nshash method): the hashes of a text's n
-- longest distinct sentences; documents sharing one are reposts.
--   CREATE INDEX ON docs USING gin (sentence_hashes(body));
--   SELECT id FROM docs WHERE sentence_hashes(body) && sentence_hashes($1);
--------------------------------------------------------------------------

CREATE FUNCTION sentence_hashes(body text, n integer DEFAULT 5, min_length integer DEFAULT 20)
	RETURNS bigint[]
	AS 'MODULE_PATHNAME', 'sentence_hashes'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10;
COMMENT ON FUNCTION sentence_hashes(text, integer, integer) IS 'XXH3-64 hashes of the n longest distinct sentences of at least min_length letters, ascending';

--------------------------------------------------------------------------
-- MinHash and LSH (src/minhash.c, src/minhash_sql.c; README "MinHash and
-- LSH"): the minhash signature type, minhash(), minhash_jaccard(), exact
-- jaccard(), band keys for GIN, the LSH parameter helper.
--------------------------------------------------------------------------

CREATE TYPE minhash_signature;

CREATE FUNCTION minhash_signature_in(cstring) RETURNS minhash_signature
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION minhash_signature_out(minhash_signature) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION minhash_signature_recv(internal) RETURNS minhash_signature
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION minhash_signature_send(minhash_signature) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE minhash_signature (
	INPUT = minhash_signature_in,
	OUTPUT = minhash_signature_out,
	RECEIVE = minhash_signature_recv,
	SEND = minhash_signature_send,
	INTERNALLENGTH = VARIABLE,
	ALIGNMENT = int4,
	STORAGE = extended
);
COMMENT ON TYPE minhash_signature IS 'MinHash signature with its parameters (n_gram, n_gram_type, permutations, seed)';

CREATE FUNCTION minhash(body text, n_gram integer DEFAULT 9, n_gram_type text DEFAULT 'char',
						permutations integer DEFAULT 128, seed bigint DEFAULT 0)
	RETURNS minhash_signature
	AS 'MODULE_PATHNAME', 'minhash_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10;
COMMENT ON FUNCTION minhash(text, integer, text, integer, bigint) IS 'MinHash signature of the char or term shingles of a text';

CREATE FUNCTION minhash(features text[], permutations integer DEFAULT 128, seed bigint DEFAULT 0)
	RETURNS minhash_signature
	AS 'MODULE_PATHNAME', 'minhash_array' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10;
COMMENT ON FUNCTION minhash(text[], integer, bigint) IS 'MinHash signature of a set of precomputed features (n_gram_type feature)';

CREATE FUNCTION minhash_jaccard(minhash_signature, minhash_signature) RETURNS float8
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_jaccard(minhash_signature, minhash_signature) IS 'estimated Jaccard similarity: the fraction of equal slots';

CREATE FUNCTION jaccard(a text, b text, n_gram integer DEFAULT 9, n_gram_type text DEFAULT 'char')
	RETURNS float8
	AS 'MODULE_PATHNAME', 'minhash_jaccard_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 20;
COMMENT ON FUNCTION jaccard(text, text, integer, text) IS 'exact Jaccard similarity of the shingle sets of two texts';

CREATE FUNCTION jaccard(a text[], b text[]) RETURNS float8
	AS 'MODULE_PATHNAME', 'minhash_jaccard_array' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 20;
COMMENT ON FUNCTION jaccard(text[], text[]) IS 'exact Jaccard similarity of two sets of features';

CREATE FUNCTION minhash_shingles(body text, n_gram integer DEFAULT 9, n_gram_type text DEFAULT 'char')
	RETURNS text[]
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10;
COMMENT ON FUNCTION minhash_shingles(text, integer, text) IS 'the shingles minhash() and jaccard() use, in text order';

CREATE FUNCTION minhash_slots(minhash_signature) RETURNS bigint[]
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_slots(minhash_signature) IS 'the slot values of a signature (empty array for an empty signature)';

CREATE FUNCTION minhash_bands(sig minhash_signature, bands integer) RETURNS bigint[]
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_bands(minhash_signature, integer) IS 'LSH band keys (band number in the top 16 bits), permutations / bands rows each';

CREATE FUNCTION minhash_bands(sig minhash_signature, bands integer, rows integer) RETURNS bigint[]
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_bands(minhash_signature, integer, integer) IS 'LSH band keys of bands × rows slots';

CREATE FUNCTION minhash_shared_bands(a minhash_signature, b minhash_signature, bands integer) RETURNS integer
	AS 'MODULE_PATHNAME', 'minhash_shared_bands_sql' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_shared_bands(minhash_signature, minhash_signature, integer) IS 'number of LSH bands in which two signatures are equal (SnaPy''s sensitivity)';

CREATE FUNCTION minhash_shared_bands(a minhash_signature, b minhash_signature, bands integer, rows integer) RETURNS integer
	AS 'MODULE_PATHNAME', 'minhash_shared_bands_sql' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_shared_bands(minhash_signature, minhash_signature, integer, integer) IS 'number of LSH bands of rows slots in which two signatures are equal';

CREATE FUNCTION minhash_lsh_probability(similarity float8, bands integer, rows integer) RETURNS float8
	AS 'MODULE_PATHNAME', 'minhash_lsh_probability_sql' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_lsh_probability(float8, integer, integer) IS 'probability that a pair of this Jaccard similarity shares a band: 1 - (1 - s^rows)^bands';

CREATE FUNCTION minhash_lsh_params(threshold float8, permutations integer DEFAULT 128,
								   false_positive_weight float8 DEFAULT 0.5,
								   false_negative_weight float8 DEFAULT 0.5,
								   OUT bands integer, OUT rows integer,
								   OUT false_positive float8, OUT false_negative float8)
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION minhash_lsh_params(float8, integer, float8, float8) IS 'bands × rows for a Jaccard threshold, minimising the weighted error areas under the S-curve';

-- MinHash dedup jobs (src/dedup_keys.c): candidate pairs share an LSH band
-- of the signature column, and are kept when the estimate reaches threshold
-- (exact on the estimate when threshold > 1 - bands / permutations).
CREATE FUNCTION minhash_pairs(relation regclass, id_column name, sig_column name,
		threshold float8 DEFAULT 0.8, bands integer DEFAULT 32, max_key_rows integer DEFAULT 10000)
	RETURNS TABLE (id_a bigint, id_b bigint, jaccard float8)
	AS 'MODULE_PATHNAME', 'minhash_pairs'
	LANGUAGE C STABLE CALLED ON NULL INPUT PARALLEL RESTRICTED ROWS 1000;
COMMENT ON FUNCTION minhash_pairs(regclass, name, name, float8, integer, integer) IS 'pairs of rows (bigint ids) whose signatures estimate a Jaccard similarity of at least threshold, found through LSH bands';

CREATE FUNCTION minhash_pairs(relation regclass, id_column name, sig_column name, id_type anyelement,
		threshold float8 DEFAULT 0.8, bands integer DEFAULT 32, max_key_rows integer DEFAULT 10000)
	RETURNS TABLE (id_a anyelement, id_b anyelement, jaccard float8)
	AS 'MODULE_PATHNAME', 'minhash_pairs_typed'
	LANGUAGE C STABLE CALLED ON NULL INPUT PARALLEL RESTRICTED ROWS 1000;
COMMENT ON FUNCTION minhash_pairs(regclass, name, name, anyelement, float8, integer, integer) IS 'pairs of rows (ids of id_type''s type) whose signatures estimate a Jaccard similarity of at least threshold';

CREATE FUNCTION minhash_groups(relation regclass, id_column name, sig_column name,
		threshold float8 DEFAULT 0.8, bands integer DEFAULT 32, max_key_rows integer DEFAULT 10000)
	RETURNS TABLE (id bigint, group_id bigint)
	AS 'MODULE_PATHNAME', 'minhash_groups'
	LANGUAGE C STABLE CALLED ON NULL INPUT PARALLEL RESTRICTED ROWS 1000;
COMMENT ON FUNCTION minhash_groups(regclass, name, name, float8, integer, integer) IS 'connected groups of the pairs of minhash_pairs; group_id is the least (bigint) id';

CREATE FUNCTION minhash_groups(relation regclass, id_column name, sig_column name, id_type anyelement,
		threshold float8 DEFAULT 0.8, bands integer DEFAULT 32, max_key_rows integer DEFAULT 10000)
	RETURNS TABLE (id anyelement, group_id anyelement)
	AS 'MODULE_PATHNAME', 'minhash_groups_typed'
	LANGUAGE C STABLE CALLED ON NULL INPUT PARALLEL RESTRICTED ROWS 1000;
COMMENT ON FUNCTION minhash_groups(regclass, name, name, anyelement, float8, integer, integer) IS 'connected groups of the pairs of minhash_pairs; group_id is the least id, of id_type''s type';
