-- tlbf_agg gives the filter that adding its rows one by one in time order
-- gives, whatever plan PostgreSQL picks and whatever order the rows come in.
SET TimeZone = 'UTC';

CREATE FUNCTION plan_has(query text, node text) RETURNS boolean
    LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        IF line LIKE '%' || node || '%' THEN
            RETURN true;
        END IF;
    END LOOP;
    RETURN false;
END $$;

-- 300,000 rows 15 ms apart (75 minutes; the span is an hour), in time order
-- in the heap, shuffled, and split over hash partitions.
CREATE TABLE timed AS
SELECT g, '2024-01-01 00:00+00'::timestamptz + g * interval '15 ms' AS at
FROM generate_series(1, 300000) g;
SELECT setseed(0.18);
CREATE TABLE timed_shuffled AS SELECT * FROM timed ORDER BY random();
CREATE TABLE timed_by_hash (LIKE timed) PARTITION BY HASH (g);
CREATE TABLE timed_hash_0 PARTITION OF timed_by_hash FOR VALUES WITH (MODULUS 3, REMAINDER 0);
CREATE TABLE timed_hash_1 PARTITION OF timed_by_hash FOR VALUES WITH (MODULUS 3, REMAINDER 1);
CREATE TABLE timed_hash_2 PARTITION OF timed_by_hash FOR VALUES WITH (MODULUS 3, REMAINDER 2);
INSERT INTO timed_by_hash SELECT * FROM timed ORDER BY at;
ANALYZE timed, timed_shuffled, timed_by_hash;

CREATE TABLE built (how text, f tlbf);
SET synchronize_seqscans = off;
SET max_parallel_workers_per_gather = 0;
INSERT INTO built SELECT 'ORDER BY at', tlbf_agg(g, at, '1 hour' ORDER BY at) FROM timed;
INSERT INTO built SELECT 'heap in time order', tlbf_agg(g, at, '1 hour') FROM timed;
-- Sorted in the call, but not by time: newest first.
INSERT INTO built SELECT 'ORDER BY g DESC', tlbf_agg(g, at, '1 hour' ORDER BY g DESC) FROM timed;
-- A scan that starts in the middle of the table and wraps around, as a
-- synchronized scan does: the newest third, then the rest (one aggregate
-- over both, not partial ones).
SELECT NOT plan_has('SELECT tlbf_agg(g, at, ''1 hour'') FROM (SELECT * FROM timed WHERE g > 200000
                     UNION ALL SELECT * FROM timed WHERE g <= 200000) s', 'Partial') AS one_aggregate;
INSERT INTO built
SELECT 'scan from the middle', tlbf_agg(g, at, '1 hour')
FROM (SELECT * FROM timed WHERE g > 200000 UNION ALL SELECT * FROM timed WHERE g <= 200000) s;
INSERT INTO built SELECT 'shuffled', tlbf_agg(g, at, '1 hour') FROM timed_shuffled;
SET work_mem = '64kB';
INSERT INTO built SELECT 'shuffled, work_mem 64kB', tlbf_agg(g, at, '1 hour') FROM timed_shuffled;
RESET work_mem;

-- Partial aggregates, one per partition, combined in one process.
SET enable_partitionwise_aggregate = on;
SELECT plan_has('SELECT tlbf_agg(g, at, ''1 hour'') FROM timed_by_hash', 'Partial Aggregate')
    AS partitionwise_partial;
INSERT INTO built SELECT 'partitionwise', tlbf_agg(g, at, '1 hour') FROM timed_by_hash;
RESET enable_partitionwise_aggregate;

-- Parallel plans, forced (INSERT ... SELECT never runs in parallel; CREATE
-- TABLE AS may).  Each worker's rows come in many short runs; shuffled, in
-- no order at all.
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT plan_has('SELECT tlbf_agg(g, at, ''1 hour'') FROM timed', 'Gather')
       AND plan_has('SELECT tlbf_agg(g, at, ''1 hour'') FROM timed', 'Partial Aggregate')
    AS parallel_partial;
CREATE TABLE built_parallel AS
SELECT 'parallel' AS how, tlbf_agg(g, at, '1 hour') AS f FROM timed;
CREATE TABLE built_parallel_shuffled AS
SELECT 'parallel, shuffled' AS how, tlbf_agg(g, at, '1 hour') AS f FROM timed_shuffled;
INSERT INTO built SELECT * FROM built_parallel UNION ALL SELECT * FROM built_parallel_shuffled;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;

