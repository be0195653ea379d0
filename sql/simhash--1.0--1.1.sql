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
-- Citus: dedup jobs whose pair search runs on the workers
--------------------------------------------------------------------------

-- simhash_pairs_citus / simhash_groups_citus repartition the rows of a
-- distributed table by (table group, the group's block) into a distributed
-- work table (Citus moves the rows between workers), search each part on
-- the worker holding it (simhash_group_pairs, pushed down by GROUP BY on
-- the work table's distribution column) and return the pairs, or groups
-- computed from them on the coordinator.  Design: src/dedup/citus.c.

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

-- The PL/pgSQL of the *_citus jobs and of their helpers (simhash_citus_*)
-- runs with search_path = pg_catalog, pg_temp, as PostgreSQL's contrib
-- modules do: built-in names resolve in pg_catalog only, the extension's own
-- functions and types are named through its schema (read from pg_extension
-- by each function: the extension is relocatable, so @extschema@ is not
-- available), every argument of such a call is a typed $n parameter or a
-- literal of its exact type, and temporary tables are pg_temp.*.  So no
-- function, operator or table that another role plants in public or in a
-- schema on the caller's path runs or is read.  The helpers take
-- identifiers, regclass values and numbers, never SQL text, and quote what
-- they put into a query.  They stay executable by PUBLIC because the jobs
-- run with the caller's privileges (SECURITY INVOKER) and call them; a
-- helper can do nothing its caller could not do with the job itself.

-- the start of simhash_pairs_citus and of simhash_groups_into on the
-- workers: checks, the rows repartitioned by (table group, block) into the
-- work table part, and search, the query of their pairs searched part by
-- part on the workers (built here from part and numbers only)
CREATE FUNCTION simhash_citus_parts(job text, relation regclass, id_column name, hash_column name,
		max_distance integer, blocks integer, OUT part regclass, OUT search text)
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
	AS $fn$
DECLARE
	ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	             WHERE e.extname = 'simhash');
	nblocks integer := coalesce(blocks, greatest(least(max_distance + 2, 64), 1));
	moved bigint;
BEGIN
	EXECUTE format('SELECT %1$I.simhash_citus_start(%1$I.simhash_citus_job_name($1), $2, $3, $4)', ext)
		USING job, relation, id_column, hash_column;
	IF max_distance IS NULL THEN
		RAISE EXCEPTION '%: arguments must not be NULL', job USING ERRCODE = 'null_value_not_allowed';
	END IF;
	-- checks blocks
	EXECUTE format('SELECT %1$I.simhash_group_block(0::bigint::%1$I.simhash64, 0, $1, $2)', ext)
		USING nblocks, max_distance;
	-- the work table, in the relation's schema: one per session
	EXECUTE format('SELECT %I.simhash_citus_work_table($1, $2, NULL::regclass)', ext)
		INTO part USING relation, 'blocks'::text;
	FOR g IN 0 .. max_distance LOOP
		EXECUTE format('INSERT INTO %s SELECT %I.simhash_group_block(%I, %s, %s, %s), %s, %I::bigint, %I FROM %s WHERE %I IS NOT NULL',
		               part, ext, hash_column, g, nblocks, max_distance, g, id_column, hash_column, relation, hash_column);
		GET DIAGNOSTICS moved = ROW_COUNT;
		EXECUTE format('SELECT %I.simhash_citus_progress($1, $2)', ext)
			USING job, format('repartitioned %s rows for table group %s of %s', moved, g + 1, max_distance + 1);
	END LOOP;
	EXECUTE format('SELECT %I.simhash_citus_progress($1, $2)', ext)
		USING job, 'searching the parts on the workers'::text;
	search := format(
		'SELECT p.id_a, p.id_b, p.distance FROM (SELECT grp, array_agg(id) AS ids, array_agg(h) AS hs FROM %s GROUP BY bk, grp) s,'
		' LATERAL %I.simhash_group_pairs(s.ids, s.hs, s.grp, %s, %s) p', part, ext, nblocks, max_distance);
END $fn$;
COMMENT ON FUNCTION simhash_citus_parts(text, regclass, name, name, integer, integer) IS 'internal: the rows of a *_citus simhash job repartitioned, and the query of their pairs';

CREATE FUNCTION simhash_pairs_citus(relation regclass, id_column name, hash_column name,
		max_distance integer DEFAULT 3, blocks integer DEFAULT NULL)
	RETURNS TABLE (id_a bigint, id_b bigint, distance integer)
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
	AS $fn$
DECLARE
	ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	             WHERE e.extname = 'simhash');
	s record;
BEGIN
	EXECUTE format('SELECT * FROM %I.simhash_citus_parts($1, $2, $3, $4, $5, $6)', ext)
		INTO s USING 'simhash_pairs_citus'::text, relation, id_column, hash_column, max_distance, blocks;
	RETURN QUERY EXECUTE s.search;
	EXECUTE format('DROP TABLE %s', s.part);
END $fn$;
COMMENT ON FUNCTION simhash_pairs_citus(regclass, name, name, integer, integer) IS 'simhash_pairs of a Citus distributed table, searched on the workers';


-- The other jobs on the workers (shared_key_* and minhash_*): the rows' keys
-- are repartitioned by key into a work table (Citus moves them between the
-- workers), so that every key's rows, and so its global row count (the
-- max_key_rows cap), are on one shard; each shard pairs the rows of its keys;
-- the pairs are repartitioned by their first id, counted (min_shared) or
-- checked on their signatures (MinHash), and only the result reaches the
-- coordinator.  Groups: union-find on the coordinator over the pairs (for
-- shared_key_groups with min_shared = 1, one edge per row of a key).

