-- the radius join (src/join/): every join form against a nested-loop reference
-- (simhash.enable_join off, no hash/merge joins), on random fingerprints with
-- planted near-duplicates at 0..8 bits, NULLs and exact duplicates
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;

-- corpus: 1200 random rows, 300 copies of some of them with 0..8 bits
-- flipped, 40 exact duplicates and 3 NULLs; news: 150 rows near the corpus,
-- 100 random, 2 NULLs
CREATE FUNCTION jflip(h simhash64, seed int, d int) RETURNS simhash64 LANGUAGE sql IMMUTABLE AS $$
	SELECT (h::bigint # (SELECT coalesce(bit_or(1::bigint << ((seed * 7 + o * 23) % 64)::int), 0)
	                     FROM generate_series(1, d) o))::simhash64
$$;
CREATE TABLE corpus (id int, h simhash64, tag text);
INSERT INTO corpus SELECT g, simhash_hash(g::text)::simhash64, 't' || g % 5 FROM generate_series(1, 1200) g;
INSERT INTO corpus SELECT 2000 + g, jflip(simhash_hash((g * 3)::text)::simhash64, g, g % 9), 'p'
	FROM generate_series(1, 300) g;
INSERT INTO corpus SELECT 3000 + g, simhash_hash((g * 11)::text)::simhash64, 'd' FROM generate_series(1, 40) g;
INSERT INTO corpus VALUES (9001, NULL, 'n'), (9002, NULL, 'n'), (9003, NULL, 'n');
CREATE TABLE news (id int, h simhash64);
INSERT INTO news SELECT 10000 + g, jflip(simhash_hash((g * 5)::text)::simhash64, g + 1, g % 9)
	FROM generate_series(1, 150) g;
INSERT INTO news SELECT 11000 + g, simhash_hash('n' || g)::simhash64 FROM generate_series(1, 100) g;
INSERT INTO news VALUES (19001, NULL), (19002, NULL);
ANALYZE corpus;
ANALYZE news;

-- check(query with %s for the distance, k): the query's rows with the radius
-- join (which must be in the plan) equal those of the nested-loop reference
CREATE FUNCTION jcheck(q text, k int) RETURNS TABLE (rows bigint, missing bigint, extra bigint)
LANGUAGE plpgsql AS $$
DECLARE
	sql text := format(q, k);
	plan text := '';
	line text;
BEGIN
	SET LOCAL simhash.enable_join = on;
	SET LOCAL enable_nestloop = off;
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || sql LOOP
		plan := plan || line || E'\n';
	END LOOP;
	IF position('SimhashJoin' IN plan) = 0 THEN
		RAISE EXCEPTION 'no radius join in the plan of %: %', sql, plan;
	END IF;
	EXECUTE 'CREATE TEMP TABLE got AS ' || sql;
	SET LOCAL simhash.enable_join = off;
	SET LOCAL enable_nestloop = on;
	SET LOCAL enable_hashjoin = off;
	SET LOCAL enable_mergejoin = off;
	EXECUTE 'CREATE TEMP TABLE want AS ' || sql;
	RETURN QUERY SELECT (SELECT count(*) FROM got),
		(SELECT count(*) FROM (SELECT * FROM want EXCEPT ALL SELECT * FROM got) x),
		(SELECT count(*) FROM (SELECT * FROM got EXCEPT ALL SELECT * FROM want) x);
	DROP TABLE got;
	DROP TABLE want;
	RESET simhash.enable_join;
	RESET enable_nestloop;
	RESET enable_hashjoin;
	RESET enable_mergejoin;
END
$$;

