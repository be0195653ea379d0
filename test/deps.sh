#!/usr/bin/env bash
# test/deps.sh: builds the third-party test dependencies from ../shared/vendor
# into a cache outside the clone, each keyed by its tarball's checksum, and
# reuses them when present.
#
#   test/deps.sh pg18       PostgreSQL 18.6 (with pageinspect, amcheck and the
#                           TAP modules); prints its bin directory
#   test/deps.sh pg18asan   the same built with AddressSanitizer and assertions
#                           (for test/run.sh's optional ASan suite)
#   test/deps.sh citus PG_CONFIG     Citus into that server: 14.0.1 for 16-18,
#                           13.2.2 for 15 (test/citus/install.sh builds it)
#   test/deps.sh pgvector PG_CONFIG  pgvector 0.8.6 into that server
#
# The built trees stay in the cache, so that a warm run only installs
# (into Debian's PostgreSQL 15 that needs root).  Exits 77 when a vendored
# tarball is absent (a user's clone), which callers report as skipped by
# name.  The cache is $SIMHASH_CACHE (default /var/tmp/simhash-cache).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

VENDOR=${SIMHASH_VENDOR:-$SIMHASH_ROOT/../shared/vendor}
CACHE=${SIMHASH_CACHE:-/var/tmp/simhash-cache}
JOBS=${JOBS:-2}

# key TARBALL: the first 16 hex digits of its checksum
key() { sha256sum "$1" | cut -c1-16; }

# unpack TARBALL DIR: a fresh source tree in DIR
unpack() {
	rm -rf "$2"; mkdir -p "$2"
	tar xf "$1" -C "$2" --strip-components=1
}

need() {	# need FILE: exit 77 when a vendored tarball is missing
	[ -f "$VENDOR/$1" ] || { say "deps: $VENDOR/$1 not found"; exit 77; }
}

# pg18_into PREFIX CONFIGURE_ARGS...: PostgreSQL 18.6 from the vendored
# tarball into PREFIX, once (PREFIX/.done marks a finished build)
pg18_into() {
	local prefix=$1 tb=$VENDOR/postgresql-18.6.tar.bz2
	shift
	if [ ! -f "$prefix/.done" ]; then
		ensure_packages bison flex libipc-run-perl >&2
		local src=$CACHE/src/$(basename "$prefix")
		unpack "$tb" "$src"
		(cd "$src" && ./configure --prefix="$prefix" --without-icu --without-readline \
			--without-zlib --enable-tap-tests --enable-debug "$@" >"$src/configure.log" 2>&1 &&
		 make -s -j"$JOBS" >/dev/null 2>"$src/make.log" && make -s install >/dev/null &&
		 make -s -C contrib/pageinspect install >/dev/null &&
		 make -s -C contrib/amcheck install >/dev/null) >&2 ||
			{ say "deps: PostgreSQL 18 build failed (logs in $src)"; exit 1; }
		rm -rf "$src"
		touch "$prefix/.done"
	fi
	echo "$prefix/bin"
}

build_pg18() {
	need postgresql-18.6.tar.bz2
	pg18_into "$CACHE/pg18-$(key "$VENDOR/postgresql-18.6.tar.bz2")"
}

# the server under AddressSanitizer (its programs leak at exit by design:
# callers set ASAN_OPTIONS=detect_leaks=0)
build_pg18asan() {
	need postgresql-18.6.tar.bz2
	ASAN_OPTIONS=detect_leaks=0 pg18_into "$CACHE/pg18asan-$(key "$VENDOR/postgresql-18.6.tar.bz2")" \
		--enable-cassert CFLAGS="-O1 -g -fsanitize=address -fno-omit-frame-pointer" \
		LDFLAGS="-fsanitize=address"
}

# build_into NAME TARBALL PG_CONFIG CMD...: unpack TARBALL once into a build
# tree keyed by its checksum and the server's version and directory, then
# run CMD in that tree (a build that is already done only installs)
build_into() {
	local name=$1 tb=$2 pgc=$3
	shift 3
	local ver tree
	ver=$("$pgc" --version | tr -cd '0-9.')
	tree=$CACHE/src/$name-$(key "$tb")-pg$ver-$(echo "$pgc" | sha256sum | cut -c1-8)
	[ -d "$tree" ] || { unpack "$tb" "$tree.tmp" && mv "$tree.tmp" "$tree"; }
	(cd "$tree" && "$@") >&2 || { say "deps: $name build failed (in $tree)"; exit 1; }
}

build_citus() {
	local pgc=${1:?usage: test/deps.sh citus PG_CONFIG} tb
	if [ "$("$pgc" --version | sed 's/[^0-9]*\([0-9]*\).*/\1/')" -ge 16 ]; then
		tb=citus-14.0.1.tar.xz
	else
		tb=citus-13.2.2.tar.xz
	fi
	need $tb
	build_into citus "$VENDOR/$tb" "$pgc" \
		env PG_CONFIG="$pgc" JOBS="$JOBS" "$SIMHASH_ROOT/test/citus/install.sh" .
	echo "$("$pgc" --pkglibdir)/citus.so"
}

build_pgvector() {
	local pgc=${1:?usage: test/deps.sh pgvector PG_CONFIG}
	need pgvector-0.8.6.tar.gz
	# OPTFLAGS empty: no -march=native in a tree that a cache may carry to
	# another machine
	build_into pgvector "$VENDOR/pgvector-0.8.6.tar.gz" "$pgc" \
		sh -c "make -s PG_CONFIG='$pgc' OPTFLAGS='' >/dev/null && make -s PG_CONFIG='$pgc' OPTFLAGS='' install >/dev/null"
	echo "$("$pgc" --pkglibdir)/vector.so"
}

cmd=${1:?usage: test/deps.sh pg18 | pg18asan | citus PG_CONFIG | pgvector PG_CONFIG}
shift
"build_$cmd" "$@"
