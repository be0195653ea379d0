#!/usr/bin/env bash
# test/run.sh: the whole test suite, from a fresh Debian 12 machine, on
# PostgreSQL 15 (Debian's packages) and PostgreSQL 18 (built by test/deps.sh
# from ../shared/vendor into a cache outside the clone, reused when present).
#
#   Once: installs missing packages (as root); the pure-C unit tests, the
#   sanitizers and fuzzers, the release files, the client adapters and the
#   Debian package (these count under PostgreSQL 15, whose server they use).
#   On each version: a warning-free build and install, pg_regress (make
#   installcheck) and the TAP tests against throwaway clusters run by a
#   non-root user, the Citus suite (Citus 13 on 15, Citus 14 on 18) and the
#   tests beside the real pgvector.
#   Then: pg_upgrade of a PostgreSQL 15 cluster with simhash data to 18;
#   with SIMHASH_ASAN=1, pg_regress against a PostgreSQL 18 and an extension
#   built with AddressSanitizer (else skipped by name: "asan").
#
# Ends with one line per version, "simhash (PostgreSQL V): N passed, N
# failed[, N skipped (names)]", and the overall line "simhash: N passed, N
# failed[, N skipped (names)]".  What cannot run (no vendored sources, no
# root for the package) is skipped by name, never passed.
#
# test/run.sh --only NAME: builds and installs, then runs one test: a
#   pg_regress test (sql/NAME.sql) or a TAP file (test/t/NAME.pl), on
#   PostgreSQL 15, or on 18 with SIMHASH_PG=18.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
cd "$SIMHASH_ROOT"

BASE_PATH=$PATH
PG15_BIN=/usr/lib/postgresql/15/bin

# use_pg BINDIR: make that server's pg_config, pg_regress and TAP modules
# the ones the build and the tests use
use_pg() {
	PGBIN=$1
	PATH="$1:$BASE_PATH"
	export PGBIN PATH
}

# counters of the version being run, and of the whole run
passed=0 failed=0 skipped=""
all_passed=0 all_failed=0 all_skipped=""
record() {	# record NAME STATUS
	if [ "$2" -eq 0 ]; then passed=$((passed + 1)); say "ok    $1"
	else failed=$((failed + 1)); say "FAIL  $1"; fi
}
skip() {	# skip NAME REASON
	skipped="$skipped $1"; say "skip  $1 ($2)"
}
# summary LABEL: print the version's line, add it to the whole run's, reset
summary() {
	local n
	n=$(wc -w <<<"$skipped")
	echo "simhash ($1): $passed passed, $failed failed${skipped:+, $n skipped (${skipped# })}"
	all_passed=$((all_passed + passed)); all_failed=$((all_failed + failed))
	all_skipped="$all_skipped$skipped"
	passed=0 failed=0 skipped=""
}

if [ -d "$SIMHASH_ROOT/../shared/vendor" ] || [ -n "${SIMHASH_VENDOR:-}" ]; then
	# what test/deps.sh and test/citus/install.sh need, installed up front
	# so that the background build below never runs apt beside this one
	ensure_packages $SIMHASH_DEPS_PACKAGES || exit 1
else
	ensure_packages || exit 1
fi

if [ "${1:-}" = --only ]; then
	[ -n "${2:-}" ] || { say "usage: [SIMHASH_PG=18] test/run.sh --only NAME"; exit 2; }
	if [ "${SIMHASH_PG:-15}" = 18 ]; then
		bin=$(test/deps.sh pg18) || { say "PostgreSQL 18 is not available"; exit 1; }
		use_pg "$bin"
	else
		use_pg "$PG15_BIN"
	fi
	make -s clean >/dev/null 2>&1
	build_install || { say "build failed"; exit 1; }
	run_one "$2"; exit
fi

# PostgreSQL 18, its Citus and pgvector build in the background while the
# suites run on 15; their outcome is read before the suites on 18
deps_dir=$(mktemp -d /tmp/simhash-deps.XXXXXX)
(
	bin=$(test/deps.sh pg18 2>"$deps_dir/pg18.log"); echo $? >"$deps_dir/pg18.rc"
	echo "$bin" >"$deps_dir/pg18.bin"
	if [ "$(cat "$deps_dir/pg18.rc")" = 0 ]; then
		test/deps.sh citus "$bin/pg_config" >/dev/null 2>"$deps_dir/citus18.log"; echo $? >"$deps_dir/citus18.rc"
		test/deps.sh pgvector "$bin/pg_config" >/dev/null 2>"$deps_dir/pgvector18.log"; echo $? >"$deps_dir/pgvector18.rc"
	fi
) &
deps_pid=$!

