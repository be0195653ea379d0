-- A chunked CREATE INDEX (maintenance_work_mem too
-- small for one run) leaves no free pages behind: its size is within a few
-- pages of a build in memory, and it answers as that one does.
-- (Churn, DELETE and VACUUM against a fresh build: test/t/032_index_churn.pl.)
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
CREATE TABLE churn_b (id int, h simhash64);
INSERT INTO churn_b SELECT g, simhash_hash('churn_b:' || g)::simhash64 FROM generate_series(1, 80000) g;
INSERT INTO churn_b SELECT g, NULL FROM generate_series(80001, 80100) g;
CREATE INDEX churn_b_mem ON churn_b USING simhash (h);
SET maintenance_work_mem = '1MB';
CREATE INDEX churn_b_chunked ON churn_b USING simhash (h);
RESET maintenance_work_mem;
SELECT pg_relation_size('churn_b_chunked') <= pg_relation_size('churn_b_mem') + 4 * current_setting('block_size')::int
	AS chunked_within_4_pages,
	pg_relation_size('churn_b_chunked') >= pg_relation_size('churn_b_mem') - 4 * current_setting('block_size')::int
	AS chunked_not_smaller;
SELECT simhash_index_check('churn_b_chunked', true);
-- its answers equal a sequential reference
DROP INDEX churn_b_mem;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
CREATE TEMP TABLE churn_q AS SELECT i, simhash_hash('churn_b:' || (i * 997))::simhash64 AS q, i % 7 AS r
	FROM generate_series(1, 20) i;
EXPLAIN (COSTS OFF) SELECT id FROM churn_b WHERE h <~> simhash_hash('x')::simhash64 <= 3;
CREATE TEMP TABLE churn_chunked AS
	SELECT i, array(SELECT id FROM churn_b WHERE h <~> q <= r ORDER BY id) AS ids FROM churn_q;
RESET enable_seqscan;
RESET enable_bitmapscan;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TEMP TABLE churn_seq AS
	SELECT i, array(SELECT id FROM churn_b WHERE hamming_distance(h, q) <= r ORDER BY id) AS ids FROM churn_q;
RESET enable_indexscan;
RESET enable_bitmapscan;
SELECT count(*) AS lookups, count(*) FILTER (WHERE a.ids IS DISTINCT FROM b.ids) AS differing,
	sum(cardinality(a.ids)) >= 20 AS found_rows
	FROM churn_chunked a JOIN churn_seq b USING (i);
DROP TABLE churn_b;

-- VACUUM asks about table 0's entries in batches sorted by TID (within
-- maintenance_work_mem: 1MB holds about 44,000 entries, so 150,000 rows make
-- four batches) and then sets the dead bits leaf by leaf: every dead entry,
-- and only those, must be marked.
CREATE TABLE churn_v (id int, h simhash64);
INSERT INTO churn_v SELECT g, simhash_hash('churn_v:' || g)::simhash64 FROM generate_series(1, 150000) g;
CREATE INDEX churn_v_h ON churn_v USING simhash (h);
DELETE FROM churn_v WHERE id % 7 = 3 OR id BETWEEN 60000 AND 61000;
SET maintenance_work_mem = '1MB';
VACUUM churn_v;
RESET maintenance_work_mem;
SELECT simhash_index_check('churn_v_h', true);
-- the live entries VACUUM counted
SELECT reltuples = (SELECT count(*) FROM churn_v) AS live_counted FROM pg_class WHERE relname = 'churn_v_h';
-- the index's whole answer (radius 64: every entry not marked dead) equals the table
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM churn_v WHERE h <~> '0000000000000000'::simhash64 <= 64;
CREATE TEMP TABLE churn_v_index AS SELECT id FROM churn_v WHERE h <~> '0000000000000000'::simhash64 <= 64;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT (SELECT count(*) FROM churn_v_index) AS via_index, count(*) AS in_table,
	(SELECT count(*) FROM churn_v_index i FULL JOIN churn_v t USING (id) WHERE i.id IS NULL OR t.id IS NULL) AS differing
	FROM churn_v;
DROP TABLE churn_v;
