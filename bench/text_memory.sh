#!/usr/bin/env bash
# bench/text_memory.sh [MB]: peak memory of simhash(text) on a text of MB
# megabytes (default 300) with two distinct words, against a
# throwaway cluster.  Reports the backend's peak resident set (VmHWM) before
# and after, and the growth beyond the text itself (which the backend holds
# once, detoasted).  Also times a cancel: statement_timeout 1 s on a window
# of 1024 tokens.  Prints figures; asserts nothing.
set -euo pipefail
source "$(dirname "$0")/../test/lib.sh"
mb=${1:-300}
build_install
start_cluster
psql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }
psql -c "CREATE EXTENSION simhash; CREATE TABLE big AS SELECT repeat('ab cd ', $mb * 1048576 / 6) AS body;"
hwm="$SIMHASH_TMP/hwm"
touch "$hwm" && chmod 666 "$hwm"
# the program's parent ($PPID) is the backend
probe="COPY (SELECT 1) TO PROGRAM 'grep VmHWM /proc/\$PPID/status >> $hwm'"
psql <<SQL
$probe;
SELECT length(body) AS bytes FROM big;
$probe;
SELECT simhash(body, 1) = (simhash_hash('ab') & simhash_hash('cd'))::simhash64 AS right_fingerprint FROM big;
$probe;
SQL
read -r before text after < <(awk '{print $2}' "$hwm" | xargs)
echo "text: ${mb} MB; backend peak RSS: ${before} kB before, ${text} kB holding the text, ${after} kB after simhash"
echo "simhash beyond the detoasted text: $(( (after - text) / 1024 )) MB"
start=$(date +%s.%N)
psql -c "SET statement_timeout = '1s'; SELECT simhash(body, 1024) FROM big" 2>&1 | tail -1 || true
echo "cancelled after $(echo "$(date +%s.%N) - $start" | bc) s (statement_timeout 1 s)"
