# tlbf: time-limited Bloom filters for PostgreSQL.
#
#   make demo    build, install and show the filter on a real access log
#   make test    build, install and run every test (installs what is missing)
#   make bench   timing figures (ratios measured side by side)
#   make eval    the papers' experiments and the comparison with other
#                structures: CSV and PNG under docs/eval
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
REGRESS = setup type_io create_add contains hashing labels retire_info bad_params streams aggregates maintenance shared_unloaded bad_inputs upgrade
EXTRA_CLEAN = build results regression.diffs regression.out tmp_check output_iso
PROVE_TESTS = $(sort $(wildcard test/t/*.pl))
ISOLATION = shared_test_and_add shared_retire shared_create_drop
ISOLATION_OPTS = --inputdir=test/isolation

PG_CONFIG ?= /usr/lib/postgresql/15/bin/pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs 2>/dev/null)
ifneq ($(PGXS),)
include $(PGXS)
endif

.PHONY: test demo bench bench-tools unit unit-run unit-sanitized tap eval fuzz

# --- the pure-C core, built alone -------------------------------------------
CORE_HEADERS = $(wildcard src/core/*.h)
UNIT_CFLAGS = -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter -Isrc/core -Itest
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

# --- TAP tests (PostgreSQL::Test::Cluster; each starts its own clusters) ----
tap:
	$(prove_installcheck)

# --- benchmark programs -----------------------------------------------------
BENCH_TOOLS = build/bench/core_bench build/bench/make_filter

build/bench/%: test/bench/%.c $(CORE_SRCS) $(CORE_HEADERS) test/heap_memory.h
	@mkdir -p $(dir $@)
	gcc -std=gnu11 -O2 -g -Wall -fno-strict-aliasing -fwrapv -Isrc/core -Itest -o $@ $< $(CORE_SRCS) -lm

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

# libFuzzer targets; FUZZ_SECONDS per target (see test/fuzz)
FUZZ_SECONDS ?= 60
fuzz:
	scripts/fuzz.sh $(FUZZ_SECONDS)