CREATE FUNCTION simhash_citus_input(relation regclass, id_column name, value_column name, job text)
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'simhash_citus_input'
	LANGUAGE C STABLE;
COMMENT ON FUNCTION simhash_citus_input(regclass, name, name, text) IS 'internal: the argument checks of a *_citus job; true if the id column is NOT NULL';

CREATE FUNCTION simhash_citus_minhash_params(sig minhash_signature)
	RETURNS text
	AS 'MODULE_PATHNAME', 'simhash_citus_minhash_params'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_citus_minhash_params(minhash_signature) IS 'internal: a signature''s parameters as text, NULL if empty';

CREATE FUNCTION simhash_citus_progress(job text, message text)
	RETURNS void
	AS 'MODULE_PATHNAME', 'simhash_citus_progress'
	LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION simhash_citus_progress(text, text) IS 'internal: a progress NOTICE of a job on the workers (every simhash.progress_interval seconds)';

CREATE FUNCTION simhash_citus_job_name(job text)
	RETURNS text
	AS 'MODULE_PATHNAME', 'simhash_citus_job_name'
	LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION simhash_citus_job_name(text) IS 'internal: the job''s name in messages (the plain name when a plain job runs on the workers)';

-- the common start of a *_citus job: Citus installed, the single-node job's
-- argument checks, no NULL id
CREATE FUNCTION simhash_citus_start(job text, relation regclass, id_column name, value_column name)
	RETURNS void
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
	AS $fn$
DECLARE
	ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	             WHERE e.extname = 'simhash');
	id_not_null boolean;
	found_null boolean;
