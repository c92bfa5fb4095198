-- The recency join against per-group filters, its speed whatever order the
-- probe rows come in (issue 25): per-site filters joined with 100,000
-- probe rows, PostgreSQL's hash join over probes in random order against
-- the same join over probes that come grouped by site.  10 sites (filters
-- of 500 kB) and 1,000 sites (12 kB each); medians of 3, alternating.
\set QUIET on
\pset footer off
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS tlbf;
\ir median_ms.sql

DROP TABLE IF EXISTS rj_filters, rj_probes;
CREATE TABLE rj_filters (sites int, site int, f tlbf);
INSERT INTO rj_filters
SELECT 10, g % 10, tlbf_agg((g::bigint * 7919) % 2000000, '2024-01-01 00:00+00'::timestamptz + g * interval '1.8 ms', '1 hour')
FROM generate_series(1, 2000000) g GROUP BY g % 10;
INSERT INTO rj_filters
SELECT 1000, g % 1000, tlbf_agg((g::bigint * 7919) % 2000000, '2024-01-01 00:00+00'::timestamptz + g * interval '0.72 ms', '1 hour')
FROM generate_series(1, 5000000) g GROUP BY g % 1000;
SELECT setseed(0.1) \g /dev/null
CREATE TABLE rj_probes AS
SELECT n AS sites, (random() * (n - 1))::int AS site, (random() * 3000000)::int AS user_id
FROM (VALUES (10), (1000)) v(n), generate_series(1, 100000);
ANALYZE rj_filters, rj_probes;
SET max_parallel_workers_per_gather = 0;

SELECT sites, count(*) AS filters, pg_size_pretty(avg(pg_column_size(f))::bigint) AS each
FROM rj_filters GROUP BY sites ORDER BY sites;

WITH m AS (
    SELECT * FROM pg_temp.median_ms(ARRAY[
        $q$SELECT count(*) FROM rj_probes p JOIN rj_filters s USING (sites, site)
           WHERE p.sites = 10 AND tlbf_contains(s.f, p.user_id, '2024-01-01 01:00+00')$q$,
        $q$SELECT count(*) FROM (SELECT * FROM rj_probes WHERE sites = 10 ORDER BY site) p
           JOIN rj_filters s USING (sites, site)
           WHERE tlbf_contains(s.f, p.user_id, '2024-01-01 01:00+00')$q$,
        $q$SELECT count(*) FROM rj_probes p JOIN rj_filters s USING (sites, site)
           WHERE p.sites = 1000 AND tlbf_contains(s.f, p.user_id, '2024-01-01 01:00+00')$q$,
        $q$SELECT count(*) FROM (SELECT * FROM rj_probes WHERE sites = 1000 ORDER BY site) p
           JOIN rj_filters s USING (sites, site)
           WHERE tlbf_contains(s.f, p.user_id, '2024-01-01 01:00+00')$q$
    ], 3))
SELECT CASE WHEN query <= 2 THEN 10 ELSE 1000 END AS sites,
       CASE WHEN query % 2 = 1 THEN 'hash join, probes in any order' ELSE 'probes grouped by site' END AS plan,
       median_ms,
       round(median_ms / (SELECT median_ms FROM m g WHERE g.query = m.query + (m.query % 2)), 2) AS "x grouped"
FROM m ORDER BY query;
DROP TABLE rj_filters, rj_probes;
