/* sql/simhash--1.0--1.1.sql: upgrade of the simhash extension from 1.0 to 1.1
 *
 * 1.0 (sql/simhash--1.0.sql, tag v1.0) is frozen.  Every change to an SQL
 * object since then is written TWICE:
 *   - here, in a section headed by its subject (between dashed lines),
 *     as statements that turn a 1.0 database into 1.1 (CREATE OR REPLACE,
 *     DROP CAST + CREATE CAST, REVOKE, ...);
 *   - in sql/simhash.sql, the ordered source of the 1.1 install script
 *     (sql/simhash--1.1.sql, built by the Makefile), as the object's final
 *     definition in the section of its family.
 * test/t/005_upgrade.pl proves that they agree: a database upgraded from 1.0
 * with this file must have exactly the objects of a fresh install (member
 * objects, function definitions and attributes, a --binary-upgrade schema
 * dump with comments and privileges).  Once 1.1 is released this file is
 * frozen too, and the next change starts sql/simhash--1.1--1.2.sql.
 */

\echo Use "ALTER EXTENSION simhash UPDATE TO '1.1'" to load this file. \quit

--------------------------------------------------------------------------
-- simhash_distance where an integer would go; double precision and numeric
-- weights; integer -> simhash64; simhash_find_all defaults
--------------------------------------------------------------------------

-- simhash_distance with numeric and double precision: comparisons and + - * /
-- in both operand orders, e.g. (a <~> b) / 64.0, d <= 3.5::float8.  A cast to
-- numeric or float8 cannot be made implicit: float8 is the preferred type of
-- the numeric category, so sum(d) or d + d would turn into float8.  Instead
-- the operators are exact matches, and because numeric and float8 operands
-- now have an operator of their own, the integer arithmetic gets exact
-- matches too (the same int4/int8 functions PostgreSQL resolved to before),
-- so that d / 2, d + d or 64 - d resolve as they did and return the same
-- types.  Comparisons with integers keep their 1.0 operators and planner
-- support; those with numeric and float8 are not index conditions.
-- Generated names: simhash_distance_<type>_<op>(simhash_distance, <type>)
-- and simhash_<type>_distance_<op>(<type>, simhash_distance), <type> one of
-- numeric, float8 (comparisons and arithmetic), int2, int4, int8, distance
-- (arithmetic); <op> lt le eq ge gt ne pl mi mul div.  The install script
-- gets the same objects from sql/distance_grid.sh.
DO $$
DECLARE
	cmp constant text[] := ARRAY[
		-- op, name, commutator, negator, restrict, join
		'<,lt,>,>=,scalarltsel,scalarltjoinsel', '<=,le,>=,>,scalarlesel,scalarlejoinsel',
		'=,eq,=,<>,eqsel,eqjoinsel', '>=,ge,<=,<,scalargesel,scalargejoinsel',
		'>,gt,<,<=,scalargtsel,scalargtjoinsel', '<>,ne,<>,=,neqsel,neqjoinsel'];
	arith constant text[] := ARRAY['+,pl', '-,mi', '*,mul', '/,div'];
	-- other operand type, its tag, the built-in function prefix for
	-- (distance, other) and (other, distance), or NULL for an SQL body
	kinds constant text[] := ARRAY[
		'numeric,numeric,,', 'double precision,float8,,',
		'smallint,int2,int42,int24', 'integer,int4,int4,int4',
		'bigint,int8,int48,int84', 'simhash_distance,distance,int4,'];
	k text[]; o text[]; kind text; op text; fn text; res text; side int;
	l text; r text;
