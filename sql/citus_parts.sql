-- The worker side of the Citus dedup jobs, on one node (no Citus
-- needed): partitioning rows by (table group, simhash_group_block) and
-- searching each part with simhash_group_pairs finds every pair of
-- simhash_pairs exactly once, for several max_distance / blocks; a
-- signature's parameters (minhash_params); the leader linkage of one
-- connected group (simhash_leader_groups) and simhash_groups_into on one
-- node.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;

-- 900 rows: 500 random fingerprints, 400 near copies (0 .. 6 bits), exact
-- duplicates, NULLs
CREATE TABLE cp (id bigint PRIMARY KEY, h simhash64);
INSERT INTO cp SELECT i, ('x' || substr(md5('r' || i), 1, 16))::bit(64)::simhash64
FROM generate_series(1, 500) i;
INSERT INTO cp SELECT 500 + i,
	(c.h::bigint # coalesce((SELECT bit_or(1::bigint << ((i * 7 + j * 13) % 64))
	                         FROM generate_series(1, i % 7) j), 0))::simhash64
FROM generate_series(1, 400) i JOIN cp c ON c.id = i * 3 % 500 + 1;
INSERT INTO cp VALUES (901, NULL), (902, (SELECT h FROM cp WHERE id = 1));

-- the parts' pairs against simhash_pairs: missing, extra (a pair found
-- twice is extra), and how many
CREATE FUNCTION cp_check(k int, nblocks int) RETURNS TABLE (pairs bigint, missing bigint, extra bigint)
LANGUAGE sql AS $$
	WITH parts AS (
		SELECT grp, array_agg(id) AS ids, array_agg(h) AS hs
		FROM cp, generate_series(0, k) grp
		WHERE h IS NOT NULL
		GROUP BY grp, simhash_group_block(h, grp, nblocks, k)),
	found AS (
		SELECT p.* FROM parts, simhash_group_pairs(ids, hs, grp, nblocks, k) p),
	ref AS (SELECT * FROM simhash_pairs('cp', 'id', 'h', k, nblocks))
	SELECT (SELECT count(*) FROM ref),
	       (SELECT count(*) FROM (SELECT * FROM ref EXCEPT ALL SELECT * FROM found) x),
	       (SELECT count(*) FROM (SELECT * FROM found EXCEPT ALL SELECT * FROM ref) x)
$$;
SELECT k, nblocks, c.* FROM (VALUES (0, 1), (0, 4), (1, 3), (2, 4), (3, 5), (3, 7), (4, 6), (6, 8)) v(k, nblocks),
	LATERAL cp_check(k, nblocks) c ORDER BY k, nblocks;

-- simhash_group_block is the block's bits
SELECT simhash_group_block('ffffffffffffffff', g, 5, 3)::bit(64) FROM generate_series(0, 3) g;
SELECT simhash_group_block('0123456789abcdef', 0, 1, 0) = '0123456789abcdef'::simhash64::bigint AS whole;

-- errors
SELECT simhash_group_block('0123456789abcdef', 4, 5, 3);
SELECT simhash_group_block('0123456789abcdef', -1, 5, 3);
SELECT simhash_group_block('0123456789abcdef', 0, 3, 3);
SELECT * FROM simhash_group_pairs('{1,2}', '{0000000000000000}', 0, 5, 3);
SELECT * FROM simhash_group_pairs('{1,NULL}', '{0000000000000000,0000000000000000}', 0, 5, 3);
SELECT * FROM simhash_group_pairs('{1,2,3}', '{0000000000000000,NULL,0000000000000001}', 0, 5, 3);
SELECT * FROM simhash_group_pairs('{}', '{}', 0, 5, 3);
\set VERBOSITY terse

-- a signature's parameters (NULL when empty), as the jobs' errors print them
SELECT minhash_params(minhash('a text with a few words in it'));
SELECT minhash_params(minhash('a text with a few words in it', n_gram => 3, permutations => 64));
SELECT minhash_params(minhash('')) IS NULL AS empty;
\set VERBOSITY default

-- the leader linkage per connected group (simhash_leader_groups, what
-- simhash_groups_into runs on the workers) against simhash_groups 'leader'
-- over the whole table: the rows of its groups of more than one row
CREATE TABLE cp_pairs AS SELECT * FROM simhash_pairs('cp', 'id', 'h', 3);
CREATE TABLE cp_conn AS SELECT * FROM simhash_groups('cp', 'id', 'h', 3);
WITH linked AS (
	SELECT x.* FROM (SELECT g.group_id, array_agg(p.id_a) AS a, array_agg(p.id_b) AS b, array_agg(p.distance) AS d
	                 FROM cp_pairs p JOIN cp_conn g ON g.id = p.id_a GROUP BY g.group_id) c,
	     simhash_leader_groups(c.a, c.b, c.d) x),
