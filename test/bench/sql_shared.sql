-- SQL benchmark: tlbf_shared_add over 5M keys against tlbf_contains on a
-- value of the same size, in one run (library preloaded).  The filter
-- holds 5M keys added over 42 minutes; the adds continue the same stream.
\set QUIET on
\pset footer off
CREATE EXTENSION IF NOT EXISTS tlbf;
\ir median_ms.sql

SELECT tlbf_shared_create('speed', '1 hour', 0.01, 5000000);
SELECT count(*) FILTER (WHERE tlbf_shared_add('speed', g, '2024-01-01 00:00+00'::timestamptz + g * interval '500 us'))
FROM generate_series(1, 5000000) g;
CREATE TABLE same_size AS SELECT tlbf_shared_get('speed') AS f;
SELECT pg_column_size(f) AS filter_bytes FROM same_size;

WITH m AS (
    SELECT * FROM pg_temp.median_ms(ARRAY[
        $q$SELECT count(*) FILTER (WHERE tlbf_contains((SELECT f FROM same_size), g, '2024-01-01 00:41:40+00'))
           FROM generate_series(5000001, 10000000) g$q$,
        $q$SELECT count(*) FILTER (WHERE tlbf_shared_add('speed', g, '2024-01-01 00:00+00'::timestamptz + g * interval '500 us'))
           FROM generate_series(5000001, 10000000) g$q$
    ], 1)
)
SELECT 'tlbf_contains(f, g, at), 5M' AS query, median_ms, 1.0 AS ratio FROM m WHERE query = 1
UNION ALL
SELECT 'tlbf_shared_add(name, g, at), 5M', median_ms,
       round(median_ms / (SELECT median_ms FROM m WHERE query = 1), 2) FROM m WHERE query = 2;