-- every form for k = 0..8, with the default blocks (k + 2); the sums show
-- that every form found pairs and none differs from the reference
CREATE TABLE forms (form text, q text);
INSERT INTO forms VALUES
	('self', 'SELECT a.id AS a, b.id AS b FROM corpus a JOIN corpus b ON a.id < b.id WHERE a.h <~> b.h <= %s'),
	('self, all pairs', 'SELECT a.id AS a, b.id AS b, a.h <~> b.h AS d FROM corpus a JOIN corpus b ON a.h <~> b.h <= %s'),
	('self, <=', 'SELECT a.id AS a, b.id AS b FROM corpus a JOIN corpus b ON a.id <= b.id WHERE a.h <~> b.h <= %s'),
	('two tables', 'SELECT n.id AS n, c.id AS c, c.tag FROM news n JOIN corpus c ON c.h <~> n.h <= %s'),
	('subqueries', 'SELECT a.id AS a, b.id AS b FROM (SELECT * FROM corpus WHERE id %% 3 <> 0) a JOIN (SELECT id, h FROM corpus WHERE tag <> ''t1'') b ON b.h <~> a.h <= %s AND a.id + 1 <> b.id'),
	('semi', 'SELECT n.id FROM news n WHERE EXISTS (SELECT 1 FROM corpus c WHERE c.h <~> n.h <= %s)'),
	('anti', 'SELECT n.id FROM news n WHERE NOT EXISTS (SELECT 1 FROM corpus c WHERE c.h <~> n.h <= %s)'),
	('semi with a filter', 'SELECT n.id FROM news n WHERE EXISTS (SELECT 1 FROM corpus c WHERE c.h <~> n.h <= %s AND c.id > n.id - 10000)'),
	('anti with a filter', 'SELECT n.id FROM news n WHERE NOT EXISTS (SELECT 1 FROM corpus c WHERE c.h <~> n.h <= %s AND c.tag = ''p'')'),
	('self, same filters', 'SELECT a.id AS a, b.id AS b FROM (SELECT * FROM corpus WHERE id %% 3 <> 0) a JOIN (SELECT * FROM corpus WHERE id %% 3 <> 0) b ON a.h <~> b.h <= %s AND a.id < b.id'),
	('self, other columns', 'SELECT a.id AS a, b.tag FROM corpus a JOIN corpus b ON a.h <~> b.h <= %s WHERE a.id <> b.id'),
	('self, semi', 'SELECT a.id FROM corpus a WHERE EXISTS (SELECT 1 FROM corpus b WHERE b.h <~> a.h <= %s AND b.id <> a.id)'),
	('self, anti', 'SELECT a.id FROM corpus a WHERE NOT EXISTS (SELECT 1 FROM corpus b WHERE a.h <~> b.h <= %s AND a.id <> b.id)');
