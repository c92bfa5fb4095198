#!/usr/bin/env bash
# Benchmark: rejecting recent duplicates on INSERT, the README's example
# (clicks whose (user, ad) must not repeat within a window), 8 clients, on
# one server with the library preloaded.  Run by scripts/bench.sh inside a
# throwaway cluster (scripts/cluster.sh --preload).
#
# Two workloads, one after the other:
#   hot keys   (user, ad) among DEDUP_KEYS pairs, skewed (a pair's index is
#              DEDUP_KEYS * u^3 for u uniform in [0, 1): the hottest 1% of
#              pairs get a fifth of the attempts), so keys repeat, within
#              the window and after it
#   new keys   (user, ad) uniform among 10^9 pairs: nearly every attempt
#              is a new key, the worst case for any check
# Four designs, each inserting into its own clicks table:
#   plain            INSERT, no check: the reference
#   tlbf             BEFORE INSERT trigger tlbf_reject_recent on a shared
#                    filter (error rate 0.001)
#   exact            the strongest exact design: a table of the recent keys
#                    with the key as primary key; the click is inserted only
#                    when INSERT ... ON CONFLICT DO NOTHING inserted its key
#                    (one statement, a data-modifying CTE), and a DELETE of
#                    the keys older than the window runs once a second
#   exact, unlogged  the same with an UNLOGGED table of keys: no WAL for the
#                    keys, which a crash empties (the shared filter loses
#                    what it added since its last save)
# Why this exact design: the unique index makes it safe under concurrency
# (two sessions inserting one key: one waits for the other and skips),
# which a trigger doing EXISTS is not; DO NOTHING neither writes nor locks
# the row of a key already there, where DO UPDATE ... WHERE (keeping the
# last accepted time) locks it, and so writes and waits, at every repeat;
# a statement beats a plpgsql trigger doing the same; the DELETE bounds the
# table, which otherwise keeps every key ever seen (it scans the table,
# which is small: an index on the time would cost every accepted insert).
# A table partitioned by time, whose old partitions are dropped, cannot
# enforce the key across partitions (a unique index of a partitioned table
# must include the partition key), so it would need a lock per key and a
# look into the previous partition: more work per insert, to save a DELETE.
# A key may stay up to the DELETE's period (1 s) past the window; a filter's
# key somewhat longer (its slack: docs/reference.md, the guarantee).
#
# Rounds: DEDUP_ROUNDS rounds of DEDUP_SECONDS per design, interleaved, each
# round starting one design further on.  Printed per design: transactions
# per second (min and median over rounds), WAL bytes per attempted insert
# and per stored row (pg_current_wal_lsn() around each round; the DELETE's
# WAL counts for the exact designs), attempts, rows stored, and rows stored
# that repeat a pair within the window (none, for every design); at the
# end, the memory and disk each check takes.  The shared filter is saved by
# the background worker every tlbf.snapshot_interval (30 s by default), a
# WAL cost of its own: the rounds run with saves off, one save is measured
# alone, and its bytes are added as one save per 30 s at the median rate.
# So is the image of the filter the launcher writes to the WAL after each
# checkpoint's redo point (issue 39): one checkpoint of the dirty filter is
# measured alone, and added as one per checkpoint_timeout (5 min).  The
# keys themselves (a record per committing transaction) are in the rounds.
#
# Then the answers: DEDUP_CHECK attempts of keys never seen before, the
# same list for every design, run by 8 clients on the filter and tables the
# rounds left: an exact design stores each distinct key once, and the
# filter stores each distinct key once except its false positives (keys
# rejected on their first attempt), counted with their rate; and 100,000
# keys never added, asked of the filter.
set -euo pipefail

