#!/usr/bin/env bash
# bench/minhash.sh: MinHash/LSH in one run, fixed seeds:
#   bench/minhash.sh           speed, then the GIN band index at 1,000,000 rows
#   bench/minhash.sh 200000    ... at another number of rows (>= 10000)
#   bench/minhash.sh quality   only the shingling sweep on the labelled corpus
#                              (bench/minhash_quality.py, about 2 minutes)
# 0. The algorithm choice in pure C (bench/minhash_bench.c): one hash per
#    shingle with one-permutation hashing, against 128 multiply-add hash
#    functions per shingle, on the same corpus.
# 1. Throughput of minhash(body) (128 permutations) over the >= 100 MB table
#    of real documents that bench/speed.sh uses (bench/corpus.py), as MB/s
#    and as a ratio to md5(body) measured in the same run, one core, best of 3.
# 2. A GIN index on minhash_bands(sig, 32) over N synthetic texts
#    (bench/minhash_texts.py: words drawn with the corpus' frequencies,
#    20-120 words; 1,000 planted originals with 4 near-duplicates each):
#    build time and size, then the latency of the candidate query
#    "minhash_bands(sig, 32) && minhash_bands($1, 32)" and of the full
#    query with "AND minhash_jaccard(sig, $1) >= 0.8", for 1,000 planted
#    originals and 200 random rows, timed in the server (PL/pgSQL loop with
#    clock_timestamp(), cached generic plan, one warm-up pass then three
#    timed passes); the first 10 of each kind are checked against a
#    sequential scan (one timed pass).
# About 4-5 minutes at 1M rows on this project's machine.
set -euo pipefail
source "$(dirname "$0")/../test/lib.sh"
cd "$SIMHASH_ROOT"
if [ "${1:-}" = quality ]; then
	ensure_packages python3 python3-psycopg python3-numpy
	ensure_packages $(/usr/bin/python3 bench/corpus.py --print-packages)
	/usr/bin/python3 bench/corpus.py --if-needed
	build_install
	start_cluster "jit = off" "max_parallel_workers_per_gather = 0"
	psql -X -q -v ON_ERROR_STOP=1 -c 'CREATE EXTENSION simhash'
	/usr/bin/python3 bench/minhash_quality.py
	exit
fi
N=${1:-1000000}
if ! [[ $N =~ ^[0-9]+$ ]] || [ "$N" -lt 10000 ]; then
	say "usage: bench/minhash.sh [rows, at least 10000; default 1000000]"
	exit 2
fi
T0=$(date +%s)
step() { say "[minhash.sh $(($(date +%s) - T0))s] $*"; }

ensure_packages python3 $(/usr/bin/python3 bench/corpus.py --print-packages)
/usr/bin/python3 bench/corpus.py --if-needed
build_install

step "0. algorithm choice (pure C, bench/minhash_bench.c)"
BIN=$(mktemp /tmp/minhash_bench.XXXXXX)
cc -O2 -Isrc/core -o "$BIN" bench/minhash_bench.c src/core/minhash.c src/core/tokenizer.c src/core/input.c -lm
"$BIN" bench/data/corpus_big.csv
rm -f "$BIN"

start_cluster "shared_buffers = '2GB'" "max_parallel_workers_per_gather = 0" "jit = off" \
	"maintenance_work_mem = '1GB'" "max_parallel_maintenance_workers = 0" \
	"autovacuum = off" "max_wal_size = '32GB'" "checkpoint_timeout = '1h'"
sql() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

step "1. throughput over bench/data/corpus_big.csv"
source bench/throughput.sh
corpus_table
throughput 'md5(body)' 'length(body)' 'minhash(body)' 'minhash(body, 5)' \
	"minhash(body, 5, 'term')" "minhash(body, 9, 'char', 256)" 'simhash(body)'
sql -c 'DROP TABLE t'

step "2. generating $N synthetic texts"
WORK=$SIMHASH_TMP/bench
mkdir -p "$WORK"
/usr/bin/python3 bench/minhash_texts.py "$N" >"$WORK/texts.csv"
step "loading and signing"
sql <<SQL
CREATE TABLE docs (id int PRIMARY KEY, kind text, body text, sig minhash_signature);
\copy docs (id, kind, body) FROM '$WORK/texts.csv' WITH (FORMAT csv, HEADER)
SQL
sql <<'SQL'
\timing on
UPDATE docs SET sig = minhash(body);
\timing off
VACUUM (FREEZE, ANALYZE) docs;
SELECT count(*) AS rows, round(sum(octet_length(body)) / 1e6, 1) AS text_mb,
       round(avg(octet_length(body))) AS avg_bytes,
       pg_size_pretty(pg_table_size('docs')) AS table_size FROM docs;
