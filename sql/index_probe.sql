-- The probe plans of radius lookups (src/core/probe_plan.h).
-- Radius 0 .. 8 under several (blocks, max_distance): every index answer
-- equals a sequential reference that no index can answer (hamming_distance())
-- for queries with planted neighbours at every distance 1 .. 8, the flipped
-- bits placed by hashing, so every way of spreading them over the blocks
-- occurs; a plan missing a probe loses some of them (mismatches > 0).
-- 100,000 rows: large enough that the lookups probe rather than read a whole
-- tree (up to radius 6 at (4, 3), 8 at (5, 4), (6, 5), (7, 6), 4 at (3, 2),
-- 3 at (5, 3); with format 2's table-0 leaves of about 805 entries).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;

CREATE TABLE pt (id int PRIMARY KEY, h simhash64);
INSERT INTO pt SELECT g, simhash_hash('pt' || g)::simhash64 FROM generate_series(1, 100000) g;
CREATE TABLE pq (qid int PRIMARY KEY, q simhash64);
INSERT INTO pq SELECT i, simhash_hash('pq' || i)::simhash64 FROM generate_series(1, 40) i;
-- q with d distinct bits flipped, chosen by hashing seed
CREATE FUNCTION pflip(h simhash64, d int, seed text) RETURNS simhash64 LANGUAGE sql IMMUTABLE AS $$
	SELECT (h::bigint # coalesce((SELECT bit_or(1::bigint << p) FROM
		(SELECT p FROM generate_series(0, 63) p ORDER BY simhash_hash(seed || ':' || p), p LIMIT d) x), 0))::simhash64
$$;
INSERT INTO pt SELECT 1000000 + qid * 1000 + d * 10 + v, pflip(q, d, qid || ':' || d || ':' || v)
	FROM pq, generate_series(1, 8) d, generate_series(0, 9) v;
ANALYZE pt;

-- the reference: one sequential pass
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TABLE pref AS SELECT qid, r, coalesce((SELECT array_agg(id ORDER BY id) FROM pt WHERE hamming_distance(h, q) <= r), '{}') AS ids
	FROM pq, generate_series(0, 8) r;
RESET enable_indexscan;
RESET enable_bitmapscan;
SELECT r, sum(cardinality(ids)) AS reference_rows FROM pref GROUP BY r ORDER BY r;

-- each radius through an index scan and a bitmap scan, compared with the
-- reference; k nearest by an ordered scan (distance rings) compared too
CREATE FUNCTION probe_check(label text) RETURNS TABLE (setting text, radius int, rows bigint, index_mismatches int, bitmap_mismatches int)
LANGUAGE plpgsql AS $$
DECLARE x record; a int[]; b int[]; mi int; mb int; n bigint;
BEGIN
	FOR radius IN 0..8 LOOP
		mi := 0; mb := 0; n := 0;
		FOR x IN SELECT p.qid, p.q, f.ids FROM pq p JOIN pref f USING (qid) WHERE f.r = radius ORDER BY qid LOOP
			PERFORM set_config('enable_seqscan', 'off', true);
			PERFORM set_config('enable_bitmapscan', 'off', true);
			PERFORM set_config('enable_indexscan', 'on', true);
			EXECUTE 'SELECT coalesce(array_agg(id ORDER BY id), ''{}'') FROM pt WHERE h <~> $1 <= $2' INTO a USING x.q, radius;
			PERFORM set_config('enable_bitmapscan', 'on', true);
			PERFORM set_config('enable_indexscan', 'off', true);
			EXECUTE 'SELECT coalesce(array_agg(id ORDER BY id), ''{}'') FROM pt WHERE h <@ simhash_ball($1, $2)' INTO b USING x.q, radius;
			mi := mi + (a IS DISTINCT FROM x.ids)::int;
			mb := mb + (b IS DISTINCT FROM x.ids)::int;
			n := n + cardinality(a);
		END LOOP;
		RETURN QUERY SELECT label, radius, n, mi, mb;
	END LOOP;
	PERFORM set_config('enable_seqscan', 'on', true);
	PERFORM set_config('enable_bitmapscan', 'on', true);
	PERFORM set_config('enable_indexscan', 'on', true);
