-- <~> (Hamming distance, type simhash_distance) and hamming_distance()
CREATE TEMP TABLE p (a simhash64, b simhash64);
INSERT INTO p VALUES
	('0000000000000000', '0000000000000000'),
	('0000000000000000', 'ffffffffffffffff'),
	('0123456789abcdef', '0123456789abcdee'),
	('0123456789abcdef', '8123456789abcdef'),
	('f0f0f0f0f0f0f0f0', '0f0f0f0f0f0f0f0f'),
	('0000000000000007', '0000000000000000');

SELECT a, b, a <~> b AS d, b <~> a AS r, hamming_distance(a, b) FROM p ORDER BY a <~> b, a, b;
SELECT pg_typeof(a <~> b), pg_typeof(hamming_distance(a, b)) FROM p LIMIT 1;

-- behaves as an integer
SELECT 64 - (a <~> b) AS similarity, (a <~> b) + 1, (a <~> b) * 2,
       (a <~> b)::integer, (a <~> b)::bigint, (a <~> b)::smallint,
       round((a <~> b)::numeric / 64, 3), (a <~> b)::float8 / 64, (a <~> b)::text
	FROM p ORDER BY 1;
-- assignment to integer-typed columns
CREATE TEMP TABLE ints (i2 smallint, i4 integer, i8 bigint, n numeric, f float8);
INSERT INTO ints SELECT a <~> b, a <~> b, a <~> b, a <~> b, a <~> b FROM p;
SELECT sum(i2), sum(i4), sum(i8), sum(n), sum(f) FROM ints;
SELECT sum(a <~> b), avg(a <~> b), max(a <~> b), min(a <~> b) FROM p;
SELECT a <~> b AS d, count(*) FROM p GROUP BY 1 ORDER BY 1;
SELECT DISTINCT a <~> b FROM p ORDER BY 1;
SELECT abs(a <~> b), greatest(a <~> b, 2) FROM p ORDER BY 1, 2;
SELECT a <~> b FROM p UNION SELECT 100 ORDER BY 1;
SELECT a <~> b FROM p WHERE a <~> b IN (1, 3) ORDER BY 1;
SELECT a <~> b FROM p WHERE a <~> b BETWEEN 1 AND 3 ORDER BY 1;

-- comparisons against int2, int4, int8 and simhash_distance, both orders
SELECT count(*) FILTER (WHERE a <~> b <= 3) AS le3,
       count(*) FILTER (WHERE a <~> b < 4) AS lt4,
       count(*) FILTER (WHERE 3 >= a <~> b) AS ge3,
       count(*) FILTER (WHERE a <~> b <= 3::smallint) AS le3_int2,
       count(*) FILTER (WHERE a <~> b <= 3::bigint) AS le3_int8,
       count(*) FILTER (WHERE 3::smallint >= a <~> b) AS int2ge,
       count(*) FILTER (WHERE 3::bigint > a <~> b) AS int8gt,
       count(*) FILTER (WHERE a <~> b = 0) AS eq0,
       count(*) FILTER (WHERE a <~> b <> 0) AS ne0,
       count(*) FILTER (WHERE a <~> b > 3) AS gt3,
       count(*) FILTER (WHERE a <~> b >= 64) AS ge64,
       count(*) FILTER (WHERE a <~> b <= '3') AS le_unknown,
       count(*) FILTER (WHERE a <~> b = b <~> a) AS sym
	FROM p;

-- prepared statements: untyped, int2, int8 parameters
PREPARE q1(simhash64, int) AS SELECT count(*) FROM p WHERE a <~> $1 <= $2;
EXECUTE q1('0123456789abcdef', 1);
PREPARE q2 AS SELECT count(*) FROM p WHERE a <~> b <= $1;
EXECUTE q2(3);
PREPARE q3(smallint) AS SELECT count(*) FROM p WHERE a <~> b <= $1;
EXECUTE q3(3);
PREPARE q4(bigint) AS SELECT count(*) FROM p WHERE $1 >= a <~> b;
EXECUTE q4(3);

-- the distance type: input, assignment cast from integer, btree/hash opclasses
SELECT '5'::simhash_distance, 5::simhash_distance;
CREATE TEMP TABLE dists (d simhash_distance);
INSERT INTO dists VALUES (3), (1), ('2');
INSERT INTO dists SELECT a <~> b FROM p;
SELECT d FROM dists ORDER BY d DESC;
SELECT d, count(*) FROM dists GROUP BY d ORDER BY d;
CREATE INDEX ON dists (d);
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM dists WHERE d <= 3;
SELECT count(*) FROM dists WHERE d <= 3;
RESET enable_seqscan;

-- NULLs
SELECT NULL::simhash64 <~> '0000000000000000', hamming_distance(NULL, '0000000000000000');
