#!/usr/bin/env bash
# bench/scale.sh: how the cost of every operation grows with the table, in
# one run over several sizes on the same generator:
#   bench/scale.sh 1000000 10000000 100000000
#   (default 1000000 10000000; SCALE_TXNS=20000 pgbench transactions per
#   client count; SIMHASH_TMPROOT=/big/disk for the cluster and the COPY file;
#   SCALE_PARTS="lookups dedup joins cancel inserts vacuum", the default,
#   or some of them; SCALE_BUILDS="0 2", the parallel workers of the
#   measured CREATE INDEX builds, the last one kept)
# In pieces: SCALE_CLUSTER=DIR keeps the cluster (a link DIR to its
# directory) and each size's database between runs; a later run with the
# same DIR reuses a database that has its table and index (load and index
# are then not measured again) and adds its parts to the same table, a
# part measured again replacing its figures.  Inserts and vacuum change the
# table: run them last.  rm -rf "$(readlink -f DIR)" DIR when done.
# Data for each N (fixed seeds, the rows of bench/planted_docs.sql, written
# by bench/gen_docs.c as binary COPY files; bench/gen_docs_check.sh compares
# the two): ids 1 .. 0.99 N have h = simhash_hash(id::text) (random); the
# other 1% are copies of a pseudo-randomly chosen earlier row with (id % 4)
# bits flipped (0 .. 3).  Every size gets a database of its own in one
# cluster (shared_buffers 2GB, fsync off, autovacuum off, jit off).
# Measured for each N, each statement in a
# fresh connection through bench/jobs.sh (time: psql \timing; peak: the
# server processes' anonymous memory above the start; temp: temp_bytes):
#   load          COPY docs FROM the file (FORMAT binary)
#   index 0w/2w   CREATE INDEX ... USING simhash (h) with 0 and 2 parallel
#                 workers (maintenance_work_mem 1GB; simhash.parallel_min_rows
#                 1000 for 2w), size in bytes per row
#   r3/r6 cold    radius-3 and radius-6 lookups (h <~> q <= r), 1,000
#                 queries (500 planted rows' fingerprints, 500 random), one
#                 pass after a restart with the OS cache dropped (when
#                 /proc/sys/vm/drop_caches is writable; the report says);
#                 the later queries find pages the earlier ones read
#   r3/r6 warm    the same after a warm-up pass; median and p99 of the
#                 Execution Time of EXPLAIN (ANALYZE, BUFFERS, TIMING OFF),
#                 and the median of shared buffers touched (hit + read)
#   knn           ORDER BY h <~> q LIMIT 10, 200 queries (SCALE_KNN_QUERIES), warm
#   pairs/groups  simhash_pairs and simhash_groups (k = 3), with
#                 maintenance_work_mem of 128 bytes a row (in memory, at
#                 least 64MB, at most 8GB) and of 8 bytes a row (spilling)
#   join 1M       SELECT count(*) FROM news n JOIN docs c ON c.h <~> n.h <= 3,
#                 1M new rows (half 2 bits from a corpus row), work_mem 40
#                 bytes per input row; the plan's join node is noted
#   self-join     SELECT count(*) FROM docs a JOIN docs b ON a.h <~> b.h <= 3
#                 AND a.id < b.id, work_mem 40 bytes a row
#   self-join 4MB the same at work_mem 4MB (the default: rows in temporary
#                 files), the planner's choice (the index docs_h exists, 2
#                 workers allowed); both self-joins' notes give their time
#                 against pairs mem's at the same N (with part dedup)
#   cancel        the long jobs again with statement_timeout 2s: the time
#                 from the timeout to the error
#   inserts       pgbench single-row inserts into docs (with the index),
#                 1 and 2 clients, SCALE_TXNS transactions each
#   vacuum        VACUUM docs after DELETE of 10% (id % 10 = 0)
# Each job's note gives the kernel's share of its CPU time.  Most of it is
# the first touch of the job's fresh memory, and on a virtual machine with
# free page reporting (virtio_balloon; "Free page reporting enabled" in
# dmesg) that depends on what ran before: memory freed seconds earlier is
# still the guest's (about 0.15 s of system time a GB with transparent huge
# pages), memory given back to the host costs about 3.5 s a GB.  A job
# whose growth factor rests on its kernel share measured that, not itself.
# The report (stdout and bench/data/scale_report.txt) is one table: each
# operation at each N, its cost per row (ns per row of the corpus; per
# query for lookups, per insert for inserts) and the growth factor of that
# cost against the first N and the previous N.  The table is printed after
# every N, so a run stopped early keeps what it measured.
set -euo pipefail
source "$(dirname "$0")/../test/lib.sh"
source "$(dirname "$0")/jobs.sh"
cd "$SIMHASH_ROOT"

