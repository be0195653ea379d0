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

source bench/throughput.sh
corpus_table
psql -X -v ON_ERROR_STOP=1 <<'SQL'
SELECT lang, count(*) AS documents, round(avg(cardinality(sentence_hashes(body))), 2) AS avg_hashes,
       count(*) FILTER (WHERE cardinality(sentence_hashes(body)) = 0) AS without_fingerprint
FROM t GROUP BY ROLLUP (lang) ORDER BY lang NULLS FIRST;
SQL
throughput 'md5(body)' 'length(body)' 'sentence_hashes(body)' \
	'sentence_hashes(body, 1000000, 1)' 'simhash(body)'
