#!/usr/bin/env bash
# bench/spill.sh: the CPU time per row of the spilling dedup jobs
# (simhash_pairs and simhash_groups, k = 3, maintenance_work_mem of 8 bytes
# a row, no parallel workers) at several table sizes, and its growth:
#   bench/spill.sh 10000000 30000000   (default 1000000 10000000)
# SPILL_LIBS="before.so after.so": an A/B in one run, each library copied
# over the installed simhash.so before each of its jobs (a fresh connection
# loads it), the libraries alternated job by job; by default the library
# built from this tree.  The rows are bench/scale.sh's (bench/gen_docs.c,
# fixed seeds); the jobs run through bench/jobs.sh (CPU: the backend's).
set -euo pipefail
source "$(dirname "$0")/../test/lib.sh"
source "$(dirname "$0")/jobs.sh"
cd "$SIMHASH_ROOT"

SIZES=${*:-"1000000 10000000"}
ensure_packages
build_install
PKGLIB=$(pg_config --pkglibdir)
THIS=${SIMHASH_TMPROOT:-/tmp}/simhash_spill_this.so
cp "$PKGLIB/simhash.so" "$THIS"
LIBS=${SPILL_LIBS:-$THIS}
start_cluster "shared_buffers = '1GB'" "jit = off" "autovacuum = off" "max_wal_size = '4GB'" \
	"checkpoint_timeout = '1h'" "max_parallel_maintenance_workers = 0" "log_min_messages = 'warning'"
cc -O2 -Wall -Werror -Isrc -o "$SIMHASH_TMP/gen_docs" bench/gen_docs.c src/core/tokenizer.c
mkdir -p bench/data
REPORT=bench/data/spill_report.txt
: >"$REPORT"
for N in $SIZES; do
	export PGDATABASE=s$N
	psql -X -q -d postgres -c "CREATE DATABASE s$N"
	"$SIMHASH_TMP/gen_docs" "$N" $((N * 99 / 100)) "$SIMHASH_TMP/docs.copy" "$SIMHASH_TMP/q.copy" "$SIMHASH_TMP/n.copy"
	psql -X -q -c "CREATE EXTENSION simhash" -c "CREATE TABLE docs (id bigint, h simhash64)" \
		-c "COPY docs FROM '$SIMHASH_TMP/docs.copy' (FORMAT binary)" -c "VACUUM (FREEZE, ANALYZE) docs"
	rm -f "$SIMHASH_TMP"/*.copy
	MWM=$(((N * 8 + 1048575) / 1048576))MB
	for q in "pairs|SELECT count(*) FROM simhash_pairs('docs', 'id', 'h', 3)" \
		"groups|SELECT count(*) FROM simhash_groups('docs', 'id', 'h', 3) WHERE id <> group_id"; do
		for lib in $LIBS; do
			cp "$lib" "$PKGLIB/simhash.so"
			t0=$(temp_bytes)
			read -r ms kb cpu out < <(job "SET maintenance_work_mem = '$MWM';" "${q#*|}")
			sleep 0.6
			t1=$(temp_bytes)
			echo "$N ${q%%|*} $(basename "$lib") $MWM $ms $cpu $((kb / 1024)) $(((t1 - t0) / 1048576)) $out $(cut -d' ' -f1 /proc/loadavg)" |
				tee -a "$REPORT" >&2
		done
	done
	psql -X -q -d postgres -c "DROP DATABASE s$N"
done
# the tree's build installed again
cp "$THIS" "$PKGLIB/simhash.so"
rm -f "$THIS"
# one line per job, library and size: CPU ns per row and its growth against the first size
awk '{key = $2 " " $3; cpu = $6 * 1e6 / $1; if (!(key in first)) first[key] = cpu
	printf "%-7s %-28s %12d rows  mwm %-6s  %9.0f ms  cpu %7.1f ns/row  x first %5.2f  peak %4d MB  temp %5d MB  result %s  load %s\n",
		$2, $3, $1, $4, $5, cpu, cpu / first[key], $7, $8, $9, $10}' "$REPORT"