rounds=${DEDUP_ROUNDS:-5}
seconds=${DEDUP_SECONDS:-5}
window=${DEDUP_WINDOW:-30}
keys=${DEDUP_KEYS:-200000}
check=${DEDUP_CHECK:-96000}
clients=8
designs=(plain tlbf exact exact_unlogged)
ads=1000
dir=$(mktemp -d /tmp/tlbf-dedup.XXXXXX)
deleter=""
cleanup() {
    if [ -n "$deleter" ]; then kill "$deleter" 2>/dev/null || true; fi
    rm -rf "$dir"
}
trap cleanup EXIT

sql() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
val() { psql -X -A -t -q -v ON_ERROR_STOP=1 -c "$1"; }

# The shared filter is not saved during the rounds (its save is measured
# alone, below).
sql -c "ALTER SYSTEM SET tlbf.snapshot_interval = '1d'" -c "SELECT pg_reload_conf()" >/dev/null

# pgbench lines that pick :u and :a
keys_new='\set u random(1, 1000000)
\set a random(1, 1000)'
keys_hot="\\set k int($keys * pow(random(0, 999999) / 1000000.0, 3))
\\set u 1 + :k / $ads
\\set a 1 + :k % $ads"

# design_sql DESIGN TABLE-SUFFIX VALUES: the statement one design runs
design_sql() {
    case $1 in
        plain|tlbf) echo "INSERT INTO clicks_$1$2 (user_id, ad_id) $3;" ;;
        exact|exact_unlogged) echo "WITH accepted AS (
    INSERT INTO recent_$1$2 (user_id, ad_id) $3
    ON CONFLICT DO NOTHING RETURNING user_id, ad_id)
INSERT INTO clicks_$1$2 (user_id, ad_id) SELECT user_id, ad_id FROM accepted;" ;;
    esac
}

# setup CAPACITY: the tables, the filter and the trigger of one workload.
# The clicks tables are the same for every design, so autovacuum (whose
# WAL would land in whichever round it ran) is off for them; the tables of
# keys keep it, as they need it.
setup() {
    sql <<SQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS tlbf;
DROP TABLE IF EXISTS clicks_plain, clicks_tlbf, clicks_exact, clicks_exact_unlogged,
                     recent_exact, recent_exact_unlogged, rounds;
SELECT tlbf_shared_drop(name) FROM tlbf_shared_list() \g /dev/null
CREATE TABLE clicks_plain (user_id int, ad_id int, clicked_at timestamptz DEFAULT now())
    WITH (autovacuum_enabled = off);
CREATE TABLE clicks_tlbf (LIKE clicks_plain INCLUDING DEFAULTS) WITH (autovacuum_enabled = off);
CREATE TABLE clicks_exact (LIKE clicks_plain INCLUDING DEFAULTS) WITH (autovacuum_enabled = off);
CREATE TABLE clicks_exact_unlogged (LIKE clicks_plain INCLUDING DEFAULTS) WITH (autovacuum_enabled = off);
SELECT tlbf_shared_create('clicks', '$window seconds', error_rate => 0.001, capacity => $1) \g /dev/null
CREATE TRIGGER no_repeat_clicks BEFORE INSERT ON clicks_tlbf
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('clicks', 'user_id', 'ad_id');
CREATE TABLE recent_exact (user_id int, ad_id int, at timestamptz NOT NULL DEFAULT now(),
                           PRIMARY KEY (user_id, ad_id));
CREATE UNLOGGED TABLE recent_exact_unlogged (user_id int, ad_id int, at timestamptz NOT NULL DEFAULT now(),
                                             PRIMARY KEY (user_id, ad_id));
CREATE TABLE rounds (design text, round int, tps numeric, xacts bigint, wal_bytes numeric);
CHECKPOINT;
SQL
}

# The exact designs' cleanup, once a second while their rounds run
delete_old() {
    val "DELETE FROM recent_$1 WHERE at < now() - interval '$window seconds'" >/dev/null
}
start_deleter() {
    ( while sleep 1; do delete_old "$1"; done ) &
    deleter=$!
}
stop_deleter() {
    kill "$deleter"
    wait "$deleter" 2>/dev/null || true
    deleter=""
}

