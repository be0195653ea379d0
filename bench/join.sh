#!/usr/bin/env bash
# bench/join.sh: the radius join (src/join/scan.c) against simhash_pairs and
# the index nested loop, and the planner's choice between them, in one run:
#   bench/join.sh              corpus N = 10,000,000 rows (the issue's grid;
#                              12 minutes on the shared 2-core machine)
#   bench/join.sh 1000000      N = 1,000,000 rows
#   GRID="100 1000" bench/join.sh 1000000   other outer sizes
#   RADIUS=6 GRID="100000 1000000" bench/join.sh   the grid at another radius
# Data (fixed, bench/planted_docs.sql as bench/dedup.sh): ids 1 .. 0.95 N have
# h = simhash_hash(id::text); ids above are copies of a pseudo-randomly chosen
# earlier row with 0 .. 3 bits flipped.  Timed (psql \timing, median of 3
# runs, 1 above 2M rows), each in a fresh connection:
#   count        SELECT count(*) FROM docs (the unit of the ratios)
#   pairs        simhash_pairs('docs', 'id', 'h', 3), maintenance_work_mem 2GB
#   join         SELECT count(*) FROM docs a JOIN docs b ON a.id < b.id
#                WHERE a.h <~> b.h <= 3, work_mem WM (in memory: 40 bytes per
#                row, at least 256MB), at the default settings (the
#                planner's choice, 2 workers per Gather allowed)
#   join_serial  the same without workers (max_parallel_workers_per_gather 0)
#   join_par     the same as the partial radius join under a Gather
#                (parallel_setup_cost and parallel_tuple_cost 0, the leader
#                only gathering; each of the 2 workers joins its share of
#                the outer rows to the whole table)
#   join_4MB     the same at the default work_mem (rows spill to temporary
#                files; at most 2M rows)
#   index_nl     the same with simhash.enable_join = off and an index USING
#                simhash: the planner's index nested loop (at most 2M rows)
# The grid: outer tables of GRID rows (default 100 1000 10000 100000 1000000;
# every other row a near-copy (2 bits) of a corpus row, the others random)
# joined to the corpus, SELECT count(*) FROM news_n n JOIN docs c ON
# c.h <~> n.h <= RADIUS (default 3), at work_mem WM (the corpus and the
# outer rows in memory), with and without the index:
#   custom       the radius join, serial (enable_nestloop off, no workers)
#   custom_par   the partial radius join under a Gather (enable_nestloop off,
#                parallel_setup_cost and parallel_tuple_cost 0), 2 workers
#   index_nl     the index nested loop (simhash.enable_join off; with the index)
#   choice       the planner's plan: timed again only when it is none of
#                the plans above (else their time), with its ratio to the best
# Every count is checked: the self-joins against simhash_pairs, each grid
# cell's plans against each other.  The report goes to stdout and
# bench/data/join_report_N.txt.
set -euo pipefail
source "$(dirname "$0")/../test/lib.sh"
cd "$SIMHASH_ROOT"

