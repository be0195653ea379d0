#!/usr/bin/env bash
# bench/speed.sh: throughput of simhash(body) over a >= 100 MB table of real
# documents (1-10 KB each, built by bench/corpus.py from Debian packages),
# as MB/s and as a ratio to md5(body) measured in the same run, one core.
set -euo pipefail
source "$(dirname "$0")/../test/lib.sh"
cd "$SIMHASH_ROOT"
ensure_packages python3 $(/usr/bin/python3 bench/corpus.py --print-packages)
/usr/bin/python3 bench/corpus.py --if-needed
build_install
start_cluster "shared_buffers = '2GB'" "max_parallel_workers_per_gather = 0" "jit = off"

source bench/throughput.sh
corpus_table
throughput 'md5(body)' 'simhash(body)' 'simhash(body, 3)' \
	'simhash_compute(simhash_tokens(body))' 'length(body)'
