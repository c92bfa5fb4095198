#!/usr/bin/env bash
# make bench: timing figures, each a ratio measured side by side in one run
# (and, alongside, what input order does to an aggregate's result).
# Not part of make test: these machines are noisy, so timings never decide
# whether a test passes.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh postgresql-15-hll
scripts/build.sh
make -s bench-tools

echo "== core (C): tlbf against a plain Bloom filter with the same bits and k"
build/bench/core_bench

echo
echo "== SQL: a 1M-item filter read from a table, 5M probes"
hex=$(mktemp /tmp/tlbf-bench.XXXXXX)
trap 'rm -f "$hex"' EXIT
build/bench/make_filter 1000000 >"$hex"
TLBF_FILTER_HEX="$hex" scripts/cluster.sh psql -X -q -f test/bench/sql_contains.sql

echo
echo "== SQL: aggregates"
scripts/cluster.sh psql -X -q -f test/bench/sql_aggregates.sql

echo
echo "== SQL: tlbf_agg's result by input order and plan (accuracy and size)"
scripts/cluster.sh psql -X -q -f test/bench/sql_agg_order.sql

echo
echo "== SQL: tlbf_agg over exactly one span (accuracy and size)"
scripts/cluster.sh psql -X -q -f test/bench/sql_agg_one_span.sql

echo
echo "== SQL: grouped tlbf_agg over shuffled rows against ORDER BY at"
scripts/cluster.sh psql -X -q -f test/bench/sql_agg_grouped.sql

echo
echo "== Citus: tlbf_agg on a coordinator and two workers against a local table of the same rows"
test/bench/citus_agg.sh

echo
echo "== SQL: tlbf_agg's speed, now and before its result was the same under every plan"
scripts/cluster.sh test/bench/agg_plans.sh

echo
echo "== shared filters: rejecting recent duplicates on INSERT (library preloaded)"
TLBF_CLUSTER_CONF="max_connections = 50" scripts/cluster.sh --preload test/bench/dedup.sh

echo
echo "== shared filters: rejecting recent duplicates when keys repeat, against the exact ON CONFLICT pattern"
TLBF_CLUSTER_CONF="max_connections = 50" scripts/cluster.sh --preload test/bench/dedup_repeats.sh

echo
echo "== SQL: the recency join (returning visitors) against the best exact plan"
scripts/cluster.sh psql -X -q -f test/bench/sql_recency.sql

echo
echo "== SQL: the recency join against per-group filters, probes in any order against grouped"
scripts/cluster.sh psql -X -q -f test/bench/sql_recency_join.sql

echo
echo "== shared filters: tlbf_shared_add against tlbf_contains"
TLBF_CLUSTER_CONF="tlbf.shared_memory = '256MB'" \
    scripts/cluster.sh --preload psql -X -q -f test/bench/sql_shared.sql
