-- A key is SQL's key: two keys are the same when SQL's = for their types
-- says so, and the bits a key sets depend on its value alone, never on an
-- OID.  Where that cannot hold, the key is refused with an error, never
-- answered "absent".  (test/t/027_key_types.pl goes through every hashable
-- type, and a dump and restore; this is the single-server part, with the
-- errors users read.)
-- (Filters of format 2, made by tlbf_create_format2, as tlbf_create made
-- them until 1.5; tlbf_create's format 3: pg_regress format3.)
SET TimeZone = 'UTC';
CREATE FUNCTION answer_of(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    answer text;
BEGIN
    EXECUTE query INTO answer;
    RETURN answer;
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- Enums hash by label: a filter keeps finding its keys after the type is
-- made again (new OIDs, as after a dump and restore, or on another node),
-- and text (an untyped literal, a driver's parameter) is read as a label.
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TYPE mood_range AS RANGE (subtype = mood);
CREATE TYPE visit AS (user_id int, mood mood);
CREATE TABLE mood_filters AS
SELECT tlbf_add(tlbf_create_format2('1 hour'), 'happy'::mood, '2024-01-01 00:00+00') AS by_enum,
       tlbf_add(tlbf_create_format2('1 hour'), ARRAY['happy', 'sad']::mood[], '2024-01-01 00:00+00') AS by_array,
       tlbf_add(tlbf_create_format2('1 hour'), '[sad,ok]'::mood_range, '2024-01-01 00:00+00') AS by_range,
       tlbf_add(tlbf_create_format2('1 hour'), ROW(7, 'ok'::mood)::visit, '2024-01-01 00:00+00') AS by_row,
       tlbf_add(tlbf_create_format2('1 hour'), ROW(7, ARRAY['ok'::mood]), '2024-01-01 00:00+00') AS by_nested;
SELECT tlbf_info(by_enum)->'key_kinds' AS enum_kinds, tlbf_info(by_array)->'key_kinds' AS array_kinds,
       tlbf_info(by_range)->'key_kinds' AS range_kinds, tlbf_info(by_row)->'key_kinds' AS row_kinds,
       tlbf_info(by_nested)->'key_kinds' AS nested_kinds
FROM mood_filters;
ALTER TABLE mood_filters ALTER COLUMN by_enum TYPE text, ALTER COLUMN by_array TYPE text,
    ALTER COLUMN by_range TYPE text, ALTER COLUMN by_row TYPE text, ALTER COLUMN by_nested TYPE text;
SELECT oid AS old_oid FROM pg_enum WHERE enumtypid = 'mood'::regtype AND enumlabel = 'happy' \gset
DROP TYPE visit;
DROP TYPE mood_range;
DROP TYPE mood;
CREATE TYPE unrelated AS ENUM ('a', 'b', 'c', 'd');
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TYPE mood_range AS RANGE (subtype = mood);
CREATE TYPE visit AS (user_id int, mood mood);
SELECT oid <> :old_oid AS oids_moved FROM pg_enum WHERE enumtypid = 'mood'::regtype AND enumlabel = 'happy';
SELECT tlbf_contains(by_enum::tlbf, 'happy'::mood, '2024-01-01 00:01+00') AS enum_found,
       tlbf_contains(by_enum::tlbf, 'happy', '2024-01-01 00:01+00') AS as_text,
       tlbf_contains(by_enum::tlbf, 'sad'::mood, '2024-01-01 00:01+00') AS other_absent,
       tlbf_contains(by_array::tlbf, ARRAY['happy', 'sad']::mood[], '2024-01-01 00:01+00') AS array_found,
       tlbf_contains(by_array::tlbf, ARRAY['sad', 'happy']::mood[], '2024-01-01 00:01+00') AS order_counts,
       tlbf_contains(by_range::tlbf, '[sad,ok]'::mood_range, '2024-01-01 00:01+00') AS range_found,
       tlbf_contains(by_row::tlbf, ROW(7, 'ok'::mood)::visit, '2024-01-01 00:01+00') AS row_found,
       tlbf_contains(by_row::tlbf, ROW(7::bigint, 'ok'), '2024-01-01 00:01+00') AS row_as_text_label,
       tlbf_contains(by_nested::tlbf, ROW(7, ARRAY['ok'::mood]), '2024-01-01 00:01+00') AS nested_found
FROM mood_filters;
-- an array of a composite type holding an enum hashes by label too
SELECT tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), ARRAY[ROW(1, 'ok')::visit], '2024-01-01 00:00+00'),
                     ARRAY[ROW(1, 'ok')::visit], '2024-01-01 00:01+00') AS composite_array;
-- an enum is not text, nor text an enum array
SELECT answer_of($$SELECT tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), 'x'::text), 'happy'::mood)$$);
SELECT answer_of($$SELECT tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), ARRAY['ok'::mood]), '{ok}')$$);