# round DESIGN N: one pgbench run of one design
round() {
    local design=$1 n=$2 before after out tps xacts
    case $design in exact*) delete_old "$design"; start_deleter "$design" ;; esac
    before=$(val "SELECT pg_current_wal_lsn()")
    out=$(pgbench --no-vacuum --protocol=prepared --client=$clients --jobs=2 --time="$seconds" \
                  --file="$dir/$design.sql" 2>&1) || { echo "$out" >&2; exit 1; }
    after=$(val "SELECT pg_current_wal_lsn()")
    case $design in exact*) stop_deleter ;; esac
    tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out")
    xacts=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")
    val "INSERT INTO rounds VALUES ('$design', $n, $tps, $xacts, pg_wal_lsn_diff('$after', '$before'))"
}

# Bytes of WAL of one save of the shared filters, alone: saves every second
# until the filter has none unsaved, then off again.
measure_save() {
    local before after
    before=$(val "SELECT pg_current_wal_lsn()")
    sql -c "ALTER SYSTEM SET tlbf.snapshot_interval = '1s'" -c "SELECT pg_reload_conf()" >/dev/null
    for _ in $(seq 1 60); do
        sleep 0.5
        [ "$(val "SELECT bool_or((info->>'unsaved_changes')::bool) FROM tlbf_shared_list()")" = f ] && break
    done
    after=$(val "SELECT pg_current_wal_lsn()")
    sql -c "ALTER SYSTEM SET tlbf.snapshot_interval = '1d'" -c "SELECT pg_reload_conf()" >/dev/null
    val "SELECT pg_wal_lsn_diff('$after', '$before')"
}

# Bytes of WAL of one checkpoint with the shared filter changed since its
# save: the launcher's image of it, and the checkpoint's own records.
measure_image() {
    local before after
    sql -c "SELECT tlbf_shared_add('clicks', ROW(-1, -1))" >/dev/null
    before=$(val "SELECT pg_current_wal_lsn()")
    sql -c "CHECKPOINT" >/dev/null
    after=$(val "SELECT pg_current_wal_lsn()")
    val "SELECT pg_wal_lsn_diff('$after', '$before')"
}

