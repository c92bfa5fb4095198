-- SQL benchmark (issue 36): building a filter of format 3 with tlbf_agg
-- (the rows' hashes kept, the filter built at the end) and with
-- tlbf_agg_format3 (a declared capacity: rows added as they come), against
-- hll_add_agg over the same rows, serial at 5M and 30M rows, with and
-- without ORDER BY at; then the speed-up of 2 parallel workers for each,
-- in one run.  Each comparison
-- scans a table of exactly its rows; the span holds every row (one span of
-- 5M or 30M keys, as issue 36 measured), so the capacity is the row count.
-- Rounds alternate the contenders; min and median of 5.
\set QUIET on
\pset footer off
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS tlbf;
CREATE EXTENSION IF NOT EXISTS hll;
\ir median_ms.sql

-- 30M keys in one span at 1% take ~75 MB (20 bits a key): above the cap
-- of 64 MB before 1.5 (256 MB since).
SET tlbf.max_filter_bytes = '256MB';
SET synchronize_seqscans = off;
SET max_parallel_workers_per_gather = 0;

-- Rows spread evenly over the 10 hours, as a declared capacity of keys per
-- span supposes (a capacity is a rate: all 5M keys within one generation,
-- a third of the span, would be three times its share).
DROP TABLE IF EXISTS f3_rows_5m, f3_rows_30m;
CREATE TABLE f3_rows_30m AS
SELECT g, '2024-01-01 00:00+00'::timestamptz + g * interval '1.2 ms' AS at
FROM generate_series(1, 30000000) g;
CREATE TABLE f3_rows_5m AS
SELECT g, '2024-01-01 00:00+00'::timestamptz + g * interval '7.2 ms' AS at
FROM generate_series(1, 5000000) g;
VACUUM ANALYZE f3_rows_5m, f3_rows_30m;

\echo 'tlbf_agg and tlbf_agg_format3 against hll_add_agg, serial, 5M rows (min and median of 5)'
WITH m AS (
    SELECT * FROM pg_temp.median_ms(ARRAY[
        $q$SELECT hll_add_agg(hll_hash_bigint(g)) IS NOT NULL FROM f3_rows_5m$q$,
        $q$SELECT tlbf_agg(g, at, '10 hours') IS NOT NULL FROM f3_rows_5m$q$,
        $q$SELECT tlbf_agg_format3(g, at, '10 hours', 0.01, 5000000) IS NOT NULL FROM f3_rows_5m$q$,
        $q$SELECT hll_add_agg(hll_hash_bigint(g) ORDER BY at) IS NOT NULL FROM f3_rows_5m$q$,
        $q$SELECT tlbf_agg(g, at, '10 hours' ORDER BY at) IS NOT NULL FROM f3_rows_5m$q$,
        $q$SELECT tlbf_agg_format3(g, at, '10 hours', 0.01, 5000000 ORDER BY at) IS NOT NULL FROM f3_rows_5m$q$
    ], 5)
)
SELECT CASE query WHEN 1 THEN 'hll_add_agg(hll_hash_bigint(g))'
                  WHEN 2 THEN 'tlbf_agg(g, at, ...)'
                  WHEN 3 THEN 'tlbf_agg_format3(g, at, ..., 5000000)'
                  WHEN 4 THEN 'hll_add_agg(... ORDER BY at)'
                  WHEN 5 THEN 'tlbf_agg(... ORDER BY at)'
                  ELSE 'tlbf_agg_format3(..., 5000000 ORDER BY at)' END AS query,
       min_ms, median_ms,
       round(min_ms / (SELECT min_ms FROM m h WHERE h.query = CASE WHEN m.query >= 4 THEN 4 ELSE 1 END), 2) AS "x hll, min",
       round(median_ms / (SELECT median_ms FROM m h WHERE h.query = CASE WHEN m.query >= 4 THEN 4 ELSE 1 END), 2) AS "x hll, median"
FROM m ORDER BY query;

\echo 'the same, 30M rows (min and median of 3)'
WITH m AS (
    SELECT * FROM pg_temp.median_ms(ARRAY[
        $q$SELECT hll_add_agg(hll_hash_bigint(g)) IS NOT NULL FROM f3_rows_30m$q$,
        $q$SELECT tlbf_agg(g, at, '10 hours') IS NOT NULL FROM f3_rows_30m$q$,
        $q$SELECT tlbf_agg_format3(g, at, '10 hours', 0.01, 30000000) IS NOT NULL FROM f3_rows_30m$q$
    ], 3)
)
SELECT CASE query WHEN 1 THEN 'hll_add_agg(hll_hash_bigint(g))'
                  WHEN 2 THEN 'tlbf_agg(g, at, ...)'
                  ELSE 'tlbf_agg_format3(g, at, ..., 30000000)' END AS query,
       min_ms, median_ms,
       round(min_ms / (SELECT min_ms FROM m WHERE query = 1), 2) AS "x hll, min",
       round(median_ms / (SELECT median_ms FROM m WHERE query = 1), 2) AS "x hll, median"
FROM m ORDER BY query;

-- What each built: every key found (no false negative), the error rate
-- of 1M keys never added, the bytes, and the same filter from rows in
-- reverse order.
CREATE TEMP TABLE f3_built AS
SELECT tlbf_agg(g, at, '10 hours') AS fa, tlbf_agg_format3(g, at, '10 hours', 0.01, 5000000) AS fd
FROM f3_rows_5m;
SELECT count(*) FILTER (WHERE NOT tlbf_contains(fa, g, '2024-01-01 10:00+00')) AS "tlbf_agg missed",
       count(*) FILTER (WHERE NOT tlbf_contains(fd, g, '2024-01-01 10:00+00')) AS "declared missed"
FROM f3_built, f3_rows_5m;
SELECT round(100.0 * count(*) FILTER (WHERE tlbf_contains(fa, g, '2024-01-01 10:00+00')) / count(*), 2) AS "tlbf_agg FPR %",
       round(100.0 * count(*) FILTER (WHERE tlbf_contains(fd, g, '2024-01-01 10:00+00')) / count(*), 2) AS "declared FPR %",
       (SELECT length(fa::bytea) + 4 FROM f3_built) AS "tlbf_agg bytes",
       (SELECT length(fd::bytea) + 4 FROM f3_built) AS "declared bytes"
FROM f3_built, generate_series(100000001, 101000000) g;
SELECT (SELECT fa::bytea FROM f3_built) =
       tlbf_agg(g, at, '10 hours' ORDER BY g DESC)::bytea AS "same filter, rows reversed",
       (SELECT fd::bytea FROM f3_built) =
       tlbf_agg_format3(g, at, '10 hours', 0.01, 5000000 ORDER BY g DESC)::bytea AS "same filter, declared, rows reversed"
FROM f3_rows_5m;

\echo 'many small groups: 100,000 groups of 10 rows (GROUP BY, hashed), min and median of 3'
CREATE TEMP TABLE f3_groups AS
SELECT g % 100000 AS grp, g, '2024-01-01 00:00+00'::timestamptz + g * interval '10 ms' AS at
FROM generate_series(1, 1000000) g;
VACUUM ANALYZE f3_groups;
WITH m AS (
    SELECT * FROM pg_temp.median_ms(ARRAY[
        $q$SELECT count(*) FROM (SELECT grp, hll_add_agg(hll_hash_bigint(g)) FROM f3_groups GROUP BY grp) s$q$,
        $q$SELECT count(*) FROM (SELECT grp, tlbf_agg(g, at, '1 hour') FROM f3_groups GROUP BY grp) s$q$,
        $q$SELECT count(*) FROM (SELECT grp, tlbf_agg_format3(g, at, '1 hour', 0.01, 30) FROM f3_groups GROUP BY grp) s$q$
    ], 3)
)
SELECT CASE query WHEN 1 THEN 'hll_add_agg(hll_hash_bigint(g))'
                  WHEN 2 THEN 'tlbf_agg(g, at, ...)'
                  ELSE 'tlbf_agg_format3(g, at, ..., 30)' END AS query,
       min_ms, median_ms,
       round(min_ms / (SELECT min_ms FROM m WHERE query = 1), 2) AS "x hll, min",
       round(median_ms / (SELECT median_ms FROM m WHERE query = 1), 2) AS "x hll, median"
FROM m ORDER BY query;
DROP TABLE f3_groups;

\echo 'parallel speed-up over 30M rows: 2 workers against serial, tlbf_agg, tlbf_agg_format3 and hll_add_agg (min and median of 3)'
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
WITH m AS (
    SELECT * FROM pg_temp.median_ms(ARRAY[
        $q$SET max_parallel_workers_per_gather = 0;
           SELECT tlbf_agg(g, at, '10 hours') IS NOT NULL FROM f3_rows_30m$q$,
        $q$SET max_parallel_workers_per_gather = 2;
           SELECT tlbf_agg(g, at, '10 hours') IS NOT NULL FROM f3_rows_30m$q$,
        $q$SET max_parallel_workers_per_gather = 0;
           SELECT hll_add_agg(hll_hash_bigint(g)) IS NOT NULL FROM f3_rows_30m$q$,
        $q$SET max_parallel_workers_per_gather = 2;
           SELECT hll_add_agg(hll_hash_bigint(g)) IS NOT NULL FROM f3_rows_30m$q$,
        $q$SET max_parallel_workers_per_gather = 0;
           SELECT tlbf_agg_format3(g, at, '10 hours', 0.01, 30000000) IS NOT NULL FROM f3_rows_30m$q$,
        $q$SET max_parallel_workers_per_gather = 2;
           SELECT tlbf_agg_format3(g, at, '10 hours', 0.01, 30000000) IS NOT NULL FROM f3_rows_30m$q$
    ], 3)
)
SELECT CASE WHEN query <= 2 THEN 'tlbf_agg' WHEN query <= 4 THEN 'hll_add_agg'
            ELSE 'tlbf_agg_format3, declared' END AS query,
       CASE WHEN query % 2 = 1 THEN 'serial' ELSE '2 workers' END AS plan,
       min_ms, median_ms,
       round((SELECT min_ms FROM m s WHERE s.query = m.query - 1 + m.query % 2) / min_ms, 2) AS "speedup, min",
       round((SELECT median_ms FROM m s WHERE s.query = m.query - 1 + m.query % 2) / median_ms, 2) AS "speedup, median"
FROM m ORDER BY query;

SET max_parallel_workers_per_gather = 0;
CREATE TEMP TABLE fa_serial AS SELECT tlbf_agg(g, at, '10 hours')::bytea AS f FROM f3_rows_30m;
CREATE TEMP TABLE fd_serial AS SELECT tlbf_agg_format3(g, at, '10 hours', 0.01, 30000000)::bytea AS f FROM f3_rows_30m;
SET max_parallel_workers_per_gather = 2;
SELECT (SELECT f FROM fa_serial) = tlbf_agg(g, at, '10 hours')::bytea
       AS "same filter, serial and parallel",
       (SELECT f FROM fd_serial) = tlbf_agg_format3(g, at, '10 hours', 0.01, 30000000)::bytea
       AS "same filter, declared, serial and parallel"
FROM f3_rows_30m;
DROP TABLE f3_rows_5m, f3_rows_30m;