# build_and_install: a clean, warning-free build into the current server
build_and_install() {
	make -s clean >/dev/null 2>&1
	make -s -j2 COPT=-Werror >&2 && make -s install >&2
}

# regress_and_tap VERSION: pg_regress and the TAP tests on the current server
regress_and_tap() {
	local rc n_ok n_bad t_ok t_bad
	if ! start_cluster; then record "pg_regress: cluster start" 1; return; fi
	REGRESS_OUTDIR=$SIMHASH_TMP/regress
	mkdir -p "$REGRESS_OUTDIR"
	make -s installcheck REGRESS_OUTDIR="$REGRESS_OUTDIR" >"$SIMHASH_TMP/regress.log" 2>&1
	rc=$?
	cat "$SIMHASH_TMP/regress.log" >&2
	n_ok=$(grep -cE '^(ok|test) .* ok( |$)|^ok ' "$SIMHASH_TMP/regress.log" || true)
	n_bad=$(grep -cE '^not ok | FAILED( |$)|failed \(ignored\)' "$SIMHASH_TMP/regress.log" || true)
	passed=$((passed + n_ok)); failed=$((failed + n_bad))
	if [ $rc -ne 0 ]; then
		[ -f "$REGRESS_OUTDIR/regression.diffs" ] && head -200 "$REGRESS_OUTDIR/regression.diffs" >&2
		[ "$n_bad" -eq 0 ] && failed=$((failed + 1))
	fi
	say "pg_regress on PostgreSQL $1: $n_ok passed, $n_bad failed"
	stop_cluster

	# TAP tests (PostgreSQL::Test::Cluster starts its own clusters)
	run_tap $(cd test && echo t/*.pl)
	rc=$?
	t_ok=$(grep -cE '^t/.*\bok$' "$SIMHASH_TAPDIR/prove.log" || true)
	t_bad=$(grep -cE '^t/.*(Dubious|Failed: [1-9]|not ok)' "$SIMHASH_TAPDIR/prove.log" || true)
	[ $rc -ne 0 ] && [ "$t_bad" -eq 0 ] && t_bad=1
	passed=$((passed + t_ok)); failed=$((failed + t_bad))
	say "TAP on PostgreSQL $1: $t_ok passed, $t_bad failed"
	# a TAP file that skips (t/037 without the 1.0 sources or a 1.0 build)
	for t in $(sed -nE 's|^t/([0-9]+)_.* skipped:.*|\1|p' "$SIMHASH_TAPDIR/prove.log"); do
		skip "tap$t-pg$1" "$(sed -nE "s|^t/${t}_.* skipped: ||p" "$SIMHASH_TAPDIR/prove.log")"
	done
	[ $rc -eq 0 ] && rm -rf "$SIMHASH_TAPDIR"
}

# citus_suite VERSION: the Citus suite when Citus is installed in the server
citus_suite() {
	if [ -f "$(pg_config --pkglibdir)/citus.so" ]; then
		test/citus/run.sh >&2; record "citus on PostgreSQL $1" $?
	else
		skip "citus-pg$1" "citus.so not built: test/deps.sh citus PG_CONFIG"
	fi
}

# pgvector_suite VERSION: the tests beside the real pgvector
pgvector_suite() {
	if [ -f "$(pg_config --sharedir)/extension/vector.control" ]; then
		run_one pgvector_side; record "pgvector: side by side on PostgreSQL $1" $?
	else
		skip "pgvector-pg$1" "pgvector not built: test/deps.sh pgvector PG_CONFIG"
	fi
}

# ---- PostgreSQL 15 -----------------------------------------------------
use_pg "$PG15_BIN"
if ! build_and_install; then
	say "build failed"; record "build on PostgreSQL 15" 1
	summary "PostgreSQL 15"; kill $deps_pid 2>/dev/null
	echo "simhash: $all_passed passed, $all_failed failed"; exit 1
fi

# pure-C unit tests (no server); their build first checks the boundary of
# the core (every src/core/*.c compiles alone without server headers)
make -s -C test/unit >&2; record "unit: build, src/core boundary" $?
for t in test/unit/test_*; do
	[ -x "$t" ] || continue
	"$t" >&2; record "unit: $(basename "$t")" $?
done

regress_and_tap 15

# sanitizers and fuzzing (doc/contributing.md, doc/hardening.md): the unit
# tests under ASan+UBSan (clang), a smoke of each fuzz target, and
# pg_regress against a server that loads a UBSan build of the extension
# (gcc -static-libubsan: the runtime is linked into simhash.so, nothing is
# preloaded into postgres; -fno-sanitize-recover: a report ends the backend
# and fails the test).  That build is made in a copy of the tree and the
# normal one is reinstalled afterwards.
san="-fsanitize=address,undefined -fno-sanitize-recover=all"
make -s -C test/unit clean && make -s -C test/unit CC=clang CFLAGS="-O1 -g -std=gnu99 -Wall -Werror $san" >&2
for t in test/unit/test_*; do
	[ -x "$t" ] && { "$t" >&2; record "unit (ASan, UBSan): $(basename "$t")" $?; }
done
make -s -C test/unit clean
for f in fuzz_text fuzz_input fuzz_minhash fuzz_sentences fuzz_index_pages; do
	test/fuzz/run.sh "${SIMHASH_FUZZ_SECONDS:-5}" "$f"; record "fuzz (ASan, UBSan): $f" $?
done
ubsan_tree=$(mktemp -d /tmp/simhash-ubsan.XXXXXX)
cp -r Makefile simhash.control src sql expected "$ubsan_tree" && chmod -R a+rX "$ubsan_tree"
(cd "$ubsan_tree" && make -s clean && make -s -j2 with_llvm=no SHLIB_LINK="-static-libubsan -fsanitize=undefined" \
	COPT="-fsanitize=undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" && make -s install with_llvm=no) >&2
rc=$?
if [ $rc -eq 0 ] && start_cluster; then
	mkdir -p "$SIMHASH_TMP/regress"
	make -s -C "$ubsan_tree" installcheck with_llvm=no REGRESS_OUTDIR="$SIMHASH_TMP/regress" >&2 ||
		{ rc=$?; head -100 "$SIMHASH_TMP/regress/regression.diffs" >&2; }
	grep -B2 -A10 'runtime error' "$SIMHASH_TMP/server.log" >&2 && rc=1
	stop_cluster
fi
record "pg_regress (UBSan build of the extension)" $rc
make -s install >&2 && rm -rf "$ubsan_tree"

# release files (META.json against the PGXN spec and the tree), the file
# map of doc/contributing.md (every file under src/, only files that exist;
# --self-test: an added file and a removed row are refused)
test/meta_check.pl >&2 && test/meta_check.pl --self-test >&2; record "release: META.json" $?
test/filemap_check.pl >&2 && test/filemap_check.pl --self-test >&2; record "file map: doc/contributing.md" $?
for c in python node jdbc; do	# client adapters (clients/): 77 means the driver is unavailable
	test/clients.sh $c; rc=$?
	if [ $rc -eq 77 ]; then skip "$c-client" "driver unavailable"; else record "clients: $c" $rc; fi
done
# the Debian package, built, installed (system directories) and
# installchecked: needs root; SIMHASH_SKIP_PACKAGE=1 skips it
if [ -n "${SIMHASH_SKIP_PACKAGE:-}" ]; then skip package "SIMHASH_SKIP_PACKAGE"
elif [ "$(id -u)" -eq 0 ]; then test/package.sh; record "release: Debian package" $?
else skip package "needs root"; fi
make -s install >&2	# the package replaced the files: this tree's again

# Citus 13 and pgvector into Debian's PostgreSQL 15 (system directories:
# root only; the built trees are cached)
if [ "$(id -u)" -eq 0 ]; then
	test/deps.sh citus "$PG15_BIN/pg_config" >/dev/null 2>"$deps_dir/citus15.log" || cat "$deps_dir/citus15.log" >&2
	test/deps.sh pgvector "$PG15_BIN/pg_config" >/dev/null 2>"$deps_dir/pgvector15.log" || cat "$deps_dir/pgvector15.log" >&2
fi
citus_suite 15
pgvector_suite 15
summary "PostgreSQL 15"

# asan_suite: pg_regress against a PostgreSQL 18 built with AddressSanitizer
# (test/deps.sh pg18asan, cached) with the extension built with
# -fsanitize=address, in a copy of the tree; a report fails it.  Optional:
# SIMHASH_ASAN=1 (a cold build of that server takes 15 minutes or more and
# the suite under ASan several more, beyond CI's budget), else skipped by
# name.
asan_suite() {
	local bin tree rc
	if [ -z "${SIMHASH_ASAN:-}" ]; then skip asan "SIMHASH_ASAN=1 runs it"; return; fi
	bin=$(test/deps.sh pg18asan); rc=$?
	if [ $rc -eq 77 ]; then skip asan "../shared/vendor/postgresql-18.6.tar.bz2 not found"; return; fi
	[ $rc -eq 0 ] || { record "build of PostgreSQL 18 with ASan (test/deps.sh pg18asan)" 1; return; }
	tree=$(mktemp -d /tmp/simhash-asan.XXXXXX)
	cp -r Makefile simhash.control src sql expected "$tree" && chmod -R a+rwX "$tree"
	# the server's programs leak at exit by design; a report stops the backend
	export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=0:log_path=$tree/asan"
	(
		use_pg "$bin"
		cd "$tree" && make -s clean && make -s -j2 with_llvm=no \
			COPT="-fsanitize=address -fno-omit-frame-pointer" && make -s install with_llvm=no
	) >&2; rc=$?
	if [ $rc -eq 0 ]; then
		local saved_bin=$PGBIN saved_path=$PATH
		use_pg "$bin"
		if start_cluster; then
			mkdir -p "$SIMHASH_TMP/regress"
			make -s -C "$tree" installcheck with_llvm=no REGRESS_OUTDIR="$SIMHASH_TMP/regress" >&2 ||
				{ rc=1; head -100 "$SIMHASH_TMP/regress/regression.diffs" >&2; }
			stop_cluster
		else
			rc=1
		fi
		PGBIN=$saved_bin PATH=$saved_path
	fi
	if ls "$tree"/asan.* >/dev/null 2>&1; then
		cat "$tree"/asan.* >&2; rc=1
	fi
	unset ASAN_OPTIONS
	record "pg_regress (PostgreSQL 18 and the extension under ASan)" $rc
	[ $rc -eq 0 ] && rm -rf "$tree"
}

# ---- PostgreSQL 18 -----------------------------------------------------
wait $deps_pid
pg18_rc=$(cat "$deps_dir/pg18.rc" 2>/dev/null || echo 1)
if [ "$pg18_rc" = 77 ]; then
	skip pg18 "../shared/vendor/postgresql-18.6.tar.bz2 not found"
elif [ "$pg18_rc" != 0 ]; then
	cat "$deps_dir/pg18.log" >&2
	record "build of PostgreSQL 18 (test/deps.sh pg18)" 1
else
	[ "$(cat "$deps_dir/citus18.rc")" = 0 ] || cat "$deps_dir/citus18.log" >&2
	[ "$(cat "$deps_dir/pgvector18.rc")" = 0 ] || cat "$deps_dir/pgvector18.log" >&2
	use_pg "$(cat "$deps_dir/pg18.bin")"
	if build_and_install; then
		regress_and_tap 18
		citus_suite 18
		pgvector_suite 18
		# pg_upgrade from a PostgreSQL 15 cluster with simhash data
		run_tap_dir test/upgrade $(cd test/upgrade && echo t/*.pl); record "pg_upgrade from 15 to 18" $?
	else
		record "build on PostgreSQL 18" 1
	fi
fi
asan_suite
summary "PostgreSQL 18"
rm -rf "$deps_dir"

[ -n "$all_skipped" ] && say "skipped:$all_skipped"
echo "simhash: $all_passed passed, $all_failed failed${all_skipped:+, $(wc -w <<<"$all_skipped") skipped (${all_skipped# })}"
[ "$all_failed" -eq 0 ]
