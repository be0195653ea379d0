#!/usr/bin/env bash
# bench/gen_docs_check.sh [N]: bench/gen_docs.c (bench/scale.sh's generator)
# makes the same rows as bench/planted_docs.sql and the SQL definitions of
# scale.sh's query and new-row tables below, for N rows (default 1000000):
# the three tables compared row for row (EXCEPT ALL both ways, as sets: the
# SQL's row order is a join's).  Exits 1 on a difference.
set -euo pipefail
source "$(dirname "$0")/../test/lib.sh"
cd "$SIMHASH_ROOT"
N=${1:-1000000}
ORIG=$((N * 99 / 100))
sql() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

ensure_packages
build_install
start_cluster "jit = off" "autovacuum = off"
cc -O2 -Wall -Werror -Isrc -o "$SIMHASH_TMP/gen_docs" bench/gen_docs.c src/core/tokenizer.c
"$SIMHASH_TMP/gen_docs" "$N" "$ORIG" "$SIMHASH_TMP/docs.copy" "$SIMHASH_TMP/queries.copy" "$SIMHASH_TMP/news.copy"
sql -v n="$N" -v orig="$ORIG" -f bench/planted_docs.sql
sql <<SQL
-- the SQL definitions: 500 planted rows' fingerprints and 500 random queries;
-- 1M new rows, every other one 2 bits from a corpus row, the others random
CREATE TABLE queries AS
SELECT row_number() OVER (ORDER BY id) AS qid, h AS q FROM (SELECT id, h FROM docs WHERE id > $ORIG ORDER BY id LIMIT 500) p
UNION ALL SELECT 500 + i, simhash_hash('q' || i)::simhash64 FROM generate_series(1, 500) i;
CREATE TABLE news AS
SELECT g AS id, CASE WHEN g % 2 = 0
	THEN (d.h::bigint # (3::bigint << (g % 62)::int))::simhash64
	ELSE simhash_hash('new' || g)::simhash64 END AS h
FROM generate_series(1, 1000000) g JOIN docs d ON d.id = 1 + (g::bigint * 7919) % $ORIG;
CREATE TABLE docs_c (id bigint, h simhash64);
CREATE TABLE queries_c (qid bigint, q simhash64);
CREATE TABLE news_c (id int, h simhash64);
COPY docs_c FROM '$SIMHASH_TMP/docs.copy' (FORMAT binary);
COPY queries_c FROM '$SIMHASH_TMP/queries.copy' (FORMAT binary);
COPY news_c FROM '$SIMHASH_TMP/news.copy' (FORMAT binary);
SQL
bad=0
for t in docs queries news; do
	read -r rows_sql rows_c diff < <(sql -At -F ' ' -c "SELECT (SELECT count(*) FROM $t), (SELECT count(*) FROM ${t}_c),
		(SELECT count(*) FROM (TABLE $t EXCEPT ALL TABLE ${t}_c) a) + (SELECT count(*) FROM (TABLE ${t}_c EXCEPT ALL TABLE $t) b)")
	say "$t: $rows_sql rows (SQL), $rows_c rows (gen_docs), $diff rows in one and not the other"
	[ "$rows_sql" = "$rows_c" ] && [ "$diff" = 0 ] || bad=1
done
[ $bad = 0 ] && say "gen_docs_check: N=$N, the same rows" || { say "gen_docs_check: N=$N, DIFFERENT rows"; exit 1; }
