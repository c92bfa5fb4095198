-- Bad parameters and bad values: a clear ERROR with the right SQLSTATE.
-- (Filters of format 2, made by tlbf_create_format2, as tlbf_create made
-- them until 1.5; tlbf_create's format 3: pg_regress format3.)
SET TimeZone = 'UTC';

SELECT q AS query, outcome(q) FROM (VALUES
    ($$SELECT tlbf_create_format2('1 hour', 0)$$),
    ($$SELECT tlbf_create_format2('1 hour', 0.6)$$),
    ($$SELECT tlbf_create_format2('1 hour', -0.01)$$),
    ($$SELECT tlbf_create_format2('1 hour', 'NaN')$$),
    ($$SELECT tlbf_create_format2('1 hour', 'Infinity')$$),
    ($$SELECT tlbf_create_format2('1 hour', 1e-12)$$),
    ($$SELECT tlbf_create_format2('0')$$),
    ($$SELECT tlbf_create_format2('-1 hour')$$),
    ($$SELECT tlbf_create_format2('1 month')$$),
    ($$SELECT tlbf_create_format2('1 year 1 day')$$),
    ($$SELECT tlbf_create_format2('200 years'::interval - '1 month'::interval + '1 month')$$),
    ($$SELECT tlbf_create_format2('1 hour', 0.01, 0)$$),
    ($$SELECT tlbf_create_format2('1 hour', 0.01, -5)$$),
    ($$SELECT tlbf_create_format2('1 hour', 0.01, 9223372036854775807)$$),
    ($$SELECT tlbf_create('1 hour', 0.01, 1000, 10)$$),
    ($$SELECT tlbf_create('1 hour', 0.01, 1000, NULL, 10)$$),
    ($$SELECT tlbf_create('1 hour', 0.01, 1000, 0, 10)$$),
    ($$SELECT tlbf_create('1 hour', 0.01, 1000, 41, 10)$$),
    ($$SELECT tlbf_create('1 hour', 0.01, 1000, 10, 2000)$$),
    ($$SELECT tlbf_add(tlbf_create_format2('1 hour'), 1, 'infinity')$$),
    ($$SELECT tlbf_add(tlbf_create_format2('1 hour'), 1, '-infinity')$$),
    ($$SELECT tlbf_contains(tlbf_create_format2('1 hour'), 1, 'infinity')$$),
    ($$SELECT tlbf_contains(tlbf_create_format2('1 hour'), 1, now(), '2 hours')$$),
    ($$SELECT tlbf_contains(tlbf_create_format2('1 hour'), 1, now(), '1 month')$$),
    ($$SELECT tlbf_contains(tlbf_create_format2('1 hour'), 1, now(), '-1 second')$$),
    ($$SELECT tlbf_retire(tlbf_create_format2('1 hour'), 'infinity')$$),
    ($$SELECT tlbf_info(tlbf_create_format2('1 hour'), '-infinity')$$),
    ($$SELECT 'bm90IGEgZmlsdGVy'::tlbf$$),
    ($$SELECT ''::tlbf$$),
    ($$SELECT '====='::tlbf$$)
) AS t(q);

-- The message and hint, in full, for one of them.
SELECT tlbf_create_format2('1 hour', 0.6);
SELECT tlbf_create_format2('30 days 1 month');

-- The size cap: a filter that could not even start is refused ...
SET tlbf.max_filter_bytes = '8kB';
SELECT tlbf_create_format2('1 hour', 0.01, 10000000);
-- ... and one that would outgrow it fails (54000): the setting is a limit,
-- never a size filters are cut to.
DO $$
DECLARE
    f tlbf := tlbf_create_format2('1 hour', 0.01, 100);
    added int := 0;
BEGIN
    FOR i IN 1..20000 LOOP
        f := tlbf_add(f, i, '2024-01-01 00:00+00'::timestamptz + i * interval '10 ms');
        added := i;
    END LOOP;
EXCEPTION WHEN program_limit_exceeded THEN
    RAISE NOTICE 'refused after % keys, at <= 8192 bytes: %, none dropped: %',
        added, (tlbf_info(f)->>'bytes')::int <= 8192, (tlbf_info(f)->>'truncated')::int = 0;
END $$;
-- Below the cap the setting changes nothing: the same keys give the same
-- bytes under 1MB and under 1GB (what lets tlbf_add be IMMUTABLE).
SET tlbf.max_filter_bytes = '1MB';
CREATE TEMP TABLE under_one_mb AS
SELECT tlbf_agg(g, '2024-01-01 00:00+00'::timestamptz + g * interval '10 ms', '1 hour') AS f
FROM generate_series(1, 20000) g;
SET tlbf.max_filter_bytes = '1GB';
SELECT f::bytea = (SELECT tlbf_agg(g, '2024-01-01 00:00+00'::timestamptz + g * interval '10 ms', '1 hour')::bytea
                   FROM generate_series(1, 20000) g) AS same_bytes,
       length(f::bytea) > 8192 AS grew_past_8kb
FROM under_one_mb;
RESET tlbf.max_filter_bytes;
SHOW tlbf.max_filter_bytes;

-- The largest setting is 1GB.  A value can hold one byte less (PostgreSQL's
-- limit), so at 1GB a filter whose first slices (k = l = 1) would take
-- exactly 1GB is refused, and one a word smaller is made.
SET tlbf.max_filter_bytes = '1GB';
SHOW tlbf.max_filter_bytes;
SELECT outcome($$SELECT tlbf_create('1 hour', 0.01, 5954088101, 1, 1)$$) AS first_slices_of_1gb,
       outcome($$SELECT tlbf_create('1 hour', 0.01, 5954088100, 1, 1)$$) AS one_word_less;
-- Past the range, the setting is refused (the messages differ between
-- PostgreSQL versions; the SQLSTATE does not).
SELECT left(outcome($$SET tlbf.max_filter_bytes = '2GB'$$), 5) AS "2GB",
       left(outcome($$SET tlbf.max_filter_bytes = '1025MB'$$), 5) AS "1025MB",
       left(outcome($$SET tlbf.max_filter_bytes = '4kB'$$), 5) AS "4kB";
SHOW tlbf.max_filter_bytes;
RESET tlbf.max_filter_bytes;
