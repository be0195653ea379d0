-- table-scale dedup jobs: simhash_pairs and simhash_groups against
-- brute-force references (self-joins, a recursive closure, a PL/pgSQL
-- leader loop): random rows with planted near-duplicates, identical rows,
-- chains; both linkages; id types; NULLs; empty tables; the spill path
-- (maintenance_work_mem = 1MB) against the in-memory path and an index
-- join; privileges, quoting and bad parameters.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;

-- a deterministic pseudo-random fingerprint, and one nbits away from it
CREATE FUNCTION dd_hx(seed text) RETURNS simhash64 LANGUAGE sql IMMUTABLE AS $$
	SELECT ('x' || substr(md5(seed), 1, 16))::bit(64)::simhash64
$$;
CREATE FUNCTION dd_near(h simhash64, seed text, nbits int) RETURNS simhash64 LANGUAGE sql IMMUTABLE AS $$
	SELECT (h::bigint # coalesce(bit_or(1::bigint << (get_byte(decode(md5(seed || '/' || i), 'hex'), 0) % 64)), 0))::simhash64
	FROM generate_series(1, nbits) i
$$;

-- 600 rows: 400 random, 200 copies of earlier rows at 0 .. 5 bits
CREATE TABLE dd (id bigint PRIMARY KEY, h simhash64);
INSERT INTO dd SELECT i, dd_hx('r' || i) FROM generate_series(1, 400) i;
INSERT INTO dd SELECT 400 + i, dd_near(dd_hx('r' || (i * 7 % 400 + 1)), 'n' || i, i % 6)
FROM generate_series(1, 200) i;
INSERT INTO dd VALUES (601, NULL), (602, NULL);	-- no fingerprint: never paired
ANALYZE dd;

-- pairs: found, missing and extra against the self-join, for several k and blocks
CREATE FUNCTION dd_check_pairs(rel regclass, k int, blocks int DEFAULT NULL) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	r text;
BEGIN
	EXECUTE format($q$
		WITH got AS (SELECT * FROM simhash_pairs(%1$L, 'id', 'h', %2$s, %3$s)),
		     ref AS (SELECT a.id AS id_a, b.id AS id_b, hamming_distance(a.h, b.h) AS distance
		             FROM %1$s a JOIN %1$s b ON a.id < b.id WHERE hamming_distance(a.h, b.h) <= %2$s)
		SELECT format('%%s pairs, %%s missing, %%s extra', (SELECT count(*) FROM got),
			(SELECT count(*) FROM (SELECT * FROM ref EXCEPT ALL SELECT * FROM got) m),
			(SELECT count(*) FROM (SELECT * FROM got EXCEPT ALL SELECT * FROM ref) x))$q$,
		rel, k, coalesce(blocks::text, 'NULL')) INTO r;
	RETURN r;
END $$;
SELECT k, b, dd_check_pairs('dd', k, b)
FROM (VALUES (0, NULL), (1, NULL), (2, NULL), (3, NULL), (3, 4), (3, 6), (3, 8), (4, NULL), (5, 6), (8, 9)) v(k, b);

-- the output: id_a < id_b, each pair once
SELECT count(*) FILTER (WHERE id_a >= id_b) AS unordered, count(*) - count(DISTINCT (id_a, id_b)) AS repeated
FROM simhash_pairs('dd', 'id', 'h', 3);
SELECT * FROM simhash_pairs('dd', 'id', 'h', 2) ORDER BY id_a, id_b LIMIT 5;

-- groups, linkage 'connected': the least id of each connected component
CREATE FUNCTION dd_ref_connected(k int) RETURNS TABLE (id bigint, group_id bigint) LANGUAGE sql AS $$
	WITH RECURSIVE e AS (
		SELECT a.id AS x, b.id AS y FROM dd a JOIN dd b ON a.id <> b.id
		WHERE hamming_distance(a.h, b.h) <= k),
	reach(x, y) AS (SELECT id, id FROM dd UNION SELECT reach.x, e.y FROM reach JOIN e ON e.x = reach.y)
	SELECT x, min(y) FROM reach GROUP BY x
$$;
SELECT k, (SELECT count(*) FROM (SELECT * FROM simhash_groups('dd', 'id', 'h', k)
                                 EXCEPT SELECT * FROM dd_ref_connected(k)) d) AS differ,
          (SELECT count(*) FROM simhash_groups('dd', 'id', 'h', k)) AS rows,
          (SELECT count(DISTINCT group_id) FROM simhash_groups('dd', 'id', 'h', k)) AS groups
FROM generate_series(0, 4) k;

-- groups, linkage 'leader': in id order, join the nearest earlier leader
-- within k (ties: least id), else lead
\i sql/ref_leader.psql
SELECT k, (SELECT count(*) FROM (SELECT * FROM simhash_groups('dd', 'id', 'h', k, 'leader')
                                 EXCEPT SELECT * FROM ref_leader('dd', k)) d) AS differ,
          (SELECT count(DISTINCT group_id) FROM simhash_groups('dd', 'id', 'h', k, 'leader')) AS groups
FROM generate_series(0, 4) k;
-- every row is within k of its leader
SELECT count(*) AS far_from_leader
FROM simhash_groups('dd', 'id', 'h', 3, 'leader') g
JOIN dd m ON m.id = g.id JOIN dd l ON l.id = g.group_id
WHERE hamming_distance(m.h, l.h) > 3;
-- rows without a fingerprint are groups of their own
SELECT * FROM simhash_groups('dd', 'id', 'h') WHERE id > 600 ORDER BY id;

-- a chain A ~ B ~ C ~ D, each 3 bits from the next: connected joins all,
-- leader does not chain
CREATE TABLE chain (id int, h simhash64);
INSERT INTO chain VALUES (1, '0000000000000000'), (2, '0000000000000007'),
	(3, '000000000000003f'), (4, '00000000000001ff'), (5, 'ffffffffffffffff');
SELECT c.id, c.group_id AS connected, l.group_id AS leader
FROM simhash_groups('chain', 'id', 'h', NULL::int, 3) c
JOIN simhash_groups('chain', 'id', 'h', NULL::int, 3, 'leader') l USING (id)
ORDER BY id;
SELECT * FROM simhash_pairs('chain', 'id', 'h', id_type => NULL::int) ORDER BY 1, 2;
-- positionally, an integer NULL is max_distance
SELECT * FROM simhash_pairs('chain', 'id', 'h', NULL::int);

-- identical fingerprints: every pair at distance 0
CREATE TABLE same (id int, h simhash64);
INSERT INTO same SELECT i, 'abcdef0123456789' FROM generate_series(1, 30) i;
SELECT count(*), min(distance), max(distance), count(DISTINCT (id_a, id_b)) FROM simhash_pairs('same', 'id', 'h', 0);
SELECT count(DISTINCT group_id), min(group_id) FROM simhash_groups('same', 'id', 'h', 0, 'leader');

-- id types: integer ids as bigint by default, or as themselves; text,
-- uuid, numeric (variable length), each ordered by its own type
CREATE TABLE typed (i int, t text, u uuid, n numeric, h simhash64);
INSERT INTO typed SELECT i, 'doc-' || i, md5('u' || i)::uuid, i * 1.5, h
FROM (SELECT id::int AS i, h FROM dd WHERE id <= 600 AND id % 3 = 0) s;
SELECT pg_typeof(id_a), count(*) FROM simhash_pairs('typed', 'i', 'h') GROUP BY 1;
SELECT pg_typeof(id_a), count(*) FROM simhash_pairs('typed', 'i', 'h', id_type => NULL::int) GROUP BY 1;
SELECT pg_typeof(id_a), count(*), count(*) FILTER (WHERE id_a >= id_b) AS unordered
FROM simhash_pairs('typed', 't', 'h', NULL::text) GROUP BY 1;
SELECT pg_typeof(id_a), count(*), count(*) FILTER (WHERE id_a >= id_b) AS unordered
FROM simhash_pairs('typed', 'u', 'h', NULL::uuid) GROUP BY 1;
SELECT pg_typeof(id_a), count(*), count(*) FILTER (WHERE id_a >= id_b) AS unordered
FROM simhash_pairs('typed', 'n', 'h', NULL::numeric) GROUP BY 1;
-- the same pairs whichever id names the rows
SELECT count(*) AS differ FROM (
	SELECT least(a.i, b.i), greatest(a.i, b.i) FROM simhash_pairs('typed', 'u', 'h', NULL::uuid) p
	JOIN typed a ON a.u = p.id_a JOIN typed b ON b.u = p.id_b
	EXCEPT
	SELECT least(id_a, id_b), greatest(id_a, id_b) FROM simhash_pairs('typed', 'i', 'h', id_type => NULL::int)) d;
-- text groups are named by the least text in the column's collation
SELECT count(*) AS differ FROM (
	SELECT t.i, g.group_id FROM simhash_groups('typed', 't', 'h', NULL::text, 3) g JOIN typed t ON t.t = g.id
	EXCEPT
	SELECT t.i, (SELECT min(t2.t) FROM simhash_groups('typed', 'i', 'h', NULL::int, 3) g2
	             JOIN typed t2 ON t2.i = g2.id
	             WHERE g2.group_id = g.group_id)
	FROM simhash_groups('typed', 'i', 'h', NULL::int, 3) g JOIN typed t ON t.i = g.id) d;
SELECT pg_typeof(group_id), count(DISTINCT group_id) FROM simhash_groups('typed', 'u', 'h', NULL::uuid, 3, 'leader') GROUP BY 1;
-- a table without a key: rows by ctid
SELECT p.distance, a.id AS a, b.id AS b
FROM simhash_pairs('chain', 'ctid', 'h', id_type => NULL::tid) p
JOIN chain a ON a.ctid = p.id_a JOIN chain b ON b.ctid = p.id_b ORDER BY 2;

-- empty and one-row tables
CREATE TABLE empty (id bigint, h simhash64);
SELECT count(*) FROM simhash_pairs('empty', 'id', 'h');
SELECT count(*) FROM simhash_groups('empty', 'id', 'h');
INSERT INTO empty VALUES (1, '0000000000000001');
SELECT count(*) FROM simhash_pairs('empty', 'id', 'h');
SELECT * FROM simhash_groups('empty', 'id', 'h', 3, 'leader');

-- beyond maintenance_work_mem: rows split into temporary files; the same
-- pairs and groups as in memory, and as an index join
CREATE TABLE big (id bigint, h simhash64);
INSERT INTO big SELECT i, dd_hx('b' || i) FROM generate_series(1, 30000) i;
INSERT INTO big SELECT 100000 + id, dd_near(h, 'm' || id, (id % 5)::int) FROM big WHERE id % 20 = 0;
INSERT INTO big SELECT 200000 + id, h FROM big WHERE id % 1000 = 0;
ANALYZE big;
CREATE INDEX ON big USING simhash (h);
CREATE TEMP TABLE big_mem AS SELECT * FROM simhash_pairs('big', 'id', 'h', 3);
CREATE TEMP TABLE big_groups AS SELECT * FROM simhash_groups('big', 'id', 'h', 3);
CREATE TEMP TABLE big_leaders AS SELECT * FROM simhash_groups('big', 'id', 'h', 3, 'leader');
SET maintenance_work_mem = '1MB';
SET simhash.progress_interval = 0;
SELECT count(*) FROM simhash_pairs('big', 'id', 'h', 3);
RESET simhash.progress_interval;
SELECT (SELECT count(*) FROM big_mem) AS pairs,
       (SELECT count(*) FROM (SELECT * FROM simhash_pairs('big', 'id', 'h', 3) EXCEPT ALL SELECT * FROM big_mem) x) AS extra,
       (SELECT count(*) FROM (SELECT * FROM big_mem EXCEPT ALL SELECT * FROM simhash_pairs('big', 'id', 'h', 3)) x) AS missing;
SET enable_seqscan = off;
SELECT count(*) AS differ_from_index_join FROM (
	SELECT a.id, b.id, (a.h <~> b.h)::int FROM big a JOIN big b ON b.h <~> a.h <= 3 AND a.id < b.id
	EXCEPT ALL SELECT * FROM big_mem) d;
RESET enable_seqscan;
SELECT count(*) AS differ FROM (SELECT * FROM simhash_groups('big', 'id', 'h', 3) EXCEPT SELECT * FROM big_groups) d;
SELECT count(*) AS differ FROM (SELECT * FROM simhash_groups('big', 'id', 'h', 3, 'leader') EXCEPT SELECT * FROM big_leaders) d;
SELECT count(*) AS differ FROM (SELECT * FROM simhash_pairs('big', 'id', 'h', NULL::text, 3) EXCEPT SELECT least(id_a::text, id_b::text), greatest(id_a::text, id_b::text), distance FROM big_mem) d;
-- connected groups keep 4 bytes per row of maintenance_work_mem
CREATE TABLE many AS SELECT i::bigint AS id, i::bigint::simhash64 AS h FROM generate_series(1, 250000) i;
SELECT count(*) FROM simhash_groups('many', 'id', 'h', 0);
-- more rows agree on a whole block than fit: an error, not an allocation
SELECT count(*) FROM simhash_pairs('many', 'id', 'h', 0);
RESET maintenance_work_mem;

-- progress messages
SET simhash.progress_interval = 0;
SELECT count(*) FROM simhash_groups('chain', 'id', 'h', 3);
RESET simhash.progress_interval;

-- privileges: SELECT on the columns is needed; identifiers are quoted
CREATE TABLE "Odd ""Name""" ("Row Id" int, "H" simhash64, secret text);
INSERT INTO "Odd ""Name""" SELECT id, h, 'x' FROM chain;
SELECT * FROM simhash_pairs('"Odd ""Name"""', 'Row Id', 'H') ORDER BY 1, 2;
CREATE ROLE dd_reader;
SET ROLE dd_reader;
SELECT * FROM simhash_pairs('"Odd ""Name"""', 'Row Id', 'H');
SELECT * FROM simhash_groups('"Odd ""Name"""', 'Row Id', 'H');
RESET ROLE;
GRANT SELECT ("Row Id", "H") ON "Odd ""Name""" TO dd_reader;
SET ROLE dd_reader;
SELECT count(*) FROM simhash_pairs('"Odd ""Name"""', 'Row Id', 'H');
SELECT * FROM simhash_pairs('"Odd ""Name"""', 'secret', 'H', NULL::text);
RESET ROLE;
REVOKE ALL ON "Odd ""Name""" FROM dd_reader;
DROP ROLE dd_reader;
SELECT * FROM simhash_pairs('dd', 'id; DROP TABLE dd', 'h');

-- bad input
SELECT * FROM simhash_pairs('dd', 'id', 'h', -1);
SELECT * FROM simhash_pairs('dd', 'id', 'h', 3, 3);
SELECT * FROM simhash_pairs('dd', 'id', 'h', 3, 65);
SELECT * FROM simhash_pairs('dd', 'id', 'h', 10, 40);
SELECT * FROM simhash_pairs('dd', 'id', 'nope');
SELECT * FROM simhash_pairs('dd', 'h', 'id');
SELECT * FROM simhash_pairs(NULL, 'id', 'h');
SELECT * FROM simhash_pairs('dd', NULL, 'h');
SELECT * FROM simhash_pairs('dd', 'id', 'h', NULL);
SELECT * FROM simhash_pairs('typed', 'u', 'h');
SELECT * FROM simhash_groups('dd', 'id', 'h', 3, 'single');
SELECT * FROM simhash_groups('dd', 'id', 'h', 3, NULL);
CREATE TABLE nullid (id int, h simhash64);
INSERT INTO nullid VALUES (1, '0000000000000000'), (NULL, '0000000000000001');
SELECT * FROM simhash_pairs('nullid', 'id', 'h');
CREATE TABLE jsonid (id json, h simhash64);
SELECT * FROM simhash_pairs('jsonid', 'id', 'h', NULL::json);
SELECT * FROM simhash_pairs(0, 'id', 'h');

DROP TABLE dd, chain, same, typed, empty, big, many, "Odd ""Name""", nullid, jsonid;
DROP FUNCTION dd_hx(text), dd_near(simhash64, text, int), dd_check_pairs(regclass, int, int),
	dd_ref_connected(int), ref_leader(regclass, int);
