-- issue #14: simhash_pairs, simhash_groups and CREATE INDEX ... USING
-- simhash in parallel workers give exactly the serial results.  Workers
-- are forced on small inputs with simhash.parallel_min_rows = 0; the
-- progress NOTICEs (simhash.progress_interval = 0) show how many workers
-- searched.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;

-- 6000 rows: 5000 random, 1000 copies of earlier rows with up to 5 bits
-- flipped (by simhash_hash of the row number: fixed), 50 identical
-- fingerprints, and NULLs
CREATE TABLE pp (id bigint PRIMARY KEY, h simhash64);
INSERT INTO pp SELECT i, simhash_hash('r' || i)::simhash64 FROM generate_series(1, 5000) i;
INSERT INTO pp
SELECT 5000 + i, (src.h::bigint # coalesce((SELECT bit_or(1::bigint << (abs(simhash_hash('n' || i || '/' || j)) % 64)::int)
                                           FROM generate_series(1, i % 6) j), 0))::simhash64
FROM generate_series(1, 1000) i JOIN pp src ON src.id = i * 7 % 5000 + 1;
INSERT INTO pp SELECT 6000 + i, simhash_hash('same')::simhash64 FROM generate_series(1, 50) i;
INSERT INTO pp VALUES (7001, NULL), (7002, NULL);
ANALYZE pp;

