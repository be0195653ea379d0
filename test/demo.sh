#!/usr/bin/env bash
# test/demo.sh: the main job, from a fresh Debian 12 machine.  Installs what
# is missing, builds and installs the extension, starts a throwaway cluster,
# loads a real corpus (the PostgreSQL 15 HTML manual and the copyright files
# of every installed Debian package), fingerprints it with simhash(),
# prints how many pairs lie at each distance (simhash_distance_histogram), the
# near-duplicate pairs it finds with their distances (simhash_pairs), and
# groups them to keep one document per group (simhash_groups).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$SIMHASH_ROOT"

ensure_packages postgresql-doc-15
build_install
start_cluster

files=$(mktemp)
{ ls /usr/share/doc/postgresql-doc-15/html/*.html; ls /usr/share/doc/*/copyright; } >"$files"
say "loading $(wc -l <"$files") documents"

psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE EXTENSION simhash;
CREATE TABLE docs (id bigserial PRIMARY KEY, name text NOT NULL, body text NOT NULL, h simhash64);
\copy docs (name, body) FROM PROGRAM 'xargs -a $files perl test/load_files.pl' WITH (FORMAT csv)
SQL
rm -f "$files"

psql -X -v ON_ERROR_STOP=1 <<'SQL'
\timing on
UPDATE docs SET h = simhash(body);
\timing off
SELECT count(*) AS documents, pg_size_pretty(sum(octet_length(body))) AS text FROM docs;

\echo 'Pairs of documents by distance, up to 8 bits (choose k below where the counts rise again: unrelated documents):'
SELECT * FROM simhash_distance_histogram('docs', 'h', 8);

\echo 'Near-duplicate pairs (at most 3 bits apart), by distance:'
CREATE TEMP TABLE pairs AS SELECT * FROM simhash_pairs('docs', 'id', 'h', 3);
SELECT distance AS bits, count(*) AS pairs FROM pairs GROUP BY 1 ORDER BY 1;

\echo 'Pairs 1 to 3 bits apart (near, not exact, duplicates):'
SELECT p.distance AS bits,
       regexp_replace(a.name, '^/usr/share/doc/', '') AS doc_a,
       regexp_replace(b.name, '^/usr/share/doc/', '') AS doc_b,
       octet_length(a.body) AS bytes_a, octet_length(b.body) AS bytes_b
FROM pairs p JOIN docs a ON a.id = p.id_a JOIN docs b ON b.id = p.id_b
WHERE p.distance BETWEEN 1 AND 3
ORDER BY bits, doc_a, doc_b
LIMIT 30;

\echo 'Groups (leader linkage: each document within 3 bits of its group''s leader, the least id):'
CREATE TEMP TABLE groups AS SELECT * FROM simhash_groups('docs', 'id', 'h', 3, 'leader');
SELECT count(*) AS documents, count(DISTINCT group_id) AS groups,
       count(*) - count(DISTINCT group_id) AS duplicates_to_drop
FROM groups;
\echo 'Largest groups:'
SELECT g.group_id, count(*) AS members,
       regexp_replace(min(d.name) FILTER (WHERE d.id = g.group_id), '^/usr/share/doc/', '') AS kept
FROM groups g JOIN docs d ON d.id = g.id
GROUP BY g.group_id HAVING count(*) > 1
ORDER BY members DESC, g.group_id LIMIT 10;
SQL
