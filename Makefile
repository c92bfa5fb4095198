# tlbf: time-limited Bloom filters for PostgreSQL.
#
#   make demo    build, install and show the filter on a real access log
#   make test    build, install and run every test (installs what is missing)
#   make matrix  build and test against every PostgreSQL version at hand
#   make bench   timing figures against the strongest exact designs, rounds
#                interleaved (in a private copy of PostgreSQL, as make matrix)
#   make eval    the papers' experiments and the comparison with other
#                structures: CSV and PNG under docs/eval
#   make deb     Debian packages, postgresql-NN-tlbf, into build/deb
#
# The extension itself builds with PGXS; the core (src/core) also builds
# alone, for the unit tests, fuzzers and benchmarks.

EXTENSION = tlbf
MODULE_big = tlbf
CORE_SRCS = $(sort $(wildcard src/core/*.c))
GLUE_SRCS = $(sort $(wildcard src/*.c))
OBJS = $(CORE_SRCS:.c=.o) $(GLUE_SRCS:.c=.o)
DATA = $(sort $(wildcard sql/tlbf--*.sql))
PG_CPPFLAGS = -I$(srcdir)/src
# The warnings PostgreSQL 15 to 19 build with (the union of their pg_config
# --cflags), which the version matrix turns into errors (COPT=-Werror): a
# plain build against any of them shows them all first.
WARNINGS = -Wall -Wmissing-prototypes -Wpointer-arith -Wdeclaration-after-statement \
	-Werror=vla -Wendif-labels -Wmissing-format-attribute -Wimplicit-fallthrough=5 \
	-Wcast-function-type -Wshadow=compatible-local -Wformat-security \
	-Wstrict-prototypes -Wold-style-definition -Wold-style-declaration
PG_CFLAGS = $(WARNINGS)
EXTRA_CLEAN = build results regression.diffs regression.out tmp_check output_iso output_preload

# --- tests against PostgreSQL, and where a new one goes ---------------------
#   REGRESS          pg_regress tests (sql/NAME.sql, expected/NAME.out) that
#                    pass on any running server, library not preloaded:
#                    `make installcheck` (PGXS; PGHOST, PGPORT, ... say where).
#                    Keep setup first; a test of what fails without the
#                    preloaded library (shared_unloaded) belongs here.
#   REGRESS_PRELOAD  pg_regress tests that need shared_preload_libraries =
#                    'tlbf'; they run after setup.
#   ISOLATION        isolation specs, every test/isolation/specs/*.spec with
#                    its test/isolation/expected/NAME.out.
#                    `make installcheck-preload` runs REGRESS (which must
#                    pass on a preloaded server too: a user's may be one),
#                    REGRESS_PRELOAD and ISOLATION on a throwaway cluster
#                    of its own, started
#                    with the library preloaded and tlbf.worker_enabled = off
#                    (a test that needs the worker is a TAP test).
#   test/t/*.pl      TAP tests (PostgreSQL::Test::Cluster), each starting the
#                    clusters it needs: `make tap`, as a user other than root.
# `make matrix` runs all of these against each PostgreSQL version.
REGRESS = setup type_io casts_summary create_add contains value_cache inference hashing key_kinds key_equality labels retire_info bad_params streams aggregates agg_order agg_one_span agg_state future_times maintenance shared_unloaded bad_inputs format3 upgrade
REGRESS_PRELOAD = shared_functions dedup_trigger shared_stats shared_format3
PROVE_TESTS = $(sort $(wildcard test/t/*.pl))

# --- which PostgreSQL ---------------------------------------------------------
# pg_config on the PATH (on Debian, postgresql-common's picks the newest
# postgresql-server-dev-NN), else the newest of /usr/lib/postgresql/*/bin;
# or any other: make PG_CONFIG=/usr/lib/postgresql/17/bin/pg_config install
PG_CONFIG ?= pg_config
ifeq ($(origin PG_CONFIG)$(PG_CONFIG),filepg_config)
ifeq ($(shell command -v pg_config 2>/dev/null),)
PG_CONFIG := $(or $(shell ls -v /usr/lib/postgresql/*/bin/pg_config 2>/dev/null | tail -n 1),pg_config)
endif
endif
PGXS := $(shell $(PG_CONFIG) --pgxs 2>/dev/null)
PGXS_FOUND := $(wildcard $(PGXS))
ifneq ($(PGXS_FOUND),)
include $(PGXS)
else
# No PGXS: the targets that need it say what to install.  `make test`,
# `make demo` and the core's own targets install or need none of it.
ifeq ($(PGXS),)
ifeq ($(shell command -v $(PG_CONFIG) 2>/dev/null),)
NO_PGXS_WHY = there is no $(PG_CONFIG)
else
NO_PGXS_WHY = $(PG_CONFIG) --pgxs names none
endif
else
NO_PGXS_WHY = $(PG_CONFIG) names $(PGXS), which is not there
endif
define NO_PGXS_MESSAGE
tlbf builds with PostgreSQL's PGXS, and $(NO_PGXS_WHY).
Install PostgreSQL and its server development files, e.g. on Debian:
    apt-get install postgresql-15 postgresql-server-dev-15
(or postgresql-NN and postgresql-server-dev-NN from apt.postgresql.org), or
name the pg_config of the PostgreSQL to build against:
    make PG_CONFIG=/usr/lib/postgresql/17/bin/pg_config install
(`make test` installs what it needs by itself.)
endef
export NO_PGXS_MESSAGE
all install installdirs uninstall installcheck installcheck-preload tap citus-tap:
	@echo "$$NO_PGXS_MESSAGE" >&2; exit 1
clean:
	rm -rf $(EXTRA_CLEAN) $(OBJS) $(MODULE_big).so
endif
.DEFAULT_GOAL := all

# Objects belong to the PostgreSQL they were compiled against, and to the
# headers they include: build/postgres.stamp names that PostgreSQL, and is
# rewritten (so every object is compiled again) when PG_CONFIG names
# another; an object is compiled again when any header changes.
ifneq ($(PGXS_FOUND),)
POSTGRES_STAMP = build/postgres.stamp
POSTGRES_BUILT_FOR := $(shell $(PG_CONFIG) --version) $(shell $(PG_CONFIG) --includedir-server)
$(POSTGRES_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(POSTGRES_BUILT_FOR)' | cmp -s - $@ || echo '$(POSTGRES_BUILT_FOR)' >$@
$(OBJS) $(OBJS:.o=.bc): $(POSTGRES_STAMP) $(wildcard src/*.h src/core/*.h)
FORCE:
endif

# After the include: PGXS's installcheck runs ISOLATION whenever it is set
# before, and isolation needs the preloaded library.
ISOLATION = $(sort $(basename $(notdir $(wildcard test/isolation/specs/*.spec))))
ISOLATION_OPTS = --inputdir=test/isolation --dbname=isolation_regression

# The PostgreSQL the build uses, for the scripts (scripts/cluster.sh).
pg-config:
	@echo $(PG_CONFIG)

.PHONY: FORCE test demo matrix bench bench-tools unit unit-run unit-sanitized tap eval fuzz \
	pg-config installcheck-preload installcheck-preload-run deb test-deb test-meta

# --- the pure-C core, built alone -------------------------------------------
CORE_HEADERS = $(wildcard src/core/*.h)
UNIT_CFLAGS = -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter -Isrc/core -Itest
UNIT_TESTS = $(patsubst test/unit/%.c,build/unit/%,$(wildcard test/unit/test_*.c))

build/unit/%: test/unit/%.c $(CORE_SRCS) $(CORE_HEADERS) $(wildcard test/unit/*.h) test/heap_memory.h test/edge_values.h
	@mkdir -p $(dir $@)
	gcc $(UNIT_CFLAGS) -o $@ $< $(CORE_SRCS) -lcmocka -lm

unit: $(UNIT_TESTS)

unit-run: unit
	@for t in $(UNIT_TESTS); do echo "== $$t"; ./$$t || exit 1; done

# The same tests on a second build of the core under AddressSanitizer and
# UndefinedBehaviorSanitizer: any finding aborts the test.
SANITIZE = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SANITIZED_TESTS = $(patsubst build/unit/%,build/sanitized/%,$(UNIT_TESTS))

build/sanitized/%: test/unit/%.c $(CORE_SRCS) $(CORE_HEADERS) $(wildcard test/unit/*.h) test/heap_memory.h test/edge_values.h
	@mkdir -p $(dir $@)
	gcc $(UNIT_CFLAGS) -O1 $(SANITIZE) -o $@ $< $(CORE_SRCS) -lcmocka -lm

unit-sanitized: $(SANITIZED_TESTS)
	@for t in $(SANITIZED_TESTS); do echo "== $$t"; \
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 ./$$t || exit 1; done

# --- tests against PostgreSQL beyond PGXS's installcheck --------------------
ifneq ($(PGXS_FOUND),)
# REGRESS, REGRESS_PRELOAD and ISOLATION, on a throwaway cluster
# (scripts/cluster.sh) with the library preloaded and the worker off.
installcheck-preload:
	TLBF_CLUSTER_CONF="$$(printf 'tlbf.worker_enabled = off\n%s' "$${TLBF_CLUSTER_CONF:-}")" \
	PG_CONFIG='$(PG_CONFIG)' scripts/cluster.sh --preload $(MAKE) installcheck-preload-run

# the same on a server already running so (PGHOST, PGPORT, ...)
installcheck-preload-run:
	$(pg_regress_installcheck) --outputdir=output_preload $(REGRESS_OPTS) $(REGRESS) $(REGRESS_PRELOAD)
	$(pg_isolation_regress_installcheck) $(ISOLATION_OPTS) $(ISOLATION)

# TAP tests (PostgreSQL::Test::Cluster; each starts its own clusters).  The
# programs of a relocated PostgreSQL tree may find another libpq first.
tap:
	export LD_LIBRARY_PATH='$(libdir)'$${LD_LIBRARY_PATH:+:$$LD_LIBRARY_PATH}; $(prove_installcheck)

# The Citus TAP tests (test/citus/*.pl), on a PostgreSQL with Citus
# installed; scripts/citus.sh builds one and runs them.
citus-tap: PROVE_TESTS = $(sort $(wildcard test/citus/*.pl))
citus-tap:
	export LD_LIBRARY_PATH='$(libdir)'$${LD_LIBRARY_PATH:+:$$LD_LIBRARY_PATH}; $(prove_installcheck)
endif

# --- the version matrix (scripts/matrix.sh) ----------------------------------
# PG_CONFIGS: the pg_config of each PostgreSQL to test; by default the
# upstream trees of ../shared/postgres (unpacked into MATRIX_CACHE) and
# every /usr/lib/postgresql/*/bin/pg_config.
matrix:
	scripts/matrix.sh $(PG_CONFIGS)

# --- benchmark programs -----------------------------------------------------
BENCH_TOOLS = build/bench/core_bench build/bench/make_filter build/bench/layout_bench build/bench/union_bench

build/bench/%: test/bench/%.c $(CORE_SRCS) $(CORE_HEADERS) test/heap_memory.h test/bench/bench_timing.h
	@mkdir -p $(dir $@)
	gcc -std=gnu11 -O2 -g -Wall -fno-strict-aliasing -fwrapv -Isrc/core -Itest -Itest/bench -o $@ $< $(CORE_SRCS) -lm

bench-tools: $(BENCH_TOOLS)

# --- the two commands (and the benchmarks) ----------------------------------
test:
	scripts/test.sh

demo:
	scripts/demo.sh

bench:
	scripts/bench.sh

eval:
	scripts/eval.sh

# --- packages and catalogue entry --------------------------------------------
# make deb: postgresql-NN-tlbf for each installed postgresql-server-dev-NN,
# built with pg_buildext in a copy of the tree, into build/deb.
deb:
	scripts/deb.sh

# make deb, then install each package with apt, check it in a fresh cluster
# and remove it, putting back the files it replaced (make test runs it last).
test-deb:
	scripts/test_deb.sh

# META.json parses and agrees with tlbf.control, LICENSE and the changelogs.
test-meta:
	scripts/test_meta.sh

# libFuzzer targets; FUZZ_SECONDS per target (see test/fuzz)
FUZZ_SECONDS ?= 60
fuzz:
	scripts/fuzz.sh $(FUZZ_SECONDS)
