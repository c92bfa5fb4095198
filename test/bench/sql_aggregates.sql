-- SQL benchmark: building filters with tlbf_agg, against hll_add_agg over
-- the same rows, and a parallel plan against a serial one, in one run.
\set QUIET on
\pset footer off
CREATE EXTENSION IF NOT EXISTS tlbf;
CREATE EXTENSION IF NOT EXISTS hll;
\ir median_ms.sql

DROP TABLE IF EXISTS agg_rows;
CREATE TABLE agg_rows AS
SELECT g, '2024-01-01 00:00+00'::timestamptz + g * interval '1 ms' AS at
FROM generate_series(1, 10000000) g;
VACUUM ANALYZE agg_rows;

-- Every scan starts at the table's first block, so that the rows arrive in
-- time order in every run.  (With synchronized scans, PostgreSQL's default,
-- a scan of a table this large starts where the previous one stopped: the
-- rows then arrive rotated, and the time order, hence the filter's work,
-- changes from run to run.)
SET synchronize_seqscans = off;

\echo 'tlbf_agg against hll_add_agg, 5M rows, serial'
SET max_parallel_workers_per_gather = 0;
WITH m AS (
    SELECT * FROM pg_temp.median_ms(ARRAY[
        $q$SELECT hll_add_agg(hll_hash_bigint(g)) IS NOT NULL FROM agg_rows WHERE g <= 5000000$q$,
        $q$SELECT tlbf_agg(g, at, '1 hour') IS NOT NULL FROM agg_rows WHERE g <= 5000000$q$
    ], 3)
)
SELECT 'hll_add_agg(hll_hash_bigint(g))' AS query, median_ms, 1.0 AS ratio FROM m WHERE query = 1
UNION ALL
SELECT 'tlbf_agg(g, at, ''1 hour'')', median_ms,
       round(median_ms / (SELECT median_ms FROM m WHERE query = 1), 2) FROM m WHERE query = 2;

\echo 'tlbf_agg over 10M rows: 2 parallel workers against serial'
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
WITH m AS (
    SELECT * FROM pg_temp.median_ms(ARRAY[
        $q$SET max_parallel_workers_per_gather = 0;
           SELECT tlbf_agg(g, at, '1 hour') IS NOT NULL FROM agg_rows$q$,
        $q$SET max_parallel_workers_per_gather = 2;
           SELECT tlbf_agg(g, at, '1 hour') IS NOT NULL FROM agg_rows$q$
    ], 3)
)
SELECT 'serial' AS plan, median_ms, 1.0 AS speedup FROM m WHERE query = 1
UNION ALL
SELECT '2 workers', median_ms,
       round((SELECT median_ms FROM m WHERE query = 1) / median_ms, 2) FROM m WHERE query = 2;

\echo 'for scale, the same plans for PostgreSQL''s own sum(hashint8(g))'
WITH m AS (
    SELECT * FROM pg_temp.median_ms(ARRAY[
        $q$SET max_parallel_workers_per_gather = 0;
           SELECT sum(hashint8(g)) IS NOT NULL FROM agg_rows$q$,
        $q$SET max_parallel_workers_per_gather = 2;
           SELECT sum(hashint8(g)) IS NOT NULL FROM agg_rows$q$
    ], 3)
)
SELECT 'serial' AS plan, median_ms, 1.0 AS speedup FROM m WHERE query = 1
UNION ALL
SELECT '2 workers', median_ms,
       round((SELECT median_ms FROM m WHERE query = 1) / median_ms, 2) FROM m WHERE query = 2;
