-- Grouped tlbf_agg over rows in any order (issue 25): 2M visits to 10
-- sites in a shuffled table, GROUP BY site as PostgreSQL plans it (a
-- HashAggregate: each group's log and sort take its share of work_mem and
-- spill past it) against ORDER BY at inside the call (a sort of every row
-- by site, then by time per group), and a sorted GROUP BY.  The same
-- filters each way; medians of 3, alternating.
\set QUIET on
\pset footer off
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS tlbf;
\ir median_ms.sql
DROP TABLE IF EXISTS grouped_rows;
SELECT setseed(0.5) \g /dev/null
CREATE TABLE grouped_rows AS
SELECT 'site-' || (g % 10) AS site, (g::bigint * 7919) % 2000000 AS user_id,
       '2024-01-01 00:00+00'::timestamptz + g * interval '1.8 ms' AS at
FROM generate_series(1, 2000000) g ORDER BY random();
VACUUM ANALYZE grouped_rows;
SET max_parallel_workers_per_gather = 0;

SELECT count(*) AS groups, bool_and(h.f::bytea = o.f::bytea) AS same_filters
FROM (SELECT site, tlbf_agg(user_id, at, '1 hour') AS f FROM grouped_rows GROUP BY site) h
     JOIN (SELECT site, tlbf_agg(user_id, at, '1 hour' ORDER BY at) AS f FROM grouped_rows GROUP BY site) o
     USING (site);

WITH m AS (
    SELECT * FROM pg_temp.median_ms(ARRAY[
        $q$SELECT site, tlbf_agg(user_id, at, '1 hour') IS NOT NULL FROM grouped_rows GROUP BY site$q$,
        $q$SELECT site, tlbf_agg(user_id, at, '1 hour' ORDER BY at) IS NOT NULL FROM grouped_rows GROUP BY site$q$,
        $q$SET enable_hashagg = off;
           SELECT site, tlbf_agg(user_id, at, '1 hour') IS NOT NULL FROM grouped_rows GROUP BY site;
           RESET enable_hashagg$q$
    ], 3))
SELECT CASE query WHEN 1 THEN 'GROUP BY site (HashAggregate)'
                  WHEN 2 THEN 'ORDER BY at inside the call'
                  ELSE 'GROUP BY site, sorted (GroupAggregate)' END AS plan,
       min_ms, median_ms, round(median_ms / (SELECT median_ms FROM m WHERE query = 2), 2) AS "x ORDER BY at"
FROM m ORDER BY query;
DROP TABLE grouped_rows;
