#!/usr/bin/env bash
# Benchmark: rejecting recent duplicates when keys repeat, as in the
# README's example (issue 24): 8 clients insert clicks, (user, ad) random
# among DEDUP_KEYS pairs, each tried many times within the window.  Side by
# side in one run on one server (library preloaded):
#
#   plain      INSERT, no check
#   tlbf       BEFORE INSERT trigger tlbf_reject_recent on a shared filter
#              whose capacity is the pairs
#   exact      the exact pattern: a table of the last accepted time per
#              pair, INSERT ... ON CONFLICT DO UPDATE ... WHERE older than
#              the window, and the click inserted only when that accepted
#
# For each: transactions per second, WAL per transaction, the memory of the
# check (the filter's region; the table and index of last times), and the
# accepted clicks that repeat a pair within the window (none, for both).
# Run by scripts/bench.sh inside a throwaway cluster.
set -euo pipefail

seconds=${DEDUP_SECONDS:-30}
window=${DEDUP_WINDOW:-60}
keys=${DEDUP_KEYS:-200000}
users=200
ads=$((keys / users))
dir=$(mktemp -d /tmp/tlbf-dedup-repeats.XXXXXX)
trap 'rm -rf "$dir"' EXIT

psql -X -q -v ON_ERROR_STOP=1 <<SQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS tlbf;
DROP TABLE IF EXISTS clicks_plain, clicks_tlbf, clicks_exact, last_click;
SELECT tlbf_shared_drop(name) FROM tlbf_shared_list() WHERE name = 'clicks' \g /dev/null
CREATE TABLE clicks_plain (user_id int, ad_id int, clicked_at timestamptz DEFAULT now());
CREATE TABLE clicks_tlbf (LIKE clicks_plain INCLUDING DEFAULTS);
CREATE TABLE clicks_exact (LIKE clicks_plain INCLUDING DEFAULTS);
SELECT tlbf_shared_create('clicks', '$window seconds', error_rate => 0.001, capacity => $keys) \g /dev/null
CREATE TRIGGER no_repeat_clicks BEFORE INSERT ON clicks_tlbf
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('clicks', 'user_id', 'ad_id');
CREATE TABLE last_click (user_id int, ad_id int, at timestamptz, PRIMARY KEY (user_id, ad_id));
SQL

cat >"$dir/plain.sql" <<SQL
\set u random(1, $users)
\set a random(1, $ads)
INSERT INTO clicks_plain (user_id, ad_id) VALUES (:u, :a);
SQL
cat >"$dir/tlbf.sql" <<SQL
\set u random(1, $users)
\set a random(1, $ads)
INSERT INTO clicks_tlbf (user_id, ad_id) VALUES (:u, :a);
SQL
cat >"$dir/exact.sql" <<SQL
\set u random(1, $users)
\set a random(1, $ads)
WITH accepted AS (
    INSERT INTO last_click AS l VALUES (:u, :a, now())
    ON CONFLICT (user_id, ad_id) DO UPDATE SET at = excluded.at
    WHERE l.at <= excluded.at - interval '$window seconds'
    RETURNING user_id, ad_id)
INSERT INTO clicks_exact (user_id, ad_id) SELECT user_id, ad_id FROM accepted;
SQL

# one design's run: tps and WAL bytes per transaction
run() {
    local before after out tps xacts
    before=$(psql -X -At -c "SELECT pg_current_wal_lsn()")
    out=$(pgbench --no-vacuum --client=8 --jobs=2 --time="$seconds" --file="$dir/$1.sql" 2>/dev/null)
    after=$(psql -X -At -c "SELECT pg_current_wal_lsn()")
    tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out")
    xacts=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")
    echo "$tps $(psql -X -At -c "SELECT round(pg_wal_lsn_diff('$after', '$before') / $xacts)")"
}

repeats() {    # accepted clicks of table $1 that repeat a pair within the window
    psql -X -At -c "SELECT count(*) FROM (SELECT clicked_at - lag(clicked_at) OVER w AS gap FROM $1
                    WINDOW w AS (PARTITION BY user_id, ad_id ORDER BY clicked_at)) s
                    WHERE gap < interval '$window seconds'"
}

echo "INSERT with 8 clients, $seconds s each, (user, ad) random among $keys pairs, window $window s"
read -r plain_tps plain_wal <<<"$(run plain)"
read -r tlbf_tps tlbf_wal <<<"$(run tlbf)"
read -r exact_tps exact_wal <<<"$(run exact)"
tlbf_bytes=$(psql -X -At -c "SELECT (info->>'region_bytes')::bigint FROM tlbf_shared_list() WHERE name = 'clicks'")
exact_bytes=$(psql -X -At -c "SELECT pg_total_relation_size('last_click')")

psql -X -q -v ON_ERROR_STOP=1 <<SQL
\pset footer off
SELECT design, round(tps) AS tps, round(tps / $plain_tps, 2) AS "x plain",
       wal_per_xact AS "WAL B/xact", pg_size_pretty(memory::bigint) AS memory,
       accepted, repeats AS "repeats in window"
FROM (VALUES
    ('INSERT, no check', $plain_tps, $plain_wal, NULL,
     (SELECT count(*) FROM clicks_plain), NULL),
    ('tlbf_reject_recent, shared filter', $tlbf_tps, $tlbf_wal, $tlbf_bytes,
     (SELECT count(*) FROM clicks_tlbf), $(repeats clicks_tlbf)),
    ('exact: ON CONFLICT on last_click', $exact_tps, $exact_wal, $exact_bytes,
     (SELECT count(*) FROM clicks_exact), $(repeats clicks_exact)))
    AS runs (design, tps, wal_per_xact, memory, accepted, repeats);
SQL
echo "(memory: the shared filter's region; the last_click table with its index, which holds"
echo " every pair ever seen until something deletes old ones)"
