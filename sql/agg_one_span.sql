-- tlbf_agg over one span ("the keys of the last hour") meets its error
-- rate: the filter is sized for its keys at the end, not from a guess
-- (whose slices, sized while format 2 learnt the rate, once left 10k keys
-- at 1.03x and 1M at 1.8x the target; make bench measures 10M).  No key is missed, and every
-- plan builds the same filter.
SET TimeZone = 'UTC';

CREATE TABLE hour_10k AS
SELECT g, '2024-01-01 00:00+00'::timestamptz + g * interval '360 ms' AS at
FROM generate_series(1, 10000) g;
CREATE TABLE hour_1m AS
SELECT g, '2024-01-01 00:00+00'::timestamptz + g * interval '3.6 ms' AS at
FROM generate_series(1, 1000000) g;
ANALYZE hour_10k, hour_1m;

CREATE TABLE one_span (keys text, error_rate float8, how text, f tlbf);
SET max_parallel_workers_per_gather = 0;
INSERT INTO one_span SELECT '10k', 0.01, 'serial', tlbf_agg(g, at, '1 hour') FROM hour_10k;
INSERT INTO one_span SELECT '10k', 0.001, 'serial', tlbf_agg(g, at, '1 hour', 0.001) FROM hour_10k;
INSERT INTO one_span SELECT '1M', 0.01, 'serial', tlbf_agg(g, at, '1 hour') FROM hour_1m;
INSERT INTO one_span SELECT '1M', 0.01, 'ORDER BY at', tlbf_agg(g, at, '1 hour' ORDER BY at) FROM hour_1m;
-- a parallel plan (INSERT ... SELECT would not run one): the same bytes
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT tlbf_agg(g, at, '1 hour') FROM hour_1m;
SELECT (SELECT tlbf_agg(g, at, '1 hour') FROM hour_1m)::bytea
       = (SELECT f FROM one_span WHERE keys = '1M' AND how = 'serial')::bytea AS parallel_same_bytes;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- sized for the keys (bits a live key at the end of the span), and the
-- same bytes whatever the plan
SELECT keys, error_rate,
       round((tlbf_info(f, '2024-01-01 01:00+00')->>'bits_per_live_key')::numeric) AS bits_per_key,
       count(DISTINCT f::bytea) AS filters
FROM one_span GROUP BY 1, 2, 3 ORDER BY 1, 2;

-- at the end of the span: 400,000 keys never added, every key added
SELECT b.keys, b.error_rate,
       fp.n::float8 / 400000 <= 1.1 * b.error_rate AS within_1_1x,
       missed.n AS missed
FROM (SELECT DISTINCT ON (keys, error_rate) * FROM one_span ORDER BY keys, error_rate) b,
     LATERAL (SELECT count(*) AS n FROM generate_series(100000001, 100400000) a
              WHERE tlbf_contains(b.f, a, '2024-01-01 01:00+00')) fp,
     LATERAL (SELECT count(*) AS n FROM (SELECT g FROM hour_10k WHERE b.keys = '10k'
                                         UNION ALL SELECT g FROM hour_1m WHERE b.keys = '1M') k
              WHERE NOT tlbf_contains(b.f, k.g, '2024-01-01 01:00+00')) missed
ORDER BY 1, 2;
