-- SQL benchmark: tlbf_contains over 5M probes of a 1M-item filter read
-- from a table (TOASTed), against a trivial per-row C function, in one run.
-- Run by scripts/bench.sh; $TLBF_FILTER_HEX names a file holding a 1M-key
-- filter in hex (build/bench/make_filter).
\set QUIET on
\set hex `cat "$TLBF_FILTER_HEX"`
\pset footer off
CREATE EXTENSION IF NOT EXISTS tlbf;
SET client_min_messages = warning;
DROP TABLE IF EXISTS bench_filters;
CREATE TABLE bench_filters (id int PRIMARY KEY, f tlbf);
INSERT INTO bench_filters
SELECT 1, translate(encode(decode(:'hex', 'hex'), 'base64'), E'\n', '')::tlbf;

SELECT pg_column_size(f) AS stored_bytes,
       (tlbf_info(f, '2024-01-01 00:00+00')->>'live_keys_estimate')::float8::bigint AS live_keys,
       (SELECT reltoastrelid <> 0 FROM pg_class WHERE relname = 'bench_filters') AS has_toast_table,
       pg_relation_size((SELECT reltoastrelid FROM pg_class WHERE relname = 'bench_filters')) > 0 AS stored_out_of_line
FROM bench_filters;

\ir median_ms.sql

SET max_parallel_workers_per_gather = 0;
WITH m AS (
    SELECT * FROM pg_temp.median_ms(ARRAY[
        $q$SELECT count(*) FROM generate_series(1, 5000000) g WHERE hashint8(g) = 0$q$,
        $q$SELECT count(*) FROM generate_series(1, 5000000) g
           WHERE tlbf_contains((SELECT f FROM bench_filters WHERE id = 1), g, '2024-01-01 00:00+00')$q$
    ], 5)
)
SELECT 'hashint8(g) = 0' AS query, min_ms, median_ms, 1.0 AS ratio FROM m WHERE query = 1
UNION ALL
SELECT 'tlbf_contains(f, g, at)', min_ms, median_ms,
       round(median_ms / (SELECT median_ms FROM m WHERE query = 1), 2) FROM m WHERE query = 2;

-- Every key of the filter is found, none missed (the answer is exact here).
SELECT count(*) AS present_found FROM generate_series(1, 1000000) g
WHERE tlbf_contains((SELECT f FROM bench_filters WHERE id = 1), g, '2024-01-01 00:00+00');
