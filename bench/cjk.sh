#!/usr/bin/env bash
# bench/cjk.sh: owns the one-command evaluation of Chinese
# near-duplicates: recall by edit rate and by length, and false matches per
# million unrelated pairs, of simhash(body) ("before") and simhash_v2(body)
# ("after"), on two Chinese corpora and English: bench/cjk_corpus.py's short
# passages and bench/corpus.py's documents (bench/quality.sh's).  Installs the
# packages both corpora read, builds and installs the extension, starts a
# throwaway cluster, builds the corpora when missing or stale, runs
# bench/cjk.py (arguments are passed on; --candidates adds the candidate
# feature definitions that were measured to choose simhash_v2's).
# With --speed instead: throughput of simhash(body) and simhash_v2(body) over
# bench/corpus.py's 100 MB table (bench/throughput.sh), and their ratio.
# Output on stdout and in bench/data/cjk.txt.
#   bash bench/cjk.sh [--candidates] [--minhash] [--configs before,after,cap8,...]
#   bash bench/cjk.sh --speed
set -euo pipefail
source "$(dirname "$0")/../test/lib.sh"
cd "$SIMHASH_ROOT"
PY=/usr/bin/python3	# Debian's Python: python3-psycopg and python3-numpy are its packages

ensure_packages python3 python3-psycopg python3-numpy
ensure_packages $($PY bench/corpus.py --print-packages) $($PY bench/cjk_corpus.py --print-packages)
$PY bench/corpus.py --if-needed
build_install
if [ "${1:-}" = "--speed" ]; then
	start_cluster "shared_buffers = '2GB'" "max_parallel_workers_per_gather = 0" "jit = off"
	source bench/throughput.sh
	corpus_table
	throughput 'md5(body)' 'simhash(body)' 'simhash_v2(body)' 'simhash(body, 3)' 'simhash_v2(body, 3)'
	exit 0
fi
$PY bench/cjk_corpus.py --if-needed
start_cluster "jit = off"
psql -X -q -v ON_ERROR_STOP=1 -c 'CREATE EXTENSION simhash'
$PY bench/cjk.py "$@"
