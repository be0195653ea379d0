-- the radius join in parallel plans (scan.c, doc/joins.md "Parallel
-- workers"): the partial path (the outer a Parallel Seq Scan, the inner
-- whole, each process joining its share of the outer rows) under a Gather,
-- and the serial join run in a worker (debug_parallel_query), each against
-- the serial plan in the leader, for every join form at k = 0..8, in memory
-- and spilling
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;

-- pcorpus: 4000 random rows, 1200 copies of some of them with 0..8 bits
-- flipped, 80 exact duplicates, 3 NULLs; pnews: 900 rows near the corpus,
-- 300 random, 2 NULLs (enough pages for the workers to get some)
CREATE FUNCTION pflip(h simhash64, seed int, d int) RETURNS simhash64 LANGUAGE sql IMMUTABLE AS $$
	SELECT (h::bigint # (SELECT coalesce(bit_or(1::bigint << ((seed * 7 + o * 23) % 64)::int), 0)
	                     FROM generate_series(1, d) o))::simhash64
$$;
CREATE TABLE pcorpus (id int, h simhash64, tag text);
INSERT INTO pcorpus SELECT g, simhash_hash(g::text)::simhash64, 't' || g % 5 FROM generate_series(1, 4000) g;
INSERT INTO pcorpus SELECT 5000 + g, pflip(simhash_hash((g * 3)::text)::simhash64, g, g % 9), 'p'
	FROM generate_series(1, 1200) g;
INSERT INTO pcorpus SELECT 7000 + g, simhash_hash((g * 11)::text)::simhash64, 'd' FROM generate_series(1, 80) g;
INSERT INTO pcorpus VALUES (9001, NULL, 'n'), (9002, NULL, 'n'), (9003, NULL, 'n');
CREATE TABLE pnews (id int, h simhash64);
INSERT INTO pnews SELECT 10000 + g, pflip(simhash_hash((g * 5)::text)::simhash64, g + 1, g % 9)
	FROM generate_series(1, 900) g;
INSERT INTO pnews SELECT 11000 + g, simhash_hash('n' || g)::simhash64 FROM generate_series(1, 300) g;
INSERT INTO pnews VALUES (19001, NULL), (19002, NULL);
ANALYZE pcorpus;
ANALYZE pnews;

