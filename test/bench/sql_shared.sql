-- SQL benchmark: tlbf_shared_add over 5M keys against tlbf_contains on a
-- value of the same size, in one run (library preloaded).  The filter is
-- first fed two spans of a stream of 1,000 keys a second, so that it has
-- its steady size; the copy is taken then, and the adds continue the same
-- stream for 5M more keys (the filter keeps its size).  Both timed queries
-- read the same keys and times from one table, so that they differ only in
-- the function called.
\set QUIET on
\pset footer off
CREATE EXTENSION IF NOT EXISTS tlbf;
\ir median_ms.sql

SELECT tlbf_shared_create('speed', '1 hour', 0.01, 3600000);
SELECT count(*) FILTER (WHERE tlbf_shared_add('speed', g, '2024-01-01 00:00+00'::timestamptz + g * interval '1 ms'))
FROM generate_series(1, 7200000) g;
CREATE TABLE same_size AS SELECT tlbf_shared_get('speed') AS f;

CREATE TABLE next_keys AS
SELECT g, '2024-01-01 00:00+00'::timestamptz + g * interval '1 ms' AS at
FROM generate_series(7200001, 12200000) g;
VACUUM ANALYZE next_keys;

SET max_parallel_workers_per_gather = 0;
WITH m AS (
    SELECT * FROM pg_temp.median_ms(ARRAY[
        $q$SELECT count(*) FILTER (WHERE tlbf_contains((SELECT f FROM same_size), g, '2024-01-01 02:00+00'))
           FROM next_keys$q$,
        $q$SELECT count(*) FILTER (WHERE tlbf_shared_add('speed', g, at)) FROM next_keys$q$
    ], 1)
)
SELECT 'tlbf_contains(f, g, at), 5M' AS query, median_ms, 1.0 AS ratio FROM m WHERE query = 1
UNION ALL
SELECT 'tlbf_shared_add(name, g, at), 5M', median_ms,
       round(median_ms / (SELECT median_ms FROM m WHERE query = 1), 2) FROM m WHERE query = 2;

SELECT pg_column_size(f) AS copy_bytes,
       (tlbf_info(f, '2024-01-01 02:00+00')->>'slice_count')::int AS copy_slices,
       (SELECT (info->>'bytes')::bigint FROM tlbf_shared_list() WHERE name = 'speed') AS shared_bytes_after,
       (SELECT (info->>'slice_count')::int FROM tlbf_shared_list() WHERE name = 'speed') AS shared_slices_after
FROM same_size;
