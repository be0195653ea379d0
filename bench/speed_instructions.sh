#!/usr/bin/env bash
# bench/speed_instructions.sh: the cost of simhash(body) against md5(body),
# counted in instructions (valgrind's callgrind), so that a loaded machine
# does not change the figure (bench/speed.sh's wall times do change):
#   bench/speed_instructions.sh            4 MB of English, 4 MB of Chinese
#   bench/speed_instructions.sh EN ZH      EN and ZH MB (decimal) of each
# The sample: documents of bench/data/corpus_big.csv (bench/corpus.py builds
# it, as for bench/speed.sh) in the order of md5(id::text), taken while
# their bodies' UTF-8 bytes sum to at most EN (ZH) MB, one table per
# language, stored as speed.sh stores them (pglz-compressed TOAST),
# VACUUM FREEZE'd.  A single-user backend (postgres --single) under
# callgrind runs SELECT count(f(body)) for f = length, md5, simhash, each
# over each table, after a warm-up that reads every page; only the inside
# of each query (PortalRun) is counted, one callgrind part per
# query.  Prints the instructions per byte of each, the ratio
# simhash / md5 for all / en / zh, and the functions that cost most in
# simhash's runs (inclusive).  SPEED_INSTR_FUNCS (default
# "length md5 simhash") may add other one-argument functions of body
# (e.g. simhash_v2); the output of callgrind is kept with SIMHASH_KEEP=1.
# Needs valgrind.
set -euo pipefail
source "$(dirname "$0")/../test/lib.sh"
cd "$SIMHASH_ROOT"
EN_MB=${1:-4}
ZH_MB=${2:-4}
FUNCS=${SPEED_INSTR_FUNCS:-length md5 simhash}
command -v valgrind >/dev/null || { say "valgrind is needed"; exit 2; }
ensure_packages python3 $(/usr/bin/python3 bench/corpus.py --print-packages)
/usr/bin/python3 bench/corpus.py --if-needed >&2
build_install
start_cluster "autovacuum = off"
sql() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
sql -v en_bytes="$EN_MB"e6 -v zh_bytes="$ZH_MB"e6 <<SQL
CREATE EXTENSION simhash;
CREATE TEMP TABLE t (id int, lang text, body text);
\copy t FROM '$SIMHASH_ROOT/bench/data/corpus_big.csv' WITH (FORMAT csv, HEADER)
CREATE TABLE en AS SELECT id, body FROM
	(SELECT id, body, sum(octet_length(body)) OVER (ORDER BY md5(id::text)) AS upto
	 FROM t WHERE lang = 'en') s WHERE upto <= :en_bytes ORDER BY md5(id::text);
CREATE TABLE zh AS SELECT id, body FROM
	(SELECT id, body, sum(octet_length(body)) OVER (ORDER BY md5(id::text)) AS upto
	 FROM t WHERE lang = 'zh') s WHERE upto <= :zh_bytes ORDER BY md5(id::text);
VACUUM FREEZE en;
VACUUM FREEZE zh;
SQL
bytes() { sql -A -t -c "SELECT sum(octet_length(body)) FROM $1"; }
docs() { sql -A -t -c "SELECT count(*) FROM $1"; }
en_bytes=$(bytes en) zh_bytes=$(bytes zh)
# the queries, one a line; part k of callgrind's output is query k
queries=()
for tbl in en zh; do
	queries+=("SELECT count(length(body)) FROM $tbl;")	# warm-up
done
for f in $FUNCS; do
	for tbl in en zh; do
		queries+=("SELECT count($f(body)) FROM $tbl;")
	done
