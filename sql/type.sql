-- simhash64: I/O, binary I/O, casts, unsigned ordering, btree and hash support
CREATE EXTENSION simhash;

-- text input: 16 hex digits, either case, optional 0x, surrounding whitespace
SELECT '0123456789abcdef'::simhash64, '0123456789ABCDEF'::simhash64,
       '0x0123456789AbCdEf'::simhash64, E' \t0Xffffffffffffffff\n '::simhash64,
       '0000000000000000'::simhash64;

-- anything else is 22P02
\set VERBOSITY sqlstate
SELECT ''::simhash64;
SELECT '0123456789abcde'::simhash64;
SELECT '0123456789abcdef0'::simhash64;
SELECT '0x'::simhash64;
SELECT '0x 0123456789abcdef'::simhash64;
SELECT '0123456789abcdeg'::simhash64;
SELECT '0123456789 abcdef'::simhash64;
SELECT '-123456789abcdef'::simhash64;
SELECT '+0123456789abcdef'::simhash64;
\set VERBOSITY default
SELECT 'xyz'::simhash64;

-- binary send; receive through COPY BINARY
SELECT simhash64_send('0102030405060708');
CREATE TEMP TABLE bin (h simhash64);
INSERT INTO bin VALUES ('0102030405060708'), ('ffffffffffffffff'), (NULL);
DO $$
BEGIN
	EXECUTE format('COPY bin TO %L (FORMAT binary)', '/tmp/simhash_regress_' || pg_backend_pid());
	EXECUTE format('COPY bin FROM PROGRAM %L (FORMAT binary)',
		format('cat %1$s && rm -f %1$s', '/tmp/simhash_regress_' || pg_backend_pid()));
END $$;
SELECT h, count(*) FROM bin GROUP BY h ORDER BY h;

-- casts to and from bigint are bit-identical (two's complement)
SELECT (-1)::bigint::simhash64, 0::bigint::simhash64,
       '8000000000000000'::simhash64::bigint,
       '7fffffffffffffff'::simhash64::bigint,
       (-9223372036854775808)::bigint::simhash64;
-- every integer type a client sends casts explicitly: smallint and integer
-- as bigint (sign-extended), numeric as the unsigned value
SELECT 5::smallint::simhash64, (-1)::smallint::simhash64,
       18446744073709551615::numeric::simhash64,
       13835505520976881745::numeric::simhash64,
       9223372036854775808::numeric::simhash64, 0::numeric::simhash64,
       '-0'::numeric::simhash64, 12.000::numeric::simhash64;
SELECT 18446744073709551616::numeric::simhash64;
SELECT (-1)::numeric::simhash64;
SELECT 1.5::numeric::simhash64;
SELECT 'NaN'::numeric::simhash64;
-- the casts are explicit: no operator resolves through them
SELECT '0000000000000001'::simhash64 <~> 3::numeric;
-- a cast parameter is still an index condition
CREATE TABLE numeric_param (h simhash64);
CREATE INDEX ON numeric_param USING simhash (h);
SET enable_seqscan = off;
PREPARE by_numeric(numeric) AS
	SELECT h FROM numeric_param WHERE h <~> $1::simhash64 <= 3;
EXPLAIN (COSTS OFF) EXECUTE by_numeric(13835505520976881745);
RESET enable_seqscan;
DEALLOCATE by_numeric;
DROP TABLE numeric_param;
-- no implicit casts
SELECT '0000000000000001'::simhash64 + 1;
-- bit(64): most significant bit first
SELECT '8000000000000001'::simhash64::bit(64);
SELECT B'1111000000000000000000000000000000000000000000000000000000001010'::simhash64;
SELECT ('0123456789abcdef'::simhash64::bit(64))::simhash64;
\set VERBOSITY sqlstate
SELECT B'101'::simhash64;
\set VERBOSITY default
SELECT B'101'::simhash64;

-- unsigned order: 8000... sorts after 7fff...
CREATE TEMP TABLE t (h simhash64);
INSERT INTO t VALUES ('ffffffffffffffff'), ('0000000000000000'), ('8000000000000000'),
	('7fffffffffffffff'), ('0000000000000001'), (NULL), ('8000000000000000');
SELECT h FROM t ORDER BY h;
SELECT h FROM t ORDER BY h DESC NULLS LAST;
SELECT '8000000000000000'::simhash64 > '7fffffffffffffff',
       '8000000000000000'::simhash64 >= '8000000000000000',
       'ffffffffffffffff'::simhash64 < '0000000000000000',
       '0000000000000001'::simhash64 <= '0000000000000000',
       '0000000000000001'::simhash64 = '0x0000000000000001',
       '0000000000000001'::simhash64 <> '0000000000000001';
SELECT min(h), max(h), count(DISTINCT h) FROM t;
SELECT h, count(*) FROM t GROUP BY h ORDER BY h;

-- btree index, ANALYZE, merge and hash joins
CREATE TEMP TABLE big AS
	SELECT simhash_hash(g::text)::simhash64 AS h FROM generate_series(1, 2000) g;
CREATE INDEX big_h ON big (h);
ANALYZE big;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM big WHERE h = '0000000000000000';
SELECT count(*) FROM big WHERE h > '8000000000000000';
RESET enable_seqscan;
SELECT count(*) FROM big WHERE h::bigint < 0;
SET enable_hashjoin = off; SET enable_nestloop = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM big a JOIN big b USING (h);
SELECT count(*) FROM big a JOIN big b USING (h);
RESET enable_hashjoin; SET enable_mergejoin = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM big a JOIN big b USING (h);
SELECT count(*) FROM big a JOIN big b USING (h);
RESET enable_nestloop; RESET enable_mergejoin;
SET enable_sort = off;
EXPLAIN (COSTS OFF) SELECT DISTINCT h FROM t;
RESET enable_sort;
SELECT count(*) FROM (SELECT DISTINCT h FROM big) s;
-- the btree opclass orders unsigned; check against bigint order
SELECT bool_and(a.h < b.h) FROM
	(SELECT h, row_number() OVER (ORDER BY h) r FROM big) a JOIN
	(SELECT h, row_number() OVER (ORDER BY h) r FROM big) b ON b.r = a.r + 1;
SELECT (SELECT h FROM big ORDER BY h LIMIT 1) =
	(SELECT h FROM big ORDER BY h::bigint # (-9223372036854775808)::bigint LIMIT 1);
