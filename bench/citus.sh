#!/usr/bin/env bash
# bench/citus.sh [ROWS [SHARDS]]: simhash on Citus (coordinator + 2 workers,
# three PostgreSQL clusters on this machine) against the same rows in a
# plain table on the coordinator (the single node), in the same run:
#   - loading the rows (INSERT ... SELECT, computed on the coordinator);
#   - radius-3 lookups: the mean of 200 queries WHERE h <~> q <= 3 (index);
#   - simhash_pairs / simhash_groups on the local table, and the same calls
#     on the distributed table: on the workers (the default), and
#     simhash_pairs with simhash.citus_jobs = off (rows pulled to the
#     coordinator, with a NOTICE);
#   - the self-join a.id < b.id AND a.h <~> b.h <= 3 and a batch of 1% new
#     rows joined with the corpus (on Citus: planned by simhash's planner
#     hook; simhash is preloaded on the coordinator);
#   - simhash_groups_into (leader) and the delete of all but the leaders
#     through its table;
#   - for every statement: the wall time, the CPU time of every process of
#     the coordinator (its backend apart) and of the workers, and the
#     coordinator's peak memory; for the jobs, the same per phase (between
#     their progress NOTICEs, with the runnable processes); the DDL of one
#     work table; the issue's targets, met or not (bench/README.md).
# ROWS defaults to 10000000, the issue's size (about 40 minutes on a shared
# 2-core machine; `bench/citus.sh 1000000 8` is a quick look); SHARDS
# defaults to 32.  Each figure is also printed to stderr as it is measured.  Data: 95%
# random fingerprints, 5% copies of earlier rows with 0..3 bits flipped.
# Needs Citus (test/citus/install.sh).  On one machine this measures the
# overhead of distribution, not a speed-up; see doc/citus.md.
set -euo pipefail
source "$(dirname "$0")/../test/lib.sh"
cd "$SIMHASH_ROOT"
PATH="$PGBIN:$PATH"

N=${1:-10000000}
SHARDS=${2:-32}
[[ $N =~ ^[0-9]+$ ]] && [ "$N" -ge 1000 ] || { say "usage: bench/citus.sh [rows >= 1000 [shards]]"; exit 2; }
[ -f "$(pg_config --pkglibdir)/citus.so" ] || { say "citus.so is not installed (test/citus/install.sh SRC_DIR)"; exit 2; }
build_install

DIR=$(mktemp -d /tmp/simhash-citus-bench.XXXXXX)
chmod 755 "$DIR"
[ "$(id -u)" -eq 0 ] && chown "$(cluster_user)" "$DIR"
BASE=$((20000 + RANDOM % 20000))
stop_all() {
	for n in coord w1 w2; do
		[ -d "$DIR/$n" ] && as_cluster_user pg_ctl -D "$DIR/$n" -m fast -w stop >/dev/null 2>&1 || true
	done
	rm -rf "$DIR"
}
trap stop_all EXIT
port=$BASE
for n in coord w1 w2; do
	as_cluster_user initdb -D "$DIR/$n" -U postgres -A trust >/dev/null
	cat >>"$DIR/$n/postgresql.conf" <<EOC
listen_addresses = ''
unix_socket_directories = '$DIR'
port = $port
shared_preload_libraries = 'citus,simhash'
citus.node_conninfo = 'sslmode=disable'
fsync = off
jit = off
shared_buffers = '256MB'
EOC
	as_cluster_user pg_ctl -D "$DIR/$n" -l "$DIR/$n.log" -w start >/dev/null
	psql -X -q -h "$DIR" -p $port -U postgres -c 'CREATE EXTENSION citus'
	port=$((port + 1))
done
sql() { psql -X -q -v ON_ERROR_STOP=1 -h "$DIR" -p $BASE -U postgres "$@"; }
sql -c "SELECT citus_set_coordinator_host('$DIR', $BASE)" -c "SELECT citus_add_node('$DIR', $((BASE + 1)))" \
	-c "SELECT citus_add_node('$DIR', $((BASE + 2)))" -c 'CREATE EXTENSION simhash' >/dev/null