BEGIN
	IF to_regproc('pg_catalog.create_distributed_table') IS NULL THEN
		RAISE EXCEPTION '%: Citus is not installed in this database', job
			USING ERRCODE = 'feature_not_supported', HINT = format('Use %s().', regexp_replace(job, '_citus$', ''));
	END IF;
	IF relation IS NULL OR id_column IS NULL OR value_column IS NULL THEN
		RAISE EXCEPTION '%: arguments must not be NULL', job USING ERRCODE = 'null_value_not_allowed';
	END IF;
	EXECUTE format('SELECT %I.simhash_citus_input($1, $2, $3, $4)', ext)
		INTO id_not_null USING relation, id_column, value_column, job;
	IF NOT id_not_null THEN
		EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s WHERE %I IS NULL)', relation, id_column) INTO found_null;
		IF found_null THEN
			RAISE EXCEPTION '%: column "%" of relation %.% contains NULL', job, id_column,
				(SELECT quote_ident(n.nspname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = relation),
				quote_ident((SELECT c.relname FROM pg_class c WHERE c.oid = relation))
				USING ERRCODE = 'null_value_not_allowed', DETAIL = 'Every row needs an id to be reported by.';
		END IF;
	END IF;
END $fn$;
COMMENT ON FUNCTION simhash_citus_start(text, regclass, name, name) IS 'internal: the checks of a *_citus job';

-- a distributed work table simhash_part_<pid><suffix> in the relation's
-- schema, of one of the jobs' fixed shapes (kind), distributed by its first
-- column and co-located with colocate (NULL: Citus's default); returns it
CREATE FUNCTION simhash_citus_work_table(relation regclass, kind text, colocate regclass)
	RETURNS regclass
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
	AS $fn$
DECLARE
	ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	             WHERE e.extname = 'simhash');
	suffix text;
	columns text;
	part text;
BEGIN
	-- kind: suffix, then the columns, the first being the distribution column
	CASE kind
	WHEN 'blocks' THEN suffix := ''; columns := format('bk bigint, grp integer, id bigint, h %I.simhash64', ext);
	WHEN 'keys' THEN suffix := '_k'; columns := 'key bigint, id bigint';
	WHEN 'pairs' THEN suffix := '_p'; columns := 'a bigint, b bigint';
	WHEN 'signatures' THEN suffix := '_s'; columns := format('id bigint, sig %I.minhash_signature', ext);
	WHEN 'moved' THEN suffix := '_m'; columns := format('b bigint, a bigint, sig_a %I.minhash_signature', ext);
	WHEN 'group_pairs' THEN suffix := '_gp'; columns := 'a bigint, b bigint, d integer';
	WHEN 'edges' THEN suffix := '_ge'; columns := 'src bigint, dst bigint';
	WHEN 'labels' THEN suffix := '_gl'; columns := 'id bigint, label bigint';
	WHEN 'next_labels' THEN suffix := '_gn'; columns := 'id bigint, label bigint';
	WHEN 'grouped_pairs' THEN suffix := '_gc'; columns := 'grp bigint, a bigint, b bigint, d integer';
	ELSE
		RAISE EXCEPTION 'simhash_citus_work_table: unknown kind "%"', kind USING ERRCODE = 'invalid_parameter_value';
	END CASE;
	part := format('%I.%I', (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	                         WHERE c.oid = relation), 'simhash_part_' || pg_backend_pid() || suffix);
	EXECUTE format('CREATE TABLE %s (%s)', part, columns);
	PERFORM pg_catalog.create_distributed_table(part::regclass, split_part(columns, ' ', 1),
		colocate_with => coalesce(colocate::text, 'default'::text));
	RETURN part::regclass;
END $fn$;
COMMENT ON FUNCTION simhash_citus_work_table(regclass, text, regclass) IS 'internal: a distributed work table of a *_citus job';

-- The keys of every row, repartitioned by key (work table <part>_k: key,
-- id; each row's keys distinct); raises the single-node job's NOTICE about
-- keys shared by more than max_key_rows rows.  The keys are those of
-- keys_column, a bigint[] column (bands NULL), or the band keys of the
-- minhash_signature column keys_column (minhash_bands(keys_column, bands)).
-- Returns the work table; the keys to use are those with 2 .. max_key_rows
-- rows.
CREATE FUNCTION simhash_citus_keys(job text, relation regclass, id_column name, keys_column name,
		bands integer, max_key_rows integer)
	RETURNS regclass
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
	AS $fn$
DECLARE
	ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	             WHERE e.extname = 'simhash');
	part regclass;
	keys text;
	skipped bigint;
	moved bigint;
BEGIN
	-- the checks of the job whose keys these are (for a direct call)
	EXECUTE format('SELECT %I.simhash_citus_input($1, $2, $3, $4)', ext)
		USING relation, id_column, keys_column,
		      CASE WHEN bands IS NULL THEN 'shared_key_pairs_citus' ELSE 'minhash_pairs_citus' END::text;
	EXECUTE format('SELECT %I.simhash_citus_work_table($1, $2, NULL::regclass)', ext)
		INTO part USING relation, 'keys'::text;
	IF bands IS NULL THEN
		keys := format('r.%I', keys_column);
	ELSE
		keys := format('CASE WHEN %1$I.simhash_citus_minhash_params(r.%2$I) IS NOT NULL THEN %1$I.minhash_bands(r.%2$I, %3$s) END',
		               ext, keys_column, bands);
	END IF;
	EXECUTE format('INSERT INTO %s (key, id) SELECT k.k, r.%I::bigint FROM %s r,'
	               ' LATERAL (SELECT DISTINCT u.k FROM unnest(%s) u(k) WHERE u.k IS NOT NULL) k',
	               part, id_column, relation, keys);
	GET DIAGNOSTICS moved = ROW_COUNT;
	EXECUTE format('SELECT %I.simhash_citus_progress($1, $2)', ext)
		USING job, format('repartitioned %s (key, row) pairs by key', moved);
	EXECUTE format('SELECT count(*) FROM (SELECT key FROM %s GROUP BY key HAVING count(*) > %s) s',
	               part, max_key_rows) INTO skipped;
	IF skipped > 0 THEN
		RAISE NOTICE '%: skipped % keys shared by more than % rows', job, skipped, max_key_rows
			USING HINT = 'Raise max_key_rows to use them.';
	END IF;
	RETURN part;
END $fn$;
COMMENT ON FUNCTION simhash_citus_keys(text, regclass, name, name, integer, integer) IS 'internal: the keys of a *_citus job, repartitioned by key';

-- every pair of rows of every used key (2 .. max_key_rows rows) of the
-- work table keys, (smaller id, larger id), once per shared key,
-- repartitioned by the smaller id into the work table <part>_p (a, b),
-- co-located with colocate (NULL: Citus's default); returns it
CREATE FUNCTION simhash_citus_key_pairs(relation regclass, keys regclass, max_key_rows integer, colocate regclass)
	RETURNS regclass
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
	AS $fn$
DECLARE
	ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	             WHERE e.extname = 'simhash');
	part regclass;
	moved bigint;
BEGIN
	EXECUTE format('SELECT %I.simhash_citus_work_table($1, $2, $3)', ext)
		INTO part USING relation, 'pairs'::text, colocate;
	EXECUTE format('WITH used AS (SELECT x.key, x.id FROM %1$s x JOIN (SELECT key FROM %1$s GROUP BY key'
	               ' HAVING count(*) BETWEEN 2 AND %2$s) u ON u.key = x.key)'
	               ' INSERT INTO %3$s (a, b) SELECT x.id, y.id FROM used x JOIN used y ON y.key = x.key AND x.id < y.id',
	               keys, max_key_rows, part);
	GET DIAGNOSTICS moved = ROW_COUNT;
	EXECUTE format('SELECT %I.simhash_citus_progress($1, $2)', ext)
		USING 'simhash_citus_key_pairs'::text, format('repartitioned %s candidate pairs by their first id', moved);
	RETURN part;
END $fn$;
COMMENT ON FUNCTION simhash_citus_key_pairs(regclass, regclass, integer, regclass) IS 'internal: the pairs of rows sharing a key, repartitioned by the first id';

-- connected groups on the coordinator: every id of the relation, its group
-- the least id of its component of the graph whose edges are the rows
-- (a, b) of the table pairs (two bigint columns); union-find by
-- shared_key_groups over the rows with an edge (each edge a key of its two
-- rows), the others alone
CREATE FUNCTION simhash_citus_connected(relation regclass, id_column name, pairs regclass)
	RETURNS TABLE (id bigint, group_id bigint)
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
	AS $fn$
DECLARE
	ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	             WHERE e.extname = 'simhash');
BEGIN
	EXECUTE format('CREATE TEMP TABLE pg_temp.simhash_citus_edges AS SELECT row_number() OVER () AS n, p.a::bigint AS a, p.b::bigint AS b FROM %s p',
	               pairs);
	CREATE TEMP TABLE pg_temp.simhash_citus_keys AS
		SELECT e.id, array_agg(e.n) AS keys
		FROM (SELECT x.n, x.a AS id FROM pg_temp.simhash_citus_edges x
		      UNION ALL SELECT x.n, x.b FROM pg_temp.simhash_citus_edges x) e
		GROUP BY e.id;
	EXECUTE format('SELECT %I.simhash_citus_progress($1, $2)', ext)
		USING 'simhash_citus_connected'::text, 'grouping the pairs on this node'::text;
	EXECUTE format('CREATE TEMP TABLE pg_temp.simhash_citus_linked AS SELECT * FROM %I.shared_key_groups($1, $2, $3, $4, $5)', ext)
		USING 'pg_temp.simhash_citus_keys'::regclass, 'id'::name, 'keys'::name, 1, 2;
	-- every row's id (ids are unique; a DISTINCT here makes Citus hash the
	-- merged ids on the coordinator, which is slow for millions of rows)
	EXECUTE format('CREATE TEMP TABLE pg_temp.simhash_citus_rows AS SELECT %I::bigint AS id FROM %s', id_column, relation);
	ANALYZE pg_temp.simhash_citus_linked;
	ANALYZE pg_temp.simhash_citus_rows;
	RETURN QUERY SELECT r.id, coalesce(g.group_id, r.id) FROM pg_temp.simhash_citus_rows r
		LEFT JOIN pg_temp.simhash_citus_linked g ON g.id = r.id;
	DROP TABLE pg_temp.simhash_citus_edges, pg_temp.simhash_citus_keys, pg_temp.simhash_citus_linked,
		pg_temp.simhash_citus_rows;
