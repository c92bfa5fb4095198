-- SQL benchmark (issue 36): tlbf_contains on filters of format 2 and of
-- format 3 holding 1M and 30M keys, read from a table (TOASTed), against
-- PostgreSQL's hashint8 (the floor of a per-row function), 5M probes each
-- (keys 1 to 5M: a fifth of them present at 1M, all at 30M), in
-- interleaved rounds: min and median.  Run by scripts/bench.sh, which
-- gives psql "id<TAB>value" lines on its standard input (build/bench/
-- make_filter ... base64): 21 and 31 the 1M-key filters of format 2 and 3,
-- 22 and 32 the 30M-key ones.
\set QUIET on
\pset footer off
CREATE EXTENSION IF NOT EXISTS tlbf;
SET client_min_messages = warning;
DROP TABLE IF EXISTS bench_formats;
CREATE TABLE bench_formats (id int PRIMARY KEY, f tlbf);
\copy bench_formats FROM pstdin

SELECT id, tlbf_info(f, '2024-01-01 00:00+00')->'version' AS format,
       (tlbf_info(f, '2024-01-01 00:00+00')->>'inserted')::bigint AS keys,
       pg_column_size(f) AS stored_bytes
FROM bench_formats ORDER BY id;

\ir median_ms.sql

SET max_parallel_workers_per_gather = 0;
WITH m AS (
    SELECT * FROM pg_temp.median_ms(ARRAY[
        $q$SELECT count(*) FROM generate_series(1, 5000000) g WHERE hashint8(g) = 0$q$,
        $q$SELECT count(*) FROM generate_series(1, 5000000) g
           WHERE tlbf_contains((SELECT f FROM bench_formats WHERE id = 21), g, '2024-01-01 00:00+00')$q$,
        $q$SELECT count(*) FROM generate_series(1, 5000000) g
           WHERE tlbf_contains((SELECT f FROM bench_formats WHERE id = 31), g, '2024-01-01 00:00+00')$q$,
        $q$SELECT count(*) FROM generate_series(1, 5000000) g
           WHERE tlbf_contains((SELECT f FROM bench_formats WHERE id = 22), g, '2024-01-01 00:00+00')$q$,
        $q$SELECT count(*) FROM generate_series(1, 5000000) g
           WHERE tlbf_contains((SELECT f FROM bench_formats WHERE id = 32), g, '2024-01-01 00:00+00')$q$
    ], 5)
)
SELECT CASE query WHEN 1 THEN 'hashint8(g) = 0'
                  WHEN 2 THEN 'format 2, 1M keys' WHEN 3 THEN 'format 3, 1M keys'
                  WHEN 4 THEN 'format 2, 30M keys' ELSE 'format 3, 30M keys' END AS query,
       min_ms, median_ms,
       round(min_ms / (SELECT min_ms FROM m WHERE query = 1), 2) AS x_hashint8_min,
       round(median_ms / (SELECT median_ms FROM m WHERE query = 1), 2) AS x_hashint8_median
FROM m ORDER BY query;

-- Both formats find every key they hold, and their false positives over
-- 1M keys never added are near 1%.
SELECT id, count(*) FILTER (WHERE g <= 1000000 AND tlbf_contains(f, g, '2024-01-01 00:00+00')) AS present_found,
       round(100.0 * count(*) FILTER (WHERE g > 1000000000 AND tlbf_contains(f, g, '2024-01-01 00:00+00'))
             / 1000000, 2) AS false_positive_pct
FROM bench_formats, (SELECT generate_series(1, 1000000) g UNION ALL
                     SELECT generate_series(1000000001, 1001000000)) keys
GROUP BY id ORDER BY id;
DROP TABLE bench_formats;
