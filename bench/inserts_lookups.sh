#!/usr/bin/env bash
# bench/inserts_lookups.sh: what full pending lanes cost a lookup (the
# lanes' page size and the flush threshold trade insert cost
# against the pages every scan reads):
#   bench/inserts_lookups.sh            N = 1,000,000 rows
#   bench/inserts_lookups.sh 200000     a smaller table
# One table t of N rows (h = simhash_hash(id::text)) with CREATE INDEX USING
# simhash (h); 300 radius-3 queries (half near a row, half random, fixed
# seed), each timed alone with clock_timestamp(), one warm-up and three timed
# passes, median:
#   1. lanes empty (after VACUUM, which flushes them);
#   2. lanes full: INSERTS_FILL rows (default 2039: one less than the flush
#      threshold, so that no insert flushes) added one aminsert each, from
#      one backend;
#   3. again after VACUUM (the lanes flushed into one more, small run);
#   4. during INSERTS_MORE (default 20,000) more single-row inserts (one
#      aminsert each, from one backend, so that flushes and merges run as
#      the merge policy says): after each eighth of them, one timed pass
#      (after a warm-up pass); the median over the 8 steps, and the runs
#      the metapage lists at each step (pageinspect, if installed).
# Prints each median and the ratio full (2) / empty (1) (within the run, so the
# machine's load matters less).  Every result is compared with a sequential
# pass (0 mismatches expected).
set -euo pipefail
source "$(dirname "$0")/../test/lib.sh"
cd "$SIMHASH_ROOT"

N=${1:-1000000}
FILL=${INSERTS_FILL:-2039}
MORE=${INSERTS_MORE:-20000}
ensure_packages
build_install
start_cluster "shared_buffers = '1GB'" "max_parallel_workers_per_gather = 0" "jit = off" "autovacuum = off"
sql() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
say "[inserts_lookups.sh] $N rows, $FILL pending entries; uptime: $(uptime)"
sql -v N="$N" -v FILL="$FILL" -v MORE="$MORE" <<'SQL'
CREATE EXTENSION simhash;
CREATE TABLE t (id bigserial, h simhash64);
INSERT INTO t (h) SELECT simhash_hash(g::text)::simhash64 FROM generate_series(1, :N) g;
CREATE INDEX t_h ON t USING simhash (h);
VACUUM (FREEZE, ANALYZE) t;
SELECT setseed(0.13);
CREATE TABLE queries AS
SELECT qid, CASE WHEN qid % 2 = 0
	THEN (SELECT (h::bigint # (1::bigint << (qid % 61)))::simhash64 FROM t WHERE id = 1 + (qid * 7919) % :N)
	ELSE ((floor(random() * 4294967296)::bigint << 32) | floor(random() * 4294967296)::bigint)::simhash64 END AS q
FROM generate_series(1, 300) qid;
CREATE TABLE lat (phase text, qid int, ms float8);
CREATE TABLE bad (phase text, qid int);
CREATE TABLE runs (step int, nruns int);
CREATE FUNCTION measure(phase text, passes int DEFAULT 3, checked bool DEFAULT true) RETURNS void LANGUAGE plpgsql AS $$
DECLARE x record; t0 timestamptz; t1 timestamptz; ids bigint[]; ref bigint[];
BEGIN
	FOR pass IN 0..passes LOOP
		FOR x IN SELECT qid, q FROM queries ORDER BY qid LOOP
			t0 := clock_timestamp();
			SELECT array_agg(id ORDER BY id) INTO ids FROM t WHERE h <~> x.q <= 3;
			t1 := clock_timestamp();
			IF pass > 0 THEN
				INSERT INTO lat VALUES (phase, x.qid, extract(epoch FROM t1 - t0) * 1000);
			ELSIF checked THEN
				PERFORM set_config('enable_indexscan', 'off', true);
				PERFORM set_config('enable_bitmapscan', 'off', true);
				SELECT array_agg(id ORDER BY id) INTO ref FROM t WHERE hamming_distance(h, x.q) <= 3;
				PERFORM set_config('enable_indexscan', 'on', true);
				PERFORM set_config('enable_bitmapscan', 'on', true);
				IF ids IS DISTINCT FROM ref THEN
					INSERT INTO bad VALUES (phase, x.qid);
				END IF;
			END IF;
		END LOOP;
	END LOOP;
END $$;
SET enable_seqscan = off;
SELECT set_config('my.more', :'MORE', false);
SELECT measure('1 lanes empty');
INSERT INTO t (h) SELECT simhash_hash('fill' || g)::simhash64 FROM generate_series(1, :FILL) g;
SELECT measure('2 lanes full');
VACUUM t;
SELECT measure('3 lanes empty again');
-- 4: lookups while the merge policy works: one timed pass after each
-- eighth of MORE single-row inserts; the runs listed by the metapage
-- (nruns, an int32 at byte 44 of block 0: page header 24, then 5 int32)
SELECT EXISTS (SELECT FROM pg_available_extensions WHERE name = 'pageinspect') AS have_pi \gset
\if :have_pi
CREATE EXTENSION pageinspect;
\endif
DO $$
DECLARE p bytea;
BEGIN
	FOR step IN 1..8 LOOP
		INSERT INTO t (h) SELECT simhash_hash('more' || step || '_' || g)::simhash64
			FROM generate_series(1, current_setting('my.more')::int / 8) g;
		PERFORM measure('4 during inserts', 1, step = 8);
		IF EXISTS (SELECT FROM pg_extension WHERE extname = 'pageinspect') THEN
			EXECUTE 'SELECT get_raw_page(''t_h'', 0)' INTO p;
			INSERT INTO runs VALUES (step, get_byte(p, 44) + 256 * get_byte(p, 45));
		END IF;
	END LOOP;
END $$;
\echo 'radius-3 lookups (300 queries, median of 3 timed passes each):'
SELECT format('%s: median %s ms, mismatches %s', phase,
	round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 4),
	(SELECT count(*) FROM bad b WHERE b.phase = l.phase))
FROM lat l GROUP BY phase ORDER BY phase;
SELECT format('full lanes / empty lanes (median): %s×',
	round((percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE phase LIKE '2%') /
	       percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE phase LIKE '1%'))::numeric, 2))
FROM lat;
SELECT format('runs listed during the inserts (after each eighth of %s): %s (mean %s)', :MORE,
	string_agg(nruns::text, ' ' ORDER BY step), round(avg(nruns), 2)) FROM runs HAVING count(*) > 0;
SQL
say "[inserts_lookups.sh] done; uptime: $(uptime)"