SELECT form, sum(rows) AS rows, sum(missing) AS missing, sum(extra) AS extra
FROM forms, generate_series(0, 8) k, jcheck(q, k) GROUP BY form ORDER BY form;
-- the self-joins of identical scans read their input once (no inner plan)
CREATE FUNCTION jshared(q text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	line text;
	shared boolean := false;
BEGIN
	SET LOCAL enable_nestloop = off;
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || format(q, 3) LOOP
		shared := shared OR line LIKE '%Inner Input: the outer''s rows%';
	END LOOP;
	RETURN shared;
END
$$;
SELECT form, jshared(q) AS shared FROM forms ORDER BY form;

-- the other spellings the planner support accepts
SELECT form, c.* FROM (VALUES
	('<', 'SELECT a.id AS a, b.id AS b FROM corpus a JOIN corpus b ON a.h <~> b.h < %s + 1 WHERE a.id < b.id', 4),
	('>=', 'SELECT a.id AS a, b.id AS b FROM corpus a JOIN corpus b ON %s >= a.h <~> b.h WHERE a.id < b.id', 4),
	('= 0', 'SELECT a.id AS a, b.id AS b FROM corpus a JOIN corpus b ON a.h <~> b.h = %s WHERE a.id < b.id', 0),
	('<@ ball', 'SELECT a.id AS a, b.id AS b FROM corpus a JOIN corpus b ON a.h <@ simhash_ball(b.h, %s) WHERE a.id < b.id', 4),
	('@> ball', 'SELECT a.id AS a, b.id AS b FROM corpus a JOIN corpus b ON simhash_ball(b.h, %s) @> a.h WHERE a.id < b.id', 4),
	('smallint', 'SELECT a.id AS a, b.id AS b FROM corpus a JOIN corpus b ON a.h <~> b.h <= %s::smallint WHERE a.id < b.id', 4),
	('expressions', 'SELECT a.id AS a, b.id AS b FROM corpus a JOIN corpus b ON (a.h::bigint # 1)::simhash64 <~> b.h <= %s WHERE a.id < b.id', 4),
	('radius 64', 'SELECT a.id AS a, b.id AS b FROM corpus a JOIN corpus b ON a.h <~> b.h <= %s WHERE a.id < b.id AND a.id < 60 AND b.id < 60', 64),
	('negative radius', 'SELECT a.id AS a, b.id AS b FROM corpus a JOIN corpus b ON a.h <~> b.h <= %s', -1)
) f(form, q, k), jcheck(q, k) c;

-- several block settings (simhash.join_blocks, used when valid for k)
SELECT b AS blocks, sum(rows) AS rows, sum(missing) AS missing, sum(extra) AS extra
FROM generate_series(3, 12, 3) b, generate_series(0, 8) k,
	LATERAL (SELECT set_config('simhash.join_blocks', b::text, false)) s,
	LATERAL jcheck('SELECT a.id AS a, b.id AS b FROM corpus a JOIN corpus b ON a.id < b.id WHERE a.h <~> b.h <= %s', k)
GROUP BY b ORDER BY b;
RESET simhash.join_blocks;

-- rows whose columns used above the join are all by value are kept as
-- arrays of those columns: with NULLs in them, in memory and (at 64kB)
-- in temporary files
CREATE TABLE nul AS SELECT id, CASE WHEN id % 4 = 0 THEN NULL ELSE id * 10 END AS v, h
	FROM corpus;
ANALYZE nul;
SET hash_mem_multiplier = 1;
SELECT wm, form, c.* FROM (VALUES ('4MB'), ('64kB')) w(wm),
	LATERAL (SELECT set_config('work_mem', wm, false)) s,
	(VALUES
		('self', 'SELECT a.id AS a, a.v AS av, b.v AS bv FROM nul a JOIN nul b ON a.h <~> b.h <= %s WHERE a.id < b.id OR a.v IS NULL'),
		('two tables', 'SELECT n.id AS n, c.v AS cv, n.h <~> c.h AS d FROM news n JOIN nul c ON c.h <~> n.h <= %s AND c.v IS DISTINCT FROM n.id'),
		('semi', 'SELECT n.id, n.v FROM nul n WHERE EXISTS (SELECT 1 FROM nul c WHERE c.h <~> n.h <= %s AND c.v IS NULL AND c.id <> n.id)')
	) f(form, q),
	LATERAL jcheck(q, 3) c
ORDER BY wm, form;
RESET work_mem;
RESET hash_mem_multiplier;

-- spilling: a tiny work_mem puts the search's rows and the kept rows into
-- temporary files (the search splits by block bits, as the dedup jobs do)
SET work_mem = '64kB';
SET hash_mem_multiplier = 1;
SELECT form, sum(rows) AS rows, sum(missing) AS missing, sum(extra) AS extra
FROM forms, generate_series(0, 8, 2) k, jcheck(q, k) GROUP BY form ORDER BY form;
CREATE FUNCTION spilled(q text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) ' || q INTO plan;
	RETURN (plan -> 0 -> 'Plan' ->> 'Spilled')::bigint > 0;
END
$$;
SELECT spilled('SELECT a.id, b.id FROM corpus a JOIN corpus b ON a.id < b.id WHERE a.h <~> b.h <= 3');
-- more rows agreeing on a whole block than fit in the join's memory: an
-- error that names the join's budget, work_mem * hash_mem_multiplier
CREATE TABLE same AS SELECT g AS id, simhash_hash('same')::simhash64 AS h FROM generate_series(1, 2000) g;
ANALYZE same;
SET enable_nestloop = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM same a JOIN same b ON a.h <~> b.h <= 1;
SELECT count(*) FROM same a JOIN same b ON a.h <~> b.h <= 1;
SELECT count(*) FROM same a JOIN corpus b ON a.h <~> b.h <= 1;
RESET enable_nestloop;
DROP TABLE same;
RESET work_mem;
RESET hash_mem_multiplier;
SELECT spilled('SELECT a.id, b.id FROM corpus a JOIN corpus b ON a.id < b.id WHERE a.h <~> b.h <= 3');

-- NULL fingerprints never match, a NULL radius matches nothing
SELECT count(*) FROM corpus a JOIN corpus b ON a.h <~> b.h <= 64 WHERE a.h IS NULL OR b.h IS NULL;
PREPARE jp(int) AS SELECT count(*) FROM corpus a JOIN corpus b ON a.id < b.id WHERE a.h <~> b.h <= $1;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE jp(3);
EXECUTE jp(NULL);
-- a parameter: the generic plan, for several values
SELECT k, (SELECT count(*) FROM corpus a JOIN corpus b ON a.id < b.id
           WHERE hamming_distance(a.h, b.h) <= k) AS want
FROM generate_series(0, 8, 4) k;
EXECUTE jp(0);
EXECUTE jp(4);
EXECUTE jp(8);
RESET plan_cache_mode;
DEALLOCATE jp;

-- rescans: with a changed parameter (the distance of each outer row), and
-- without (the node under a nested loop returns its rows again)
EXPLAIN (COSTS OFF) SELECT k, (SELECT count(*) FROM corpus a JOIN corpus b ON a.id < b.id WHERE a.h <~> b.h <= k)
FROM generate_series(0, 8, 2) k;
SELECT k, (SELECT count(*) FROM corpus a JOIN corpus b ON a.id < b.id WHERE a.h <~> b.h <= k) AS got,
	(SELECT count(*) FROM corpus a JOIN corpus b ON a.id < b.id WHERE hamming_distance(a.h, b.h) <= k) AS want
FROM generate_series(0, 8, 2) k;
EXPLAIN (COSTS OFF) SELECT g, (SELECT count(*) FROM
	(SELECT a.id FROM corpus a JOIN corpus b ON a.id < b.id WHERE a.h <~> b.h <= 3 OFFSET 0) j
	WHERE j.id % 3 = g) FROM generate_series(0, 2) g;
SELECT g, (SELECT count(*) FROM
	(SELECT a.id FROM corpus a JOIN corpus b ON a.id < b.id WHERE a.h <~> b.h <= 3 OFFSET 0) j
	WHERE j.id % 3 = g) FROM generate_series(0, 2) g;
SELECT g, count(*) FROM corpus a JOIN corpus b ON a.id < b.id, generate_series(0, 2) g
	WHERE hamming_distance(a.h, b.h) <= 3 AND a.id % 3 = g GROUP BY g ORDER BY g;

-- cursors: forward fetches in pieces; a scroll cursor gets a Material node
BEGIN;
DECLARE jc CURSOR FOR SELECT a.id, b.id FROM corpus a JOIN corpus b ON a.id < b.id WHERE a.h <~> b.h <= 3;
FETCH 5 FROM jc \g /dev/null
MOVE FORWARD ALL IN jc;
FETCH 1 FROM jc;
CLOSE jc;
EXPLAIN (COSTS OFF) DECLARE js SCROLL CURSOR FOR SELECT a.id, b.id FROM corpus a JOIN corpus b ON a.id < b.id WHERE a.h <~> b.h <= 3;
DECLARE js SCROLL CURSOR FOR SELECT a.id, b.id FROM corpus a JOIN corpus b ON a.id < b.id WHERE a.h <~> b.h <= 3 ORDER BY 1, 2;
MOVE FORWARD ALL IN js;
MOVE BACKWARD ALL IN js;
FETCH 2 FROM js;
COMMIT;

-- The cost model divides the memory as the join does
-- (kept_width(), set_budgets()): count(*) keeps no column, so the search
-- gets three quarters of work_mem * hash_mem_multiplier, and the 1,543
-- corpus rows (40 bytes each: 62kB) fit in 64kB * 2 without temporary
-- files (the same cost as at 4MB), not in 64kB * 1 (a higher cost)
CREATE FUNCTION jcost(q text, wm text, hmm text) RETURNS TABLE (cost float8, spilled boolean)
LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	PERFORM set_config('work_mem', wm, false);
	PERFORM set_config('hash_mem_multiplier', hmm, false);
	EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) ' || q INTO plan;
	cost := (plan -> 0 -> 'Plan' -> 'Plans' -> 0 ->> 'Total Cost')::float8;
	spilled := (plan -> 0 -> 'Plan' -> 'Plans' -> 0 ->> 'Spilled')::bigint > 0;
	RETURN NEXT;
