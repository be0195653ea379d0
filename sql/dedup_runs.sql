-- runs of equal fingerprints in the dedup jobs: simhash_groups pairs each
-- run's first row with the others instead of every pair of the run (star
-- pairs), with the same groups as every pair gives.  The checksums below
-- were recorded with the job that paired every row of a run with every
-- other; ids are in another order than the rows (the jobs read rows in
-- table order and take them in id order); in memory, split into temporary
-- files (maintenance_work_mem = 1MB) and in parallel workers.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;

-- 3000 rows over 120 fingerprints (runs of about 25) that lie within 1 to 4
-- bits of each other, ids a permutation of the row order, some NULLs
CREATE TABLE runs (id bigint, t text, h simhash64);
INSERT INTO runs
SELECT (i * 7919) % 10007, 'r' || ((i * 7919) % 10007),
	CASE WHEN i % 97 = 0 THEN NULL ELSE
	(simhash_hash('base' || (i % 6))
	 # (CASE WHEN i % 20 < 5 THEN 0 ELSE 1::bigint << ((i % 20) * 3) END)
	 # (CASE WHEN i % 7 = 0 THEN 3::bigint << 40 ELSE 0 END)
	 # (CASE WHEN i % 11 = 0 THEN 1::bigint << 62 ELSE 0 END))::simhash64 END
FROM generate_series(1, 3000) i;
ANALYZE runs;
SELECT count(*) AS rows, count(DISTINCT h) AS fingerprints, count(*) - count(h) AS nulls FROM runs;

-- a job's (id, group_id) rows: how many groups, and a checksum
CREATE FUNCTION runs_sum(job text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	r text;
BEGIN
	EXECUTE format('SELECT count(*) || '' rows, '' || count(DISTINCT group_id) || '' groups, ''
		|| md5(string_agg(id::text || '':'' || group_id::text, '','' ORDER BY id::text, group_id::text))
		FROM %s', job) INTO r;
	RETURN r;
END $$;

SELECT l, k, runs_sum(format('simhash_groups(''runs'', ''id'', ''h'', %s, %L)', k, l))
FROM (VALUES ('connected'), ('leader')) a(l), generate_series(0, 4) k ORDER BY l, k;
-- text ids: another order
SELECT l, runs_sum(format('simhash_groups(''runs'', ''t'', ''h'', NULL::text, 3, %L)', l))
FROM (VALUES ('connected'), ('leader')) a(l) ORDER BY l;
-- the pairs are every pair still
SELECT k, runs_sum(format('(SELECT id_a AS id, id_b AS group_id FROM simhash_pairs(''runs'', ''id'', ''h'', %s)) p', k))
FROM generate_series(0, 2, 2) k ORDER BY k;

-- leader linkage against its definition (in id order, join the nearest
-- earlier leader, ties the least id; else lead)
\i sql/ref_leader.psql
SELECT k, (SELECT count(*) FROM (SELECT * FROM simhash_groups('runs', 'id', 'h', k, 'leader')
                                 EXCEPT SELECT * FROM ref_leader('runs', k)) d) AS differ
FROM generate_series(1, 4, 3) k;

-- split into temporary files: 30,000 rows over 6000 fingerprints, four
-- 3 bits from a fifth and 6 bits from each other
CREATE TABLE runs_big (id bigint, h simhash64);
INSERT INTO runs_big
SELECT (i * 7919) % 100003,
	(simhash_hash('b' || (i % 1499))
	 # (CASE WHEN i % 10 < 6 THEN 0 ELSE 7::bigint << ((i % 10) * 5) END))::simhash64
FROM generate_series(1, 30000) i;
ANALYZE runs_big;
SET maintenance_work_mem = '1MB';
SELECT l, runs_sum(format('simhash_groups(''runs_big'', ''id'', ''h'', 3, %L)', l))
FROM (VALUES ('connected'), ('leader')) a(l) ORDER BY l;
RESET maintenance_work_mem;
SELECT l, runs_sum(format('simhash_groups(''runs_big'', ''id'', ''h'', 3, %L)', l))
FROM (VALUES ('connected'), ('leader')) a(l) ORDER BY l;
-- in parallel workers
SET max_parallel_maintenance_workers = 2;
SET simhash.parallel_min_rows = 0;
SELECT l, runs_sum(format('simhash_groups(''runs_big'', ''id'', ''h'', 3, %L)', l))
FROM (VALUES ('connected'), ('leader')) a(l) ORDER BY l;
SELECT l, runs_sum(format('simhash_groups(''runs'', ''id'', ''h'', 2, %L)', l))
FROM (VALUES ('connected'), ('leader')) a(l) ORDER BY l;
RESET max_parallel_maintenance_workers;
RESET simhash.parallel_min_rows;

-- 20,000 identical fingerprints (a table of empty documents): linear work and
-- temporary files, where every pair of them would be 200 million pairs
CREATE TABLE ident AS SELECT g::bigint AS id, '0123456789abcdef'::simhash64 AS h
FROM generate_series(1, 20000) g;
SET temp_file_limit = '4MB';
SELECT l, count(*), count(DISTINCT group_id), min(group_id)
FROM (VALUES ('connected'), ('leader')) a(l), simhash_groups('ident', 'id', 'h', 3, l) GROUP BY l ORDER BY l;
RESET temp_file_limit;
SET simhash.progress_interval = 0;
SELECT count(*) FROM simhash_groups('ident', 'id', 'h', 3);
RESET simhash.progress_interval;

DROP TABLE runs, runs_big, ident;
DROP FUNCTION runs_sum(text), ref_leader(regclass, int);
