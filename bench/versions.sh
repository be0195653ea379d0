#!/usr/bin/env bash
# bench/versions.sh [N]: the same work on PostgreSQL 15 and 18 in one run,
# as ratios 18 / 15.  N rows (default 1,000,000) of the planted table
# (bench/planted_docs.sql: 95% random fingerprints, 5% near-duplicates of
# them at 0..3 bits); on each version, in the order 15, 18, 15, 18 (two
# rounds, so that a machine that gets busier or quieter during the run
# shows as a difference between the rounds, not between the versions):
#   - CREATE INDEX ... USING simhash (serial);
#   - 2,000 radius-3 lookups of fixed probes through the index (one
#     statement: a loop in PL/pgSQL), and 200 ORDER BY h <~> q LIMIT 10;
#   - simhash_pairs(k = 3) and simhash_groups(k = 3) on the table.
# Each server is a throwaway cluster (test/lib.sh) with the same settings;
# the extension is built and installed into both (PostgreSQL 18 from
# test/deps.sh).  Times are server-side (clock_timestamp() around each
# statement), in milliseconds; the report is the better of the two rounds
# per version and the ratio, to stdout.
set -euo pipefail
source "$(dirname "$0")/../test/lib.sh"
cd "$SIMHASH_ROOT"
N=${1:-1000000}
ORIG=$((N * 95 / 100))
BASE_PATH=$PATH
PG15=/usr/lib/postgresql/15/bin
PG18=$(test/deps.sh pg18)

for bin in "$PG15" "$PG18"; do
	(PATH="$bin:$BASE_PATH"; make -s clean >/dev/null; make -s -j2 >/dev/null && make -s install >/dev/null) >&2
done

sql() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

# run_version BIN: load the table and time each step; prints "step ms" lines
run_version() {
	PGBIN=$1 PATH="$1:$BASE_PATH"
	start_cluster "shared_buffers = '1GB'" "jit = off" "autovacuum = off" \
		"max_wal_size = '32GB'" "max_parallel_maintenance_workers = 0" \
		"max_parallel_workers_per_gather = 0" >/dev/null
	sql -v n="$N" -v orig="$ORIG" -f bench/planted_docs.sql >/dev/null
	sql -At <<'EOF'
CREATE FUNCTION pg_temp.ms(t0 timestamptz) RETURNS bigint LANGUAGE sql
	AS $$ SELECT (extract(epoch FROM clock_timestamp() - t0) * 1000)::bigint $$;
CREATE TEMP TABLE probes AS
	SELECT g, simhash_hash('probe ' || g)::simhash64 AS q FROM generate_series(1, 2000) g;
DO $$
DECLARE
	t0 timestamptz;
	n bigint;
BEGIN
	t0 := clock_timestamp();
	CREATE INDEX docs_h ON docs USING simhash (h);
	RAISE NOTICE 'create_index %', pg_temp.ms(t0);
	SET LOCAL enable_seqscan = off;
	t0 := clock_timestamp();
	n := 0;
	FOR i IN 1 .. 2000 LOOP
		n := n + (SELECT count(*) FROM docs
			WHERE h <~> (SELECT q FROM probes WHERE g = i) <= 3);
	END LOOP;
	RAISE NOTICE 'lookups_2000_r3 %', pg_temp.ms(t0);
	t0 := clock_timestamp();
	FOR i IN 1 .. 200 LOOP
		n := n + (SELECT count(*) FROM (SELECT id FROM docs
			ORDER BY h <~> (SELECT q FROM probes WHERE g = i) LIMIT 10) s);
	END LOOP;
	RAISE NOTICE 'knn_200_limit10 %', pg_temp.ms(t0);
	RESET enable_seqscan;
	t0 := clock_timestamp();
	n := (SELECT count(*) FROM simhash_pairs('docs', 'id', 'h', 3));
	RAISE NOTICE 'simhash_pairs_k3 %', pg_temp.ms(t0);
	t0 := clock_timestamp();
	n := (SELECT count(*) FROM simhash_groups('docs', 'id', 'h', 3));
	RAISE NOTICE 'simhash_groups_k3 %', pg_temp.ms(t0);
END
$$;
EOF
	stop_cluster
}

results=$(mktemp)
for round in 1 2; do
	for v in 15 18; do
		bin=$PG15; [ $v = 18 ] && bin=$PG18
		say "[versions.sh] round $round, PostgreSQL $v, $N rows"
		run_version "$bin" 2>&1 | sed -n 's/.*NOTICE:  \([a-z0-9_]*\) \([0-9]*\)$/\1 \2/p' |
			sed "s/^/$v /" >>"$results"
	done
done

echo "bench/versions.sh: $N rows, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-20s %12s %12s %8s\n' step 'PG 15 ms' 'PG 18 ms' '18/15'
for step in create_index lookups_2000_r3 knn_200_limit10 simhash_pairs_k3 simhash_groups_k3; do
	a=$(awk -v s=$step '$1 == 15 && $2 == s { print $3 }' "$results" | sort -n | head -1)
	b=$(awk -v s=$step '$1 == 18 && $2 == s { print $3 }' "$results" | sort -n | head -1)
	printf '%-20s %12s %12s %8s\n' "$step" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0) printf "%.2f", b / a }')"
done
rm -f "$results"