END $fn$;
COMMENT ON FUNCTION simhash_citus_connected(regclass, name, regclass) IS 'internal: connected groups of the rows of a relation under the pairs (a, b) of a table';

CREATE FUNCTION simhash_groups_citus(relation regclass, id_column name, hash_column name,
		max_distance integer DEFAULT 3, linkage text DEFAULT 'connected', blocks integer DEFAULT NULL)
	RETURNS TABLE (id bigint, group_id bigint)
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
	AS $fn$
DECLARE
	ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	             WHERE e.extname = 'simhash');
	x bigint;
	leader bigint;
BEGIN
	IF linkage IS NULL OR linkage NOT IN ('connected', 'leader') THEN
		RAISE EXCEPTION 'simhash_groups_citus: linkage must be ''connected'' or ''leader'''
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	CREATE TEMP TABLE pg_temp.simhash_citus_pairs (a bigint, b bigint, distance integer);
	EXECUTE format('INSERT INTO pg_temp.simhash_citus_pairs SELECT * FROM %I.simhash_pairs_citus($1, $2, $3, $4, $5)', ext)
		USING relation, id_column, hash_column, max_distance, blocks;
	IF linkage = 'connected' THEN
		-- connected components of the pairs
		RETURN QUERY EXECUTE format('SELECT * FROM %I.simhash_citus_connected($1, $2, $3)', ext)
			USING relation, id_column, 'pg_temp.simhash_citus_pairs'::regclass;
		DROP TABLE pg_temp.simhash_citus_pairs;
		RETURN;
	END IF;
	-- every row's id (ids are unique; a DISTINCT here makes Citus hash the
	-- merged ids on the coordinator, which is slow for millions of rows)
	EXECUTE format('CREATE TEMP TABLE pg_temp.simhash_citus_rows AS SELECT %I::bigint AS id FROM %s', id_column, relation);
	ANALYZE pg_temp.simhash_citus_pairs;
	ANALYZE pg_temp.simhash_citus_rows;
	-- leaders: rows in id order join the nearest earlier leader (ties: the
	-- least id), else lead; rows without an earlier pair lead
	CREATE INDEX ON pg_temp.simhash_citus_pairs (b);
	EXECUTE format('SELECT %I.simhash_citus_progress($1, $2)', ext)
		USING 'simhash_groups_citus'::text, 'choosing the leaders on this node'::text;
	CREATE TEMP TABLE pg_temp.simhash_citus_followers (id bigint PRIMARY KEY, group_id bigint);
	FOR x IN SELECT DISTINCT p.b FROM pg_temp.simhash_citus_pairs p ORDER BY 1 LOOP
		SELECT p.a INTO leader FROM pg_temp.simhash_citus_pairs p
		WHERE p.b = x AND NOT EXISTS (SELECT 1 FROM pg_temp.simhash_citus_followers f WHERE f.id = p.a)
		ORDER BY p.distance, p.a LIMIT 1;
		IF FOUND THEN
			INSERT INTO pg_temp.simhash_citus_followers VALUES (x, leader);
		END IF;
	END LOOP;
	RETURN QUERY SELECT r.id, coalesce(f.group_id, r.id) FROM pg_temp.simhash_citus_rows r
		LEFT JOIN pg_temp.simhash_citus_followers f ON f.id = r.id;
	DROP TABLE pg_temp.simhash_citus_pairs, pg_temp.simhash_citus_rows, pg_temp.simhash_citus_followers;
END $fn$;
COMMENT ON FUNCTION simhash_groups_citus(regclass, name, name, integer, text, integer) IS 'simhash_groups of a Citus distributed table: pairs searched on the workers, groups on the coordinator';

-- single-node argument ranges of the keys jobs
CREATE FUNCTION simhash_citus_check_int(job text, what text, v integer, lo integer, hi integer)
	RETURNS void
	LANGUAGE plpgsql IMMUTABLE
	SET search_path = pg_catalog, pg_temp
	AS $fn$
BEGIN
	IF v IS NULL THEN
		RAISE EXCEPTION '%: % must not be NULL', job, what USING ERRCODE = 'null_value_not_allowed';
	ELSIF v < lo THEN
		RAISE EXCEPTION '%: % must be at least %, not %', job, what, lo, v USING ERRCODE = 'invalid_parameter_value';
	ELSIF v > hi THEN
		RAISE EXCEPTION '%: % must be at most %, not %', job, what, hi, v USING ERRCODE = 'invalid_parameter_value';
	END IF;
END $fn$;
COMMENT ON FUNCTION simhash_citus_check_int(text, text, integer, integer, integer) IS 'internal: an integer argument''s range';

-- the start of shared_key_pairs_citus / shared_key_groups_citus: checks,
-- and the keys repartitioned (simhash_citus_keys)
CREATE FUNCTION simhash_citus_key_job(job text, relation regclass, id_column name, keys_column name,
		min_shared integer, max_key_rows integer)
	RETURNS regclass
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
	AS $fn$
