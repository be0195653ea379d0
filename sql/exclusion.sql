-- near-duplicate exclusion constraints,
-- EXCLUDE USING simhash (simhash_ball(h, k) WITH &&): the operator, the
-- declaration, the violation, NULLs, the radius range, exactness at radii
-- 0..8 against a sequential reference, deferrable constraints, ON CONFLICT,
-- adding the constraint to a table that holds near-duplicates, lookups
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
\set SHOW_CONTEXT never

-- ball && ball: each ball holds the other's center (distance <= the smaller
-- radius); commutative; strict; an empty ball is near nothing
SELECT a, b, a && b AS near, b && a AS near_commuted
FROM (VALUES ('(0000000000000000,3)'::simhash_ball, '(0000000000000007,3)'::simhash_ball),
             ('(0000000000000000,3)', '(000000000000000f,3)'),
             ('(0000000000000000,3)', '(000000000000000f,4)'),
             ('(0000000000000000,4)', '(000000000000000f,4)'),
             ('(0000000000000000,2)', '(0000000000000007,6)'),
             ('(0000000000000000,0)', '(0000000000000000,0)'),
             ('(0000000000000000,-1)', '(0000000000000000,5)'),
             ('(0000000000000000,64)', '(ffffffffffffffff,64)')) v(a, b);
SELECT simhash_ball('0000000000000000', 3) && NULL AS null_right,
       NULL && simhash_ball('0000000000000000', 3) AS null_left;
SELECT oprcom::regoperator AS commutator, obj_description(oid, 'pg_operator') AS description
FROM pg_operator WHERE oid = '&&(simhash_ball, simhash_ball)'::regoperator;

-- the declaration, as \d and pg_dump show it
CREATE TABLE ex_docs (id int, h simhash64, body text);
ALTER TABLE ex_docs ADD CONSTRAINT ex_docs_no_near_dup
	EXCLUDE USING simhash (simhash_ball(h, 3) WITH &&);
\d ex_docs
SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'ex_docs_no_near_dup';
SELECT opcname, opcdefault, obj_description(oid, 'pg_opclass') AS description
FROM pg_opclass WHERE opcname = 'simhash_ball_ops';

-- a violation: 23P01, naming the constraint and both keys
INSERT INTO ex_docs VALUES (1, '0000000000000000', 'first');
INSERT INTO ex_docs VALUES (2, '0000000000000007', 'three bits from the first');
\echo :LAST_ERROR_SQLSTATE
DO $$
DECLARE
	state text; cname text; tname text;
BEGIN
	INSERT INTO ex_docs VALUES (2, '0000000000000007', 'three bits from the first');
EXCEPTION WHEN exclusion_violation THEN
	GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, cname = CONSTRAINT_NAME, tname = TABLE_NAME;
	RAISE NOTICE 'sqlstate %, constraint %, table %', state, cname, tname;
END
$$;
-- four bits away is not near at radius 3
INSERT INTO ex_docs VALUES (3, '0000000000000f00', 'four bits from the first');
-- chains: 4 is six bits from 1 and three from the refused 2; with 1 and 4
-- stored, 2 stays refused, whichever it is reported against
INSERT INTO ex_docs VALUES (4, '000000000000003f', 'six bits from the first');
INSERT INTO ex_docs VALUES (5, '0000000000000007', 'near the first and the fourth');
-- an UPDATE into a near-duplicate is refused; a row may move near its own
-- old version
UPDATE ex_docs SET h = '0000000000000001' WHERE id = 3;
UPDATE ex_docs SET body = 'unchanged key' WHERE id = 3;
UPDATE ex_docs SET h = '0000000000000f01' WHERE id = 3;
SELECT id, h, body FROM ex_docs ORDER BY id;

-- NULL fingerprints never conflict, with each other or with anything
INSERT INTO ex_docs VALUES (6, NULL, 'no fingerprint'), (7, NULL, 'no fingerprint either');
SELECT count(*) AS rows_without_fingerprint FROM ex_docs WHERE h IS NULL;

-- ON CONFLICT DO NOTHING, with or without naming the constraint, skips a
-- near-duplicate; DO UPDATE is refused by PostgreSQL for every exclusion
-- constraint
INSERT INTO ex_docs VALUES (8, '0000000000000001', 'skipped') ON CONFLICT DO NOTHING;
INSERT INTO ex_docs VALUES (8, '0000000000000001', 'skipped')
	ON CONFLICT ON CONSTRAINT ex_docs_no_near_dup DO NOTHING;
INSERT INTO ex_docs VALUES (8, 'fedcba9876543210', 'stored')
	ON CONFLICT ON CONSTRAINT ex_docs_no_near_dup DO NOTHING;
INSERT INTO ex_docs VALUES (9, '0000000000000001', 'refused')
	ON CONFLICT ON CONSTRAINT ex_docs_no_near_dup DO UPDATE SET body = 'updated';
