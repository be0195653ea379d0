#!/usr/bin/env bash
# bench/inserts_waits.sh: what concurrent inserters wait on (the goal:
# no global serialisation point):
#   bench/inserts_waits.sh                 N = 1,000,000 rows, 40,000 inserts per run, 2 clients
#   bench/inserts_waits.sh N TXNS CLIENTS  (bench/inserts_waits.sh 1000000 40000 8)
# Three tables of the same N rows, tn without an index, ts with CREATE
# INDEX USING simhash (h) and, for reference, tb with a btree on the same 64
# bits; for each, twice, pgbench inserts TXNS single rows
# (one per transaction, CLIENTS clients, fixed seeds) while a procedure samples
# pg_stat_activity every ~3 ms (wait_event_type / wait_event of the active
# client backends, 'CPU' when none).  Prints rows/s per run and the share of
# samples per wait event and table: waits that ts has and tn has not are
# the index's (LWLock BufferContent: a page lock of the index, such as a
# lane's tail or the metapage; Lock: a heavyweight lock), and the same
# against tb's tell what the simhash index waits on that a btree does not.
# The sampler itself takes CPU; compare the tables within one run.
set -euo pipefail
source "$(dirname "$0")/../test/lib.sh"
cd "$SIMHASH_ROOT"
N=${1:-1000000}
TXNS=${2:-40000}
CLIENTS=${3:-2}
ensure_packages
build_install
start_cluster "shared_buffers = '1GB'" "max_parallel_workers_per_gather = 0" "jit = off" \
	"autovacuum = off" "max_wal_size = '32GB'" "checkpoint_timeout = '1h'" "max_connections = 40"
sql() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
say "[inserts_waits.sh] $N rows, $TXNS inserts per run, $CLIENTS clients; uptime: $(uptime)"
sql -v N="$N" >/dev/null <<'SQL'
CREATE EXTENSION simhash;
CREATE TABLE tn (id bigserial, h simhash64);
INSERT INTO tn (h) SELECT simhash_hash(g::text)::simhash64 FROM generate_series(1, :N) g;
CREATE TABLE ts (LIKE tn INCLUDING DEFAULTS);
INSERT INTO ts SELECT * FROM tn;
CREATE INDEX ts_h ON ts USING simhash (h);
CREATE TABLE tb (LIKE tn INCLUDING DEFAULTS);
INSERT INTO tb SELECT * FROM tn;
CREATE INDEX tb_h ON tb ((h::bigint));
VACUUM (FREEZE, ANALYZE) tn;
VACUUM (FREEZE, ANALYZE) ts;
VACUUM (FREEZE, ANALYZE) tb;
CREATE TABLE samples (tbl text, wt text, we text);
CREATE PROCEDURE sample(tbl text, n int) LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1..n LOOP
		PERFORM pg_stat_clear_snapshot();
		INSERT INTO samples SELECT tbl, coalesce(wait_event_type, 'CPU'), coalesce(wait_event, '-')
			FROM pg_stat_activity
			WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND state = 'active';
		PERFORM pg_sleep(0.003);
		IF i % 100 = 0 THEN COMMIT; END IF;
	END LOOP;
END $$;
SQL
for tbl in tn ts tb; do
	printf '\\set a random(0, 4294967295)\n\\set b random(0, 4294967295)\nINSERT INTO %s (h) VALUES (((:a::bigint << 32) | :b)::simhash64);\n' \
		"$tbl" >"$SIMHASH_TMP/$tbl.sql"
	chmod 644 "$SIMHASH_TMP/$tbl.sql"
done
for rep in 1 2; do
	for tbl in tn ts tb; do
		sql -c CHECKPOINT
		sql -c "CALL sample('$tbl', 1000000)" >/dev/null 2>&1 &
		sampler=$!
		out=$(pgbench -n -c "$CLIENTS" -j "$CLIENTS" -t $((TXNS / CLIENTS)) --random-seed=$rep -f "$SIMHASH_TMP/$tbl.sql" 2>&1) ||
			{ say "$out"; exit 1; }
		say "[inserts_waits.sh] $tbl, $CLIENTS clients, run $rep: $(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' <<<"$out") rows/s"
		sql -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE 'CALL sample%'" >/dev/null
		wait "$sampler" || true
	done
done
sql -A -t -F ' ' -c "SELECT format('%s: %s %s %s%% of samples', tbl, wt, we,
	round(100.0 * count(*) / sum(count(*)) OVER (PARTITION BY tbl), 1))
	FROM samples GROUP BY tbl, wt, we ORDER BY tbl, count(*) DESC"
say "[inserts_waits.sh] done; uptime: $(uptime)"