SIZES=${*:-"1000000 10000000"}
for n in $SIZES; do
	if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 100000 ]; then
		say "usage: bench/scale.sh [rows ...] (each at least 100000; default 1000000 10000000)"
		exit 2
	fi
done
TXNS=${SCALE_TXNS:-20000}
KNNQ=${SCALE_KNN_QUERIES:-200}
PARTS=" ${SCALE_PARTS:-lookups dedup joins cancel inserts vacuum} "
BUILDS=${SCALE_BUILDS:-0 2}
for w in $BUILDS; do
	[[ $w =~ ^[0-9]$ ]] || { say "SCALE_BUILDS: parallel worker counts 0 .. 9, not '$w'"; exit 2; }
done
part() { [[ $PARTS == *" $1 "* ]]; }
REPORT=bench/data/scale_report.txt
mkdir -p bench/data
T0=$(date +%s)
STARTED=$(date -u '+%Y-%m-%d %H:%M UTC')
step() { say "[scale.sh $(($(date +%s) - T0))s] $*"; }
sql() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

ensure_packages
build_install
SETTINGS=("shared_buffers = '2GB'" "jit = off" "autovacuum = off" "max_wal_size = '4GB'"
	"checkpoint_timeout = '1h'" "maintenance_work_mem = '1GB'" "max_parallel_maintenance_workers = 2"
	"max_connections = 20" "log_min_messages = 'warning'")
if [ -z "${SCALE_CLUSTER:-}" ]; then
	start_cluster "${SETTINGS[@]}"
elif [ -L "$SCALE_CLUSTER" ]; then
	# the kept cluster: started again, kept at exit
	export SIMHASH_KEEP=1 SIMHASH_TMP
	SIMHASH_TMP=$(readlink -f "$SCALE_CLUSTER")
	as_cluster_user "$PGBIN/pg_ctl" -D "$SIMHASH_TMP/data" -l "$SIMHASH_TMP/server.log" -w start >/dev/null
	export PGHOST=$SIMHASH_TMP PGUSER=postgres PGDATABASE=postgres
	PGPORT=$(sed -n "s/^port = \([0-9]*\)$/\1/p" "$SIMHASH_TMP/data/postgresql.conf" | tail -1)
	export PGPORT
	trap stop_cluster EXIT
else
	export SIMHASH_KEEP=1
	start_cluster "${SETTINGS[@]}"
	ln -s "$SIMHASH_TMP" "$SCALE_CLUSTER"
fi
cc -O2 -Wall -Werror -Isrc -o "$SIMHASH_TMP/gen_docs" bench/gen_docs.c src/core/tokenizer.c
if (echo 3 >/proc/sys/vm/drop_caches) 2>/dev/null; then
	COLD="after a restart, OS cache dropped"
else
	COLD="after a restart, OS cache NOT dropped (no permission)"
