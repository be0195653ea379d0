#!/usr/bin/env bash
# bench/churn.sh: the simhash index under churn.
#
#   bench/churn.sh goal [rows] [seed]
#     The goal's exact measurement, in one command: load `rows` rows (default
#     1000000), CREATE INDEX, insert `rows` more one per transaction
#     (pgbench, one client), DELETE 10% of the rows, VACUUM, and compare the
#     index's size with a fresh CREATE INDEX of the same rows (both builds in
#     memory: maintenance_work_mem = 1GB).  Also checks
#     simhash_index_check(heapallindexed) and 50 lookups against a sequential
#     reference.  Its last line is exactly
#       goal 2 (churn): <x>× fresh (goal ≤ 1.2×): met|not met
#     (bench/index.sh's summary reads it).  Report: bench/data/churn_goal.txt.
#
#   bench/churn.sh [seconds] [rows] [seed]
#     A churn soak:
#     seconds  how long the churn runs (default 1200: 20 minutes)
#     rows     rows loaded before CREATE INDEX (default 100000)
#     seed     fixed seed of every choice (default 1): the same arguments
#              give the same statements in the same order
# Rounds until the time is up, each: 2,000 single-row INSERTs (one
# transaction each: pending-list flushes and merges), DELETE of about 1% of
# the rows and UPDATE of about 1% (new fingerprints), VACUUM every 3rd
# round, and 40 lookups at radius 0..6 (index scan, bitmap scan and a
# sequential reference in one snapshot: a difference stops the run with an
# error).  Reported per round: elapsed time, rows, index size and bytes per
# row; at the end, simhash_index_check(heapallindexed) and the size against
# a fresh CREATE INDEX on the same rows (goal: at most 1.2 after VACUUM).
# The report goes to stdout and to bench/data/churn_report.txt.
set -euo pipefail
source "$(dirname "$0")/../test/lib.sh"
cd "$SIMHASH_ROOT"

if [ "${1:-}" = goal ]; then
	ROWS=${2:-1000000}
	SEED=${3:-1}
	for v in "$ROWS" "$SEED"; do
		[[ $v =~ ^[0-9]+$ ]] || { say "usage: bench/churn.sh goal [rows] [seed]"; exit 2; }
	done
	REPORT=bench/data/churn_goal.txt
	ensure_packages
	build_install
	start_cluster "shared_buffers = '512MB'" "autovacuum = off" "max_wal_size = '8GB'" \
		"max_parallel_workers_per_gather = 0" "jit = off" "maintenance_work_mem = '1GB'"
	psql() { "$PGBIN/psql" "$@"; }
	sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }
	T0=$(date +%s)
	sql -v rows="$ROWS" -v seed="$SEED" >/dev/null <<'SQL'
