-- SQL benchmark: building filters with tlbf_agg, against hll_add_agg over
-- the same rows, and a parallel plan against a serial one, in one run.
-- Each comparison scans a table of exactly the rows it names: the 5M-row
-- comparison reads a table of 5M rows (a WHERE over a larger table would
-- make both sides pay for rows neither uses, and shrink the ratio).
-- Rounds alternate the contenders; min and median of 5.
\set QUIET on
\pset footer off
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS tlbf;
CREATE EXTENSION IF NOT EXISTS hll;
\ir median_ms.sql

DROP TABLE IF EXISTS agg_rows, agg_rows_5m;
CREATE TABLE agg_rows AS
SELECT g, '2024-01-01 00:00+00'::timestamptz + g * interval '1 ms' AS at
FROM generate_series(1, 10000000) g;
CREATE TABLE agg_rows_5m AS SELECT * FROM agg_rows WHERE g <= 5000000;
VACUUM ANALYZE agg_rows, agg_rows_5m;

-- Every scan starts at the table's first block, so that the rows arrive in
-- time order in every run.  (With synchronized scans, PostgreSQL's default,
-- a scan of a table this large starts where the previous one stopped: the
-- rows then arrive rotated, and the time order, hence the filter's work,
-- changes from run to run.)
SET synchronize_seqscans = off;

\echo 'tlbf_agg against hll_add_agg, a table of 5M rows, serial (min and median of 5)'
SET max_parallel_workers_per_gather = 0;
WITH m AS (
    SELECT * FROM pg_temp.median_ms(ARRAY[
        $q$SELECT hll_add_agg(hll_hash_bigint(g)) IS NOT NULL FROM agg_rows_5m$q$,
        $q$SELECT tlbf_agg(g, at, '1 hour') IS NOT NULL FROM agg_rows_5m$q$
    ], 5)
)
SELECT CASE query WHEN 1 THEN 'hll_add_agg(hll_hash_bigint(g))' ELSE 'tlbf_agg(g, at, ''1 hour'')' END AS query,
       min_ms, median_ms,
       round(min_ms / (SELECT min_ms FROM m WHERE query = 1), 2) AS "x hll, min",
       round(median_ms / (SELECT median_ms FROM m WHERE query = 1), 2) AS "x hll, median"
FROM m ORDER BY query;

-- The two answer different questions (how many distinct keys; which keys
-- within the last hour), so the check is that both read the same rows, and
-- what each estimates against the exact count.
SELECT count(*) AS rows_read,
       count(DISTINCT g) AS "distinct keys", round(hll_cardinality(hll_add_agg(hll_hash_bigint(g)))) AS "hll's estimate",
       (SELECT count(DISTINCT g) FROM agg_rows_5m
        WHERE at > (SELECT max(at) FROM agg_rows_5m) - interval '1 hour') AS "keys of the last hour",
       round((tlbf_info(tlbf_agg(g, at, '1 hour'), max(at))->>'live_keys_estimate')::float8) AS "tlbf's estimate"
FROM agg_rows_5m;

\echo 'tlbf_agg over 10M rows: 2 parallel workers against serial (min and median of 5)'
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
WITH m AS (
    SELECT * FROM pg_temp.median_ms(ARRAY[
        $q$SET max_parallel_workers_per_gather = 0;
           SELECT tlbf_agg(g, at, '1 hour') IS NOT NULL FROM agg_rows$q$,
        $q$SET max_parallel_workers_per_gather = 2;
           SELECT tlbf_agg(g, at, '1 hour') IS NOT NULL FROM agg_rows$q$,
        $q$SET max_parallel_workers_per_gather = 0;
           SELECT sum(hashint8(g)) IS NOT NULL FROM agg_rows$q$,
        $q$SET max_parallel_workers_per_gather = 2;
           SELECT sum(hashint8(g)) IS NOT NULL FROM agg_rows$q$
    ], 5)
)
SELECT CASE WHEN query <= 2 THEN 'tlbf_agg(g, at, ''1 hour'')' ELSE 'for scale: sum(hashint8(g))' END AS query,
       CASE WHEN query % 2 = 1 THEN 'serial' ELSE '2 workers' END AS plan,
       min_ms, median_ms,
       round((SELECT min_ms FROM m s WHERE s.query = m.query - 1 + m.query % 2) / min_ms, 2) AS "speedup, min",
       round((SELECT median_ms FROM m s WHERE s.query = m.query - 1 + m.query % 2) / median_ms, 2) AS "speedup, median"
FROM m ORDER BY query;

-- The answer is the same filter under both plans, byte for byte.
SET max_parallel_workers_per_gather = 0;
CREATE TEMP TABLE serial_filter AS SELECT tlbf_agg(g, at, '1 hour')::bytea AS f FROM agg_rows;
SET max_parallel_workers_per_gather = 2;
SELECT (SELECT f FROM serial_filter) = tlbf_agg(g, at, '1 hour')::bytea AS "same filter, serial and parallel"
FROM agg_rows;
DROP TABLE agg_rows, agg_rows_5m, serial_filter;
