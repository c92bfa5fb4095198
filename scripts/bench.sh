#!/usr/bin/env bash
# make bench: timing figures, each contender against the strongest exact
# design a PostgreSQL user would write, measured side by side in one run,
# interleaved over several rounds (min and median), with a check that both
# sides gave the same answers or a count of where they differ (and, beside
# them, what input order does to an aggregate's result).
# Not part of make test: these machines are noisy, so timings never decide
# whether a test passes.
#
# tlbf is installed only into a private copy of Debian's PostgreSQL 15
# (scripts/private_copy.sh, the version matrix's copies, in
# $MATRIX_CACHE/postgres, by default /var/cache/tlbf as root), never into
# /usr; the copy is locked for the whole run, as make matrix locks it.
# (15: Debian's hll package, for the aggregate comparison, is built for it,
# and the figures in docs/performance.md are its.)  The Citus part needs
# the Citus build that scripts/citus.sh (make matrix) leaves in the cache;
# without it, it is skipped, and the summary at the end says so.
#
#   scripts/bench.sh                 every benchmark (make bench)
#   scripts/bench.sh NAME...         those only: core unions sql_unions contains contains_formats aggregates
#                                    agg_order agg_one_span agg_grouped citus
#                                    agg_plans dedup recency recency_join shared
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)

scripts/deps.sh postgresql-15-hll
system_pg_config=/usr/lib/postgresql/15/bin/pg_config

cache=$(scripts/cache_dir.sh)
mkdir -p "$cache/postgres"
cache=$(cd "$cache" && pwd)
exec 9>"$cache/postgres/.lock"
if ! flock -n 9; then
    echo "bench: another run (make matrix or make bench) is using $cache/postgres; waiting for it"
    flock 9
fi
PG_CONFIG=$(MATRIX_CACHE=$cache scripts/private_copy.sh "$system_pg_config")
export PG_CONFIG
export LD_LIBRARY_PATH="$("$PG_CONFIG" --libdir)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
root=${PG_CONFIG%"$("$system_pg_config" --bindir)/pg_config"}

# Whatever an earlier run installed in the copy goes first (a stale script
# would hide a missing one), as in make matrix; the tree's objects are
# compiled again when they were built for another PostgreSQL
# (build/postgres.stamp).
make -s
share=$("$PG_CONFIG" --sharedir)/extension lib=$("$PG_CONFIG" --pkglibdir)
rm -rf "$share"/tlbf.control "$share"/tlbf--*.sql "$lib"/tlbf.so "$lib"/tlbf_baseline.so \
       "$lib"/bitcode/tlbf "$lib"/bitcode/tlbf.index.bc