DECLARE
	ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	             WHERE e.extname = 'simhash');
	keys regclass;
BEGIN
	EXECUTE format('SELECT %I.simhash_citus_job_name($1)', ext) INTO job USING job;
	EXECUTE format('SELECT %I.simhash_citus_start($1, $2, $3, $4)', ext) USING job, relation, id_column, keys_column;
	EXECUTE format('SELECT %1$I.simhash_citus_check_int($1, $2, $3, 1, 2147483647), %1$I.simhash_citus_check_int($1, $4, $5, 2, 1000000)', ext)
		USING job, 'min_shared'::text, min_shared, 'max_key_rows'::text, max_key_rows;
	EXECUTE format('SELECT %I.simhash_citus_keys($1, $2, $3, $4, NULL::integer, $5)', ext)
		INTO keys USING job, relation, id_column, keys_column, max_key_rows;
	RETURN keys;
END $fn$;
COMMENT ON FUNCTION simhash_citus_key_job(text, regclass, name, name, integer, integer) IS 'internal: the start of a shared_key_*_citus job';

CREATE FUNCTION shared_key_pairs_citus(relation regclass, id_column name, keys_column name,
		min_shared integer DEFAULT 1, max_key_rows integer DEFAULT 1000)
	RETURNS TABLE (id_a bigint, id_b bigint, shared integer)
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
	AS $fn$
DECLARE
	ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	             WHERE e.extname = 'simhash');
	keys regclass;
	pairs regclass;
BEGIN
	EXECUTE format('SELECT %I.simhash_citus_key_job($1, $2, $3, $4, $5, $6)', ext)
		INTO keys USING 'shared_key_pairs_citus'::text, relation, id_column, keys_column, min_shared, max_key_rows;
	EXECUTE format('SELECT %I.simhash_citus_key_pairs($1, $2, $3, NULL::regclass)', ext)
		INTO pairs USING relation, keys, max_key_rows;
	RETURN QUERY EXECUTE format('SELECT a, b, count(*)::integer FROM %s GROUP BY a, b HAVING count(*) >= %s',
	                            pairs, min_shared);
	EXECUTE format('DROP TABLE %s, %s', pairs, keys);
END $fn$;
COMMENT ON FUNCTION shared_key_pairs_citus(regclass, name, name, integer, integer) IS 'shared_key_pairs of a Citus distributed table, paired on the workers';

CREATE FUNCTION shared_key_groups_citus(relation regclass, id_column name, keys_column name,
		min_shared integer DEFAULT 1, max_key_rows integer DEFAULT 1000)
	RETURNS TABLE (id bigint, group_id bigint)
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
	AS $fn$
DECLARE
	ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	             WHERE e.extname = 'simhash');
	keys regclass;
	pairs regclass;
BEGIN
	EXECUTE format('SELECT %I.simhash_citus_key_job($1, $2, $3, $4, $5, $6)', ext)
		INTO keys USING 'shared_key_groups_citus'::text, relation, id_column, keys_column, min_shared, max_key_rows;
	CREATE TEMP TABLE pg_temp.simhash_citus_pairs (a bigint, b bigint);
	IF min_shared = 1 THEN
		-- rows sharing a key are connected: one edge from each row of a
		-- used key to the key's least id
		EXECUTE format('INSERT INTO pg_temp.simhash_citus_pairs SELECT s.id, s.least_id FROM'
		               ' (SELECT x.id, min(x.id) OVER (PARTITION BY x.key) AS least_id FROM %1$s x JOIN'
		               ' (SELECT key FROM %1$s GROUP BY key HAVING count(*) BETWEEN 2 AND %2$s) u ON u.key = x.key) s'
		               ' WHERE s.id <> s.least_id', keys, max_key_rows);
		EXECUTE format('DROP TABLE %s', keys);
	ELSE
		EXECUTE format('SELECT %I.simhash_citus_key_pairs($1, $2, $3, NULL::regclass)', ext)
			INTO pairs USING relation, keys, max_key_rows;
		EXECUTE format('INSERT INTO pg_temp.simhash_citus_pairs SELECT a, b FROM %s GROUP BY a, b HAVING count(*) >= %s',
		               pairs, min_shared);
		EXECUTE format('DROP TABLE %s, %s', pairs, keys);
	END IF;
	RETURN QUERY EXECUTE format('SELECT * FROM %I.simhash_citus_connected($1, $2, $3)', ext)
		USING relation, id_column, 'pg_temp.simhash_citus_pairs'::regclass;
	DROP TABLE pg_temp.simhash_citus_pairs;
END $fn$;
COMMENT ON FUNCTION shared_key_groups_citus(regclass, name, name, integer, integer) IS 'shared_key_groups of a Citus distributed table: pairs on the workers, groups on the coordinator';

-- The pairs of minhash_pairs, on the workers: band keys repartitioned by
-- key, candidate pairs by their first id; the first id's signature joins
-- them there (from the relation itself when it is distributed by the id
-- column as bigint, else from a work table <part>_s (id, sig)), they move
-- to the second id's shard, whose signature completes the estimate.
-- Returns the query of the pairs (a, b, jaccard) and, in work, the work
-- tables to drop afterwards.
CREATE FUNCTION simhash_citus_minhash(job text, relation regclass, id_column name, sig_column name,
		threshold float8, bands integer, max_key_rows integer, OUT pairs_sql text, OUT work text)
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
	SET extra_float_digits = 3	-- the threshold into the query text exactly
	AS $fn$
DECLARE
	ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	             WHERE e.extname = 'simhash');
	params text[];
	perms integer;
	sigs regclass;
	sig_id name;
	sig_col name;
	keys regclass;
	pairs regclass;
	moved regclass;
