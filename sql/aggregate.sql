-- simhash_agg(text) and simhash_agg(text, real), serial and parallel
CREATE TEMP TABLE feats (doc int, feature text, weight real);
INSERT INTO feats
	SELECT d, md5(d::text || ':' || k::text), (k % 7) / 2.0
	FROM generate_series(1, 20) d, generate_series(1, 50 * d) k;
INSERT INTO feats VALUES (1, NULL, 1), (2, 'x', NULL);

SELECT count(*) AS agree FROM (
	SELECT doc, simhash_agg(feature) AS a,
	       simhash_compute(array_agg(feature)) AS c FROM feats GROUP BY doc) s WHERE a = c;
SELECT count(*) AS agree FROM (
	SELECT doc, simhash_agg(feature, weight) AS a,
	       simhash_compute(array_agg(feature), array_agg(weight)) AS c FROM feats GROUP BY doc) s WHERE a = c;
SELECT doc, simhash_agg(feature), simhash_agg(feature, weight) FROM feats WHERE doc <= 3 GROUP BY doc ORDER BY doc;

-- no rows, or only NULLs: NULL (as for sum)
SELECT simhash_agg(feature) FROM feats WHERE false;
SELECT simhash_agg(NULL::text), simhash_agg('a', NULL);
\set VERBOSITY sqlstate
SELECT simhash_agg('a', -1);
\set VERBOSITY default
SELECT simhash_agg('a', 'NaN');

-- parallel: partial aggregates combine to the same bits
CREATE TABLE pfeats AS SELECT g % 3 AS doc, md5(g::text) AS feature, ((g % 5) / 3.0)::real AS weight
	FROM generate_series(1, 200000) g;
ANALYZE pfeats;
CREATE TEMP TABLE serial AS
	SELECT doc, simhash_agg(feature) AS a, simhash_agg(feature, weight) AS w FROM pfeats GROUP BY doc;
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT doc, simhash_agg(feature), simhash_agg(feature, weight) FROM pfeats GROUP BY doc;
SELECT count(*) AS agree FROM serial s JOIN (
	SELECT doc, simhash_agg(feature) AS a, simhash_agg(feature, weight) AS w FROM pfeats GROUP BY doc) p
	USING (doc) WHERE s.a = p.a AND s.w = p.w;
SELECT simhash_agg(feature) = (SELECT simhash_compute(array_agg(feature)) FROM pfeats) FROM pfeats;
RESET parallel_setup_cost; RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size; RESET max_parallel_workers_per_gather;
DROP TABLE pfeats;
