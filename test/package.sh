#!/usr/bin/env bash
# test/package.sh: builds the Debian package postgresql-15-simhash and tests it
# installed, as a fresh Debian 12 machine would (as root):
#   1. installs the build dependencies (apt);
#   2. copies the tree (tracked and untracked, not ignored files) to a
#      temporary directory and runs `dpkg-buildpackage -us -uc -b` there;
#   3. installs the .deb with `dpkg -i` (this writes the SYSTEM PostgreSQL 15
#      directories: /usr/lib/postgresql/15/lib, /usr/share/postgresql/15);
#   4. checks that the installed files are the package's, then runs the
#      regression suite against them with `pg_buildext installcheck`
#      (pg_virtualenv: a throwaway cluster; the system cluster is untouched).
# The package stays installed: removing it would remove the extension from the
# system directories.  Exits non-zero on any failure; prints the build and
# test time.  SIMHASH_KEEP=1 keeps the temporary directory.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
	say "test/package.sh: needs root (apt-get, dpkg -i)"; exit 1
fi
ensure_packages debhelper dpkg-dev postgresql-server-dev-all || exit 1

work=$(mktemp -d /tmp/simhash-deb.XXXXXX)
cleanup() { [ -n "${SIMHASH_KEEP:-}" ] || rm -rf "$work"; }
trap cleanup EXIT
src=$work/simhash
mkdir -p "$src"
if git -C "$SIMHASH_ROOT" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$SIMHASH_ROOT" && git ls-files -z -co --exclude-standard |
		tar --null -T - -cf -) | tar -C "$src" -xf - || exit 1
else
	cp -a "$SIMHASH_ROOT/." "$src/" || exit 1
fi

t0=$(date +%s)
say "package: dpkg-buildpackage -us -uc -b in $src"
if ! (cd "$src" && dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1; then
	tail -60 "$work/build.log" >&2; say "package: build FAILED"; exit 1
fi
t1=$(date +%s)
deb=$(ls "$work"/postgresql-15-simhash_*.deb 2>/dev/null | grep -v dbgsym | head -1)
[ -n "$deb" ] || { say "package: no .deb built"; exit 1; }
say "package: built $(basename "$deb") in $((t1 - t0)) s"

dpkg -i "$deb" >&2 || { say "package: dpkg -i FAILED"; exit 1; }
# the installed module and scripts must be the package's own
for f in /usr/lib/postgresql/15/lib/simhash.so /usr/share/postgresql/15/extension/simhash.control \
	/usr/share/postgresql/15/extension/simhash--1.0.sql /usr/share/postgresql/15/extension/simhash--1.0--1.1.sql \
	/usr/share/postgresql/15/extension/simhash--1.1.sql; do
	dpkg -S "$f" 2>/dev/null | grep -q '^postgresql-15-simhash:' ||
		{ say "package: $f is not installed by postgresql-15-simhash"; exit 1; }
done
dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ./usr/lib/postgresql/15/lib/simhash.so |
	cmp -s - /usr/lib/postgresql/15/lib/simhash.so ||
	{ say "package: the installed simhash.so differs from the package's"; exit 1; }

# pg_regress against the installed package (what debian/tests/installcheck runs);
# pg_virtualenv runs the server as nobody, so the copy must be writable by it
chmod -R a+rwX "$src"
if ! (cd "$src" && debian/tests/installcheck) >"$work/installcheck.log" 2>&1; then
	tail -100 "$work/installcheck.log" >&2; say "package: installcheck FAILED"; exit 1
fi
t2=$(date +%s)
grep -E '^(ok|not ok|test) |tests passed|All [0-9]+ tests' "$work/installcheck.log" >&2
say "package: installcheck passed in $((t2 - t1)) s (build $((t1 - t0)) s, total $((t2 - t0)) s)"
