-- Stored filters read by a join in any order: a call site keeps each
-- TOASTed filter it fetched (up to tlbf.cache_memory, the two used last
-- always), so a hash join of probe rows against per-group filters fetches
-- each filter once, as rows grouped by filter would (make bench times it).
-- Here: the same answers whatever the cache holds, and no key missed.
SET TimeZone = 'UTC';
CREATE TABLE vc_visits AS
SELECT g, 'site-' || (g % 10) AS site, (g::bigint * 7919) % 200000 AS user_id,
       '2024-01-01 00:00+00'::timestamptz + g * interval '18 ms' AS at
FROM generate_series(1, 200000) g;
CREATE TABLE vc_filters AS
SELECT site, tlbf_agg(user_id, at, '1 hour') AS f FROM vc_visits GROUP BY site;
-- ten filters of about 50 kB, stored out of line
SELECT count(*) AS filters, bool_and(pg_column_size(f) > 40000) AS large,
       pg_relation_size((SELECT reltoastrelid FROM pg_class WHERE relname = 'vc_filters')) > 400000
         AS out_of_line
FROM vc_filters;
SELECT setseed(0.3);
CREATE TABLE vc_probes AS
SELECT 'site-' || (random() * 9)::int AS site, (random() * 300000)::int AS user_id
FROM generate_series(1, 20000);
ANALYZE vc_filters, vc_probes;

-- a hash join, probe rows in any order
SET enable_mergejoin = off;
SET enable_nestloop = off;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM vc_probes p JOIN vc_filters s USING (site)
WHERE tlbf_contains(s.f, p.user_id, '2024-01-01 01:00+00');
CREATE TABLE vc_answers (cache text, found bigint, missed bigint);
CREATE FUNCTION vc_answer(cache text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('tlbf.cache_memory', cache, true);
    INSERT INTO vc_answers
    SELECT cache,
           (SELECT count(*) FROM vc_probes p JOIN vc_filters s USING (site)
            WHERE tlbf_contains(s.f, p.user_id, '2024-01-01 01:00+00')),
           (SELECT count(*) FROM vc_visits v JOIN vc_filters s USING (site)
            WHERE v.g % 20 = 0 AND NOT tlbf_contains(s.f, v.user_id, '2024-01-01 01:00+00'));
END $$;
-- every filter kept; fewer than the ten (the least recently used go); the
-- two used last only
SELECT vc_answer('256MB'), vc_answer('200kB'), vc_answer('0');
SELECT count(DISTINCT found) AS answers, max(missed) AS missed, min(found) > 0 AS found_some
FROM vc_answers;

-- a function that reads two stored filters keeps the first while it
-- fetches the second, whatever the cache holds
SET tlbf.cache_memory = 0;
CREATE TABLE vc_unions AS
SELECT a.site AS site_a, b.site AS site_b, a.f || b.f AS u
FROM vc_filters a JOIN vc_filters b ON b.site > a.site;
SELECT count(*) AS pairs,
       (SELECT count(*) FROM vc_unions, vc_visits v
        WHERE v.site IN (site_a, site_b) AND v.g % 50 = 0
          AND NOT tlbf_contains(u, v.user_id, '2024-01-01 01:00+00')) AS union_missed
FROM vc_unions;
RESET tlbf.cache_memory;
RESET enable_mergejoin;
RESET enable_nestloop;
