-- Appends to the pending lanes are WAL-logged as deltas
-- of the lane's tail page (pending.c); on tables that write no WAL
-- (unlogged, temporary) they are not logged at all.  Each kind of table
-- takes 1,000 single-row appends (more than a lane page holds, fewer than
-- a flush) and answers as a sequential pass does; the index checks clean.
-- (Crash recovery and replicas of the appends: test/t/002, 003, 031 and 044.)
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
CREATE TABLE lanes_l (id int, h simhash64);
CREATE UNLOGGED TABLE lanes_u (id int, h simhash64);
CREATE TEMP TABLE lanes_t (id int, h simhash64);
CREATE INDEX lanes_l_h ON lanes_l USING simhash (h);
CREATE INDEX lanes_u_h ON lanes_u USING simhash (h);
CREATE INDEX lanes_t_h ON lanes_t USING simhash (h);
DO $$
BEGIN
	FOR i IN 1..1000 LOOP
		INSERT INTO lanes_l VALUES (i, simhash_hash('lanes:' || i)::simhash64);
		INSERT INTO lanes_u VALUES (i, simhash_hash('lanes:' || i)::simhash64);
		INSERT INTO lanes_t VALUES (i, simhash_hash('lanes:' || i)::simhash64);
	END LOOP;
END $$;
SELECT simhash_index_check('lanes_l_h', true) AS logged,
	simhash_index_check('lanes_u_h', true) AS unlogged,
	simhash_index_check('lanes_t_h', true) AS temp;
CREATE TEMP TABLE lanes_q AS
	SELECT i, (simhash_hash('lanes:' || (i * 37))::bigint # (i % 3)::bigint)::simhash64 AS q
	FROM generate_series(1, 20) i;
SET enable_seqscan = off;
CREATE TEMP TABLE lanes_ix AS
	SELECT i, array(SELECT id FROM lanes_l WHERE h <~> q <= 3 ORDER BY id) AS l,
		array(SELECT id FROM lanes_u WHERE h <~> q <= 3 ORDER BY id) AS u,
		array(SELECT id FROM lanes_t WHERE h <~> q <= 3 ORDER BY id) AS t
	FROM lanes_q;
RESET enable_seqscan;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TEMP TABLE lanes_seq AS
	SELECT i, array(SELECT id FROM lanes_l WHERE hamming_distance(h, q) <= 3 ORDER BY id) AS ids
	FROM lanes_q;
RESET enable_indexscan;
RESET enable_bitmapscan;
SELECT count(*) AS lookups,
	count(*) FILTER (WHERE a.l IS DISTINCT FROM b.ids) AS logged_differing,
	count(*) FILTER (WHERE a.u IS DISTINCT FROM b.ids) AS unlogged_differing,
	count(*) FILTER (WHERE a.t IS DISTINCT FROM b.ids) AS temp_differing,
	sum(cardinality(b.ids)) >= 20 AS found_rows
	FROM lanes_ix a JOIN lanes_seq b USING (i);
-- every row through each index
SET enable_seqscan = off;
SELECT (SELECT count(*) FROM lanes_l WHERE h <@ simhash_ball('0000000000000000', 64)) AS logged,
	(SELECT count(*) FROM lanes_u WHERE h <@ simhash_ball('0000000000000000', 64)) AS unlogged,
	(SELECT count(*) FROM lanes_t WHERE h <@ simhash_ball('0000000000000000', 64)) AS temp;
RESET enable_seqscan;
DROP TABLE lanes_l, lanes_u, lanes_t;
