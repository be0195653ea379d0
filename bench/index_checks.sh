#!/usr/bin/env bash
# bench/index_checks.sh [ROWS [REF]]: lookup latency of the simhash index
# with the current tree's page checks against git REF (default dca2254, before
# the page checks), in one run on the same data: the on-disk format is
# the same, so one index is read by both builds, installed in turn (A B A B;
# a new session loads the installed library).  Radius 3 and 6 lookups of 200
# centers (near-duplicate clusters and random values), PL/pgSQL loop with
# clock_timestamp() around each query, warm cache.  ROWS defaults to
# 1,000,000.  Installs into the PostgreSQL of pg_config (set PATH first) and
# leaves the current tree installed.
set -euo pipefail
source "$(dirname "$0")/../test/lib.sh"
cd "$SIMHASH_ROOT"
N=${1:-1000000}
REF=${2:-dca2254}

old=$(mktemp -d /tmp/simhash-ref.XXXXXX)
git archive "$REF" | tar -x -C "$old"
(cd "$old" && make -s -j2 >/dev/null)
make -s -j2 >/dev/null
install_old() { (cd "$old" && make -s install >/dev/null); }
install_new() { make -s install >/dev/null; }

install_new
start_cluster "shared_buffers = '512MB'" "autovacuum = off" || exit 1
psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE EXTENSION simhash;
CREATE TABLE b (id bigint, h simhash64);
INSERT INTO b SELECT g, simhash_hash(g::text)::simhash64 FROM generate_series(1, $N) g;
INSERT INTO b SELECT 2000000000 + c * 10 + d,
	(h::bigint # (1::bigint << (c % 60)) # (CASE WHEN d > 1 THEN 1::bigint << ((c * 7 + d) % 64) ELSE 0 END))::simhash64
	FROM (SELECT id::int AS c, h FROM b WHERE id <= 100) s, generate_series(1, 5) d;
CREATE INDEX b_h ON b USING simhash (h) WITH (blocks = 4, max_distance = 3);
VACUUM ANALYZE b;
CREATE TABLE q AS SELECT h FROM b WHERE id <= 100
	UNION ALL SELECT simhash_hash('random' || g)::simhash64 FROM generate_series(1, 100) g;
CREATE FUNCTION lookups(r int, passes int) RETURNS TABLE (micros float8, found bigint) LANGUAGE plpgsql AS \$\$
DECLARE t0 timestamptz; n bigint := 0; c bigint; x simhash64;
BEGIN
	SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;
	FOR x IN SELECT h FROM q LOOP SELECT count(*) INTO c FROM b WHERE h <~> x <= r; END LOOP;
	t0 := clock_timestamp();
	FOR p IN 1 .. passes LOOP
		FOR x IN SELECT h FROM q LOOP
			SELECT count(*) INTO c FROM b WHERE h <~> x <= r;
			n := n + c;
		END LOOP;
	END LOOP;
	RETURN QUERY SELECT (extract(epoch FROM clock_timestamp() - t0) * 1e6 / (passes * (SELECT count(*) FROM q)))::float8, n;
END \$\$;
SQL

declare -A sum
for round in 1 2; do
	for build in old new; do
		install_$build
		for r in 3 6; do
			res=$(psql -X -At -F' ' -c "SELECT round(micros::numeric, 1), found FROM lookups($r, 5)")
			say "round $round, $build, radius $r: ${res% *} us per lookup (${res#* } rows)"
			sum[$build$r]=$(echo "${sum[$build$r]:-0} + ${res% *}" | bc)
		done
	done
done
install_new
for r in 3 6; do
	echo "radius $r: before (REF $REF) $(echo "scale=1; ${sum[old$r]} / 2" | bc) us, after $(echo "scale=1; ${sum[new$r]} / 2" | bc) us, ratio after/before $(echo "scale=3; ${sum[new$r]} / ${sum[old$r]}" | bc) ($N rows)"
done
rm -rf "$old"