-- Filters written by 1.4 hashed enums by OID (kind "other", seed 0): an
-- enum key is refused with a hint to rebuild, never answered "absent".
CREATE FUNCTION with_seed(f tlbf, seed bigint) RETURNS tlbf LANGUAGE sql AS $$
    SELECT (substring(f::bytea FROM 1 FOR 20) || int8send(seed) ||
            substring(f::bytea FROM 29))::tlbf  -- (int8send is big-endian: 0 only)
$$;
SELECT answer_of($$SELECT tlbf_contains(with_seed(tlbf_add(tlbf_create_format2('1 hour'), '10.0.0.1'::inet), 0),
                                      'happy'::mood)$$);

-- float4 keys asked as text are read as float4, as SQL reads '0.1' for a
-- real column; a float8 question compares as SQL does (0.1::real is not
-- 0.1::float8); a float8 added to a filter of float4 keys is rounded.
SELECT tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), 0.1::real, '2024-01-01 00:00+00'), '0.1', '2024-01-01 00:01+00') AS real_as_text,
       0.1::real = '0.1' AS sql_real_as_text,
       tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), 0.1::real, '2024-01-01 00:00+00'), 0.1::float8, '2024-01-01 00:01+00') AS real_as_float8,
       0.1::real = 0.1::float8 AS sql_real_as_float8,
       tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), 0.1::float8, '2024-01-01 00:00+00'), '0.1', '2024-01-01 00:01+00') AS float8_as_text,
       tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), 0.1::real, '2024-01-01 00:00+00'), 0.1::real::float8, '2024-01-01 00:01+00') AS real_widened,
       tlbf_contains(tlbf_add(tlbf_add(tlbf_create_format2('1 hour'), 1::real, '2024-01-01 00:00+00'), 0.1::float8, '2024-01-01 00:00+00'),
                     '0.1', '2024-01-01 00:01+00') AS float8_added_rounds,
       (SELECT tlbf_contains(tlbf_agg(v, '2024-01-01 00:00+00', '1 hour'), min(v)::text, '2024-01-01 00:01+00')
        FROM (VALUES (0.1::real)) r(v)) AS agg_real_as_text;
-- a union of real and double precision keys holds either: text is taken
-- where it is one number both ways, refused where not
SELECT tlbf_info(tlbf_add(tlbf_create_format2('1 hour'), 0.5::real) || tlbf_add(tlbf_create_format2('1 hour'), 0.25::float8))->'key_kinds' AS union_kinds,
       tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), 0.5::real, '2024-01-01 00:00+00') ||
                     tlbf_add(tlbf_create_format2('1 hour'), 0.25::float8, '2024-01-01 00:00+00'), '0.5', '2024-01-01 00:01+00') AS half_found;
\set VERBOSITY default
SELECT tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), 0.5::real) || tlbf_add(tlbf_create_format2('1 hour'), 0.25::float8), '0.1');

-- numeric and float8 compare as float8 in SQL, where countless numeric
-- values equal one float8: refused.  Integers compare with a float8 as
-- float8, where from 2^53 on several integers are one: refused there.
SELECT 0.30000000000000004::numeric = 0.30000000000000004::float8 AS sql_numeric_float8,
       9007199254740993::int8 = 9007199254740992::float8 AS sql_int8_float8;
SELECT tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), 0.30000000000000004::numeric), 0.30000000000000004::float8);
SELECT tlbf_add(tlbf_add(tlbf_create_format2('1 hour'), 1.5::numeric), 2.5::float8);
SELECT tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), 9007199254740993::int8), 9007199254740992::float8);
\set VERBOSITY terse
SELECT tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), 9007199254740991::int8, '2024-01-01 00:00+00'),
                     9007199254740991::float8, '2024-01-01 00:01+00') AS below_2_53,
       tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), 42::int8, '2024-01-01 00:00+00'), 42.0::float8, '2024-01-01 00:01+00') AS whole_float,
       tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), 42::numeric, '2024-01-01 00:00+00'), 42::int8, '2024-01-01 00:01+00') AS numeric_as_int,
       tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), 0.1::float8, '2024-01-01 00:00+00'), 0.1::numeric, '2024-01-01 00:01+00') AS float8_as_numeric;
-- a float8 added to a filter of integers is that integer, at any size
SELECT tlbf_contains(tlbf_add(tlbf_add(tlbf_create_format2('1 hour'), 1::int8, '2024-01-01 00:00+00'), 1e18::float8, '2024-01-01 00:00+00'),
                     1000000000000000000::int8, '2024-01-01 00:01+00') AS big_float_added;

