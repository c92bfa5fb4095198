-- The recency join the extension is for ("visits whose user came back
-- within an hour"), against the best exact plan, in one run (issue 24):
-- 4M visits over two hours from 500,000 users; the visits of the second
-- hour whose user also visited in the first.
--   tlbf:  a filter of the first hour's users (tlbf_agg), asked per visit;
--   exact: EXISTS over the first hour's visits, with the index PostgreSQL
--          would use (user_id, at) and without it (a hash semi-join),
--          whichever is faster.
-- Times are medians of 5 runs each, alternating; the build times are the
-- filter's aggregate and CREATE INDEX.
\set QUIET on
\pset footer off
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS tlbf;
DROP TABLE IF EXISTS recency_visits, recency_filter;
SELECT setseed(0.24) \g /dev/null
CREATE TABLE recency_visits AS
SELECT (random() * 500000)::int AS user_id,
       '2024-01-01 00:00+00'::timestamptz + g * interval '1.8 ms' AS at
FROM generate_series(1, 4000000) g;
VACUUM ANALYZE recency_visits;
SET max_parallel_workers_per_gather = 0;

\ir median_ms.sql

-- building: the first hour's filter, and the index
CREATE TEMP TABLE build_ms AS
SELECT * FROM pg_temp.median_ms(ARRAY[
    $q$DROP TABLE IF EXISTS recency_filter;
       CREATE TABLE recency_filter AS
       SELECT tlbf_agg(user_id, at, '1 hour') AS f FROM recency_visits
       WHERE at < '2024-01-01 01:00+00'$q$,
    $q$DROP INDEX IF EXISTS recency_visits_user_at;
       CREATE INDEX recency_visits_user_at ON recency_visits (user_id, at)$q$
], 5);
ANALYZE recency_visits;

CREATE TEMP TABLE query_ms AS
SELECT * FROM pg_temp.median_ms(ARRAY[
    $q$SELECT count(*) FROM recency_visits v, recency_filter r
       WHERE v.at >= '2024-01-01 01:00+00'
         AND tlbf_contains(r.f, v.user_id, '2024-01-01 01:00+00')$q$,
    $q$SET enable_hashjoin = on; SET enable_indexscan = on; SET enable_bitmapscan = on;
       SELECT count(*) FROM recency_visits v WHERE v.at >= '2024-01-01 01:00+00'
         AND EXISTS (SELECT FROM recency_visits w WHERE w.user_id = v.user_id
                     AND w.at < '2024-01-01 01:00+00')$q$,
    $q$SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;
       SELECT count(*) FROM recency_visits v WHERE v.at >= '2024-01-01 01:00+00'
         AND EXISTS (SELECT FROM recency_visits w WHERE w.user_id = v.user_id
                     AND w.at < '2024-01-01 01:00+00');
       RESET enable_indexscan; RESET enable_bitmapscan; RESET enable_indexonlyscan$q$
], 5);

SELECT 'build: tlbf_agg of the first hour' AS step, median_ms,
       pg_size_pretty((SELECT pg_column_size(f) FROM recency_filter)::bigint) AS size
FROM build_ms WHERE query = 1
UNION ALL
SELECT 'build: CREATE INDEX (user_id, at)', median_ms,
       pg_size_pretty(pg_relation_size('recency_visits_user_at'))
FROM build_ms WHERE query = 2;

WITH best_exact AS (SELECT min(median_ms) AS ms FROM query_ms WHERE query > 1)
SELECT q.how, q.median_ms, round(q.median_ms / (SELECT ms FROM best_exact), 2) AS "x best exact"
FROM (SELECT 'tlbf_contains per visit' AS how, median_ms FROM query_ms WHERE query = 1
      UNION ALL SELECT 'exact, planner''s choice (index there)', median_ms FROM query_ms WHERE query = 2
      UNION ALL SELECT 'exact, hash semi-join', median_ms FROM query_ms WHERE query = 3) q;

-- the answers: every returning visit, and the few false positives
SELECT exact.n AS returning_visits, approx.n - exact.n AS false_positives,
       round((approx.n - exact.n)::numeric / (others.n) * 100, 3) AS "fp % of the others"
FROM (SELECT count(*) AS n FROM recency_visits v WHERE v.at >= '2024-01-01 01:00+00'
        AND EXISTS (SELECT FROM recency_visits w WHERE w.user_id = v.user_id
                    AND w.at < '2024-01-01 01:00+00')) exact,
     (SELECT count(*) AS n FROM recency_visits v, recency_filter r
      WHERE v.at >= '2024-01-01 01:00+00'
        AND tlbf_contains(r.f, v.user_id, '2024-01-01 01:00+00')) approx,
     (SELECT count(*) AS n FROM recency_visits v WHERE v.at >= '2024-01-01 01:00+00'
        AND NOT EXISTS (SELECT FROM recency_visits w WHERE w.user_id = v.user_id
                        AND w.at < '2024-01-01 01:00+00')) others;

DROP TABLE recency_visits, recency_filter;
