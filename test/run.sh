#!/usr/bin/env bash
# test/run.sh: the whole test suite, from a fresh Debian 12 machine.
#   installs missing packages (as root), builds warning-free, installs the
#   extension, runs the pure-C unit tests, then pg_regress (make installcheck)
#   and the TAP tests against throwaway PostgreSQL 15 clusters run by a
#   non-root user, and the Citus suite (test/citus) when Citus is installed.
#   Ends with one line: "simhash: N passed, N failed[, N skipped (names)]".
set -uo pipefail
source "$(dirname "$0")/lib.sh"
cd "$SIMHASH_ROOT"

passed=0 failed=0
record() {	# record NAME STATUS
	if [ "$2" -eq 0 ]; then passed=$((passed + 1)); say "ok    $1"
	else failed=$((failed + 1)); say "FAIL  $1"; fi
}

ensure_packages || exit 1
make -s clean >/dev/null 2>&1
if ! make -s -j2 COPT=-Werror >&2 || ! make -s install >&2; then
	say "build failed"; echo "simhash: 0 passed, 1 failed"; exit 1
fi

# 1. pure-C unit tests (no server)
make -s -C test/unit >&2
for t in test/unit/test_*; do
	[ -x "$t" ] || continue
	"$t" >&2; record "unit: $(basename "$t")" $?
done

# 2. pg_regress against a throwaway cluster
start_cluster || { echo "simhash: $passed passed, $((failed + 1)) failed"; exit 1; }
REGRESS_OUTDIR=$SIMHASH_TMP/regress
mkdir -p "$REGRESS_OUTDIR"
make -s installcheck REGRESS_OUTDIR="$REGRESS_OUTDIR" >"$SIMHASH_TMP/regress.log" 2>&1
rc=$?
cat "$SIMHASH_TMP/regress.log" >&2
n_ok=$(grep -cE '^(ok|test) .* ok( |$)|^ok ' "$SIMHASH_TMP/regress.log" || true)
n_bad=$(grep -cE ' FAILED( |$)|failed \(ignored\)' "$SIMHASH_TMP/regress.log" || true)
passed=$((passed + n_ok)); failed=$((failed + n_bad))
if [ $rc -ne 0 ]; then
	[ -f "$REGRESS_OUTDIR/regression.diffs" ] && head -200 "$REGRESS_OUTDIR/regression.diffs" >&2
	[ "$n_bad" -eq 0 ] && failed=$((failed + 1))
fi
stop_cluster

# 3. TAP tests (PostgreSQL::Test::Cluster starts its own clusters)
if ls test/t/*.pl >/dev/null 2>&1; then
	# the scripts are copied: the checkout may not be readable by postgres
	tapdir=$(mktemp -d /tmp/simhash-tap.XXXXXX)
	cp -r test/t "$tapdir/t"
	[ "$(id -u)" -eq 0 ] && chown -R postgres "$tapdir"
	(cd "$tapdir" && as_cluster_user env TESTDIR="$tapdir" PATH="$PGBIN:$PATH" \
		PG_REGRESS="$(dirname "$(pg_config --pgxs)")/../test/regress/pg_regress" \
		prove -I "$(dirname "$(pg_config --pgxs)")/../test/perl" t/*.pl) >"$tapdir/prove.log" 2>&1
	rc=$?
	cat "$tapdir/prove.log" >&2
	t_ok=$(grep -cE '^t/.*\bok$' "$tapdir/prove.log" || true)
	t_bad=$(grep -cE '^t/.*(Dubious|Failed: [1-9]|not ok)' "$tapdir/prove.log" || true)
	[ $rc -ne 0 ] && [ "$t_bad" -eq 0 ] && t_bad=1
	passed=$((passed + t_ok)); failed=$((failed + t_bad))
	[ $rc -eq 0 ] && rm -rf "$tapdir"
fi

# 4. the Citus suite: needs citus.so (test/citus/install.sh); else skipped by name
skipped=()
if [ -f "$(pg_config --pkglibdir)/citus.so" ]; then test/citus/run.sh >&2; record citus $?
else skipped+=(citus); say "skip  citus (citus.so not installed: test/citus/install.sh SRC_DIR)"; fi

echo "simhash: $passed passed, $failed failed${skipped:+, ${#skipped[@]} skipped (${skipped[*]})}"
[ "$failed" -eq 0 ]
