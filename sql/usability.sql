-- issue #17: simhash_distance where an integer would go (numeric and double
-- precision operands, JSON numbers), weights as double precision or numeric,
-- integer -> simhash64, simhash_find_all's defaults; existing call forms
-- resolve to the same functions and types as in 1.0
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
\set d '(''0123456789abcdef''::simhash64 <~> ''0123456789abcdee'')'

-- numeric and double precision operands
SELECT :d / 64.0 AS frac, :d * 1.0 AS times, round(:d / 64.0, 3) AS rounded,
       1 - :d / 64.0 AS similarity, :d / 3.0::float8 AS f8, 1.5 * :d AS nl,
       1.5::float8 - :d AS fl, :d + 0.5 AS np, :d * 2.5::real AS f4;
SELECT :d <= 3.0 AS le, :d <= 3.5::float8 AS lef, 3.0 >= :d AS ge,
       0.5::float8 < :d AS lt, :d = 1.0 AS eq, :d <> 1::numeric AS ne,
       :d > 0.5 AS gt, :d BETWEEN 0.5 AND 1.5 AS btw, :d IN (1.0, 2.5) AS isin;
SELECT pg_typeof(:d / 64.0) AS n, pg_typeof(:d * 1.0::float8) AS f, pg_typeof(:d <= 3.0) AS b;

-- existing forms resolve as in 1.0 (integer results, bigint sums)
SELECT pg_typeof(:d / 2) AS div, pg_typeof(:d + :d) AS dd, pg_typeof(64 - :d) AS mi,
       pg_typeof(sum(:d)) AS sum, pg_typeof(:d + 1::bigint) AS i8,
       pg_typeof(:d + '1') AS unk, pg_typeof(:d % 2) AS mod, pg_typeof(-:d) AS neg,
       pg_typeof(avg(:d)) AS avg, pg_typeof(abs(:d)) AS abs,
       pg_typeof(2::smallint * :d) AS i2, pg_typeof(3::bigint - :d) AS i8r;
SELECT :d / 2 AS div, :d + :d AS dd, 64 - :d AS mi, :d + 1::smallint AS i2,
       2::smallint * :d AS i2r, 3::bigint - :d AS i8r, :d * :d AS sq, 7 / :d AS r;
SELECT 2147483647 + :d;

-- integer comparisons are still rewritten for the index; numeric ones are
-- plain filters
CREATE TABLE u (id int, h simhash64);
-- plan(query): EXPLAIN (COSTS OFF) without the "Disabled: true" lines
-- PostgreSQL 18 adds under a node that enable_* = off disables (here: the
-- sequential scans these queries must fall back to)
CREATE FUNCTION plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		IF line !~ '^\s*Disabled: true$' THEN
			RETURN NEXT line;
		END IF;
	END LOOP;
END
$$;
INSERT INTO u SELECT g, simhash_hash(g::text)::simhash64 FROM generate_series(1, 100) g;
CREATE INDEX u_h ON u USING simhash (h);
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM u WHERE h <~> '0123456789abcdef' <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM u WHERE h <~> '0123456789abcdef' < 4::bigint;
EXPLAIN (COSTS OFF) SELECT id FROM u WHERE h <~> '0123456789abcdef' <= '3';
SELECT plan('SELECT id FROM u WHERE h <~> ''0123456789abcdef'' <= 3.0');
RESET enable_seqscan;
DROP FUNCTION plan(text);
SELECT count(*) FROM u WHERE h <~> simhash_hash('7')::simhash64 <= 20.5;
SELECT count(*) FROM u WHERE h <~> simhash_hash('7')::simhash64 <= 20;

-- JSON numbers
SELECT to_json(:d) AS j, to_jsonb(:d) AS jb, json_build_object('d', :d) AS o,
       :d::json AS cj, :d::jsonb AS cjb;
SELECT row_to_json(x) AS r, (SELECT json_agg(h <~> '0000000000000000' ORDER BY id) FROM u WHERE id <= 3) AS agg
FROM (SELECT 1 AS id, :d AS distance) x;
SELECT jsonb_agg(jsonb_build_object('id', id, 'd', h <~> '0000000000000000') ORDER BY id) FROM u WHERE id <= 2;
DROP TABLE u;

