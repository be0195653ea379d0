#!/usr/bin/env bash
# test/corruption.sh SEED COUNT: the full corruption test of the simhash
# index (test/t/010_index_corruption.pl) with about COUNT seeded random
# corruptions (default 2000), one per index per round; CI runs the same
# test with its default of 10 rounds (~120 corruptions) through test/run.sh.
#   SIMHASH_CORRUPT_INDEXES (default 12) sets the indexes corrupted per round.
# Uses the PostgreSQL of pg_config / $PGBIN and the installed extension
# (make install first).  Takes about 15 s per round on 2 cores.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
cd "$SIMHASH_ROOT"
seed=${1:-1}
count=${2:-2000}
indexes=${SIMHASH_CORRUPT_INDEXES:-12}
rounds=$(( (count + indexes - 1) / indexes ))

tapdir=$(mktemp -d /tmp/simhash-corrupt.XXXXXX)
cp -r test/t "$tapdir/t"
[ "$(id -u)" -eq 0 ] && chown -R postgres "$tapdir"
say "corruption test: seed $seed, $rounds rounds of $indexes corruptions (log in $tapdir)"
(cd "$tapdir" && as_cluster_user env TESTDIR="$tapdir" PATH="$PGBIN:$PATH" \
	SIMHASH_CORRUPT_SEED="$seed" SIMHASH_CORRUPT_ROUNDS="$rounds" SIMHASH_CORRUPT_INDEXES="$indexes" \
	PG_REGRESS="$(dirname "$(pg_config --pgxs)")/../test/regress/pg_regress" \
	prove -v -I "$(dirname "$(pg_config --pgxs)")/../test/perl" t/010_index_corruption.pl) \
	>"$tapdir/prove.log" 2>&1
rc=$?
grep -E '^(not )?ok|^# (outcomes|set-up|page kinds|round)|corruptions' "$tapdir/prove.log" | grep -v '^ok' || true
grep -E 'corruptions \(seed' "$tapdir/prove.log"
exit $rc
