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
