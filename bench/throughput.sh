# bench/throughput.sh: sourced by bench/speed.sh, sentences.sh and
# minhash.sh, the throughput harness they share.
#   corpus_table        in the running cluster: the extension, table
#                       t (id, lang, body) from bench/data/corpus_big.csv
#                       (bench/corpus.py builds it), and best_ms(query):
#                       the best of 3 timed runs after a warm-up
#   throughput EXPR...  count(EXPR) over t for each expression, per language
#                       and overall: ms, MB/s and the ratio to md5(body)
#                       measured in the same run, one core
# The callers start the cluster with max_parallel_workers_per_gather = 0.

corpus_table() {
	psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE EXTENSION IF NOT EXISTS simhash;
CREATE TABLE t (id int, lang text, body text);
\copy t FROM '$SIMHASH_ROOT/bench/data/corpus_big.csv' WITH (FORMAT csv, HEADER)
VACUUM ANALYZE t;
CREATE FUNCTION best_ms(q text, reps int DEFAULT 3) RETURNS float8 LANGUAGE plpgsql AS \$\$
DECLARE t0 timestamptz; best float8 := 1e30;
BEGIN
	EXECUTE q;	-- warm-up
	FOR i IN 1..reps LOOP
		t0 := clock_timestamp();
		EXECUTE q;
		best := least(best, extract(epoch FROM clock_timestamp() - t0) * 1000);
	END LOOP;
	RETURN best;
END \$\$;
SQL
	psql -X -v ON_ERROR_STOP=1 -c "SELECT count(*) AS documents, round(sum(octet_length(body)) / 1e6, 1) AS mb,
		round(avg(octet_length(body))) AS avg_bytes FROM t"
}

throughput() {
	local values="" e
	for e in "$@"; do
		values="$values${values:+, }('${e//\'/\'\'}')"
	done
	psql -X -v ON_ERROR_STOP=1 <<SQL
CREATE TEMP TABLE r AS
SELECT f, lang, mb, ms, ms / md5_ms AS ratio FROM
	(SELECT lang, sum(octet_length(body)) / 1e6 AS mb FROM t GROUP BY ROLLUP (lang)) l,
	LATERAL (SELECT best_ms(format('SELECT count(md5(body)) FROM t WHERE %s', CASE WHEN lang IS NULL THEN 'true' ELSE format('lang = %L', lang) END)) AS md5_ms) m,
	LATERAL (VALUES $values) v(f),
	LATERAL (SELECT best_ms(format('SELECT count(%s) FROM t WHERE %s', f, CASE WHEN lang IS NULL THEN 'true' ELSE format('lang = %L', lang) END)) AS ms) s;
SELECT f AS function, coalesce(lang, 'all') AS lang, round(ms) AS ms,
       round(mb / (ms / 1000)) AS mb_per_s, round(ratio::numeric, 2) AS ratio_to_md5
FROM r ORDER BY lang NULLS FIRST, ratio;
SQL
}