BEGIN
	EXECUTE format('SELECT %I.simhash_citus_job_name($1)', ext) INTO job USING job;
	EXECUTE format('SELECT %I.simhash_citus_start($1, $2, $3, $4)', ext) USING job, relation, id_column, sig_column;
	IF threshold IS NULL THEN
		RAISE EXCEPTION '%: threshold must not be NULL', job USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF NOT (threshold > 0.0 AND threshold <= 1.0) THEN
		RAISE EXCEPTION '%: threshold must be in (0, 1], not %', job, threshold USING ERRCODE = 'invalid_parameter_value';
	END IF;
	EXECUTE format('SELECT %1$I.simhash_citus_check_int($1, $2, $3, 1, 2147483647), %1$I.simhash_citus_check_int($1, $4, $5, 2, 1000000)', ext)
		USING job, 'bands'::text, bands, 'max_key_rows'::text, max_key_rows;
	-- the signatures' parameters: one set (as minhash_pairs checks row by row)
	EXECUTE format('SELECT array_agg(p ORDER BY p) FROM (SELECT DISTINCT %I.simhash_citus_minhash_params(%I) AS p FROM %s'
	               ' WHERE %I IS NOT NULL) s WHERE p IS NOT NULL', ext, sig_column, relation, sig_column) INTO params;
	IF cardinality(params) > 1 THEN
		RAISE EXCEPTION '%: the signatures of column "%" have different parameters', job, sig_column
			USING ERRCODE = 'invalid_parameter_value', DETAIL = format('One has %s, another %s.', params[1], params[2]);
	END IF;
	IF cardinality(params) = 1 THEN
		perms := substring(params[1] FROM 'permutations=([0-9]+)')::integer;
		IF bands > perms THEN
			RAISE EXCEPTION '%: bands (%) must not exceed the signatures'' permutations (%)', job, bands, perms
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
	END IF;
	-- where the signatures are found by id, distributed by id
	IF EXISTS (SELECT FROM pg_dist_partition p WHERE p.logicalrelid = relation AND p.partmethod = 'h'
	           AND column_to_column_name(p.logicalrelid, p.partkey) = id_column::text)
	   AND (SELECT a.atttypid FROM pg_attribute a WHERE a.attrelid = relation AND a.attname = id_column) = 'bigint'::regtype THEN
		sigs := relation;
		sig_id := id_column;
		sig_col := sig_column;
		work := '';
	ELSE
		EXECUTE format('SELECT %I.simhash_citus_work_table($1, $2, NULL::regclass)', ext)
			INTO sigs USING relation, 'signatures'::text;
		EXECUTE format('INSERT INTO %s (id, sig) SELECT %I::bigint, %I FROM %s WHERE %I IS NOT NULL',
		               sigs, id_column, sig_column, relation, sig_column);
		sig_id := 'id';
		sig_col := 'sig';
		work := sigs::text || ', ';
	END IF;
	EXECUTE format('SELECT %I.simhash_citus_keys($1, $2, $3, $4, $5, $6)', ext)
		INTO keys USING job, relation, id_column, sig_column, bands, max_key_rows;
	EXECUTE format('SELECT %I.simhash_citus_key_pairs($1, $2, $3, $4)', ext)
		INTO pairs USING relation, keys, max_key_rows, sigs;
	EXECUTE format('SELECT %I.simhash_citus_work_table($1, $2, $3)', ext)
		INTO moved USING relation, 'moved'::text, sigs;
	EXECUTE format('INSERT INTO %s (b, a, sig_a) SELECT p.b, p.a, s.%I FROM (SELECT a, b FROM %s GROUP BY a, b) p'
	               ' JOIN %s s ON s.%I = p.a', moved, sig_col, pairs, sigs, sig_id);
	EXECUTE format('SELECT %I.simhash_citus_progress($1, $2)', ext)
		USING job, 'estimating the candidate pairs on the workers'::text;
	pairs_sql := format('SELECT m.a, m.b, j FROM %s m JOIN %s s ON s.%I = m.b,'
	                    ' LATERAL (SELECT %I.minhash_jaccard(m.sig_a, s.%I) AS j) e WHERE j >= %s',
	                    moved, sigs, sig_id, ext, sig_col, threshold);
	work := work || format('%s, %s, %s', moved, pairs, keys);
END $fn$;
COMMENT ON FUNCTION simhash_citus_minhash(text, regclass, name, name, float8, integer, integer) IS 'internal: the pairs of minhash_pairs_citus on the workers';

CREATE FUNCTION minhash_pairs_citus(relation regclass, id_column name, sig_column name,
		threshold float8 DEFAULT 0.8, bands integer DEFAULT 32, max_key_rows integer DEFAULT 10000)
	RETURNS TABLE (id_a bigint, id_b bigint, jaccard float8)
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
	AS $fn$
DECLARE
	ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	             WHERE e.extname = 'simhash');
	m record;
BEGIN
	EXECUTE format('SELECT * FROM %I.simhash_citus_minhash($1, $2, $3, $4, $5, $6, $7)', ext)
		INTO m USING 'minhash_pairs_citus'::text, relation, id_column, sig_column, threshold, bands, max_key_rows;
	RETURN QUERY EXECUTE m.pairs_sql;
	EXECUTE format('DROP TABLE %s', m.work);
END $fn$;
COMMENT ON FUNCTION minhash_pairs_citus(regclass, name, name, float8, integer, integer) IS 'minhash_pairs of a Citus distributed table, candidates and estimates on the workers';

CREATE FUNCTION minhash_groups_citus(relation regclass, id_column name, sig_column name,
		threshold float8 DEFAULT 0.8, bands integer DEFAULT 32, max_key_rows integer DEFAULT 10000)
	RETURNS TABLE (id bigint, group_id bigint)
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
	AS $fn$