END
$$;
SELECT m.wm, m.hmm, c.spilled, c.cost = f.cost AS "cost as at 4MB", c.cost > f.cost AS "cost above 4MB's"
FROM (VALUES ('64kB', '2'), ('64kB', '1')) m(wm, hmm),
	LATERAL jcost('SELECT count(*) FROM corpus a JOIN corpus b ON a.h <~> b.h <= 3', m.wm, m.hmm) c,
	LATERAL jcost('SELECT count(*) FROM corpus a JOIN corpus b ON a.h <~> b.h <= 3', '4MB', '2') f
ORDER BY m.hmm DESC;
RESET work_mem;
RESET hash_mem_multiplier;

-- A self-join of identical scans whose kept rows go to a temporary file:
-- 200,000 rows (16 bytes kept a row, past the rows' share of 4MB * 2) and
-- 2,000 near-copies.  The radius clause's estimate (1 / ndistinct: about
-- one pair a row) counts each row with itself; `a.id < b.id` fails those
-- pairs, which are never candidates read back from the file, so the cost
-- leaves them out, and the radius join is chosen over the index nested
-- loop, serial and under a Gather (the parallel one ran 4 times slower at
-- 1M rows)
CREATE TABLE big AS SELECT g AS id, simhash_hash(g::text)::simhash64 AS h
	FROM generate_series(1, 200000) g;