END $$;
-- the distances of the 12 nearest rows by the index's ordered scan, against a sort
CREATE FUNCTION nearest_check() RETURNS int LANGUAGE plpgsql AS $$
DECLARE x record; a int[]; b int[]; bad int := 0;
BEGIN
	FOR x IN SELECT qid, q FROM pq ORDER BY qid LOOP
		PERFORM set_config('enable_seqscan', 'off', true);
		PERFORM set_config('enable_bitmapscan', 'off', true);
		EXECUTE 'SELECT array_agg(d) FROM (SELECT hamming_distance(h, $1) AS d FROM pt ORDER BY h <~> $1 LIMIT 12) s' INTO a USING x.q;
		PERFORM set_config('enable_seqscan', 'on', true);
		PERFORM set_config('enable_indexscan', 'off', true);
		EXECUTE 'SELECT array_agg(d ORDER BY d) FROM (SELECT hamming_distance(h, $1) AS d FROM pt ORDER BY 1 LIMIT 12) s' INTO b USING x.q;
		PERFORM set_config('enable_indexscan', 'on', true);
		bad := bad + (a IS DISTINCT FROM b)::int;
	END LOOP;
	RETURN bad;
END $$;

CREATE INDEX pt_s ON pt USING simhash (h);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM pt WHERE h <~> '0123456789abcdef' <= 6;
-- A lookup's estimated cost follows its radius's probe plan
-- (src/index/cost.c): at (4, 3) radius 0 / 1 / 2 probe 1 / 2 / 3 tables, 3
-- probes 4, radius 4 / 5 / 6 probe 20 / 36 / 52 prefixes
CREATE FUNCTION lookup_cost(r int) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
	EXECUTE format('EXPLAIN (FORMAT JSON) SELECT id FROM pt WHERE h <~> %L <= %s',
		'0123456789abcdef', r) INTO j;
	RETURN (j -> 0 -> 'Plan' ->> 'Total Cost')::float8;
END $$;
SELECT lookup_cost(0) < lookup_cost(1) AS "0 < 1", lookup_cost(1) < lookup_cost(2) AS "1 < 2",
       lookup_cost(2) < lookup_cost(3) AS "2 < 3", lookup_cost(3) < lookup_cost(4) AS "3 < 4",
       lookup_cost(4) < lookup_cost(5) AS "4 < 5", lookup_cost(5) < lookup_cost(6) AS "5 < 6",
       (lookup_cost(6) - lookup_cost(3)) > 5 * (lookup_cost(3) - lookup_cost(0)) AS "6 - 3 > 5 x (3 - 0)";
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT * FROM probe_check('blocks 4, max_distance 3');
SELECT nearest_check() AS nearest_mismatches;
DROP INDEX pt_s;

CREATE INDEX pt_s ON pt USING simhash (h) WITH (blocks = 5, max_distance = 4);
SELECT * FROM probe_check('blocks 5, max_distance 4');
DROP INDEX pt_s;

CREATE INDEX pt_s ON pt USING simhash (h) WITH (blocks = 6, max_distance = 5);
SELECT * FROM probe_check('blocks 6, max_distance 5');
SELECT nearest_check() AS nearest_mismatches;
DROP INDEX pt_s;

CREATE INDEX pt_s ON pt USING simhash (h) WITH (blocks = 7, max_distance = 6);
SELECT * FROM probe_check('blocks 7, max_distance 6');
DROP INDEX pt_s;

CREATE INDEX pt_s ON pt USING simhash (h) WITH (blocks = 3, max_distance = 2);
SELECT * FROM probe_check('blocks 3, max_distance 2');
DROP INDEX pt_s;

CREATE INDEX pt_s ON pt USING simhash (h) WITH (blocks = 5, max_distance = 3);
SELECT * FROM probe_check('blocks 5, max_distance 3');
DROP INDEX pt_s;

DROP TABLE pt, pq, pref;
DROP FUNCTION pflip(simhash64, int, text), probe_check(text), nearest_check(), lookup_cost(int);
