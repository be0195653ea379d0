#!/usr/bin/env bash
# bench/inserts_instructions.sh: the CPU cost of a single-row insert with and
# without a simhash index, counted in instructions (valgrind's callgrind), so
# that a loaded machine does not change the figure (rows/s do change):
#   bench/inserts_instructions.sh            200,000 rows loaded, 3,000 inserts
#   bench/inserts_instructions.sh N M        N rows loaded, M inserts
# Two tables of the same N rows (h = simhash_hash(id::text)): tn without an
# index, ts with CREATE INDEX USING simhash (h), tb with a plain btree on
# the same 64 bits (the reference); then M single-row INSERTs
# (one per transaction, the same values) into each, run by a single-user
# backend (postgres --single) under callgrind.  Prints the instructions per
# insert into each table (the whole backend: parse, plan, heap, WAL, the
# index) and where the index's go, the WAL bytes per insert by record type
# (pg_waldump --stats=record over the simhash run) and the functions of the
# simhash run that cost most per insert (inclusive; the callgrind output is
# kept with SIMHASH_KEEP=1).  INSERTS_INSTR_TABLES (default "tn ts tb")
# runs only some of the tables under callgrind (each takes minutes; the
# counts of tn and tb do not depend on the index's code).  Needs valgrind.  Callgrind counts a
# `rep stos` memset byte by byte, so the generic WAL record's zeroing of a
# page's hole weighs more here than in time.
set -euo pipefail
source "$(dirname "$0")/../test/lib.sh"
cd "$SIMHASH_ROOT"
N=${1:-200000}
M=${2:-3000}
command -v valgrind >/dev/null || { say "valgrind is needed"; exit 2; }
ensure_packages
build_install
start_cluster "autovacuum = off"
sql() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
sql -v N="$N" -v M="$M" <<'SQL'
CREATE EXTENSION simhash;
CREATE TABLE tn (id bigserial, h simhash64);
INSERT INTO tn (h) SELECT simhash_hash(g::text)::simhash64 FROM generate_series(1, :N) g;
CREATE TABLE ts (LIKE tn INCLUDING DEFAULTS);
INSERT INTO ts SELECT * FROM tn;
CREATE INDEX ts_h ON ts USING simhash (h);
CREATE TABLE tb (LIKE tn INCLUDING DEFAULTS);
INSERT INTO tb SELECT * FROM tn;
CREATE INDEX tb_h ON tb ((h::bigint));
VACUUM FREEZE;
-- keep the runs' WAL for pg_waldump
ALTER SYSTEM SET wal_keep_size = '4GB';
SELECT pg_reload_conf();
-- warm up: the pending lanes and the runs are as after inserts
INSERT INTO ts (h) SELECT simhash_hash('w' || g)::simhash64 FROM generate_series(1, :M) g;
INSERT INTO tn (h) SELECT simhash_hash('w' || g)::simhash64 FROM generate_series(1, :M) g;
INSERT INTO tb (h) SELECT simhash_hash('w' || g)::simhash64 FROM generate_series(1, :M) g;
SQL
for tbl in tn ts tb; do
	{
		echo "SELECT pg_current_wal_insert_lsn() AS wal_before;"
		sql -A -t -c "SELECT format('INSERT INTO $tbl (h) VALUES (%L);', simhash_hash('i' || g)::simhash64)
			FROM generate_series(1, $M) g"
		echo "SELECT pg_current_wal_insert_lsn() AS wal_after;"
	} >"$SIMHASH_TMP/ins_$tbl.sql"
	chmod 644 "$SIMHASH_TMP/ins_$tbl.sql"
done
as_cluster_user "$PGBIN/pg_ctl" -D "$SIMHASH_TMP/data" -m fast -w stop >/dev/null
TABLES=${INSERTS_INSTR_TABLES:-tn ts tb}
for tbl in $TABLES; do
	as_cluster_user valgrind --tool=callgrind --callgrind-out-file="$SIMHASH_TMP/cg_$tbl.out" \
		"$PGBIN/postgres" --single -D "$SIMHASH_TMP/data" postgres \
		<"$SIMHASH_TMP/ins_$tbl.sql" >"$SIMHASH_TMP/single_$tbl.log" 2>&1
