#!/usr/bin/env bash
# tlbf_agg's speed now that its result is the same under every plan, against
# the library as it was before (each partial aggregate built its own filter
# and the final one took their union): the same rows, the same cluster,
# sessions alternating between the two libraries.  Run by make bench inside
# scripts/cluster.sh (PGHOST etc. set).
#
# The earlier library is built from git (TLBF_BASELINE_REF) and installed
# next to tlbf as tlbf_baseline, with its aggregate in the schema baseline.
# A session loads only one of the two libraries.
set -euo pipefail
cd "$(dirname "$0")/../.."

ref=${TLBF_BASELINE_REF:-5a0b48f}
pg_config=${PG_CONFIG:-$(make -s --no-print-directory pg-config)}
src=$(mktemp -d /tmp/tlbf-baseline.XXXXXX)
trap 'rm -rf "$src"' EXIT
git archive "$ref" | tar -x -C "$src"
make -s -C "$src" PG_CONFIG="$pg_config" tlbf.so >/dev/null 2>&1
sudo_if_needed=()
[ "$(id -u)" -eq 0 ] || sudo_if_needed=(sudo)
"${sudo_if_needed[@]}" install -m 755 "$src/tlbf.so" "$("$pg_config" --pkglibdir)/tlbf_baseline.so"

# Both libraries define the same settings, so no session may load both:
# CREATE EXTENSION loads tlbf.so, and creating a C function loads its
# library (whatever check_function_bodies says), so they take two sessions.
psql -X -q -v ON_ERROR_STOP=1 -c 'SET client_min_messages = warning' \
    -c 'CREATE EXTENSION IF NOT EXISTS tlbf'
psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS baseline CASCADE;
CREATE SCHEMA baseline;
CREATE FUNCTION baseline.agg_trans(internal, "any", timestamptz, interval, float8)
    RETURNS internal AS '$libdir/tlbf_baseline', 'tlbf_agg_trans' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION baseline.agg_final(internal)
    RETURNS bytea AS '$libdir/tlbf_baseline', 'tlbf_agg_final' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION baseline.agg_combine(internal, internal)
    RETURNS internal AS '$libdir/tlbf_baseline', 'tlbf_agg_combine' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION baseline.agg_serialize(internal)
    RETURNS bytea AS '$libdir/tlbf_baseline', 'tlbf_agg_serialize' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION baseline.agg_deserialize(bytea, internal)
    RETURNS internal AS '$libdir/tlbf_baseline', 'tlbf_agg_deserialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE AGGREGATE baseline.tlbf_agg("any", timestamptz, interval, float8) (
    SFUNC = baseline.agg_trans, STYPE = internal, SSPACE = 16384,
    FINALFUNC = baseline.agg_final, COMBINEFUNC = baseline.agg_combine,
    SERIALFUNC = baseline.agg_serialize, DESERIALFUNC = baseline.agg_deserialize,
    PARALLEL = SAFE);
-- 5M rows 100 us apart, in time order in the heap.
DROP TABLE IF EXISTS plan_rows;
CREATE TABLE plan_rows AS
SELECT g, '2024-01-01 00:00+00'::timestamptz + g * interval '100 us' AS at
FROM generate_series(1, 5000000) g;
VACUUM ANALYZE plan_rows;
SQL

# name|settings|item|from-where: the default plan (PostgreSQL picks a
# parallel one, synchronized scans on) with integer keys (which partial
# aggregates send as such) and text keys (sent as hashes), and a serial scan
# in time order.
cases=(
    "default plan, 1M of the 5M rows||g|FROM plan_rows WHERE g <= 1000000"
    "default plan, all 5M rows||g|FROM plan_rows"
    "default plan, 1M rows, text keys||g::text|FROM plan_rows WHERE g <= 1000000"
    "serial, in time order, 5M rows|SET max_parallel_workers_per_gather = 0; SET synchronize_seqscans = off;|g|FROM plan_rows"
)

time_one() {    # schema, settings, item, from: milliseconds of one run in a new session
    psql -X -q -A -t -v ON_ERROR_STOP=1 <<SQL | tail -1
\ir test/bench/median_ms.sql
$2
SELECT median_ms FROM pg_temp.median_ms(ARRAY[\$q\$SELECT $1.tlbf_agg($3, at, '1 hour', 0.01) IS NOT NULL $4\$q\$], 1);
SQL
}

results=$(mktemp)
for c in "${cases[@]}"; do
    IFS='|' read -r name settings item from <<<"$c"
    time_one public "$settings" "$item" "$from" >/dev/null    # warm the cache
    for round in 1 2 3 4 5; do
        echo "$name|before|$(time_one baseline "$settings" "$item" "$from")" >>"$results"
        echo "$name|now|$(time_one public "$settings" "$item" "$from")" >>"$results"
    done
done
printf '%-34s %12s %12s %8s\n' "tlbf_agg" "before (ms)" "now (ms)" "ratio"
for c in "${cases[@]}"; do
    IFS='|' read -r name _ _ _ <<<"$c"
    before=$(grep -F "$name|before|" "$results" | cut -d'|' -f3 | sort -n | sed -n 3p)
    now=$(grep -F "$name|now|" "$results" | cut -d'|' -f3 | sort -n | sed -n 3p)
    printf '%-34s %12s %12s %8s\n' "$name" "$before" "$now" "$(awk -v a="$now" -v b="$before" 'BEGIN { printf "%.2f", a / b }')"
done
rm -f "$results"
echo "(median of 5 alternating sessions each; 'before' is the library at $ref, whose"
echo " parallel result was a union of per-worker filters: see docs/performance.md)"