-- Types hashed by their own hash function (kind "other") carry their type
-- in the filter's seed: a key of a type that hashes alike is found (cidr
-- and inet; arrays of int4 and int8), one that hashes otherwise is refused
-- (time and timetz, which SQL compares; int[] and float8[]).
SELECT tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), '10.1.0.0/16'::cidr, '2024-01-01 00:00+00'),
                     '10.1.0.0/16'::inet, '2024-01-01 00:01+00') AS cidr_as_inet,
       tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), '{1,2}'::int4[], '2024-01-01 00:00+00'),
                     '{1,2}'::int8[], '2024-01-01 00:01+00') AS int4s_as_int8s,
       tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), ROW(1, '10.0.0.1'::inet), '2024-01-01 00:00+00'),
                     ROW('1', '10.0.0.1'::inet), '2024-01-01 00:01+00') AS row_with_inet,
       tlbf_info(tlbf_add(tlbf_create_format2('1 hour'), '10.1.0.0/16'::cidr))->>'seed' =
       tlbf_info(tlbf_add(tlbf_create_format2('1 hour'), '10.0.0.1'::inet))->>'seed' AS same_seed,
       tlbf_info(tlbf_add(tlbf_create_format2('1 hour'), 1))->>'seed' AS pinned_seed;
\set VERBOSITY default
SELECT '12:00'::time = '12:00+00'::timetz AS sql_time_timetz;
SELECT tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), '12:00'::time), '12:00+00'::timetz);
SELECT tlbf_contains(tlbf_add(tlbf_create_format2('1 hour'), '{1,2}'::int4[]), '{1,2}'::float8[]);
SELECT tlbf_add(tlbf_create_format2('1 hour'), '10.0.0.1'::inet) || tlbf_add(tlbf_create_format2('1 hour'), '12:00'::time);
\set VERBOSITY terse

-- Types whose values are OIDs of objects, or hold them, and arrays of rows
-- that only their values describe: refused.
SELECT what, answer_of(format('SELECT tlbf_add(tlbf_create_format2(%L), %s) IS NOT NULL', '1 hour', what))
FROM unnest(ARRAY['''pg_class''::regclass', '''int4''::regtype', '''now''::regproc',
                  '''public''::regnamespace', 'current_user::regrole',
                  '''english''::regconfig', 'ARRAY[''pg_class''::regclass]',
                  'makeaclitem(10, 10, ''SELECT'', false)', 'ARRAY[ROW(1, 2)]',
                  '42::oid']) AS what;

-- Combining states or filters of different kinds is refused wherever they
-- meet: unions, tlbf_union_agg, and the aggregates' combine functions.
CREATE AGGREGATE partial_int(bigint, timestamptz, interval) (
    SFUNC = tlbf_agg_typed_trans, STYPE = tlbf_agg_state);
CREATE AGGREGATE partial_text(text, timestamptz, interval) (
    SFUNC = tlbf_agg_typed_trans, STYPE = tlbf_agg_state);
CREATE AGGREGATE combined(tlbf_agg_state) (
    SFUNC = tlbf_agg_typed_combine, STYPE = tlbf_agg_state,
    FINALFUNC = tlbf_agg_typed_final);
SELECT answer_of($$
    SELECT combined(s)::text FROM (
        SELECT partial_int(g, '2024-01-01 00:00+00', '1 hour') AS s FROM generate_series(1, 10) g
        UNION ALL
        SELECT partial_text(g::text, '2024-01-01 00:00+00', '1 hour') FROM generate_series(1, 10) g) p$$);
SELECT answer_of($$
    SELECT tlbf_union_agg(f)::text FROM (
        SELECT tlbf_add(tlbf_create_format2('1 hour'), 1) AS f
        UNION ALL SELECT tlbf_add(tlbf_create_format2('1 hour'), 'x'::text)) u$$);
SELECT answer_of($$
    SELECT tlbf_union_agg(f)::text FROM (
        SELECT tlbf_add(tlbf_create_format2('1 hour'), '12:00'::time) AS f
        UNION ALL SELECT tlbf_add(tlbf_create_format2('1 hour'), '12:00+00'::timetz)) u$$);
-- states of the same kind combine: the combined filter finds every key
SELECT tlbf_contains(combined(s), 5, '2024-01-01 00:01+00') AS combined_finds
FROM (SELECT partial_int(g, '2024-01-01 00:00+00', '1 hour') AS s FROM generate_series(1, 10) g
      UNION ALL SELECT partial_int(g, '2024-01-01 00:00+00', '1 hour') FROM generate_series(5, 20) g) p;

DROP AGGREGATE combined(tlbf_agg_state);
DROP AGGREGATE partial_int(bigint, timestamptz, interval);
DROP AGGREGATE partial_text(text, timestamptz, interval);
DROP FUNCTION with_seed(tlbf, bigint), answer_of(text);
DROP TABLE mood_filters;
DROP TYPE visit;
DROP TYPE mood_range;
DROP TYPE mood;
DROP TYPE unrelated;