-- Every way gives the same bytes as ORDER BY at, and no key added within
-- the span before the newest row (01:15) is missed.
SELECT b.how, b.f::bytea = r.f::bytea AS same_bytes,
       (SELECT count(*) FROM timed
         WHERE at >= '2024-01-01 00:15+00'
           AND NOT tlbf_contains(b.f, g, '2024-01-01 01:15+00')) AS live_missed
FROM built b, built r
WHERE r.how = 'ORDER BY at'
ORDER BY b.how;

-- Two calls that share one state (PostgreSQL computes identical aggregates
-- once, and runs the final function for each): the same filter twice.
SELECT a::bytea = b::bytea AS shared_state_same, a::bytea = r.f::bytea AS ordered
FROM (SELECT tlbf_agg(g, at, '1 hour') AS a, tlbf_agg(g, at, '1 hour') AS b FROM timed_shuffled) s,
     built r
WHERE r.how = 'ORDER BY at';

-- With little work_mem, the log of the rows before the wrap goes to a
-- temporary file: the same bytes again.  And the same false-positive rate
-- and size, counted rather than compared: over a million keys never added.
SET work_mem = '64kB';
INSERT INTO built
SELECT 'scan from the middle, work_mem 64kB', tlbf_agg(g, at, '1 hour')
FROM (SELECT * FROM timed WHERE g > 200000 UNION ALL SELECT * FROM timed WHERE g <= 200000) s;
RESET work_mem;
SELECT b.how, b.f::bytea = r.f::bytea AS same_bytes,
       (SELECT count(*) FROM timed
         WHERE at >= '2024-01-01 00:15+00'
           AND NOT tlbf_contains(b.f, g, '2024-01-01 01:15+00')) AS live_missed,
       round(pg_column_size(b.f)::numeric / pg_column_size(r.f), 2) AS size_ratio,
       round((SELECT count(*) FILTER (WHERE tlbf_contains(b.f, g, '2024-01-01 01:15+00'))
              FROM generate_series(1000001, 2000000) g)::numeric
             / (SELECT count(*) FILTER (WHERE tlbf_contains(r.f, g, '2024-01-01 01:15+00'))
                FROM generate_series(1000001, 2000000) g), 2) AS fpr_ratio
FROM built b, built r
WHERE r.how = 'ORDER BY at' AND b.how IN ('scan from the middle, work_mem 64kB', 'parallel')
ORDER BY b.how;

-- Text keys travel as such when short (up to 15 bytes) and as their hash
-- when longer: a wrapped scan and a parallel plan give the ordered filter
-- for them too.
CREATE VIEW timed_text AS
SELECT CASE WHEN g % 10 = 0 THEN 'a key longer than fifteen bytes ' || g ELSE 'k' || g END AS k, at
FROM timed;
CREATE TABLE built_text (how text, f tlbf);
INSERT INTO built_text SELECT 'ORDER BY at', tlbf_agg(k, at, '1 hour' ORDER BY at) FROM timed_text;
INSERT INTO built_text
SELECT 'scan from the middle', tlbf_agg(k, at, '1 hour')
FROM (SELECT * FROM timed_text WHERE at > '2024-01-01 00:50+00'
      UNION ALL SELECT * FROM timed_text WHERE at <= '2024-01-01 00:50+00') s;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
CREATE TABLE built_text_parallel AS
SELECT 'parallel' AS how, tlbf_agg(k, at, '1 hour') AS f FROM timed_text;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;
INSERT INTO built_text SELECT * FROM built_text_parallel;
SELECT b.how, b.f::bytea = r.f::bytea AS same_bytes,
       (SELECT count(*) FROM timed_text
         WHERE at >= '2024-01-01 00:15+00'
           AND NOT tlbf_contains(b.f, k, '2024-01-01 01:15+00')) AS live_missed
FROM built_text b, built_text r
WHERE r.how = 'ORDER BY at'
ORDER BY b.how;

-- Rows a little late (up to a second, less than one generation of the
-- filter: span / l) are added as they come, at the newest time so far, as
-- a filter does; no key is missed, and nothing is sorted.
SELECT setseed(0.7);
SELECT count(*) FILTER (WHERE NOT tlbf_contains(f, g, '2024-01-01 01:15+00')) AS live_missed,
       count(*) AS live_keys
FROM (SELECT tlbf_agg(g, at, '1 hour') AS f
      FROM (SELECT g, at - random() * interval '1 second' AS at FROM timed) jittered) s,
     timed
WHERE at >= '2024-01-01 00:15+00';

-- A hashed GROUP BY keeps every group's state at once: the groups share
-- work_mem for their logs and sorts (each at least 64kB), which spill past
-- their share.  A scan that wraps around, and shuffled rows, give each
-- group its ordered filter, as ORDER BY at in the call does.
SET enable_sort = off;
SELECT plan_has('SELECT g % 2, tlbf_agg(g, at, ''1 hour'') FROM timed_shuffled GROUP BY 1',
                'HashAggregate') AS hashed;
