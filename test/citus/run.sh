#!/usr/bin/env bash
# test/citus/run.sh: the Citus suite.  test/citus/t/*.pl start a
# coordinator and two workers as three throwaway PostgreSQL 15 clusters (own
# ports, Unix sockets in a temporary directory, shared_preload_libraries =
# 'citus'), add the workers, compare simhash on a distributed table with the
# same rows in a local table, and stop everything.
#
# Needs Citus built into the server whose pg_config is on PATH (see
# test/citus/install.sh); without citus.so it says so and exits 77.
# Builds and installs the extension first (a no-op after test/run.sh).
# Ends with one line: "citus: N passed, N failed" (N = TAP assertions).
set -uo pipefail
source "$(dirname "$0")/../lib.sh"
cd "$SIMHASH_ROOT"
PATH="$PGBIN:$PATH"

if [ ! -f "$(pg_config --pkglibdir)/citus.so" ]; then
	say "citus: citus.so is not installed in $(pg_config --pkglibdir) (build it with test/citus/install.sh SRC_DIR)"
	echo "citus: skipped"
	exit 77
fi
build_install || { echo "citus: 0 passed, 1 failed"; exit 1; }

start=$(date +%s)
tapdir=$(mktemp -d /tmp/simhash-citus.XXXXXX)
cp -r test/citus/t "$tapdir/t"
[ "$(id -u)" -eq 0 ] && chown -R postgres "$tapdir"
(cd "$tapdir" && as_cluster_user env TESTDIR="$tapdir" PATH="$PATH" \
	PG_REGRESS="$(dirname "$(pg_config --pgxs)")/../test/regress/pg_regress" \
	prove -v -I "$(dirname "$(pg_config --pgxs)")/../test/perl" t/*.pl) >"$tapdir/prove.log" 2>&1
rc=$?
cat "$tapdir/prove.log" >&2
n_ok=$(grep -cE '^ok [0-9]+' "$tapdir/prove.log" || true)
n_bad=$(grep -cE '^not ok [0-9]+' "$tapdir/prove.log" || true)
[ $rc -ne 0 ] && [ "$n_bad" -eq 0 ] && n_bad=1
say "citus: suite took $(( $(date +%s) - start )) s"
if [ $rc -eq 0 ]; then rm -rf "$tapdir"; else say "citus: logs kept in $tapdir"; fi
echo "citus: $n_ok passed, $n_bad failed"
[ $rc -eq 0 ]
