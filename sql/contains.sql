-- Membership: the span, its exact boundary, "within", the operator.
-- (Filters of format 2, made by tlbf_create_format2, as tlbf_create made
-- them until 1.5; tlbf_create's format 3: pg_regress format3.)
SET TimeZone = 'UTC';

CREATE TABLE one_key AS
SELECT tlbf_add(tlbf_create_format2('1 hour'), 'k', '2024-01-01 12:00+00') AS f;

-- Found up to exactly added + span, absent a microsecond later.
SELECT at, tlbf_contains(f, 'k', at::timestamptz) AS found
FROM one_key, (VALUES ('2024-01-01 12:00+00'),
                      ('2024-01-01 12:59:59+00'),
                      ('2024-01-01 13:00:00+00'),
                      ('2024-01-01 13:00:00.000001+00'),
                      ('2024-01-02 12:00+00')) AS t(at)
ORDER BY at;

-- "within": only slices written within the interval count.
SELECT within, tlbf_contains(f, 'k', '2024-01-01 12:30+00', within::interval) AS found
FROM one_key, (VALUES ('10 minutes'), ('29 minutes 59 seconds'), ('30 minutes'), ('1 hour')) AS t(within)
ORDER BY within::interval;
SELECT tlbf_contains(f, 'k', '2024-01-01 12:30+00', '2 hours') FROM one_key;

-- The operator asks at now().
SELECT tlbf_add(tlbf_create_format2('1 hour'), 7, now()) @> 7 AS now_present,
       tlbf_add(tlbf_create_format2('1 hour'), 7, now() - interval '2 hours') @> 7 AS two_hours_ago;

-- NULLs give NULL.
SELECT tlbf_contains(f, NULL::text, now()) IS NULL AS null_item,
       tlbf_contains(f, 'k', NULL) IS NULL AS null_time,
       tlbf_contains(NULL, 'k', now()) IS NULL AS null_filter,
       (f @> NULL::text) IS NULL AS null_operator
FROM one_key;

-- A large filter stored in a table is TOASTed; queries read it once.
CREATE TABLE big (f tlbf);
DO $$
DECLARE
    f tlbf := tlbf_create_format2('1 day', 0.01, 50000);
BEGIN
    FOR i IN 1..20000 LOOP
        f := tlbf_add(f, i, '2024-01-01 00:00+00'::timestamptz + i * interval '1 second');
    END LOOP;
    INSERT INTO big VALUES (f);
END $$;
SELECT pg_column_size(f) > 2000 AS toasted FROM big;
SELECT count(*) FILTER (WHERE tlbf_contains((SELECT f FROM big), g, '2024-01-01 06:00+00')) AS present_found,
       count(*) AS present
FROM generate_series(1, 20000) g;
SELECT count(*) FILTER (WHERE tlbf_contains((SELECT f FROM big), g, '2024-01-01 06:00+00')) < 300 AS few_false_positives
FROM generate_series(1000001, 1020000) g;

-- Times are kept per slice, not per key: a key added at 12:00 is found by
-- a question about 11:30 too (docs/reference.md says so).
SELECT tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), 7, '2024-01-01 12:00+00'), 7,
                     '2024-01-01 11:30+00') AS found_before_it_was_added;
