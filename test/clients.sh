#!/usr/bin/env bash
# test/clients.sh python|node|jdbc: tests a client adapter and runs its
# example (clients/python for psycopg 3, clients/node for node-postgres), or
# the JDBC recipes (clients/jdbc), against a throwaway cluster with the
# extension installed.  Installs what the client needs: Debian's
# python3-psycopg (run with Debian's /usr/bin/python3); node-pg, Debian's
# package first (with Debian's nodejs when node is missing), else npm's pg in a
# temporary directory; libpostgresql-jdbc-java (and a JDK when javac is
# missing).  Exit 0 passed, 1 failed, 77 skipped (cannot get the driver; the
# caller reports it by name).
set -uo pipefail
source "$(dirname "$0")/lib.sh"
cd "$SIMHASH_ROOT"

# the examples expect the extension in the database they connect to
with_extension() { "$PGBIN/psql" -X -q -c 'CREATE EXTENSION IF NOT EXISTS simhash' >/dev/null && "$@"; }

node_pg_ready() { command -v node >/dev/null && node -e "require('pg')" 2>/dev/null; }

case "${1:-}" in
python)
	# the package installed from a copy of clients/python into a fresh venv
	# (Debian's python3-venv; --system-site-packages for Debian's
	# python3-psycopg; no index and no build isolation: setuptools is
	# Debian's python3-setuptools), its tests and example run from there
	ensure_packages python3-psycopg python3-venv python3-setuptools || exit 77
	pydir=$(mktemp -d /tmp/simhash-py.XXXXXX)
	cp -r clients/python "$pydir/src"
	/usr/bin/python3 -m venv --system-site-packages "$pydir/venv" &&
		"$pydir/venv/bin/pip" install -q --no-build-isolation --no-index "$pydir/src" >&2 ||
		{ say "clients: the Python package does not install"; rm -rf "$pydir"; exit 1; }
	run() {
		(cd "$pydir" && venv/bin/python src/tests/test_simhash_psycopg.py) &&
			with_extension "$pydir/venv/bin/python" "$pydir/src/example.py"
	}
	;;
node)
	command -v node >/dev/null || ensure_packages nodejs node-pg || exit 77
	if ! node_pg_ready && [ "$(id -u)" -eq 0 ]; then
		# fails where node is not Debian's (node-pg depends on Debian's nodejs)
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq node-pg >/dev/null 2>&1
	fi
	if ! node_pg_ready && command -v npm >/dev/null; then
		npmdir=$(mktemp -d /tmp/simhash-npm.XXXXXX)
		say "clients: node-pg from npm into $npmdir"
		(cd "$npmdir" && npm install --no-audit --no-fund --loglevel=error 'pg@>=8.8.0 <9') >&2 &&
			export NODE_PATH=$npmdir/node_modules
	fi
	node_pg_ready || { say "clients: no node-postgres (node-pg) available"; exit 77; }
	run() { (cd clients/node && node --test test.js && with_extension node example.js); }
	;;
jdbc)
	# the recipes for drivers without an adapter, run with Java's source launcher
	ensure_packages libpostgresql-jdbc-java || exit 77
	command -v javac >/dev/null || ensure_packages default-jdk-headless || exit 77
	conf="listen_addresses = '127.0.0.1'"	# PgJDBC speaks TCP only
	run() {
		java -cp /usr/share/java/postgresql.jar clients/jdbc/SimhashRecipes.java \
			"jdbc:postgresql://127.0.0.1:$PGPORT/postgres?user=postgres"
	}
	;;
*)
	say "usage: test/clients.sh python|node|jdbc"; exit 2 ;;
esac

start_cluster ${conf:+"$conf"} || exit 1
run >&2
rc=$?
stop_cluster
[ -n "${npmdir:-}" ] && rm -rf "$npmdir"
[ -n "${pydir:-}" ] && rm -rf "$pydir"
exit $rc
