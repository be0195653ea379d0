-- shared_key_pairs / shared_key_groups: rows sharing bigint keys (sentence
-- fingerprints, LSH band keys), against brute-force references; bridging
-- merges; ids of other types; sorts beyond maintenance_work_mem; errors.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;

-- 400 rows with 0..5 keys drawn from 300 (some repeated within a row)
CREATE TABLE sk (id bigint, keys bigint[]);
INSERT INTO sk
SELECT i, (SELECT array_agg(get_byte(decode(md5(i || '/' || j), 'hex'), 0) + 256 * (get_byte(decode(md5(i || '/' || j), 'hex'), 1) % 2) - 100)
           FROM generate_series(1, i % 6) j)
FROM generate_series(1, 400) i;
UPDATE sk SET keys = keys || keys[1] WHERE id % 50 = 0 AND keys <> '{}';
INSERT INTO sk VALUES (401, NULL), (402, '{}'), (403, '{NULL}');

-- the reference: pairs and the number of distinct keys they share
CREATE VIEW sk_ref AS
SELECT a.id AS id_a, b.id AS id_b,
       (SELECT count(DISTINCT x) FROM unnest(a.keys) x WHERE x = ANY (b.keys))::int AS shared
FROM sk a JOIN sk b ON a.id < b.id AND a.keys && b.keys;
SELECT s, (SELECT count(*) FROM sk_ref WHERE shared >= s) AS pairs,
       (SELECT count(*) FROM (SELECT * FROM shared_key_pairs('sk', 'id', 'keys', s)
                              EXCEPT ALL SELECT * FROM sk_ref WHERE shared >= s) x) AS extra,
       (SELECT count(*) FROM (SELECT * FROM sk_ref WHERE shared >= s
                              EXCEPT ALL SELECT * FROM shared_key_pairs('sk', 'id', 'keys', s)) m) AS missing
FROM generate_series(1, 3) s;

-- groups: connected components of those pairs, named by the least id
CREATE FUNCTION sk_ref_groups(s int) RETURNS TABLE (id bigint, group_id bigint) LANGUAGE sql AS $$
	WITH RECURSIVE e AS (SELECT id_a AS x, id_b AS y FROM sk_ref WHERE shared >= s
	                     UNION ALL SELECT id_b, id_a FROM sk_ref WHERE shared >= s),
	reach(x, y) AS (SELECT id, id FROM sk UNION SELECT reach.x, e.y FROM reach JOIN e ON e.x = reach.y)
	SELECT x, min(y) FROM reach GROUP BY x
$$;
SELECT s, (SELECT count(*) FROM (SELECT * FROM shared_key_groups('sk', 'id', 'keys', s)
                                 EXCEPT SELECT * FROM sk_ref_groups(s)) d) AS differ,
          (SELECT count(*) FROM shared_key_groups('sk', 'id', 'keys', s)) AS rows,
          (SELECT count(*) FILTER (WHERE id = group_id) FROM shared_key_groups('sk', 'id', 'keys', s)) AS groups
FROM generate_series(1, 3) s;

-- bridging: documents 1 and 2 share nothing; 3 shares a key with each, so
-- all three are one group (nshash would keep two); 4 stays alone
CREATE TABLE posts (id int, keys bigint[]);
INSERT INTO posts VALUES (1, '{10, 11}'), (2, '{20, 21}'), (4, '{40}');
SELECT * FROM shared_key_groups('posts', 'id', 'keys', id_type => NULL::int) ORDER BY id;
INSERT INTO posts VALUES (3, '{11, 20}');
SELECT * FROM shared_key_groups('posts', 'id', 'keys', id_type => NULL::int) ORDER BY id;
-- group ids are stable: another unrelated row changes nothing
INSERT INTO posts VALUES (5, '{50}');
SELECT * FROM shared_key_groups('posts', 'id', 'keys', id_type => NULL::int) ORDER BY id;

-- keys shared by more than max_key_rows rows are ignored (boilerplate)
INSERT INTO posts VALUES (6, '{99, 40}'), (7, '{99}'), (8, '{99}');
SELECT * FROM shared_key_groups('posts', 'id', 'keys', id_type => NULL::int, max_key_rows => 2) ORDER BY id;
SELECT * FROM shared_key_pairs('posts', 'id', 'keys', id_type => NULL::int) ORDER BY 1, 2;

-- text ids
CREATE TABLE tposts AS SELECT 'post-' || id AS name, keys FROM posts;
SELECT * FROM shared_key_groups('tposts', 'name', 'keys', id_type => NULL::text) ORDER BY 1;

-- beyond maintenance_work_mem: the sorts spill, same answers
CREATE TABLE skbig AS
SELECT i::bigint AS id, ARRAY[(i / 3)::bigint, 1000000 + (i * 7919) % 40000] AS keys FROM generate_series(1, 60000) i;
CREATE TEMP TABLE skbig_groups AS SELECT * FROM shared_key_groups('skbig', 'id', 'keys');
CREATE TEMP TABLE skbig_pairs AS SELECT * FROM shared_key_pairs('skbig', 'id', 'keys');
SET maintenance_work_mem = '1MB';
SELECT count(*) AS differ FROM (SELECT * FROM shared_key_groups('skbig', 'id', 'keys') EXCEPT SELECT * FROM skbig_groups) d;
SELECT count(*) AS differ FROM (SELECT * FROM shared_key_pairs('skbig', 'id', 'keys') EXCEPT ALL SELECT * FROM skbig_pairs) d;
RESET maintenance_work_mem;
SELECT (SELECT count(*) FROM skbig_pairs) AS pairs, (SELECT count(*) FILTER (WHERE id = group_id) FROM skbig_groups) AS groups;

-- errors
SELECT * FROM shared_key_pairs('sk', 'id', 'keys', 0);
SELECT * FROM shared_key_pairs('sk', 'id', 'keys', 1, 1);
SELECT * FROM shared_key_pairs('sk', 'keys', 'id');
SELECT * FROM shared_key_groups('sk', 'id', 'keys', NULL::int);

DROP VIEW sk_ref;
DROP TABLE sk, posts, tposts, skbig;
DROP FUNCTION sk_ref_groups(int);
