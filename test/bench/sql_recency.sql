-- The recency join the extension is for ("visits whose user came back
-- within an hour"), against the best exact plans, in one run (issue 24):
-- 4M visits over two hours from 500,000 users; the visits of the second
-- hour whose user also visited in the first.
--   tlbf:        a filter of the first hour's users (tlbf_agg), asked per
--                visit (read once, as a subquery: a parallel plan hands it
--                to its workers, where a join may read its row per visit);
--   exact:       EXISTS over the first hour's visits, with the index
--                PostgreSQL would use (user_id, at), and without it (a hash
--                semi-join);
--   exact set:   a table of the users seen within the last hour, kept up
--                to date as visits come (an upsert per visit and a DELETE
--                of the older ones, as test/bench/dedup.sh measures), here
--                as of the hour's end: the exact counterpart of the filter,
--                joined by primary key.
-- Each serial, and as PostgreSQL plans it with 2 parallel workers allowed
-- (the plan is printed).  Min and median of 5, interleaved; the build
-- times (min and median of 3) are the filter's aggregate, CREATE INDEX and
-- the set built at once.
-- Every exact query gives the same count; the filter's extra visits (false
-- positives) are counted, with their rate.
\set QUIET on
\pset footer off
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS tlbf;
DROP TABLE IF EXISTS recency_visits, recency_filter, recent_users;
SELECT setseed(0.24) \g /dev/null
CREATE TABLE recency_visits AS
SELECT (random() * 500000)::int AS user_id,
       '2024-01-01 00:00+00'::timestamptz + g * interval '1.8 ms' AS at
FROM generate_series(1, 4000000) g;
VACUUM ANALYZE recency_visits;

\ir median_ms.sql
\ir plan_of.sql

-- building: the first hour's filter, the index, and the set at once
SET max_parallel_workers_per_gather = 0;
CREATE TEMP TABLE build_ms AS
SELECT * FROM pg_temp.median_ms(ARRAY[
    $q$DROP TABLE IF EXISTS recency_filter;
       CREATE TABLE recency_filter AS
       SELECT tlbf_agg(user_id, at, '1 hour') AS f FROM recency_visits
       WHERE at < '2024-01-01 01:00+00'$q$,
    $q$DROP INDEX IF EXISTS recency_visits_user_at;
       CREATE INDEX recency_visits_user_at ON recency_visits (user_id, at)$q$,
    $q$DROP TABLE IF EXISTS recent_users;
       CREATE TABLE recent_users (user_id int PRIMARY KEY, last_at timestamptz NOT NULL);
       INSERT INTO recent_users SELECT user_id, max(at) FROM recency_visits
       WHERE at < '2024-01-01 01:00+00' GROUP BY user_id$q$
], 3);
RESET max_parallel_workers_per_gather;
VACUUM ANALYZE recency_visits, recent_users, recency_filter;

-- each contender, serial and with 2 parallel workers allowed
CREATE TEMP TABLE contenders (n int, how text, settings text, query text);
INSERT INTO contenders VALUES
    (1, 'tlbf_contains per visit', '',
     $q$SELECT count(*) FROM recency_visits v
        WHERE v.at >= '2024-01-01 01:00+00'
          AND tlbf_contains((SELECT f FROM recency_filter), v.user_id, '2024-01-01 01:00+00')$q$),
    (2, 'exact: EXISTS, planner''s choice (index there)', '',
     $q$SELECT count(*) FROM recency_visits v WHERE v.at >= '2024-01-01 01:00+00'
          AND EXISTS (SELECT FROM recency_visits w WHERE w.user_id = v.user_id
                      AND w.at < '2024-01-01 01:00+00')$q$),
    (3, 'exact: EXISTS, hash semi-join (no index)',
     'SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;',
     $q$SELECT count(*) FROM recency_visits v WHERE v.at >= '2024-01-01 01:00+00'
          AND EXISTS (SELECT FROM recency_visits w WHERE w.user_id = v.user_id
                      AND w.at < '2024-01-01 01:00+00')$q$),
    (4, 'exact set: join with recent_users', '',
     $q$SELECT count(*) FROM recency_visits v JOIN recent_users r USING (user_id)
        WHERE v.at >= '2024-01-01 01:00+00' AND r.last_at > '2024-01-01 00:00+00'$q$);
