# test/lib.sh: shared shell functions for the set-up, test, demo and benchmark
# scripts.  Source it; it owns: installing Debian packages, building and
# installing the extension, and a throwaway cluster of the server in $PGBIN
# (default Debian's PostgreSQL 15; initdb in a temporary directory, run by a
# non-root user, listening only on a Unix socket in that directory).  The
# system cluster is never touched.

PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
SIMHASH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

say() { printf '%s\n' "$*" >&2; }

# Debian packages the project needs; installed only when missing.
SIMHASH_PACKAGES="build-essential postgresql-15 postgresql-server-dev-15 libxxhash-dev libipc-run-perl"
# the fuzz targets (libFuzzer) and the sanitized unit tests
SIMHASH_PACKAGES="$SIMHASH_PACKAGES clang libclang-rt-14-dev"
# building the vendored PostgreSQL 18 (test/deps.sh) and Citus
# (test/citus/install.sh), when ../shared/vendor is there
SIMHASH_DEPS_PACKAGES="bison flex liblz4-dev libzstd-dev libkrb5-dev libssl-dev libselinux1-dev
	libxslt1-dev libpam0g-dev libreadline-dev"

ensure_packages() {
	local missing=() p
	for p in $SIMHASH_PACKAGES "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		say "missing Debian packages: ${missing[*]} (run as root, or apt-get install them)"
		return 1
	fi
	say "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null && apt-get install -y -qq "${missing[@]}" >/dev/null
}

# Build warning-free and install into the server's directories.
build_install() {
	(cd "$SIMHASH_ROOT" && make -s -j2 && make -s install) >&2
}

# The OS user that runs the throwaway server: ourselves, or postgres when root.
cluster_user() {
	if [ "$(id -u)" -eq 0 ]; then echo postgres; else id -un; fi
}

