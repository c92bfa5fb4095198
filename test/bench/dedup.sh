#!/usr/bin/env bash
# Benchmark: rejecting recent duplicates on INSERT, 8 clients, mostly new
# keys, four designs side by side in one run on one server (library
# preloaded).  Run by scripts/bench.sh inside a throwaway cluster.
#
#   plain      INSERT, no trigger
#   tlbf       BEFORE INSERT trigger tlbf_reject_recent on a shared filter
#   exact      BEFORE INSERT trigger doing EXISTS on an index over (key, ts),
#              plus a periodic DELETE of old rows
#   row        BEFORE INSERT trigger keeping one tlbf value in a table row
#              (UPDATE filters SET f = tlbf_add(f, key))
set -euo pipefail

seconds=${DEDUP_SECONDS:-30}
window="10 seconds"
dir=$(mktemp -d /tmp/tlbf-dedup.XXXXXX)
trap 'rm -rf "$dir"' EXIT

psql -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE EXTENSION IF NOT EXISTS tlbf;
SELECT tlbf_shared_create('dedup', '$window', 0.01, 500000);

CREATE TABLE events_plain (key bigint, ts timestamptz DEFAULT now(), payload text);
CREATE TABLE events_tlbf (LIKE events_plain INCLUDING DEFAULTS);
CREATE TABLE events_exact (LIKE events_plain INCLUDING DEFAULTS);
CREATE TABLE events_row (LIKE events_plain INCLUDING DEFAULTS);

CREATE TRIGGER reject_recent BEFORE INSERT ON events_tlbf
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('dedup', 'key');

CREATE INDEX events_exact_key_ts ON events_exact (key, ts);
CREATE FUNCTION reject_recent_exact() RETURNS trigger LANGUAGE plpgsql AS \$\$
BEGIN
    IF EXISTS (SELECT FROM events_exact WHERE key = NEW.key AND ts > now() - interval '$window') THEN
        RETURN NULL;
    END IF;
    RETURN NEW;
END \$\$;
CREATE TRIGGER reject_recent BEFORE INSERT ON events_exact
    FOR EACH ROW EXECUTE FUNCTION reject_recent_exact();

CREATE TABLE filters (id int PRIMARY KEY, f tlbf);
INSERT INTO filters VALUES (1, tlbf_create('$window', 0.01, 500000));
CREATE FUNCTION reject_recent_row() RETURNS trigger LANGUAGE plpgsql AS \$\$
DECLARE
    seen boolean;
BEGIN
    SELECT f @> NEW.key INTO seen FROM filters WHERE id = 1 FOR UPDATE;
    IF seen THEN
        RETURN NULL;
    END IF;
    UPDATE filters SET f = tlbf_add(f, NEW.key) WHERE id = 1;
    RETURN NEW;
END \$\$;
CREATE TRIGGER reject_recent BEFORE INSERT ON events_row
    FOR EACH ROW EXECUTE FUNCTION reject_recent_row();
SQL

for design in plain tlbf exact row; do
    printf '\\set key random(1, 1000000000)\nINSERT INTO events_%s (key, payload) VALUES (:key, '"'"'x'"'"');\n' \
        "$design" >"$dir/$design.sql"
done

tps() {
    pgbench --no-vacuum --client=8 --jobs=2 --time="$seconds" "$@" 2>/dev/null |
        sed -n 's/^tps = \([0-9.]*\).*/\1/p'
}

# bits per key, right after a run: the memory over the keys inserted within
# the window (the filters) or over the rows the index holds (exact)
bits_per_key() {
    psql -X -At -c "SELECT round(8.0 * ($1) / nullif(($2), 0), 1)"
}

echo "INSERT with 8 clients, $seconds s each, keys random in 1..1e9 (mostly new), window $window"
# no trigger and the shared filter run twice, interleaved, and are averaged
# (the machine is noisy); the row design, far slower, runs a third as long
plain1=$(tps --file="$dir/plain.sql")
tlbf1=$(tps --file="$dir/tlbf.sql")
plain2=$(tps --file="$dir/plain.sql")
tlbf2=$(tps --file="$dir/tlbf.sql")
plain=$(awk "BEGIN { print ($plain1 + $plain2) / 2 }")
tlbf=$(awk "BEGIN { print ($tlbf1 + $tlbf2) / 2 }")
tlbf_bits=$(bits_per_key \
    "SELECT (info->>'bits')::bigint / 8 + (info->>'slice_count')::bigint * 32 + 112 FROM tlbf_shared_list() WHERE name = 'dedup'" \
    "SELECT count(*) FROM events_tlbf WHERE ts > now() - interval '$window'")

# the exact design deletes old rows once a second meanwhile
( while sleep 1; do psql -X -q -c "DELETE FROM events_exact WHERE ts < now() - interval '$window'"; done ) &
deleter=$!
exact=$(tps --file="$dir/exact.sql")
kill $deleter
psql -X -q -c "DELETE FROM events_exact WHERE ts < now() - interval '$window'"
exact_bits=$(bits_per_key "pg_relation_size('events_exact_key_ts')" "SELECT count(*) FROM events_exact")

row=$(seconds=$((seconds / 3)) tps --file="$dir/row.sql")
row_bits=$(bits_per_key "SELECT pg_column_size(f) FROM filters" \
    "SELECT count(*) FROM events_row WHERE ts > now() - interval '$window'")

psql -X -q -v ON_ERROR_STOP=1 <<SQL
\pset footer off
SELECT design, round(tps) AS tps, round(tps / $plain, 2) AS ratio, bits_per_key
FROM (VALUES ('INSERT, no trigger', $plain, NULL),
             ('tlbf_reject_recent on a shared filter', $tlbf, ${tlbf_bits:-NULL}),
             ('exact: EXISTS on an index over (key, ts) + DELETE', $exact, ${exact_bits:-NULL}),
             ('one tlbf value in a row, UPDATE per insert', $row, ${row_bits:-NULL}))
     AS runs (design, tps, bits_per_key);
SQL
echo "(no trigger: $plain1 and $plain2 tps; shared filter: $tlbf1 and $tlbf2 tps)"
echo "(bits per key, right after each run: a filter's bytes over the keys inserted within the"
echo " window; the index's size over the rows it holds after the DELETE)"
