/* sql/simhash.sql: the source of the install script of the current version
 *
 * Every SQL object of the extension, ordered by type and then by object kind:
 *   1. simhash64            type and I/O, comparison, casts
 *   2. simhash_distance     type and I/O, casts, <~>, the operator grid with
 *                           integer, numeric and float8 operands, btree/hash
 *   3. simhash_ball         type and I/O, <@, @> and &&, simhash_within
 *   4. minhash_signature    type and I/O
 *   5. the simhash index access method, its operator class, its check
 *   6. text fingerprints    simhash(), simhash_v2(), simhash_compute(), ...
 *   7. sentence fingerprints
 *   8. MinHash and LSH functions
 *   9. aggregates           min/max(simhash64), simhash_agg
 *  10. pair search and dedup jobs   simhash_find_all, simhash_pairs/_groups,
 *                           the distance histogram, Citus, shared keys, MinHash
 *  11. privileges
 *
 * The Makefile builds sql/simhash--<version>.sql (the version in the Makefile's
 * EXTVERSION and simhash.control) from this file: each line
 * "--@generate distance_grid.sh PART" is replaced by the output of
 * `sh sql/distance_grid.sh PART` (the simhash_distance operator grid); nothing
 * else changes.
 *
 * Changing an SQL object: make the change here, where its family is, AND in
 * the upgrade script from the previous release (sql/simhash--<prev>--<next>.sql,
 * today sql/simhash--1.0--1.1.sql, in a section headed by its subject).
 * test/t/005_upgrade.pl proves that they agree: a database upgraded from 1.0
 * must have exactly the objects of a fresh install from this file (member
 * objects, function definitions, a --binary-upgrade schema dump).  Released
 * scripts (sql/simhash--1.0.sql, tag v1.0) are never edited.
 */

\echo Use "CREATE EXTENSION simhash" to load this file. \quit

--------------------------------------------------------------------------
-- 1. simhash64: a 64-bit fingerprint, printed as 16 hex digits, ordered as
-- an unsigned integer.  Same representation as int8.
--------------------------------------------------------------------------

-- type and I/O

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

