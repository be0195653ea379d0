-- The shared-key and MinHash jobs in parallel workers give
-- exactly the serial results.  Workers read the table and compute the keys
-- (src/dedup/keys_parallel.c) where the input allows, and sort and pair the
-- key runs by key partition (src/dedup/keys_split.c).  Workers are forced on
-- small inputs with simhash.parallel_min_rows = 0; the progress NOTICEs
-- (simhash.progress_interval = 0) show who read and how many paired.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
SET simhash.progress_interval = -1;	-- no progress NOTICE of a slow run

-- 3000 rows with 0..6 keys drawn from 2000 (fixed: md5), some repeated in
-- a row, some keys in many rows; NULL, empty and NULL-element arrays
CREATE TABLE kp (id bigint, keys bigint[]);
INSERT INTO kp
SELECT i, (SELECT array_agg(('x' || substr(md5(i || '/' || j), 1, 8))::bit(32)::int % 2000)
           FROM generate_series(1, i % 7) j)
FROM generate_series(1, 3000) i;
UPDATE kp SET keys = keys || keys[1] WHERE id % 50 = 0 AND keys <> '{}';
UPDATE kp SET keys = keys || 7777::bigint WHERE id % 40 = 0;
INSERT INTO kp VALUES (3001, NULL), (3002, '{}'), (3003, '{NULL}'), (3004, '{NULL,5}');
ANALYZE kp;

-- 1200 documents: 1000 distinct, 200 near copies of them; a NULL and an
-- empty signature
CREATE TABLE mp (id integer, sig minhash_signature);
INSERT INTO mp SELECT i, minhash('document ' || i || ' about ' || md5(i::text) || ' and ' || md5((i * 7)::text))
FROM generate_series(1, 1000) i;
INSERT INTO mp SELECT 1000 + i, minhash('document ' || (i * 3) || ' about ' || md5((i * 3)::text) || ' and ' || md5((i * 21)::text) || ' v2')
FROM generate_series(1, 200) i;
INSERT INTO mp VALUES (1201, NULL), (1202, minhash(''));
ANALYZE mp;

-- the serial result (no workers) against the parallel one: rows, and rows
-- only in one of them; leader: parallel_leader_participation
CREATE FUNCTION kp_compare(job text, leader boolean DEFAULT true) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	r text;
BEGIN
	SET LOCAL max_parallel_maintenance_workers = 0;
	EXECUTE format('CREATE TEMP TABLE kp_serial AS SELECT * FROM %s', job);
	SET LOCAL max_parallel_maintenance_workers = 2;
	SET LOCAL simhash.parallel_min_rows = 0;
	PERFORM set_config('parallel_leader_participation', leader::text, true);
	EXECUTE format('CREATE TEMP TABLE kp_par AS SELECT * FROM %s', job);
	SELECT format('%s rows, %s only serial, %s only parallel',
		(SELECT count(*) FROM kp_serial),
		(SELECT count(*) FROM (TABLE kp_serial EXCEPT ALL TABLE kp_par) a),
		(SELECT count(*) FROM (TABLE kp_par EXCEPT ALL TABLE kp_serial) b)) INTO r;
	DROP TABLE kp_serial, kp_par;
	RETURN r;
END $$;

-- shared keys: pairs and groups for min_shared 1..3, the leader taking
-- part or not (then the workers read and pair everything)
SELECT s, l, kp_compare(format('shared_key_pairs(''kp'', ''id'', ''keys'', %s)', s), l) AS pairs,
       kp_compare(format('shared_key_groups(''kp'', ''id'', ''keys'', %s)', s), l) AS groups
FROM generate_series(1, 3) s, (VALUES (true), (false)) v(l);
-- keys of too many rows skipped: the same pairs, the same NOTICE
SELECT kp_compare('shared_key_pairs(''kp'', ''id'', ''keys'', 1, 20)');
SELECT kp_compare('shared_key_groups(''kp'', ''id'', ''keys'', 1, 20)', false);
-- ids of other types: text (read through SPI, paired by workers), integer
SELECT kp_compare('shared_key_pairs(''kp'', ''id'', ''keys'', NULL::text, 1)');
SELECT kp_compare('shared_key_groups(''kp'', ''id'', ''keys'', NULL::text, 2)', false);
SELECT kp_compare('shared_key_pairs(''kp'', ''id'', ''keys'', NULL::numeric, 2)', false);

-- MinHash: pairs and groups at several thresholds and bands
SELECT t, b, kp_compare(format('minhash_pairs(''mp'', ''id'', ''sig'', %s, %s)', t, b)) AS pairs,
       kp_compare(format('minhash_groups(''mp'', ''id'', ''sig'', %s, %s)', t, b), false) AS groups
FROM (VALUES (0.5, 32), (0.8, 32), (0.8, 16), (1.0, 128)) v(t, b);
SELECT kp_compare('minhash_pairs(''mp'', ''id'', ''sig'', NULL::integer, 0.6)', false);
-- and against the brute-force self-join on the estimate, with workers only
SET max_parallel_maintenance_workers = 2;
SET simhash.parallel_min_rows = 0;
SET parallel_leader_participation = off;
WITH got AS (SELECT * FROM minhash_pairs('mp', 'id', 'sig', 0.8)),
     ref AS (SELECT a.id::bigint AS id_a, b.id::bigint AS id_b, minhash_jaccard(a.sig, b.sig) AS e
             FROM mp a JOIN mp b ON a.id < b.id WHERE minhash_jaccard(a.sig, b.sig) >= 0.8)
