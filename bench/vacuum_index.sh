#!/usr/bin/env bash
# bench/vacuum_index.sh [rows]: the CPU of the simhash index's VACUUM pass,
# A/B in one cluster: tables a (with a simhash index) and b (without) hold
# the same rows (h = simhash_hash(g::text), g = 1 .. rows, default 2000000),
# 10% of each is deleted (g % 10 = 0), then VACUUM (PARALLEL 0) b and a, each
# in its own connection; the backend's CPU comes from /proc/PID/stat.  Then
# another 10% (g % 10 = 1) and VACUUM again: a fifth of the run's entries are
# now dead, so this VACUUM also rewrites the run (and compacts the file);
# its index pass is reported against the CREATE INDEX of the same run.  With
# SIMHASH_PERF=1 (and perf on PATH) the first VACUUM of a is recorded with
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
# the backend's CPU in ms of one statement, in its own connection (perf: record it)
cpu_of() {
	local out t0 t1
	out=$(psql -qAtX -v ON_ERROR_STOP=1 <<SQL
SET maintenance_work_mem = '1GB';
SELECT pg_backend_pid() AS pid \gset
\setenv P :pid
\! awk '{print \$14 + \$15}' /proc/\$P/stat
\! if [ "${2:-}" = perf ] && [ "\${SIMHASH_PERF:-0}" = 1 ]; then (perf record -q -g -o "$PERF_OUT" -p \$P >/dev/null 2>&1 &); sleep 1; fi
$1;
\! awk '{print \$14 + \$15}' /proc/\$P/stat
SQL
)
	read -r t0 t1 <<<"$(echo "$out" | tr '\n' ' ')"
	echo $(( (t1 - t0) * 1000 / $(getconf CLK_TCK) ))
}
psql -qX -v ON_ERROR_STOP=1 -c "CREATE EXTENSION simhash" \
	-c "CREATE TABLE a AS SELECT g AS id, simhash_hash(g::text)::simhash64 AS h FROM generate_series(1, $N) g" \
	-c "CREATE TABLE b AS SELECT * FROM a"
build=$(cpu_of "CREATE INDEX ON a USING simhash (h)")
psql -qX -v ON_ERROR_STOP=1 -c "DELETE FROM a WHERE id % 10 = 0" -c "DELETE FROM b WHERE id % 10 = 0" -c "CHECKPOINT"
b1=$(cpu_of "VACUUM (PARALLEL 0) b")
a1=$(cpu_of "VACUUM (PARALLEL 0) a" perf)
psql -qX -v ON_ERROR_STOP=1 -c "DELETE FROM a WHERE id % 10 = 1" -c "DELETE FROM b WHERE id % 10 = 1" -c "CHECKPOINT"
b2=$(cpu_of "VACUUM (PARALLEL 0) b")
a2=$(cpu_of "VACUUM (PARALLEL 0) a")
stop_cluster
trap - EXIT
awk -v n="$N" -v a="$a1" -v b="$b1" -v a2="$a2" -v b2="$b2" -v c="$build" 'BEGIN {
	printf "rows %d, 10%% deleted: VACUUM CPU without index %d ms, with the simhash index %d ms\n", n, b, a;
	printf "the index pass: %d ms, %.1f ns per row\n", a - b, (a - b) * 1e6 / n;
	printf "another 10%% deleted: VACUUM CPU without index %d ms, with the index %d ms (the run rewritten)\n", b2, a2;
	printf "that index pass: %d ms, %.2f times the CREATE INDEX of the run (%d ms)\n", a2 - b2, (a2 - b2) / (c > 0 ? c : 1), c }'
