#!/usr/bin/env bash
# bench/dedup.sh: the table-scale dedup jobs, simhash_pairs and
# simhash_groups, on a table of N rows with 5% planted near-duplicates,
# against a plain SELECT count(*) of the same table in the same run:
#   bench/dedup.sh            N = 1,000,000 rows (about 3 minutes)
#   bench/dedup.sh 10000000   N = 10,000,000 rows (about 15 minutes)
# Data (fixed): ids 1 .. 0.95 N have h = simhash_hash(id::text) (random);
# ids above are copies of a pseudo-randomly chosen earlier row with 0 .. 3
# bits flipped (chosen by hashing the id).  Every job runs in a fresh
# connection; its time is the statement's round trip (psql \timing), the
# median of 3 runs (1 for 10M rows); memory is the server processes' peak
# anonymous RSS (bench/jobs.sh: RssAnon, private memory, not shared
# buffers, of the backend and any workers) minus its value before the
# call; temporary files are pg_stat_database's temp_bytes.  maintenance_work_mem: the default 64MB, and 1GB.  Every run
# checks that each planted row is paired with its source row.  The report
# goes to stdout and bench/data/dedup_report_N.txt.
set -euo pipefail
source "$(dirname "$0")/../test/lib.sh"
cd "$SIMHASH_ROOT"

source bench/planted.sh
planted_setup dedup "$@"

source bench/jobs.sh

# one measured job: name, maintenance_work_mem, query
declare -A MS KB TMP RES
measure() {
	local name=$1 mwm=$2 query=$3 t0 t1 times="" kb=0 res=""
	step "$name"
	t0=$(temp_bytes)
	for r in $(seq "$RUNS"); do
		read -r ms peak _ out < <(job "SET maintenance_work_mem = '$mwm';" "$query")
		times="$times$ms"$'\n'
		[ "$peak" -gt "$kb" ] && kb=$peak
		res=$out
	done
	sleep 0.6
	t1=$(temp_bytes)
	MS[$name]=$(printf '%s' "$times" | median)
	KB[$name]=$kb
	TMP[$name]=$(( (t1 - t0) / RUNS / 1048576 ))
	RES[$name]=$res
}

measure count 64MB "SELECT count(*) FROM docs"
measure count_h 64MB "SELECT count(h) FROM docs"
measure pairs_64MB 64MB "SELECT count(*) FROM simhash_pairs('docs', 'id', 'h', 3)"
measure pairs_1GB 1GB "SELECT count(*) FROM simhash_pairs('docs', 'id', 'h', 3)"
measure connected_64MB 64MB "SELECT sum((id = group_id)::int) FROM simhash_groups('docs', 'id', 'h', 3)"
measure connected_1GB 1GB "SELECT sum((id = group_id)::int) FROM simhash_groups('docs', 'id', 'h', 3)"
measure leader_64MB 64MB "SELECT sum((id = group_id)::int) FROM simhash_groups('docs', 'id', 'h', 3, 'leader')"
measure leader_1GB 1GB "SELECT sum((id = group_id)::int) FROM simhash_groups('docs', 'id', 'h', 3, 'leader')"

step "checking that every planted row is paired with its source"
MISSED=$(sql -At -c "SET maintenance_work_mem = '1GB';
	SELECT count(*) FROM planted p WHERE NOT EXISTS (
		SELECT 1 FROM simhash_pairs('docs', 'id', 'h', 3) s WHERE s.id_a = p.src AND s.id_b = p.id)" | tail -1)
SAME_GROUP=$(sql -At -c "SET maintenance_work_mem = '1GB';
	WITH g AS (SELECT * FROM simhash_groups('docs', 'id', 'h', 3))
	SELECT count(*) FROM planted p JOIN g a ON a.id = p.id JOIN g b ON b.id = p.src WHERE a.group_id = b.group_id" | tail -1)
stop_cluster

{
	echo "bench/dedup.sh $N: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}')"
	echo "table: $N rows (bigint id, simhash64), $((N - ORIG)) planted near-duplicates (0..3 bits); max_distance 3, blocks 5 (default)"
	printf '%-16s %6s %10s %10s %10s %12s  %s\n' job mwm ms x_count peak_MB temp_MB result
	for name in count count_h pairs_64MB pairs_1GB connected_64MB connected_1GB leader_64MB leader_1GB; do
		case $name in *MB | *GB) mwm=${name##*_} ;; *) mwm=- ;; esac
		label=$name; [ "$mwm" != - ] && label=${name%_*}
		printf '%-16s %6s %10.0f %10.1f %10.1f %12s  %s\n' "$label" "$mwm" "${MS[$name]}" \
			"$(echo "${MS[$name]} / ${MS[count]}" | bc -l)" "$(echo "${KB[$name]} / 1024" | bc -l)" \
			"${TMP[$name]}" "${RES[$name]}"
	done
	echo "planted rows not paired with their source: $MISSED of $((N - ORIG)); in their source's connected group: $SAME_GROUP"
	echo "ms: median of $RUNS; x_count: ms / ms of SELECT count(*) FROM docs in this run; peak_MB: server RssAnon peak above its start;"
	echo "temp_MB: temporary file bytes written per run; result: count(*) of pairs, or the number of groups (rows with id = group_id)"
} | tee "$REPORT"