SELECT (SELECT count(*) FROM got) AS pairs,
       (SELECT count(*) FROM (SELECT * FROM ref EXCEPT ALL SELECT * FROM got) m) AS missing,
       (SELECT count(*) FROM (SELECT * FROM got EXCEPT ALL SELECT * FROM ref) x) AS extra;
RESET parallel_leader_participation;

-- who did the work: the progress messages
SET simhash.progress_interval = 0;
SELECT count(*) FROM shared_key_pairs('kp', 'id', 'keys', 2);
SELECT count(*) FROM minhash_groups('mp', 'id', 'sig', 0.8);
-- text ids: SPI reads, the workers pair
SELECT count(*) FROM shared_key_pairs('kp', 'id', 'keys', NULL::text, 2);
-- one worker; none; below the threshold: serial
SET max_parallel_maintenance_workers = 1;
SELECT count(*) FROM shared_key_pairs('kp', 'id', 'keys', 2);
SET max_parallel_maintenance_workers = 0;
SELECT count(*) FROM shared_key_pairs('kp', 'id', 'keys', 2);
SET max_parallel_maintenance_workers = 2;
SET simhash.parallel_min_rows = 100000;
SELECT count(*) FROM shared_key_pairs('kp', 'id', 'keys', 2);
SET simhash.parallel_min_rows = 0;
-- a view: read through SPI, its size unknown: serial
CREATE VIEW kp_view AS SELECT * FROM kp WHERE id > 10;
SELECT count(*) FROM shared_key_pairs('kp_view', 'id', 'keys', 2);
DROP VIEW kp_view;
-- inheritance children are read too (through SPI), paired by workers
CREATE TABLE kp_child (extra int) INHERITS (kp);
INSERT INTO kp_child SELECT id + 100000, keys FROM kp WHERE id <= 300;
SELECT count(*) FROM shared_key_pairs('kp', 'id', 'keys', 2);
SET simhash.progress_interval = -1;
SELECT kp_compare('shared_key_pairs(''kp'', ''id'', ''keys'', 2)', false);
DROP TABLE kp_child;
ANALYZE kp;

-- errors, whichever participant meets them: a NULL id; signatures of
-- different parameters; bands above the permutations
\set VERBOSITY terse
SET parallel_leader_participation = off;
INSERT INTO kp VALUES (NULL, '{1}');
SELECT count(*) FROM shared_key_pairs('kp', 'id', 'keys');
DELETE FROM kp WHERE id IS NULL;
SELECT count(*) FROM minhash_pairs('mp', 'id', 'sig', 0.8, 129);
INSERT INTO mp VALUES (1203, minhash('other', n_gram => 3));
SELECT count(*) FROM minhash_pairs('mp', 'id', 'sig', 0.8);
DELETE FROM mp WHERE id = 1203;
RESET parallel_leader_participation;
\set VERBOSITY default

-- row level security: the policy's rows only (SPI applies it; the
-- pairing is still split)
CREATE ROLE regress_kp_reader;
GRANT SELECT ON kp, mp TO regress_kp_reader;
ALTER TABLE kp ENABLE ROW LEVEL SECURITY;
CREATE POLICY kp_even ON kp FOR SELECT TO regress_kp_reader USING (id % 2 = 0);
ALTER TABLE mp ENABLE ROW LEVEL SECURITY;
CREATE POLICY mp_low ON mp FOR SELECT TO regress_kp_reader USING (id <= 1100);
SET ROLE regress_kp_reader;
SELECT kp_compare('shared_key_pairs(''kp'', ''id'', ''keys'', 1)', false);
SELECT count(*) FILTER (WHERE id_a % 2 = 1 OR id_b % 2 = 1) AS hidden_rows
FROM shared_key_pairs('kp', 'id', 'keys', 1);
SELECT kp_compare('minhash_pairs(''mp'', ''id'', ''sig'', 0.5)', false);
SELECT count(*) FILTER (WHERE id_a > 1100 OR id_b > 1100) AS hidden_rows
FROM minhash_pairs('mp', 'id', 'sig', 0.5);
RESET ROLE;
ALTER TABLE kp DISABLE ROW LEVEL SECURITY;
ALTER TABLE mp DISABLE ROW LEVEL SECURITY;
-- a column the user may not read: the read fails as the query would
REVOKE SELECT ON kp FROM regress_kp_reader;
GRANT SELECT (id) ON kp TO regress_kp_reader;
SET ROLE regress_kp_reader;
SELECT count(*) FROM shared_key_pairs('kp', 'id', 'keys');
RESET ROLE;
DROP TABLE kp, mp;
DROP ROLE regress_kp_reader;
DROP FUNCTION kp_compare(text, boolean);
RESET max_parallel_maintenance_workers;
RESET simhash.parallel_min_rows;
RESET simhash.progress_interval;