DECLARE
	ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	             WHERE e.extname = 'simhash');
	m record;
BEGIN
	EXECUTE format('SELECT * FROM %I.simhash_citus_minhash($1, $2, $3, $4, $5, $6, $7)', ext)
		INTO m USING 'minhash_groups_citus'::text, relation, id_column, sig_column, threshold, bands, max_key_rows;
	CREATE TEMP TABLE pg_temp.simhash_citus_pairs (a bigint, b bigint);
	EXECUTE format('INSERT INTO pg_temp.simhash_citus_pairs SELECT p.a, p.b FROM (%s) p', m.pairs_sql);
	RETURN QUERY EXECUTE format('SELECT * FROM %I.simhash_citus_connected($1, $2, $3)', ext)
		USING relation, id_column, 'pg_temp.simhash_citus_pairs'::regclass;
	DROP TABLE pg_temp.simhash_citus_pairs;
	EXECUTE format('DROP TABLE %s', m.work);
END $fn$;
COMMENT ON FUNCTION minhash_groups_citus(regclass, name, name, float8, integer, integer) IS 'minhash_groups of a Citus distributed table: pairs on the workers, groups on the coordinator';

-- Groups into a table: simhash_groups' groups of more than one row, as
-- rows (id, group_id) of a new table; on a Citus distributed table a
-- distributed table co-located with it (when it is distributed by the id
-- column), computed on the workers: the pairs stay there, connected groups
-- by label propagation (each row's label the least id among its own and
-- its neighbours' labels, round after round, until none changes), the
-- leader linkage per connected group on the worker holding the group's
-- pairs (simhash_leader_groups).  Design: src/dedup/citus.c.

CREATE FUNCTION simhash_leader_groups(id_a bigint[], id_b bigint[], distance integer[])
	RETURNS TABLE (id bigint, group_id bigint)
	AS 'MODULE_PATHNAME', 'simhash_leader_groups'
	LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 100;
COMMENT ON FUNCTION simhash_leader_groups(bigint[], bigint[], integer[]) IS 'the leader linkage of simhash_groups over the pairs of one connected group: the rows of its groups of more than one row, with their leaders';

CREATE FUNCTION simhash_groups_into(relation regclass, id_column name, hash_column name, result_table text,
		max_distance integer DEFAULT 3, linkage text DEFAULT 'connected', blocks integer DEFAULT NULL)
	RETURNS bigint
	LANGUAGE plpgsql AS $fn$
-- No SET search_path here, so that an unqualified result_table goes where
-- the caller's CREATE TABLE would put it (the first schema of the caller's
-- path); every name below is qualified, and the work runs in
-- simhash_citus_groups_into, under search_path = pg_catalog, pg_temp.
DECLARE
	ext pg_catalog.name := (SELECT n.nspname FROM pg_catalog.pg_extension e
	                        JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace
	                        WHERE e.extname OPERATOR(pg_catalog.=) 'simhash'::pg_catalog.name);
	target pg_catalog.text[] := pg_catalog.parse_ident(result_table);
	written pg_catalog.int8;
BEGIN
	IF pg_catalog.cardinality(target) OPERATOR(pg_catalog.>) 2 THEN
		RAISE EXCEPTION 'simhash_groups_into: improper qualified name (too many dotted names): %', result_table
			USING ERRCODE = 'syntax_error';
	END IF;
	IF pg_catalog.cardinality(target) OPERATOR(pg_catalog.=) 1 THEN
		IF pg_catalog.current_schema() IS NULL THEN
			RAISE EXCEPTION 'simhash_groups_into: no schema has been selected to create in'
				USING ERRCODE = 'invalid_schema_name';
		END IF;
		target := pg_catalog.array_prepend(pg_catalog.current_schema()::pg_catalog.text, target);
	END IF;
	EXECUTE pg_catalog.format('SELECT %I.simhash_citus_groups_into($1, $2, $3, $4, $5, $6, $7, $8)', ext)
		INTO written
		USING relation, id_column, hash_column, target[1]::pg_catalog.name, target[2]::pg_catalog.name,
		      max_distance, linkage, blocks;
	RETURN written;
END $fn$;
COMMENT ON FUNCTION simhash_groups_into(regclass, name, name, text, integer, text, integer) IS 'simhash_groups'' groups of more than one row into a new table (id, group_id); on a Citus distributed table computed on the workers, co-located with it';

-- the work of simhash_groups_into: its groups written into the new table
-- result_schema.result_name; returns the number of rows written
CREATE FUNCTION simhash_citus_groups_into(relation regclass, id_column name, hash_column name,
		result_schema name, result_name name, max_distance integer, linkage text, blocks integer)
	RETURNS bigint
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
	AS $fn$
DECLARE
	ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
	             WHERE e.extname = 'simhash');
	target text;
	idtype text;
	dist_column name;
	s record;
	pairs regclass;
	edges regclass;
	labels regclass;
	next_labels regclass;
	parts regclass;
	changed bigint;
	rounds integer := 0;
	written bigint;
