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
#   - for the jobs on the workers: the time of each progress NOTICE (the
#     phases), the coordinator backend's CPU time, and the DDL of one work
#     table.
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

# seconds of one statement (client round trip), and its first result value
timed() {
	local t0 t1 res
	t0=$(date +%s.%N)
	res=$(printf 'SET client_min_messages = warning;\n%s;\n' "$1" | sql -At | tail -1)
	t1=$(date +%s.%N)
	printf '%s %s\n' "$(echo "$t1 - $t0" | bc)" "$res"
}
# timed, and the figure to stderr (a later failure keeps the earlier figures)
step() {
	local name=$1 out
	out=$(timed "$2")
	say "bench/citus.sh $N rows: $name: $out"
	echo "$out"
}
ORIG=$((N * 95 / 100))
read -r t_local _ < <(step "load single node" "
	CREATE TABLE docs_local (id bigint PRIMARY KEY, h simhash64);
	INSERT INTO docs_local SELECT i, simhash_hash(i::text)::simhash64 FROM generate_series(1, $ORIG) i;
	INSERT INTO docs_local SELECT p, (d.h::bigint # (CASE WHEN p % 4 >= 1 THEN 1::bigint << (p % 64) ELSE 0 END)
	                                             # (CASE WHEN p % 4 >= 2 THEN 1::bigint << (p * 7 % 64) ELSE 0 END)
	                                             # (CASE WHEN p % 4 >= 3 THEN 1::bigint << (p * 13 % 64) ELSE 0 END))::simhash64
	FROM generate_series($ORIG + 1, $N) p JOIN docs_local d ON d.id = 1 + abs(simhash_hash('s' || p)) % $ORIG;
	CREATE INDEX ON docs_local USING simhash (h); ANALYZE docs_local")
read -r t_dist _ < <(step "load Citus" "
	SET citus.shard_count = $SHARDS;
	CREATE TABLE docs (id bigint PRIMARY KEY, h simhash64);
	SELECT create_distributed_table('docs', 'id');
	INSERT INTO docs SELECT * FROM docs_local;
	CREATE INDEX ON docs USING simhash (h); ANALYZE docs")
# 200 lookups around existing rows, from a PL/pgSQL loop on the coordinator
lookups() {
	step "200 lookups in $1" "DO \$\$ DECLARE q simhash64; n bigint := 0; c bigint;
	BEGIN FOR i IN 1 .. 200 LOOP
		SELECT h INTO q FROM docs_local WHERE id = 1 + (i * 7919) % $N;
		EXECUTE 'SELECT count(*) FROM $1 WHERE h <~> \$1 <= 3' INTO c USING q; n := n + c;
	END LOOP; RAISE WARNING 'matches %', n; END \$\$"
}
read -r l_local _ < <(lookups docs_local)
read -r l_dist _ < <(lookups docs)
read -r p_local r_pl < <(step "simhash_pairs single node" "SELECT count(*) FROM simhash_pairs('docs_local', 'id', 'h')")
read -r p_pull r_pp < <(step "simhash_pairs pulled" "SET simhash.citus_jobs = off; SELECT count(*) FROM simhash_pairs('docs', 'id', 'h')")
# phases NAME SQL: like step, with the job's progress NOTICEs timed as they
# arrive (into $DIR/NAME.phases: seconds since the start, message) and the
# coordinator backend's CPU seconds (utime + stime of /proc/PID/stat);
# prints "seconds result cpu"
phases() {
	local name=$1 t0 t1 res cpu l
	t0=$(date +%s.%N)
	sql -At >"$DIR/out" 2> >(while IFS= read -r l; do
		printf '%s %s\n' "$(echo "$(date +%s.%N) - $t0" | bc)" "$l"; done >"$DIR/$name.phases") <<EOS
SELECT pg_backend_pid() AS pid \gset
\setenv BPID :pid
\! awk '{ print \$14 + \$15 }' /proc/\$BPID/stat > $DIR/cpu
SET simhash.progress_interval = 0;
$2;
\! awk '{ print \$14 + \$15 }' /proc/\$BPID/stat >> $DIR/cpu
EOS
	t1=$(date +%s.%N)
	wait $! 2>/dev/null || true
	res=$(tail -1 "$DIR/out")
	cpu=$(echo "scale=2; ($(tail -1 "$DIR/cpu") - $(head -1 "$DIR/cpu")) / $(getconf CLK_TCK)" | bc)
	say "bench/citus.sh $N rows: $name: $(echo "$t1 - $t0" | bc) s, $res, coordinator CPU $cpu s"
	sed "s/^/    /" "$DIR/$name.phases" >&2
	echo "$(echo "$t1 - $t0" | bc) $res $cpu"
}
read -r p_citus r_pc c_pc < <(phases pairs "SELECT count(*) FROM simhash_pairs('docs', 'id', 'h')")
read -r g_local r_gl < <(step "simhash_groups single node" "SELECT count(DISTINCT group_id) FROM simhash_groups('docs_local', 'id', 'h')")
read -r g_citus r_gc c_gc < <(phases groups "SELECT count(DISTINCT group_id) FROM simhash_groups('docs', 'id', 'h')")
# the radius self-join (on Citus: rewritten by simhash's planner hook into
# the pairs job joined back to the rows), and a batch of new rows (1% of
# the table, near copies of existing rows) joined with the corpus
read -r s_local r_sl < <(step "self-join single node" "SELECT count(*) FROM docs_local a JOIN docs_local b ON a.id < b.id AND a.h <~> b.h <= 3")
read -r s_citus r_sc c_sc < <(phases selfjoin "SELECT count(*) FROM docs a JOIN docs b ON a.id < b.id AND a.h <~> b.h <= 3")
B=$((N / 100))
sql -c "CREATE TABLE new_local AS SELECT $N + id AS id, (h::bigint # (1::bigint << (id % 64)::integer))::simhash64 AS h
	FROM docs_local WHERE id % 100 = 7;
	ALTER TABLE new_local ADD PRIMARY KEY (id); ANALYZE new_local;
	CREATE TABLE new_dist (LIKE new_local INCLUDING ALL);
	SELECT create_distributed_table('new_dist', 'id', colocate_with => 'docs');
	INSERT INTO new_dist SELECT * FROM new_local; ANALYZE new_dist" >/dev/null
read -r j_local r_jl < <(step "batch join single node" "SELECT count(*) FROM new_local n JOIN docs_local c ON c.h <~> n.h <= 3")
read -r j_citus r_jc c_jc < <(phases batchjoin "SELECT count(*) FROM new_dist n JOIN docs c ON c.h <~> n.h <= 3")
# the leader groups written into a table (on Citus: on the workers, into a
# table co-located with docs), and the delete of all but the leaders
read -r i_local r_il < <(step "groups into a table single node" "SELECT simhash_groups_into('docs_local', 'id', 'h', 'docs_local_leaders', 3, 'leader')")
read -r i_citus r_ic c_ic < <(phases groupsinto "SELECT simhash_groups_into('docs', 'id', 'h', 'docs_leaders', 3, 'leader')")
read -r d_local _ < <(step "delete followers single node" "DELETE FROM docs_local d USING docs_local_leaders g WHERE d.id = g.id AND g.id <> g.group_id")
read -r d_citus _ < <(step "delete followers Citus" "DELETE FROM docs d USING docs_leaders g WHERE d.id = g.id AND g.id <> g.group_id")
r_dl=$(sql -At -c "SELECT count(*) FROM docs_local")
r_dc=$(sql -At -c "SELECT count(*) FROM docs")
# the fixed cost of one distributed work table (created, distributed, dropped)
read -r t_ddl _ < <(step "work table DDL" "CREATE TABLE ddl_probe (bk bigint, grp integer, id bigint, h simhash64);
	SELECT create_distributed_table('ddl_probe', 'bk'); DROP TABLE ddl_probe")
[ "$r_pl" = "$r_pp" ] && [ "$r_pl" = "$r_pc" ] && [ "$r_gl" = "$r_gc" ] && [ "$r_pl" = "$r_sl" ] &&
	[ "$r_sl" = "$r_sc" ] && [ "$r_jl" = "$r_jc" ] && [ "$r_il" = "$r_ic" ] && [ "$r_dl" = "$r_dc" ] ||
	{ say "results differ: pairs $r_pl / $r_pp / $r_pc, groups $r_gl / $r_gc, self-join $r_sl / $r_sc, batch $r_jl / $r_jc, groups into $r_il / $r_ic, rows left $r_dl / $r_dc"; exit 1; }

ratio() { echo "scale=2; $1 / $2" | bc; }
cat <<EOR
bench/citus.sh: $N rows, $SHARDS shards, coordinator + 2 workers on one machine ($(nproc) cores)
                                   single node   Citus      Citus / single
load + index (s) [1]                $(printf '%-13.2f %-10.2f %s' "$t_local" "$t_dist" "$(ratio "$t_dist" "$t_local")")
radius-3 lookup (ms, mean of 200)  $(printf '%-13.2f %-10.2f %s' "$(echo "$l_local * 5" | bc)" "$(echo "$l_dist * 5" | bc)" "$(ratio "$l_dist" "$l_local")")
simhash_pairs (s), citus_jobs off  $(printf '%-13.2f %-10.2f %s' "$p_local" "$p_pull" "$(ratio "$p_pull" "$p_local")")
simhash_pairs (s), on the workers  $(printf '%-13.2f %-10.2f %s' "$p_local" "$p_citus" "$(ratio "$p_citus" "$p_local")")
simhash_groups (s), on the workers $(printf '%-13.2f %-10.2f %s' "$g_local" "$g_citus" "$(ratio "$g_citus" "$g_local")")
self-join a.id < b.id, radius 3 (s) $(printf '%-13.2f %-10.2f %s' "$s_local" "$s_citus" "$(ratio "$s_citus" "$s_local")")
batch of $B rows joined (s)      $(printf '%-13.2f %-10.2f %s' "$j_local" "$j_citus" "$(ratio "$j_citus" "$j_local")")
simhash_groups_into, leader (s)     $(printf '%-13.2f %-10.2f %s' "$i_local" "$i_citus" "$(ratio "$i_citus" "$i_local")")
delete all but the leaders (s)      $(printf '%-13.2f %-10.2f %s' "$d_local" "$d_citus" "$(ratio "$d_citus" "$d_local")")
self-join / simhash_pairs on the workers: $(ratio "$s_citus" "$p_citus")
coordinator backend CPU (s): pairs $c_pc of $p_citus, groups $c_gc of $g_citus, self-join $c_sc of $s_citus, batch join $c_jc of $j_citus, groups into $c_ic of $i_citus
one distributed work table's DDL (s): $t_ddl
pairs: $r_pl (all five equal); groups: $r_gl (equal); batch join: $r_jl pairs (equal); groups into: $r_il rows (equal); rows left after the delete: $r_dl (equal)
phases (seconds since the start of the statement, at each progress NOTICE):
$(for f in pairs groups selfjoin groupsinto; do echo "  $f:"; grep -o '^[0-9.]* NOTICE:  [a-z_]*: [^(]*' "$DIR/$f.phases" | sed 's/^/    /'; done)
[1] single node: rows generated (simhash_hash per row) + index; Citus: the same rows copied from the local table + index on every shard
EOR
