#!/usr/bin/env bash
# bench/quality.sh: owns the one-command near-duplicate quality evaluation
# (quality/corpus helper's file).  Installs missing Debian packages (the
# project's, python3-psycopg, python3-numpy and the text packages corpus.py
# reads), builds and installs the extension, starts a throwaway cluster,
# CREATE EXTENSION simhash, builds bench/data/ with corpus.py when it is
# missing or stale, then runs quality.py (arguments are passed on to it).
# Output: the tables on stdout and in bench/data/quality.txt (+ quality.json).
#   bash bench/quality.sh [--configs w1,w2,...] [--best N] [--detail NAME,...] [--threshold D]
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
$PY bench/quality.py "$@"
