-- The SQL and PL/pgSQL functions of the extension run with their own
-- search_path: overloads and look-alike objects that another role plants in
-- public or in a schema early on the caller's path never run.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
CREATE TABLE sp_docs (h simhash64);
INSERT INTO sp_docs SELECT (i % 7)::bigint::simhash64 FROM generate_series(1, 20) i;

-- a schema early on the path, and look-alikes in it and in public: an
-- overload of simhash_pairs that an untyped 'ctid' would prefer (text
-- instead of name), one with the exact signature, and a look-alike
-- generate_series, each announcing itself if it ever runs
CREATE SCHEMA sp_early;
CREATE FUNCTION sp_early.simhash_pairs(relation regclass, id_column text, hash_column name,
		id_type tid, max_distance integer)
	RETURNS TABLE (id_a tid, id_b tid, distance integer)
	LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'planted sp_early.simhash_pairs ran'; END$$;
CREATE FUNCTION sp_early.simhash_pairs(relation regclass, id_column name, hash_column name,
		id_type anyelement, max_distance integer DEFAULT 3, blocks integer DEFAULT NULL)
	RETURNS TABLE (id_a anyelement, id_b anyelement, distance integer)
	LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'planted exact sp_early.simhash_pairs ran'; END$$;
CREATE FUNCTION sp_early.generate_series(integer, integer) RETURNS SETOF integer
	LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'planted sp_early.generate_series ran'; END$$;

