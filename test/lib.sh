# test/lib.sh: shared shell functions for the set-up, test, demo and benchmark
# scripts.  Source it; it owns: installing Debian packages, building and
# installing the extension, and a throwaway PostgreSQL 15 cluster (initdb in a
# temporary directory, run by a non-root user, listening only on a Unix socket
# in that directory).  The system cluster is never touched.

PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
SIMHASH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

say() { printf '%s\n' "$*" >&2; }

# Debian packages the project needs; installed only when missing.
SIMHASH_PACKAGES="build-essential postgresql-15 postgresql-server-dev-15 libxxhash-dev libipc-run-perl"
# the fuzz targets (libFuzzer) and the sanitized unit tests (issue #10)
SIMHASH_PACKAGES="$SIMHASH_PACKAGES clang libclang-rt-14-dev"

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
# free port.  Exports PGHOST, PGPORT, PGUSER, PGDATABASE and SIMHASH_TMP.
# Extra postgresql.conf lines may be passed as arguments.
start_cluster() {
	SIMHASH_TMP=$(mktemp -d /tmp/simhash.XXXXXX)
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
