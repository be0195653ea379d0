#!/usr/bin/env bash
# bench/sentences.sh: owns the throughput benchmark of sentence_hashes(body)
# (sentence fingerprints' file): the >= 100 MB table of real documents
# (1-10 KB each, built by bench/corpus.py from Debian packages), as MB/s and
# as a ratio to md5(body) measured in the same run, one core, best of 3;
# simhash(body) and length(body) for comparison.
#   bash bench/sentences.sh
set -euo pipefail
source "$(dirname "$0")/../test/lib.sh"
cd "$SIMHASH_ROOT"
ensure_packages python3 $(/usr/bin/python3 bench/corpus.py --print-packages)
/usr/bin/python3 bench/corpus.py --if-needed
build_install
start_cluster "shared_buffers = '2GB'" "max_parallel_workers_per_gather = 0" "jit = off"

psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE EXTENSION simhash;
CREATE TABLE t (id int, lang text, body text);
\copy t FROM '$SIMHASH_ROOT/bench/data/corpus_big.csv' WITH (FORMAT csv, HEADER)
VACUUM ANALYZE t;
SQL

psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
CREATE FUNCTION best_ms(q text, reps int DEFAULT 3) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; best float8 := 1e30;
BEGIN
	EXECUTE q;	-- warm-up
	FOR i IN 1..reps LOOP
		t0 := clock_timestamp();
		EXECUTE q;
		best := least(best, extract(epoch FROM clock_timestamp() - t0) * 1000);
	END LOOP;
	RETURN best;
END $$;
SELECT count(*) AS documents, round(sum(octet_length(body)) / 1e6, 1) AS mb,
       round(avg(octet_length(body))) AS avg_bytes FROM t;
SELECT lang, count(*) AS documents, round(avg(cardinality(sentence_hashes(body))), 2) AS avg_hashes,
       count(*) FILTER (WHERE cardinality(sentence_hashes(body)) = 0) AS without_fingerprint
FROM t GROUP BY ROLLUP (lang) ORDER BY lang NULLS FIRST;
CREATE TEMP TABLE r AS
SELECT f, lang, mb, ms, ms / md5_ms AS ratio FROM
	(SELECT lang, sum(octet_length(body)) / 1e6 AS mb FROM t GROUP BY ROLLUP (lang)) l,
	LATERAL (SELECT best_ms(format('SELECT count(md5(body)) FROM t WHERE %s', CASE WHEN lang IS NULL THEN 'true' ELSE format('lang = %L', lang) END)) AS md5_ms) m,
	LATERAL (VALUES ('md5(body)', 'md5(body)'),
	                ('length(body)', 'length(body)'),
	                ('sentence_hashes(body)', 'sentence_hashes(body)'),
	                ('sentence_hashes(body, 1000000, 1)', 'sentence_hashes(body, 1000000, 1)'),
	                ('simhash(body)', 'simhash(body)')) v(f, e),
	LATERAL (SELECT best_ms(format('SELECT count(%s) FROM t WHERE %s', e, CASE WHEN lang IS NULL THEN 'true' ELSE format('lang = %L', lang) END)) AS ms) s;
SELECT f AS function, coalesce(lang, 'all') AS lang, round(ms) AS ms,
       round(mb / (ms / 1000)) AS mb_per_s, round(ratio::numeric, 2) AS ratio_to_md5
FROM r ORDER BY lang NULLS FIRST, f;
SQL