-- casts: bigint is bit-identical (two's complement); bit(64) is MSB first;
-- 12345::simhash64 is 12345::bigint::simhash64 (sign-extended)

CREATE CAST (simhash64 AS bigint) WITHOUT FUNCTION;
CREATE CAST (bigint AS simhash64) WITHOUT FUNCTION;

CREATE FUNCTION simhash64_to_bit(simhash64) RETURNS bit
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bit_to_simhash64(bit) RETURNS simhash64
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE CAST (simhash64 AS bit) WITH FUNCTION simhash64_to_bit(simhash64);
CREATE CAST (bit AS simhash64) WITH FUNCTION bit_to_simhash64(bit);

CREATE FUNCTION simhash64_from_int4(integer) RETURNS simhash64
	AS 'int48' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE CAST (integer AS simhash64) WITH FUNCTION simhash64_from_int4(integer);
CREATE FUNCTION simhash64_from_int2(smallint) RETURNS simhash64
	AS 'int28' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE CAST (smallint AS simhash64) WITH FUNCTION simhash64_from_int2(smallint);

-- numeric is the unsigned value (0 .. 2^64-1): what a client sends for an
-- integer above 2^63-1, so that $1::simhash64 takes any integer a driver sends
CREATE FUNCTION simhash64_from_numeric(numeric) RETURNS simhash64
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE CAST (numeric AS simhash64) WITH FUNCTION simhash64_from_numeric(numeric);

--------------------------------------------------------------------------
-- 2. simhash_distance: what <~> returns.  An integer (int4 representation)
-- with its own type, so that the functions behind its comparison operators
-- can carry planner support; implicitly cast to integer.
--------------------------------------------------------------------------

-- type and I/O: the domain 0..64 is enforced by every input path (text,
-- binary, the cast from integer); output and send are int4's

CREATE TYPE simhash_distance;

CREATE FUNCTION simhash_distance_in(cstring) RETURNS simhash_distance
	AS 'MODULE_PATHNAME', 'simhash_distance_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_distance_out(simhash_distance) RETURNS cstring
	AS 'int4out' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_distance_recv(internal) RETURNS simhash_distance
	AS 'MODULE_PATHNAME', 'simhash_distance_recv' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
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

-- casts.  PostgreSQL does not chain casts: (a <~> b)::bigint etc. need their
-- own.  A cast to numeric or float8 cannot be made implicit: float8 is the
-- preferred type of the numeric category, so sum(d) or d + d would turn into
-- float8; the operator grid below gives exact matches instead.  JSON:
-- to_json, row_to_json, json_agg and jsonb print a distance as a number.

CREATE CAST (simhash_distance AS integer) WITHOUT FUNCTION AS IMPLICIT;

CREATE FUNCTION simhash_distance_from_int4(integer) RETURNS simhash_distance
	AS 'MODULE_PATHNAME', 'simhash_distance_from_int4' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_distance_from_int4(integer) IS 'cast to simhash_distance: 22003 outside 0..64';
CREATE CAST (integer AS simhash_distance) WITH FUNCTION simhash_distance_from_int4(integer) AS ASSIGNMENT;

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

CREATE FUNCTION simhash_distance_to_json(simhash_distance) RETURNS json
	AS 'SELECT pg_catalog.to_json($1::pg_catalog.int4)'
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_distance_to_jsonb(simhash_distance) RETURNS jsonb
	AS 'SELECT pg_catalog.to_jsonb($1::pg_catalog.int4)'
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE;
CREATE CAST (simhash_distance AS json) WITH FUNCTION simhash_distance_to_json(simhash_distance);
CREATE CAST (simhash_distance AS jsonb) WITH FUNCTION simhash_distance_to_jsonb(simhash_distance);

-- the distance of two fingerprints

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

-- comparisons: < <= = >= > <> of simhash_distance with itself, smallint,
-- integer, bigint, numeric and double precision, either side (generated: see
-- sql/distance_grid.sh for the names and attributes).  The comparisons with
-- integers other than <> carry the planner support below: (a <~> b) <= k,
-- < k, = 0 and their commuted forms become simhash_within (section 3), which
-- an index on a or b answers.

CREATE FUNCTION simhash_distance_support(internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

--@generate distance_grid.sh comparisons

-- arithmetic: + - * / with the same operand types (generated).  Numeric and
-- float8 operands have operators of their own, so integer operands get exact
-- matches too (the int4/int8 functions PostgreSQL resolved to before), and
-- d / 2, d + d or 64 - d resolve and return the types they always did.

--@generate distance_grid.sh arithmetic

-- btree (ORDER BY, merge joins, indexes): simhash_distance_ops, with the
-- integer operands of either side as cross-type members (generated)

--@generate distance_grid.sh btree

-- descriptions of the grid and of simhash64's comparisons, in PostgreSQL's
-- own words: each operator says what it does ("less than or equal",
-- "add"), each function behind one is
-- "implementation of <= operator", the btree support functions
-- "less-equal-greater", so that \df+ and \do+ tell the support objects
-- from the functions meant to be called
DO $grid$
DECLARE
	f record;
BEGIN
	FOR f IN
		SELECT p.oid::regprocedure AS fn, o.oid::regoperator AS op, o.oprname
		FROM pg_catalog.pg_proc p
		LEFT JOIN pg_catalog.pg_operator o ON o.oprcode = p.oid
		WHERE p.pronamespace = (SELECT e.extnamespace FROM pg_catalog.pg_extension e WHERE e.extname = 'simhash')
		  AND (p.proname ~ '^simhash_(distance|int2|int4|int8|numeric|float8)(_distance|_int2|_int4|_int8|_numeric|_float8)?_(eq|ne|lt|le|gt|ge|cmp|pl|mi|mul|div)$'
		       OR p.proname ~ '^simhash64_(eq|ne|lt|le|gt|ge|cmp)$')
	LOOP
		IF f.op IS NULL THEN
			EXECUTE format('COMMENT ON FUNCTION %s IS %L', f.fn, 'less-equal-greater');
		ELSE
			EXECUTE format('COMMENT ON FUNCTION %s IS %L', f.fn, format('implementation of %s operator', f.oprname));
			EXECUTE format('COMMENT ON OPERATOR %s IS %L', f.op, CASE f.oprname
				WHEN '<' THEN 'less than' WHEN '<=' THEN 'less than or equal' WHEN '=' THEN 'equal'
				WHEN '>=' THEN 'greater than or equal' WHEN '>' THEN 'greater than' WHEN '<>' THEN 'not equal'
				WHEN '+' THEN 'add' WHEN '-' THEN 'subtract' WHEN '*' THEN 'multiply' WHEN '/' THEN 'divide' END);
		END IF;
	END LOOP;
END
$grid$;

-- hash (GROUP BY, hash joins): int4's

CREATE FUNCTION simhash_distance_hash(simhash_distance) RETURNS integer
	AS 'hashint4' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION simhash_distance_hash_extended(simhash_distance, bigint) RETURNS bigint
	AS 'hashint4extended' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OPERATOR CLASS simhash_distance_ops DEFAULT FOR TYPE simhash_distance USING hash AS
	OPERATOR 1 = (simhash_distance, simhash_distance),
	FUNCTION 1 simhash_distance_hash(simhash_distance),
	FUNCTION 2 simhash_distance_hash_extended(simhash_distance, bigint);

--------------------------------------------------------------------------
-- 3. simhash_ball: the fingerprints within radius bits of center.  16
-- bytes: center, radius (-1 = empty .. 64), zero padding.  Text form
-- (center,radius).  h <@ simhash_ball(q, k) is what the simhash index
-- answers; the planner support turns (h <~> q) <= k into
-- simhash_within(h, q, k) and that into the index condition (src/types/
-- planner.c).
--------------------------------------------------------------------------

-- type and I/O

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

-- operators <@ and @>, with their selectivity (also that of simhash_within,
-- through simhash_within_support)

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

-- simhash_ball && simhash_ball: each ball holds the other's center, so two
-- balls of radius k are "near" when their centers are within k bits.  The
-- operator of near-duplicate exclusion constraints,
-- EXCLUDE USING simhash (simhash_ball(h, k) WITH &&); commutative, as
-- exclusion constraints require.

CREATE FUNCTION simhash_ball_near(simhash_ball, simhash_ball) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION simhash_ball_near(simhash_ball, simhash_ball) IS 'hamming_distance of the centers <= the smaller radius';
CREATE OPERATOR && (
	LEFTARG = simhash_ball, RIGHTARG = simhash_ball, FUNCTION = simhash_ball_near,
	COMMUTATOR = &&, RESTRICT = contsel, JOIN = contjoinsel
);
COMMENT ON OPERATOR && (simhash_ball, simhash_ball) IS 'centers within the smaller radius (near-duplicates)';

-- simhash_within(a, b, k) = hamming_distance(a, b) <= k; its support makes it
-- the index condition a <@ simhash_ball(b, k)

CREATE FUNCTION simhash_within_support(internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_within(a simhash64, b simhash64, max_distance bigint) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF
	SUPPORT simhash_within_support;
COMMENT ON FUNCTION simhash_within(simhash64, simhash64, bigint) IS 'hamming_distance(a, b) <= max_distance';

--------------------------------------------------------------------------
-- 4. minhash_signature: a MinHash signature with its parameters (section 8,
-- src/minhash/)
--------------------------------------------------------------------------

-- type and I/O

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

--------------------------------------------------------------------------
-- 5. the simhash index access method (src/index/)
-- CREATE INDEX ON docs USING simhash (h) WITH (blocks = 4, max_distance = 3)
-- answers h <@ simhash_ball(q, k), into which the planner support of the
-- simhash_distance comparisons rewrites h <~> q <= k, and orders by <~>.
--------------------------------------------------------------------------

CREATE FUNCTION simhash_handler(internal) RETURNS index_am_handler
	AS 'MODULE_PATHNAME' LANGUAGE C;
CREATE ACCESS METHOD simhash TYPE INDEX HANDLER simhash_handler;
COMMENT ON ACCESS METHOD simhash IS 'exact Hamming-distance search on permuted block prefixes';

CREATE OPERATOR CLASS simhash_ops DEFAULT FOR TYPE simhash64 USING simhash AS
	OPERATOR 1 <@ (simhash64, simhash_ball),
	OPERATOR 2 <~> (simhash64, simhash64) FOR ORDER BY simhash_distance_ops;

-- the key of a near-duplicate exclusion constraint,
-- EXCLUDE USING simhash (simhash_ball(h, k) WITH &&): the index keeps each
-- ball's center and answers && (rechecked: the radii may differ)
CREATE OPERATOR CLASS simhash_ball_ops DEFAULT FOR TYPE simhash_ball USING simhash AS
	OPERATOR 3 && (simhash_ball, simhash_ball);
COMMENT ON OPERATOR CLASS simhash_ball_ops USING simhash IS 'simhash_ball keys of near-duplicate exclusion constraints, EXCLUDE USING simhash (simhash_ball(h, k) WITH &&): the index stores the centers, radii 0 to 16';

-- for the index's owner (section 11); it checks ownership and the access
-- method in C before taking any lock
CREATE FUNCTION simhash_index_check(index regclass, heapallindexed boolean DEFAULT false)
	RETURNS void AS 'MODULE_PATHNAME' LANGUAGE C STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION simhash_index_check(regclass, boolean) IS 'verify a simhash index, optionally against its table';

--------------------------------------------------------------------------
-- 6. text fingerprints (src/text/)
--------------------------------------------------------------------------

-- the parts: feature hash, simhash of features, tokens, shingles

CREATE FUNCTION simhash_hash(text) RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_hash(text) IS 'feature hash: XXH3-64 of the UTF-8 bytes';

-- simhash_compute(text[], float8[]) is deliberately absent: with two array
-- overloads a call with numeric[], integer[] or '{...}' weights would be
-- ambiguous (array types have no preferred type); write weights::real[].
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

-- simhash of a text, and the features it votes with

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

-- version 2: the same tokens and shingles as simhash(text, window), but a
-- feature made only of letters of scripts written without spaces (Han, Kana,
-- Hangul, Thai, ...) votes with min(count, 8) instead of
-- 1 + floor(2 log2(count)); other features vote as in simhash(text).  A text
-- without features gives NULL (simhash(text) gives 0000000000000000).  New
-- names, so that simhash(body[, n]) and simhash_features(body[, n]) resolve
-- as before; "width" is not a reserved word, so simhash_v2(body, width => 3)
-- parses.

CREATE FUNCTION simhash_v2(body text, width integer DEFAULT 1) RETURNS simhash64
	AS 'MODULE_PATHNAME', 'simhash_text_v2'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10;
COMMENT ON FUNCTION simhash_v2(text, integer) IS 'simhash of a text, version 2: CJK features weighted by min(count, 8); NULL when the text has no features';

CREATE FUNCTION simhash_features_v2(body text, width integer DEFAULT 1,
		OUT feature text, OUT count integer, OUT weight integer) RETURNS SETOF record
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10 ROWS 100;
COMMENT ON FUNCTION simhash_features_v2(text, integer) IS 'the weighted features simhash_v2(text) votes with';

--------------------------------------------------------------------------
-- 7. sentence fingerprints (the nshash method; src/sentences/): the hashes
-- of a text's n longest distinct sentences; documents sharing one are
-- reposts.
--   CREATE INDEX ON docs USING gin (sentence_hashes(body));
--   SELECT id FROM docs WHERE sentence_hashes(body) && sentence_hashes($1);
--------------------------------------------------------------------------

CREATE FUNCTION sentence_hashes(body text, n integer DEFAULT 5, min_length integer DEFAULT 20)
	RETURNS bigint[]
	AS 'MODULE_PATHNAME', 'sentence_hashes'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10;
COMMENT ON FUNCTION sentence_hashes(text, integer, integer) IS 'XXH3-64 hashes of the n longest distinct sentences of at least min_length letters, ascending';

--------------------------------------------------------------------------
-- 8. MinHash and LSH (src/minhash/; README "MinHash and LSH"): minhash(),
-- minhash_jaccard(), exact jaccard(), band keys for GIN, the LSH parameter
-- helper.  The type is in section 4, the dedup jobs in section 10.
--------------------------------------------------------------------------

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

--------------------------------------------------------------------------
-- 9. aggregates
--------------------------------------------------------------------------

-- min and max of simhash64 (in its unsigned order)

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

-- simhash_agg: the simhash of features stored as rows, unweighted or
-- weighted (real; double precision and numeric weights are rounded to real,
-- so that calls resolving to them give the fingerprints they gave as real)

CREATE FUNCTION simhash_agg_transfn(internal, text) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION simhash_agg_transfn(internal, text, real) RETURNS internal
	AS 'MODULE_PATHNAME', 'simhash_agg_weighted_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION simhash_agg_transfn(internal, text, double precision) RETURNS internal
	AS 'MODULE_PATHNAME', 'simhash_agg_float8_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION simhash_agg_transfn(internal, text, numeric) RETURNS internal
	AS 'MODULE_PATHNAME', 'simhash_agg_numeric_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
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

CREATE AGGREGATE simhash_agg(text, double precision) (
	SFUNC = simhash_agg_transfn, STYPE = internal, SSPACE = 1100,
	FINALFUNC = simhash_agg_finalfn, COMBINEFUNC = simhash_agg_combinefn,
	SERIALFUNC = simhash_agg_serialfn, DESERIALFUNC = simhash_agg_deserialfn,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE simhash_agg(text, double precision) IS 'simhash of weighted feature rows (weights rounded to real)';

CREATE AGGREGATE simhash_agg(text, numeric) (
	SFUNC = simhash_agg_transfn, STYPE = internal, SSPACE = 1100,
	FINALFUNC = simhash_agg_finalfn, COMBINEFUNC = simhash_agg_combinefn,
	SERIALFUNC = simhash_agg_serialfn, DESERIALFUNC = simhash_agg_deserialfn,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE simhash_agg(text, numeric) IS 'simhash of weighted feature rows (weights rounded to real)';

--------------------------------------------------------------------------
-- 10. pair search and dedup jobs (src/dedup/)
--------------------------------------------------------------------------

-- simhash_find_all: every pair of array elements within max_distance bits
-- (the seed's find_all), by sorted permuted tables: C(blocks, max_distance)
-- passes.  The input parameter is max_distance because the output column is
-- distance.  Defaults as simhash_pairs' (3 bits, 5 blocks); the 1.0
-- positional order (hashes, blocks, max_distance) is kept.
CREATE FUNCTION simhash_find_all(hashes simhash64[], blocks integer DEFAULT 5, max_distance integer DEFAULT 3)
	RETURNS TABLE (a simhash64, b simhash64, distance integer)
	AS 'MODULE_PATHNAME', 'simhash_find_all'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 1000;
COMMENT ON FUNCTION simhash_find_all(simhash64[], integer, integer) IS 'all pairs of elements within max_distance bits, each once, a <= b';

-- table-scale dedup jobs: every near-duplicate pair of a table with its
-- ids, and a group id for every row; one read of the table, within
-- maintenance_work_mem (temporary files beyond it), the caller's privileges.
--   SELECT * FROM simhash_pairs('docs', 'id', 'h', 3);
--   SELECT * FROM simhash_groups('docs', 'id', 'h', 3, 'leader');
-- Ids are bigint unless id_type (a NULL of the ids' type) says otherwise:
--   SELECT * FROM simhash_pairs('docs', 'id', 'h', id_type => NULL::uuid);

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

-- distance histogram of a table's near pairs (to choose k).  Counts the pairs
-- of rows (each once, by ctid) whose fingerprints are at most max_distance
-- bits apart, by distance 0..max_distance, with the running total and a text
-- bar (bar_width characters for the largest count, at least one for any
-- non-zero count).  Built on simhash_pairs, so it needs what that job needs
-- (maintenance_work_mem, temporary files); it finds simhash_pairs in the
-- extension's own schema, wherever the extension was created or moved, and
-- runs with search_path = pg_catalog, pg_temp and typed arguments, so that no
-- overload or operator another role plants on the caller's path runs.
CREATE FUNCTION simhash_distance_histogram(relation regclass, hash_column name,
		max_distance integer DEFAULT 8, bar_width integer DEFAULT 50)
	RETURNS TABLE (distance integer, pairs bigint, cumulative bigint, bar text)
	LANGUAGE plpgsql STABLE STRICT PARALLEL RESTRICTED ROWS 9
	SET search_path = pg_catalog, pg_temp
	AS $fn$
DECLARE
	ext_schema name;
	ext_oid oid;
	intruder pg_catalog.regprocedure;
BEGIN
	IF max_distance < 0 OR max_distance > 64 THEN
		RAISE EXCEPTION 'max_distance must be between 0 and 64, not %', max_distance
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF bar_width < 1 OR bar_width > 1000 THEN
		RAISE EXCEPTION 'bar_width must be between 1 and 1000, not %', bar_width
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	SELECT n.nspname, e.oid INTO ext_schema, ext_oid
	FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'simhash';
	-- a function of another owner named simhash_pairs in the extension's
	-- schema could win the call below over the polymorphic original (a
	-- concrete id_type beats anyelement): refuse to run beside one
	SELECT p.oid INTO intruder FROM pg_catalog.pg_proc p
	WHERE p.proname OPERATOR(pg_catalog.=) 'simhash_pairs'::pg_catalog.name
	  AND p.pronamespace OPERATOR(pg_catalog.=) (SELECT e.extnamespace FROM pg_catalog.pg_extension e
	                                             WHERE e.oid OPERATOR(pg_catalog.=) ext_oid)
	  AND NOT EXISTS (SELECT FROM pg_catalog.pg_depend d
	                  WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
	                    AND d.objid OPERATOR(pg_catalog.=) p.oid
	                    AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
	                    AND d.refobjid OPERATOR(pg_catalog.=) ext_oid
	                    AND d.deptype OPERATOR(pg_catalog.=) 'e'::pg_catalog.char)
	LIMIT 1;
	IF intruder IS NOT NULL THEN
		RAISE EXCEPTION 'function % is not a member of extension simhash but shares the name of its simhash_pairs', intruder
			USING ERRCODE = 'ambiguous_function',
			      HINT = 'Drop or rename it: it could run in place of the extension''s function.';
	END IF;
	RETURN QUERY EXECUTE format($q$
		WITH counts AS (
			SELECT p.distance, pg_catalog.count(*) AS pairs
			FROM %I.simhash_pairs($1, 'ctid'::pg_catalog.name, $2, NULL::pg_catalog.tid, $3) p
			GROUP BY p.distance),
		hist AS (
			SELECT d AS distance, COALESCE(c.pairs, 0::pg_catalog.int8) AS pairs
			FROM pg_catalog.generate_series(0::pg_catalog.int4, $3) d LEFT JOIN counts c ON c.distance = d)
		SELECT h.distance, h.pairs,
			(pg_catalog.sum(h.pairs) OVER (ORDER BY h.distance))::bigint,
			pg_catalog.repeat('#', CASE WHEN h.pairs = 0 THEN 0 ELSE
				GREATEST(1, (h.pairs * $4 / GREATEST(pg_catalog.max(h.pairs) OVER (), 1))::integer) END)
		FROM hist h ORDER BY h.distance$q$, ext_schema)
	USING relation, hash_column, max_distance, bar_width;
END
$fn$;
COMMENT ON FUNCTION simhash_distance_histogram(regclass, name, integer, integer) IS 'pairs of rows by Hamming distance 0..max_distance, with a running total and a text bar chart';

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

-- MinHash dedup jobs: candidate pairs share an LSH band of the signature
-- column, and are kept when the estimate reaches threshold (exact on the
-- estimate when threshold > 1 - bands / permutations).

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

-- Citus: the functions that the dedup jobs on a Citus distributed table
-- name in the queries Citus runs on the workers (pure functions of their
-- arguments).  The jobs are the plain names (simhash_pairs, simhash_groups,
-- shared_key_*, minhash_*), which run on the workers when the relation is
-- a distributed table, and simhash_groups_into; the orchestration of those
-- jobs (checks, work tables, repartitioning, progress, grouping) is C code
-- of the library, not SQL objects.  Design: src/dedup/citus.c.

CREATE FUNCTION simhash_group_block(h simhash64, grp integer, blocks integer, max_distance integer)
	RETURNS bigint
	AS 'MODULE_PATHNAME', 'simhash_group_block'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_group_block(simhash64, integer, integer, integer) IS 'the bits of block grp of h (the partition key of table group grp)';

CREATE FUNCTION simhash_group_pairs(ids bigint[], hashes simhash64[], grp integer, blocks integer, max_distance integer)
	RETURNS TABLE (id_a bigint, id_b bigint, distance integer)
	AS 'MODULE_PATHNAME', 'simhash_group_pairs'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 100;
COMMENT ON FUNCTION simhash_group_pairs(bigint[], simhash64[], integer, integer, integer) IS 'the pairs among these rows that table group grp reports (a part of simhash_pairs)';

CREATE FUNCTION simhash_leader_groups(id_a bigint[], id_b bigint[], distance integer[])
	RETURNS TABLE (id bigint, group_id bigint)
	AS 'MODULE_PATHNAME', 'simhash_leader_groups'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 100;
COMMENT ON FUNCTION simhash_leader_groups(bigint[], bigint[], integer[]) IS 'the leader linkage of simhash_groups over the pairs of one connected group: the rows of its groups of more than one row, with their leaders';

CREATE FUNCTION minhash_params(sig minhash_signature)
	RETURNS text
	AS 'MODULE_PATHNAME', 'minhash_params'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION minhash_params(minhash_signature) IS 'a signature''s parameters as text, NULL for an empty signature (signatures compare only with equal parameters)';

-- Groups into a table: simhash_groups' groups of more than one row, as
-- rows (id, group_id) of a new table; on a Citus distributed table a
-- distributed table co-located with it (when it is distributed by the id
-- column), computed on the workers (src/dedup/citus_groups_into.c).  An
-- unqualified result_table goes where the caller's CREATE TABLE would put
-- it (the first schema of the caller's path).
CREATE FUNCTION simhash_groups_into(relation regclass, id_column name, hash_column name, result_table text,
		max_distance integer DEFAULT 3, linkage text DEFAULT 'connected', blocks integer DEFAULT NULL)
	RETURNS bigint
	AS 'MODULE_PATHNAME', 'simhash_groups_into'
	LANGUAGE C VOLATILE CALLED ON NULL INPUT;
COMMENT ON FUNCTION simhash_groups_into(regclass, name, name, text, integer, text, integer) IS 'simhash_groups'' groups of more than one row into a new table (id, group_id); on a Citus distributed table computed on the workers, co-located with it';

--------------------------------------------------------------------------
-- progress of long jobs, for other sessions (src/progress.c)
--------------------------------------------------------------------------

CREATE FUNCTION simhash_progress_info(
	OUT pid integer, OUT job text, OUT relid oid, OUT phase text,
	OUT rows_done bigint, OUT rows_total bigint, OUT pairs_found bigint,
	OUT started timestamptz)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION simhash_progress_info() IS 'the progress counters of the running simhash jobs (the rows of the view simhash_progress)';

CREATE VIEW simhash_progress AS
	SELECT pid, job, relid::regclass AS relation, phase, rows_done, rows_total,
	       pairs_found, started
	FROM simhash_progress_info();
COMMENT ON VIEW simhash_progress IS 'running simhash_pairs and simhash_groups jobs: one row per job, from the running backend''s progress slot (own role''s jobs, or all with pg_read_all_stats)';
GRANT SELECT ON simhash_progress TO PUBLIC;

--------------------------------------------------------------------------
-- 11. privileges.  Functions are executable by PUBLIC unless revoked here.
--------------------------------------------------------------------------

-- simhash_index_check is for the index's owner (and superusers), like
-- amcheck's functions
REVOKE ALL ON FUNCTION simhash_index_check(regclass, boolean) FROM PUBLIC;