-- the path a careless caller might have: the planted schema first, public,
-- pg_catalog last (so that even pg_catalog's own functions lose to it)
SET search_path = sp_early, public, pg_catalog;
SELECT * FROM simhash_distance_histogram('sp_docs', 'h', 2, 10);
SET search_path = public;
SELECT * FROM simhash_distance_histogram('sp_docs', 'h', 2, 10);
RESET search_path;

-- a look-alike in the extension's own schema (public here), which an
-- untyped or even a typed call could prefer to the polymorphic original:
-- the histogram refuses to run beside it
CREATE FUNCTION public.simhash_pairs(relation regclass, id_column text, hash_column name,
		id_type tid, max_distance integer)
	RETURNS TABLE (id_a tid, id_b tid, distance integer)
	LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'planted public.simhash_pairs ran'; END$$;
SET search_path = sp_early, public, pg_catalog;
SELECT * FROM simhash_distance_histogram('sp_docs', 'h', 2, 10);
RESET search_path;

DROP SCHEMA sp_early CASCADE;
DROP FUNCTION public.simhash_pairs(regclass, text, name, tid, integer);
DROP TABLE sp_docs;

-- Every SQL-language and PL/pgSQL function of the extension, against
-- look-alikes of every function of the extension: in sp_early (early on
-- the path) with the same signature, and in public (the extension's schema
-- here) with text arguments, which untyped literals would prefer; look-alikes
-- of the built-ins they use in sp_early; look-alikes in both of what the
-- jobs (C, their statements under search_path = pg_catalog, pg_temp) name
-- without a schema: the aggregates count(*), min(bigint) and
-- array_agg(bigint), row_number(), the operators of bigint (and bigint
-- against integer); operators of numeric and double precision in both;
-- tables named as the jobs' temporary tables in both.  Each announces
-- itself if it ever runs or is read.
CREATE TABLE sp_docs (id bigint, h simhash64, keys bigint[]);
INSERT INTO sp_docs SELECT i, (i % 7)::bigint::simhash64, ARRAY[i % 3]::bigint[] FROM generate_series(1, 20) i;
CREATE SCHEMA sp_early;
DO $plant$
DECLARE
	f record;
	made integer := 0;
	body constant text := $b$BEGIN RAISE EXCEPTION 'planted %s ran'; END$b$;
BEGIN
	FOR f IN SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS args,
	                pg_get_function_result(p.oid) AS result, p.pronargs,
	                (SELECT string_agg('text', ', ') FROM generate_series(1, p.pronargs)) AS text_args
	         FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
	              AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
	         JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'simhash'
	         WHERE p.prokind = 'f' ORDER BY 1, 2 LOOP
		BEGIN
			EXECUTE format('CREATE FUNCTION sp_early.%I(%s) RETURNS %s LANGUAGE plpgsql AS %L',
			               f.proname, f.args, f.result, format(body, 'sp_early.' || f.proname));
			made := made + 1;
		EXCEPTION WHEN OTHERS THEN NULL;	-- internal, cstring, ... arguments
		END;
		CONTINUE WHEN f.pronargs = 0;
		BEGIN
			EXECUTE format('CREATE FUNCTION public.%I(%s) RETURNS %s LANGUAGE plpgsql AS %L',
			               f.proname, f.text_args, f.result, format(body, 'public.' || f.proname));
			made := made + 1;
		EXCEPTION WHEN OTHERS THEN NULL;	-- exists, or a polymorphic result
		END;
	END LOOP;
	-- built-ins the functions use
	CREATE FUNCTION sp_early.to_regproc(text) RETURNS regproc LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'planted sp_early.to_regproc ran'; END$$;
	CREATE FUNCTION sp_early.format(text) RETURNS text LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'planted sp_early.format ran'; END$$;
	CREATE FUNCTION sp_early.quote_ident(text) RETURNS text LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'planted sp_early.quote_ident ran'; END$$;
	CREATE FUNCTION sp_early.regexp_replace(text, text, text) RETURNS text LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'planted sp_early.regexp_replace ran'; END$$;
	CREATE FUNCTION sp_early.split_part(text, text, integer) RETURNS text LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'planted sp_early.split_part ran'; END$$;
	CREATE FUNCTION sp_early.pg_backend_pid() RETURNS integer LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'planted sp_early.pg_backend_pid ran'; END$$;
	CREATE FUNCTION sp_early.to_json(integer) RETURNS json LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'planted sp_early.to_json ran'; END$$;
	CREATE FUNCTION sp_early.to_jsonb(integer) RETURNS jsonb LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'planted sp_early.to_jsonb ran'; END$$;
	CREATE FUNCTION sp_early.unnest(anyarray) RETURNS SETOF anyelement LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'planted sp_early.unnest ran'; END$$;
	CREATE FUNCTION sp_early.create_distributed_table(regclass, text) RETURNS void LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'planted sp_early.create_distributed_table ran'; END$$;
	made := made + 10;
	-- what the jobs' statements call without a schema: count(*) (OVER, in
	-- simhash_groups_into on one node), min and array_agg of bigint and
	-- row_number() OVER () (on Citus; a window function cannot be written
	-- in PL/pgSQL, but a function of its name would be found first and fail)
	FOR f IN SELECT s.nsp FROM unnest(ARRAY['sp_early', 'public']) s(nsp) LOOP
		EXECUTE format('CREATE FUNCTION %I.sp_count_step(bigint) RETURNS bigint LANGUAGE plpgsql AS %L',
		               f.nsp, format(body, f.nsp || '.count'));
		EXECUTE format('CREATE AGGREGATE %I.count(*) (SFUNC = %I.sp_count_step, STYPE = bigint)', f.nsp, f.nsp);
		EXECUTE format('CREATE FUNCTION %I.sp_min_step(bigint, bigint) RETURNS bigint LANGUAGE plpgsql AS %L',
		               f.nsp, format(body, f.nsp || '.min'));
		EXECUTE format('CREATE AGGREGATE %I.min(bigint) (SFUNC = %I.sp_min_step, STYPE = bigint)', f.nsp, f.nsp);
		EXECUTE format('CREATE FUNCTION %I.sp_array_agg_step(bigint[], bigint) RETURNS bigint[] LANGUAGE plpgsql AS %L',
		               f.nsp, format(body, f.nsp || '.array_agg'));
		EXECUTE format('CREATE AGGREGATE %I.array_agg(bigint) (SFUNC = %I.sp_array_agg_step, STYPE = bigint[])', f.nsp, f.nsp);
		EXECUTE format('CREATE FUNCTION %I.row_number() RETURNS bigint LANGUAGE plpgsql AS %L',
		               f.nsp, format(body, f.nsp || '.row_number'));
		made := made + 4;
	END LOOP;
	-- operators of numeric and double precision (the grid's SQL functions),
	-- of bigint and of bigint against integer (the jobs' joins and filters)
	FOR f IN SELECT s.nsp, o.op, t.l, t.r FROM unnest(ARRAY['sp_early', 'public']) s(nsp),
	         unnest(ARRAY['<', '<=', '=', '>=', '>', '<>', '+', '-', '*', '/']) o(op),
	         unnest(ARRAY['numeric', 'double precision', 'bigint', 'bigint'],
	                ARRAY['numeric', 'double precision', 'bigint', 'integer']) t(l, r) LOOP
		EXECUTE format('CREATE FUNCTION %I.%I(%s, %s) RETURNS %s LANGUAGE plpgsql AS %L', f.nsp,
		               'sp_op_' || md5(f.op || f.l || f.r), f.l, f.r,
		               CASE WHEN f.op IN ('+', '-', '*', '/') THEN f.l ELSE 'boolean' END,
		               format(body, f.nsp || '.' || f.op));
		EXECUTE format('CREATE OPERATOR %I.%s (LEFTARG = %s, RIGHTARG = %s, FUNCTION = %I.%I)',
		               f.nsp, f.op, f.l, f.r, f.nsp, 'sp_op_' || md5(f.op || f.l || f.r));
		made := made + 1;
	END LOOP;
	-- the jobs' temporary tables
	FOR f IN SELECT s.nsp, t.tab FROM unnest(ARRAY['sp_early', 'public']) s(nsp),
	         unnest(ARRAY['simhash_citus_pairs', 'simhash_citus_edges', 'simhash_citus_keys',
	                      'simhash_citus_linked', 'simhash_citus_rows']) t(tab) LOOP
		EXECUTE format('CREATE TABLE %I.%I (id bigint, group_id bigint, a bigint, b bigint, n bigint, keys bigint[], distance integer)',
		               f.nsp, f.tab);
		EXECUTE format('INSERT INTO %I.%I VALUES (-1, -1, -1, -1, -1, ''{-1}'', 0)', f.nsp, f.tab);
		made := made + 1;
	END LOOP;
	RAISE NOTICE 'planted more than 400 look-alikes: %', made > 400;
END
$plant$;

-- the careless path: the planted schema first, public, pg_catalog, and
-- pg_temp last (so that a table of the same name wins over a temporary one)
SET search_path = sp_early, public, pg_catalog, pg_temp;

-- every SQL-language function, called with typed arguments
DO $calls$
DECLARE
	f record;
	sample constant jsonb := '{"simhash_distance": "3", "numeric": "2.5", "double precision": "0.5"}';
	result text;
BEGIN
	FOR f IN SELECT p.oid::regprocedure AS fn, p.proname,
	                (SELECT string_agg(format('%L::%s', sample ->> format_type(t, NULL), format_type(t, NULL)), ', ' ORDER BY i)
	                 FROM pg_catalog.unnest(p.proargtypes) WITH ORDINALITY a(t, i)) AS args
	         FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass
	              AND d.objid = p.oid AND d.deptype = 'e'
	         JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid AND e.extname = 'simhash'
	         WHERE p.prolang = (SELECT l.oid FROM pg_catalog.pg_language l WHERE l.lanname = 'sql')
	         ORDER BY p.proname LOOP
		EXECUTE format('SELECT public.%I(%s)::pg_catalog.text', f.proname, f.args) INTO result;
		RAISE NOTICE '%(%) = %', f.proname, f.args, result;
	END LOOP;
END
$calls$;
-- still inlined (no SET clause): the plan shows the built-in operator
EXPLAIN (VERBOSE, COSTS OFF) SELECT h OPERATOR(public.<~>) h OPERATOR(public.<=) 2.5::pg_catalog.numeric FROM public.sp_docs;

-- every PL/pgSQL function
SELECT * FROM public.simhash_distance_histogram('public.sp_docs'::regclass, 'h'::name, 1, 10);
-- simhash_groups_into (C, its statements under search_path = pg_catalog,
-- pg_temp) needs no Citus on one node: the groups of more than one row in
-- a new table, an unqualified one in the first schema of the caller's path
-- (sp_early), none of the look-alike rows
SELECT public.simhash_groups_into('public.sp_docs'::regclass, 'id'::name, 'h'::name, 'sp_into'::text);
SELECT public.simhash_groups_into('public.sp_docs'::regclass, 'id'::name, 'h'::name, 'sp_early.sp_into_l'::text, 1, 'leader'::text);
SELECT public.simhash_groups_into('public.sp_docs'::regclass, 'id'::name, 'h'::name, 'sp_early.sp_into_c'::text,
	0, 'connected'::text, NULL::integer);
SELECT g.group_id, pg_catalog.array_agg(g.id ORDER BY g.id) AS ids FROM sp_early.sp_into_c g GROUP BY g.group_id ORDER BY 1;
SELECT (SELECT pg_catalog.count(*) FROM sp_early.sp_into) AS connected_rows,
       (SELECT pg_catalog.count(DISTINCT l.group_id) FROM sp_early.sp_into_l l) AS leaders;
RESET search_path;

SET client_min_messages = warning;
DROP SCHEMA sp_early CASCADE;
DO $unplant$
DECLARE
	f record;
BEGIN
	FOR f IN SELECT p.oid::regprocedure AS fn FROM pg_proc p
	         WHERE p.pronamespace = 'public'::regnamespace AND p.prosrc LIKE 'BEGIN RAISE EXCEPTION ''planted %'
	         AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e') LOOP
		EXECUTE format('DROP FUNCTION %s CASCADE', f.fn);
	END LOOP;
END
$unplant$;
DROP TABLE public.simhash_citus_pairs, public.simhash_citus_edges, public.simhash_citus_keys,
	public.simhash_citus_linked, public.simhash_citus_rows, sp_docs;
RESET client_min_messages;

-- An ordinary role runs the jobs with nothing but EXECUTE on the
-- documented functions: no internal helper is an SQL function.
CREATE ROLE regress_sp_user;
GRANT USAGE, CREATE ON SCHEMA public TO regress_sp_user;
SET ROLE regress_sp_user;
CREATE TABLE sp_user_docs (id bigint, h simhash64);
INSERT INTO sp_user_docs SELECT i, i::bigint::simhash64 FROM generate_series(1, 4) i;
SELECT simhash_groups_into('sp_user_docs', 'id', 'h', 'sp_user_groups', 1);
SELECT * FROM sp_user_groups ORDER BY id;
SELECT * FROM simhash_distance_histogram('sp_user_docs', 'h', 1);
DROP TABLE sp_user_docs, sp_user_groups;
RESET ROLE;
REVOKE ALL ON SCHEMA public FROM regress_sp_user;
DROP ROLE regress_sp_user;
