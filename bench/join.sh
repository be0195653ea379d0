#!/usr/bin/env bash
# bench/join.sh: the radius join (src/join/scan.c) against simhash_pairs and the index
# nested loop, in one run on one table:
#   bench/join.sh            N = 1,000,000 rows (about 5 minutes)
#   bench/join.sh 10000000   N = 10,000,000 rows (the index nested loop is
#                            then skipped: it takes minutes)
# Data (fixed, bench/planted_docs.sql as bench/dedup.sh): ids 1 .. 0.95 N have h = simhash_hash(id::text);
# ids above are copies of a pseudo-randomly chosen earlier row with 0 .. 3
# bits flipped.  Timed (psql \timing, median of 3 runs, 1 for the index
# nested loop and at 10M rows), each in a fresh connection:
#   count        SELECT count(*) FROM docs (the unit of the ratios)
#   pairs        simhash_pairs('docs', 'id', 'h', 3), maintenance_work_mem 1GB
#   join         SELECT count(*) FROM docs a JOIN docs b ON a.id < b.id
#                WHERE a.h <~> b.h <= 3, work_mem 256MB (in memory)
#   join_4MB     the same at the default work_mem (spills to temporary files)
#   index_nl     the same with simhash.enable_join = off and an index USING
#                simhash: the planner's index nested loop
#   new_*        1,000 and 100,000 rows of a second table (near-copies of
#                corpus rows and random ones) joined to the corpus: the
#                planner's choice, the radius join and the index nested loop
# Every join's count is checked against simhash_pairs'.  The report goes to
# stdout and bench/data/join_report_N.txt.
set -euo pipefail
source "$(dirname "$0")/../test/lib.sh"
cd "$SIMHASH_ROOT"

source bench/planted.sh
planted_setup join "$@"
sql <<EOF
-- new rows: every other one a near-copy (2 bits) of a corpus row, the others random
CREATE UNLOGGED TABLE news AS
SELECT g AS id, CASE WHEN g % 2 = 0
	THEN (d.h::bigint # (3::bigint << (g % 62)::int))::simhash64
	ELSE simhash_hash('new' || g)::simhash64 END AS h
FROM generate_series(1, 100000) g JOIN docs d ON d.id = 1 + (g * 7919) % $ORIG;
CREATE UNLOGGED TABLE news_1k AS SELECT * FROM news WHERE id <= 1000;
VACUUM ANALYZE news;
VACUUM ANALYZE news_1k;
EOF

# time a query (with settings) in a fresh connection: prints "ms result"
run() {
	local settings=$1 query=$2 out
	out=$(sql -At <<EOF
$settings
\timing on
$query
EOF
	)
	echo "$(grep -oE 'Time: [0-9.]+' <<<"$out" | tail -1 | awk '{print $2}') $(grep -v '^Time:' <<<"$out" | tail -1)"
}
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
declare -A MS RES CHOICE
measure() {	# name runs settings query
	local name=$1 runs=$2 settings=$3 query=$4 times="" ms res
	step "$name"
	for r in $(seq "$runs"); do
		read -r ms res < <(run "$settings" "$query")
		times="$times$ms"$'\n'
	done
	MS[$name]=$(printf '%s' "$times" | median)
	RES[$name]=$res
}
temp_bytes() {
	sql -At -c "SELECT pg_stat_force_next_flush(); SELECT temp_bytes FROM pg_stat_database WHERE datname = current_database()" | tail -1
}

SELF="SELECT count(*) FROM docs a JOIN docs b ON a.id < b.id WHERE a.h <~> b.h <= 3"
measure count "$RUNS" "" "SELECT count(*) FROM docs"
measure pairs "$RUNS" "SET maintenance_work_mem = '1GB';" "SELECT count(*) FROM simhash_pairs('docs', 'id', 'h', 3)"
measure join "$RUNS" "SET work_mem = '256MB';" "$SELF"
t0=$(temp_bytes)
measure join_4MB "$RUNS" "" "$SELF"
sleep 0.6
SPILL_MB=$(( ($(temp_bytes) - t0) / RUNS / 1048576 ))
PLAN=$(sql -At -c "SET work_mem = '256MB'; EXPLAIN (COSTS OFF) $SELF" | grep -c SimhashJoin || true)

step "building the index"
sql -c "SET maintenance_work_mem = '1GB'; CREATE INDEX docs_h ON docs USING simhash (h)"
if [ "$N" -le 2000000 ]; then
	measure index_nl 1 "SET simhash.enable_join = off;" "$SELF"
fi
for t in news_1k news; do
	Q="SELECT count(*) FROM $t n JOIN docs c ON c.h <~> n.h <= 3"
	measure "${t}_planner" "$RUNS" "SET work_mem = '256MB';" "$Q"
	measure "${t}_join" "$RUNS" "SET work_mem = '256MB'; SET enable_nestloop = off;" "$Q"
	measure "${t}_index_nl" "$RUNS" "SET simhash.enable_join = off;" "$Q"
	CHOICE[$t]=$(sql -At -c "SET work_mem = '256MB'; EXPLAIN (COSTS OFF) $Q" | grep -oE 'SimhashJoin|Nested Loop' | head -1)
done
stop_cluster

mkdir -p bench/data
{
	echo "bench/join.sh $N: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}'), load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "table: $N rows (bigint id, simhash64), $((N - ORIG)) planted near-duplicates (0..3 bits); distance 3, blocks 5"
	echo "self-join: $SELF (the radius join in the plan: $([ "$PLAN" -gt 0 ] && echo yes || echo NO))"
	printf '%-20s %10s %10s %10s  %s\n' query ms x_count x_pairs result
	for name in count pairs join join_4MB index_nl news_1k_planner news_1k_join news_1k_index_nl \
		news_planner news_join news_index_nl; do
		[ -n "${MS[$name]:-}" ] || continue
		printf '%-20s %10.0f %10.1f %10.2f  %s\n' "$name" "${MS[$name]}" \
			"$(echo "${MS[$name]} / ${MS[count]}" | bc -l)" \
			"$(echo "${MS[$name]} / ${MS[pairs]}" | bc -l)" "${RES[$name]}"
	done
	echo "join at the default work_mem (4MB): ${SPILL_MB} MB of temporary files per run"
	[ -n "${MS[index_nl]:-}" ] &&
		printf 'index nested loop / radius join: %.1f\n' "$(echo "${MS[index_nl]} / ${MS[join]}" | bc -l)"
	for t in news_1k news; do
		[ -n "${MS[${t}_planner]:-}" ] || continue
		best=$(printf '%s\n%s\n' "${MS[${t}_join]}" "${MS[${t}_index_nl]}" | sort -n | head -1)
		printf '%s: the planner chose %s, %.2f times the best of the two\n' "$t" "${CHOICE[$t]:-?}" \
			"$(echo "${MS[${t}_planner]} / $best" | bc -l)"
	done
	# exactness: every self-join count equals simhash_pairs'
	ok=yes
	for name in join join_4MB index_nl; do
		[ -n "${RES[$name]:-}" ] && [ "${RES[$name]}" != "${RES[pairs]}" ] && ok=NO
	done
	echo "self-join counts equal simhash_pairs': $ok"
} | tee "$REPORT"