-- rows of one statement are checked against each other
INSERT INTO ex_docs VALUES (10, 'ffff0000ffff0000', 'kept'), (11, 'ffff0000ffff0001', 'skipped'),
	(12, 'ffff0000ffff00ff', 'kept') ON CONFLICT DO NOTHING;
SELECT id, h, body FROM ex_docs WHERE id >= 8 ORDER BY id;
SELECT simhash_index_check('ex_docs_no_near_dup', true);

-- the lookup spelling the constraint's index answers, and the one it does
-- not (h <~> q <= k needs an index on h itself)
SET enable_seqscan = off;
EXPLAIN (COSTS OFF)
SELECT id FROM ex_docs WHERE simhash_ball(h, 3) && simhash_ball('0000000000000007', 3);
SELECT id FROM ex_docs WHERE simhash_ball(h, 3) && simhash_ball('0000000000000007', 3);
DO $$
DECLARE
	line text;
	uses boolean := false;
BEGIN
	FOR line IN EXPLAIN (COSTS OFF) SELECT id FROM ex_docs WHERE h <~> '0000000000000007' <= 3 LOOP
		uses := uses OR line ~ 'ex_docs_no_near_dup';
	END LOOP;
	RAISE NOTICE 'h <~> q <= 3 uses the constraint''s index: %', uses;
END
$$;
RESET enable_seqscan;

-- the radius: 0 to 16, refused outside where the constraint is declared
-- (22023) and for every key of a radius that is not a constant
CREATE TABLE ex_radius (h simhash64, r int);
ALTER TABLE ex_radius ADD EXCLUDE USING simhash (simhash_ball(h, 17) WITH &&);
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE ex_radius ADD EXCLUDE USING simhash (simhash_ball(h, -1) WITH &&);
ALTER TABLE ex_radius ADD EXCLUDE USING simhash (simhash_ball(h, 100) WITH &&);
ALTER TABLE ex_radius ADD CONSTRAINT ex_radius_16 EXCLUDE USING simhash (simhash_ball(h, 16) WITH &&);
INSERT INTO ex_radius VALUES ('0000000000000000', 0), ('000000000001ffff', 0);
INSERT INTO ex_radius VALUES ('000000000000ffff', 0);
ALTER TABLE ex_radius DROP CONSTRAINT ex_radius_16;
ALTER TABLE ex_radius ADD CONSTRAINT ex_radius_var EXCLUDE USING simhash (simhash_ball(h, r) WITH &&);
INSERT INTO ex_radius VALUES ('ffffffffffffffff', 17);
\echo :LAST_ERROR_SQLSTATE
INSERT INTO ex_radius VALUES ('ffffffffffffffff', -1);
-- radii differ from row to row: near means within the smaller radius
INSERT INTO ex_radius VALUES ('ffffffffffffff00', 8);
INSERT INTO ex_radius VALUES ('fffffffffffffff0', 2);
INSERT INTO ex_radius VALUES ('fffffffffffff000', 4);
INSERT INTO ex_radius VALUES ('ffffffffffffffc0', 2);
SELECT h, r FROM ex_radius ORDER BY h;
DROP TABLE ex_radius;

-- deferrable: checked at commit; ON CONFLICT cannot use it as an arbiter
CREATE TABLE ex_deferred (id int, h simhash64,
	CONSTRAINT ex_deferred_near EXCLUDE USING simhash (simhash_ball(h, 3) WITH &&)
		DEFERRABLE INITIALLY DEFERRED);
BEGIN;
INSERT INTO ex_deferred VALUES (1, '0000000000000000');
INSERT INTO ex_deferred VALUES (2, '0000000000000001');
DELETE FROM ex_deferred WHERE id = 1;
COMMIT;
BEGIN;
INSERT INTO ex_deferred VALUES (3, '0000000000000003');
SELECT count(*) AS rows_before_commit FROM ex_deferred;
COMMIT;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SET CONSTRAINTS ex_deferred_near IMMEDIATE;
INSERT INTO ex_deferred VALUES (4, '0000000000000007');
ROLLBACK;
INSERT INTO ex_deferred VALUES (5, '0000000000000007') ON CONFLICT DO NOTHING;
SELECT id, h FROM ex_deferred ORDER BY id;
DROP TABLE ex_deferred;

-- adding the constraint to a table that holds near-duplicates fails and
-- names a pair; simhash_groups finds them, a DELETE keeps one per group
CREATE TABLE ex_dups (id int, h simhash64);
INSERT INTO ex_dups VALUES (1, '1111111111111111'), (2, '1111111111111113'), (3, '2222222222222222'),
	(4, '1111111111111117'), (5, '222222222222222a'), (6, '4444444444444444');
-- (PostgreSQL 18 builds the index with a safe search_path and so names
-- the function with its schema in the message: shown here without it)
DO $$
DECLARE
	state text; msg text; detail text;
BEGIN
	ALTER TABLE ex_dups ADD CONSTRAINT ex_dups_near EXCLUDE USING simhash (simhash_ball(h, 3) WITH &&);
