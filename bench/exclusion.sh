#!/usr/bin/env bash
# bench/exclusion.sh: what a near-duplicate exclusion constraint costs an
# insert, in one run:
#   bench/exclusion.sh            N = 1,000,000 rows loaded first
#   bench/exclusion.sh 10000000   a larger table
# Three tables of the same N random rows (h = simhash_hash(id::text)):
#   ts  CREATE INDEX USING simhash (h): the plain index, no constraint
#   te  EXCLUDE USING simhash (simhash_ball(h, 3) WITH &&), inserted into by
#       plain INSERTs and by INSERT ... ON CONFLICT DO NOTHING
#   tw  the plain index, inserted into by INSERT ... WHERE NOT EXISTS (a row
#       within 3 bits): wrong under concurrency, shown for its cost only
# pgbench single-row inserts of random fingerprints (one row per
# transaction, fixed --random-seed) at 1 and 4 clients, EXCL_TXNS
# (default 20000) transactions per client count and run, each variant
# twice, alternately, after a CHECKPOINT; the better run counts.  Prints
# rows/s and the ratios to ts (target for te: >= 0.8x), and, less
# sensitive to the machine's load, the backend's CPU time per row at one
# client (EXCL_CPU_ROWS rows, default 10000, from /proc/self/stat); then
# checks that te holds no pair within 3 bits (simhash_pairs) and its index
# is sound.
set -euo pipefail
source "$(dirname "$0")/../test/lib.sh"
cd "$SIMHASH_ROOT"

N=${1:-1000000}
TXNS=${EXCL_TXNS:-20000}
source bench/insert_server.sh
insert_server exclusion.sh "$N"

say "[exclusion.sh] loading $N rows into three tables; uptime: $(uptime)"
t0=$(date +%s.%N)
sql -v N="$N" >/dev/null <<'SQL'
CREATE EXTENSION simhash;
CREATE TABLE ts (id bigserial, h simhash64);
INSERT INTO ts (h) SELECT simhash_hash(g::text)::simhash64 FROM generate_series(1, :N) g;
CREATE TABLE te (LIKE ts INCLUDING DEFAULTS);
ALTER TABLE te ALTER COLUMN id SET DEFAULT nextval(pg_get_serial_sequence('ts', 'id'));
INSERT INTO te SELECT * FROM ts;
CREATE TABLE tw (LIKE ts INCLUDING DEFAULTS);
INSERT INTO tw SELECT * FROM ts;
CREATE INDEX ts_h ON ts USING simhash (h);
CREATE INDEX tw_h ON tw USING simhash (h);
SQL
t1=$(date +%s.%N)
sql -c "ALTER TABLE te ADD CONSTRAINT te_near EXCLUDE USING simhash (simhash_ball(h, 3) WITH &&)"
t2=$(date +%s.%N)
sql -c "CREATE INDEX te_plain ON te USING simhash (h)" -c "DROP INDEX te_plain"
t3=$(date +%s.%N)
sql >/dev/null <<'SQL'
VACUUM (FREEZE, ANALYZE) ts;
VACUUM (FREEZE, ANALYZE) te;
VACUUM (FREEZE, ANALYZE) tw;
CREATE TABLE res (variant text, clients int, rep int, txns int, tps float8);
SQL
say "[exclusion.sh] ADD CONSTRAINT over $N rows: $(awk "BEGIN { printf \"%.1f\", $t2 - $t1 }") s; CREATE INDEX of the plain index on the same rows: $(awk "BEGIN { printf \"%.1f\", $t3 - $t2 }") s"

value='((:a::bigint << 32) | :b)::simhash64'
for v in ts te te_oc tw; do
	{
		echo '\set a random(0, 4294967295)'
		echo '\set b random(0, 4294967295)'
		case $v in
		ts | te) echo "INSERT INTO $v (h) VALUES ($value);" ;;
		te_oc) echo "INSERT INTO te (h) VALUES ($value) ON CONFLICT DO NOTHING;" ;;
		tw) echo "INSERT INTO tw (h) SELECT x.v FROM (VALUES ($value)) x(v) WHERE NOT EXISTS (SELECT 1 FROM tw WHERE tw.h <~> x.v <= 3);" ;;
		esac
	} >"$WORK/$v.sql"
done

for c in 1 4; do
	for rep in 1 2; do
		for v in ts te te_oc tw; do
			pgbench_run exclusion.sh "$v" "$c" "$rep" "$TXNS"
		done
	done
done