# CPU clock ticks of one cluster (coord, w1, w2): its processes' utime +
# stime, the live ones and those the postmaster has reaped (its cutime +
# cstime), so that a backend that ends during a statement is still counted
ticks() {
	local pm
	pm=$(head -1 "$DIR/$1/postmaster.pid")
	# a process that ends meanwhile makes cat fail (and set -e end the run)
	# shellcheck disable=SC2046
	{ cat "/proc/$pm/stat" $(pgrep -P "$pm" | sed 's|.*|/proc/&/stat|') 2>/dev/null || true; } |
		awk -v pm="$pm" '{ s += $14 + $15; if ($1 == pm) s += $16 + $17 } END { print s }'
}
# measure NAME SQL: run SQL in one session on the coordinator, its stderr
# read by bench/citus_sampler.py (the time and the three clusters' CPU at
# each message, such as a job's progress NOTICEs; how many processes are
# runnable; the coordinator's memory).  Prints "seconds result backend_cpu
# coord_cpu workers_cpu peak_kB backend_peak_kB" (CPU in seconds: the
# statement's coordinator backend; every process of the coordinator; of the
# two workers; peak_kB: the coordinator's RssAnon summed over its processes,
# at its peak, above the sum before the statement; backend_peak_kB: the
# backend's own peak RssAnon), and the figures to stderr as they are
# measured (a later failure keeps them)
measure() {
	local name=$1 t0 t1 res b0 b1 c0 c1 w0 w1 hz base peak bpeak
	hz=$(getconf CLK_TCK)
	rm -f "$DIR/bpid"
	c0=$(ticks coord); w0=$(( $(ticks w1) + $(ticks w2) ))
	echo "0 $c0 $w0 0 start" >"$DIR/$name.start"
	t0=$(date +%s.%N)
	sql -At 2>&1 >"$DIR/out" <<EOS | /usr/bin/python3 "$SIMHASH_ROOT/bench/citus_sampler.py" "$DIR" "$name" "$t0" ||
SELECT pg_backend_pid() AS pid \gset
\setenv BPID :pid
\! awk '{ print \$14 + \$15 }' /proc/\$BPID/stat > $DIR/cpu; echo \$BPID > $DIR/bpid.tmp; mv $DIR/bpid.tmp $DIR/bpid
SET simhash.progress_interval = 0;
$2;
\! awk '{ print \$14 + \$15 }' /proc/\$BPID/stat >> $DIR/cpu
EOS
		{ say "bench/citus.sh $N rows: $name failed: $(cat "$DIR/$name.phases")"; exit 1; }
	t1=$(date +%s.%N)
	sleep 0.3	# the backend exits after its client; the postmaster reaps it
	c1=$(ticks coord); w1=$(( $(ticks w1) + $(ticks w2) ))
	echo "$(echo "$t1 - $t0" | bc) $c1 $w1 0 NOTICE:  (the result returned)" >"$DIR/$name.end"
	res=$(tail -1 "$DIR/out"); res=${res:--}
	b0=$(head -1 "$DIR/cpu"); b1=$(tail -1 "$DIR/cpu")
	read -r base peak bpeak <"$DIR/$name.mem"
	set -- "$(echo "$t1 - $t0" | bc)" "$res" "$(echo "scale=2; ($b1 - $b0) / $hz" | bc)" \
		"$(echo "scale=2; ($c1 - $c0) / $hz" | bc)" "$(echo "scale=2; ($w1 - $w0) / $hz" | bc)" \
		"$((peak > base ? peak - base : 0))" "$bpeak"
	say "bench/citus.sh $N rows: $name: $1 s, $2; CPU: coordinator backend $3 s, coordinator $4 s, workers $5 s; coordinator memory +$6 kB (backend peak $7 kB)"
	sed "s/^/    /" "$DIR/$name.phases" >&2
	echo "$*"
}
# measure, quietly (no NOTICEs)
step() { measure "$1" "SET client_min_messages = warning; $2"; }
# the phases of a job: the wall and CPU seconds between its progress
# NOTICEs (each ends the phase it names), coordinator and workers apart,
# and the mean number of runnable processes in the phase (ours / machine's)
phase_table() {
	awk -v hz="$(getconf CLK_TCK)" '
		FILENAME ~ /procs$/ { ps[++np] = $1; po[np] = $2; pm[np] = $3; next }
		/NOTICE:/ { m = $0; sub(/^[^N]*NOTICE: +/, "", m); sub(/ \(.*$/, "", m)
			n = o = a = 0
			for (i = 1; i <= np; i++) if (ps[i] > t && ps[i] <= $1) { n++; o += po[i]; a += pm[i] }
			printf "    %7.2f s  +%6.2f s wall  coordinator +%6.2f s CPU  workers +%6.2f s CPU  runnable %s  %s\n",
				$1, $1 - t, ($2 - c) / hz, ($3 + $4 - w) / hz,
				n ? sprintf("%4.1f / %4.1f", o / n, a / n) : "   - /    -", m
			t = $1; c = $2; w = $3 + $4 }
		FNR == 1 && FILENAME ~ /start$/ { t = $1; c = $2; w = $3 + $4 }' \
		"$DIR/$1.procs" "$DIR/$1.start" "$DIR/$1.phases" "$DIR/$1.end"
}
# rec KEY COMMAND...: the figures of a measure into T (seconds), R (result),
# B, C, W (CPU seconds: coordinator backend, coordinator, workers), M, MB
# (coordinator memory kB: above its start, the backend's peak)
declare -A T R B C W M MB
rec() {
	local k=$1
	shift
	read -r "T[$k]" "R[$k]" "B[$k]" "C[$k]" "W[$k]" "M[$k]" "MB[$k]" < <("$@")
	[ -n "${T[$k]}" ] || { say "bench/citus.sh $N rows: $k: no figures"; exit 1; }
}
ORIG=$((N * 95 / 100))
rec t_local step "load single node" "
	CREATE TABLE docs_local (id bigint PRIMARY KEY, h simhash64);
	INSERT INTO docs_local SELECT i, simhash_hash(i::text)::simhash64 FROM generate_series(1, $ORIG) i;
	INSERT INTO docs_local SELECT p, (d.h::bigint # (CASE WHEN p % 4 >= 1 THEN 1::bigint << (p % 64) ELSE 0 END)
	                                             # (CASE WHEN p % 4 >= 2 THEN 1::bigint << (p * 7 % 64) ELSE 0 END)
	                                             # (CASE WHEN p % 4 >= 3 THEN 1::bigint << (p * 13 % 64) ELSE 0 END))::simhash64
	FROM generate_series($ORIG + 1, $N) p JOIN docs_local d ON d.id = 1 + abs(simhash_hash('s' || p)) % $ORIG;
	CREATE INDEX ON docs_local USING simhash (h); ANALYZE docs_local"
rec t_dist step "load Citus" "
	SET citus.shard_count = $SHARDS;
	CREATE TABLE docs (id bigint PRIMARY KEY, h simhash64);
	SELECT create_distributed_table('docs', 'id');
	INSERT INTO docs SELECT * FROM docs_local;
	CREATE INDEX ON docs USING simhash (h); ANALYZE docs"
# 200 lookups around existing rows, from a PL/pgSQL loop on the coordinator
lookups() {
	step "200 lookups in $1" "DO \$\$ DECLARE q simhash64; n bigint := 0; c bigint;
	BEGIN FOR i IN 1 .. 200 LOOP
		SELECT h INTO q FROM docs_local WHERE id = 1 + (i * 7919) % $N;
		EXECUTE 'SELECT count(*) FROM $1 WHERE h <~> \$1 <= 3' INTO c USING q; n := n + c;
	END LOOP; RAISE WARNING 'matches %', n; END \$\$"
}
rec l_local lookups docs_local
rec l_dist lookups docs
rec p_local step "simhash_pairs single node" "SELECT count(*) FROM simhash_pairs('docs_local', 'id', 'h')"
rec p_pull step "simhash_pairs pulled" "SET simhash.citus_jobs = off; SELECT count(*) FROM simhash_pairs('docs', 'id', 'h')"
rec p_citus measure pairs "SELECT count(*) FROM simhash_pairs('docs', 'id', 'h')"
rec g_local step "simhash_groups single node" "SELECT count(DISTINCT group_id) FROM simhash_groups('docs_local', 'id', 'h')"
rec g_citus measure groups "SELECT count(DISTINCT group_id) FROM simhash_groups('docs', 'id', 'h')"
# the radius self-join (on Citus: rewritten by simhash's planner hook into
# the pairs job joined back to the rows), and a batch of new rows (1% of
# the table, near copies of existing rows) joined with the corpus
rec s_local step "self-join single node" "SELECT count(*) FROM docs_local a JOIN docs_local b ON a.id < b.id AND a.h <~> b.h <= 3"
rec s_citus measure selfjoin "SELECT count(*) FROM docs a JOIN docs b ON a.id < b.id AND a.h <~> b.h <= 3"
BATCH=$((N / 100))
sql -c "CREATE TABLE new_local AS SELECT $N + id AS id, (h::bigint # (1::bigint << (id % 64)::integer))::simhash64 AS h
	FROM docs_local WHERE id % 100 = 7;
	ALTER TABLE new_local ADD PRIMARY KEY (id); ANALYZE new_local;
	CREATE TABLE new_dist (LIKE new_local INCLUDING ALL);
	SELECT create_distributed_table('new_dist', 'id', colocate_with => 'docs');
	INSERT INTO new_dist SELECT * FROM new_local; ANALYZE new_dist" >/dev/null
rec j_local step "batch join single node" "SELECT count(*) FROM new_local n JOIN docs_local c ON c.h <~> n.h <= 3"
rec j_citus measure batchjoin "SELECT count(*) FROM new_dist n JOIN docs c ON c.h <~> n.h <= 3"
# the leader groups written into a table (on Citus: on the workers, into a
# table co-located with docs), and the delete of all but the leaders
rec i_local step "groups into a table single node" "SELECT simhash_groups_into('docs_local', 'id', 'h', 'docs_local_leaders', 3, 'leader')"
rec i_citus measure groupsinto "SELECT simhash_groups_into('docs', 'id', 'h', 'docs_leaders', 3, 'leader')"
rec d_local step "delete followers single node" "DELETE FROM docs_local d USING docs_local_leaders g WHERE d.id = g.id AND g.id <> g.group_id"
rec d_citus step "delete followers Citus" "DELETE FROM docs d USING docs_leaders g WHERE d.id = g.id AND g.id <> g.group_id"
r_dl=$(sql -At -c "SELECT count(*) FROM docs_local")
r_dc=$(sql -At -c "SELECT count(*) FROM docs")
# the fixed cost of one distributed work table (created, distributed, dropped)
rec t_ddl step "work table DDL" "CREATE TABLE ddl_probe (bk bigint, grp integer, id bigint, h simhash64);
	SELECT create_distributed_table('ddl_probe', 'bk'); DROP TABLE ddl_probe"
r=("${R[p_local]}" "${R[p_pull]}" "${R[p_citus]}" "${R[g_local]}" "${R[g_citus]}" "${R[s_local]}" "${R[s_citus]}"
	"${R[j_local]}" "${R[j_citus]}" "${R[i_local]}" "${R[i_citus]}" "$r_dl" "$r_dc")
[ "${r[0]}" = "${r[1]}" ] && [ "${r[0]}" = "${r[2]}" ] && [ "${r[3]}" = "${r[4]}" ] && [ "${r[0]}" = "${r[5]}" ] &&
	[ "${r[5]}" = "${r[6]}" ] && [ "${r[7]}" = "${r[8]}" ] && [ "${r[9]}" = "${r[10]}" ] && [ "${r[11]}" = "${r[12]}" ] ||
	{ say "results differ: pairs ${r[*]:0:3}, groups ${r[*]:3:2}, self-join ${r[*]:5:2}, batch ${r[*]:7:2}, groups into ${r[*]:9:2}, rows left ${r[*]:11:2}"; exit 1; }

calc() { echo "scale=2; $*" | bc; }
# one line of the table: LABEL LOCAL CITUS [SCALE]: wall single, Citus,
# ratio; CPU single (all three clusters), Citus on the coordinator (its
# backend) and the workers, the coordinator's share of the CPU; the
# coordinator's memory above its start (MB)
row() {
	local f=${4:-1}
	printf '%-36s %8.2f %8.2f %6.2f  %8.2f %8.2f (%6.2f) %8.2f %5.1f%%  %7.1f\n' "$1" \
		"$(calc "${T[$2]} * $f")" "$(calc "${T[$3]} * $f")" "$(calc "${T[$3]} / ${T[$2]}")" \
		"$(calc "${C[$2]} + ${W[$2]}")" "${C[$3]}" "${B[$3]}" "${W[$3]}" \
		"$(calc "100 * ${C[$3]} / (${C[$3]} + ${W[$3]} + 0.01)")" "$(calc "${M[$3]} / 1024")"
}
# a target: NAME VALUE LIMIT
target() { printf '  %-58s %6.2f  (<= %s) %s\n' "$1" "$2" "$3" "$([ "$(echo "$2 <= $3" | bc)" = 1 ] && echo met || echo 'NOT met')"; }
cat <<EOR
bench/citus.sh: $N rows, $SHARDS shards, coordinator + 2 workers on one machine ($(nproc) cores, load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))
                                      wall (s)                    CPU (s)                                     coordinator
                                     single    Citus  ratio    single   coord. (backend)  workers coord.%  memory + MB
$(row 'load + index [1]' t_local t_dist)
$(row 'radius-3 lookup (ms, mean of 200) [2]' l_local l_dist 5)
$(row 'simhash_pairs, citus_jobs = off' p_local p_pull)
$(row 'simhash_pairs, on the workers' p_local p_citus)
$(row 'simhash_groups, on the workers' g_local g_citus)
$(row 'self-join a.id < b.id, radius 3' s_local s_citus)
$(row "batch of $BATCH rows joined" j_local j_citus)
$(row 'simhash_groups_into, leader' i_local i_citus)
$(row 'delete all but the leaders' d_local d_citus)
one distributed work table's DDL: ${T[t_ddl]} s (coordinator CPU ${C[t_ddl]} s, workers ${W[t_ddl]} s)
coordinator backend's peak RssAnon (kB): pairs ${MB[p_citus]}, groups ${MB[g_citus]}, self-join ${MB[s_citus]}, groups into ${MB[i_citus]}
targets:
$(target 'simhash_pairs on the workers / single node' "$(calc "${T[p_citus]} / ${T[p_local]}")" 2)
$(target 'simhash_groups on the workers / single node' "$(calc "${T[g_citus]} / ${T[g_local]}")" 2)
$(target 'self-join / simhash_pairs on the workers' "$(calc "${T[s_citus]} / ${T[p_citus]}")" 2)
$(for k in p_citus g_citus s_citus i_citus; do target "coordinator's share of the CPU, $k (%)" "$(calc "100 * ${C[$k]} / (${C[$k]} + ${W[$k]} + 0.01)")" 10; done)
  the coordinator's memory: compare "memory + MB" between runs at two sizes
pairs: ${r[0]} (all five equal); groups: ${r[3]} (equal); batch join: ${r[7]} pairs (equal); groups into: ${r[9]} (equal); rows left after the delete: $r_dl (equal)
phases (at each progress NOTICE, which ends the phase it names: seconds since the start, the wall and CPU seconds since the previous one,
and the mean number of runnable processes in it: of the three clusters / of the whole machine, with $(nproc) cores):
$(for f in pairs groups selfjoin groupsinto; do echo "  $f:"; phase_table $f; done)
[1] single node: rows generated (simhash_hash per row) + index; Citus: the same rows copied from the local table + index on every shard
[2] wall: the mean per lookup in ms; CPU: of all 200, in s
EOR