# workload NAME CAPACITY KEY-LINES ATTEMPTS-SQL
workload() {
    local name=$1 capacity=$2 key_lines=$3 attempts_sql=$4 save_bytes image_bytes d i r
    echo
    echo "-- $name: $clients clients, $rounds rounds of $seconds s per design, interleaved;" \
         "window $window s; shared filter at 0.001 for $capacity keys"
    setup "$capacity"
    for d in "${designs[@]}"; do
        printf '%s\n%s\n' "$key_lines" "$(design_sql "$d" "" "VALUES (:u, :a)")" >"$dir/$d.sql"
    done
    for r in $(seq 1 "$rounds"); do
        for i in $(seq 0 $((${#designs[@]} - 1))); do
            round "${designs[$(( (r - 1 + i) % ${#designs[@]} ))]}" "$r"
        done
    done
    delete_old exact
    delete_old exact_unlogged
    save_bytes=$(measure_save)
    image_bytes=$(measure_image)

    sql <<SQL
\pset footer off
CREATE TEMP TABLE stored AS
SELECT d AS design,
       (xpath('/row/n/text()', query_to_xml(format('SELECT count(*) AS n FROM clicks_%s', d), false, true, '')))[1]::text::bigint AS stored,
       (xpath('/row/n/text()', query_to_xml(format(
           'SELECT count(*) AS n FROM (SELECT clicked_at - lag(clicked_at) OVER w AS gap FROM clicks_%s
            WINDOW w AS (PARTITION BY user_id, ad_id ORDER BY clicked_at)) s
            WHERE gap < interval ''$window seconds''', d), false, true, '')))[1]::text::bigint AS repeats
FROM unnest(ARRAY['plain', 'tlbf', 'exact', 'exact_unlogged']) d;
CREATE TEMP TABLE per_design AS
SELECT design, min(tps) AS tps_min, percentile_disc(0.5) WITHIN GROUP (ORDER BY tps) AS tps_median,
       sum(xacts) AS attempts, sum(wal_bytes) AS wal_bytes
FROM rounds GROUP BY design;
-- the filter's saves: one per 30 s (the default interval) at its median rate
UPDATE per_design SET wal_bytes = wal_bytes + $save_bytes * attempts / (tps_median * 30)
                                + $image_bytes * attempts / (tps_median * 300)
WHERE design = 'tlbf';
SELECT CASE p.design WHEN 'plain' THEN 'INSERT, no check'
                     WHEN 'tlbf' THEN 'tlbf_reject_recent, shared filter'
                     WHEN 'exact' THEN 'exact: ON CONFLICT DO NOTHING + DELETE'
                     ELSE 'exact, UNLOGGED table of keys' END AS design,
       round(p.tps_min) AS "tps min", round(p.tps_median) AS "tps median",
       round(p.tps_median / (SELECT tps_median FROM per_design WHERE design = 'plain'), 2) AS "x plain",
       round(p.tps_median / (SELECT max(tps_median) FROM per_design WHERE design LIKE 'exact%'), 2)
           AS "x best exact",
       round(p.wal_bytes / p.attempts) AS "WAL B/insert",
       round(p.wal_bytes / nullif(s.stored, 0)) AS "WAL B/row",
       p.attempts, s.stored, round(100.0 * s.stored / p.attempts, 1) AS "stored %",
       CASE WHEN p.design <> 'plain' THEN s.repeats END AS "repeats in window"
FROM per_design p JOIN stored s USING (design)
ORDER BY array_position(ARRAY['plain', 'tlbf', 'exact', 'exact_unlogged'], p.design);

SELECT 'tlbf_reject_recent, shared filter' AS check,
       round((info->>'live_keys_estimate')::float8) AS "live keys",
       pg_size_pretty((info->>'bytes')::bigint) AS size,
       round((info->>'bytes')::numeric / nullif((info->>'live_keys_estimate')::float8, 0)::numeric, 1) AS "B/key",
       pg_size_pretty((info->>'region_bytes')::bigint) AS "shared memory",
       pg_size_pretty(pg_total_relation_size('tlbf_shared_filters')) AS "on disk"
FROM tlbf_shared_list() WHERE name = 'clicks'
UNION ALL
SELECT 'exact: table of keys, after its DELETE', count(*), pg_size_pretty(pg_total_relation_size('recent_exact')),
       round(pg_total_relation_size('recent_exact') / nullif(count(*), 0)::numeric, 1),
       NULL, pg_size_pretty(pg_total_relation_size('recent_exact'))
FROM recent_exact
UNION ALL
SELECT 'exact, unlogged: the same', count(*), pg_size_pretty(pg_total_relation_size('recent_exact_unlogged')),
       round(pg_total_relation_size('recent_exact_unlogged') / nullif(count(*), 0)::numeric, 1),
       NULL, pg_size_pretty(pg_total_relation_size('recent_exact_unlogged'))
FROM recent_exact_unlogged;

-- the filter's false positives as it is now: keys never added, asked
SELECT count(*) FILTER (WHERE tlbf_shared_contains('clicks', ROW(-g, 0))) AS "never-added keys found",
       count(*) AS asked,
       round(100.0 * count(*) FILTER (WHERE tlbf_shared_contains('clicks', ROW(-g, 0))) / count(*), 3)
           AS "false positive %"
FROM generate_series(1, 100000) g;
SELECT 'tps by round: ' || string_agg(design || ' ' || tps_list, '; '
                                     ORDER BY array_position(ARRAY['plain', 'tlbf', 'exact', 'exact_unlogged'], design))
FROM (SELECT design, string_agg(round(tps)::text, ' ' ORDER BY round) AS tps_list FROM rounds GROUP BY design) r
\g (format=unaligned tuples_only)
SQL
    echo "(the filter's WAL includes one save of $save_bytes bytes per 30 s and one checkpoint's image" \
         "of $image_bytes bytes per 5 min at its median rate;" \
         "size: the filter, or the table of keys and its index; shared memory: the filter's region," \
         "room to grow included; on disk: the filter's saved copy, or the table and index)"
    answers "$attempts_sql"
}

# answers ATTEMPTS-SQL: the same attempts through every check, 8 clients,
# on the filter and tables the rounds left (their keys are those of the
# rounds' users plus 2,000,000, never seen before; each design takes a few
# seconds, so none of its keys leaves the window meanwhile)
answers() {
    local d
    sql <<SQL
SET client_min_messages = warning;
SELECT setseed(0.35) \g /dev/null
DROP TABLE IF EXISTS attempts;
CREATE TABLE attempts AS
SELECT row_number() OVER () AS id, 2000000 + user_id AS user_id, ad_id FROM ($1) a;
ALTER TABLE attempts ADD PRIMARY KEY (id);
ANALYZE attempts;
SQL
    for d in tlbf exact exact_unlogged; do
        val "SET client_min_messages = warning; DROP SEQUENCE IF EXISTS next_attempt; CREATE SEQUENCE next_attempt"
        printf '%s\n' "$(design_sql "$d" "" \
            "SELECT user_id, ad_id FROM attempts WHERE id = (SELECT nextval('next_attempt'))")" \
            >"$dir/check_$d.sql"
        pgbench --no-vacuum --protocol=prepared --client=$clients --jobs=2 \
                --transactions=$((check / clients)) --file="$dir/check_$d.sql" >/dev/null 2>&1
    done
    echo "the answers: $check attempts of keys never seen, the same list through every design" \
         "(on the state the rounds left)"
    sql <<SQL
\pset footer off
WITH truth AS (SELECT count(*) AS attempts, count(DISTINCT (user_id, ad_id)) AS distinct_keys FROM attempts)
SELECT d AS design, truth.attempts, truth.distinct_keys AS "distinct keys", c.stored,
       c.stored - c.keys AS "stored twice",
       truth.distinct_keys - c.keys AS "rejected, not a repeat",
       round(100.0 * (truth.distinct_keys - c.keys) / truth.distinct_keys, 3) AS "false positive %"
FROM truth, unnest(ARRAY['tlbf', 'exact', 'exact_unlogged']) d,
     LATERAL (SELECT (xpath('/row/n/text()', x))[1]::text::bigint AS stored,
                     (xpath('/row/k/text()', x))[1]::text::bigint AS keys
              FROM query_to_xml(format('SELECT count(*) AS n, count(DISTINCT (user_id, ad_id)) AS k
                                        FROM clicks_%s WHERE user_id > 2000000', d), false, true, '') x) c;
DROP TABLE attempts;
SQL
}

echo "INSERT INTO clicks (user_id, ad_id), the README's example, $clients clients"
workload "hot keys: (user, ad) among $keys pairs, skewed" "$keys" "$keys_hot" \
    "SELECT 1 + k / $ads AS user_id, 1 + k % $ads AS ad_id
     FROM (SELECT floor($keys * power(random(), 3))::int AS k FROM generate_series(1, $check)) s"
workload "new keys: (user, ad) uniform among 10^9 pairs" 500000 "$keys_new" \
    "SELECT (1 + floor(random() * 1000000))::int AS user_id, (1 + floor(random() * 1000))::int AS ad_id
     FROM generate_series(1, $check)"
sql -c "ALTER SYSTEM RESET tlbf.snapshot_interval" -c "SELECT pg_reload_conf()" >/dev/null