ref AS (
	SELECT g.* FROM simhash_groups('cp', 'id', 'h', 3, 'leader') g
	WHERE g.group_id IN (SELECT group_id FROM simhash_groups('cp', 'id', 'h', 3, 'leader') GROUP BY 1 HAVING count(*) > 1))
SELECT (SELECT count(*) FROM ref) AS rows, (SELECT count(*) FROM ref WHERE id <> group_id) AS followers,
       (SELECT count(*) FROM (SELECT * FROM ref EXCEPT ALL SELECT * FROM linked) x) AS missing,
       (SELECT count(*) FROM (SELECT * FROM linked EXCEPT ALL SELECT * FROM ref) x) AS extra;
-- ties at the same distance go to the least leader; a follower never leads
SELECT * FROM simhash_leader_groups('{1,2,1,3}', '{3,3,2,4}', '{2,2,1,1}') ORDER BY id;
SELECT * FROM simhash_leader_groups('{}', '{}', '{}');
SELECT * FROM simhash_leader_groups('{1,2}', '{2}', '{1,1}');
SELECT * FROM simhash_leader_groups('{2}', '{1}', '{1}');
SELECT * FROM simhash_leader_groups('{1,NULL}', '{2,3}', '{1,1}');

-- simhash_groups_into on one node: a plain table of simhash_groups' rows
-- in groups of more than one row
SELECT simhash_groups_into('cp', 'id', 'h', 'cp_into_conn');
SELECT simhash_groups_into('cp', 'id', 'h', 'cp_into_lead', 2, 'leader', 6);
SELECT (SELECT count(*) FROM (SELECT * FROM cp_into_conn EXCEPT ALL
        SELECT * FROM cp_conn WHERE group_id IN (SELECT group_id FROM cp_conn GROUP BY 1 HAVING count(*) > 1)) x) AS extra,
       (SELECT count(*) FROM (SELECT * FROM cp_conn WHERE group_id IN (SELECT group_id FROM cp_conn GROUP BY 1 HAVING count(*) > 1)
        EXCEPT ALL SELECT * FROM cp_into_conn) x) AS missing;
SELECT count(*) = (SELECT count(*) FROM simhash_groups('cp', 'id', 'h', 2, 'leader', 6) g
                   WHERE g.group_id IN (SELECT group_id FROM simhash_groups('cp', 'id', 'h', 2, 'leader', 6) GROUP BY 1 HAVING count(*) > 1))
       AS same_count, pg_typeof(min(id)) FROM cp_into_lead;
-- the new table goes where CREATE TABLE would put it: a qualified name in
-- its schema, an unqualified one in the first schema of the caller's path
CREATE SCHEMA cp_s;
SELECT simhash_groups_into('cp', 'id', 'h', 'cp_s.into_q') = (SELECT count(*) FROM cp_into_conn) AS same_rows;
SET search_path = cp_s, public;
SELECT simhash_groups_into('public.cp', 'id', 'h', 'into_u', 2, 'leader', 6) = (SELECT count(*) FROM public.cp_into_lead) AS same_rows;
RESET search_path;
SELECT (SELECT count(*) FROM cp_s.into_q) = (SELECT count(*) FROM cp_into_conn) AS q_same,
       (SELECT count(*) FROM cp_s.into_u) = (SELECT count(*) FROM cp_into_lead) AS u_same;
DROP SCHEMA cp_s CASCADE;
SELECT simhash_groups_into('cp', 'id', 'h', 'a.b.c');
SELECT simhash_groups_into('cp', 'id', 'h', 'bad"name');
SELECT simhash_groups_into('cp', 'id', 'h', 'cp_into_conn');
SELECT simhash_groups_into('cp', 'id', 'h', 'cp_x', 3, 'nearest');
SELECT simhash_groups_into('cp', 'nope', 'h', 'cp_x');
SELECT simhash_groups_into('cp', 'id', 'h', NULL);

DROP TABLE cp, cp_pairs, cp_conn, cp_into_conn, cp_into_lead;
DROP FUNCTION cp_check(int, int);
