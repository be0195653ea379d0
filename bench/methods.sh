#!/usr/bin/env bash
# bench/methods.sh: owns the one-command comparison of near-duplicate methods
# (sentence fingerprints' file): simhash(body) at distance <= 3,
# sentence_hashes(body) sharing >= 1 (and >= 2), and MinHash when
# minhash()/minhash_jaccard() are installed, on the labelled corpus of
# bench/corpus.py (English and Chinese; edits, reordering, boilerplate).
# Installs missing packages, builds and installs the extension, starts a
# throwaway cluster, builds bench/data/ when missing or stale, then runs
# bench/methods.py (arguments are passed on; --sweep adds the n/min_length
# sweep of sentence_hashes).  Output on stdout and in bench/data/methods.txt.
#   bash bench/methods.sh [--sweep] [--minhash-threshold 0.5]
set -euo pipefail
source "$(dirname "$0")/../test/lib.sh"
cd "$SIMHASH_ROOT"
PY=/usr/bin/python3	# Debian's Python: python3-psycopg and python3-numpy are its packages

ensure_packages python3 python3-psycopg python3-numpy
ensure_packages $($PY bench/corpus.py --print-packages)
build_install
start_cluster "jit = off"
psql -X -q -v ON_ERROR_STOP=1 -c 'CREATE EXTENSION simhash'
$PY bench/corpus.py --if-needed
$PY bench/methods.py "$@"
