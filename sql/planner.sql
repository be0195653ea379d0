-- planner support: the simhash_ball type, <@ and @>, simhash_within(), and
-- the rewrite of `h <~> q <= k` (and its other spellings) into
-- simhash_within(h, q, k), which an index can answer as h <@ simhash_ball(q, k)

--------------------------------------------------------------------------
-- simhash_ball: text I/O (strict), constructor (clamping), binary I/O
--------------------------------------------------------------------------
SELECT '(0123456789abcdef,3)'::simhash_ball,
       E' ( 0123456789ABCDEF ,\t-1 ) '::simhash_ball,
       '(ffffffffffffffff,+64)'::simhash_ball,
       '(0000000000000000,-0)'::simhash_ball;
\set VERBOSITY sqlstate
SELECT ''::simhash_ball;
SELECT '()'::simhash_ball;
SELECT '(0123456789abcdef)'::simhash_ball;
SELECT '(0123456789abcdef,)'::simhash_ball;
SELECT '(0123456789abcde,3)'::simhash_ball;
SELECT '(0123456789abcdef0,3)'::simhash_ball;
SELECT '(0x0123456789abcdef,3)'::simhash_ball;
SELECT '(0123456789abcdeg,3)'::simhash_ball;
SELECT '(0123456789abcdef,3'::simhash_ball;
SELECT '(0123456789abcdef,3))'::simhash_ball;
SELECT '(0123456789abcdef,3)x'::simhash_ball;
SELECT '(0123456789abcdef,3.0)'::simhash_ball;
SELECT '(0123456789abcdef,--3)'::simhash_ball;
SELECT '(0123456789abcdef;3)'::simhash_ball;
SELECT '0123456789abcdef,3'::simhash_ball;
-- the radius is -1..64 (22003 otherwise); the constructor clamps instead
SELECT '(0123456789abcdef,65)'::simhash_ball;
SELECT '(0123456789abcdef,-2)'::simhash_ball;
SELECT '(0123456789abcdef,99999999999999999999999999)'::simhash_ball;
\set VERBOSITY default
SELECT '(0123456789abcdef 3)'::simhash_ball;
SELECT '(0123456789abcdef,65)'::simhash_ball;

SELECT r, simhash_ball('0123456789abcdef', r)
	FROM unnest(ARRAY[-9223372036854775808, -2, -1, 0, 3, 64, 65,
	                  9223372036854775807]::bigint[]) r;
SELECT simhash_ball(NULL, 3) IS NULL AS null_center,
       simhash_ball('0123456789abcdef', NULL) IS NULL AS null_radius;
-- output round-trips
SELECT b::text::simhash_ball::text = b::text AS round_trip
	FROM (SELECT simhash_ball(simhash_hash(g::text)::simhash64, g - 2) AS b
	      FROM generate_series(0, 67) g) s
	GROUP BY 1;

-- binary send; receive through COPY BINARY
SELECT simhash_ball_send('(0102030405060708,3)'), simhash_ball_send('(ffffffffffffffff,-1)');
CREATE TEMP TABLE ball_bin (b simhash_ball);
INSERT INTO ball_bin VALUES ('(0102030405060708,3)'), ('(ffffffffffffffff,-1)'),
	('(8000000000000000,64)'), (NULL);
DO $$
BEGIN
	EXECUTE format('COPY ball_bin TO %L (FORMAT binary)', '/tmp/simhash_regress_ball_' || pg_backend_pid());
	EXECUTE format('COPY ball_bin FROM PROGRAM %L (FORMAT binary)',
		format('cat %1$s && rm -f %1$s', '/tmp/simhash_regress_ball_' || pg_backend_pid()));
