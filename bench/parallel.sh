#!/usr/bin/env bash
# bench/parallel.sh: the dedup jobs and CREATE INDEX with 0 and 2 parallel
# workers in one run, on the planted table of bench/dedup.sh:
#   bench/parallel.sh 10000000   the size of the figures in bench/README.md
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
# The shared-key and MinHash jobs (src/dedup/keys_parallel.c and
# keys_split.c) run on two more tables of N rows built with fixed seeds
# (ids hashed): kdocs (8 bigint keys a row, 2 of them from a pool of N/2
# values, so keys are shared by a few rows; 5% of the rows copy 6 keys of
# an earlier row) and mdocs (minhash() of 128 hex characters; 5% copies of
# an earlier row with the last 4 characters changed):
# shared_key_pairs (min_shared 2), shared_key_groups (1), minhash_pairs
# and minhash_groups (threshold 0.7, 32 bands).  JOBS selects jobs by name
# (JOBS="create_index" bench/parallel.sh 2000000: only that one) or by group:
# "simhash" (pairs_k3 groups_k3 pairs_k6 pairs_k0 create_index) and "keys"
# (key_pairs key_groups mh_pairs mh_groups); default: both groups.
# CPU: the leader's CPU time of each statement (log_statement_stats, from
# the server log), median of RUNS.  With 0 workers it is the job's whole
# CPU time C0; with 2 workers the leader keeps the serial part S and a
# third of the parallel part P, so P = 1.5 (C0 - C2_leader), S = C0 - P:
# the serial fraction S / C0, from CPU times, which the load disturbs less
# than elapsed times.
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
SET log_statement_stats = on;	-- the leader's CPU time, in the server log
\timing on
$query
EOF
}
# the leader's CPU milliseconds of the last statement (log_statement_stats)
cpu_last() {
	{ grep -E '^\s*!\s+[0-9.]+ s user' "$SIMHASH_TMP/server.log" || echo '! 0 s user, 0'; } |
		tail -1 | awk '{printf "%.0f\n", ($2 + $5) * 1000}'
}
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

