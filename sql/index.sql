-- the simhash index access method: exact results for every radius, against
-- a sequential reference that no index can answer (hamming_distance())
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;

-- 20,000 random fingerprints, and near-duplicates of 100 of them at
-- distances 1..6 with flipped bits spread over all blocks
CREATE TABLE ix (id int PRIMARY KEY, h simhash64);
INSERT INTO ix SELECT g, simhash_hash(g::text)::simhash64 FROM generate_series(1, 20000) g;
CREATE FUNCTION flip(h simhash64, d int) RETURNS simhash64 LANGUAGE sql IMMUTABLE AS $$
	SELECT (h::bigint # (SELECT coalesce(bit_or(1::bigint << p), 0)
	                     FROM unnest(ARRAY[5, 21, 37, 53, 13, 29, 45, 61]) WITH ORDINALITY AS u(p, o)
	                     WHERE o <= d))::simhash64
$$;
INSERT INTO ix SELECT 100000 + c * 10 + d, flip(simhash_hash(c::text)::simhash64, d)
	FROM generate_series(1, 100) c, generate_series(1, 6) d;
INSERT INTO ix VALUES (900001, NULL), (900002, NULL);
CREATE INDEX ix_h ON ix USING simhash (h);
SELECT simhash_index_check('ix_h', true);

-- the reference, and the index through index scans and bitmap scans
CREATE FUNCTION ref_ids(q simhash64, r int) RETURNS int[] LANGUAGE sql STABLE
	SET enable_indexscan = off SET enable_bitmapscan = off AS $$
	SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM ix WHERE hamming_distance(h, q) <= r
$$;
CREATE FUNCTION idx_ids(q simhash64, r int) RETURNS int[] LANGUAGE sql STABLE
	SET enable_seqscan = off SET enable_bitmapscan = off AS $$
	SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM ix WHERE h <@ simhash_ball(q, r)
$$;
CREATE FUNCTION bitmap_ids(q simhash64, r int) RETURNS int[] LANGUAGE sql STABLE
	SET enable_seqscan = off SET enable_indexscan = off AS $$
	SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM ix WHERE h <@ simhash_ball(q, r)
$$;
-- each plan forced: which one costs less depends on whether ix has been
-- analyzed, which autovacuum may do at any time
SET enable_indexscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM ix WHERE h <@ simhash_ball('0123456789abcdef', 3);
RESET enable_indexscan;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM ix WHERE h <@ simhash_ball('0123456789abcdef', 3);
RESET enable_bitmapscan;

-- queries: planted centers, random values, and values near nothing
CREATE TABLE queries AS
	SELECT simhash_hash(c::text)::simhash64 AS q FROM generate_series(1, 100, 3) c
	UNION ALL SELECT flip(simhash_hash(c::text)::simhash64, 2) FROM generate_series(1, 100, 7) c
	UNION ALL SELECT simhash_hash('q' || g)::simhash64 FROM generate_series(1, 10) g;
CREATE FUNCTION check_all(label text) RETURNS TABLE (what text, radius int, queries bigint, matches bigint, wrong bigint)
	LANGUAGE sql AS $$
	SELECT label, r, count(*), sum(cardinality(ref_ids(q, r))),
	       count(*) FILTER (WHERE ref_ids(q, r) <> idx_ids(q, r) OR ref_ids(q, r) <> bitmap_ids(q, r))
	FROM queries, generate_series(0, 5) r GROUP BY r ORDER BY r
$$;
SELECT * FROM check_all('after build');

-- inserts go to the pending list, then into runs that are merged
INSERT INTO ix SELECT 200000 + g, simhash_hash('x' || g)::simhash64 FROM generate_series(1, 3000) g;
INSERT INTO ix SELECT 300000 + c * 10 + d, flip(simhash_hash(c::text)::simhash64, d)
	FROM generate_series(1, 100) c, generate_series(1, 6) d;
INSERT INTO ix SELECT 400000 + g, simhash_hash('y' || g)::simhash64 FROM generate_series(1, 5000) g;
SELECT simhash_index_check('ix_h', true);
SELECT * FROM check_all('after inserts');

-- deletes and VACUUM
DELETE FROM ix WHERE id % 3 = 0;
SELECT * FROM check_all('after delete');
VACUUM ix;
SELECT simhash_index_check('ix_h', true);
SELECT * FROM check_all('after vacuum');
UPDATE ix SET h = flip(h, 1) WHERE id % 5 = 1;
VACUUM ix;
SELECT simhash_index_check('ix_h', true);
SELECT * FROM check_all('after update and vacuum');
REINDEX INDEX ix_h;
SELECT simhash_index_check('ix_h', true);
SELECT * FROM check_all('after reindex');