SQL
step "GIN index on minhash_bands(sig, 32)"
sql <<'SQL'
CREATE TABLE notes (k text PRIMARY KEY, v text);
CREATE FUNCTION elapsed(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
	EXECUTE q;
	RETURN extract(epoch FROM clock_timestamp() - t0);
END $$;
INSERT INTO notes SELECT 'build_s', round(elapsed('CREATE INDEX docs_bands ON docs USING gin (minhash_bands(sig, 32))')::numeric, 2);
INSERT INTO notes SELECT 'index_size', pg_size_pretty(pg_relation_size('docs_bands')) || ' (' ||
	round(pg_relation_size('docs_bands')::numeric / (SELECT count(*) FROM docs), 1) || ' B/row)';
ANALYZE docs;
SELECT * FROM notes ORDER BY k;
SQL

step "query latency"
sql <<'SQL'
CREATE TABLE queries (qid int PRIMARY KEY, kind text, q minhash_signature);
INSERT INTO queries SELECT id, 'planted original', sig FROM docs WHERE kind = 'original';
INSERT INTO queries SELECT id, 'random row', sig FROM docs WHERE kind = 'random' ORDER BY md5(id::text) LIMIT 200;
CREATE TABLE lat (what text, qid int, pass int, ms float8, ids int[]);
-- one warm-up pass, then three timed passes; each statement timed alone
CREATE FUNCTION measure(what text) RETURNS void LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE x record; t0 timestamptz; t1 timestamptz; ids int[];
BEGIN
	IF what = 'seqscan' THEN
		PERFORM set_config('enable_bitmapscan', 'off', true);
		PERFORM set_config('enable_indexscan', 'off', true);
	END IF;
	FOR pass IN 0..CASE WHEN what = 'seqscan' THEN 1 ELSE 3 END LOOP
		FOR x IN SELECT qid, q FROM queries
		         WHERE what <> 'seqscan' OR qid IN (SELECT qid FROM (SELECT qid, row_number() OVER (PARTITION BY kind ORDER BY qid) AS n FROM queries) s WHERE n <= 10)
		         ORDER BY qid LOOP
			IF what = 'candidates' THEN
				t0 := clock_timestamp();
				SELECT array_agg(id ORDER BY id) INTO ids FROM docs
				WHERE minhash_bands(sig, 32) && minhash_bands(x.q, 32);
				t1 := clock_timestamp();
			ELSIF what = 'index' THEN
				t0 := clock_timestamp();
				SELECT array_agg(id ORDER BY id) INTO ids FROM docs
				WHERE minhash_bands(sig, 32) && minhash_bands(x.q, 32) AND minhash_jaccard(sig, x.q) >= 0.8;
				t1 := clock_timestamp();
			ELSE
				t0 := clock_timestamp();
				SELECT array_agg(id ORDER BY id) INTO ids FROM docs WHERE minhash_jaccard(sig, x.q) >= 0.8;
				t1 := clock_timestamp();
			END IF;
			IF pass > 0 THEN
				INSERT INTO lat VALUES (what, x.qid, pass, extract(epoch FROM t1 - t0) * 1000, ids);
			END IF;
		END LOOP;
	END LOOP;
END $$;
SELECT measure('candidates');
SELECT measure('index');
SELECT measure('seqscan');
-- the plan the loop runs
PREPARE p(minhash_signature) AS SELECT id FROM docs WHERE minhash_bands(sig, 32) && minhash_bands($1, 32) AND minhash_jaccard(sig, $1) >= 0.8;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE p(minhash('some text'));
RESET plan_cache_mode;
\echo 'latency per query, ms (best of 3 passes per query, then over queries)'
SELECT l.what, q.kind, count(DISTINCT l.qid) AS queries,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY l.ms)::numeric, 3) AS median_ms,
       round(percentile_cont(0.99) WITHIN GROUP (ORDER BY l.ms)::numeric, 3) AS p99_ms,
       round(avg(cardinality(coalesce(l.ids, '{}')))::numeric, 2) AS avg_rows
FROM (SELECT what, qid, min(ms) AS ms, min(ids) AS ids FROM lat GROUP BY what, qid) l JOIN queries q USING (qid)
GROUP BY l.what, q.kind ORDER BY q.kind, l.what;
\echo 'index answers compared with the sequential scan (same queries)'
SELECT count(*) AS compared, count(*) FILTER (WHERE i.ids IS DISTINCT FROM s.ids) AS mismatches,
       sum(cardinality(coalesce(s.ids, '{}'))) AS rows_found
FROM (SELECT DISTINCT ON (qid) qid, ids FROM lat WHERE what = 'seqscan') s
JOIN (SELECT DISTINCT ON (qid) qid, ids FROM lat WHERE what = 'index') i USING (qid);
SQL
step "done"