CREATE EXTENSION simhash;
CREATE TABLE t (id bigint PRIMARY KEY, h simhash64);
SELECT format('CREATE FUNCTION fp(id bigint) RETURNS simhash64 LANGUAGE sql IMMUTABLE
	AS $$ SELECT simhash_hash(%L || id)::simhash64 $$', :'seed' || ':') \gexec
INSERT INTO t SELECT g, fp(g) FROM generate_series(1, :rows) g;
CREATE INDEX t_h ON t USING simhash (h);
CREATE SEQUENCE ids START :rows;
SELECT setval('ids', :rows);
SQL
	BUILT=$(sql -c "SELECT pg_relation_size('t_h')")
	echo 'INSERT INTO t SELECT n, fp(n) FROM nextval('"'ids'"') n;' >"$SIMHASH_TMP/insert.sql"
	chmod 644 "$SIMHASH_TMP/insert.sql"
	T1=$(date +%s)
	"$PGBIN/pgbench" -n -c 1 -t "$ROWS" -f "$SIMHASH_TMP/insert.sql" >"$SIMHASH_TMP/pgbench.log" 2>&1 ||
		{ cat "$SIMHASH_TMP/pgbench.log" >&2; exit 1; }
	T2=$(date +%s)
	INSERTED=$(sql -c "SELECT pg_relation_size('t_h')")
	sql -c "DELETE FROM t WHERE simhash_hash('$SEED:d:' || id)::bigint % 10 = 0" >/dev/null
	T3=$(date +%s)
	sql -c "VACUUM t" >/dev/null
	T4=$(date +%s)
	CHECK=$(sql -c "SELECT simhash_index_check('t_h', true)" 2>&1) && CHECK=${CHECK:-ok}
	LOOKUPS=$(sql -v seed="$SEED" <<'SQL'
SET enable_seqscan = off; SET enable_bitmapscan = off;
CREATE TEMP TABLE q AS SELECT i, (CASE WHEN i % 2 = 0 THEN (SELECT h FROM t WHERE id >= i * 20000 ORDER BY id LIMIT 1)
	ELSE simhash_hash(:'seed' || ':q:' || i)::simhash64 END) AS q, i % 7 AS r FROM generate_series(1, 50) i;
CREATE TEMP TABLE by_index AS SELECT i, array(SELECT id FROM t WHERE h <~> q <= r ORDER BY id) AS ids FROM q;
RESET enable_seqscan; SET enable_indexscan = off;
CREATE TEMP TABLE by_seq AS SELECT i, array(SELECT id FROM t WHERE hamming_distance(h, q) <= r ORDER BY id) AS ids FROM q;
SELECT count(*) FILTER (WHERE a.ids IS DISTINCT FROM b.ids) || ' of ' || count(*) FROM by_index a JOIN by_seq b USING (i);
SQL
)
	sql -c "CREATE INDEX t_fresh ON t USING simhash (h)" >/dev/null
	{
		echo "# bench/churn.sh goal $ROWS $SEED ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
		echo "after CREATE INDEX of $ROWS rows: $BUILT bytes"
		echo "after $ROWS single-row inserts ($((T2 - T1)) s): $INSERTED bytes"
		echo "DELETE of 10%: $((T3 - T2)) s; VACUUM: $((T4 - T3)) s"
		echo "simhash_index_check(t_h, heapallindexed): $CHECK"
		echo "lookups differing from the sequential reference: $LOOKUPS"
		sql -c "SELECT format('after the DELETE and VACUUM: %s bytes (%s bytes/row); a fresh build of the same %s rows: %s bytes (%s bytes/row)',
			pg_relation_size('t_h'), round(pg_relation_size('t_h')::numeric / n, 1), n,
			pg_relation_size('t_fresh'), round(pg_relation_size('t_fresh')::numeric / n, 1))
			FROM (SELECT count(*) AS n FROM t) c"
		sql -c "SELECT format('goal 2 (churn): %s× fresh (goal ≤ 1.2×): %s',
			round(pg_relation_size('t_h')::numeric / pg_relation_size('t_fresh'), 2),
			CASE WHEN pg_relation_size('t_h') <= 1.2 * pg_relation_size('t_fresh') AND '$CHECK' = 'ok'
				AND '$LOOKUPS' LIKE '0 of %' THEN 'met' ELSE 'not met' END)"
	} | { mkdir -p "$(dirname "$REPORT")"; tee "$REPORT"; }
	exit 0
fi

SECS=${1:-1200}
ROWS=${2:-100000}
SEED=${3:-1}
for v in "$SECS" "$ROWS" "$SEED"; do
	[[ $v =~ ^[0-9]+$ ]] || { say "usage: bench/churn.sh [seconds] [rows] [seed]"; exit 2; }
done
REPORT=bench/data/churn_report.txt
T0=$(date +%s)

ensure_packages
build_install
start_cluster "shared_buffers = '512MB'" "autovacuum = off" "max_wal_size = '8GB'" \
	"max_parallel_workers_per_gather = 0" "jit = off"
sql() { psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }

