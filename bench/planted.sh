# bench/planted.sh: the set-up shared by the benchmarks on the planted table
# (bench/dedup.sh, bench/join.sh).  Source it after test/lib.sh with the
# script's name and its arguments:  planted_setup dedup "$@"
# It sets N (rows, the first argument, default 1,000,000), ORIG (the random
# rows: 95%), RUNS (3, or 1 above 2M rows), REPORT, defines step() and sql(),
# builds and installs the extension, starts a cluster and loads
# bench/planted_docs.sql into it.
planted_setup() {
	local name=$1
	N=${2:-1000000}
	if ! [[ $N =~ ^[0-9]+$ ]] || [ "$N" -lt 10000 ]; then
		say "usage: bench/$name.sh [rows, at least 10000; default 1000000]"
		exit 2
	fi
	RUNS=$((N > 2000000 ? 1 : 3))
	REPORT=bench/data/${name}_report_$N.txt
	BENCH_NAME=$name
	T0=$(date +%s)
	ensure_packages
	build_install
	start_cluster "shared_buffers = '1GB'" "jit = off" "autovacuum = off" \
		"max_wal_size = '32GB'" "checkpoint_timeout = '1h'"
	step "loading $N rows"
	ORIG=$((N * 95 / 100))
	sql -v n="$N" -v orig="$ORIG" -f bench/planted_docs.sql
}
step() { say "[$BENCH_NAME.sh $(($(date +%s) - T0))s] $*"; }
sql() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
