#!/usr/bin/env bash
# bench/find_all.sh: simhash_find_all against a simhash-cpp-style baseline,
# all in one run, on fixed data (see bench/find_all_bench.c): 1,000,000
# values (1,000 planted near-duplicate pairs) at blocks 4/5/6/8, distance 3,
# and 10,000,000 values at blocks 5 (FULL=1: at all four).
#   ours     - the pure-C find_all of src/core/ (bench/find_all_bench.c)
#   baseline - per table std::transform + std::sort + run scan + unordered_set
#              of matches, as simhash-cpp does (bench/find_all_baseline.cpp)
#   sql      - SELECT count(*) FROM simhash_find_all(...) on a throwaway
#              cluster: wall time in the server, fetching (detoasting) the
#              array from its table included (its cost alone is printed too)
# ours and baseline are CPU seconds (best of 3 at 1M, one run at 10M); sql is
# the best of 3 (one at 10M).  Each is one core.
set -euo pipefail
source "$(dirname "$0")/../test/lib.sh"
cd "$SIMHASH_ROOT"
DISTANCE=3
BLOCKS_1M="4 5 6 8"
BLOCKS_10M=${FULL:+4 5 6 8}
BLOCKS_10M=${BLOCKS_10M:-5}

ensure_packages
out=$(mktemp -d /tmp/simhash-bench.XXXXXX)
cc -O2 -std=gnu99 -Isrc/core -o "$out/find_all_bench" bench/find_all_bench.c \
	src/core/blocks.c src/core/permute.c src/core/radix_sort.c src/core/pair_scan.c src/core/find_all.c
g++ -O2 -o "$out/find_all_baseline" bench/find_all_baseline.cpp

results=$out/results.txt
: >"$results"
run_native() {	# run_native N BLOCKS...
	local n=$1; shift
	say "native: n=$n blocks $*"
	"$out/find_all_bench" "$n" "$out/data.bin" $DISTANCE "$@" | sed "s/^/n=$n /" | tee -a "$results" >&2
	"$out/find_all_baseline" "$out/data.bin" $DISTANCE "$@" | sed "s/^/n=$n /" | tee -a "$results" >&2
	rm -f "$out/data.bin"
}
run_native 1000000 $BLOCKS_1M
run_native 10000000 $BLOCKS_10M

build_install
start_cluster "max_parallel_workers_per_gather = 0" "jit = off"
psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
CREATE EXTENSION simhash;
-- the data set of bench/find_all_bench.c
CREATE FUNCTION bench_data(n int) RETURNS simhash64[] LANGUAGE sql AS $$
	SELECT array_agg(v) FROM (
		SELECT simhash_hash(g::text)::simhash64 AS v FROM generate_series(1, n - n / 1000) g
		UNION ALL
		SELECT (simhash_hash(j::text)
				# ((1::bigint << (x & 63)::int)
				   | CASE WHEN j % 3 >= 1 THEN 1::bigint << ((x >> 8) & 63)::int ELSE 0 END
				   | CASE WHEN j % 3 = 2 THEN 1::bigint << ((x >> 16) & 63)::int ELSE 0 END))::simhash64
		FROM (SELECT j, simhash_hash('x' || j) AS x FROM generate_series(1, n / 1000) j) s) t
$$;
CREATE TABLE data AS SELECT n, bench_data(n) AS a FROM unnest(ARRAY[1000000, 10000000]) n;
CREATE FUNCTION best_s(q text, reps int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; best float8 := 1e30; pairs bigint;
BEGIN
	FOR i IN 1..reps LOOP
		t0 := clock_timestamp();
		EXECUTE q INTO pairs;
		best := least(best, extract(epoch FROM clock_timestamp() - t0));
	END LOOP;
	RETURN format('wall_s=%s pairs=%s', round(best::numeric, 3), pairs);
END $$;
SQL
for n in 1000000 10000000; do
	xor=$(psql -X -At -c "SELECT lpad(to_hex(bit_xor(v::bigint)), 16, '0') FROM data, unnest(a) v WHERE n = $n")
	blocks=$BLOCKS_1M reps=3
	[ "$n" -eq 10000000 ] && blocks=$BLOCKS_10M reps=1
	# what fetching (detoasting) the array alone costs
	r=$(psql -X -At -c "SELECT best_s('SELECT cardinality((SELECT a FROM data WHERE n = $n))', $reps)")
	echo "n=$n sqldata xor=$xor array_$r" >>"$results"
	for b in $blocks; do
		say "sql: n=$n blocks $b"
		r=$(psql -X -At -c "SELECT best_s('SELECT count(*) FROM simhash_find_all((SELECT a FROM data WHERE n = $n), $b, $DISTANCE)', $reps)")
		echo "n=$n sql blocks=$b distance=$DISTANCE $r" | tee -a "$results" >&2
	done
done
stop_cluster

# the summary
awk -v distance=$DISTANCE '
function field(line, name,    m) { return match(line, name "=[^ ]*") ? substr(line, RSTART + length(name) + 1, RLENGTH - length(name) - 1) : "" }
{
	n = field($0, "n"); b = field($0, "blocks")
	if ($2 == "data") xor_c[n] = field($0, "xor")
	if ($2 == "sqldata") { xor_sql[n] = field($0, "xor"); fetch[n] = field($0, "array_wall_s") }
	if ($2 == "ours") { ours[n, b] = field($0, "cpu_s"); tables[n, b] = field($0, "tables"); pours[n, b] = field($0, "pairs"); key[n, b] = 1; ns[n] = 1 }
	if ($2 == "baseline") { base[n, b] = field($0, "cpu_s"); pbase[n, b] = field($0, "pairs") }
	if ($2 == "sql") { sql[n, b] = field($0, "wall_s"); psql_[n, b] = field($0, "pairs") }
}
END {
	printf "\nfind_all, distance %d: seconds and pairs found (same data in C, C++ and SQL)\n", distance
	printf "%-9s %6s %6s %9s %9s %11s %14s  %s\n", "n", "blocks", "tables", "ours_cpu", "sql_wall", "baseline_cpu", "baseline/ours", "pairs ours/sql/baseline"
	for (n = 1000000; n <= 10000000; n *= 10)
		for (b = 1; b <= 64; b++)
			if ((n, b) in key)
				printf "%-9d %6d %6s %9s %9s %11s %14s  %s/%s/%s\n", n, b, tables[n, b], ours[n, b],
					sql[n, b] == "" ? "-" : sql[n, b], base[n, b] == "" ? "-" : base[n, b],
					base[n, b] == "" ? "-" : sprintf("%.1f", base[n, b] / ours[n, b]),
					pours[n, b], psql_[n, b] == "" ? "-" : psql_[n, b], pbase[n, b] == "" ? "-" : pbase[n, b]
	for (n in fetch)
		printf "sql_wall includes fetching the %d-element array from its table: %s s alone\n", n, fetch[n]
	for (n in xor_c)
		if (xor_c[n] != xor_sql[n]) printf "WARNING: n=%s: the SQL data set differs (xor %s, C %s)\n", n, xor_sql[n], xor_c[n]
}' "$results"
rm -rf "$out"
