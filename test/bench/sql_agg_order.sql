-- What input order and parallel plans do to tlbf_agg's result (accuracy
-- and size, not time): 2M rows over 1.7 hours, a 1-hour span, asked at the
-- newest time.  The same rows built five ways: ORDER BY at inside the call,
-- a heap scan of a table filled in time order, the same scan starting in
-- the middle of the table (as a synchronized scan may), a table shuffled at
-- random, and a parallel plan over the ordered table.
\set QUIET on
\pset footer off
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS tlbf;

DROP TABLE IF EXISTS rows_in_order, rows_shuffled, built, built_parallel;
CREATE TABLE rows_in_order AS
SELECT g, '2024-01-01 00:00+00'::timestamptz + g * interval '3060 microseconds' AS at
FROM generate_series(1, 2000000) g;
SELECT setseed(0.5) \g /dev/null
CREATE TABLE rows_shuffled AS SELECT * FROM rows_in_order ORDER BY random();
VACUUM ANALYZE rows_in_order, rows_shuffled;

CREATE TABLE built (how text, f tlbf);
SET max_parallel_workers_per_gather = 0;
INSERT INTO built SELECT 'ORDER BY at in the call', tlbf_agg(g, at, '1 hour' ORDER BY at) FROM rows_in_order;
SET synchronize_seqscans = off;
INSERT INTO built SELECT 'heap scan, time order', tlbf_agg(g, at, '1 hour') FROM rows_in_order;
-- A synchronized scan (the default for a table larger than a quarter of
-- shared_buffers) starts where the last one stopped: here half-way, left
-- there by a scan that ends at the middle row.
SET synchronize_seqscans = on;
SELECT g FROM rows_in_order WHERE g = 1000000 LIMIT 1 \g /dev/null
INSERT INTO built SELECT 'heap scan from the middle', tlbf_agg(g, at, '1 hour') FROM rows_in_order;
SET synchronize_seqscans = off;
INSERT INTO built SELECT 'shuffled', tlbf_agg(g, at, '1 hour') FROM rows_shuffled;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
-- (INSERT ... SELECT never runs in parallel; CREATE TABLE AS may)
CREATE TABLE built_parallel AS
SELECT 'parallel, 2 workers' AS how, tlbf_agg(g, at, '1 hour') AS f FROM rows_in_order;
INSERT INTO built SELECT * FROM built_parallel;
RESET max_parallel_workers_per_gather;

-- Asked at the newest time, 01:42 (2M rows 3.06 ms apart).  live: added
-- within the span before it (from 00:42); old: older than 1.25 spans
-- (before 00:27); absent: never added.
SELECT how,
       (tlbf_info(f)->>'slice_count')::int AS slices,
       round((tlbf_info(f)->>'bytes')::numeric / 1e6, 1) AS mb,
       (SELECT count(*) FROM rows_in_order
         WHERE at >= '2024-01-01 00:42+00'
           AND NOT tlbf_contains(f, g, '2024-01-01 01:42+00')) AS live_missed,
       (SELECT round(100.0 * count(*) FILTER (WHERE tlbf_contains(f, g, '2024-01-01 01:42+00'))
                     / count(*), 2)
          FROM rows_in_order WHERE at < '2024-01-01 00:27+00') AS old_present_pct,
       (SELECT round(100.0 * count(*) FILTER (WHERE tlbf_contains(f, g, '2024-01-01 01:42+00'))
                     / count(*), 3)
          FROM generate_series(10000001, 11000000) g) AS absent_fpr_pct
FROM built ORDER BY how;