BEGIN
	FOREACH kind IN ARRAY kinds LOOP
		k := string_to_array(kind, ',');
		FOR side IN 1..2 LOOP
			-- (distance, distance) once; (other, distance) when the other is not distance
			CONTINUE WHEN side = 2 AND k[2] = 'distance';
			IF side = 1 THEN l := 'simhash_distance'; r := k[1];
				fn := 'simhash_distance_' || k[2];
			ELSE l := k[1]; r := 'simhash_distance';
				fn := 'simhash_' || k[2] || '_distance';
			END IF;
			IF k[2] = 'distance' THEN fn := 'simhash_distance_distance'; END IF;
			-- arithmetic
			FOREACH op IN ARRAY arith LOOP
				o := string_to_array(op, ',');
				IF k[3 + side - 1] <> '' THEN
					res := CASE WHEN k[2] = 'int8' THEN 'bigint' ELSE 'integer' END;
					EXECUTE format('CREATE FUNCTION %I(%s, %s) RETURNS %s AS %L LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE',
						fn || '_' || o[2], l, r, res, k[3 + side - 1] || o[2]);
				ELSE
					EXECUTE format('CREATE FUNCTION %I(%s, %s) RETURNS %s AS %L LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE',
						fn || '_' || o[2], l, r, k[1],
						format('SELECT $1::%s OPERATOR(pg_catalog.%s) $2::%s', k[1], o[1], k[1]));
				END IF;
				EXECUTE format('CREATE OPERATOR %s (LEFTARG = %s, RIGHTARG = %s, FUNCTION = %I)',
					o[1], l, r, fn || '_' || o[2]);
			END LOOP;
			-- comparisons: only numeric and float8 are new
			CONTINUE WHEN k[2] NOT IN ('numeric', 'float8');
			FOREACH op IN ARRAY cmp LOOP
				o := string_to_array(op, ',');
				EXECUTE format('CREATE FUNCTION %I(%s, %s) RETURNS boolean AS %L LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE',
					fn || '_' || o[2], l, r,
					format('SELECT $1::%s OPERATOR(pg_catalog.%s) $2::%s', k[1], o[1], k[1]));
				EXECUTE format('CREATE OPERATOR %s (LEFTARG = %s, RIGHTARG = %s, FUNCTION = %I, COMMUTATOR = %s, NEGATOR = %s, RESTRICT = %s, JOIN = %s)',
					o[1], l, r, fn || '_' || o[2], o[3], o[4], o[5], o[6]);
			END LOOP;
		END LOOP;
	END LOOP;
END $$;