declare -A MS LOAD CPU
NAMES=()
# measure NAME QUERY [SETUP]: with 0 and 2 workers, alternating
measure() {
	local name=$1 query=$2 setup=${3:-} w r t0="" t2="" c0="" c2=""
	selected "$name" || return 0
	step "$name"
	NAMES+=("$name")
	for r in $(seq "$RUNS"); do
		for w in 0 2; do
			[ -n "$setup" ] && sql -q -c "$setup"
			if [ $w = 0 ]; then t0="$t0$(timed $w "$query")"$'\n'; c0="$c0$(cpu_last)"$'\n'
			else t2="$t2$(timed $w "$query")"$'\n'; c2="$c2$(cpu_last)"$'\n'; fi
		done
	done
	MS[$name.0]=$(printf '%s' "$t0" | median)
	MS[$name.2]=$(printf '%s' "$t2" | median)
	CPU[$name.0]=$(printf '%s' "$c0" | median)
	CPU[$name.2]=$(printf '%s' "$c2" | median)
	LOAD[$name]=$(cut -d' ' -f1 /proc/loadavg)
}
JOBS=${JOBS:-simhash keys}
JOBS=" ${JOBS//simhash/pairs_k3 groups_k3 pairs_k6 pairs_k0 create_index} "
JOBS=${JOBS//keys/key_pairs key_groups mh_pairs mh_groups}
# selected NAME: is job NAME in $JOBS
selected() { [[ " $JOBS " == *" $1 "* ]]; }

PAIRS3="SELECT count(*) FROM simhash_pairs('docs', 'id', 'h', 3)"
measure pairs_k3 "$PAIRS3"
measure groups_k3 "SELECT sum((id = group_id)::int) FROM simhash_groups('docs', 'id', 'h', 3)"
measure pairs_k6 "SELECT count(*) FROM simhash_pairs('docs', 'id', 'h', 6, 8)"
measure pairs_k0 "SELECT count(*) FROM simhash_pairs('docs', 'id', 'h', 0)"
measure create_index "CREATE INDEX docs_h ON docs USING simhash (h)" "DROP INDEX IF EXISTS docs_h"

KDIFF=""
if selected key_pairs || selected key_groups || selected mh_pairs || selected mh_groups; then
step "loading the keys and MinHash tables ($N rows each)"
sql -v n="$N" -v orig="$ORIG" <<'EOF'
CREATE TABLE kdocs (id bigint PRIMARY KEY, keys bigint[]);
INSERT INTO kdocs
SELECT i, ARRAY(SELECT CASE WHEN j <= 2 THEN (hashint8(i * 16 + j)::bigint & 2147483647) % (:n / 2)
                            ELSE hashint8(i * 16 + j)::bigint END
                FROM generate_series(1, 8) j)
FROM generate_series(1, :orig) i;
INSERT INTO kdocs
SELECT i, (SELECT keys[1:6] FROM kdocs WHERE id = (i::bigint * 7919) % :orig + 1) ||
          ARRAY[hashint8(-i)::bigint, hashint8(-2 * i)::bigint]
FROM generate_series(:orig + 1, :n) i;
CREATE TABLE mdocs (id bigint PRIMARY KEY, sig minhash_signature);
INSERT INTO mdocs
SELECT i, minhash(md5(i::text) || md5((-i)::text) || md5((i * 3)::text) || md5((i * 5)::text))
FROM generate_series(1, :orig) i;
INSERT INTO mdocs
SELECT i, minhash(md5(s::text) || md5((-s)::text) || md5((s * 3)::text) || left(md5((s * 5)::text), 28) || 'zzzz')
FROM (SELECT i, (i::bigint * 7919) % :orig + 1 AS s FROM generate_series(:orig + 1, :n) i) x;
VACUUM ANALYZE kdocs, mdocs;
EOF
measure key_pairs "SELECT count(*) FROM shared_key_pairs('kdocs', 'id', 'keys', 2)"
measure key_groups "SELECT sum((id = group_id)::int) FROM shared_key_groups('kdocs', 'id', 'keys', 1)"
measure mh_pairs "SELECT count(*) FROM minhash_pairs('mdocs', 'id', 'sig', 0.7, 32)"
measure mh_groups "SELECT sum((id = group_id)::int) FROM minhash_groups('mdocs', 'id', 'sig', 0.7, 32)"
step "checking that the keys jobs' results with 0 and 2 workers are equal"
KDIFF=$(sql -At <<EOF | tail -1
SET maintenance_work_mem = '2GB';
SET simhash.parallel_min_rows = 10000;
SET max_parallel_maintenance_workers = 0;
CREATE TEMP TABLE k0 AS SELECT * FROM shared_key_pairs('kdocs', 'id', 'keys', 2);
CREATE TEMP TABLE g0 AS SELECT * FROM shared_key_groups('kdocs', 'id', 'keys', 1);
CREATE TEMP TABLE m0 AS SELECT * FROM minhash_pairs('mdocs', 'id', 'sig', 0.7, 32);
CREATE TEMP TABLE h0 AS SELECT * FROM minhash_groups('mdocs', 'id', 'sig', 0.7, 32);
SET max_parallel_maintenance_workers = 2;
CREATE TEMP TABLE k2 AS SELECT * FROM shared_key_pairs('kdocs', 'id', 'keys', 2);
CREATE TEMP TABLE g2 AS SELECT * FROM shared_key_groups('kdocs', 'id', 'keys', 1);
CREATE TEMP TABLE m2 AS SELECT * FROM minhash_pairs('mdocs', 'id', 'sig', 0.7, 32);
CREATE TEMP TABLE h2 AS SELECT * FROM minhash_groups('mdocs', 'id', 'sig', 0.7, 32);
SELECT (SELECT count(*) FROM (TABLE k0 EXCEPT ALL TABLE k2) a) + (SELECT count(*) FROM (TABLE k2 EXCEPT ALL TABLE k0) b)
     + (SELECT count(*) FROM (TABLE g0 EXCEPT ALL TABLE g2) a) + (SELECT count(*) FROM (TABLE g2 EXCEPT ALL TABLE g0) b)
     + (SELECT count(*) FROM (TABLE m0 EXCEPT ALL TABLE m2) a) + (SELECT count(*) FROM (TABLE m2 EXCEPT ALL TABLE m0) b)
     + (SELECT count(*) FROM (TABLE h0 EXCEPT ALL TABLE h2) a) + (SELECT count(*) FROM (TABLE h2 EXCEPT ALL TABLE h0) b)
     || ' (of ' || (SELECT count(*) FROM k0) || ' key pairs, ' || (SELECT count(*) FROM m0) || ' MinHash pairs)';
EOF
)
fi

DIFF=""
if selected pairs_k3; then
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
fi
stop_cluster

cores=$(nproc)
{
	echo "bench/parallel.sh $N: $(date -u '+%Y-%m-%d %H:%M UTC'), $cores cores, PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}'), maintenance_work_mem 2GB"
	echo "table: $N rows (bigint id, simhash64), $((N - ORIG)) planted near-duplicates; ms: median of $RUNS"
	printf '%-14s %11s %11s %7s %6s %9s %9s %7s\n' job ms_0_workers ms_2_workers ratio load cpu_0 cpu_2_ldr serial
	for name in "${NAMES[@]}"; do
		printf '%-14s %11.0f %11.0f %7.2f %6s %9s %9s %6.0f%%\n' "$name" "${MS[$name.0]}" "${MS[$name.2]}" \
			"$(echo "${MS[$name.0]} / ${MS[$name.2]}" | bc -l)" "${LOAD[$name]}" "${CPU[$name.0]}" "${CPU[$name.2]}" \
			"$(echo "c0 = ${CPU[$name.0]}; p = 1.5 * (c0 - ${CPU[$name.2]}); if (p < 0) p = 0; if (p > c0) p = c0; if (c0 > 0) 100 * (c0 - p) / c0 else 0" | bc -l)"
	done
	[ -z "$DIFF" ] || echo "pairs at max_distance 3, 0 vs 2 workers: $DIFF pairs differ (must be 0)"
	[ -z "$KDIFF" ] || echo "keys and MinHash jobs, 0 vs 2 workers: $KDIFF rows differ (must be 0)"
	echo "cpu_0: the job's CPU ms with 0 workers; cpu_2_ldr: the leader's with 2; serial: S / C0 with"
	echo "P = 1.5 (cpu_0 - cpu_2_ldr), S = cpu_0 - P (the leader's share of P is a third)"
	echo "load: the 1-minute load average after the job's runs (the machine has $cores cores)"
	echo
	echo "scaling model (Amdahl, fitted per job to its two times on $cores cores): P = 2 (T(0) - T(2)) is"
	echo "shared by the leader and the workers, S = T(0) - P is serial; T(w) = S + P / min(w + 1, cores), predicted ms:"
	printf '%-14s %9s %9s %9s %9s %9s %9s\n' job S P 'w=3,c=4' 'w=7,c=8' 'w=15,c=16' 'max'
	for name in "${NAMES[@]}"; do
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
