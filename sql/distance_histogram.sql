-- simhash_distance_histogram: pairs of rows by distance, checked
-- against a brute-force self-join
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS simhash;
RESET client_min_messages;
CREATE TABLE hist_docs (h simhash64);
-- 300 unrelated fingerprints, then copies of the first 40 with 0..5 low bits
-- flipped (the copies are j bits from their original and |i-j| from each other)
INSERT INTO hist_docs
SELECT ('x' || md5(i::text))::bit(64)::bigint::simhash64 FROM generate_series(1, 300) i;
INSERT INTO hist_docs
SELECT (('x' || md5(i::text))::bit(64)::bigint # ((1::bigint << j) - 1))::simhash64
FROM generate_series(1, 40) i, generate_series(0, 5) j;
INSERT INTO hist_docs VALUES (NULL);

SELECT * FROM simhash_distance_histogram('hist_docs', 'h');
SELECT * FROM simhash_distance_histogram('hist_docs', 'h', 3, 10);

-- the same counts as a brute-force self-join, at every max_distance
WITH brute AS (
	SELECT hamming_distance(a.h, b.h) AS distance, count(*) AS pairs
	FROM hist_docs a JOIN hist_docs b ON a.ctid < b.ctid
	WHERE hamming_distance(a.h, b.h) <= 20
	GROUP BY 1)
SELECT k, count(*) AS mismatches
FROM generate_series(0, 20) k
CROSS JOIN LATERAL (
	(SELECT distance, pairs FROM simhash_distance_histogram('hist_docs', 'h', k) WHERE pairs > 0
	 EXCEPT SELECT distance, pairs FROM brute WHERE distance <= k)
	UNION ALL
	(SELECT distance, pairs FROM brute WHERE distance <= k
	 EXCEPT SELECT distance, pairs FROM simhash_distance_histogram('hist_docs', 'h', k))) diff
GROUP BY k ORDER BY k;
SELECT count(*) AS rows, sum(pairs) AS pairs, max(cumulative) AS cumulative
FROM simhash_distance_histogram('hist_docs', 'h', 20);

-- empty table, NULL arguments, bad arguments
CREATE TEMP TABLE hist_empty (h simhash64);
SELECT * FROM simhash_distance_histogram('hist_empty', 'h', 2);
SELECT count(*) FROM simhash_distance_histogram('hist_docs', 'h', NULL);
\set VERBOSITY terse
SELECT * FROM simhash_distance_histogram('hist_docs', 'h', 65);
SELECT * FROM simhash_distance_histogram('hist_docs', 'h', -1);
SELECT * FROM simhash_distance_histogram('hist_docs', 'h', 3, 0);
SELECT * FROM simhash_distance_histogram('hist_docs', 'nope');
\set VERBOSITY default

-- the extension moved to a schema that is not on the search_path
CREATE SCHEMA hist_ext;
ALTER EXTENSION simhash SET SCHEMA hist_ext;
SELECT * FROM hist_ext.simhash_distance_histogram('hist_docs', 'h', 2);
ALTER EXTENSION simhash SET SCHEMA public;
DROP SCHEMA hist_ext;
DROP TABLE hist_docs;