-- JSON: to_json, row_to_json, json_agg and jsonb print a distance as a number
-- (they use a type's cast to json/jsonb when it has one)
CREATE FUNCTION simhash_distance_to_json(simhash_distance) RETURNS json
	AS 'SELECT pg_catalog.to_json($1::pg_catalog.int4)'
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_distance_to_jsonb(simhash_distance) RETURNS jsonb
	AS 'SELECT pg_catalog.to_jsonb($1::pg_catalog.int4)'
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE;
CREATE CAST (simhash_distance AS json) WITH FUNCTION simhash_distance_to_json(simhash_distance);
CREATE CAST (simhash_distance AS jsonb) WITH FUNCTION simhash_distance_to_jsonb(simhash_distance);

-- 12345::simhash64 (as 12345::bigint::simhash64: sign-extended)
CREATE FUNCTION simhash64_from_int4(integer) RETURNS simhash64
	AS 'int48' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE CAST (integer AS simhash64) WITH FUNCTION simhash64_from_int4(integer);

-- weights as double precision or numeric (rounded to real, so existing calls
-- that now resolve here give the same fingerprints).  simhash_compute(text[],
-- float8[]) is deliberately absent: with two array overloads a call with
-- numeric[], integer[] or '{...}' weights would be ambiguous (array types
-- have no preferred type); write weights::real[].
CREATE FUNCTION simhash_agg_transfn(internal, text, double precision) RETURNS internal
	AS 'MODULE_PATHNAME', 'simhash_agg_float8_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION simhash_agg_transfn(internal, text, numeric) RETURNS internal
	AS 'MODULE_PATHNAME', 'simhash_agg_numeric_transfn' LANGUAGE C IMMUTABLE PARALLEL SAFE;
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

-- simhash_find_all(hashes) and simhash_find_all(hashes, max_distance => k):
-- defaults as simhash_pairs' (3 bits, 5 blocks); the 1.0 positional order
-- (hashes, blocks, max_distance) is unchanged
CREATE OR REPLACE FUNCTION simhash_find_all(hashes simhash64[], blocks integer DEFAULT 5, max_distance integer DEFAULT 3)
	RETURNS TABLE (a simhash64, b simhash64, distance integer)
	AS 'MODULE_PATHNAME', 'simhash_find_all'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 1000;

--------------------------------------------------------------------------
-- Hardening: simhash_index_check's privileges, simhash_distance's domain
--------------------------------------------------------------------------

-- simhash_index_check is for the index's owner (and superusers),
-- like amcheck's functions: not executable by PUBLIC.  It also checks, before
-- taking any lock, that the caller owns the index and that it is a simhash
-- index (in C).
REVOKE ALL ON FUNCTION simhash_index_check(regclass, boolean) FROM PUBLIC;
-- simhash_distance enforces its domain 0..64 in every input path
-- (text, binary, the cast from integer); 1.0 used int4in, int4recv and a
-- binary-coercible cast, which accepted any integer.
CREATE OR REPLACE FUNCTION simhash_distance_in(cstring) RETURNS simhash_distance
	AS 'MODULE_PATHNAME', 'simhash_distance_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OR REPLACE FUNCTION simhash_distance_recv(internal) RETURNS simhash_distance
	AS 'MODULE_PATHNAME', 'simhash_distance_recv' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION simhash_distance_from_int4(integer) RETURNS simhash_distance
	AS 'MODULE_PATHNAME', 'simhash_distance_from_int4' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_distance_from_int4(integer) IS 'cast to simhash_distance: 22003 outside 0..64';
DROP CAST (integer AS simhash_distance);
CREATE CAST (integer AS simhash_distance) WITH FUNCTION simhash_distance_from_int4(integer) AS ASSIGNMENT;

--------------------------------------------------------------------------
-- simhash_distance_histogram: the pairs of a table by distance (to choose k)
--------------------------------------------------------------------------

-- Counts the pairs of rows (each once, by ctid) whose fingerprints are at most
-- max_distance bits apart, by distance 0..max_distance, with the running total
-- and a text bar (bar_width characters for the largest count, at least one
-- for any non-zero count).  Built on simhash_pairs, so it needs what that job
-- needs (maintenance_work_mem, temporary files); it finds simhash_pairs in the
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

--------------------------------------------------------------------------
-- simhash_v2 and simhash_features_v2: CJK-aware text fingerprints
--------------------------------------------------------------------------

-- simhash_v2(text, width) and simhash_features_v2(text, width):
-- the same tokens and shingles as simhash(text, window), but a feature made
-- only of letters of scripts written without spaces (Han, Kana, Hangul, Thai,
-- ...) votes with min(count, 8) instead of 1 + floor(2 log2(count)), which
-- raises the recall of short edited Chinese passages; other features vote as
-- in simhash(text).  A text without features gives NULL (simhash(text) gives
-- 0000000000000000).  New names, so that simhash(body[, n]) and
-- simhash_features(body[, n]) resolve as before; "width" is not a reserved
-- word, so simhash_v2(body, width => 3) parses.
CREATE FUNCTION simhash_v2(body text, width integer DEFAULT 1) RETURNS simhash64
	AS 'MODULE_PATHNAME', 'simhash_text_v2'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10;
COMMENT ON FUNCTION simhash_v2(text, integer) IS 'simhash of a text, version 2: CJK features weighted by min(count, 8); NULL when the text has no features';

CREATE FUNCTION simhash_features_v2(body text, width integer DEFAULT 1,
		OUT feature text, OUT count integer, OUT weight integer) RETURNS SETOF record
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE COST 10 ROWS 100;
COMMENT ON FUNCTION simhash_features_v2(text, integer) IS 'the weighted features simhash_v2(text) votes with';

--------------------------------------------------------------------------
-- Citus: the functions the workers run, and simhash_groups_into
--------------------------------------------------------------------------

-- The functions that the dedup jobs on a Citus distributed table
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
-- Casts from smallint and numeric to simhash64, so that
-- $1::simhash64 takes every integer a client driver sends (psycopg sends a
-- Python int as smallint, integer, bigint or numeric by its size)
--------------------------------------------------------------------------

CREATE FUNCTION simhash64_from_int2(smallint) RETURNS simhash64
	AS 'int28' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE CAST (smallint AS simhash64) WITH FUNCTION simhash64_from_int2(smallint);

CREATE FUNCTION simhash64_from_numeric(numeric) RETURNS simhash64
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE CAST (numeric AS simhash64) WITH FUNCTION simhash64_from_numeric(numeric);

--------------------------------------------------------------------------
-- simhash_progress: the progress of running jobs, for other sessions
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
-- the simhash_distance grid described as support objects
--------------------------------------------------------------------------

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

--------------------------------------------------------------------------
-- near-duplicate exclusion constraints,
-- EXCLUDE USING simhash (simhash_ball(h, k) WITH &&)
--------------------------------------------------------------------------

CREATE FUNCTION simhash_ball_near(simhash_ball, simhash_ball) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION simhash_ball_near(simhash_ball, simhash_ball) IS 'hamming_distance of the centers <= the smaller radius';
CREATE OPERATOR && (
	LEFTARG = simhash_ball, RIGHTARG = simhash_ball, FUNCTION = simhash_ball_near,
	COMMUTATOR = &&, RESTRICT = contsel, JOIN = contjoinsel
);
COMMENT ON OPERATOR && (simhash_ball, simhash_ball) IS 'centers within the smaller radius (near-duplicates)';

CREATE OPERATOR CLASS simhash_ball_ops DEFAULT FOR TYPE simhash_ball USING simhash AS
	OPERATOR 3 && (simhash_ball, simhash_ball);
COMMENT ON OPERATOR CLASS simhash_ball_ops USING simhash IS 'simhash_ball keys of near-duplicate exclusion constraints, EXCLUDE USING simhash (simhash_ball(h, k) WITH &&): the index stores the centers, radii 0 to 16';
