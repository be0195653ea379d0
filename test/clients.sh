#!/usr/bin/env bash
# test/clients.sh python|node|jdbc: tests a client package from an installed
# copy and runs its example (clients/python, the psycopg 3 package installed
# into a fresh venv; clients/node, the node-postgres package from `npm pack`
# installed into a scratch project), or the JDBC recipes (clients/jdbc),
# against a throwaway cluster with the extension installed.  Installs what the
# client needs: Debian's python3-psycopg, python3-venv and python3-setuptools;
# nodejs and npm, with pg from npm (Debian's node-pg when npm has none);
# libpostgresql-jdbc-java (and a JDK when javac is missing).  Exit 0 passed,
# 1 failed, 77 skipped (cannot get the driver; the caller reports it by name).
set -uo pipefail
source "$(dirname "$0")/lib.sh"
cd "$SIMHASH_ROOT"

# the examples expect the extension in the database they connect to
with_extension() { "$PGBIN/psql" -X -q -c 'CREATE EXTENSION IF NOT EXISTS simhash' >/dev/null && "$@"; }


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
	# the package from `npm pack` installed into a scratch project with pg
	# from npm (or Debian's node-pg when npm's cannot be had); its CommonJS
	# and ESM tests and the example run there, and its types are checked by
	# TypeScript when npm has it
	command -v node >/dev/null || ensure_packages nodejs || exit 77
	command -v npm >/dev/null || ensure_packages npm || { say "clients: no npm to pack the package"; exit 77; }
	npmdir=$(mktemp -d /tmp/simhash-npm.XXXXXX)
	cp -r clients/node "$npmdir/pkg"
	tarball=$(cd "$npmdir/pkg" && npm pack --silent --pack-destination "$npmdir") ||
		{ say "clients: npm pack failed"; rm -rf "$npmdir"; exit 1; }
	mkdir "$npmdir/app" && cp -r clients/node/test clients/node/example.js "$npmdir/app/"
	echo '{"name": "simhash-pg-scratch", "private": true}' >"$npmdir/app/package.json"
	npm_install() { (cd "$npmdir/app" && npm install --no-audit --no-fund --loglevel=error "$@") >&2; }
	if ! npm_install "$npmdir/$tarball" 'pg@>=8.8.0 <9'; then
		say "clients: no pg from npm; Debian's node-pg"
		{ ensure_packages node-pg && npm_install --offline --legacy-peer-deps "$npmdir/$tarball"; } ||
			{ say "clients: no node-postgres (pg) available"; rm -rf "$npmdir"; exit 77; }
		export NODE_PATH=/usr/share/nodejs:/usr/lib/nodejs
	fi
	typecheck() {
		if ! npm_install 'typescript@5' '@types/pg@8' 2>/dev/null; then
			say "clients: node types not checked (no TypeScript from npm)"
			return 0
		fi
		cat >"$npmdir/app/types.cts" <<-'EOF'
			import { register, toSimhash64, parseSimhash64Array, SimhashOids } from 'simhash-pg';
			import { Client } from 'pg';
			const oids: Promise<SimhashOids> = register(new Client());
			const hex: string = toSimhash64(1n);
			const arr: (bigint | null)[] = parseSimhash64Array('{}');
		EOF
		sed -e 's/^import { register, toSimhash64, parseSimhash64Array, SimhashOids }/import simhash, { register, toSimhash64, parseSimhash64Array, type SimhashOids }/' \
			-e '$a const again: string = simhash.toSimhash64(2n);' \
			"$npmdir/app/types.cts" >"$npmdir/app/types.mts"
		(cd "$npmdir/app" && npx tsc --noEmit --strict --module node16 --moduleResolution node16 \
			--target es2020 types.cts types.mts) >&2
	}
	run() {
		(cd "$npmdir/app" && node --test test/test.cjs test/esm.test.mjs && with_extension node example.js) && typecheck
	}
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
