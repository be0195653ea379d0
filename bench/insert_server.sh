# bench/insert_server.sh: sourced by bench/inserts.sh and bench/exclusion.sh
# (after test/lib.sh): insert_server SCRIPT N checks the row count N, builds
# and installs the extension and starts the insert benchmarks' server (no
# parallel workers, no autovacuum, checkpoints and WAL out of the way, 40
# connections for pgbench); sets WORK (a folder the server may read) and sql().
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