END $$;
SELECT b::text, count(*) FROM ball_bin GROUP BY 1 ORDER BY 1;
-- a hand-made binary COPY stream: radius 64 is read, 65 is rejected (22P03)
COPY ball_bin FROM PROGRAM $$printf 'PGCOPY\n\377\r\n\0\0\0\0\0\0\0\0\0\0\1\0\0\0\14\1\2\3\4\5\6\7\10\0\0\0\100\377\377'$$ (FORMAT binary);
SELECT b::text, count(*) FROM ball_bin GROUP BY 1 ORDER BY 1;
\set VERBOSITY sqlstate
COPY ball_bin FROM PROGRAM $$printf 'PGCOPY\n\377\r\n\0\0\0\0\0\0\0\0\0\0\1\0\0\0\14\1\2\3\4\5\6\7\10\0\0\0\101\377\377'$$ (FORMAT binary);
\set VERBOSITY default

--------------------------------------------------------------------------
-- <@, @> and simhash_within: exactly hamming_distance(h, c) <= r
--------------------------------------------------------------------------
CREATE TEMP TABLE pts (h simhash64);
INSERT INTO pts VALUES ('0000000000000000'), ('0000000000000001'),
	('8000000000000003'), ('00000000ffffffff'), ('7fffffffffffffff'),
	('ffffffffffffffff');
SELECT r,
       string_agg(hamming_distance(h, '0000000000000000')::text, ','
                  ORDER BY hamming_distance(h, '0000000000000000'))
           FILTER (WHERE h <@ simhash_ball('0000000000000000', r)) AS within,
       bool_and((h <@ simhash_ball('0000000000000000', r)) =
                    (hamming_distance(h, '0000000000000000') <= r)
                AND (simhash_ball('0000000000000000', r) @> h) =
                    (hamming_distance(h, '0000000000000000') <= r)
                AND simhash_within(h, '0000000000000000', r) =
                    (hamming_distance(h, '0000000000000000') <= r)
                AND simhash_within('0000000000000000', h, r) =
                    (hamming_distance(h, '0000000000000000') <= r)) AS agree
	FROM pts, unnest(ARRAY[-9223372036854775808, -2, -1, 0, 1, 2, 3, 31, 32,
	                       62, 63, 64, 65, 9223372036854775807]::bigint[]) r
	GROUP BY r ORDER BY r;
-- balls written as text behave the same (-1 is empty, 64 is everything)
-- (simhash_ball has no equality operator: group by its text)
SELECT b::text, count(*) FILTER (WHERE h <@ b) AS within, count(*) FILTER (WHERE b @> h) AS contains
	FROM pts, unnest(ARRAY['(0000000000000000,-1)', '(0000000000000000,0)',
	                       '(ffffffffffffffff,1)', '(0000000000000000,64)']::simhash_ball[]) b
	GROUP BY 1 ORDER BY 1;
-- NULLs: all strict
SELECT NULL::simhash64 <@ simhash_ball('0000000000000000', 3) AS a,
       '0000000000000000'::simhash64 <@ NULL::simhash_ball AS b,
       NULL::simhash_ball @> '0000000000000000'::simhash64 AS c,
       simhash_within(NULL, '0000000000000000', 3) AS d,
       simhash_within('0000000000000000', NULL, 3) AS e,
       simhash_within('0000000000000000', '0000000000000000', NULL) AS f;