done
printf '%s\n' "${queries[@]}" >"$SIMHASH_TMP/queries.sql"
chmod 644 "$SIMHASH_TMP/queries.sql"
as_cluster_user "$PGBIN/pg_ctl" -D "$SIMHASH_TMP/data" -m fast -w stop >/dev/null
as_cluster_user valgrind --tool=callgrind --toggle-collect=PortalRun \
	--dump-after=PortalRun --callgrind-out-file="$SIMHASH_TMP/cg.out" \
	"$PGBIN/postgres" --single -D "$SIMHASH_TMP/data" -c shared_buffers=256MB -c jit=off postgres \
	<"$SIMHASH_TMP/queries.sql" >"$SIMHASH_TMP/single.log" 2>&1
as_cluster_user "$PGBIN/pg_ctl" -D "$SIMHASH_TMP/data" -l "$SIMHASH_TMP/server.log" -w start >/dev/null
# callgrind numbers its dumps from 1 in the order of the queries
part() { echo "$SIMHASH_TMP/cg.out.$1"; }
total() { callgrind_annotate "$(part "$1")" 2>/dev/null | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,; }
[ -f "$(part 1)" ] || { say "callgrind wrote no parts:"; cat "$SIMHASH_TMP/single.log" >&2; exit 1; }
declare -A instr
k=3
for f in $FUNCS; do
	for tbl in en zh; do
		instr[$f,$tbl]=$(total $k)
		k=$((k + 1))
	done
	instr[$f,all]=$((instr[$f,en] + instr[$f,zh]))
done
echo "instructions of SELECT count(f(body)) (postgres --single under callgrind, inside the query):"
printf '  sample: en %s documents, %s bytes; zh %s documents, %s bytes (%s)\n' \
	"$(docs en)" "$en_bytes" "$(docs zh)" "$zh_bytes" "$(git rev-parse --short HEAD 2>/dev/null || echo 'not a git tree')$(git diff --quiet HEAD -- src 2>/dev/null || echo +changes)"
printf '  %-12s %14s %14s %14s   (instructions per byte)\n' function all en zh
for f in $FUNCS; do
	awk -v f="$f" -v a="${instr[$f,all]}" -v e="${instr[$f,en]}" -v z="${instr[$f,zh]}" \
		-v be="$en_bytes" -v bz="$zh_bytes" \
		'BEGIN { printf "  %-12s %14.2f %14.2f %14.2f\n", f, a / (be + bz), e / be, z / bz }'
done
for f in $FUNCS; do
	[ "$f" = md5 ] && continue
	awk -v f="$f" -v a="${instr[$f,all]}" -v e="${instr[$f,en]}" -v z="${instr[$f,zh]}" \
		-v ma="${instr[md5,all]}" -v me="${instr[md5,en]}" -v mz="${instr[md5,zh]}" \
		'BEGIN { printf "  ratio %s / md5: all %.3f, en %.3f, zh %.3f\n", f, a / ma, e / me, z / mz }'
done
# where simhash's instructions go: self cost per function (code inlined
# from headers counted with the function it is in), per byte
k=3
for f in $FUNCS; do
	if [ "$f" = simhash ]; then
		for tbl in en zh; do
			b=$([ $tbl = en ] && echo "$en_bytes" || echo "$zh_bytes")
			echo "  simhash(body) over $tbl, instructions per byte by function (self):"
			callgrind_annotate --inclusive=no --auto=no --threshold=100 "$(part $k)" 2>/dev/null |
				awk -v b="$b" -v t="$(total $k)" '/^ *[0-9,]+ \([ 0-9.]+%\) / && !/PROGRAM TOTALS/ && !/x\)$/ {
					c = $1; gsub(",", "", c)
					if (c == t) next	# the callers above the query
					n = $0; sub(/^[^)]*\) +/, "", n); sub(/ \[.*/, "", n); sub(/^.*:/, "", n)
					self[n] += c }
					END { for (n in self) if (self[n] / b >= 0.1) printf "    %8.2f %s\n", self[n] / b, n }' |
				sort -k1 -n -r | head -12
			k=$((k + 1))
		done
	else
		k=$((k + 2))
	fi
done
