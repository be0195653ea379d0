#!/usr/bin/env bash
# bench/parallel.sh: the dedup jobs and CREATE INDEX with 0 and 2 parallel
# workers in one run (issue #14), on the planted table of bench/dedup.sh:
#   bench/parallel.sh 10000000   the issue's size
#   bench/parallel.sh 2000000    a smaller N (at least 10,000; default
#                                1,000,000, as bench/planted.sh)
# Data (fixed seed: ids hashed, see bench/planted_docs.sql): 95% random
# fingerprints, 5% copies of earlier rows with 0..3 bits flipped.
# maintenance_work_mem = 2GB, so that the jobs search in memory (the
# parallel search splits the in-memory search; spilled parts stay serial).
# Jobs: simhash_pairs and simhash_groups (connected) at max_distance 3
# (default blocks) and 6 (8 blocks: more table groups, more search),
# CREATE INDEX ... USING simhash (default options: its heap scanned and
# its tables sorted by the workers, see src/index/build_scan.c and
# build_parallel.c), each with max_parallel_maintenance_workers 0 and 2,
# alternating, median of RUNS (3, or 1 above 2M rows); ratio = time with
# 0 / time with 2.  The jobs' table read is parallel too
# (src/dedup/read_parallel.c), so max_distance 0 (one table group: no
# parallel search) shows the read's gain alone.  Scaling model (Amdahl,
# fitted per job to its two times on this machine's cores c = 2):
# T(w) = S + P / min(w + 1, cores), with P = 2 (T(0) - T(2)) the part the
# workers share (read or heap scan, search or sorts) and S = T(0) - P the
# serial rest (the leader's replay of the read's rows, its split of the
# rows, each worker's read and sort of its own copy, the replay of the
# workers' pairs, the output; for CREATE INDEX the page writing and its
# WAL).  Per-phase CPU: SET client_min_messages = debug1 (dedup_phase()).
# The load average is printed beside the ratios: on a shared machine the
# ratio is depressed.  Report: stdout and bench/data/parallel_report_N.txt.
set -euo pipefail
source "$(dirname "$0")/../test/lib.sh"
cd "$SIMHASH_ROOT"

source bench/planted.sh
planted_setup parallel "$@"
mkdir -p bench/data

# one timed statement in a fresh connection: prints its milliseconds
timed() {
	local workers=$1 query=$2
	sql -At <<EOF | grep -oE 'Time: [0-9.]+' | awk '{print $2}' | tail -1
SET maintenance_work_mem = '2GB';
SET max_parallel_maintenance_workers = $workers;
SET simhash.parallel_min_rows = 10000;	-- workers are opt-in (default off)
SET simhash.progress_interval = -1;
\timing on
$query
EOF
}
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

declare -A MS LOAD
# measure NAME QUERY [SETUP]: with 0 and 2 workers, alternating
measure() {
	local name=$1 query=$2 setup=${3:-} w r t0="" t2=""
	step "$name"
	for r in $(seq "$RUNS"); do
		for w in 0 2; do
			[ -n "$setup" ] && sql -q -c "$setup"
			if [ $w = 0 ]; then t0="$t0$(timed $w "$query")"$'\n'
			else t2="$t2$(timed $w "$query")"$'\n'; fi
		done
	done
	MS[$name.0]=$(printf '%s' "$t0" | median)
	MS[$name.2]=$(printf '%s' "$t2" | median)
	LOAD[$name]=$(cut -d' ' -f1 /proc/loadavg)
}

PAIRS3="SELECT count(*) FROM simhash_pairs('docs', 'id', 'h', 3)"
measure pairs_k3 "$PAIRS3"
measure groups_k3 "SELECT sum((id = group_id)::int) FROM simhash_groups('docs', 'id', 'h', 3)"
measure pairs_k6 "SELECT count(*) FROM simhash_pairs('docs', 'id', 'h', 6, 8)"
measure pairs_k0 "SELECT count(*) FROM simhash_pairs('docs', 'id', 'h', 0)"
measure create_index "CREATE INDEX docs_h ON docs USING simhash (h)" "DROP INDEX IF EXISTS docs_h"

step "checking that the results with 0 and 2 workers are equal"
DIFF=$(sql -At <<EOF | tail -1
SET maintenance_work_mem = '2GB';
SET simhash.parallel_min_rows = 10000;
SET max_parallel_maintenance_workers = 0;
CREATE TEMP TABLE s0 AS SELECT * FROM simhash_pairs('docs', 'id', 'h', 3);
SET max_parallel_maintenance_workers = 2;
CREATE TEMP TABLE s2 AS SELECT * FROM simhash_pairs('docs', 'id', 'h', 3);
SELECT (SELECT count(*) FROM (TABLE s0 EXCEPT ALL TABLE s2) a) + (SELECT count(*) FROM (TABLE s2 EXCEPT ALL TABLE s0) b);
EOF
)
stop_cluster

cores=$(nproc)
{
	echo "bench/parallel.sh $N: $(date -u '+%Y-%m-%d %H:%M UTC'), $cores cores, PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}'), maintenance_work_mem 2GB"
	echo "table: $N rows (bigint id, simhash64), $((N - ORIG)) planted near-duplicates; ms: median of $RUNS"
	printf '%-14s %11s %11s %7s %6s\n' job ms_0_workers ms_2_workers ratio load
	for name in pairs_k3 groups_k3 pairs_k6 pairs_k0 create_index; do
		printf '%-14s %11.0f %11.0f %7.2f %6s\n' "$name" "${MS[$name.0]}" "${MS[$name.2]}" \
			"$(echo "${MS[$name.0]} / ${MS[$name.2]}" | bc -l)" "${LOAD[$name]}"
	done
	echo "pairs at max_distance 3, 0 vs 2 workers: $DIFF pairs differ (must be 0)"
	echo "load: the 1-minute load average after the job's runs (the machine has $cores cores)"
	echo
	echo "scaling model (Amdahl, fitted per job to its two times on $cores cores): P = 2 (T(0) - T(2)) is"
	echo "shared by the leader and the workers, S = T(0) - P is serial; T(w) = S + P / min(w + 1, cores), predicted ms:"
	printf '%-14s %9s %9s %9s %9s %9s %9s\n' job S P 'w=3,c=4' 'w=7,c=8' 'w=15,c=16' 'max'
	for name in pairs_k3 groups_k3 pairs_k6 pairs_k0 create_index; do
		T0=${MS[$name.0]}
		P=$(echo "p = 2 * ($T0 - ${MS[$name.2]}); if (p < 0) p = 0; if (p > $T0) p = $T0; p" | bc -l)
		S=$(echo "$T0 - $P" | bc -l)
		printf '%-14s %9.0f %9.0f' "$name" "$S" "$P"
		for c in 4 8 16; do printf ' %9.0f' "$(echo "$S + $P / $c" | bc -l)"; done
		if [ "$(echo "$S > 0" | bc)" = 1 ]; then printf ' %8.1fx\n' "$(echo "$T0 / $S" | bc -l)"; else printf ' %9s\n' inf; fi
	done
	echo "max: T(0) / S, the speed-up at any number of cores.  On a loaded machine T(2) is inflated, so P is"
	echo "underestimated: re-measure on an idle machine"
} | tee "$REPORT"
