-- Filters built by aggregates, their union, and parallel plans.
SET TimeZone = 'UTC';

-- Two hours of visits to three sites, one every 100 ms.
CREATE TABLE visits AS
SELECT g AS id, 'site-' || (g % 3) AS site, (g * 7919) % 5000 AS user_id,
       '2024-01-01 00:00+00'::timestamptz + g * interval '100 ms' AS at
FROM generate_series(1, 72000) g;
ANALYZE visits;

-- One filter per site over the last hour; every user seen in it is found.
CREATE TABLE per_site AS
SELECT site, tlbf_agg(user_id, at, '1 hour') AS f
FROM visits WHERE at > '2024-01-01 01:00+00' GROUP BY site;
SELECT p.site, count(*) AS visits,
       count(*) FILTER (WHERE NOT tlbf_contains(p.f, v.user_id, '2024-01-01 02:00+00')) AS missed
FROM per_site p JOIN visits v USING (site)
WHERE v.at > '2024-01-01 01:00+00'
GROUP BY p.site ORDER BY p.site;

-- With ORDER BY at, or in any other order, the same bytes: the filter is
-- sized for the keys at the end (agg_order.sql: whatever the plan).
SELECT (SELECT tlbf_agg(user_id, at, '1 hour' ORDER BY at) FROM visits WHERE site = 'site-1')::bytea
       = (SELECT tlbf_agg(user_id, at, '1 hour' ORDER BY user_id DESC, at) FROM visits WHERE site = 'site-1')::bytea
         AS same_bytes;

-- In any order no key is lost (agg_order.sql: the filter is the same).
SELECT setseed(0.42);
CREATE TABLE shuffled AS SELECT * FROM visits ORDER BY random();
SELECT count(*) FILTER (WHERE NOT tlbf_contains(f, v.user_id, '2024-01-01 02:00+00')) AS missed
FROM (SELECT tlbf_agg(user_id, at, '1 hour') AS f FROM shuffled) s, visits v
WHERE v.at > '2024-01-01 01:00+00';

-- As a window function: each row's filter holds that row's key.
SELECT count(*) FILTER (WHERE NOT tlbf_contains(f, user_id, at)) AS missed, count(*) AS windows
FROM (SELECT user_id, at,
             tlbf_agg(user_id, at, '10 minutes') OVER (ORDER BY at ROWS BETWEEN 50 PRECEDING AND CURRENT ROW) AS f
      FROM visits WHERE id <= 2000) w;

-- An aggregate waits for its last row, holding their log (in work_mem,
-- then in a temporary file), and builds its filter at the end, sized for
-- the rows.  Its memory is read mid-aggregate by a function in the
-- aggregated expression (the row argument keeps it from being folded): the
-- Agg node's ExprContext, which holds the state, and the log's own.  A
-- million rows in one span: the log passes work_mem (1MB here) and spills,
-- the memory stays within it.  Then a burst of 300,000 keys in 0.3 s
-- followed by a stream 1000 times slower: the filter, built in time order,
-- has shed the burst by its end.
CREATE FUNCTION log_memory_bytes(per_row anyelement) RETURNS bigint
    LANGUAGE sql VOLATILE
    AS $$ SELECT (SELECT max(total_bytes) FROM pg_backend_memory_contexts WHERE name = 'ExprContext')
                 + (SELECT coalesce(sum(total_bytes), 0) FROM pg_backend_memory_contexts
                    WHERE name IN ('tlbf_agg rows', 'tlbf_agg log')) $$;
SET work_mem = '1MB';
SELECT filter_bytes > 2000000 AS large_filter, peak_bytes <= 1048576 + 262144 AS within_work_mem
FROM (SELECT pg_column_size(tlbf_agg(g, '2024-01-01'::timestamptz + g * interval '1 ms', '1 hour')) AS filter_bytes,
             max(log_memory_bytes(g)) FILTER (WHERE g % 5000 = 0) AS peak_bytes
      FROM generate_series(1, 1000000) g) s;
RESET work_mem;
SELECT filter_bytes < 30000 AS filter_shed_the_burst
FROM (SELECT pg_column_size(tlbf_agg(g, at, '1 minute')) AS filter_bytes
      FROM (SELECT g, CASE WHEN g <= 300000 THEN '2024-01-01'::timestamptz + g * interval '1 us'
                           ELSE '2024-01-01'::timestamptz + (g - 300000) * interval '10 ms' END AS at
            FROM generate_series(1, 350000) g) rows) s;

