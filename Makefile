# Makefile: builds the simhash extension with PGXS.
#   make && make install      build and install into the server found by pg_config
#   make installcheck         pg_regress against a running server (see test/run.sh)

EXTENSION = simhash
MODULE_big = simhash
# Versions: 1.0 is frozen (tag v1.0); later changes go into upgrade scripts,
# and the current version's install script is built from them (see the
# header of sql/simhash--1.0--1.1.sql).
EXTVERSION = 1.1
DATA = sql/simhash--1.0.sql sql/simhash--1.0--1.1.sql
DATA_built = sql/simhash--$(EXTVERSION).sql

OBJS = \
	src/simhash.o \
	src/planner.o \
	src/type.o \
	src/distance.o \
	src/vote.o \
	src/tokenizer.o \
	src/tfweight.o \
	src/compute.o \
	src/text_features.o \
	src/text_array.o \
	src/input.o \
	src/aggregate.o \
	src/am_handler.o \
	src/am_pages.o \
	src/am_runs.o \
	src/am_build.o \
	src/am_insert.o \
	src/am_scan.o \
	src/am_vacuum.o \
	src/am_cost.o \
	src/am_validate.o \
	src/am_check.o \
	src/am_verify.o \
	src/ball.o \
	src/blocks.o \
	src/find_all.o \
	src/minhash.o src/minhash_sql.o \
	src/rowpairs.o \
	src/dedup_read.o \
	src/dedup_search.o \
	src/dedup_pairs.o \
	src/dedup_groups.o \
	src/dedup_keys.o \
	src/join.o \
	src/dedup_citus.o \
	src/sentences.o src/sentences_sql.o

# pg_regress tests: sql/<name>.sql against expected/<name>.out
REGRESS = type distance compute tokenizer aggregate encoding bad_input find_all planner index recipes dedup dedup_keys minhash sentences usability index_hardening hardening cjk join citus_parts
# issue #11: beside pgvector, the distance histogram
REGRESS += pgvector_compat distance_histogram
REGRESS_OPTS = --inputdir=. --outputdir=$(or $(REGRESS_OUTDIR),.)

# xxHash comes from Debian's libxxhash-dev, used header-only (inlined).
PG_CPPFLAGS = -I$(srcdir)/src
PG_CFLAGS = -O2

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS does not track header dependencies here: rebuild on any header change
$(OBJS): $(wildcard $(srcdir)/src/*.h)

# The install script of the current version: 1.0, then each upgrade in order,
# without the upgrade scripts' \echo guard lines.
sql/simhash--1.1.sql: sql/simhash--1.0.sql sql/simhash--1.0--1.1.sql
	{ cat $(srcdir)/sql/simhash--1.0.sql; \
	  sed '/^\\echo /d' $(srcdir)/sql/simhash--1.0--1.1.sql; } > $@