INSERT INTO big SELECT 200000 + g, jflip(simhash_hash((g * 7)::text)::simhash64, g, g % 4)
	FROM generate_series(1, 2000) g;
CREATE INDEX big_h ON big USING simhash (h);
VACUUM ANALYZE big;
SET work_mem = '4MB';
SET hash_mem_multiplier = 2;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT count(*) FROM big a JOIN big b ON a.id < b.id AND a.h <~> b.h <= 3;
SELECT spilled('SELECT a.id, b.id FROM big a JOIN big b ON a.id < b.id AND a.h <~> b.h <= 3');
SELECT (SELECT count(*) FROM big a JOIN big b ON a.id < b.id AND a.h <~> b.h <= 3) =
	(SELECT count(*) FROM simhash_pairs('big', 'id', 'h', 3)) AS "same pairs as simhash_pairs";
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF) SELECT count(*) FROM big a JOIN big b ON a.id < b.id AND a.h <~> b.h <= 3;
RESET max_parallel_workers_per_gather;
RESET work_mem;
RESET hash_mem_multiplier;
DROP TABLE big;

-- the README's forms, and the setting that turns the join off
EXPLAIN (COSTS OFF) SELECT a.id, b.id FROM corpus a JOIN corpus b ON a.id < b.id WHERE a.h <~> b.h <= 3;
EXPLAIN (COSTS OFF) SELECT n.id, c.id FROM news n JOIN corpus c ON c.h <~> n.h <= 3;
EXPLAIN (COSTS OFF) SELECT n.id FROM news n WHERE NOT EXISTS (SELECT 1 FROM corpus c WHERE c.h <~> n.h <= 3);
EXPLAIN (COSTS OFF) SELECT n.id FROM news n WHERE EXISTS (SELECT 1 FROM corpus c WHERE c.h <~> n.h <= 3);
SET simhash.enable_join = off;
EXPLAIN (COSTS OFF) SELECT a.id, b.id FROM corpus a JOIN corpus b ON a.id < b.id WHERE a.h <~> b.h <= 3;
RESET simhash.enable_join;

-- with an index, a handful of probes is an index nested loop
CREATE INDEX corpus_h ON corpus USING simhash (h);
CREATE TABLE few AS SELECT * FROM news LIMIT 5;
ANALYZE few;
EXPLAIN (COSTS OFF) SELECT f.id, c.id FROM few f JOIN corpus c ON c.h <~> f.h <= 3;
EXPLAIN (COSTS OFF) SELECT a.id, b.id FROM corpus a JOIN corpus b ON a.id < b.id WHERE a.h <~> b.h <= 3;
SELECT * FROM jcheck('SELECT a.id AS a, b.id AS b FROM corpus a JOIN corpus b ON a.id < b.id WHERE a.h <~> b.h <= %s', 3);

DROP TABLE few, forms, corpus, news, nul;
DROP FUNCTION jcheck(text, int), jflip(simhash64, int, int), spilled(text), jshared(text), jcost(text, text, text);