-- the serial result (no workers) against the parallel one, for a job:
-- rows, and rows only in one of them
CREATE FUNCTION pp_compare(job text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	r text;
BEGIN
	SET LOCAL max_parallel_maintenance_workers = 0;
	EXECUTE format('CREATE TEMP TABLE pp_serial AS SELECT * FROM %s', job);
	SET LOCAL max_parallel_maintenance_workers = 2;
	SET LOCAL simhash.parallel_min_rows = 0;
	EXECUTE format('CREATE TEMP TABLE pp_par AS SELECT * FROM %s', job);
	SELECT format('%s rows, %s only serial, %s only parallel',
		(SELECT count(*) FROM pp_serial),
		(SELECT count(*) FROM (TABLE pp_serial EXCEPT ALL TABLE pp_par) a),
		(SELECT count(*) FROM (TABLE pp_par EXCEPT ALL TABLE pp_serial) b)) INTO r;
	DROP TABLE pp_serial, pp_par;
	RETURN r;
END $$;

-- pairs, for several max_distance and blocks (k = 0 is one table group:
-- nothing to split)
SELECT k, b, pp_compare(format('simhash_pairs(''pp'', ''id'', ''h'', %s, %s)', k, coalesce(b::text, 'NULL')))
FROM (VALUES (0, NULL), (1, NULL), (2, NULL), (3, NULL), (3, 4), (3, 8), (4, NULL), (5, 6), (8, 10)) v(k, b);
-- ids of other types (kept in a temporary file, rows carry row numbers)
SELECT pp_compare('simhash_pairs(''pp'', ''id'', ''h'', NULL::text, 3)');
SELECT pp_compare('simhash_pairs(''pp'', ''id'', ''h'', NULL::numeric, 4)');
-- groups, both linkages
SELECT l, k, pp_compare(format('simhash_groups(''pp'', ''id'', ''h'', %s, %L)', k, l))
FROM (VALUES ('connected'), ('leader')) a(l), (VALUES (2), (3), (5)) b(k);
SELECT pp_compare('simhash_groups(''pp'', ''id'', ''h'', NULL::text, 3, ''leader'')');

-- the pairs against the brute-force self-join, with workers
SET max_parallel_maintenance_workers = 2;
SET simhash.parallel_min_rows = 0;
WITH got AS (SELECT * FROM simhash_pairs('pp', 'id', 'h', 4)),
     ref AS (SELECT a.id AS id_a, b.id AS id_b, hamming_distance(a.h, b.h) AS distance
             FROM pp a JOIN pp b ON a.id < b.id WHERE hamming_distance(a.h, b.h) <= 4)
SELECT (SELECT count(*) FROM got) AS pairs,
       (SELECT count(*) FROM (SELECT * FROM ref EXCEPT ALL SELECT * FROM got) m) AS missing,
       (SELECT count(*) FROM (SELECT * FROM got EXCEPT ALL SELECT * FROM ref) x) AS extra;

-- the workers really search: the progress messages say how many
SET simhash.progress_interval = 0;
SELECT count(*) FROM simhash_pairs('pp', 'id', 'h', 3);
SELECT count(DISTINCT group_id) FROM simhash_groups('pp', 'id', 'h', 3);
-- one worker, and none
SET max_parallel_maintenance_workers = 1;
SELECT count(*) FROM simhash_pairs('pp', 'id', 'h', 3);
SET max_parallel_maintenance_workers = 0;
SELECT count(*) FROM simhash_pairs('pp', 'id', 'h', 3);
SET max_parallel_maintenance_workers = 2;
-- workers planned but none started: the leader sorts and searches alone
SET max_parallel_workers = 0;
SELECT count(*) FROM simhash_pairs('pp', 'id', 'h', 3);
RESET simhash.progress_interval;
SELECT k, b, pp_compare(format('simhash_pairs(''pp'', ''id'', ''h'', %s, %s)', k, coalesce(b::text, 'NULL')))
FROM (VALUES (3, NULL), (6, 8)) v(k, b);
SELECT pp_compare('simhash_groups(''pp'', ''id'', ''h'', 3)');
RESET max_parallel_workers;
SET simhash.progress_interval = 0;
-- below the threshold: serial
SET simhash.parallel_min_rows = 100000;
SELECT count(*) FROM simhash_pairs('pp', 'id', 'h', 3);
SET simhash.parallel_min_rows = 0;
-- inside a query that is itself in parallel mode (a Gather above the
-- function scan's leader): the job still starts its own workers
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF) SELECT count(*) FROM simhash_pairs('pp', 'id', 'h', 3) p JOIN pp ON pp.id = p.id_a;
SELECT count(*) FROM simhash_pairs('pp', 'id', 'h', 3) p JOIN pp ON pp.id = p.id_a;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET simhash.progress_interval;

-- in a subtransaction that fails after the search, and one that fails in it
BEGIN;
SAVEPOINT s;
SELECT count(*) FROM simhash_pairs('pp', 'id', 'h', 3);
SELECT 1 / 0;
ROLLBACK TO SAVEPOINT s;
SELECT count(*) FROM simhash_pairs('pp', 'id', 'h', 2);
COMMIT;
RESET max_parallel_maintenance_workers;
RESET simhash.parallel_min_rows;
-- the setting's range
SET simhash.parallel_min_rows = -1;

-- the read by a parallel table scan (src/dedup/read_parallel.c): workers
-- and the leader scan the table and take (id, fingerprint) from the
-- tuples; inputs a scan cannot read as the SPI query would stay on SPI
SET max_parallel_maintenance_workers = 2;
SET simhash.parallel_min_rows = 0;
-- integer ids: read as bigint, or as their own type (NULL fingerprints
-- included)
CREATE TABLE pp4 AS SELECT id::integer AS id, h FROM pp;
ANALYZE pp4;
SET parallel_leader_participation = off;	-- the workers read it all
SELECT pp_compare('simhash_pairs(''pp4'', ''id'', ''h'', 3)');
SELECT pp_compare('simhash_pairs(''pp4'', ''id'', ''h'', id_type => NULL::integer, max_distance => 3)');
SELECT pp_compare('simhash_groups(''pp4'', ''id'', ''h'', 3)');
SELECT pp_compare('simhash_groups(''pp4'', ''id'', ''h'', 2, ''leader'')');
-- the rows the query sees: the transaction's own deletes and updates
BEGIN;
DELETE FROM pp4 WHERE id % 3 = 0;
UPDATE pp4 SET h = (h::bigint # 1)::simhash64 WHERE id % 5 = 0;
SELECT pp_compare('simhash_pairs(''pp4'', ''id'', ''h'', 3)');
SELECT pp_compare('simhash_groups(''pp4'', ''id'', ''h'', 3)');
ROLLBACK;
RESET parallel_leader_participation;
-- the progress messages say who read: workers for pp4, SPI for text ids
SET simhash.progress_interval = 0;
SELECT count(*) FROM simhash_pairs('pp4', 'id', 'h', 3);
SELECT count(*) FROM simhash_pairs('pp4', 'id', 'h', NULL::text, 3);
RESET simhash.progress_interval;
-- inheritance children are read too (through SPI), and a materialized
-- view by the scan
CREATE TABLE pp4_child (extra int) INHERITS (pp4);
INSERT INTO pp4_child SELECT id + 100000, h FROM pp4 WHERE id <= 300;
CREATE MATERIALIZED VIEW pp4_mv AS SELECT * FROM pp4;
ANALYZE pp4_mv;
SET simhash.progress_interval = 0;
SELECT count(*) FROM simhash_pairs('pp4', 'id', 'h', 3);
SELECT count(*) FROM simhash_pairs('pp4_mv', 'id', 'h', 3);
DROP MATERIALIZED VIEW pp4_mv;
DROP TABLE pp4_child;
ANALYZE pp4;	-- clears relhassubclass: no child left
-- the table's parallel_workers caps the read's workers (0: SPI)
ALTER TABLE pp4 SET (parallel_workers = 1);
SELECT count(*) FROM simhash_pairs('pp4', 'id', 'h', 3);
ALTER TABLE pp4 SET (parallel_workers = 0);
SELECT count(*) FROM simhash_pairs('pp4', 'id', 'h', 3);
ALTER TABLE pp4 RESET (parallel_workers);
RESET simhash.progress_interval;
-- a NULL id fails the job, whichever participant meets it
INSERT INTO pp4 VALUES (NULL, simhash_hash('x')::simhash64);
\set VERBOSITY terse
SELECT count(*) FROM simhash_pairs('pp4', 'id', 'h', 3);
\set VERBOSITY default
DELETE FROM pp4 WHERE id IS NULL;
-- row level security: the policy's rows only (SPI applies it)
CREATE ROLE regress_pp_reader;
GRANT SELECT ON pp4 TO regress_pp_reader;
ALTER TABLE pp4 ENABLE ROW LEVEL SECURITY;
CREATE POLICY pp4_even ON pp4 FOR SELECT TO regress_pp_reader USING (id % 2 = 0);
SET ROLE regress_pp_reader;
SELECT pp_compare('simhash_pairs(''pp4'', ''id'', ''h'', 3)');
SELECT count(*) FILTER (WHERE id_a % 2 = 1 OR id_b % 2 = 1) AS hidden_rows
FROM simhash_pairs('pp4', 'id', 'h', 3);
RESET ROLE;
ALTER TABLE pp4 DISABLE ROW LEVEL SECURITY;
-- a column the user may not read: the read fails as the query would
REVOKE SELECT ON pp4 FROM regress_pp_reader;
GRANT SELECT (id) ON pp4 TO regress_pp_reader;
SET ROLE regress_pp_reader;
SELECT count(*) FROM simhash_pairs('pp4', 'id', 'h', 3);
RESET ROLE;
DROP TABLE pp4;
DROP ROLE regress_pp_reader;
RESET max_parallel_maintenance_workers;
RESET simhash.parallel_min_rows;

-- CREATE INDEX: the tables' trees built and written by parallel workers
-- (each in its block range, src/index/build_parallel.c) give the serial
-- index, page for page (but the page LSNs, set by the build's WAL); pp_par
-- by the workers alone, pp_par1 by one worker and the leader
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pageinspect;
RESET client_min_messages;
SET simhash.parallel_min_rows = 0;
SET max_parallel_maintenance_workers = 0;
CREATE INDEX pp_serial ON pp USING simhash (h) WITH (blocks = 6, max_distance = 3);
SET max_parallel_maintenance_workers = 2;
SET client_min_messages = debug1;
SET parallel_leader_participation = off;
CREATE INDEX pp_par ON pp USING simhash (h) WITH (blocks = 6, max_distance = 3);
RESET parallel_leader_participation;
SET max_parallel_maintenance_workers = 1;
CREATE INDEX pp_par1 ON pp USING simhash (h) WITH (blocks = 6, max_distance = 3);
RESET client_min_messages;
-- pages compared from byte 11: the LSN and checksum depend on when a page was written
SELECT pg_relation_size('pp_par') = pg_relation_size('pp_serial') AS same_size,
       pg_relation_size('pp_par1') = pg_relation_size('pp_serial') AS same_size_1,
       count(*) FILTER (WHERE substr(get_raw_page('pp_par', i), 11) <> substr(get_raw_page('pp_serial', i), 11)) AS differing_pages,
       count(*) FILTER (WHERE substr(get_raw_page('pp_par1', i), 11) <> substr(get_raw_page('pp_serial', i), 11)) AS differing_pages_1
FROM generate_series(0, (pg_relation_size('pp_serial') / 8192)::int - 1) i;
SELECT simhash_index_check('pp_par', true);

-- the heap scan by workers and the leader (src/index/build_scan.c), merged
-- into a serial scan's order: the same pages with dead rows, HOT chains
-- (rows under their root's TID), NULLs, an expression, a predicate, and
-- CONCURRENTLY (an MVCC snapshot)
CREATE TABLE pq (id integer PRIMARY KEY, body text, h simhash64) WITH (fillfactor = 50);
INSERT INTO pq SELECT i, 'doc ' || (i % 700) || ' of ' || (i % 13), simhash_hash('q' || (i % 1500))::simhash64
FROM generate_series(1, 30000) i;
UPDATE pq SET h = (h::bigint # 3)::simhash64 WHERE id % 4 = 0;
UPDATE pq SET h = (h::bigint # 12)::simhash64 WHERE id % 8 = 0;
DELETE FROM pq WHERE id % 7 = 0;
INSERT INTO pq VALUES (50001, NULL, NULL), (50002, 'x', NULL);
-- pages of two indexes of the same size that differ (but the LSNs and
-- checksums, bytes 1-10, which depend on when a page was written)
CREATE FUNCTION pq_diff(a regclass, b regclass) RETURNS text LANGUAGE sql AS $$
SELECT format('%s pages, %s differ', count(*),
	count(*) FILTER (WHERE substr(get_raw_page(a::text, i), 11) <> substr(get_raw_page(b::text, i), 11)))
	|| CASE WHEN pg_relation_size(a) <> pg_relation_size(b) THEN ', sizes differ' ELSE '' END
FROM generate_series(0, (greatest(pg_relation_size(a), pg_relation_size(b)) / 8192)::int - 1) i $$;
SET min_parallel_table_scan_size = 0;	-- for the planner's check of expressions
SET max_parallel_maintenance_workers = 0;
CREATE INDEX pq_col_s ON pq USING simhash (h);
CREATE INDEX pq_expr_s ON pq USING simhash (simhash(body)) WITH (blocks = 5, max_distance = 2);
CREATE INDEX pq_part_s ON pq USING simhash (h) WHERE id % 3 = 0;
CREATE INDEX CONCURRENTLY pq_conc_s ON pq USING simhash (h);
SET max_parallel_maintenance_workers = 2;
SET parallel_leader_participation = off;	-- the workers scan it all
SET client_min_messages = debug1;
CREATE INDEX pq_col_p ON pq USING simhash (h);
CREATE INDEX pq_expr_p ON pq USING simhash (simhash(body)) WITH (blocks = 5, max_distance = 2);
CREATE INDEX pq_part_p ON pq USING simhash (h) WHERE id % 3 = 0;
CREATE INDEX CONCURRENTLY pq_conc_p ON pq USING simhash (h);
RESET client_min_messages;
RESET parallel_leader_participation;
SELECT pq_diff('pq_col_s', 'pq_col_p') AS col, pq_diff('pq_expr_s', 'pq_expr_p') AS expr,
       pq_diff('pq_part_s', 'pq_part_p') AS part, pq_diff('pq_conc_s', 'pq_conc_p') AS conc;
SELECT simhash_index_check('pq_col_p', true) IS NOT NULL AS checked;
SET enable_seqscan = off;
SELECT count(*) FROM pq a, pq b WHERE b.h <~> a.h <= 2 AND a.id < b.id;
RESET enable_seqscan;
SELECT count(*) FROM pq a, pq b WHERE b.h <~> a.h <= 2 AND a.id < b.id;
RESET min_parallel_table_scan_size;
DROP TABLE pq;
DROP FUNCTION pq_diff(regclass, regclass);

-- a search through it
DROP INDEX pp_serial, pp_par1;
SET enable_seqscan = off;
SELECT count(*) FROM pp a, pp b WHERE b.h <~> a.h <= 2 AND a.id < b.id AND a.id <= 5200;
RESET enable_seqscan;
RESET max_parallel_maintenance_workers;
RESET simhash.parallel_min_rows;

DROP TABLE pp;
DROP FUNCTION pp_compare(text);