CREATE TEMP TABLE runs AS
SELECT c.n * 2 - 1 + p.parallel::int AS query, c.n, c.how, p.parallel,
       'RESET ALL; SET client_min_messages = warning; SET synchronize_seqscans = off; ' ||
       CASE WHEN p.parallel THEN 'SET max_parallel_workers_per_gather = 2; '
            ELSE 'SET max_parallel_workers_per_gather = 0; ' END || c.settings AS settings,
       c.query AS query_text
FROM contenders c, (VALUES (false), (true)) p(parallel);

CREATE TEMP TABLE plans (query int, plan text);
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM runs LOOP
        EXECUTE r.settings;
        INSERT INTO plans VALUES (r.query, pg_temp.plan_of(r.query_text));
    END LOOP;
END $$;
RESET ALL;
SET client_min_messages = warning;

CREATE TEMP TABLE query_ms AS
SELECT * FROM pg_temp.median_ms(ARRAY(SELECT settings || query_text FROM runs ORDER BY query), 5);
RESET ALL;
SET client_min_messages = warning;

SELECT 'build: tlbf_agg of the first hour' AS step, min_ms, median_ms,
       pg_size_pretty((SELECT pg_column_size(f) FROM recency_filter)::bigint) AS size
FROM build_ms WHERE query = 1
UNION ALL
SELECT 'build: CREATE INDEX (user_id, at)', min_ms, median_ms,
       pg_size_pretty(pg_relation_size('recency_visits_user_at'))
FROM build_ms WHERE query = 2
UNION ALL
SELECT 'build: the set of the first hour''s users, at once', min_ms, median_ms,
       pg_size_pretty(pg_total_relation_size('recent_users'))
FROM build_ms WHERE query = 3;

WITH best_exact AS (SELECT min(median_ms) AS ms FROM query_ms JOIN runs USING (query) WHERE n > 1)
SELECT r.how, CASE WHEN r.parallel THEN '2 workers allowed' ELSE 'serial' END AS plan,
       q.min_ms, q.median_ms, round(q.median_ms / (SELECT ms FROM best_exact), 2) AS "x best exact",
       p.plan AS "plan PostgreSQL chose"
FROM runs r JOIN query_ms q USING (query) JOIN plans p USING (query)
ORDER BY r.query;

SELECT round(pg_total_relation_size('recent_users')::numeric
             / (SELECT pg_column_size(f) FROM recency_filter), 1) AS "set / filter, bytes";

-- the answers: every returning visit, and the few false positives
SET max_parallel_workers_per_gather = 0;
WITH exact AS (
    SELECT count(*) AS n FROM recency_visits v WHERE v.at >= '2024-01-01 01:00+00'
       AND EXISTS (SELECT FROM recency_visits w WHERE w.user_id = v.user_id
                   AND w.at < '2024-01-01 01:00+00')),
set AS (
    SELECT count(*) AS n FROM recency_visits v JOIN recent_users r USING (user_id)
    WHERE v.at >= '2024-01-01 01:00+00' AND r.last_at > '2024-01-01 00:00+00'),
approx AS (
    SELECT count(*) AS n FROM recency_visits v
    WHERE v.at >= '2024-01-01 01:00+00'
      AND tlbf_contains((SELECT f FROM recency_filter), v.user_id, '2024-01-01 01:00+00')),
second_hour AS (
    SELECT count(*) AS n FROM recency_visits WHERE at >= '2024-01-01 01:00+00')
SELECT exact.n AS returning_visits, set.n = exact.n AS "exact set agrees",
       approx.n - exact.n AS false_positives,
       round((approx.n - exact.n)::numeric / (second_hour.n - exact.n) * 100, 3) AS "fp % of the others"
FROM exact, set, approx, second_hour;

DROP TABLE recency_visits, recency_filter, recent_users;
