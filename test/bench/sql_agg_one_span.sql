-- tlbf_agg over exactly one span ("the keys of the last hour"), 10k, 1M and
-- 10M keys spread evenly over an hour: the false-positive rate at the end
-- of the span over 1M keys never added, against the 1% asked for, and keys
-- missed (sql/agg_one_span.sql checks 10k and 1M in make test; this adds
-- 10M, which takes about a minute).
\set QUIET on
\pset footer off
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS tlbf;

DROP TABLE IF EXISTS one_span_rows, one_span_built;
CREATE TABLE one_span_rows (keys bigint, g bigint, at timestamptz);
INSERT INTO one_span_rows
SELECT n, g, '2024-01-01 00:00+00'::timestamptz + g * (interval '1 hour' / n)
FROM (VALUES (10000), (1000000), (10000000)) v(n), generate_series(1, n) g;
VACUUM ANALYZE one_span_rows;

-- one aggregate per size, each waiting for its last row (a hashed GROUP BY
-- would share work_mem between them)
SET enable_hashagg = off;
CREATE TABLE one_span_built AS
SELECT keys, tlbf_agg(g, at, '1 hour') AS f FROM one_span_rows GROUP BY keys;

SELECT b.keys, (tlbf_info(b.f)->>'slice_count')::int AS slices,
       pg_size_pretty(pg_column_size(b.f)::bigint) AS size,
       round(fp.n::numeric / 10000, 3) AS "fpr %",
       round(fp.n::numeric / 1000000 / 0.01, 2) AS "x target",
       missed.n AS missed
FROM one_span_built b,
     LATERAL (SELECT count(*) AS n FROM generate_series(100000000001, 100001000000) a
              WHERE tlbf_contains(b.f, a, '2024-01-01 01:00+00')) fp,
     LATERAL (SELECT count(*) AS n FROM one_span_rows r
              WHERE r.keys = b.keys AND NOT tlbf_contains(b.f, r.g, '2024-01-01 01:00+00')) missed
ORDER BY b.keys;

DROP TABLE one_span_rows, one_span_built;