# CPU time per row in the backend, one client: less sensitive to the load
# of the machine than rows/s; the same single-row INSERT statements (one
# row per transaction) from psql, the backend's utime + stime read from
# /proc/self/stat before and after (clock ticks, CLK_TCK 100 assumed);
# each variant twice, alternately
cpu_ticks_function
sql -c "CREATE TABLE cpu (variant text, rep int, rows int, ticks bigint)"
CPU_ROWS=${EXCL_CPU_ROWS:-10000}
for rep in 1 2; do
	for v in ts te te_oc tw; do
		sql -A -t -c "SELECT format(CASE '$v'
			WHEN 'te_oc' THEN 'INSERT INTO te (h) VALUES (%L) ON CONFLICT DO NOTHING;'
			WHEN 'tw' THEN 'INSERT INTO tw (h) SELECT x.v FROM (VALUES (%L::simhash64)) x(v) WHERE NOT EXISTS (SELECT 1 FROM tw WHERE tw.h <~> x.v <= 3);'
			ELSE 'INSERT INTO $v (h) VALUES (%L);' END, simhash_hash('cpu $v $rep ' || g)::simhash64)
			FROM generate_series(1, $CPU_ROWS) g" -o "$WORK/cpu_${v}_$rep.sql"
	done
done
for rep in 1 2; do
	for v in ts te te_oc tw; do
		sql -c "CHECKPOINT"
		{
			echo "SELECT cpu_ticks() AS t0 \\gset"
			cat "$WORK/cpu_${v}_$rep.sql"
			echo "INSERT INTO cpu SELECT '$v', $rep, $CPU_ROWS, cpu_ticks() - :t0;"
		} | sql >/dev/null
	done
done

sql -A -t -F ' ' <<'SQL'
SELECT format('backend CPU per row, 1 client (utime + stime, best of 2): plain index %s µs; constraint %s µs: %s×; constraint, ON CONFLICT DO NOTHING %s µs: %s×; WHERE NOT EXISTS %s µs: %s× (as rows/s ratios)',
	round(a, 1), round(b, 1), round(a / b, 2), round(c, 1), round(a / c, 2), round(d, 1), round(a / d, 2))
FROM (SELECT min(ticks * 1e6 / 100 / rows) FILTER (WHERE variant = 'ts') AS a,
             min(ticks * 1e6 / 100 / rows) FILTER (WHERE variant = 'te') AS b,
             min(ticks * 1e6 / 100 / rows) FILTER (WHERE variant = 'te_oc') AS c,
             min(ticks * 1e6 / 100 / rows) FILTER (WHERE variant = 'tw') AS d FROM cpu) x;
\echo 'pgbench single-row inserts of random fingerprints, rows/s: the better of two runs (the other), and the ratio to the plain index'
SELECT format('%s clients: plain index %s (%s); constraint %s (%s): %s×; constraint, ON CONFLICT DO NOTHING %s (%s): %s×; WHERE NOT EXISTS %s (%s): %s×',
	clients,
	round(max(tps) FILTER (WHERE variant = 'ts')), round(min(tps) FILTER (WHERE variant = 'ts')),
	round(max(tps) FILTER (WHERE variant = 'te')), round(min(tps) FILTER (WHERE variant = 'te')),
	round((max(tps) FILTER (WHERE variant = 'te') / max(tps) FILTER (WHERE variant = 'ts'))::numeric, 2),
	round(max(tps) FILTER (WHERE variant = 'te_oc')), round(min(tps) FILTER (WHERE variant = 'te_oc')),
	round((max(tps) FILTER (WHERE variant = 'te_oc') / max(tps) FILTER (WHERE variant = 'ts'))::numeric, 2),
	round(max(tps) FILTER (WHERE variant = 'tw')), round(min(tps) FILTER (WHERE variant = 'tw')),
	round((max(tps) FILTER (WHERE variant = 'tw') / max(tps) FILTER (WHERE variant = 'ts'))::numeric, 2))
FROM res GROUP BY clients ORDER BY clients;
SELECT format('goal (constraint / plain index, plain INSERTs): %s× at 1 client, %s× at 4 clients (target ≥ 0.8×)',
	round((max(tps) FILTER (WHERE variant = 'te' AND clients = 1) / max(tps) FILTER (WHERE variant = 'ts' AND clients = 1))::numeric, 2),
	round((max(tps) FILTER (WHERE variant = 'te' AND clients = 4) / max(tps) FILTER (WHERE variant = 'ts' AND clients = 4))::numeric, 2))
FROM res;
SELECT format('check: te has %s rows, %s pairs within 3 bits (simhash_pairs); simhash_index_check %s',
	(SELECT count(*) FROM te), (SELECT count(*) FROM simhash_pairs('te', 'id', 'h', 3)),
	coalesce(nullif(simhash_index_check('te_near', true)::text, ''), 'ok'));
SQL
say "[exclusion.sh] done; uptime: $(uptime)"