sql -v rows="$ROWS" -v seed="$SEED" >/dev/null <<'SQL'
CREATE EXTENSION simhash;
CREATE TABLE cfg (seed int);
INSERT INTO cfg VALUES (:seed);
CREATE TABLE t (id bigint PRIMARY KEY, h simhash64);
-- a row's fingerprint: random, or (one id in 8) a near-duplicate of an
-- earlier row, 1..6 bits away, so that lookups find something
CREATE FUNCTION fp(id bigint, v int) RETURNS simhash64 LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN id % 8 = 0 AND id > 16 THEN
		(simhash_hash((SELECT seed FROM cfg) || ':' || (id / 2) || ':0')::bigint
		 # (SELECT bit_or(1::bigint << ((id * 7 + i * 13 + v) % 64)::int) FROM generate_series(1, 1 + (id % 6)::int) i))::simhash64
	ELSE simhash_hash((SELECT seed FROM cfg) || ':' || id || ':' || v)::simhash64 END
$$;
INSERT INTO t SELECT g, fp(g, 0) FROM generate_series(1, :rows) g;
CREATE INDEX t_h ON t USING simhash (h);
CREATE TABLE sizes (round int, secs numeric, rows bigint, bytes bigint, bytes_per_row numeric, lookups bigint);
CREATE TABLE counters (lookups bigint);
INSERT INTO counters VALUES (0);

-- one round's writes: single-row inserts (a transaction each), ~1% of the
-- rows deleted, ~1% updated with new fingerprints; choices hashed from
-- (seed, round, id)
CREATE PROCEDURE churn(round int, ninsert int) LANGUAGE plpgsql AS $$
DECLARE
	base bigint := (SELECT coalesce(max(id), 0) FROM t);
	s text := (SELECT seed FROM cfg) || ':' || round;
BEGIN
	FOR i IN 1 .. ninsert LOOP
		INSERT INTO t VALUES (base + i, fp(base + i, 0));
		COMMIT;
	END LOOP;
	DELETE FROM t WHERE simhash_hash(s || ':d:' || id)::bigint % 100 = 0;
	COMMIT;
	UPDATE t SET h = fp(id, round) WHERE simhash_hash(s || ':u:' || id)::bigint % 100 = 1;
	COMMIT;
END $$;

-- n lookups, each compared with the sequential reference in one snapshot
CREATE FUNCTION lookups(round int, n int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	q simhash64;
	r int;
	idx bigint[];
	bmp bigint[];
	ref bigint[];
	s text := (SELECT seed FROM cfg) || ':' || round;
BEGIN
	FOR i IN 1 .. n LOOP
		-- a row's fingerprint (found) or a random value (mostly nothing)
		IF i % 2 = 0 THEN
			SELECT h INTO q FROM t WHERE id >= (SELECT max(id) FROM t) * ((simhash_hash(s || ':q:' || i)::bigint & 1023) / 1024.0)
				ORDER BY id LIMIT 1;
		ELSE
			q := simhash_hash(s || ':r:' || i)::simhash64;
		END IF;
		r := i % 7;
		SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;
		SELECT coalesce(array_agg(id ORDER BY id), '{}') INTO idx FROM t WHERE h <~> q <= r;
		SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = on;
		SELECT coalesce(array_agg(id ORDER BY id), '{}') INTO bmp FROM t WHERE h <~> q <= r;
		SET LOCAL enable_bitmapscan = off; SET LOCAL enable_seqscan = on;
		SELECT coalesce(array_agg(id ORDER BY id), '{}') INTO ref FROM t WHERE hamming_distance(h, q) <= r;
		RESET enable_seqscan; RESET enable_indexscan; RESET enable_bitmapscan;
		IF idx IS DISTINCT FROM ref OR bmp IS DISTINCT FROM ref THEN
			RAISE EXCEPTION 'round %, lookup % (radius %): index % rows, bitmap % rows, reference % rows',
				round, i, r, cardinality(idx), cardinality(bmp), cardinality(ref);
		END IF;
	END LOOP;
	UPDATE counters SET lookups = lookups + n;
	RETURN (SELECT lookups FROM counters);
END $$;
SQL

record() {	# record ROUND
	sql -c "INSERT INTO sizes SELECT $1, $(($(date +%s) - T0)), (SELECT count(*) FROM t),
		pg_relation_size('t_h'), round(pg_relation_size('t_h')::numeric / greatest((SELECT count(*) FROM t), 1), 1),
		(SELECT lookups FROM counters)" >/dev/null
	sql -c "SELECT format('round %s: %s s, %s rows, index %s bytes (%s bytes/row), %s lookups checked', round, secs, rows, bytes, bytes_per_row, lookups) FROM sizes WHERE round = $1" >&2
}

record 0
START=$(date +%s)
round=0
while [ $(($(date +%s) - START)) -lt "$SECS" ]; do
	round=$((round + 1))
	sql -c "CALL churn($round, 2000)" >/dev/null
	[ $((round % 3)) -eq 0 ] && sql -c "VACUUM t" >/dev/null
	sql -c "SELECT lookups($round, 40)" >/dev/null
	record "$round"
done

# the end: VACUUM, check, and a fresh build of the same rows
sql -c "VACUUM t" >/dev/null
record $((round + 1))
CHECK=$(sql -c "SELECT simhash_index_check('t_h', true)" 2>&1) && CHECK=${CHECK:-ok}
sql -c "CREATE INDEX t_fresh ON t USING simhash (h)" >/dev/null
{
	echo "# bench/churn.sh $SECS $ROWS $SEED ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores)"
	echo "# round  seconds  rows  index_bytes  bytes_per_row  lookups_checked"
	sql -F '  ' -c "SELECT round, secs, rows, bytes, bytes_per_row, lookups FROM sizes ORDER BY round"
	echo "simhash_index_check(t_h, heapallindexed): $CHECK"
	sql -c "SELECT format('after the churn and VACUUM: %s bytes (%s bytes/row); a fresh build of the same %s rows: %s bytes (%s bytes/row); ratio %s (goal <= 1.2: %s)',
		pg_relation_size('t_h'), round(pg_relation_size('t_h')::numeric / n, 1), n,
		pg_relation_size('t_fresh'), round(pg_relation_size('t_fresh')::numeric / n, 1),
		round(pg_relation_size('t_h')::numeric / pg_relation_size('t_fresh'), 2),
		CASE WHEN pg_relation_size('t_h') <= 1.2 * pg_relation_size('t_fresh') THEN 'met' ELSE 'not met' END)
		FROM (SELECT count(*) AS n FROM t) c"
} | { mkdir -p "$(dirname "$REPORT")"; tee "$REPORT"; }
