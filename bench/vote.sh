#!/usr/bin/env bash
# bench/vote.sh: the bit vote's speed, outside the server (bench/vote_bench.c)
# and inside it (simhash_compute(bigint[]) on a 10-million-element array),
# each with a baseline measured in the same run.
set -euo pipefail
source "$(dirname "$0")/../test/lib.sh"
cd "$SIMHASH_ROOT"
out=$(mktemp -d)
cc -O2 -std=gnu99 -Isrc/core -o "$out/vote_bench" bench/vote_bench.c src/core/vote.c -lm
"$out/vote_bench" 10000000
rm -rf "$out"

ensure_packages
build_install
start_cluster
psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
CREATE EXTENSION simhash;
CREATE TEMP TABLE a AS SELECT array_agg(simhash_hash(g::text)) AS hashes FROM generate_series(1, 10000000) g;
CREATE FUNCTION ms(q text, reps int DEFAULT 5) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; best float8 := 1e30; x text;
BEGIN
	FOR i IN 1..reps LOOP
		t0 := clock_timestamp();
		EXECUTE q INTO x;
		best := least(best, extract(epoch FROM clock_timestamp() - t0) * 1000);
	END LOOP;
	RETURN best;
END $$;
SELECT round(ms('SELECT simhash_compute(hashes) FROM a')::numeric, 1) AS simhash_compute_ms,
       round(((ms('SELECT simhash_compute(hashes) FROM a') - ms('SELECT cardinality(hashes) FROM a')) * 1e6 / 1e7)::numeric, 2) AS vote_ns_per_feature_after_detoast,
       round(ms('SELECT cardinality(hashes) FROM a')::numeric, 1) AS cardinality_ms,
       round((ms('SELECT simhash_compute(hashes) FROM a') / ms('SELECT md5(hashes::text) FROM a', 2))::numeric, 3) AS ratio_to_md5_of_array_text
\gx
SQL
