-- simhash_index_check: not executable by PUBLIC; for the index's owner;
-- the index's kind and ownership checked before any lock.
-- (That no lock is taken first is tested in test/t/010_index_corruption.pl.)
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
CREATE TABLE sec_t (id int, h simhash64);
INSERT INTO sec_t SELECT g, simhash_hash('sec' || g)::simhash64 FROM generate_series(1, 100) g;
CREATE INDEX sec_h ON sec_t USING simhash (h);
CREATE INDEX sec_id ON sec_t (id);
CREATE ROLE regress_simhash_user;
CREATE ROLE regress_simhash_owner;
GRANT regress_simhash_owner TO regress_simhash_user;

-- PUBLIC may not execute it
SELECT has_function_privilege('public', 'simhash_index_check(regclass, boolean)', 'EXECUTE') AS public_may;
SET ROLE regress_simhash_user;
SELECT simhash_index_check('sec_h');
RESET ROLE;

-- granted EXECUTE, a user must still own the index
GRANT EXECUTE ON FUNCTION simhash_index_check(regclass, boolean) TO regress_simhash_user;
SET ROLE regress_simhash_user;
SELECT simhash_index_check('sec_h', true);
-- not an index, not a simhash index, no such relation: clean errors
SELECT simhash_index_check('sec_t');
SELECT simhash_index_check(0::regclass);
RESET ROLE;
SELECT simhash_index_check('sec_id');
SELECT simhash_index_check('sec_t');

-- the owner (here through role membership) may
ALTER TABLE sec_t OWNER TO regress_simhash_owner;
SET ROLE regress_simhash_user;
SELECT simhash_index_check('sec_h', true);
SELECT simhash_index_check('sec_id');
RESET ROLE;

DROP TABLE sec_t;
REVOKE EXECUTE ON FUNCTION simhash_index_check(regclass, boolean) FROM regress_simhash_user;
DROP ROLE regress_simhash_user;
DROP ROLE regress_simhash_owner;

-- index scans bounded by work_mem: with a tiny work_mem, a ball
-- that matches every row spills its matches to a temporary file, and the
-- results (bitmap, index scan, ORDER BY) equal a sequential scan's
CREATE TABLE wm (id int, h simhash64);
INSERT INTO wm SELECT g, simhash_hash('wm' || (g % 30000))::simhash64 FROM generate_series(1, 40000) g;
INSERT INTO wm VALUES (0, NULL);
CREATE INDEX wm_h ON wm USING simhash (h) WITH (blocks = 4, max_distance = 3);
INSERT INTO wm SELECT g, simhash_hash('wm' || g)::simhash64 FROM generate_series(40001, 41000) g;
CREATE TEMP TABLE wm_ref AS
	SELECT count(*) AS n, sum(id) AS s, md5(string_agg(id::text, ',' ORDER BY id)) AS ids
	FROM wm WHERE hamming_distance(h, '0123456789abcdef') <= 40;
CREATE TEMP TABLE wm_ref_order AS
	SELECT array_agg(d ORDER BY d) AS ds FROM (
		SELECT hamming_distance(h, '0123456789abcdef') AS d FROM wm
		ORDER BY hamming_distance(h, '0123456789abcdef') NULLS LAST LIMIT 30000) x;
SET work_mem = '64kB';
SET enable_seqscan = off;
-- the scans alone (nothing else here sorts or hashes): do they spill?
SELECT pg_stat_force_next_flush();
SELECT temp_files AS temp_before FROM pg_stat_database WHERE datname = current_database() \gset
SET enable_indexscan = off;
SELECT (SELECT n FROM wm_ref) > 20000 AS many,
	(count(*), sum(id)) = (SELECT n, s FROM wm_ref) AS bitmap_equal
FROM wm WHERE h <~> '0123456789abcdef' <= 40;
RESET enable_indexscan;
SET enable_bitmapscan = off;
SELECT (count(*), sum(id)) = (SELECT n, s FROM wm_ref) AS indexscan_equal
FROM wm WHERE h <~> '0123456789abcdef' <= 40;
SELECT pg_stat_force_next_flush();
SELECT pg_stat_clear_snapshot();
SELECT temp_files > :temp_before AS spilled FROM pg_stat_database WHERE datname = current_database();
-- the rows themselves, in order
SELECT md5(string_agg(id::text, ',' ORDER BY id)) = (SELECT ids FROM wm_ref) AS indexscan_ids_equal
FROM wm WHERE h <~> '0123456789abcdef' <= 40;
SELECT array_agg(d ORDER BY n) = (SELECT ds FROM wm_ref_order) AS order_equal
FROM (SELECT hamming_distance(h, '0123456789abcdef') AS d, row_number() OVER () AS n
      FROM (SELECT h FROM wm ORDER BY h <~> '0123456789abcdef' LIMIT 30000) y) x;
SELECT count(*) = 41001 AS keyless_all FROM (SELECT id FROM wm ORDER BY h <~> '0123456789abcdef') x;
RESET enable_bitmapscan;
RESET enable_seqscan;
RESET work_mem;
DROP TABLE wm;