-- NULLs: rows with a NULL item or time are skipped; no rows give NULL.
SELECT tlbf_info(tlbf_agg(u, t, '1 hour'))->'inserted' AS inserted
FROM (VALUES (1, '2024-01-01 00:00+00'::timestamptz), (NULL, '2024-01-01 00:00+00'),
             (2, NULL), (3, '2024-01-01 00:01+00')) AS v(u, t);
SELECT tlbf_agg(user_id, at, '1 hour') IS NULL AS no_rows FROM visits WHERE false;
SELECT tlbf_agg(NULL::int, at, '1 hour') IS NULL AS only_nulls FROM visits WHERE id < 5;
SELECT outcome($$SELECT tlbf_agg(user_id, at, NULL) FROM visits$$);
SELECT outcome($$SELECT tlbf_agg(user_id, at, '1 hour', 0.9) FROM visits$$);
SELECT outcome($$SELECT tlbf_agg(user_id, 'infinity', '1 hour') FROM visits$$);

-- The error rate argument.
SELECT (tlbf_info(tlbf_agg(user_id, at, '1 hour', 0.001))->>'k')::int AS k FROM visits WHERE id < 100;

-- Union: every key of either filter, at any time.
SELECT count(*) FILTER (WHERE NOT tlbf_contains(a.f || b.f, v.user_id, '2024-01-01 02:00+00')) AS missed,
       count(*) FILTER (WHERE NOT tlbf_contains(tlbf_union(b.f, a.f), v.user_id, '2024-01-01 02:00+00')) AS missed_other_order
FROM per_site a, per_site b, visits v
WHERE a.site = 'site-0' AND b.site = 'site-2' AND v.site IN ('site-0', 'site-2')
  AND v.at > '2024-01-01 01:00+00';
SELECT tlbf_info(f || f)->'bands' = tlbf_info(f)->'bands' AS self_union_same_bits
FROM per_site WHERE site = 'site-0';
SELECT tlbf_union(f, NULL) IS NULL AS null_union FROM per_site WHERE site = 'site-0';
-- (unions of format 2 below, made by tlbf_create_format2; of format 3:
-- pg_regress format3)
SELECT tlbf_create_format2('1 hour') || tlbf_create_format2('2 hours');
SELECT outcome($$SELECT tlbf_union(tlbf_create_format2('1 hour'), tlbf_create_format2('1 day'))$$);
SELECT tlbf_info(tlbf_create_format2('1 hour', 0.01) || tlbf_create_format2('1 hour', 0.001))->'k' AS union_k;

-- Union of per-day filters, and across groups with tlbf_union_agg.
SELECT count(*) FILTER (WHERE NOT tlbf_contains(u.f, v.user_id, '2024-01-01 02:00+00')) AS missed
FROM (SELECT tlbf_union_agg(f) AS f FROM per_site) u, visits v
WHERE v.at > '2024-01-01 01:00+00';
SELECT tlbf_union_agg(f) IS NULL AS empty FROM per_site WHERE false;
SELECT (tlbf_info(tlbf_union_agg(f))->>'inserted')::bigint =
       (SELECT sum((tlbf_info(f)->>'inserted')::bigint) FROM per_site) AS counts_every_insertion
FROM (SELECT f FROM per_site UNION ALL SELECT NULL) s;

-- A retired filter (no slices left, a newer insertion time) with an older one:
-- the union keeps the older one's keys and is a valid value (fuzzing found
-- it was not).
SELECT tlbf_contains(u, 2, '2024-01-01 11:30+00') AS older_key_found,
       (tlbf_info(u)->>'slice_count')::int > 0 AS has_slices
FROM (SELECT tlbf_union(tlbf_retire(tlbf_add(tlbf_create_format2('1 hour'), 1, '2024-01-01 12:00+00'),
                                    '2024-01-01 14:00+00'),
                        tlbf_add(tlbf_create_format2('1 hour'), 2, '2024-01-01 11:00+00')) AS u) s;

-- A union of more filters than the format has slices for: the oldest slices
-- go, counted and warned about, as under the size cap; the newest filter's
-- keys stay.
SELECT (tlbf_info(u)->>'slice_count')::int AS slice_count,
       (tlbf_info(u)->>'truncated')::int > 0 AS truncated,
       tlbf_contains(u, 7000, '2024-01-01 00:01+00') AS newest_key_found
FROM (SELECT tlbf_union_agg(tlbf_add(tlbf_create_format2('10 minutes'), g, '2024-01-01'::timestamptz + g * interval '1 ms')) AS u
      FROM generate_series(1, 7000) g) s;

