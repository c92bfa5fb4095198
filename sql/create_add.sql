-- Creating filters and adding keys.
-- (Filters of format 2, made by tlbf_create_format2, as tlbf_create made
-- them until 1.5; tlbf_create's format 3: pg_regress format3.)
SET TimeZone = 'UTC';

-- Parameters: (k, l) from the error rate, or given.
SELECT info->'error_rate' AS error_rate, info->'k' AS k, info->'l' AS l,
       info->'span' AS span_seconds, info->'capacity' AS capacity,
       info->'slice_count' AS slices, info->'bytes' AS bytes
FROM (VALUES (tlbf_info(tlbf_create_format2('1 hour'))),
             (tlbf_info(tlbf_create_format2('5 minutes', 0.1))),
             (tlbf_info(tlbf_create_format2('1 day', 0.001, 1000000))),
             (tlbf_info(tlbf_create_format2('90 seconds', 0.02))),
             (tlbf_info(tlbf_create('1 hour', 0.01, 1000, 4, 3)))) AS t(info);

-- tlbf_add returns a new value; the stored one does not change.
CREATE TABLE seen (id int PRIMARY KEY, f tlbf);
INSERT INTO seen VALUES (1, tlbf_create_format2('1 hour'));
SELECT tlbf_contains(tlbf_add(f, 'alice', '2024-01-01 12:00+00'), 'alice', '2024-01-01 12:00+00') AS added,
       tlbf_contains(f, 'alice', '2024-01-01 12:00+00') AS original_unchanged
FROM seen;
UPDATE seen SET f = tlbf_add(f, 'alice', '2024-01-01 12:00+00');
UPDATE seen SET f = tlbf_add(f, 'bob', '2024-01-01 12:10+00');
SELECT tlbf_contains(f, 'alice', '2024-01-01 12:30+00') AS alice,
       tlbf_contains(f, 'bob', '2024-01-01 12:30+00') AS bob,
       tlbf_contains(f, 'carol', '2024-01-01 12:30+00') AS carol,
       tlbf_info(f)->'inserted' AS inserted
FROM seen;

-- An untyped literal is text; the default time is now().
SELECT tlbf_add(tlbf_create_format2('1 hour'), 'abc') @> 'abc'::text AS literal_is_text;
SELECT tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), 42), 42) AS default_times;

-- NULLs: a NULL filter stays NULL, a NULL item or time changes nothing,
-- NULL parameters give NULL, NULL k and l mean "choose".
SELECT tlbf_add(NULL::tlbf, 1) IS NULL AS null_filter;
SELECT tlbf_add(f, NULL::int)::text = f::text AS null_item_ignored,
       tlbf_add(f, 1, NULL)::text = f::text AS null_time_ignored
FROM seen;
SELECT tlbf_create(NULL) IS NULL AS null_span,
       tlbf_create('1 hour', NULL) IS NULL AS null_rate,
       tlbf_create('1 hour', 0.01, NULL) IS NULL AS null_capacity,
       tlbf_create_format2(NULL) IS NULL AS null_span_format2,
       tlbf_info(tlbf_create('1 hour', 0.01, 1000, NULL, NULL))->'k' AS k_chosen;

-- Times older than the newest one count as the newest (never lost).
SELECT tlbf_info(tlbf_add(tlbf_add(tlbf_create_format2('1 hour'), 1, '2024-01-01 12:00+00'),
                          2, '2024-01-01 11:00+00'))->>'newest' AS newest;
SELECT tlbf_contains(tlbf_add(tlbf_add(tlbf_create_format2('1 hour'), 1, '2024-01-01 12:00+00'),
                              2, '2024-01-01 11:00+00'),
                     2, '2024-01-01 12:59+00') AS older_time_still_found;

-- A large first generation (slices of over 1 MB) is a valid value.
SELECT tlbf_contains(tlbf_add(tlbf_create_format2('1 hour', 0.01, 16000000), 1, '2024-01-01'),
                     1, '2024-01-01') AS large_filter_found;

-- The functions' labels are listed in labels.sql.