-- several keys on one column, NULL and degenerate balls
SET enable_seqscan = off;
SELECT count(*) FROM ix WHERE h <@ simhash_ball(simhash_hash('1')::simhash64, 6)
	AND h <@ simhash_ball(flip(simhash_hash('1')::simhash64, 6), 1);
SELECT count(*) FROM ix WHERE h <@ NULL::simhash_ball;
SELECT count(*) FROM ix WHERE h <@ simhash_ball(simhash_hash('1')::simhash64, -1);
SELECT count(*) = (SELECT count(h) FROM ix) FROM ix WHERE h <@ simhash_ball('0000000000000000', 64);
RESET enable_seqscan;

-- other geometries: 2 tables, 15 tables, one table of whole values
CREATE INDEX ix_h21 ON ix USING simhash (h) WITH (blocks = 2, max_distance = 1);
CREATE INDEX ix_h62 ON ix USING simhash (h) WITH (blocks = 6, max_distance = 2);
CREATE INDEX ix_h10 ON ix USING simhash (h) WITH (blocks = 1, max_distance = 0);
SELECT simhash_index_check('ix_h21', true), simhash_index_check('ix_h62', true), simhash_index_check('ix_h10', true);
DROP INDEX ix_h;
DROP INDEX ix_h62; DROP INDEX ix_h10;
SELECT * FROM check_all('blocks 2, max_distance 1');
DROP INDEX ix_h21;
CREATE INDEX ix_h62 ON ix USING simhash (h) WITH (blocks = 6, max_distance = 2);
SELECT * FROM check_all('blocks 6, max_distance 2');
DROP INDEX ix_h62;
CREATE INDEX ix_h10 ON ix USING simhash (h) WITH (blocks = 1, max_distance = 0);
SELECT * FROM check_all('blocks 1, max_distance 0');
DROP INDEX ix_h10;

-- a build larger than maintenance_work_mem: chunks merged into one run
CREATE TABLE chunked AS SELECT g AS id, simhash_hash('c' || g)::simhash64 AS h FROM generate_series(1, 60000) g;
INSERT INTO chunked SELECT 100000 + id, flip(h, 2) FROM chunked WHERE id % 100 = 0;
SET maintenance_work_mem = '1MB';
CREATE INDEX chunked_h ON chunked USING simhash (h);
RESET maintenance_work_mem;
SELECT simhash_index_check('chunked_h', true);
SET enable_seqscan = off;
SELECT count(*) FILTER (WHERE n_index = n_ref) AS agree, count(*), sum(n_ref) AS matches FROM (
	SELECT (SELECT count(*) FROM chunked WHERE h <~> q.h <= 3) AS n_index,
	       (SELECT count(*) FROM chunked WHERE hamming_distance(h, q.h) <= 3) AS n_ref
	FROM (SELECT h FROM chunked WHERE id % 1000 = 0) q) x;
RESET enable_seqscan;
DROP TABLE chunked;

-- options
\set VERBOSITY sqlstate
CREATE INDEX bad ON ix USING simhash (h) WITH (blocks = 3, max_distance = 3);
CREATE INDEX bad ON ix USING simhash (h) WITH (blocks = 65);
CREATE INDEX bad ON ix USING simhash (h) WITH (max_distance = -1);
CREATE INDEX bad ON ix USING simhash (h) WITH (blocks = 40, max_distance = 20);
CREATE INDEX bad ON ix USING simhash (h) WITH (nonsense = 1);
\set VERBOSITY default
CREATE INDEX bad ON ix USING simhash (h) WITH (blocks = 3, max_distance = 3);
CREATE INDEX bad ON ix USING simhash (h) WITH (blocks = 40, max_distance = 20);
CREATE INDEX bad ON ix USING simhash (id);
CREATE INDEX bad ON ix USING simhash (h, h);

-- an empty table, then inserts into it; an all-NULL table
CREATE TABLE empty (h simhash64);
CREATE INDEX ON empty USING simhash (h);
SET enable_seqscan = off;
SELECT count(*) FROM empty WHERE h <@ simhash_ball('0000000000000000', 64);
INSERT INTO empty VALUES ('0000000000000001'), ('0000000000000003'), (NULL);
SELECT h FROM empty WHERE h <@ simhash_ball('0000000000000000', 1);
CREATE TABLE nulls AS SELECT NULL::simhash64 AS h FROM generate_series(1, 100);
CREATE INDEX ON nulls USING simhash (h);
SELECT count(*) FROM nulls WHERE h <@ simhash_ball('0000000000000000', 64);