BEGIN
	IF relation IS NULL OR id_column IS NULL OR hash_column IS NULL OR result_schema IS NULL
	   OR result_name IS NULL OR max_distance IS NULL OR linkage IS NULL THEN
		RAISE EXCEPTION 'simhash_groups_into: arguments must not be NULL' USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF linkage NOT IN ('connected', 'leader') THEN
		RAISE EXCEPTION 'simhash_groups_into: linkage must be ''connected'' or ''leader'''
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	target := format('%I.%I', result_schema, result_name);
	SELECT format_type(a.atttypid, a.atttypmod) INTO idtype FROM pg_attribute a
	WHERE a.attrelid = relation AND a.attname = id_column AND a.attnum > 0 AND NOT a.attisdropped;
	IF idtype IS NULL THEN
		RAISE EXCEPTION 'simhash_groups_into: column "%" of relation % does not exist', id_column, relation
			USING ERRCODE = 'undefined_column';
	END IF;
	IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
		EXECUTE 'SELECT pg_catalog.column_to_column_name(p.logicalrelid, p.partkey) FROM pg_catalog.pg_dist_partition p'
		        ' WHERE p.logicalrelid = $1 AND p.partmethod = ''h''' INTO dist_column USING relation;
	END IF;
	EXECUTE format('CREATE TABLE %s (id %s, group_id %s)', target, idtype, idtype);
	IF dist_column IS NOT NULL THEN
		PERFORM pg_catalog.create_distributed_table(target::regclass, 'id',
			colocate_with => CASE WHEN dist_column = id_column THEN relation::text ELSE 'default' END);
	END IF;
	IF dist_column IS NULL OR idtype NOT IN ('bigint', 'integer', 'smallint')
	   OR NOT coalesce(current_setting('simhash.citus_jobs', true), 'on')::boolean THEN
		-- one node, or the rows read here (simhash_groups says why)
		EXECUTE format('INSERT INTO %s SELECT g.id, g.group_id FROM (SELECT x.id, x.group_id, count(*) OVER (PARTITION BY x.group_id) AS n'
		               ' FROM %I.simhash_groups($1, $2, $3, NULL::%s, $4, $5, $6) x) g WHERE g.n > 1', target, ext, idtype)
			USING relation, id_column, hash_column, max_distance, linkage, blocks;
		GET DIAGNOSTICS written = ROW_COUNT;
		RETURN written;
	END IF;

	-- the pairs, kept on the workers (by their first id)
	EXECUTE format('SELECT * FROM %I.simhash_citus_parts($1, $2, $3, $4, $5, $6)', ext)
		INTO s USING 'simhash_groups_into'::text, relation, id_column, hash_column, max_distance, blocks;
	EXECUTE format('SELECT %I.simhash_citus_work_table($1, $2, NULL::regclass)', ext)
		INTO pairs USING relation, 'group_pairs'::text;
	EXECUTE format('INSERT INTO %s (a, b, d) SELECT * FROM (%s) x', pairs, s.search);
	EXECUTE format('DROP TABLE %s', s.part);
	-- connected groups: edges both ways by their source; labels by id
	EXECUTE format('SELECT %I.simhash_citus_work_table($1, $2, $3)', ext)
		INTO edges USING relation, 'edges'::text, pairs;
	EXECUTE format('INSERT INTO %s SELECT a, b FROM %s', edges, pairs);
	EXECUTE format('INSERT INTO %s SELECT b, a FROM %s', edges, pairs);
	EXECUTE format('SELECT %I.simhash_citus_work_table($1, $2, $3)', ext)
		INTO labels USING relation, 'labels'::text, pairs;
	EXECUTE format('SELECT %I.simhash_citus_work_table($1, $2, $3)', ext)
		INTO next_labels USING relation, 'next_labels'::text, pairs;
	EXECUTE format('INSERT INTO %s SELECT src, least(src, min(dst)) FROM %s GROUP BY src', labels, edges);
	LOOP
		EXECUTE format('INSERT INTO %s SELECT e.dst, l.label FROM %s e JOIN %s l ON l.id = e.src', next_labels, edges, labels);
		EXECUTE format('UPDATE %s l SET label = m.label FROM (SELECT id, min(label) AS label FROM %s GROUP BY id) m'
		               ' WHERE l.id = m.id AND m.label < l.label', labels, next_labels);
		GET DIAGNOSTICS changed = ROW_COUNT;
		EXECUTE format('DELETE FROM %s', next_labels);
		rounds := rounds + 1;
		EXECUTE format('SELECT %I.simhash_citus_progress($1, $2)', ext)
			USING 'simhash_groups_into'::text,
			      format('labelling round %s on the workers: %s rows relabelled', rounds, changed);
		EXIT WHEN changed = 0;
	END LOOP;
	IF linkage = 'connected' THEN
		EXECUTE format('INSERT INTO %s SELECT id, label FROM %s', target, labels);
		GET DIAGNOSTICS written = ROW_COUNT;
	ELSE
		-- each group's pairs on one shard, linked there in id order
		EXECUTE format('SELECT %I.simhash_citus_work_table($1, $2, $3)', ext)
			INTO parts USING relation, 'grouped_pairs'::text, pairs;
		EXECUTE format('INSERT INTO %s SELECT l.label, p.a, p.b, p.d FROM %s p JOIN %s l ON l.id = p.a', parts, pairs, labels);
		EXECUTE format('SELECT %I.simhash_citus_progress($1, $2)', ext)
			USING 'simhash_groups_into'::text, 'choosing the leaders on the workers'::text;
		EXECUTE format('INSERT INTO %s SELECT x.id, x.group_id FROM (SELECT array_agg(a) AS a, array_agg(b) AS b, array_agg(d) AS d'
		               ' FROM %s GROUP BY grp) g, LATERAL %I.simhash_leader_groups(g.a, g.b, g.d) x', target, parts, ext);
		GET DIAGNOSTICS written = ROW_COUNT;
		EXECUTE format('DROP TABLE %s', parts);
	END IF;
	EXECUTE format('DROP TABLE %s, %s, %s, %s', pairs, edges, labels, next_labels);
	RETURN written;
END $fn$;
COMMENT ON FUNCTION simhash_citus_groups_into(regclass, name, name, name, name, integer, text, integer) IS 'internal: the groups of simhash_groups_into written into the new table result_schema.result_name';

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