make -s install >/dev/null
# The copy is made again only when the server changes, so it may predate
# the hll package: its files go in by hand.
system_lib=$("$system_pg_config" --pkglibdir) system_share=$("$system_pg_config" --sharedir)
dpkg -L postgresql-15-hll | while read -r f; do
    case "$f" in
        "$system_lib"/*|"$system_share"/*)
            if [ -f "$f" ]; then mkdir -p "$(dirname "$root$f")"; cp -a "$f" "$root$f"; fi ;;
    esac
done
make -s bench-tools

echo "make bench: $("$PG_CONFIG" --version), a private copy ($PG_CONFIG);" \
     "$(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC'); commit $(git describe --always --dirty)"

out=$(mktemp /tmp/tlbf-bench.XXXXXX)
hex=$(mktemp /tmp/tlbf-bench-filter.XXXXXX)
formats=$(mktemp /tmp/tlbf-bench-formats.XXXXXX)
trap 'rm -f "$out" "$hex" "$formats"' EXIT
sections=()

only=" $* "
# section NAME TITLE command...: runs one benchmark (unless others were
# named), its output also kept for the summary (its SKIPPED lines) and its
# time noted
section() {
    local name=$1 title=$2 t0=$SECONDS
    shift 2
    [ "$only" = "  " ] || [[ $only == *" $name "* ]] || return 0
    echo
    echo "== $title"
    "$@" 2>&1 | tee -a "$out"
    sections+=("$(printf '%5ss  %s' $((SECONDS - t0)) "$title")")
}

section core "core (C): tlbf against a plain Bloom filter with the same bits and k" \
    build/bench/core_bench

section unions "core (C): unions of format 3 filters built apart, against one built over all keys" \
    build/bench/union_bench

section sql_unions "SQL: unions of filters built by time range (rollups), tlbf_agg or one declared capacity, against one built over all rows (issue 36)" \
    scripts/cluster.sh psql -X -q -v ON_ERROR_STOP=1 -f test/bench/sql_unions.sql

build/bench/make_filter 1000000 >"$hex"
section contains "SQL: a 1M-item filter read from a table, 5M probes" \
    env TLBF_FILTER_HEX="$hex" scripts/cluster.sh psql -X -q -v ON_ERROR_STOP=1 -f test/bench/sql_contains.sql

# filters of format 2 and 3 holding 1M and 30M keys, as COPY lines (ids 21, 31, 22, 32)
contains_formats() {
    for n in 1000000 30000000; do
        for format in 2 3; do
            printf '%s%s\t' "$format" "$([ $n = 1000000 ] && echo 1 || echo 2)"
            build/bench/make_filter $n 0.01 $format base64
        done
    done >"$formats"
    scripts/cluster.sh psql -X -q -v ON_ERROR_STOP=1 -f test/bench/sql_contains_formats.sql <"$formats"
}
section contains_formats "SQL: tlbf_contains on filters of format 2 and 3, 1M and 30M keys (issue 36)" \
    contains_formats

section aggregates "SQL: aggregates (tlbf_agg against hll_add_agg; parallel against serial)" \
    scripts/cluster.sh psql -X -q -v ON_ERROR_STOP=1 -f test/bench/sql_aggregates.sql

section agg_format3 "SQL: tlbf_agg and tlbf_agg_format3 (format 3, without and with a declared capacity) against hll_add_agg, serial and parallel (issue 36)" \
    scripts/cluster.sh psql -X -q -v ON_ERROR_STOP=1 -f test/bench/sql_agg_format3.sql

section agg_order "SQL: tlbf_agg's result by input order and plan (accuracy and size)" \
    scripts/cluster.sh psql -X -q -v ON_ERROR_STOP=1 -f test/bench/sql_agg_order.sql

section agg_one_span "SQL: tlbf_agg over exactly one span (accuracy and size)" \
    scripts/cluster.sh psql -X -q -v ON_ERROR_STOP=1 -f test/bench/sql_agg_one_span.sql

section agg_grouped "SQL: grouped tlbf_agg over shuffled rows against ORDER BY at" \
    scripts/cluster.sh psql -X -q -v ON_ERROR_STOP=1 -f test/bench/sql_agg_grouped.sql

section citus "Citus: tlbf_agg on a coordinator and two workers against a local table of the same rows" \
    test/bench/citus_agg.sh

section agg_plans "SQL: tlbf_agg's speed, now and before its result was the same under every plan" \
    scripts/cluster.sh test/bench/agg_plans.sh

section dedup "shared filters: rejecting recent duplicates on INSERT, against the exact ON CONFLICT table (library preloaded)" \
    env TLBF_CLUSTER_CONF="max_connections = 50" scripts/cluster.sh --preload test/bench/dedup.sh

section recency "SQL: the recency join (returning visitors) against the best exact plans" \
    scripts/cluster.sh psql -X -q -v ON_ERROR_STOP=1 -f test/bench/sql_recency.sql

section recency_join "SQL: the recency join against per-group filters, probes in any order against grouped" \
    scripts/cluster.sh psql -X -q -v ON_ERROR_STOP=1 -f test/bench/sql_recency_join.sql

section shared "shared filters: tlbf_shared_add against tlbf_contains" \
    env TLBF_CLUSTER_CONF="tlbf.shared_memory = '256MB'" \
    scripts/cluster.sh --preload psql -X -q -v ON_ERROR_STOP=1 -f test/bench/sql_shared.sql

# Issue 36's goals that these parts measure, side by side (min of the
# interleaved rounds; the medians are in the parts above): a row reads
# "not run" when its part was not named.
# field N (by |) of the Kth line of $out whose first field is LABEL, and
# "x"; nothing if there is none
cell() {
    awk -F'|' -v label="$1" -v k="$2" -v n="$3" '
        { f = $1; gsub(/^ +| +$/, "", f) }
        f == label && ++seen == k { v = $n; gsub(/ /, "", v); print v "x"; exit }' "$out"
}
# the speed-up of 2 workers of the parallel part's row QUERY, and "x"
speedup() {
    awk -F'|' -v query="$1" '
        { f = $1; gsub(/^ +| +$/, "", f) }
        f == query && $2 ~ /2 workers/ { v = $5; gsub(/ /, "", v); print v "x"; exit }' "$out"
}
# the largest ratio, over the unions part's rows built by BUILDER, of the
# united filter's bytes (RATIO=bytes) or error rate (RATIO=fpr) to the
# whole's, and "x"
union_ratio() {
    awk -F'|' -v builder="$1" -v ratio="$2" '
        { b = $3; gsub(/ /, "", b) }
        b == builder && $6 ~ /[0-9]/ {
            v = ratio == "bytes" ? $6 + 0 : ($8 + 0 > 0 ? ($9 + 0) / ($8 + 0) : 0)
            if (!seen || v > worst) worst = v
            seen = 1
        }
        END { if (seen) printf "%.3fx\n", worst }' "$out"
}
goal() {
    printf '  %-58s %-12s %s\n' "$1" "${2:-not run}" "$3"
}
echo
echo "== issue 36's goals (min of the rounds above)"
goal "tlbf_contains vs hashint8, format 3, 1M keys" "$(cell 'format 3, 1M keys' 1 4)" "<= 1.5x"
goal "tlbf_contains vs hashint8, format 3, 30M keys" "$(cell 'format 3, 30M keys' 1 4)" "<= 2x"
goal "tlbf_agg vs hll_add_agg, serial, 5M rows" "$(cell 'tlbf_agg(g, at, ...)' 1 4)" "<= 1.3x"
goal "tlbf_agg vs hll_add_agg, serial, 30M rows" "$(cell 'tlbf_agg(g, at, ...)' 2 4)" "<= 1.3x"
goal "tlbf_agg(... ORDER BY at) vs hll_add_agg(... ORDER BY at)" "$(cell 'tlbf_agg(... ORDER BY at)' 1 4)" "no slower with it"
goal "parallel speed-up of tlbf_agg (2 workers, 30M rows)" "$(speedup tlbf_agg)" \
    "at least hll_add_agg's ($(speedup hll_add_agg))"
goal "union of ranges, one declared capacity: bytes" "$(union_ratio declared bytes)" "<= 1.05x the whole's"
goal "union of ranges, one declared capacity: error rate" "$(union_ratio declared fpr)" "<= 1.1x the whole's"
goal "union of ranges built by tlbf_agg: bytes" "$(union_ratio tlbf_agg bytes)" \
    "(sized apart: side by side when cut inside generations)"

echo
echo "== make bench: $(( $(date +%s) - started ))s in all (build included)"
printf '%s\n' "${sections[@]}"
[ "$only" = "  " ] || echo "(the parts named only:$only)"
if grep -q 'SKIPPED' "$out"; then
    echo "skipped:"
    grep 'SKIPPED' "$out" | sed 's/^/    /'
else
    echo "skipped: nothing"
fi