-- integer -> simhash64, as through bigint (sign-extended)
SELECT 12345::simhash64 AS i4, (-1)::simhash64 AS minus_one, 12345::bigint::simhash64 AS i8;

-- weights as double precision or numeric: rounded to real, so equal to the
-- real form; integer and numeric weights resolve to them and give what the
-- real form gave in 1.0
CREATE TABLE w (t text, r real, d float8, n numeric, i int);
INSERT INTO w SELECT 'f' || g, g * 0.1, g * 0.1, g * 0.1, g FROM generate_series(1, 30) g;
SELECT simhash_agg(t, r) = simhash_agg(t, d) AS float8, simhash_agg(t, r) = simhash_agg(t, n) AS num,
       simhash_agg(t, i::real) = simhash_agg(t, i) AS int, simhash_agg(t, 0.3::real) = simhash_agg(t, 0.3) AS lit,
       simhash_agg(t, ln(i)) AS ln, simhash_agg(t, ln(i)::real) AS ln_real FROM w;
SELECT simhash_agg(t, CASE WHEN i = 3 THEN NULL ELSE d END) = simhash_agg(t, CASE WHEN i = 3 THEN NULL ELSE r END) AS nulls FROM w;
SELECT simhash_agg(t, -1::float8) FROM w;
SELECT simhash_agg(t, 'NaN'::numeric) FROM w;
SELECT simhash_agg(t, 'Infinity'::float8) FROM w;
EXPLAIN (VERBOSE, COSTS OFF) SELECT simhash_agg(t, r), simhash_agg(t, d), simhash_agg(t, n), simhash_agg(t, i), simhash_agg(t, 0.5) FROM w;
DROP TABLE w;
-- simhash_compute keeps one weighted form (real[]): numeric[] and '{...}'
-- weights still resolve; double precision arrays need ::real[]
SELECT simhash_compute(ARRAY['cat', 'dog'], ARRAY[2.5, 1]) AS num,
       simhash_compute(ARRAY['cat', 'dog'], '{2.5,1}') AS unk,
       simhash_compute(ARRAY['cat', 'dog'], ARRAY[2, 1]) AS int,
       simhash_compute(ARRAY['cat', 'dog'], ARRAY[ln(2), 1]::real[]) AS f8;

-- simhash_find_all: defaults (blocks 5, max_distance 3), named arguments,
-- 1.0's positional order
SELECT * FROM simhash_find_all(ARRAY['0000000000000000', '0000000000000007', 'ffffffffffffffff']::simhash64[]);
SELECT * FROM simhash_find_all(ARRAY['0000000000000000', '0000000000000007', '000000000000000f']::simhash64[], max_distance => 2) ORDER BY a, b;
SELECT * FROM simhash_find_all(ARRAY['0000000000000000', '0000000000000007']::simhash64[], 4, 3);
SELECT * FROM simhash_find_all(ARRAY['0000000000000000', '0000000000000007']::simhash64[], blocks => 6, max_distance => 5);

-- simhash_pairs without blocks: the message names max_distance
CREATE TABLE p (id int, h simhash64);
INSERT INTO p VALUES (1, '0000000000000000'), (2, '0000000000000001');
SELECT * FROM simhash_pairs('p', 'id', 'h', 64);
SELECT * FROM simhash_groups('p', 'id', 'h', 100);
SELECT * FROM simhash_pairs('p', 'id', 'h', 63);
SELECT * FROM simhash_pairs('p', 'id', 'h', 64, 64);
DROP TABLE p;

-- settings: unknown in a fresh session until the library is loaded (as for
-- every extension's settings); LOAD makes them visible, SET works before
\c
SHOW simhash.progress_interval;
LOAD 'simhash';
SHOW simhash.progress_interval;
\c
SET simhash.progress_interval = 5;
SHOW simhash.progress_interval;
SELECT count(*) FROM simhash_find_all(ARRAY['0000000000000000']::simhash64[]);
SHOW simhash.progress_interval;
RESET simhash.progress_interval;
-- issue #12: once the library is loaded, the simhash prefix is reserved: a
-- placeholder set before the load is removed with a warning, and an unknown
-- simhash.* setting is refused
\c
SET simhash.foo = 1;
LOAD 'simhash';
SHOW simhash.foo;
SET simhash.foo = 1;
SET simhash.enable_join = off;
RESET simhash.enable_join;