fi
restart_cold() {
	as_cluster_user "$PGBIN/pg_ctl" -D "$SIMHASH_TMP/data" -l "$SIMHASH_TMP/server.log" -m fast -w restart >/dev/null
	sync
	(echo 3 >/proc/sys/vm/drop_caches) 2>/dev/null || true
}
sql -d postgres <<'SQL'
CREATE TABLE IF NOT EXISTS res (n bigint, o int, op text, ms float8, basis text, peak_kb bigint, temp_bytes bigint, note text, cpu_ms float8);
SQL
O=$(sql -d postgres -At -c "SELECT coalesce(max(o), 0) FROM res")
# record N OP MS BASIS PEAK_KB TEMP_BYTES NOTE [CPU_MS] (BASIS: row, query or insert)
record() {
	O=$((O + 1))
	psql -X -q -d postgres -v ON_ERROR_STOP=1 -v n="$1" -v o="$O" -v op="$2" -v ms="$3" -v basis="$4" \
		-v kb="$5" -v tb="$6" -v note="$7" -v cpu="${8:-NULL}" \
		<<<"DELETE FROM res WHERE n = :n AND op = :'op'; INSERT INTO res VALUES (:n, :o, :'op', :ms, :'basis', :kb, :tb, nullif(:'note', ''), :cpu)"
}
# measured N OP BASIS SETTINGS QUERY [NOTE]: one job, recorded
measured() {
	local n=$1 op=$2 basis=$3 settings=$4 query=$5 note=${6:-} t0 t1 ms kb cpu sys out
	step "N=$n: $op"
	t0=$(temp_bytes)
	read -r ms kb cpu out < <(job "$settings" "$query")
	sys=$(cat "$SIMHASH_TMP/job.sys_ms")
	sleep 0.6
	t1=$(temp_bytes)
	case $out in ERROR*) say "  $out"; note="${note:+$note; }$out" ;; esac
	# the kernel's share: mostly first touches of fresh memory (see the header)
	if [ "$cpu" -gt 0 ]; then
		note="${note:+$note, }kernel $((100 * sys / cpu))% of cpu"
	fi
	say "  $ms ms, cpu $cpu ms (kernel $sys), peak $((kb / 1024)) MB, temp $(((t1 - t0) / 1048576)) MB: $out"
	record "$n" "$op" "$ms" "$basis" "$kb" "$((t1 - t0))" "$note" "$cpu"
	LAST_RESULT=$out
}
mb() { echo "$(( ($1 + 1048575) / 1048576 ))MB"; }

print_table() {
	sql -d postgres -v load="$(cut -d' ' -f1-3 /proc/loadavg)" <<'SQL'
\pset footer off
\pset null ''
WITH c AS (
	SELECT *, CASE basis WHEN 'row' THEN ms * 1e6 / n ELSE ms END AS cost,
	       cpu_ms * 1e6 / n AS cpu_cost FROM res
), g AS (
	SELECT c.*,
	       cost / first_value(cost) OVER w AS vs_first,
	       cost / lag(cost) OVER w AS vs_prev,
	       cpu_cost / nullif(lag(cpu_cost) OVER w, 0) AS cpu_vs_prev
	FROM c WINDOW w AS (PARTITION BY op ORDER BY n)
)
SELECT op, to_char(n, 'FM999,999,999') AS n, round(ms::numeric, CASE WHEN ms < 10 THEN 3 ELSE 0 END) AS ms,
       round(cost::numeric, CASE WHEN cost < 10 THEN 3 ELSE 1 END) || CASE basis WHEN 'row' THEN ' ns/row' WHEN 'query' THEN ' ms/query' ELSE ' ms/insert' END AS cost,
       round(vs_first::numeric, 2) AS "x first N", round(vs_prev::numeric, 2) AS "x prev N",
       CASE WHEN vs_prev > 1.5 THEN '<<' END AS "!",
       round(cpu_cost::numeric, 1) AS "cpu ns/row", round(cpu_vs_prev::numeric, 2) AS "cpu x prev N",
       round(peak_kb / 1024.0) AS peak_mb, round(temp_bytes / 1048576.0) AS temp_mb, note
FROM g ORDER BY min(o) OVER (PARTITION BY op), n;
SQL
	echo "load average now: $(cut -d' ' -f1-3 /proc/loadavg); cost: ns per row of the corpus (join 1M: per row of corpus + 1M),"
	echo "ms per query (lookups: the median or p99 of 1,000; knn: of $KNNQ), ms per insert (1 / rows per second per client);"
	echo "x first N, x prev N: the cost against the first and the previous N (!: above 1.5); cpu: the server's CPU time"
	echo "(backend and workers; less sensitive to the load than ms) per row, and its growth; peak_mb: server processes'"
	echo "anonymous memory above the start (bench/jobs.sh); temp_mb: temporary file bytes (pg_stat_database)"
}

