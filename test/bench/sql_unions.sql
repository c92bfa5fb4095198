-- Unions of format 3 filters built apart over consecutive time ranges
-- (rollups), against one filter built over all the rows (bytes and error
-- rate, not time; issue 36's row "union of filters of consecutive time
-- ranges of one stream").  Each range's filter is built by tlbf_agg (sized
-- for its own keys) or by tlbf_agg_format3 with one declared capacity, and
-- all are united with tlbf_union_agg.  The error rate is counted over
-- 200,000 keys never added, asked at the newest time; every key of the
-- last span must be found by both (the column "missed").
--   1. a steady stream: 3M keys over 3 hours, a span of 1 hour (1M keys a
--      span, generations of 20 minutes), cut every 20 minutes (on the
--      generations' boundaries), 5 and 7 minutes (inside them);
--   2. a rollup: 14 days of one key a minute (3,000 keys in turn), a span
--      of 7 days (generations of 56 hours), cut by day.
\set QUIET on
\pset footer off
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
CREATE EXTENSION IF NOT EXISTS tlbf;

DROP TABLE IF EXISTS union_steady, union_week, union_results;
CREATE TABLE union_steady AS
SELECT g AS key, '2024-01-01 00:00+00'::timestamptz + g * interval '3.6 ms' AS at
FROM generate_series(1, 3000000) g;
CREATE TABLE union_week AS
SELECT g % 3000 AS key, '2024-01-01 00:00+00'::timestamptz + g * interval '1 min' AS at
FROM generate_series(1, 14 * 1440) g;
CREATE TABLE union_results (stream text, parts text, builder text, whole_bytes int, united_bytes int,
                            united_bands int, whole_fpr float8, united_fpr float8, missed bigint);

-- one case: the whole's filter and the united one, asked at 'asked' for
-- the keys of 'source' after 'since' and for 200,000 keys never added
CREATE FUNCTION pg_temp.report(stream text, parts text, builder text, whole tlbf, united tlbf,
                               source regclass, since timestamptz, asked timestamptz) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    missed bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM %s WHERE at > $1 AND NOT (tlbf_contains($2, key, $3) AND tlbf_contains($4, key, $3))',
                   source)
        INTO missed USING since, whole, asked, united;
    INSERT INTO union_results
    SELECT stream, parts, builder, octet_length(whole::bytea), octet_length(united::bytea),
           (tlbf_info(united)->>'band_count')::int,
           count(*) FILTER (WHERE tlbf_contains(whole, -g, asked)) / 2000.0,
           count(*) FILTER (WHERE tlbf_contains(united, -g, asked)) / 2000.0, missed
    FROM generate_series(1, 200000) g;
END
$$;

CREATE TEMP TABLE wholes AS
SELECT tlbf_agg(key, at, '1 hour') AS sized, tlbf_agg_format3(key, at, '1 hour', 0.01, 1000000) AS declared
FROM union_steady;
SELECT pg_temp.report('steady, 1M keys a span', cut || ' min', 'tlbf_agg', w.sized, u.sized,
                      'union_steady', '2024-01-01 02:00+00', '2024-01-01 03:00+00'),
       pg_temp.report('steady, 1M keys a span', cut || ' min', 'declared', w.declared, u.declared,
                      'union_steady', '2024-01-01 02:00+00', '2024-01-01 03:00+00')
FROM wholes w, unnest(ARRAY[20, 5, 7]) cut,
     LATERAL (SELECT tlbf_union_agg(sized) AS sized, tlbf_union_agg(declared) AS declared
              FROM (SELECT tlbf_agg(key, at, '1 hour') AS sized,
                           tlbf_agg_format3(key, at, '1 hour', 0.01, 1000000) AS declared
                    FROM union_steady GROUP BY date_bin(cut * interval '1 min', at, '2024-01-01')) p) u
\g /dev/null

SELECT pg_temp.report('rollup, a week''s span', 'by day', 'tlbf_agg', w.sized, u.sized,
                      'union_week', '2024-01-08 00:00+00', '2024-01-15 00:00+00'),
       pg_temp.report('rollup, a week''s span', 'by day', 'declared', w.declared, u.declared,
                      'union_week', '2024-01-08 00:00+00', '2024-01-15 00:00+00')
FROM (SELECT tlbf_agg(key, at, '7 days') AS sized, tlbf_agg_format3(key, at, '7 days', 0.01, 10000) AS declared
      FROM union_week) w,
     (SELECT tlbf_union_agg(sized) AS sized, tlbf_union_agg(declared) AS declared
      FROM (SELECT tlbf_agg(key, at, '7 days') AS sized, tlbf_agg_format3(key, at, '7 days', 0.01, 10000) AS declared
            FROM union_week GROUP BY date_trunc('day', at)) p) u
\g /dev/null

\pset format aligned
SELECT stream, parts, builder, whole_bytes AS "whole B", united_bytes AS "united B",
       round(united_bytes::numeric / whole_bytes, 3) AS x, united_bands AS bands,
       round(whole_fpr::numeric, 2) AS "whole FPR %", round(united_fpr::numeric, 2) AS "united FPR %",
       missed
FROM union_results;

DROP TABLE union_steady, union_week, union_results;