-- one hash repeated 10,000 times: equal prefixes across many leaves
CREATE TABLE dups AS SELECT g AS id, CASE WHEN g % 2 = 0 THEN 'f0f0f0f0f0f0f0f0'::simhash64
	ELSE simhash_hash(g::text)::simhash64 END AS h FROM generate_series(1, 20000) g;
CREATE INDEX dups_h ON dups USING simhash (h);
SELECT simhash_index_check('dups_h', true);
SELECT count(*) FROM dups WHERE h <@ simhash_ball('f0f0f0f0f0f0f0f0', 0);
SELECT count(*) FROM dups WHERE h <@ simhash_ball('f0f0f0f0f0f0f0f1', 3);
SELECT count(*) FROM dups WHERE h <@ simhash_ball('f0f0f0f0f0f0f0f1', 0);
RESET enable_seqscan;

-- the spellings the planner rewrites use the index (planner.c)
CREATE TABLE docs AS SELECT id, h FROM ix WHERE id < 1000 OR id > 100000;
CREATE INDEX docs_h ON docs USING simhash (h);
ANALYZE docs;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> '0123456789abcdef' <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> '0123456789abcdef' < 4;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE 3 >= h <~> '0123456789abcdef';
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE '0123456789abcdef' <~> h <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> '0123456789abcdef' = 0;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE (h <~> '0123456789abcdef')::int <= 3;
CREATE FUNCTION forms_agree(q simhash64) RETURNS boolean LANGUAGE sql STABLE AS $$
	SELECT (SELECT array_agg(id ORDER BY id) FROM docs WHERE h <~> q <= 3)
	         IS NOT DISTINCT FROM (SELECT array_agg(id ORDER BY id) FROM docs WHERE hamming_distance(h, q) <= 3)
	   AND (SELECT array_agg(id ORDER BY id) FROM docs WHERE h <~> q < 4)
	         IS NOT DISTINCT FROM (SELECT array_agg(id ORDER BY id) FROM docs WHERE hamming_distance(h, q) < 4)
	   AND (SELECT array_agg(id ORDER BY id) FROM docs WHERE 3 >= q <~> h)
	         IS NOT DISTINCT FROM (SELECT array_agg(id ORDER BY id) FROM docs WHERE hamming_distance(h, q) <= 3)
	   AND (SELECT array_agg(id ORDER BY id) FROM docs WHERE h <~> q = 0)
	         IS NOT DISTINCT FROM (SELECT array_agg(id ORDER BY id) FROM docs WHERE h = q)
$$;
SELECT count(*) FILTER (WHERE forms_agree(q)) AS agree, count(*) FROM queries;
-- prepared statements, generic and custom plans, int2/int4/int8 radii
PREPARE near(simhash64, int) AS SELECT count(*) FROM docs WHERE h <~> $1 <= $2;
PREPARE near2(simhash64, smallint) AS SELECT count(*) FROM docs WHERE h <~> $1 <= $2;
PREPARE near8(simhash64, bigint) AS SELECT count(*) FROM docs WHERE h <~> $1 <= $2;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE near('0123456789abcdef', 3);
SELECT count(*) FILTER (WHERE n1 = e AND n2 = e AND n8 = e) AS agree, count(*) FROM (
	SELECT (SELECT count(*) FROM docs WHERE hamming_distance(h, q) <= r) AS e,
	       r, q FROM queries, generate_series(0, 5) r) x,
	LATERAL (SELECT count(*) AS n1 FROM docs WHERE h <~> q <= r) a,
	LATERAL (SELECT count(*) AS n2 FROM docs WHERE h <~> q <= r::smallint) b,
	LATERAL (SELECT count(*) AS n8 FROM docs WHERE h <~> q <= r::bigint) c;
EXECUTE near(simhash_hash('1')::simhash64, 3);
EXECUTE near2(simhash_hash('1')::simhash64, 3::smallint);
EXECUTE near8(simhash_hash('1')::simhash64, 3);
SET plan_cache_mode = force_custom_plan;
EXPLAIN (COSTS OFF) EXECUTE near('0123456789abcdef', 3);
EXECUTE near(simhash_hash('1')::simhash64, 3);
RESET plan_cache_mode;
-- PL/pgSQL
CREATE FUNCTION near_count(q simhash64, k int) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
	RETURN (SELECT count(*) FROM docs WHERE h <~> q <= k);