--------------------------------------------------------------------------
-- the rewrite: a table of random fingerprints with planted near-duplicates
--------------------------------------------------------------------------
CREATE TABLE docs (id integer PRIMARY KEY, h simhash64);
INSERT INTO docs SELECT g, simhash_hash(g::text)::simhash64 FROM generate_series(1, 1000) g;
-- near-duplicates of documents 1..40: j = 1..6 adjacent bits flipped
INSERT INTO docs
	SELECT 1000 + 6 * (g - 1) + j,
	       (simhash_hash(g::text) # (((1::bigint << j) - 1) << (g % 50)))::simhash64
	FROM generate_series(1, 40) g, generate_series(1, 6) j;
-- exact duplicates of documents 1..5 (most common values), and a NULL
INSERT INTO docs SELECT 2000 + g, simhash_hash((g % 5 + 1)::text)::simhash64
	FROM generate_series(1, 20) g;
INSERT INTO docs VALUES (3000, NULL);
ANALYZE docs;
SELECT simhash_hash('1')::simhash64 AS q \gset

-- each spelling becomes simhash_within(...)
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> :'q' <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> :'q' < 4;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE 3 >= h <~> :'q';
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE 4 > h <~> :'q';
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE :'q' <~> h <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> :'q' = 0;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE 0 = h <~> :'q';
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> :'q' <= 3::smallint;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> :'q' < 4::smallint;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE 0::smallint = h <~> :'q';
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> :'q' <= 3::bigint;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE 4::bigint > h <~> :'q';
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> :'q' = 0::bigint;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> :'q' <= 3::simhash_distance;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> :'q' < 0;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> :'q' < (-9223372036854775808)::bigint;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> :'q' <= 9223372036854775807;
-- k may be any non-volatile expression: another column, another distance
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> :'q' <= id % 4;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> :'q' < id % 4;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> :'q' < id::bigint;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> :'q' < (id % 4)::smallint;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> :'q' < h <~> '0000000000000000';
-- BETWEEN: only its upper bound is rewritten
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> :'q' BETWEEN 1 AND 3;
-- in the select list too
EXPLAIN (VERBOSE, COSTS OFF) SELECT h <~> :'q' <= 3, h <~> :'q' < id::bigint FROM docs;

-- not rewritten: other comparisons, other types, volatile k
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> :'q' > 3;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> :'q' >= 3;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE 3 < h <~> :'q';
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE 3 <= h <~> :'q';
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> :'q' = 1;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> :'q' <> 0;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> :'q' = id - id;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE (h <~> :'q')::integer <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE (h <~> :'q') + 0 <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE hamming_distance(h, :'q') <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> :'q' <= (random() * 3)::integer;

-- results equal hamming_distance(h, q) <= r, for every spelling and radius
-- 0..6, constants in the query text (the constant rewrite)
CREATE FUNCTION spellings_agree(q simhash64, r integer) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	spelling text;
	expected bigint;
	n bigint;
	bad text := '';
BEGIN
	SELECT count(*) INTO expected FROM docs WHERE hamming_distance(h, q) <= r;
	FOREACH spelling IN ARRAY ARRAY[
		'h <~> %1$L <= %2$s', 'h <~> %1$L < %3$s', '%2$s >= h <~> %1$L',
		'%3$s > h <~> %1$L', '%1$L <~> h <= %2$s', '%1$L <~> h < %3$s',
		'h <~> %1$L <= %2$s::smallint', 'h <~> %1$L < %3$s::smallint',
		'h <~> %1$L <= %2$s::bigint', 'h <~> %1$L < %3$s::bigint',
		'%3$s::bigint > h <~> %1$L', 'h <~> %1$L <= %2$s::simhash_distance',
		'h <~> %1$L < %3$s::simhash_distance',
		'h <@ simhash_ball(%1$L, %2$s)', 'simhash_ball(%1$L, %2$s) @> h',
		'simhash_within(h, %1$L, %2$s)', 'simhash_within(%1$L, h, %2$s)']
	LOOP
		EXECUTE format('SELECT count(*) FROM docs WHERE ' || spelling, q, r, r + 1)
			INTO n;
		IF n <> expected THEN
			bad := bad || format(' [%s: %s]', spelling, n);
		END IF;
	END LOOP;
	IF r = 0 THEN
		FOREACH spelling IN ARRAY ARRAY['h <~> %1$L = 0', '0 = h <~> %1$L',
			'h <~> %1$L = 0::smallint', 'h <~> %1$L = 0::bigint', 'h = %1$L']
		LOOP
			EXECUTE format('SELECT count(*) FROM docs WHERE ' || spelling, q) INTO n;
			IF n <> expected THEN
				bad := bad || format(' [%s: %s]', spelling, n);
			END IF;
		END LOOP;
	END IF;
	RETURN expected || CASE WHEN bad = '' THEN ' ok' ELSE bad END;
END $$;
SELECT id, r, spellings_agree(h, r)
	FROM docs, generate_series(0, 6) r
	WHERE id IN (1, 2, 7, 40, 500)
	ORDER BY id, r;

-- the same with the radius and the probe taken from other rows (the
-- non-constant rewrite: k::bigint, k - 1, int8larger(k, 0) - 1), r = -2..6
-- (a simhash_distance is never negative: greatest(r + 1, 0))
SELECT r,
       count(*) FILTER (WHERE hamming_distance(d.h, p.h) <= r) AS expected,
       count(*) FILTER (WHERE d.h <~> p.h <= r) AS le,
       count(*) FILTER (WHERE d.h <~> p.h < r + 1) AS lt,
       count(*) FILTER (WHERE r >= p.h <~> d.h) AS ge,
       count(*) FILTER (WHERE d.h <~> p.h <= r::smallint) AS le2,
       count(*) FILTER (WHERE d.h <~> p.h < (r + 1)::smallint) AS lt2,
       count(*) FILTER (WHERE d.h <~> p.h <= r::bigint) AS le8,
       count(*) FILTER (WHERE d.h <~> p.h < (r + 1)::bigint) AS lt8,
       count(*) FILTER (WHERE (r + 1)::bigint > d.h <~> p.h) AS gt8,
       count(*) FILTER (WHERE d.h <~> p.h < greatest(r + 1, 0)::simhash_distance) AS ltd
	FROM docs p, docs d, generate_series(-2, 6) r
	WHERE p.id IN (1, 2, 7, 40, 500, 3000)
	GROUP BY r ORDER BY r;
-- a self-join of all near-duplicate pairs
SELECT count(*) AS pairs_within_3 FROM docs a JOIN docs b ON a.id < b.id AND a.h <~> b.h <= 3;
SELECT count(*) AS pairs_within_3 FROM docs a JOIN docs b ON a.id < b.id AND hamming_distance(a.h, b.h) <= 3;

-- NULL semantics are kept: a NULL radius gives NULL (not false), so NOT()
-- keeps rows out, and extreme radii neither overflow nor fail
CREATE TEMP TABLE ks (k2 smallint, k4 integer, k8 bigint, kd simhash_distance);
INSERT INTO ks VALUES (NULL, NULL, NULL, NULL), (-32768, -2147483648, -9223372036854775808, 0),
	(32767, 2147483647, 9223372036854775807, 64), (0, 0, 0, 0), (1, 1, 1, 1);
EXPLAIN (VERBOSE, COSTS OFF)
	SELECT h <~> :'q' < k2, h <~> :'q' < k4, h <~> :'q' < k8, h <~> :'q' < kd,
	       h <~> :'q' <= k8, k8 >= h <~> :'q', k8 > h <~> :'q'
	FROM docs, ks;
SELECT k8,
       count(*) FILTER (WHERE (h <~> :'q' < k2) IS NULL) AS lt2_null,
       count(*) FILTER (WHERE (h <~> :'q' < k4) IS NULL) AS lt4_null,
       count(*) FILTER (WHERE (h <~> :'q' < k8) IS NULL) AS lt8_null,
       count(*) FILTER (WHERE (h <~> :'q' < kd) IS NULL) AS ltd_null,
       count(*) FILTER (WHERE (h <~> :'q' <= k8) IS NULL) AS le8_null,
       count(*) FILTER (WHERE NOT (h <~> :'q' < k8)) AS not_lt8,
       count(*) FILTER (WHERE NOT (h <~> :'q' <= k4)) AS not_le4,
       count(*) FILTER (WHERE h <~> :'q' < k2) AS lt2,
       count(*) FILTER (WHERE h <~> :'q' < k8) AS lt8,
       count(*) FILTER (WHERE h <~> :'q' <= k8) AS le8,
       count(*) FILTER (WHERE NOT (hamming_distance(h, :'q') < k8)) AS ref_not_lt8,
       count(*) FILTER (WHERE hamming_distance(h, :'q') < k8) AS ref_lt8
	FROM docs, ks GROUP BY k8 ORDER BY k8;
SELECT count(*) FROM docs WHERE h <~> :'q' < (-9223372036854775808)::bigint;
SELECT count(*) FROM docs WHERE h <~> :'q' <= 9223372036854775807;
SELECT count(*) FROM docs WHERE h <~> :'q' <= NULL::integer;
SELECT count(*) FROM docs WHERE NOT (h <~> :'q' < NULL::bigint);

-- prepared statements: a generic plan keeps $1 and $2, a custom plan folds them
PREPARE near_le(simhash64, integer) AS SELECT count(*) FROM docs WHERE h <~> $1 <= $2;
PREPARE near_lt(simhash64, bigint) AS SELECT count(*) FROM docs WHERE h <~> $1 < $2;
PREPARE near_lt2(simhash64, smallint) AS SELECT count(*) FROM docs WHERE $2 > $1 <~> h;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE near_le(:'q', 3);
EXPLAIN (COSTS OFF) EXECUTE near_lt(:'q', 4);
EXPLAIN (COSTS OFF) EXECUTE near_lt2(:'q', 4);
EXECUTE near_le(:'q', 3);
EXECUTE near_lt(:'q', 4);
EXECUTE near_lt2(:'q', 4);
EXECUTE near_lt(:'q', -9223372036854775808);
EXECUTE near_le(:'q', NULL);
SET plan_cache_mode = force_custom_plan;
EXPLAIN (COSTS OFF) EXECUTE near_le(:'q', 3);
EXPLAIN (COSTS OFF) EXECUTE near_lt(:'q', 4);
EXPLAIN (COSTS OFF) EXECUTE near_lt2(:'q', 4);
EXECUTE near_le(:'q', 3);
EXECUTE near_lt(:'q', 4);
EXECUTE near_lt2(:'q', 4);
EXECUTE near_lt(:'q', -9223372036854775808);
EXECUTE near_le(:'q', NULL);
RESET plan_cache_mode;
SELECT count(*) FROM docs WHERE hamming_distance(h, :'q') <= 3;

-- PL/pgSQL: variables are parameters of the statement's plan
CREATE FUNCTION near_plan(q simhash64, k integer) RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
	RETURN QUERY EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> q < k;
	RETURN QUERY EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE k >= q <~> h;
END $$;
SELECT near_plan(:'q', 4);
CREATE FUNCTION near_count(q simhash64, k bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
	RETURN (SELECT count(*) FROM docs WHERE h <~> q < k);
END $$;
-- enough calls for the plan cache to switch to a generic plan, then forced
SELECT k, near_count(:'q', k) AS n,
       (SELECT count(*) FROM docs WHERE hamming_distance(h, :'q') < k) AS expected
	FROM unnest(ARRAY[1, 2, 3, 4, 5, 6, 7, 0, -9223372036854775808, NULL]::bigint[]) k;
SET plan_cache_mode = force_generic_plan;
SELECT near_count(:'q', 4), near_count(:'q', 0), near_count(:'q', NULL);
RESET plan_cache_mode;

-- estimates (rows of a sequential scan): about 1 row for a random probe,
-- the duplicates for a most common value, everything for radius 64,
-- nothing for an empty ball
CREATE FUNCTION est(query text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE 'EXPLAIN (FORMAT json) ' || query INTO plan;
	RETURN (plan->0->'Plan'->>'Plan Rows')::bigint;
END $$;
SELECT simhash_hash('500')::simhash64 AS q500 \gset
SELECT est(format('SELECT * FROM docs WHERE h <~> %L <= 3', :'q500')) AS random_probe,
       est(format('SELECT * FROM docs WHERE h <~> %L <= 3', :'q')) AS mcv_probe,
       est(format('SELECT * FROM docs WHERE h <~> %L <= 64', :'q')) AS everything,
       est(format('SELECT * FROM docs WHERE h <~> %L < 0', :'q')) AS empty_ball,
       est(format('SELECT * FROM docs WHERE h <@ simhash_ball(%L, 3)', :'q')) AS ball_mcv,
       est('SELECT * FROM docs a, docs b WHERE a.h <~> b.h <= 3') AS self_join;

--------------------------------------------------------------------------
-- index conditions: until the simhash access method exists, a stand-in
-- btree operator family with <@ shows the derived conditions (EXPLAIN only:
-- btree cannot execute <@)
--------------------------------------------------------------------------
CREATE OPERATOR FAMILY planner_test_ops USING btree;
CREATE OPERATOR CLASS planner_test_ops FOR TYPE simhash64 USING btree
	FAMILY planner_test_ops AS
	OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
	FUNCTION 1 simhash64_cmp(simhash64, simhash64);
ALTER OPERATOR FAMILY planner_test_ops USING btree ADD
	OPERATOR 1 <@ (simhash64, simhash_ball);
CREATE INDEX docs_h_test ON docs USING btree (h planner_test_ops);
CREATE TABLE probes (id integer, h simhash64, k integer);
INSERT INTO probes SELECT g, simhash_hash(g::text)::simhash64, g % 4 FROM generate_series(1, 10) g;
ANALYZE probes;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> :'q' <= 3;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE 4 > :'q' <~> h;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE simhash_within(:'q', h, 3);
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> :'q' <= NULL::integer;
EXPLAIN (COSTS OFF) EXECUTE near_le(:'q', 3);
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE near_le(:'q', 3);
EXPLAIN (COSTS OFF) EXECUTE near_lt(:'q', 4);
RESET plan_cache_mode;
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
-- parameterised nested loop: the probe and radius come from the outer side
SELECT plan('SELECT p.id, d.id FROM probes p JOIN docs d ON d.h <~> p.h <= 3');
SELECT plan('SELECT p.id, d.id FROM probes p JOIN docs d ON d.h <~> p.h < p.k');
-- not index conditions: both sides from the indexed table, volatile radius
SELECT plan('SELECT id FROM docs WHERE h <~> h <= 3');
SELECT plan(format('SELECT id FROM docs WHERE h <~> %L <= id', :'q'));
SELECT plan(format('SELECT id FROM docs WHERE simhash_within(h, %L, (random() * 3)::bigint)', :'q'));
-- the spellings of a radius condition: the index answers <~> compared with
-- an integer and simhash_within; hamming_distance() and a cast of the
-- distance to integer are plain integer comparisons (a sequential scan:
-- the README lists the indexable spellings)
SELECT plan(format('SELECT id FROM docs WHERE hamming_distance(h, %L) <= 3', :'q'));
SELECT plan(format('SELECT id FROM docs WHERE (h <~> %L)::integer <= 3', :'q'));
-- the extension's schema off the search_path: OPERATOR(ext.<~>) alone
-- leaves <= to pg_catalog's integer comparison; OPERATOR(ext.<=) or
-- ext.simhash_within keeps the index condition
SET search_path = pg_catalog;
SELECT public.plan(format('SELECT id FROM public.docs WHERE h OPERATOR(public.<~>) %L <= 3', :'q'));
SELECT public.plan(format('SELECT id FROM public.docs WHERE h OPERATOR(public.<~>) %L OPERATOR(public.<=) 3', :'q'));
SELECT public.plan(format('SELECT id FROM public.docs WHERE public.simhash_within(h, %L, 3)', :'q'));
RESET search_path;
RESET enable_seqscan;
DROP FUNCTION plan(text);
RESET enable_bitmapscan;
-- an index whose operator family lacks <@ gets no condition
DROP INDEX docs_h_test;
CREATE INDEX docs_h_btree ON docs (h);
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM docs WHERE h <~> :'q' <= 3 AND h >= :'q';
RESET enable_seqscan;

DROP TABLE docs, probes;
DROP OPERATOR FAMILY planner_test_ops USING btree;
DROP FUNCTION spellings_agree(simhash64, integer), near_plan(simhash64, integer),
	near_count(simhash64, bigint), est(text);
DEALLOCATE ALL;
