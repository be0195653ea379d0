#!/usr/bin/env bash
# test/deps.sh: builds the third-party test dependencies from ../shared/vendor
# into a cache outside the clone, each keyed by its tarball's checksum, and
# reuses them when present.
#
#   test/deps.sh pg18            PostgreSQL 18 (with pageinspect, TAP modules)
#   test/deps.sh citus14         Citus 14 into that PostgreSQL 18
#   test/deps.sh citus13         Citus 13 into a private copy of Debian's PostgreSQL 15 tree
#   test/deps.sh pgvector15|pgvector18
#
# Prints the install prefix on stdout (for pg18: the PostgreSQL prefix; for
# citus13: the prefix of the PostgreSQL 15 copy that has Citus), or exits 77
# when the vendored source is absent (a user's clone), which callers report
# as skipped.  The cache is $SIMHASH_CACHE (default /var/tmp/simhash-cache).
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

build_pg18() {
	need postgresql-18.6.tar.bz2
	local tb=$VENDOR/postgresql-18.6.tar.bz2
	local prefix=$CACHE/pg18-$(key "$tb")
	if [ ! -f "$prefix/.done" ]; then
		ensure_packages bison flex libipc-run-perl >&2
		local src=$CACHE/src/pg18
		unpack "$tb" "$src"
		(cd "$src" && ./configure --prefix="$prefix" --without-icu --without-readline \
			--without-zlib --enable-tap-tests --enable-debug >"$src/configure.log" 2>&1 &&
		 make -s -j"$JOBS" >/dev/null 2>"$src/make.log" && make -s install >/dev/null &&
		 make -s -C contrib/pageinspect install >/dev/null &&
		 make -s -C contrib/amcheck install >/dev/null) >&2 ||
			{ say "deps: PostgreSQL 18 build failed (logs in $src)"; exit 1; }
		rm -rf "$src"
		touch "$prefix/.done"
	fi
	echo "$prefix"
}

"build_$1"