END $$;
SELECT near_count(simhash_hash('1')::simhash64, 3), near_count(simhash_hash('2')::simhash64, 6);
-- self-join and a probe table: nested loops with a parameterized index scan
-- (the radius join, which the join tests cover, is off: without it, a plan
-- that reads one side with a disabled sequential scan either way is chosen
-- by cost alone from PostgreSQL 18 on)
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_seqscan = off;
SET simhash.enable_join = off;
\i sql/explain_plan.psql
SELECT plan('SELECT count(*) FROM docs a JOIN docs b ON a.h <~> b.h <= 3 AND a.id < b.id');
DROP FUNCTION plan(text);
SELECT count(*) FROM docs a JOIN docs b ON a.h <~> b.h <= 3 AND a.id < b.id;
RESET enable_seqscan;
CREATE TEMP TABLE probe AS SELECT q FROM queries;
ANALYZE probe;
EXPLAIN (COSTS OFF) SELECT count(*) FROM probe p JOIN docs d ON d.h <~> p.q <= 2;
SELECT count(*) FROM probe p JOIN docs d ON d.h <~> p.q <= 2;
RESET enable_hashjoin; RESET enable_mergejoin; RESET simhash.enable_join;
SELECT count(*) FROM docs a JOIN docs b ON hamming_distance(a.h, b.h) <= 3 AND a.id < b.id;
SELECT count(*) FROM probe p JOIN docs d ON hamming_distance(d.h, p.q) <= 2;
DROP TABLE docs, probe;
DROP FUNCTION forms_agree, near_count;

-- ORDER BY h <~> q: exact nearest neighbours by increasing distance
CREATE TABLE nn AS SELECT id, h FROM ix WHERE id % 7 = 0 OR id > 100000;
INSERT INTO nn VALUES (-1, NULL), (-2, NULL);
CREATE INDEX nn_h ON nn USING simhash (h);
INSERT INTO nn SELECT 500000 + g, simhash_hash('z' || g)::simhash64 FROM generate_series(1, 3000) g;
INSERT INTO nn VALUES (-3, NULL);
ANALYZE nn;
EXPLAIN (COSTS OFF) SELECT id FROM nn ORDER BY h <~> '0123456789abcdef' LIMIT 10;
EXPLAIN (COSTS OFF) SELECT id FROM nn WHERE h <~> '0123456789abcdef' <= 20 ORDER BY h <~> '0123456789abcdef' LIMIT 10;
CREATE FUNCTION nn_index(q simhash64, lim int, r int) RETURNS text LANGUAGE plpgsql
	SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off AS $$
DECLARE result text;
BEGIN
	IF r IS NULL THEN
		SELECT string_agg(coalesce((h <~> q)::text, 'null'), ',') INTO result
		FROM (SELECT h FROM nn ORDER BY h <~> q LIMIT lim) s;
	ELSE
		SELECT string_agg((h <~> q)::text, ',') INTO result
		FROM (SELECT h FROM nn WHERE h <~> q <= r ORDER BY h <~> q LIMIT lim) s;
	END IF;
	RETURN result;
END $$;
CREATE FUNCTION nn_sorted(q simhash64, lim int, r int) RETURNS text LANGUAGE sql AS $$
	SELECT string_agg(coalesce(d::text, 'null'), ',') FROM (
		SELECT hamming_distance(h, q) AS d FROM nn
		WHERE r IS NULL OR hamming_distance(h, q) <= r
		ORDER BY 1 NULLS LAST LIMIT lim) s
$$;
SELECT count(*) FILTER (WHERE nn_index(q, lim, r) IS NOT DISTINCT FROM nn_sorted(q, lim, r)) AS agree,
       count(*) FILTER (WHERE nn_index(q, lim, r) IS NOT NULL) AS nonempty, count(*)
	FROM (SELECT q FROM queries LIMIT 25) q, (VALUES (1), (10), (100)) l(lim), (VALUES (NULL), (0), (3), (8), (64)) rr(r);
-- every row, NULL keys last, each once
SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE h IS NULL) AS nulls,
       (array_agg(h IS NULL ORDER BY ord))[count(*) - 2:] AS last_three
	FROM (SELECT id, h, row_number() OVER () AS ord FROM
	      (SELECT id, h FROM nn ORDER BY h <~> '0123456789abcdef') s) x;