for N in $SIZES; do
	DB=s$N
	ORIG=$((N * 99 / 100))
	COPYFILE=$SIMHASH_TMP/docs_$N.copy
	export PGDATABASE=$DB
	if [ "$(sql -d postgres -At -c "SELECT count(*) FROM pg_database WHERE datname = '$DB'")" = 1 ] &&
		[ "$(sql -At -c "SELECT to_regclass('docs_h') IS NOT NULL")" = t ]; then
		step "N=$N: database $DB kept from an earlier run (its table and index)"
	else
		step "N=$N: generating (bench/gen_docs.c, $((N - ORIG)) planted)"
		sql -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
		"$SIMHASH_TMP/gen_docs" "$N" "$ORIG" "$COPYFILE" "$SIMHASH_TMP/queries.copy" "$SIMHASH_TMP/news.copy"
		sql <<SQL
CREATE EXTENSION simhash;
CREATE TABLE docs (id bigint, h simhash64);
-- lookups: 500 planted rows' fingerprints, 500 random ones
CREATE TABLE queries (qid bigint, q simhash64);
COPY queries FROM '$SIMHASH_TMP/queries.copy' (FORMAT binary);
-- 1M new rows: every other one 2 bits from a corpus row, the others random
CREATE TABLE news (id int, h simhash64);
COPY news FROM '$SIMHASH_TMP/news.copy' (FORMAT binary);
VACUUM ANALYZE news;
CREATE TABLE lat (label text, qid bigint, ms float8, bufs bigint, nrows bigint);
-- one pass of lookups: radius r, or (r = NULL) ORDER BY h <~> q LIMIT 10
CREATE FUNCTION lookups(label text, r int, nq int) RETURNS void LANGUAGE plpgsql AS \$\$
DECLARE x record; j json;
BEGIN
	FOR x IN SELECT qid, q FROM queries WHERE qid <= nq ORDER BY qid LOOP
		IF r IS NULL THEN
			EXECUTE format('EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) SELECT id FROM docs ORDER BY h <~> %L LIMIT 10', x.q) INTO j;
		ELSE
			EXECUTE format('EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) SELECT id FROM docs WHERE h <~> %L <= %s', x.q, r) INTO j;
		END IF;
		IF label IS NOT NULL THEN
			INSERT INTO lat VALUES (label, x.qid, (j -> 0 ->> 'Execution Time')::float8,
				(j -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::bigint + (j -> 0 -> 'Plan' ->> 'Shared Read Blocks')::bigint,
				(j -> 0 -> 'Plan' ->> 'Actual Rows')::bigint);
		END IF;
	END LOOP;
END \$\$;
SQL
		rm -f "$SIMHASH_TMP/queries.copy" "$SIMHASH_TMP/news.copy"
		COPYMB=$(( $(stat -c %s "$COPYFILE") / 1048576 ))
		measured "$N" "load (COPY)" row "" "COPY docs FROM '$COPYFILE' (FORMAT binary)" "file $COPYMB MB"
		sql -c "VACUUM (FREEZE, ANALYZE) docs"
		rm -f "$COPYFILE"

		for w in $BUILDS; do
			sql -c "DROP INDEX IF EXISTS docs_h"
			measured "$N" "index ${w}w" row "SET max_parallel_maintenance_workers = $w; SET simhash.parallel_min_rows = $((w == 0 ? 0 : 1000));" \
				"CREATE INDEX docs_h ON docs USING simhash (h)"
			BYTES=$(sql -At -c "SELECT pg_relation_size('docs_h')")
			sql -d postgres -c "UPDATE res SET note = 'index $(echo "scale=1; $BYTES / $N" | bc) B/row, $((BYTES / 1048576)) MB' WHERE n = $N AND op = 'index ${w}w'"
		done
		sql -c "ANALYZE docs"
	fi

	# maintenance_work_mem of the dedup jobs (in memory, spilling), work_mem of the joins
	# (simhash_groups' connected linkage needs about 5.5 bytes a row at least)
	MEM=$(( N * 128 < 67108864 ? 67108864 : (N * 128 > 8589934592 ? 8589934592 : N * 128) ))
	SPILL=$(( N * 8 < 1048576 ? 1048576 : N * 8 ))
	WMJ=$(mb $(( (N + 1000000) * 40 )))
	WMS=$(mb $(( N * 40 )))

	if part lookups; then
		# lookups: cold (each radius after its own restart), then warm
		sql -c "TRUNCATE lat"
		for r in 3 6; do
			step "N=$N: r$r cold ($COLD)"
			restart_cold
			sql -o /dev/null -c "SELECT lookups('r$r cold', $r, 1000)"
		done
		step "N=$N: lookups warm"
		sql -o /dev/null -c "SELECT lookups(NULL, 3, 1000)" -c "SELECT lookups('r3 warm', 3, 1000)" \
			-c "SELECT lookups(NULL, 6, 1000)" -c "SELECT lookups('r6 warm', 6, 1000)" \
			-c "SELECT lookups(NULL, NULL, $KNNQ)" -c "SELECT lookups('knn warm', NULL, $KNNQ)"
		while IFS='|' read -r label med p99 bufs rows; do
			record "$N" "$label median" "$med" query 0 0 "buffers $bufs (median), rows $rows (mean)"
			record "$N" "$label p99" "$p99" query 0 0 ""
		done < <(sql -At -c "SELECT label, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms), percentile_cont(0.99) WITHIN GROUP (ORDER BY ms),
			percentile_cont(0.5) WITHIN GROUP (ORDER BY bufs), round(avg(nrows), 2) FROM lat GROUP BY label
			ORDER BY label ~ 'knn', label ~ 'warm', label")
	fi

	if part dedup; then
		# dedup jobs in memory and spilling
		for m in "mem:$MEM" "spill:$SPILL"; do
			measured "$N" "pairs ${m%%:*}" row "SET maintenance_work_mem = '$(mb "${m#*:}")';" \
				"SELECT count(*) FROM simhash_pairs('docs', 'id', 'h', 3)" "mwm $(mb "${m#*:}")"
			sql -d postgres -c "UPDATE res SET note = note || ', $LAST_RESULT pairs' WHERE n = $N AND op = 'pairs ${m%%:*}'"
			measured "$N" "groups ${m%%:*}" row "SET maintenance_work_mem = '$(mb "${m#*:}")';" \
				"SELECT count(*) FROM simhash_groups('docs', 'id', 'h', 3) WHERE id <> group_id" "mwm $(mb "${m#*:}")"
		done
	fi

	if part joins; then
		# radius joins
		PLAN=$(sql -At -c "SET work_mem = '$WMJ'" -c "EXPLAIN (COSTS OFF) SELECT count(*) FROM news n JOIN docs c ON c.h <~> n.h <= 3" |
			grep -oE 'Simhash[A-Za-z ]*Join|Nested Loop|Hash Join|Merge Join' | head -1)
		measured "$N" "join 1M" row "SET work_mem = '$WMJ';" \
			"SELECT count(*) FROM news n JOIN docs c ON c.h <~> n.h <= 3" "work_mem $WMJ, ${PLAN:-?}"
		sql -d postgres -c "UPDATE res SET ms = ms * $N / ($N + 1000000.0), note = note || ', $LAST_RESULT rows (ms scaled by N / (N + 1M))' WHERE n = $N AND op = 'join 1M'"
		PLAN=$(sql -At -c "SET work_mem = '$WMS'" -c "EXPLAIN (COSTS OFF) SELECT count(*) FROM docs a JOIN docs b ON a.h <~> b.h <= 3 AND a.id < b.id" |
			grep -oE 'Simhash[A-Za-z ]*Join|Nested Loop|Hash Join|Merge Join' | head -1)
		measured "$N" "self-join" row "SET work_mem = '$WMS';" \
			"SELECT count(*) FROM docs a JOIN docs b ON a.h <~> b.h <= 3 AND a.id < b.id" "work_mem $WMS, ${PLAN:-?}"
		sql -d postgres -c "UPDATE res SET note = note || ', $LAST_RESULT pairs' WHERE n = $N AND op = 'self-join'"
		# the same at the default work_mem (its rows in temporary files), the planner's
		# choice among the radius join and the (parallel) index nested loop over docs_h
		PLAN=$(sql -At -c "SET work_mem = '4MB'" -c "EXPLAIN (COSTS OFF) SELECT count(*) FROM docs a JOIN docs b ON a.h <~> b.h <= 3 AND a.id < b.id" |
			grep -oE 'Gather|Simhash[A-Za-z ]*Join|Nested Loop|Hash Join|Merge Join' | head -2 | paste -sd' ')
		measured "$N" "self-join 4MB" row "SET work_mem = '4MB';" \
			"SELECT count(*) FROM docs a JOIN docs b ON a.h <~> b.h <= 3 AND a.id < b.id" "work_mem 4MB, ${PLAN:-?}"
		sql -d postgres -c "UPDATE res SET note = note || ', $LAST_RESULT pairs' WHERE n = $N AND op = 'self-join 4MB'"
		# both self-joins against simhash_pairs in memory (part dedup) at the same N
		sql -d postgres -c "UPDATE res r SET note = r.note || ', ' || round((r.ms / p.ms)::numeric, 2) || 'x pairs mem'
			FROM res p WHERE p.n = r.n AND p.op = 'pairs mem' AND r.n = $N AND r.op IN ('self-join', 'self-join 4MB')"
	fi

	if part cancel; then
		# cancellation: statement_timeout 2s; the time past it until the error
		while IFS='|' read -r op settings query; do
			step "N=$N: cancel $op"
			read -r ms kb _ out < <(job "SET statement_timeout = '2s'; $settings" "$query")
			if [[ $out == *"statement timeout"* ]]; then
				record "$N" "cancel: $op" "$(echo "$ms - 2000" | bc)" query "$kb" 0 "ms after the 2 s timeout"
			else
				record "$N" "cancel: $op" "NULL" query "$kb" 0 "finished in $ms ms, before the timeout: $out"
			fi
		done <<-EOF
	index 2w|SET max_parallel_maintenance_workers = 2; SET simhash.parallel_min_rows = 1000;|CREATE INDEX docs_c ON docs USING simhash (h)
	pairs spill|SET maintenance_work_mem = '$(mb "$SPILL")';|SELECT count(*) FROM simhash_pairs('docs', 'id', 'h', 3)
	groups spill|SET maintenance_work_mem = '$(mb "$SPILL")';|SELECT count(*) FROM simhash_groups('docs', 'id', 'h', 3)
	join 1M|SET work_mem = '$WMJ';|SELECT count(*) FROM news n JOIN docs c ON c.h <~> n.h <= 3
	self-join|SET work_mem = '$WMS';|SELECT count(*) FROM docs a JOIN docs b ON a.h <~> b.h <= 3 AND a.id < b.id
	EOF
		sql -c "DROP INDEX IF EXISTS docs_c"
	fi

	if part inserts; then
		# inserts with the index, 1 and 2 clients
		cat >"$SIMHASH_TMP/ins.sql" <<-'EOSQL'
	\set a random(0, 4294967295)
	\set b random(0, 4294967295)
	INSERT INTO docs (id, h) VALUES (0, ((:a::bigint << 32) | :b)::simhash64);
	EOSQL
		for c in 1 2; do
			step "N=$N: inserts, $c clients"
			sql -c "CHECKPOINT"
			out=$(pgbench -n -c "$c" -j "$c" -t "$((TXNS / c))" --random-seed=$((c * 1000)) -f "$SIMHASH_TMP/ins.sql" 2>&1) ||
				{ say "$out"; exit 1; }
			tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' <<<"$out")
			record "$N" "inserts ${c}c" "$(echo "1000 * $c / $tps" | bc -l)" insert 0 0 "$(printf '%.0f' "$tps") rows/s"
		done
	fi

	if part vacuum; then
		step "N=$N: DELETE 10%"
		sql -c "DELETE FROM docs WHERE id % 10 = 0"
		measured "$N" "vacuum" row "" "VACUUM docs"
		sql -d postgres -c "UPDATE res SET note = 'after DELETE of 10%; index $(sql -At -c "SELECT pg_relation_size('docs_h') / 1048576") MB' WHERE n = $N AND op = 'vacuum'"
	fi

	export PGDATABASE=postgres
	[ -n "${SCALE_CLUSTER:-}" ] || sql -c "DROP DATABASE $DB"
	{
		echo "bench/scale.sh $SIZES (started $STARTED; this table after N = $N, $(($(date +%s) - T0)) s)"
		echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GB; $("$PGBIN/postgres" --version); git $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src sql || echo ' + changes')"
		echo "cluster: shared_buffers 2GB, fsync off, autovacuum off, maintenance_work_mem 1GB; cold = $COLD"
		print_table
	} | tee "$REPORT"
done
step "done: $REPORT"
