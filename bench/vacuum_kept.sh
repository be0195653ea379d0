#!/usr/bin/env bash
# bench/vacuum_kept.sh DB [K] [perf]: VACUUM after deleting a tenth of the
# table docs of database DB on a running cluster, such as the one that
# `SCALE_CLUSTER=DIR bash bench/scale.sh ...` keeps (databases s<N>, table
# docs, simhash index docs_h): DELETE FROM docs WHERE id % 10 = K (default
# 0), CHECKPOINT, then in one connection VACUUM (PARALLEL 0, VERBOSE) docs
# at maintenance_work_mem 1GB (bench/scale.sh's).  Prints the backend's CPU
# time (user and system, /proc/PID/stat) and its peak anonymous memory
# (RssAnon, sampled every 50 ms) above the start, the WAL it wrote and the
# checkpoints that ran meanwhile; the VERBOSE report goes
# to bench/data/vacuum_kept_DB.log.  With "perf" (perf on PATH), perf
# record -F 499 -g follows the backend during the VACUUM into
# bench/data/vacuum_kept_DB.perf, and the CPU is split into the heap's
# part (PostgreSQL's), the index's bulk delete (PostgreSQL's callback that
# looks up each TID, the sorts, leaf reads and dead-bit writes) and its cleanup, in ns per row.  The connection comes
# from psql's environment (PGHOST, PGPORT, PGUSER) and the psql on PATH.
# Deleting changes the table: restore it (the deleted rows again, a fresh
# index) before measuring the same size again.
set -euo pipefail
cd "$(dirname "$0")/.."
DB=${1:?usage: bench/vacuum_kept.sh DB [K] [perf]}
K=${2:-0}
PERF=${3:-}
case $K in [0-9]) ;; *) echo "K must be a digit" >&2; exit 2 ;; esac
mkdir -p bench/data
OUT=$PWD/bench/data/vacuum_kept_$DB
rm -f "$OUT.anon" "$OUT.anon0" "$OUT.perf"
P=(psql -X -At -v ON_ERROR_STOP=1 -d "$DB")
rows=$("${P[@]}" -c "SELECT count(*) FROM docs")
"${P[@]}" -c "DELETE FROM docs WHERE id % 10 = $K" -c "CHECKPOINT" >/dev/null
# checkpoints so far: pg_stat_checkpointer from PostgreSQL 17, pg_stat_bgwriter before
ckpt() {
	if [ "$("${P[@]}" -c "SELECT to_regclass('pg_catalog.pg_stat_checkpointer') IS NOT NULL")" = t ]; then
		"${P[@]}" -c "SELECT num_timed + num_requested FROM pg_stat_checkpointer"
	else
		"${P[@]}" -c "SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter"
	fi
}
c0=$(ckpt)
s0=$(date +%s.%N)
out=$("${P[@]}" 2>"$OUT.log" <<SQL
SET maintenance_work_mem = '1GB';
SELECT pg_backend_pid() AS pid \gset
\setenv P :pid
\! awk '{print \$14, \$15}' /proc/\$P/stat
\! awk '/RssAnon/ {print \$2}' /proc/\$P/status > "$OUT.anon0"
\! (m=0; while [ -e /proc/\$P ]; do r=\$(awk '/RssAnon/ {print \$2}' /proc/\$P/status 2>/dev/null); if [ -n "\$r" ] && [ "\$r" -gt "\$m" ]; then m=\$r; echo \$m > "$OUT.anon"; fi; sleep 0.05; done) &
\! if [ "$PERF" = perf ]; then (perf record -q -F 499 -g -o "$OUT.perf" -p \$P >/dev/null 2>&1 &); sleep 1; fi
VACUUM (PARALLEL 0, VERBOSE) docs;
\! awk '{print \$14, \$15}' /proc/\$P/stat
SQL
)
s1=$(date +%s.%N)
c1=$(ckpt)
read -r u0 k0 u1 k1 <<<"$(grep -E '^[0-9]+ [0-9]+$' <<<"$out" | tr '\n' ' ')"
hz=$(getconf CLK_TCK)
cpu=$(((u1 + k1 - u0 - k0) * 1000 / hz))
sys=$(((k1 - k0) * 1000 / hz))
sleep 0.3	# the sampler's last look
anon=$((($(cat "$OUT.anon") - $(cat "$OUT.anon0")) / 1024))
awk -v db="$DB" -v k="$K" -v n="$rows" -v cpu="$cpu" -v sys="$sys" -v anon="$anon" \
	-v ckpts=$((c1 - c0)) -v wal="$(sed -n 's/.*full page images, \([0-9]*\) bytes.*/\1/p' "$OUT.log")" \
	-v wall="$(echo "$s1 - $s0" | bc)" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" 'BEGIN {
	printf "%s: %d rows, VACUUM after deleting id %% 10 = %d: cpu %d ms (kernel %d), %.1f ns per row, wall %.1f s, peak anon %d MB, WAL %.0f MB, %d checkpoints meanwhile, load %s\n",
		db, n, k, cpu, sys, cpu * 1e6 / n, wall, anon, wal / 1048576, ckpts, load }'
if [ "$PERF" = perf ]; then
	# wait for perf to write its file (it ends with the backend)
	for ((i = 0; i < 100; i++)); do
		perf report -i "$OUT.perf" --header-only >/dev/null 2>&1 && break
		sleep 0.2
	done
	perf script -i "$OUT.perf" 2>/dev/null | awk '
		/^postgres/ { if (st != "") print st; st = ""; next }
		NF >= 2 { st = st " " $2 }
		END { if (st != "") print st }' |
		awk -v cpu="$cpu" -v n="$rows" '{
			t++
			if ($0 ~ /simhash_vacuumcleanup/) c++
			else if ($0 ~ /simhash_bulkdelete/) {
				b++
				# the callback: PostgreSQL'"'"'s dead-TID lookup (a static function, no symbol)
				if ($0 ~ /^ \[unknown\] (mark_batch|simhash_bulkdelete)/) bc++
				else if ($0 ~ /simhash_radix_sort/) bs++
				else if ($0 ~ /mark_batch\+[0-9a-fx]+ simhash_bulkdelete/ && $0 ~ /simhash_read_page|GenericXLog/) bw++
				else if ($0 ~ /simhash_chain_next|simhash_leaf_decode/) br++
			} else h++
		}
		END {
			f = cpu * 1e6 / n / t
			printf "perf, %d samples, ns per row: the heap (PostgreSQL) and the rest %.0f; the index: bulk delete %.0f (PostgreSQL'"'"'s dead-TID lookup %.0f, its sorts %.0f, leaf reads %.0f, dead-bit writes %.0f), cleanup %.0f\n",
				t, h * f, b * f, bc * f, bs * f, br * f, bw * f, c * f
		}'
fi