done
as_cluster_user "$PGBIN/pg_ctl" -D "$SIMHASH_TMP/data" -l "$SIMHASH_TMP/server.log" -w start >/dev/null
total() { [ -f "$SIMHASH_TMP/cg_$1.out" ] || { echo 0; return; }; callgrind_annotate "$SIMHASH_TMP/cg_$1.out" 2>/dev/null | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,; }
incl() { callgrind_annotate --inclusive=yes "$SIMHASH_TMP/cg_ts.out" 2>/dev/null |
	awk -v f="$1" '$0 ~ f && !done { gsub(",", "", $1); print $1; done = 1 }'; }
tn=$(total tn) ts=$(total ts) tb=$(total tb)
# WAL bytes per insert: the insert position before and after each run
# (the single-user backend prints them)
lsn() { sed -n "s/.*$2 = \"\([0-9A-F]*\/[0-9A-F]*\)\".*/\1/p" "$SIMHASH_TMP/single_$1.log" | head -1; }
walper() { [ -f "$SIMHASH_TMP/cg_$1.out" ] || { echo -; return; }; sql -A -t -c "SELECT round(pg_wal_lsn_diff('$(lsn "$1" wal_after)', '$(lsn "$1" wal_before)') / $M)"; }
echo "instructions per single-row insert ($M inserts, $N rows loaded, postgres --single under callgrind):"
awk -v a="$tn" -v b="$ts" -v m="$M" 'BEGIN { printf "  without index %.0f, with simhash %.0f: %.2fx (the index: %.0f)\n", a / m, b / m, a / b, (b - a) / m }'
awk -v a="$tn" -v b="$tb" -v m="$M" 'BEGIN { printf "  reference, a btree on h::bigint: %.0f: %.2fx (the index: %.0f)\n", b / m, a / b, (b - a) / m }'
echo "  WAL bytes per insert: without index $(walper tn), with simhash $(walper ts), btree $(walper tb)"
for f in ':simhash_insert ' ':simhash_pending_append ' ':GenericXLogFinish ' ':log_newpage_buffer ' ':simhash_flush_and_merge '; do
	v=$(incl "$f")
	awk -v v="${v:-0}" -v m="$M" -v f="${f//[: ]/}" 'BEGIN { printf "  %s: %.0f per insert\n", f, v / m }'
done
echo "  WAL of the simhash run by record type, bytes per insert (pg_waldump --stats=record):"
as_cluster_user "$PGBIN/pg_waldump" -p "$SIMHASH_TMP/data/pg_wal" -s "$(lsn ts wal_before)" -e "$(lsn ts wal_after)" \
	--stats=record 2>/dev/null |
	awk -v m="$M" '$1 ~ /\// { gsub(/\([^)]*\)/, ""); if ($2 > 0) printf "    %-24s %5.2f records, %5.0f bytes (records %.0f, page images %.0f)\n", $1, $2 / m, $5 / m, $3 / m, $4 / m }' |
	sort -k4 -n -r | head -8
echo "  the simhash run's costliest functions (inclusive), instructions per insert:"
callgrind_annotate --inclusive=yes "$SIMHASH_TMP/cg_ts.out" 2>/dev/null |
	awk -v m="$M" '/:simhash_|:GenericXLog|:log_newpage|:XLogInsert|:LWLockAcquire|:ReadBufferExtended|:GetRecordedFreeSpace|:heap_insert|:index_insert|:CommitTransactionCommand/ {
		c = $1; gsub(",", "", c); n = $0; sub(/^[^)]*\) +/, "", n); sub(/ .*/, "", n); sub(/^.*:/, "", n)
		if ($0 !~ /=>/ && c / m >= 200 && !seen[n]++) printf "    %8.0f %s\n", c / m, n }' | head -25