EXCEPTION WHEN exclusion_violation THEN
	GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL;
	RAISE NOTICE '%: %', state, msg;
	RAISE NOTICE '%', replace(detail, 'public.simhash_ball', 'simhash_ball');
END
$$;
DELETE FROM ex_dups d USING simhash_groups('ex_dups', 'id', 'h', 3) g
	WHERE d.id = g.id AND g.id <> g.group_id;
ALTER TABLE ex_dups ADD CONSTRAINT ex_dups_near EXCLUDE USING simhash (simhash_ball(h, 3) WITH &&);
SELECT id, h FROM ex_dups ORDER BY id;
DROP TABLE ex_dups;

-- exactness at radii 0..8: candidates (near-duplicates of 260 fingerprints
-- 0 to 10 bits away, flipping the first bits of one of three sequences
-- of positions, plus random ones) go in by
-- INSERT ... ON CONFLICT DO NOTHING in id order, then one by one by plain
-- INSERTs; a row is stored exactly when no row stored before it is within
-- the radius, which a sequential scan checks: no stored pair within the
-- radius (simhash_pairs) and a stored row before every refused one.  At
-- even radii the constraint is built over 3,000 stored rows (a run), at odd
-- ones declared on the empty table (the rows go through the pending lanes,
-- flushed into runs)
CREATE FUNCTION ex_flip(h simhash64, seed int, d int) RETURNS simhash64
LANGUAGE sql IMMUTABLE AS $$
	SELECT (h::bigint # (SELECT coalesce(bit_or(1::bigint << ((seed * 7 + j * 37) % 64)), 0)
	                     FROM generate_series(1, d) j))::simhash64
$$;
CREATE TABLE ex_cand AS
	SELECT row_number() OVER (ORDER BY simhash_hash(c || '/' || s))::int AS id,
	       ex_flip(simhash_hash(c::text)::simhash64, c * 10 + s % 3, (c * s) % 11) AS h
	FROM generate_series(1, 260) c, generate_series(1, 10) s;
INSERT INTO ex_cand SELECT 3000 + g, simhash_hash('random ' || g)::simhash64 FROM generate_series(1, 40) g;
INSERT INTO ex_cand VALUES (3100, NULL), (3101, NULL);
CREATE FUNCTION ex_exact(k int) RETURNS TABLE (radius int, stored bigint, refused bigint,
	wrongly_stored bigint, wrongly_refused bigint)
LANGUAGE plpgsql SET client_min_messages = warning AS $fn$
DECLARE
	c record;
BEGIN
	DROP TABLE IF EXISTS ex_k;
	CREATE TABLE ex_k (id int, h simhash64);
	IF k % 2 = 1 THEN
		EXECUTE format('ALTER TABLE ex_k ADD CONSTRAINT ex_k_near EXCLUDE USING simhash (simhash_ball(h, %s) WITH &&)', k);
	END IF;
	INSERT INTO ex_k SELECT -g, simhash_hash('stored ' || g)::simhash64 FROM generate_series(1, 3000) g;
	IF k % 2 = 0 THEN
		EXECUTE format('ALTER TABLE ex_k ADD CONSTRAINT ex_k_near EXCLUDE USING simhash (simhash_ball(h, %s) WITH &&)', k);
	END IF;
	INSERT INTO ex_k SELECT id, h FROM ex_cand WHERE id <= 1500 ORDER BY id ON CONFLICT DO NOTHING;
	FOR c IN SELECT id, h FROM ex_cand WHERE id > 1500 ORDER BY id LOOP
		BEGIN
			INSERT INTO ex_k VALUES (c.id, c.h);
		EXCEPTION WHEN exclusion_violation THEN
			NULL;
		END;
	END LOOP;
	PERFORM simhash_index_check('ex_k_near', true);
	SET LOCAL enable_indexscan = off;
	SET LOCAL enable_bitmapscan = off;
	RETURN QUERY SELECT k,
		(SELECT count(*) FROM ex_k WHERE id > 0),
		(SELECT count(*) FROM ex_cand WHERE id NOT IN (SELECT id FROM ex_k)),
		(SELECT count(*) FROM simhash_pairs('ex_k', 'id', 'h', k)),
		(SELECT count(*) FROM ex_cand r WHERE r.id NOT IN (SELECT id FROM ex_k)
		   AND NOT EXISTS (SELECT FROM ex_k s WHERE s.id < r.id AND hamming_distance(s.h, r.h) <= k));
END
$fn$;
SELECT e.* FROM generate_series(0, 8) k, ex_exact(k) e;
DROP TABLE ex_k, ex_cand;
DROP FUNCTION ex_exact(int), ex_flip(simhash64, int, int);

-- the constraint's index is dumped and restored with its table (the
-- pg_dump round trip itself: test/t/041_exclusion.pl)
SELECT pg_get_indexdef('ex_docs_no_near_dup'::regclass);
DROP TABLE ex_docs;
