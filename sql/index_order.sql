-- Nearest-neighbour order through the index: the same distances as a sort
-- of every row, every row once in a full ordered scan, NULL keys last, and
-- the tail of the scan read in slices that fit in work_mem (no temporary
-- file: temp_file_limit would refuse one).
CREATE EXTENSION IF NOT EXISTS simhash;
CREATE TABLE ko AS
	SELECT g AS id, simhash_hash('ko ' || g)::simhash64 AS h
	FROM generate_series(1, 50000) g;
INSERT INTO ko VALUES (0, NULL), (-1, NULL);
CREATE INDEX ko_h ON ko USING simhash (h);
ANALYZE ko;
CREATE TABLE ko_probe AS
	SELECT g, simhash_hash('probe ' || g)::simhash64 AS q FROM generate_series(1, 20) g;

-- the answers of a sort of every row
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TABLE ko_want AS
	SELECT g, array(SELECT h <~> q FROM ko ORDER BY h <~> q LIMIT 10) AS d10,
		array(SELECT h <~> q FROM ko WHERE h <~> q <= 20 ORDER BY h <~> q) AS d20
	FROM ko_probe;
RESET enable_indexscan;
RESET enable_bitmapscan;

SET enable_seqscan = off;
SET work_mem = '64kB';
SET temp_file_limit = '64kB';
EXPLAIN (COSTS OFF)
SELECT id FROM ko ORDER BY h <~> '0123456789abcdef' LIMIT 10;

-- ten nearest, and every row within 20 bits in order, for 20 probes
SELECT count(*) AS probes,
	count(*) FILTER (WHERE array(SELECT h <~> q FROM ko ORDER BY h <~> q LIMIT 10) = d10) AS same_10,
	count(*) FILTER (WHERE array(SELECT h <~> q FROM ko WHERE h <~> q <= 20 ORDER BY h <~> q) = d20) AS same_within_20
FROM ko_probe JOIN ko_want USING (g);

-- a full ordered scan: every row once (count and sum of the ids),
-- distances never decreasing, NULLs last; checked row by row as they come
CREATE FUNCTION pg_temp.ko_walk(q simhash64,
	OUT rows bigint, OUT id_sum bigint, OUT out_of_order int, OUT nulls_early int)
LANGUAGE plpgsql AS $$
DECLARE
	r record;
	prev int := 0;
	seen_null bool := false;
BEGIN
	rows := 0; id_sum := 0; out_of_order := 0; nulls_early := 0;
	FOR r IN SELECT id, h <~> q AS d FROM ko ORDER BY h <~> q LOOP
		rows := rows + 1;
		id_sum := id_sum + r.id;
		IF r.d IS NULL THEN
			seen_null := true;
		ELSIF seen_null THEN
			nulls_early := nulls_early + 1;
		ELSIF r.d < prev THEN
			out_of_order := out_of_order + 1;
		ELSE
			prev := r.d;
		END IF;
	END LOOP;
END $$;
SELECT *, 50000::bigint * 50001 / 2 - 1 AS want_id_sum FROM pg_temp.ko_walk('0123456789abcdef');
SELECT *, 50000::bigint * 50001 / 2 - 1 AS want_id_sum FROM pg_temp.ko_walk('fedcba9876543210');

RESET temp_file_limit;
RESET work_mem;
RESET enable_seqscan;
DROP TABLE ko, ko_probe, ko_want;