-- Parallel plans: partial aggregates under Gather, the same answers.
CREATE TABLE serial_answers AS
SELECT tlbf_agg(user_id, at, '1 hour', 1e-9) AS f FROM visits WHERE at > '2024-01-01 01:00+00';
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = on;
EXPLAIN (COSTS OFF)
SELECT tlbf_agg(user_id, at, '1 hour', 1e-9) FROM visits WHERE at > '2024-01-01 01:00+00';
CREATE TABLE parallel_answers AS
SELECT tlbf_agg(user_id, at, '1 hour', 1e-9) AS f FROM visits WHERE at > '2024-01-01 01:00+00';
SELECT count(*) AS keys,
       count(*) FILTER (WHERE tlbf_contains(s.f, g, '2024-01-01 02:00+00')
                          <> tlbf_contains(p.f, g, '2024-01-01 02:00+00')) AS different_answers,
       count(*) FILTER (WHERE g < 5000 AND NOT tlbf_contains(p.f, g, '2024-01-01 02:00+00')) AS missed
FROM serial_answers s, parallel_answers p, generate_series(0, 6999) g;
-- Workers that see no rows: every NULL combination of partial states.
-- (The planner expects 360 rows here; one or none match.)
EXPLAIN (COSTS OFF) SELECT tlbf_agg(user_id, at, '1 hour') FROM visits WHERE id % 72000 = 5;
SELECT tlbf_contains(tlbf_agg(user_id, at, '1 hour'), (5 * 7919) % 5000, '2024-01-01 00:00+00') AS one_row
FROM visits WHERE id % 72000 = 5;
SELECT tlbf_agg(user_id, at, '1 hour') IS NULL AS no_row FROM visits WHERE id % 72000 = -1;
SELECT count(*) FILTER (WHERE NOT tlbf_contains(u.f, v.user_id, '2024-01-01 02:00+00')) AS union_agg_missed
FROM (SELECT tlbf_union_agg(f) AS f FROM (SELECT tlbf_agg(user_id, at, '1 hour') AS f FROM visits
                                          WHERE at > '2024-01-01 01:00+00' GROUP BY site) g) u,
     visits v
WHERE v.at > '2024-01-01 01:00+00';
RESET ALL;
SET TimeZone = 'UTC';

-- Partitionwise aggregation: a partial aggregate per partition, serialized
-- and combined in the same process (no Gather).  Same answers as the serial
-- plan over the whole table.
CREATE TABLE visits_by_site (LIKE visits) PARTITION BY LIST (site);
CREATE TABLE visits_site_0 PARTITION OF visits_by_site FOR VALUES IN ('site-0');
CREATE TABLE visits_site_1 PARTITION OF visits_by_site FOR VALUES IN ('site-1');
CREATE TABLE visits_site_2 PARTITION OF visits_by_site FOR VALUES IN ('site-2');
INSERT INTO visits_by_site SELECT * FROM visits;
ANALYZE visits_by_site;
SET enable_partitionwise_aggregate = on;
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF)
SELECT tlbf_agg(user_id, at, '1 hour', 1e-9) FROM visits_by_site WHERE at > '2024-01-01 01:00+00';
SELECT count(*) FILTER (WHERE tlbf_contains(s.f, g, '2024-01-01 02:00+00')
                          <> tlbf_contains(p.f, g, '2024-01-01 02:00+00')) AS different_answers,
       count(*) FILTER (WHERE g < 5000 AND NOT tlbf_contains(p.f, g, '2024-01-01 02:00+00')) AS missed
FROM serial_answers s,
     (SELECT tlbf_agg(user_id, at, '1 hour', 1e-9) AS f FROM visits_by_site
      WHERE at > '2024-01-01 01:00+00') p,
     generate_series(0, 6999) g;
-- Grouped, so that each partial aggregate sends several states, and Merge
-- Append holds one from each partition while it reads the others.
SET cpu_tuple_cost = 1;
EXPLAIN (COSTS OFF)
SELECT user_id % 2 AS parity, tlbf_agg(user_id, at, '1 hour', 1e-9) AS f
FROM visits_by_site GROUP BY 1;
SELECT count(*) FILTER (WHERE tlbf_contains(s.f, g, '2024-01-01 02:00+00')
                          <> tlbf_contains(p.f, g, '2024-01-01 02:00+00')) AS different_answers,
       count(*) FILTER (WHERE g < 5000 AND g % 2 = s.parity
                          AND NOT tlbf_contains(p.f, g, '2024-01-01 02:00+00')) AS missed
FROM (SELECT user_id % 2 AS parity, tlbf_agg(user_id, at, '1 hour', 1e-9) AS f
      FROM visits GROUP BY 1) s
     JOIN (SELECT user_id % 2 AS parity, tlbf_agg(user_id, at, '1 hour', 1e-9) AS f
           FROM visits_by_site GROUP BY 1) p USING (parity),
     generate_series(0, 6999) g;
RESET ALL;
