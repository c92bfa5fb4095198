-- The recency join against per-group filters, its speed whatever order the
-- probe rows come in (issue 25): per-site filters joined with 100,000
-- probe rows, PostgreSQL's hash join over probes in random order against
-- the same join over probes that come grouped by site.  Both read a table
-- as it is stored, one in random order, one already in site order (a sort
-- inside the timed query would make the grouped side pay for it).
-- 10 sites (filters of 500 kB) and 1,000 sites (12 kB each); min and median
-- of 9, interleaved; both orders give the same count.
\set QUIET on
\pset footer off
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS tlbf;
\ir median_ms.sql
\ir plan_of.sql

DROP TABLE IF EXISTS rj_filters, rj_probes, rj_probes_grouped;
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
-- the same rows, stored in site order
CREATE TABLE rj_probes_grouped AS SELECT * FROM rj_probes ORDER BY sites, site, user_id;
VACUUM ANALYZE rj_filters, rj_probes, rj_probes_grouped;
SET max_parallel_workers_per_gather = 0;

SELECT sites, count(*) AS filters, pg_size_pretty(avg(pg_column_size(f))::bigint) AS each
FROM rj_filters GROUP BY sites ORDER BY sites;

-- Both sides' plans: a hash join with the filters hashed, the probes read
-- as stored (checked here, so that a change of plan shows).
SELECT count(*) FILTER (WHERE plan = 'Aggregate > Hash Join > Seq Scan on ' || tbl)
           AS "plans that hash the filters and scan the probes as stored",
       count(*) AS "of"
FROM (VALUES ('rj_probes'), ('rj_probes_grouped')) t(tbl), (VALUES (10), (1000)) v(sites),
     LATERAL (SELECT pg_temp.plan_of(format(
         $q$SELECT count(*) FROM %I p JOIN rj_filters s USING (sites, site)
            WHERE p.sites = %s AND tlbf_contains(s.f, p.user_id, '2024-01-01 01:00+00')$q$, tbl, sites)) AS plan) p;

WITH m AS (
    SELECT * FROM pg_temp.median_ms(ARRAY[
        $q$SELECT count(*) FROM rj_probes p JOIN rj_filters s USING (sites, site)
           WHERE p.sites = 10 AND tlbf_contains(s.f, p.user_id, '2024-01-01 01:00+00')$q$,
        $q$SELECT count(*) FROM rj_probes_grouped p JOIN rj_filters s USING (sites, site)
           WHERE p.sites = 10 AND tlbf_contains(s.f, p.user_id, '2024-01-01 01:00+00')$q$,
        $q$SELECT count(*) FROM rj_probes p JOIN rj_filters s USING (sites, site)
           WHERE p.sites = 1000 AND tlbf_contains(s.f, p.user_id, '2024-01-01 01:00+00')$q$,
        $q$SELECT count(*) FROM rj_probes_grouped p JOIN rj_filters s USING (sites, site)
           WHERE p.sites = 1000 AND tlbf_contains(s.f, p.user_id, '2024-01-01 01:00+00')$q$
    ], 9))
SELECT CASE WHEN query <= 2 THEN 10 ELSE 1000 END AS sites,
       CASE WHEN query % 2 = 1 THEN 'hash join, probes in random order' ELSE 'hash join, probes stored by site' END AS plan,
       min_ms, median_ms,
       round(min_ms / (SELECT min_ms FROM m g WHERE g.query = m.query + (m.query % 2)), 2) AS "x grouped, min",
       round(median_ms / (SELECT median_ms FROM m g WHERE g.query = m.query + (m.query % 2)), 2) AS "x grouped, median"
FROM m ORDER BY query;

-- the answers: the same count both ways
SELECT sites,
       (SELECT count(*) FROM rj_probes p JOIN rj_filters s USING (sites, site)
        WHERE p.sites = v.sites AND tlbf_contains(s.f, p.user_id, '2024-01-01 01:00+00')) AS "found, random order",
       (SELECT count(*) FROM rj_probes_grouped p JOIN rj_filters s USING (sites, site)
        WHERE p.sites = v.sites AND tlbf_contains(s.f, p.user_id, '2024-01-01 01:00+00')) AS "found, by site"
FROM (VALUES (10), (1000)) v(sites);
DROP TABLE rj_filters, rj_probes, rj_probes_grouped;