GRID=${GRID:-"100 1000 10000 100000 1000000"}
RADIUS=${RADIUS:-3}
set -- "${1:-10000000}"
source bench/planted.sh
planted_setup join "$@"
MAXN=0
for n in $GRID; do [ "$n" -gt "$MAXN" ] && MAXN=$n; done
# work_mem that keeps the join in memory: 40 bytes a row (the search's 40
# and the kept id's 8 share 3/4 of work_mem * hash_mem_multiplier 2: 32
# bytes a row of work_mem, and some room), at least 256MB
WM="$(( ((N + MAXN) * 40 / 1048576 + 1) > 256 ? ((N + MAXN) * 40 / 1048576 + 1) : 256 ))MB"
step "outer tables: $GRID"
sql <<EOF
CREATE UNLOGGED TABLE news AS
SELECT g AS id, CASE WHEN g % 2 = 0
	THEN (d.h::bigint # (3::bigint << (g % 62)::int))::simhash64
	ELSE simhash_hash('new' || g)::simhash64 END AS h
FROM generate_series(1, $MAXN) g JOIN docs d ON d.id = 1 + (g::bigint * 7919) % $ORIG;
EOF
for n in $GRID; do
	sql -c "CREATE UNLOGGED TABLE news_$n AS SELECT * FROM news WHERE id <= $n" -c "VACUUM ANALYZE news_$n"
done

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
declare -A MS RES PLAN
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
# the plan's shape (no costs, no estimates) under settings
plan() { sql -At -c "$1" -c "EXPLAIN (COSTS OFF) $2" | tr '\n' ' '; }
temp_bytes() {
	sql -At -c "SELECT pg_stat_force_next_flush(); SELECT temp_bytes FROM pg_stat_database WHERE datname = current_database()" | tail -1
}

SELF="SELECT count(*) FROM docs a JOIN docs b ON a.id < b.id WHERE a.h <~> b.h <= 3"
measure count "$RUNS" "" "SELECT count(*) FROM docs"
measure pairs "$RUNS" "SET maintenance_work_mem = '2GB';" "SELECT count(*) FROM simhash_pairs('docs', 'id', 'h', 3)"
measure join "$RUNS" "SET work_mem = '$WM';" "$SELF"
PLAN_SELF=$(plan "SET work_mem = '$WM';" "$SELF")
SERIAL="SET max_parallel_workers_per_gather = 0;"
PARALLEL="SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;"
measure join_serial "$RUNS" "SET work_mem = '$WM'; $SERIAL" "$SELF"
# the self-join gets no partial path while its one-scan serial form exists;
# with parallel costs at zero the table's cheapest path is a Gather (no
# one-scan form), and with the leader only gathering the partial path wins
SELF_PAR="$PARALLEL SET parallel_leader_participation = off;"
measure join_par "$RUNS" "SET work_mem = '$WM'; $SELF_PAR" "$SELF"
PLAN_SELF_PAR=$(plan "SET work_mem = '$WM'; $SELF_PAR" "$SELF")
SPILL_MB=
if [ "$N" -le 2000000 ]; then
	t0=$(temp_bytes)
	measure join_4MB "$RUNS" "" "$SELF"
	sleep 0.6
	SPILL_MB=$(( ($(temp_bytes) - t0) / RUNS / 1048576 ))
fi

# the grid: custom join and planner's choice without the index, then with it
grid() {	# suffix (noidx | idx)
	local x=$1 n Q choice
	for n in $GRID; do
		Q="SELECT count(*) FROM news_$n n JOIN docs c ON c.h <~> n.h <= $RADIUS"
		if [ "$x" = noidx ]; then
			measure "custom_$n" "$RUNS" "SET work_mem = '$WM'; SET enable_nestloop = off; $SERIAL" "$Q"
			PLAN[custom_$n]=$(plan "SET work_mem = '$WM'; SET enable_nestloop = off; $SERIAL" "$Q")
			measure "custom_par_$n" "$RUNS" "SET work_mem = '$WM'; SET enable_nestloop = off; $PARALLEL" "$Q"
			PLAN[custom_par_$n]=$(plan "SET work_mem = '$WM'; SET enable_nestloop = off; $PARALLEL" "$Q")
		else
			measure "index_nl_$n" "$RUNS" "SET work_mem = '$WM'; SET simhash.enable_join = off;" "$Q"
			PLAN[index_nl_$n]=$(plan "SET work_mem = '$WM'; SET simhash.enable_join = off;" "$Q")
		fi
		choice=$(plan "SET work_mem = '$WM';" "$Q")
		PLAN[choice_${x}_$n]=$choice
		if [ "$choice" = "${PLAN[custom_$n]}" ]; then
			MS[choice_${x}_$n]=${MS[custom_$n]}; RES[choice_${x}_$n]=${RES[custom_$n]}
		elif [ "$choice" = "${PLAN[custom_par_$n]}" ]; then
			MS[choice_${x}_$n]=${MS[custom_par_$n]}; RES[choice_${x}_$n]=${RES[custom_par_$n]}
		elif [ "$x" = idx ] && [ "$choice" = "${PLAN[index_nl_$n]}" ]; then
			MS[choice_${x}_$n]=${MS[index_nl_$n]}; RES[choice_${x}_$n]=${RES[index_nl_$n]}
		elif [ "$x" = noidx ] && [ "$n" -gt 10000 ]; then
			MS[choice_${x}_$n]=skipped	# a nested loop over every pair: hours
		else
			measure "choice_${x}_$n" "$RUNS" "SET work_mem = '$WM';" "$Q"
		fi
	done
}
grid noidx
step "building the index"
sql -c "SET maintenance_work_mem = '2GB'; CREATE INDEX docs_h ON docs USING simhash (h)"
if [ "$N" -le 2000000 ]; then
	measure index_nl 1 "SET simhash.enable_join = off;" "$SELF"
fi
grid idx
stop_cluster

# the plan's kind, for the report
kind() {
	case "$1" in
	*Gather*SimhashJoin*"Parallel Seq Scan"*) echo "parallel radius join" ;;
	*SimhashJoin*) echo "radius join" ;;
	*Gather*"Index Scan"*) echo "parallel index NL" ;;
	*"Index Scan"*) echo "index NL" ;;
	*"Nested Loop"*) echo "nested loop" ;;
	*) echo "other" ;;
	esac
}
mkdir -p bench/data
{
	echo "bench/join.sh $N: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}'), load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "corpus: $N rows (bigint id, simhash64), $((N - ORIG)) planted near-duplicates (0..3 bits); distance 3, blocks 5; work_mem $WM for the joins in memory"
	echo "self-join: $SELF (plan: $(kind "$PLAN_SELF")$(grep -q 'Inner Input' <<<"$PLAN_SELF" && echo ', one scan for both sides'); join_par: $(kind "$PLAN_SELF_PAR"))"
	printf '%-12s %10s %10s %10s  %s\n' query ms x_count x_pairs result
	for name in count pairs join join_serial join_par join_4MB index_nl; do
		[ -n "${MS[$name]:-}" ] || continue
		printf '%-12s %10.0f %10.1f %10.2f  %s\n' "$name" "${MS[$name]}" \
			"$(echo "${MS[$name]} / ${MS[count]}" | bc -l)" \
			"$(echo "${MS[$name]} / ${MS[pairs]}" | bc -l)" "${RES[$name]}"
	done
	[ -n "$SPILL_MB" ] && echo "join at the default work_mem (4MB): ${SPILL_MB} MB of temporary files per run"
	[ -n "${MS[index_nl]:-}" ] &&
		printf 'index nested loop / radius join: %.1f\n' "$(echo "${MS[index_nl]} / ${MS[join]}" | bc -l)"
	printf 'self-join, default settings / no workers: %.2f; partial under Gather / no workers: %.2f\n' \
		"$(echo "${MS[join]} / ${MS[join_serial]}" | bc -l)" "$(echo "${MS[join_par]} / ${MS[join_serial]}" | bc -l)"
	echo
	echo "grid: SELECT count(*) FROM news_n n JOIN docs c ON c.h <~> n.h <= $RADIUS (ms; choice/best: the planner's plan against the fastest of the plans timed: custom, custom_par, index_nl with the index; custom, custom_par without)"
	printf '%-8s %8s | %10s %10s %10s %-26s %6s | %10s %-26s %6s\n' outer result custom custom_par index_nl "choice (index)" ratio \
		"no index" "choice" ratio
	ok=yes
	for n in $GRID; do
		c=${MS[custom_$n]} cp=${MS[custom_par_$n]} i=${MS[index_nl_$n]} ci=${MS[choice_idx_$n]} cn=${MS[choice_noidx_$n]}
		best=$(printf '%s\n%s\n%s\n' "$c" "$cp" "$i" | sort -n | head -1)
		bestn=$(printf '%s\n%s\n' "$c" "$cp" | sort -n | head -1)
		rn=-
		[ "$cn" != skipped ] && rn=$(printf '%.2f' "$(echo "$cn / $bestn" | bc -l)")
		[ "$cn" != skipped ] && cn=$(printf '%.0f' "$cn")
		printf '%-8s %8s | %10.0f %10.0f %10.0f %-26s %6.2f | %10s %-26s %6s\n' "$n" "${RES[custom_$n]}" "$c" "$cp" "$i" \
			"$(kind "${PLAN[choice_idx_$n]}") $(printf '%.0f' "$ci")" "$(echo "$ci / $best" | bc -l)" \
			"$cn" "$(kind "${PLAN[choice_noidx_$n]}")" "$rn"
		for name in custom_par_$n index_nl_$n choice_idx_$n choice_noidx_$n; do
			[ -n "${RES[$name]:-}" ] && [ "${RES[$name]}" != "${RES[custom_$n]}" ] && ok=NO
		done
	done
	for name in join join_serial join_par join_4MB index_nl; do
		[ -n "${RES[$name]:-}" ] && [ "${RES[$name]}" != "${RES[pairs]}" ] && ok=NO
	done
	echo "every count equal (self-joins to simhash_pairs, grid plans to each other): $ok"
} | tee "$REPORT"
