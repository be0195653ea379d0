# Makefile: builds the simhash extension with PGXS.
#   make && make install      build and install into the server found by pg_config
#   make installcheck         pg_regress against a running server (see test/run.sh)

EXTENSION = simhash
MODULE_big = simhash
# SQL scripts: sql/simhash.sql is the source of the current version's install
# script sql/simhash--$(EXTVERSION).sql (built below).  Released scripts are
# frozen (1.0: tag v1.0) and an upgrade script leads from each release to the
# next.  Every SQL change goes into BOTH sql/simhash.sql and the upgrade script
# to the next version; test/t/005_upgrade.pl proves that they agree (an
# upgraded database has exactly the objects of a fresh install).
EXTVERSION = 1.1
DATA = sql/simhash--1.0.sql sql/simhash--1.0--1.1.sql
DATA_built = sql/simhash--$(EXTVERSION).sql

# Sources live in src/<part>/ (see doc/contributing.md); objects are built
# into build/<part>/ so that the source folders hold only sources.
# src/core/ is the pure-C core: no server headers (the unit tests and fuzzers
# compile exactly that folder, which keeps the boundary checked).
CORE_SRCS = $(sort $(wildcard $(srcdir)/src/core/*.c))
SERVER_SRCS = $(srcdir)/src/module.c $(srcdir)/src/progress.c \
	$(sort $(wildcard $(foreach part,shared types text index dedup join minhash sentences,$(srcdir)/src/$(part)/*.c)))
OBJS = $(patsubst $(srcdir)/src/%.c,build/%.o,$(CORE_SRCS) $(SERVER_SRCS))

# pg_regress tests: sql/<name>.sql against expected/<name>.out, by subject.
# They share one database: "type" comes first (it creates the extension).
# One test: make installcheck REGRESS=name (or test/run.sh --only name).
# the types, fingerprints and their inputs
REGRESS = type distance compute tokenizer aggregate encoding bad_input cjk
# searching: find_all, the planner's rewrites, the radius join
REGRESS += find_all planner join join_parallel pgvector_compat distance_histogram
# the index
REGRESS += index index_hardening index_churn index_probe index_order index_lanes index_cache exclusion
# the dedup jobs (serial, parallel, the parts Citus uses)
REGRESS += recipes dedup dedup_runs dedup_keys dedup_parallel dedup_keys_parallel citus_parts
# MinHash and sentence fingerprints
REGRESS += minhash sentences
# across the extension: error messages and hardening
REGRESS += usability hardening search_path
REGRESS_OPTS = --inputdir=. --outputdir=$(or $(REGRESS_OUTDIR),.)

# xxHash comes from Debian's libxxhash-dev, used header-only (inlined).
PG_CPPFLAGS = -I$(srcdir)/src
PG_CFLAGS = -O2

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# Objects (and the LLVM bitcode PGXS installs beside them) go to build/.
build/%.o: $(srcdir)/src/%.c
	@$(MKDIR_P) $(@D)
	$(CC) $(CFLAGS) $(CPPFLAGS) -c -o $@ $<

build/%.bc: $(srcdir)/src/%.c
	@$(MKDIR_P) $(@D)
	$(COMPILE.c.bc) -o $@ $<

EXTRA_CLEAN = build

# PGXS does not track header dependencies here: rebuild on any header change
$(OBJS): $(wildcard $(srcdir)/src/*.h $(srcdir)/src/*/*.h)

# The install script of the current version, from its source: each line
# "--@generate SCRIPT PART" of sql/simhash.sql is replaced by the output of
# `sh sql/SCRIPT PART` (the simhash_distance operator grid; sh and awk only,
# as the Debian package build has them).
sql/simhash--$(EXTVERSION).sql: sql/simhash.sql sql/distance_grid.sh
	awk -v dir='$(srcdir)/sql' '/^--@generate / { cmd = "sh " dir "/" $$2 " " $$3; \
		while ((cmd | getline line) > 0) print line; if (close(cmd) != 0) exit 1; next } \
		{ print }' $(srcdir)/sql/simhash.sql > $@ || { rm -f $@; exit 1; }
