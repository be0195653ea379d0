#!/usr/bin/env bash
# bench/join_exact.sh: the radius join's exactness at a larger scale than
# sql/join.sql (which pins a small case in the suite).  Seeded random data:
#   bench/join_exact.sh [seed [rows]]     default seed 1, 5000 corpus rows
# A corpus of random fingerprints, copies of 20% of them with 0..8 bits
# flipped, exact duplicates and NULLs; new rows near the corpus and random.
# Every join form (self, self with other columns, two tables, subqueries,
# semi, anti, extra quals) for k = 0..8, at blocks k + 2 and
# simhash.join_blocks 4 (valid up to k = 3) and 11, in memory and at
# work_mem 64kB (the spill path; 4 minutes at 5000 rows), is compared with the reference: the same query with
# simhash.enable_join off, run as an index nested loop (an index USING
# simhash WITH max_distance 8, which is exact).  Prints one line per form
# and setting and "exact: yes" or the differing cases; exits 1 on any.
set -euo pipefail
source "$(dirname "$0")/../test/lib.sh"
cd "$SIMHASH_ROOT"
SEED=${1:-1}
ROWS=${2:-5000}
[[ $SEED =~ ^[0-9]+$ && $ROWS =~ ^[0-9]+$ ]] || { say "usage: bench/join_exact.sh [seed [rows]]"; exit 2; }
sql() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

ensure_packages
[ -n "${SIMHASH_SKIP_BUILD:-}" ] || build_install	# set it to test what is installed
start_cluster "jit = off"
sql -v seed="$SEED" -v n="$ROWS" <<'EOF'
CREATE EXTENSION simhash;
SELECT setseed(:seed / 1000000.0) \g /dev/null
CREATE FUNCTION rnd() RETURNS simhash64 LANGUAGE sql VOLATILE AS
$$ SELECT ((random() * 4294967296)::bigint << 32 # (random() * 4294967296)::bigint)::simhash64 $$;
CREATE FUNCTION flip(h simhash64, d int) RETURNS simhash64 LANGUAGE sql VOLATILE AS $$
	SELECT (h::bigint # (SELECT coalesce(bit_or(1::bigint << (random() * 63)::int), 0)
	                     FROM generate_series(1, d)))::simhash64
$$;
CREATE TABLE corpus (id int, h simhash64, tag int);
INSERT INTO corpus SELECT g, rnd(), (random() * 10)::int FROM generate_series(1, :n) g;
INSERT INTO corpus SELECT :n + id, flip(h, (random() * 8)::int), (random() * 10)::int
	FROM corpus WHERE random() < 0.2 LIMIT :n / 5 OFFSET 0 ;
INSERT INTO corpus SELECT 2 * :n + id, h, 0 FROM corpus WHERE id <= :n / 50 AND id % 2 = 0;
INSERT INTO corpus SELECT 3 * :n + g, NULL, 0 FROM generate_series(1, 10) g;
CREATE TABLE news (id int, h simhash64);
INSERT INTO news SELECT 10 * :n + g, CASE WHEN random() < 0.6
	THEN flip((SELECT h FROM corpus WHERE id = 1 + (g * 7919) % :n), (random() * 8)::int)
	ELSE rnd() END FROM generate_series(1, :n / 10) g;
INSERT INTO news VALUES (11 * :n, NULL);
CREATE INDEX ON corpus USING simhash (h) WITH (max_distance = 8, blocks = 10);
CREATE INDEX ON news USING simhash (h) WITH (max_distance = 8, blocks = 10);
ANALYZE corpus;
ANALYZE news;
EOF

FORMS=(
	"self|SELECT a.id AS x, b.id AS y FROM corpus a JOIN corpus b ON a.id < b.id WHERE a.h <~> b.h <= K"
	"self, other columns|SELECT a.id, b.tag FROM corpus a JOIN corpus b ON a.h <~> b.h <= K WHERE a.id <> b.id"
	"two tables|SELECT n.id AS x, c.id AS y FROM news n JOIN corpus c ON c.h <~> n.h <= K"
	"subqueries|SELECT a.id AS x, b.id AS y FROM (SELECT * FROM corpus WHERE tag < 7) a JOIN (SELECT id, h FROM corpus WHERE id % 3 <> 0) b ON b.h <~> a.h <= K AND a.id <> b.id"
	"extra quals|SELECT n.id AS x, c.id AS y FROM news n JOIN corpus c ON c.h <~> n.h <= K AND c.tag > n.id % 10"
	"semi|SELECT n.id FROM news n WHERE EXISTS (SELECT 1 FROM corpus c WHERE c.h <~> n.h <= K AND c.tag <> 3)"
	"anti|SELECT n.id FROM news n WHERE NOT EXISTS (SELECT 1 FROM corpus c WHERE c.h <~> n.h <= K)"
	"self, semi|SELECT a.id FROM corpus a WHERE EXISTS (SELECT 1 FROM corpus b WHERE b.h <~> a.h <= K AND b.id <> a.id)"
)
bad=0
for f in "${FORMS[@]}"; do
	name=${f%%|*} q=${f#*|}
	for mem in 256MB 64kB; do
		for blocks in 0 4 11; do
			plan=$(sql -At -c "SET work_mem = '$mem'; SET enable_nestloop = off; SET simhash.join_blocks = $blocks;" \
				-c "EXPLAIN (COSTS OFF) ${q//K/3}")
			grep -q SimhashJoin <<<"$plan" || { echo "$name: no radius join in the plan"; bad=1; }
			out=$(for k in 0 1 2 3 4 5 6 7 8; do
				qk=${q//K/$k}
				cat <<EOF
SET work_mem = '$mem'; SET hash_mem_multiplier = 1; SET simhash.join_blocks = $blocks;
SET simhash.enable_join = on; SET enable_nestloop = off;
CREATE TEMP TABLE got AS $qk;
SET work_mem = '256MB'; SET simhash.enable_join = off; SET enable_nestloop = on; SET enable_seqscan = off;
CREATE TEMP TABLE want AS $qk;
RESET enable_seqscan;
SELECT $k, (SELECT count(*) FROM got), (SELECT count(*) FROM (SELECT * FROM want EXCEPT ALL SELECT * FROM got) x)
	+ (SELECT count(*) FROM (SELECT * FROM got EXCEPT ALL SELECT * FROM want) x);
DROP TABLE got, want;
EOF
			done | sql -At)
			rows=$(awk -F'|' '{s += $2} END {print s}' <<<"$out")
			diff=$(awk -F'|' '$3 != 0 {printf "k=%s:%s ", $1, $3}' <<<"$out")
			printf '%-20s work_mem %-6s blocks %-2s rows %8s  %s\n' "$name" "$mem" "$blocks" "$rows" "${diff:-exact}"
			[ -z "$diff" ] || bad=1
		done
	done
done
stop_cluster
[ "$bad" -eq 0 ] && echo "exact: yes (seed $SEED, $ROWS rows)" || { echo "exact: NO (seed $SEED, $ROWS rows)"; exit 1; }
