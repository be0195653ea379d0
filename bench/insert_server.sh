# bench/insert_server.sh: sourced by bench/inserts.sh and bench/exclusion.sh
# (after test/lib.sh): insert_server SCRIPT N checks the row count N, builds
# and installs the extension and starts the insert benchmarks' server (no
# parallel workers, no autovacuum, checkpoints and WAL out of the way, 40
# connections for pgbench); sets WORK (a folder the server may read) and sql().
# pgbench_run TAG LABEL CLIENTS REP TXNS: one pgbench run of $WORK/LABEL.sql
# (single-row inserts, seeded by CLIENTS and REP), its rows/s into res;
# cpu_ticks_function: the SQL function cpu_ticks(), the backend's utime +
# stime from /proc/self/stat (clock ticks).
insert_server() {
	local script=$1 n=$2
	if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 1000 ]; then
		say "usage: bench/$script [rows, at least 1000; default 1000000]"
		exit 2
	fi
	ensure_packages
	build_install
	start_cluster "shared_buffers = '1GB'" "max_parallel_workers_per_gather = 0" "jit = off" \
		"autovacuum = off" "max_wal_size = '32GB'" "checkpoint_timeout = '1h'" "max_connections = 40"
	WORK=$SIMHASH_TMP/bench
	mkdir -p "$WORK"
	chmod 755 "$WORK"
}
sql() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

pgbench_run() {
	local tag=$1 label=$2 c=$3 rep=$4 txns=$5 out tps
	sql -c "CHECKPOINT"
	sync
	out=$(pgbench -n -c "$c" -j "$c" -t "$((txns / c))" --random-seed=$((c * 1000 + rep)) \
		-f "$WORK/$label.sql" 2>&1) || { say "$out"; exit 1; }
	tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' <<<"$out")
	sql -c "INSERT INTO res VALUES ('$label', $c, $rep, $((txns / c * c)), $tps)"
	say "[$tag] $label, $c clients, run $rep: $tps rows/s"
}

cpu_ticks_function() {
	sql -c "CREATE FUNCTION cpu_ticks() RETURNS bigint LANGUAGE sql AS \$\$
	SELECT s[12]::bigint + s[13]::bigint
	FROM (SELECT string_to_array(split_part(pg_read_file('/proc/self/stat'), ') ', 2), ' ') s) x \$\$"
}
