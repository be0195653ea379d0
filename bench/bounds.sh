#!/usr/bin/env bash
# bench/bounds.sh [MB]: memory and cancellation of every SQL function that
# takes a whole text or array, on inputs of MB megabytes (default 100),
# against a throwaway cluster.  For each call: the backend's peak resident
# set beyond what it held after detoasting the input (VmHWM, each call in a
# fresh backend), the time of the whole statement (psql's \timing), and the
# time of the same statement under statement_timeout = 200ms (about 200 when
# the function checks for interrupts often enough; the whole call when it
# never does).  Inputs: "rep", a text of
# five words repeated; "uniq", distinct words (hex of md5); "sent", distinct
# sentences; arrays of distinct elements.  Prints a table; asserts nothing
# (the bounds are tested in test/t/042_text_bounds.pl).
set -euo pipefail
source "$(dirname "$0")/../test/lib.sh"
mb=${1:-100}
[ -n "${SIMHASH_BENCH_NOBUILD:-}" ] || build_install
start_cluster
psql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }
n_uniq=$((mb * 1048576 / 33))
psql <<SQL
CREATE EXTENSION simhash;
CREATE TABLE big (rep text, uniq text, sent text, words text[], hashes bigint[], fps simhash64[]);
ALTER TABLE big ALTER rep SET STORAGE EXTERNAL, ALTER uniq SET STORAGE EXTERNAL,
	ALTER sent SET STORAGE EXTERNAL, ALTER words SET STORAGE EXTERNAL,
	ALTER hashes SET STORAGE EXTERNAL, ALTER fps SET STORAGE EXTERNAL;
INSERT INTO big (rep) SELECT repeat('lorem ipsum dolor sit amet ', $mb * 1048576 / 27);
UPDATE big SET uniq = (SELECT string_agg(md5(i::text), ' ') FROM generate_series(1, $n_uniq) i);
UPDATE big SET sent = (SELECT string_agg('Sentence number ' || i || ' is a distinct one.', ' ') FROM generate_series(1, $mb * 1048576 / 40) i);
UPDATE big SET words = (SELECT array_agg(md5(i::text)) FROM generate_series(1, $mb * 1048576 / 40) i);
UPDATE big SET hashes = (SELECT array_agg(simhash_hash(i::text)) FROM generate_series(1, $mb * 1048576 / 8 / 4) i);
UPDATE big SET fps = (SELECT array_agg(simhash_hash(i::text)::simhash64) FROM generate_series(1, $mb * 1048576 / 8 / 4) i);
VACUUM big;
SQL
hwm="$SIMHASH_TMP/hwm"
touch "$hwm" && chmod 666 "$hwm"
probe="COPY (SELECT 1) TO PROGRAM 'grep VmHWM /proc/\$PPID/status >> $hwm'"
# ms: the "Time:" of the last statement psql ran with \timing
ms() { sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1; }
printf '%-58s %10s %9s %9s\n' "call" "memory MB" "time ms" "cancel ms"
while IFS='|' read -r input call; do
	[ -n "$call" ] || continue
	: >"$hwm"
	full=$(psql 2>&1 <<SQL | ms
SELECT md5($input::text) FROM big;
$probe;
\timing on
SELECT ($call) IS NULL FROM big;
\timing off
$probe;
SQL
) || true
	read -r base after < <(awk '{print $2}' "$hwm" | xargs) || true
	cancel=$(psql 2>&1 <<SQL | ms
SET statement_timeout = '200ms';
\timing on
SELECT ($call) IS NULL FROM big;
SQL
) || true
	printf '%-58s %10s %9.0f %9.0f\n' "$call" "$(( (${after:-0} - ${base:-0}) / 1024 ))" "${full:-0}" "${cancel:-0}"
done <<'CALLS'
rep|simhash(rep)
uniq|simhash(uniq)
uniq|simhash(uniq, 3)
uniq|simhash_v2(uniq)
uniq|simhash_v2(uniq, 3)
uniq|(SELECT count(*) FROM simhash_features(uniq))
uniq|(SELECT count(*) FROM simhash_features_v2(uniq))
uniq|cardinality(simhash_tokens(uniq))
uniq|simhash_hash(uniq)
uniq|to_tsvector('simple', left(uniq, 1000000))
sent|sentence_hashes(sent)
rep|sentence_hashes(rep)
uniq|minhash(uniq)
uniq|minhash(uniq, 3, 'term')
uniq|jaccard(uniq, 'b')
uniq|jaccard(uniq, 'b', 3, 'term')
rep|cardinality(minhash_shingles(rep))
uniq|cardinality(minhash_shingles(uniq, 2, 'term'))
words|simhash_compute(words)
words|simhash_compute(words, array_fill(1::real, ARRAY[cardinality(words)]))
hashes|simhash_compute(hashes)
words|cardinality(simhash_shingle(words, 2))
words|minhash(words)
words|jaccard(words, words[1:10])
fps|(SELECT count(*) FROM simhash_find_all(fps))
CALLS