SELECT plan_has('SELECT g % 2, tlbf_agg(g, at, ''1 hour'') FROM (SELECT * FROM timed WHERE g > 200000
                  UNION ALL SELECT * FROM timed WHERE g <= 200000) s GROUP BY 1', 'HashAggregate')
       AND NOT plan_has('SELECT g % 2, tlbf_agg(g, at, ''1 hour'') FROM (SELECT * FROM timed WHERE g > 200000
                         UNION ALL SELECT * FROM timed WHERE g <= 200000) s GROUP BY 1', 'Partial')
    AS wrapped_hashed;
SELECT bool_and(w.f::bytea = o.f::bytea) AS wrapped_groups_same_bytes, count(*) AS groups
FROM (SELECT g % 2 AS parity, tlbf_agg(g, at, '1 hour') AS f
      FROM (SELECT * FROM timed WHERE g > 200000 UNION ALL SELECT * FROM timed WHERE g <= 200000) s
      GROUP BY 1) w
     JOIN (SELECT g % 2 AS parity, tlbf_agg(g, at, '1 hour' ORDER BY at) AS f FROM timed GROUP BY 1) o
     USING (parity);
SELECT count(*) FILTER (WHERE NOT tlbf_contains(f, t.g, '2024-01-01 01:15+00')) AS live_missed
FROM (SELECT g % 2 AS parity, tlbf_agg(g, at, '1 hour') AS f FROM timed_shuffled GROUP BY 1) s
     JOIN timed t ON t.g % 2 = s.parity
WHERE t.at >= '2024-01-01 00:15+00';
-- ten groups of 30,000 shuffled rows with work_mem = 64kB: each group far
-- beyond its share, its log and sort on disk
SET work_mem = '64kB';
SELECT plan_has('SELECT g % 10, tlbf_agg(g, at, ''1 hour'') FROM timed_shuffled GROUP BY 1',
                'HashAggregate') AS hashed;
SELECT bool_and(h.f::bytea = o.f::bytea) AS shuffled_groups_same_bytes, count(*) AS groups
FROM (SELECT g % 10 AS grp, tlbf_agg(g, at, '1 hour') AS f FROM timed_shuffled GROUP BY 1) h
     JOIN (SELECT g % 10 AS grp, tlbf_agg(g, at, '1 hour' ORDER BY at) AS f FROM timed GROUP BY 1) o
     USING (grp);
RESET work_mem;
RESET enable_sort;
SELECT bool_and(s.f::bytea = o.f::bytea) AS ordered_groups_same_bytes
FROM (SELECT g % 2 AS parity, tlbf_agg(g, at, '1 hour' ORDER BY at) AS f FROM timed_shuffled GROUP BY 1) s
     JOIN (SELECT g % 2 AS parity, tlbf_agg(g, at, '1 hour') AS f FROM timed GROUP BY 1) o USING (parity);

-- Memory stays within work_mem and the filter: a million shuffled rows over
-- 50 minutes, whose (time, hash) pairs alone take 24 MB, sorted with
-- work_mem = 1MB into a 10-minute filter.
-- What the aggregate holds is read mid-aggregate (as in aggregates.sql):
-- its context, the log's and the sort's.
CREATE FUNCTION agg_memory_bytes(per_row anyelement) RETURNS bigint
    LANGUAGE sql VOLATILE
    AS $$ SELECT (SELECT max(total_bytes) FROM pg_backend_memory_contexts WHERE name = 'ExprContext')
                 + (SELECT coalesce(sum(total_bytes), 0) FROM pg_backend_memory_contexts
                    WHERE name IN ('tlbf_agg rows', 'tlbf_agg log', 'TupleSort main', 'TupleSort sort', 'Caller tuples')) $$;
SET work_mem = '1MB';
SELECT filter_bytes < 2000000 AS filter_smaller_than_rows,
       peak_bytes <= 2 * filter_bytes + 4 * 1048576 AS within_work_mem_and_filter
FROM (SELECT pg_column_size(tlbf_agg(g, at, '10 minutes')) AS filter_bytes,
             max(agg_memory_bytes(g)) FILTER (WHERE g % 20000 = 0) AS peak_bytes
      FROM (SELECT g, '2024-01-01'::timestamptz + ((g::bigint * 7919) % 1000000) * interval '3 ms' AS at
            FROM generate_series(1, 1000000) g) shuffled) s;
RESET work_mem;
