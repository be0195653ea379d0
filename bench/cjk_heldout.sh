#!/usr/bin/env bash
# bench/cjk_heldout.sh: owns the one-command held-out evaluation of Chinese
# near-duplicate detection: installs the Debian packages the corpus and the
# candidates need, builds and installs the extension, starts a throwaway
# cluster, builds bench/cjk_heldout_corpus.py's corpus when missing or stale
# (fixed seed) and runs bench/cjk_heldout.py: parameters chosen on the
# development half, test-half tables (recall by edit rate, by length, per
# variant kind and source, with Wilson 95 % intervals; false matches per
# million unrelated pairs) for every candidate.  About 15 minutes on 2 cores.
# Output on stdout and in bench/data/cjk_heldout.txt.
#   bash bench/cjk_heldout.sh
set -euo pipefail
source "$(dirname "$0")/../test/lib.sh"
cd "$SIMHASH_ROOT"
PY=/usr/bin/python3	# Debian's Python: python3-psycopg, python3-numpy and python3-jieba are its packages

ensure_packages python3 python3-psycopg python3-numpy python3-jieba $($PY bench/cjk_heldout_corpus.py --print-packages)
build_install
$PY bench/cjk_heldout_corpus.py --if-needed
start_cluster "jit = off" "max_parallel_workers_per_gather = 0"
psql -X -q -v ON_ERROR_STOP=1 -c 'CREATE EXTENSION simhash'
$PY bench/cjk_heldout.py "$@"
