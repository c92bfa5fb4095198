-- Values that compare equal hash equal, across types of one family.
-- (Filters of format 2, made by tlbf_create_format2, as tlbf_create made
-- them until 1.5; tlbf_create's format 3: pg_regress format3.)
SET TimeZone = 'UTC';

CREATE FUNCTION found_as(added anyelement, asked anyelement) RETURNS boolean
LANGUAGE sql AS $$
    SELECT tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), added, '2024-01-01 00:00+00'),
                         asked, '2024-01-01 00:00+00')
$$;

SELECT 'int2 as int8' AS pair,
       tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), 5::int2, '2024-01-01 00:00+00'),
                     5::int8, '2024-01-01 00:00+00') AS found
UNION ALL SELECT 'int4 as int2',
       tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), 70::int4, '2024-01-01 00:00+00'),
                     70::int2, '2024-01-01 00:00+00')
UNION ALL SELECT 'negative int8 as int4',
       tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), -3::int8, '2024-01-01 00:00+00'),
                     -3::int4, '2024-01-01 00:00+00')
UNION ALL SELECT 'text as varchar',
       tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), 'ab'::text, '2024-01-01 00:00+00'),
                     'ab'::varchar, '2024-01-01 00:00+00')
UNION ALL SELECT 'bpchar(5) as text',
       tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), 'ab'::char(5), '2024-01-01 00:00+00'),
                     'ab'::text, '2024-01-01 00:00+00')
UNION ALL SELECT 'literal as name',
       tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), 'ab', '2024-01-01 00:00+00'),
                     'ab'::name, '2024-01-01 00:00+00')
UNION ALL SELECT 'numeric 1.0 as 1.00',
       tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), 1.0::numeric, '2024-01-01 00:00+00'),
                     1.00::numeric, '2024-01-01 00:00+00')
UNION ALL SELECT 'numeric 100 as 1e2',
       tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), 100::numeric, '2024-01-01 00:00+00'),
                     1e2::numeric, '2024-01-01 00:00+00')
UNION ALL SELECT 'numeric NaN as NaN',
       tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), 'NaN'::numeric, '2024-01-01 00:00+00'),
                     'NaN'::numeric, '2024-01-01 00:00+00')
UNION ALL SELECT 'float8 -0 as 0',
       tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), '-0'::float8, '2024-01-01 00:00+00'),
                     0::float8, '2024-01-01 00:00+00')
UNION ALL SELECT 'float4 1.5 as float8 1.5',
       tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), 1.5::float4, '2024-01-01 00:00+00'),
                     1.5::float8, '2024-01-01 00:00+00')
UNION ALL SELECT 'float8 NaN as float4 NaN',
       tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), 'NaN'::float8, '2024-01-01 00:00+00'),
                     'NaN'::float4, '2024-01-01 00:00+00')
UNION ALL SELECT 'uuid',
       found_as('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid, 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'::uuid)
UNION ALL SELECT 'bytea',
       found_as('\x0102'::bytea, '\x0102'::bytea)
UNION ALL SELECT 'date',
       found_as('2024-02-29'::date, '2024-02-29'::date)
UNION ALL SELECT 'timestamptz in two zones',
       found_as('2024-01-01 12:00+00'::timestamptz, '2024-01-01 13:00+01'::timestamptz)
UNION ALL SELECT 'timestamp',
       found_as('2024-01-01 12:00'::timestamp, '2024-01-01 12:00:00.000'::timestamp)
UNION ALL SELECT 'int[] (extended hash)',
       found_as(ARRAY[1, 2], ARRAY[1, 2])
UNION ALL SELECT 'domain over text',
       tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), 'x'::information_schema.character_data, '2024-01-01 00:00+00'),
                     'x'::text, '2024-01-01 00:00+00');

-- Different values are different keys.
SELECT found_as(1.5::numeric, 1.05::numeric) AS different_numerics,
       found_as('ab'::text, 'ab '::text) AS text_keeps_trailing_blanks,
       found_as(1::int8, 2::int8) AS different_ints;

-- The pinned types hash the same on every PostgreSQL version: the bytes of
-- filters built from them (one kind of key each) are fixed here.
SELECT md5(string_agg(f::text, ',' ORDER BY n)) AS pinned_hashes FROM (
    SELECT 1 AS n, tlbf_add(tlbf_create_format2('1 hour'), 42::int8, '2024-01-01 00:00+00') AS f
    UNION ALL SELECT 2, tlbf_add(tlbf_create_format2('1 hour'), 'text'::text, '2024-01-01 00:00+00')
    UNION ALL SELECT 3, tlbf_add(tlbf_create_format2('1 hour'), 12.50::numeric, '2024-01-01 00:00+00')
    UNION ALL SELECT 4, tlbf_add(tlbf_create_format2('1 hour'), 2.5::float8, '2024-01-01 00:00+00')
    UNION ALL SELECT 5, tlbf_add(tlbf_create_format2('1 hour'), 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid,
                                 '2024-01-01 00:00+00')
    UNION ALL SELECT 6, tlbf_add(tlbf_create_format2('1 hour'), '\xdeadbeef'::bytea, '2024-01-01 00:00+00')
    UNION ALL SELECT 7, tlbf_add(tlbf_create_format2('1 hour'), '2024-01-01'::date, '2024-01-01 00:00+00')
    UNION ALL SELECT 8, tlbf_add(tlbf_create_format2('1 hour'), '2024-01-01 00:00+00'::timestamptz,
                                 '2024-01-01 00:00+00')
    UNION ALL SELECT 9, tlbf_add(tlbf_create_format2('1 hour'), ROW(1, 'x'::text), '2024-01-01 00:00+00')
) AS s;

-- A type without a hash function is refused clearly.
SELECT tlbf_add(tlbf_create_format2('1 hour'), point(1, 2));