SELECT count(*) = (SELECT count(*) FROM nn) FROM (SELECT id FROM nn ORDER BY h <~> NULL::simhash64) s;
DELETE FROM nn WHERE id = -1 OR id % 11 = 0;
VACUUM nn;
SELECT simhash_index_check('nn_h', true);
SELECT count(*) FILTER (WHERE nn_index(q, 20, NULL) IS NOT DISTINCT FROM nn_sorted(q, 20, NULL)) AS agree, count(*) FROM queries;
DROP TABLE nn;
DROP FUNCTION nn_index, nn_sorted;

-- statistics, partitioned tables, CREATE INDEX CONCURRENTLY
CREATE TABLE parted (id int, h simhash64) PARTITION BY RANGE (id);
CREATE TABLE parted_1 PARTITION OF parted FOR VALUES FROM (0) TO (10000);
CREATE TABLE parted_2 PARTITION OF parted FOR VALUES FROM (10000) TO (MAXVALUE);
INSERT INTO parted SELECT id, h FROM ix WHERE id < 20000;
CREATE INDEX parted_h ON parted USING simhash (h);
ANALYZE parted;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM parted WHERE h <~> simhash_hash('1')::simhash64 <= 3;
SELECT count(*) = (SELECT count(*) FROM parted WHERE hamming_distance(h, simhash_hash('1')::simhash64) <= 3)
	FROM parted WHERE h <~> simhash_hash('1')::simhash64 <= 3;
RESET enable_seqscan;
SELECT simhash_index_check('parted_1_h_idx', true), simhash_index_check('parted_2_h_idx', true);
DROP TABLE parted;
CREATE INDEX CONCURRENTLY ix_conc ON ix USING simhash (h);
SELECT simhash_index_check('ix_conc', true);
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT pg_stat_reset_single_table_counters('ix_conc'::regclass);
SELECT count(*) FROM ix WHERE h <~> simhash_hash('3')::simhash64 <= 3;
SELECT count(*) FROM ix WHERE h <~> simhash_hash('4')::simhash64 <= 3;
RESET enable_seqscan; RESET enable_bitmapscan;
SELECT pg_stat_force_next_flush();
SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'ix_conc';
DROP INDEX ix_conc;

-- index-only scans: the index returns no column, but a query that needs
-- none (count(*), EXISTS) may still be planned as one; rows with NULL too
CREATE TABLE ios (h simhash64);
INSERT INTO ios SELECT CASE WHEN i % 10 = 0 THEN NULL ELSE simhash_hash(i::text)::simhash64 END
	FROM generate_series(1, 2000) i;
CREATE INDEX ios_h ON ios USING simhash (h);
VACUUM ANALYZE ios;
SET enable_seqscan = off; SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ios;
SELECT count(*) FROM ios;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ios WHERE h <~> simhash_hash('7')::simhash64 <= 3;
SELECT count(*) FROM ios WHERE h <~> simhash_hash('7')::simhash64 <= 3;
SELECT EXISTS (SELECT 1 FROM ios WHERE h <~> simhash_hash('8')::simhash64 <= 2);
RESET enable_seqscan; RESET enable_bitmapscan;
DROP TABLE ios;

-- fingerprints a few bytes apart (consecutive integers, and the same moved
-- to other blocks): leaves of 1- to 3-byte keys that fill their pages
CREATE TABLE dense (id int, h simhash64);
INSERT INTO dense SELECT g, (g::bigint << s)::simhash64
FROM generate_series(1, 20000) g, (VALUES (0), (16), (40)) v(s);
CREATE INDEX dense_h ON dense USING simhash (h);
SELECT simhash_index_check('dense_h');
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*) FROM dense WHERE h <~> (5::bigint << 16)::simhash64 <= 3;
RESET enable_seqscan; SET enable_indexscan = off;	-- the same from the table
SELECT count(*) FROM dense WHERE h <~> (5::bigint << 16)::simhash64 <= 3;
RESET enable_indexscan; RESET enable_bitmapscan;
DROP TABLE dense;

-- check function on something else
SELECT simhash_index_check('ix');
SELECT simhash_index_check('ix_pkey');
DROP TABLE ix, queries, empty, nulls, dups;
DROP FUNCTION flip, ref_ids, idx_ids, bitmap_ids, check_all;
