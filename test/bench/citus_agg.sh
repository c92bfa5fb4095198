#!/usr/bin/env bash
# tlbf_agg on a Citus cluster (a coordinator and two workers, all on this
# machine) against the same aggregate over a local table of the same rows:
# 2M visits, rows stored in random order.  Min and median of 3, interleaved.
# Needs the Citus build scripts/citus.sh (make matrix) leaves in the cache;
# without one it says it skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."
cache=$(scripts/cache_dir.sh)
bindir=""
for d in "$cache"/citus/pg15*/pg/usr/lib/postgresql/15/bin; do
    if [ -x "$d/pg_config" ] && [ -f "$("$d/pg_config" --pkglibdir)/citus.so" ]; then bindir=$d; fi
done
if [ -z "$bindir" ]; then
    echo "SKIPPED: the Citus benchmark: no Citus build for PostgreSQL 15 in $cache/citus" \
         "(run make matrix first, or scripts/citus.sh, which build one from ../shared/citus)"
    exit 0
fi

work=$(mktemp -d /tmp/tlbf-citus-bench.XXXXXX)
as=()
if [ "$(id -u)" -eq 0 ]; then chown postgres "$work"; as=(runuser -u postgres -- env -C /); fi
ports=()
for p in $(seq 55400 55499); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then ports+=("$p"); fi
    [ ${#ports[@]} -eq 3 ] && break
done
cleanup() {
    for p in "${ports[@]}"; do "${as[@]}" "$bindir/pg_ctl" -D "$work/$p" stop -m immediate >/dev/null 2>&1 || true; done
    rm -rf "$work"
}
trap cleanup EXIT

# tlbf into the Citus copy, from a copy of this tree
src=$(mktemp -d /tmp/tlbf-citus-src.XXXXXX)
tar --exclude=./build --exclude='*.o' --exclude='*.so' --exclude='*.bc' -cf - . | tar -xf - -C "$src"
make -s -C "$src" PG_CONFIG="$bindir/pg_config" install >/dev/null
rm -rf "$src"

for p in "${ports[@]}"; do
    "${as[@]}" "$bindir/initdb" -A trust -U postgres -D "$work/$p" >/dev/null
    printf '%s\n' "port = $p" "listen_addresses = 'localhost'" "unix_socket_directories = '$work'" \
        "shared_preload_libraries = 'citus,tlbf'" "tlbf.worker_enabled = off" \
        "max_worker_processes = 16" "work_mem = '64MB'" >>"$work/$p/postgresql.conf"
    "${as[@]}" "$bindir/pg_ctl" -w -D "$work/$p" -l "$work/$p.log" start >/dev/null
    "$bindir/psql" -X -q -h "$work" -p "$p" -U postgres -c 'CREATE EXTENSION citus'
done
psql=("$bindir/psql" -X -q -v ON_ERROR_STOP=1 -h "$work" -p "${ports[0]}" -U postgres)
"${psql[@]}" -c "SELECT citus_set_coordinator_host('localhost', ${ports[0]})" \
    -c "SELECT citus_add_node('localhost', ${ports[1]})" \
    -c "SELECT citus_add_node('localhost', ${ports[2]})" -c 'CREATE EXTENSION tlbf' >/dev/null
"${psql[@]}" -f - <<'SQL'
\set QUIET on
\pset footer off
SET client_min_messages = error;
\ir test/bench/median_ms.sql
SET client_min_messages = warning;
SELECT setseed(0.5) \g /dev/null
CREATE TABLE visits_local AS
SELECT (g::bigint * 7919) % 200000 AS user_id, 'site-' || (g % 10) AS site,
       '2024-01-01 00:00+00'::timestamptz + g * interval '1.8 ms' AS at
FROM generate_series(1, 2000000) g ORDER BY random();
CREATE TABLE visits (LIKE visits_local);
SELECT create_distributed_table('visits', 'user_id') \g /dev/null
INSERT INTO visits SELECT * FROM visits_local;
VACUUM ANALYZE visits_local;
ANALYZE visits;
SET max_parallel_workers_per_gather = 0;
SELECT (SELECT tlbf_agg(user_id, at, '1 hour')::bytea FROM visits)
     = (SELECT tlbf_agg(user_id, at, '1 hour' ORDER BY at)::bytea FROM visits_local) AS same_filter;
WITH m AS (
    SELECT * FROM pg_temp.median_ms(ARRAY[
        $q$SELECT tlbf_agg(user_id, at, '1 hour') IS NOT NULL FROM visits$q$,
        $q$SELECT tlbf_agg(user_id, at, '1 hour') IS NOT NULL FROM visits_local$q$,
        $q$SELECT site, tlbf_agg(user_id, at, '1 hour') IS NOT NULL FROM visits GROUP BY site$q$,
        $q$SELECT site, tlbf_agg(user_id, at, '1 hour') IS NOT NULL FROM visits_local GROUP BY site$q$], 3))
SELECT CASE query WHEN 1 THEN 'distributed, no GROUP BY' WHEN 2 THEN 'local, no GROUP BY'
                  WHEN 3 THEN 'distributed, GROUP BY site' ELSE 'local, GROUP BY site' END AS tlbf_agg,
       min_ms, median_ms,
       CASE WHEN query IN (1, 3) THEN round(median_ms / (SELECT median_ms FROM m m2 WHERE m2.query = m.query + 1), 2) END
           AS distributed_over_local
FROM m ORDER BY query;
SQL