-- the plan's kind: 'partial' (a Gather above the radius join, whose outer
-- is a Parallel Seq Scan), 'in a worker' (a single-copy Gather above the
-- serial join), 'serial', or 'none' (no radius join)
CREATE FUNCTION pkind(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	plan text := '';
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		plan := plan || line || E'\n';
	END LOOP;
	RETURN CASE
		WHEN position('SimhashJoin' IN plan) = 0 THEN 'none'
		WHEN plan ~ 'Gather.*SimhashJoin.*Parallel Seq Scan' AND position('Single Copy' IN plan) = 0
			THEN 'partial'
		WHEN plan ~ 'Single Copy.*SimhashJoin' THEN 'in a worker'
		ELSE 'serial' END;
END
$$;

-- pcheck(query with %s for the distance, k, mode): the query's rows in a
-- parallel plan against those of the serial plan (no workers).  Modes:
-- 'partial': parallel plans cost nothing, every table is big enough for
-- workers and the leader only gathers (the workers do all the joining);
-- 'worker': debug_parallel_query on (force_parallel_mode before 16), default costs (the serial join of
-- identical scans, read once, is not parallel-safe and stays in the
-- leader).  Returns the plan's kind, the rows and the differences.
CREATE FUNCTION pcheck(q text, k int, mode text)
RETURNS TABLE (kind text, rows bigint, missing bigint, extra bigint)
LANGUAGE plpgsql AS $$
DECLARE
	sql text := format(q, k);
	force text := CASE WHEN current_setting('server_version_num')::int >= 160000
		THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END;
	got text[];
	want text[];
BEGIN
	SET LOCAL max_parallel_workers_per_gather = 0;
	EXECUTE format('SELECT array_agg(x::text) FROM (%s) x', sql) INTO want;
	SET LOCAL max_parallel_workers_per_gather = 2;
	SET LOCAL enable_nestloop = off;
	IF mode = 'partial' THEN
		SET LOCAL parallel_setup_cost = 0;
		SET LOCAL parallel_tuple_cost = 0;
		SET LOCAL min_parallel_table_scan_size = 0;
		SET LOCAL parallel_leader_participation = off;
	ELSE
		PERFORM set_config(force, 'on', true);
	END IF;
	kind := pkind(sql);
	EXECUTE format('SELECT array_agg(x::text) FROM (%s) x', sql) INTO got;
	rows := coalesce(cardinality(got), 0);
	missing := (SELECT count(*) FROM (SELECT unnest(want) EXCEPT ALL SELECT unnest(got)) d);
	extra := (SELECT count(*) FROM (SELECT unnest(got) EXCEPT ALL SELECT unnest(want)) d);
	RETURN NEXT;
	RESET max_parallel_workers_per_gather;
	RESET enable_nestloop;
	RESET parallel_setup_cost;
	RESET parallel_tuple_cost;
	RESET min_parallel_table_scan_size;
	RESET parallel_leader_participation;
	EXECUTE format('RESET %I', force);
END
$$;

-- every form for k = 0..8 in both modes: each form's plan kinds, its
-- rows, and no differences from the serial plan
CREATE TABLE pforms (form text, q text);
INSERT INTO pforms VALUES
	('self', 'SELECT a.id AS a, b.id AS b FROM pcorpus a JOIN pcorpus b ON a.id < b.id WHERE a.h <~> b.h <= %s'),
	('self, all pairs', 'SELECT a.id AS a, b.id AS b, a.h <~> b.h AS d FROM pcorpus a JOIN pcorpus b ON a.h <~> b.h <= %s'),
	('self, <=', 'SELECT a.id AS a, b.id AS b FROM pcorpus a JOIN pcorpus b ON a.id <= b.id WHERE a.h <~> b.h <= %s'),
	('self, other columns', 'SELECT a.id AS a, b.tag FROM pcorpus a JOIN pcorpus b ON a.h <~> b.h <= %s WHERE a.id <> b.id'),
	('two tables', 'SELECT n.id AS n, c.id AS c, c.tag FROM pnews n JOIN pcorpus c ON c.h <~> n.h <= %s'),
	('subqueries', 'SELECT a.id AS a, b.id AS b FROM (SELECT * FROM pcorpus WHERE id %% 3 <> 0) a JOIN (SELECT id, h FROM pcorpus WHERE tag <> ''t1'') b ON b.h <~> a.h <= %s AND a.id + 1 <> b.id'),
	('semi', 'SELECT n.id FROM pnews n WHERE EXISTS (SELECT 1 FROM pcorpus c WHERE c.h <~> n.h <= %s)'),
	('anti', 'SELECT n.id FROM pnews n WHERE NOT EXISTS (SELECT 1 FROM pcorpus c WHERE c.h <~> n.h <= %s)'),
	('anti with a filter', 'SELECT n.id FROM pnews n WHERE NOT EXISTS (SELECT 1 FROM pcorpus c WHERE c.h <~> n.h <= %s AND c.tag = ''p'')'),
	('self, semi', 'SELECT a.id FROM pcorpus a WHERE EXISTS (SELECT 1 FROM pcorpus b WHERE b.h <~> a.h <= %s AND b.id <> a.id)'),
	('self, anti', 'SELECT a.id FROM pcorpus a WHERE NOT EXISTS (SELECT 1 FROM pcorpus b WHERE a.h <~> b.h <= %s AND a.id <> b.id)');
SELECT form, mode, string_agg(DISTINCT kind, ', ') AS kinds, sum(rows) AS rows,
	sum(missing) AS missing, sum(extra) AS extra
FROM pforms, (VALUES ('partial'), ('worker')) m(mode), generate_series(0, 8) k,
	pcheck(q, k, mode)
GROUP BY form, mode ORDER BY form, mode;

-- the spill path in each worker: a 64kB budget (search and kept rows in
-- temporary files, per process), rows kept as columns and as tuples
SET work_mem = '64kB';
SET hash_mem_multiplier = 1;
SELECT form, string_agg(DISTINCT kind, ', ') AS kinds, sum(rows) AS rows,
	sum(missing) AS missing, sum(extra) AS extra
FROM pforms, generate_series(2, 4) k, pcheck(q, k, 'partial')
WHERE form IN ('self', 'two tables', 'self, other columns', 'anti')
GROUP BY form ORDER BY form;
RESET work_mem;
RESET hash_mem_multiplier;

-- the plans, with the parallel costs at zero and the workers alone joining
-- (with the leader joining too, the partial path is charged for the
-- leader's copy of the inner's work)
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
SET enable_nestloop = off;
-- the identical scans of a self-join are not read once in a partial path:
-- the inner is the whole table, the outer each process's share
EXPLAIN (COSTS OFF) SELECT a.id, b.id FROM pcorpus a JOIN pcorpus b ON a.id < b.id WHERE a.h <~> b.h <= 3;
EXPLAIN (COSTS OFF) SELECT count(*) FROM pnews n JOIN pcorpus c ON c.h <~> n.h <= 3;
EXPLAIN (COSTS OFF) SELECT n.id FROM pnews n WHERE NOT EXISTS (SELECT 1 FROM pcorpus c WHERE c.h <~> n.h <= 3);
-- under EXPLAIN ANALYZE, the pairs checked by all processes (the serial
-- two-table join checks the same pairs)
CREATE FUNCTION plines(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE q LOOP
		-- rows per loop as a whole number, as before 18 (which prints two decimals)
		RETURN NEXT regexp_replace(line, '(rows=\d+)\.\d+', '\1');
	END LOOP;
END
$$;
SELECT plines FROM plines('EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM pnews n JOIN pcorpus c ON c.h <~> n.h <= 3')
WHERE plines ~ 'Gather|SimhashJoin|Pairs Checked|Workers';
SET max_parallel_workers_per_gather = 0;
SELECT plines FROM plines('EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM pnews n JOIN pcorpus c ON c.h <~> n.h <= 3')
WHERE plines ~ 'Gather|SimhashJoin|Pairs Checked|Workers';
RESET max_parallel_workers_per_gather;
-- Gather Merge: each process sorts its rows, the leader merges them
EXPLAIN (COSTS OFF) SELECT n.id, c.id FROM pnews n JOIN pcorpus c ON c.h <~> n.h <= 3 ORDER BY n.id, c.id;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE pmerged AS SELECT string_agg(a || '-' || b, ',') AS s
FROM (SELECT n.id, c.id FROM pnews n JOIN pcorpus c ON c.h <~> n.h <= 3 ORDER BY n.id, c.id) x(a, b);
RESET max_parallel_workers_per_gather;
SELECT md5(string_agg(a || '-' || b, ',')) = (SELECT md5(s) FROM pmerged) AS same_rows_same_order
FROM (SELECT n.id, c.id FROM pnews n JOIN pcorpus c ON c.h <~> n.h <= 3 ORDER BY n.id, c.id) x(a, b);
-- the radius from an initplan (evaluated by the leader, passed to the workers)
-- (the plan is either the partial join or, on some servers' cost ties, a
-- serial join above two Gathers; the rows are checked either way)
SELECT pkind('SELECT count(*) FROM pnews n JOIN pcorpus c ON c.h <~> n.h <= (SELECT 3)') IN ('partial', 'serial') AS radius_join;
SELECT count(*) FROM pnews n JOIN pcorpus c ON c.h <~> n.h <= (SELECT 3);
-- simhash.enable_join = off: no radius join, serial or partial
SET simhash.enable_join = off;
SELECT pkind('SELECT count(*) FROM pnews n JOIN pcorpus c ON c.h <~> n.h <= 3') AS kind;
RESET simhash.enable_join;
-- a parameter for k (a generic plan)
SET plan_cache_mode = force_generic_plan;
PREPARE pj(int) AS SELECT count(*) FROM pnews n JOIN pcorpus c ON c.h <~> n.h <= $1;
SELECT pkind('EXECUTE pj(3)') IN ('partial', 'serial') AS radius_join;
EXECUTE pj(3);
EXECUTE pj(5);
DEALLOCATE pj;
RESET plan_cache_mode;
-- rescans: a correlated subquery runs its Gather once per outer row; each
-- time the workers and the leader scan other shares of the outer, so the
-- join must run again, not return its last rows (the leader joins too)
SET parallel_leader_participation = on;
SELECT pkind('SELECT x, (SELECT count(*) + 0 * x FROM pnews n JOIN pcorpus c ON c.h <~> n.h <= 3) FROM generate_series(1, 4) x') IN ('partial', 'serial') AS radius_join;
SELECT x, (SELECT count(*) + 0 * x FROM pnews n JOIN pcorpus c ON c.h <~> n.h <= 3) FROM generate_series(1, 4) x;
SET max_parallel_workers_per_gather = 0;
SELECT count(*) FROM pnews n JOIN pcorpus c ON c.h <~> n.h <= 3;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;
RESET enable_nestloop;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- at the default costs these small joins stay serial
EXPLAIN (COSTS OFF) SELECT count(*) FROM pnews n JOIN pcorpus c ON c.h <~> n.h <= 3;

DROP TABLE pforms, pmerged;
DROP FUNCTION pcheck(text, int, text);
DROP FUNCTION pkind(text);
DROP FUNCTION plines(text);
DROP TABLE pcorpus, pnews;
DROP FUNCTION pflip(simhash64, int, int);
