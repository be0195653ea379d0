#!/bin/bash
# test/citus/install.sh SRC_DIR - build Citus from source into the PostgreSQL whose pg_config is on
# PATH, as a test dependency of the Citus suite (test/citus/run.sh).
#
# SRC_DIR is an unpacked Citus source tree, e.g. tag v13.2.2 of github.com/citusdata/citus:
#     git --git-dir=/path/to/citus.git archive v13.2.2 | tar x -C SRC_DIR
# Citus is not vendored in this repository and CI cannot fetch it: without it, test/run.sh reports
# the Citus suite as skipped by name.
#
# Steps: Debian build dependencies via apt (when root and missing); one source fix when needed
# (below); configure --without-libcurl (no anonymous statistics calls from test clusters);
# make -j$JOBS; make install (into `pg_config --pkglibdir` / `--sharedir`).
#
# The fix: Citus 13.2.2's src/include/pg_version_compat.h defines, for PostgreSQL 15, a
# `static inline bool have_createdb_privilege(void)`. PostgreSQL 15.20 (and later 15.x) exports
# that function from commands/dbcommands.h, and the two declarations conflict. When the server's
# dbcommands.h declares it, the static definition is removed and the header is included instead.
# Applied only when needed, and only once (idempotent).
set -euo pipefail

SRC_DIR=${1:?usage: test/citus/install.sh SRC_DIR}
JOBS=${JOBS:-2}
cd "$SRC_DIR"
[ -f configure ] && [ -f src/include/pg_version_compat.h ] ||
    { echo "install.sh: $SRC_DIR is not a Citus source tree" >&2; exit 2; }

PG_CONFIG=${PG_CONFIG:-pg_config}
echo "install.sh: building Citus into $("$PG_CONFIG" --pkglibdir) ($("$PG_CONFIG" --version))"

deps="liblz4-dev libzstd-dev libkrb5-dev libssl-dev libselinux1-dev libxslt1-dev libpam0g-dev
      libreadline-dev"
missing=""
for p in $deps; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing ||
            { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing; }
    else
        echo "install.sh: missing build dependencies:$missing (apt-get install them as root)" >&2
        exit 2
    fi
fi

compat=src/include/pg_version_compat.h
dbcommands="$("$PG_CONFIG" --includedir-server)/commands/dbcommands.h"
if grep -q 'extern bool have_createdb_privilege' "$dbcommands" &&
   grep -q '^have_createdb_privilege(void)' "$compat"; then
    echo "install.sh: $dbcommands exports have_createdb_privilege(): removing Citus's static copy"
    # Delete "static inline bool" + "have_createdb_privilege(void)" + its body up to the closing
    # brace in column 0, and include the server's declaration in its place.
    perl -0pi -e 's/static inline bool\nhave_createdb_privilege\(void\)\n\{.*?\n\}\n/#include "commands\/dbcommands.h"\n/s' "$compat"
    grep -q '^have_createdb_privilege(void)' "$compat" &&
        { echo "install.sh: could not apply the have_createdb_privilege fix" >&2; exit 1; }
elif grep -q '^#include "commands/dbcommands.h"' "$compat"; then
    echo "install.sh: have_createdb_privilege fix already applied"
else
    echo "install.sh: have_createdb_privilege fix not needed ($dbcommands does not export it)"
fi

if [ ! -f Makefile.global ]; then
    ./configure PG_CONFIG="$PG_CONFIG" --without-libcurl
fi
make -j"$JOBS"
make install
echo "install.sh: installed $("$PG_CONFIG" --pkglibdir)/citus.so"
