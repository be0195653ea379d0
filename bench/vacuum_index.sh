#!/usr/bin/env bash
# bench/vacuum_index.sh [rows]: the CPU of the simhash index's VACUUM pass,
# A/B in one cluster: tables a (with a simhash index) and b (without) hold
# the same rows (h = simhash_hash(g::text), g = 1 .. rows, default 2000000),
# 10% of each is deleted (g % 10 = 0), then VACUUM (PARALLEL 0) b and a, each
# in its own connection; the backend's CPU comes from /proc/PID/stat.  With
# SIMHASH_PERF=1 (and perf on PATH) the VACUUM of a is recorded with
# perf record -g into bench/data/vacuum_index.perf.
# Uses the PostgreSQL first on PATH (PGBIN: its bin directory).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-2000000}
case $N in '' | *[!0-9]*) echo "rows must be a number" >&2; exit 2 ;; esac
PGBIN=${PGBIN:-$(dirname "$(command -v pg_ctl)")}
export PGBIN
mkdir -p bench/data
PERF_OUT=$PWD/bench/data/vacuum_index.perf
# shellcheck source=../test/lib.sh
source test/lib.sh
start_cluster "shared_buffers = '1GB'" "autovacuum = off" "max_wal_size = '4GB'"
psql -qX -v ON_ERROR_STOP=1 -c "CREATE EXTENSION simhash" -c "SET maintenance_work_mem = '1GB'" \
	-c "CREATE TABLE a AS SELECT g AS id, simhash_hash(g::text)::simhash64 AS h FROM generate_series(1, $N) g" \
	-c "CREATE TABLE b AS SELECT * FROM a" -c "CREATE INDEX ON a USING simhash (h)" \
	-c "DELETE FROM a WHERE id % 10 = 0" -c "DELETE FROM b WHERE id % 10 = 0" -c "CHECKPOINT"
declare -A cpu
for t in b a; do
	# the backend's utime + stime in clock ticks, before and after
	out=$(psql -qAtX -v ON_ERROR_STOP=1 <<SQL
SET maintenance_work_mem = '1GB';
SELECT pg_backend_pid() AS pid \gset
\setenv P :pid
\! awk '{print \$14 + \$15}' /proc/\$P/stat
\! if [ "$t" = a ] && [ "\${SIMHASH_PERF:-0}" = 1 ]; then (perf record -q -g -o "$PERF_OUT" -p \$P >/dev/null 2>&1 &); sleep 1; fi
VACUUM (PARALLEL 0) $t;
\! awk '{print \$14 + \$15}' /proc/\$P/stat
SQL
)
	read -r t0 t1 <<<"$(echo "$out" | tr '\n' ' ')"
	cpu[$t]=$(( (t1 - t0) * 1000 / $(getconf CLK_TCK) ))
done
stop_cluster
trap - EXIT
awk -v n="$N" -v a="${cpu[a]}" -v b="${cpu[b]}" 'BEGIN {
	printf "rows %d, 10%% deleted: VACUUM CPU without index %d ms, with the simhash index %d ms\n", n, b, a;
	printf "the index pass: %d ms, %.1f ns per row\n", a - b, (a - b) * 1e6 / n }'