as_cluster_user() {
	if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# start_cluster: initdb in a fresh temporary directory and start a server on a
# free port (under $SIMHASH_TMPROOT, default /tmp).  Exports PGHOST, PGPORT, PGUSER, PGDATABASE and SIMHASH_TMP.
# Extra postgresql.conf lines may be passed as arguments.
start_cluster() {
	SIMHASH_TMP=$(mktemp -d "${SIMHASH_TMPROOT:-/tmp}/simhash.XXXXXX")
	chmod 755 "$SIMHASH_TMP"
	[ "$(id -u)" -eq 0 ] && chown postgres "$SIMHASH_TMP"
	local port=$((20000 + RANDOM % 20000))
	as_cluster_user "$PGBIN/initdb" -D "$SIMHASH_TMP/data" -U postgres -E UTF8 --locale=C.UTF-8 -A trust >"$SIMHASH_TMP/initdb.log" 2>&1 ||
		{ cat "$SIMHASH_TMP/initdb.log" >&2; return 1; }
	{
		echo "listen_addresses = ''"
		echo "unix_socket_directories = '$SIMHASH_TMP'"
		echo "port = $port"
		echo "fsync = off"
		echo "max_parallel_workers_per_gather = 2"
		local line
		for line in "$@"; do echo "$line"; done
	} >>"$SIMHASH_TMP/data/postgresql.conf"
	as_cluster_user "$PGBIN/pg_ctl" -D "$SIMHASH_TMP/data" -l "$SIMHASH_TMP/server.log" -w start >/dev/null ||
		{ cat "$SIMHASH_TMP/server.log" >&2; return 1; }
	export PGHOST=$SIMHASH_TMP PGPORT=$port PGUSER=postgres PGDATABASE=postgres SIMHASH_TMP
	trap stop_cluster EXIT
}

stop_cluster() {
	[ -n "${SIMHASH_TMP:-}" ] && [ -d "$SIMHASH_TMP/data" ] || return 0
	as_cluster_user "$PGBIN/pg_ctl" -D "$SIMHASH_TMP/data" -m fast -w stop >/dev/null 2>&1
	[ -n "${SIMHASH_KEEP:-}" ] || rm -rf "$SIMHASH_TMP"
}

# run_tap FILE...: prove the TAP files (t/NAME.pl) of test/t as the cluster
# user, from a copy of test/t and README.md in $SIMHASH_TAPDIR (the checkout
# may not be readable by postgres; t/017_readme.pl reads the README there).
# prove's output goes to $SIMHASH_TAPDIR/prove.log and to stderr.  Returns
# its status.
run_tap() {
	run_tap_dir test "$@"
}

# run_tap_dir DIR FILE...: the same for the TAP files of DIR/t (DIR relative
# to the checkout); the tests find PostgreSQL 15's binaries in $PG15_BIN
run_tap_dir() {
	local dir=$1 pgxs rc
	shift
	pgxs=$(dirname "$(pg_config --pgxs)")
	SIMHASH_TAPDIR=$(mktemp -d /tmp/simhash-tap.XXXXXX)
	cp -r "$SIMHASH_ROOT/$dir/t" "$SIMHASH_TAPDIR/t"
	cp "$SIMHASH_ROOT/README.md" "$SIMHASH_ROOT/sql/public_functions.psql" "$SIMHASH_TAPDIR/"
	# the 1.0 release's sources, for t/037 (it builds the 1.0 library)
	mkdir "$SIMHASH_TAPDIR/simhash-1.0"
	git -C "$SIMHASH_ROOT" archive 8ec87ac 2>/dev/null | tar -x -C "$SIMHASH_TAPDIR/simhash-1.0" 2>/dev/null ||
		rm -rf "$SIMHASH_TAPDIR/simhash-1.0"
	[ "$(id -u)" -eq 0 ] && chown -R postgres "$SIMHASH_TAPDIR"
	(cd "$SIMHASH_TAPDIR" && as_cluster_user env TESTDIR="$SIMHASH_TAPDIR" PATH="$PGBIN:$PATH" \
		SIMHASH_V10_SRC="$SIMHASH_TAPDIR/simhash-1.0" \
		PG15_BIN="${PG15_BIN:-/usr/lib/postgresql/15/bin}" \
		PG_REGRESS="$pgxs/../test/regress/pg_regress" \
		prove -I "$pgxs/../test/perl" -I "$SIMHASH_TAPDIR/t" "$@") >"$SIMHASH_TAPDIR/prove.log" 2>&1
	rc=$?
	cat "$SIMHASH_TAPDIR/prove.log" >&2
	return $rc
}

# run_one NAME: one test against the installed extension: a pg_regress test
# (sql/NAME.sql, on a throwaway cluster; a test that does not create the
# extension gets it from pg_regress --load-extension) or a TAP file
# (test/t/NAME.pl; "t/" and ".pl" may be given).  Returns its status.
run_one() {
	local name=$1 rc
	name=${name#test/}; name=${name#t/}; name=${name#sql/}; name=${name%.pl}; name=${name%.sql}
	if [ -f "$SIMHASH_ROOT/test/t/$name.pl" ]; then
		run_tap "t/$name.pl"; rc=$?
		[ $rc -eq 0 ] && rm -rf "$SIMHASH_TAPDIR"
		return $rc
	fi
	if [ ! -f "$SIMHASH_ROOT/sql/$name.sql" ] || [[ $name == simhash* ]]; then
		say "no test named $name (a pg_regress test sql/NAME.sql or a TAP file test/t/NAME.pl)"
		return 2
	fi
	local load=""
	grep -qi 'create extension' "$SIMHASH_ROOT/sql/$name.sql" || load=--load-extension=simhash
	start_cluster || return 1
	mkdir -p "$SIMHASH_TMP/regress"
	(cd "$SIMHASH_ROOT" && make -s installcheck REGRESS="$name" EXTRA_REGRESS_OPTS="$load" \
		REGRESS_OUTDIR="$SIMHASH_TMP/regress") >&2
	rc=$?
	[ $rc -ne 0 ] && [ -f "$SIMHASH_TMP/regress/regression.diffs" ] && cat "$SIMHASH_TMP/regress/regression.diffs" >&2
	stop_cluster
	return $rc
}
