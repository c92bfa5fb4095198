-- The kind of key a filter holds: recorded with its first key, and every
-- key asked or added later is converted to it or refused, never hashed
-- differently in silence.  One filter per type, asked for the same value
-- written as each other type (where that type can write it; otherwise a
-- value of that type, to show what is refused).
SET TimeZone = 'UTC';

CREATE TABLE key_types (n int, name text, short text, sample text);
INSERT INTO key_types VALUES
    (1, 'smallint', 'int2', '42'), (2, 'integer', 'int4', '42'), (3, 'bigint', 'int8', '42'),
    (4, 'numeric', 'num', '42.0'), (5, 'real', 'fl4', '42'), (6, 'double precision', 'fl8', '42'),
    (7, 'text', 'text', 'x'), (8, 'varchar', 'vchr', 'x'), (9, 'unknown', 'unkn', 'x'),
    (10, 'uuid', 'uuid', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'), (11, 'bytea', 'byte', '\x42'),
    (12, 'date', 'date', '2024-01-01'), (13, 'timestamp', 'ts', '2024-01-01 00:00'),
    (14, 'timestamptz', 'tstz', '2024-01-01 00:00+00'), (15, 'record', 'row', '(42,x)');

-- A literal of type 'type' for 'value' (the text of another type's sample),
-- or the type's own sample if 'value' is no value of that type.
CREATE FUNCTION key_literal(value text, type text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    sample text := (SELECT k.sample FROM key_types k WHERE k.name = type);
BEGIN
    IF type = 'record' THEN
        RETURN CASE WHEN value = sample THEN 'ROW(42, ''x''::text)' ELSE 'ROW(1, ''y''::text)' END;
    ELSIF type = 'unknown' THEN
        RETURN quote_literal(value);
    END IF;
    BEGIN
        EXECUTE format('SELECT %L::%s', value, type);
        RETURN format('%L::%s', value, type);
    EXCEPTION WHEN OTHERS THEN
        RETURN format('%L::%s', sample, type);
    END;
END $$;

-- t, f, or the error's SQLSTATE.
CREATE FUNCTION answer(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    found boolean;
BEGIN
    EXECUTE query INTO found;
    RETURN CASE WHEN found THEN 't' ELSE 'f' END;
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END $$;

CREATE TABLE key_filters AS
SELECT k.n, k.name, k.sample,
       answer(format('SELECT tlbf_add(tlbf_create(''1 hour''), %s, ''2024-01-01 00:00+00'') IS NOT NULL',
                     key_literal(k.sample, k.name))) AS made
FROM key_types k;
SELECT name FROM key_filters WHERE made <> 't';

CREATE FUNCTION filter_of(type text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    f text;
BEGIN
    EXECUTE format('SELECT tlbf_add(tlbf_create(''1 hour''), %s, ''2024-01-01 00:00+00'')::text',
                   key_literal((SELECT sample FROM key_types WHERE name = type), type)) INTO f;
    RETURN f;
END $$;

-- Rows: the filter's first key; columns: the key asked.
SELECT pairs FROM (
    SELECT 0 AS n, rpad('filter \ key', 17) || string_agg(rpad(short, 6), '' ORDER BY n) AS pairs
    FROM key_types
    UNION ALL
    SELECT f.n, rpad(f.name, 17) || string_agg(rpad(answer(format(
               'SELECT tlbf_contains(%L::tlbf, %s, ''2024-01-01 00:01+00'')',
               filter_of(f.name), key_literal(f.sample, k.name))), 6), '' ORDER BY k.n)
    FROM key_types f, key_types k
    GROUP BY f.n, f.name
) AS grid ORDER BY n;

-- What each filter records, and the errors a user reads.
SELECT name, tlbf_info(filter_of(name)::tlbf)->'key_kinds' AS key_kinds
FROM key_types ORDER BY n;
\set VERBOSITY default
SELECT tlbf_contains(filter_of('bigint')::tlbf, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid);
SELECT tlbf_contains(filter_of('bigint')::tlbf, 'forty-two');
SELECT tlbf_add(filter_of('bigint')::tlbf, 42.5);
SELECT tlbf_contains(filter_of('record')::tlbf, ROW(42, 42));
SELECT tlbf_contains(filter_of('record')::tlbf, 42);
SELECT tlbf_union(filter_of('bigint')::tlbf, filter_of('text')::tlbf);
\set VERBOSITY terse

-- Kind "other": keys of any type without a kind of its own; an untyped
-- literal must be cast.  A row of one field is that field; past 8 fields,
-- refused.  An empty filter merges with any.
SELECT tlbf_contains(tlbf_add(tlbf_create('1 hour'), '10.0.0.1'::inet, '2024-01-01 00:00+00'),
                     '10.0.0.1'::inet, '2024-01-01 00:01+00') AS inet_as_inet,
       tlbf_info(tlbf_add(tlbf_create('1 hour'), '10.0.0.1'::inet))->'key_kinds' AS inet_kinds,
       tlbf_contains(filter_of('bigint')::tlbf, ROW(42), '2024-01-01 00:01+00') AS row_of_one,
       tlbf_info(tlbf_create('1 hour') || filter_of('text')::tlbf)->'key_kinds' AS empty_union;
SELECT outcome($$SELECT tlbf_contains(tlbf_add(tlbf_create('1 hour'), '10.0.0.1'::inet), '10.0.0.1')$$);
SELECT outcome($$SELECT tlbf_contains(tlbf_add(tlbf_create('1 hour'), '10.0.0.1'::inet), 42)$$);
SELECT outcome($$SELECT tlbf_add(tlbf_create('1 hour'), ROW(1, 2, 3, 4, 5, 6, 7, 8, 9))$$);
SELECT outcome($$SELECT tlbf_union_agg(f) FROM (VALUES (filter_of('bigint')::tlbf), (filter_of('uuid')::tlbf)) v(f)$$);

-- A value that equals no integer is absent from a filter of integers.
SELECT tlbf_contains(filter_of('bigint')::tlbf, 42.5, '2024-01-01 00:01+00') AS half,
       tlbf_contains(filter_of('bigint')::tlbf, 'NaN'::float8, '2024-01-01 00:01+00') AS nan,
       tlbf_contains(filter_of('bigint')::tlbf, 1e30::float8, '2024-01-01 00:01+00') AS huge,
       tlbf_probability(filter_of('bigint')::tlbf, 42.5, '2024-01-01 00:01+00') AS p,
       tlbf_last_seen(filter_of('bigint')::tlbf, 42.5, '2024-01-01 00:01+00') AS last_seen;

-- Every way in agrees: the aggregates (each typed form and "any"), unions
-- and an untyped parameter, as a driver sends it.
CREATE TABLE key_visits AS
SELECT g AS user_id, '2024-01-01 00:00+00'::timestamptz + g * interval '1 second' AS at
FROM generate_series(1, 1000) g;
CREATE TABLE key_agg_filters AS
SELECT tlbf_agg(user_id, at, '1 hour') AS by_int,
       tlbf_agg(user_id::bigint, at, '1 hour') AS by_bigint,
       tlbf_agg(user_id::numeric, at, '1 hour') AS by_numeric,
       tlbf_agg(user_id::text, at, '1 hour') AS by_text,
       tlbf_agg(ROW(user_id, user_id::text), at, '1 hour') AS by_row
FROM key_visits;
SELECT tlbf_info(by_int)->'key_kinds' AS int_kinds, tlbf_info(by_numeric)->'key_kinds' AS numeric_kinds,
       tlbf_info(by_text)->'key_kinds' AS text_kinds, tlbf_info(by_row)->'key_kinds' AS row_kinds
FROM key_agg_filters;
PREPARE asked(tlbf, unknown) AS SELECT tlbf_contains($1, $2, '2024-01-01 00:30+00');
PREPARE asked_untyped AS SELECT tlbf_contains((SELECT by_int FROM key_agg_filters), $1, '2024-01-01 00:30+00');
SELECT count(*) FILTER (WHERE tlbf_contains(by_int, v.user_id::bigint, '2024-01-01 00:30+00')) AS int_as_bigint,
       count(*) FILTER (WHERE tlbf_contains(by_int, v.user_id::numeric, '2024-01-01 00:30+00')) AS int_as_numeric,
       count(*) FILTER (WHERE tlbf_contains(by_int, v.user_id::text, '2024-01-01 00:30+00')) AS int_as_text,
       count(*) FILTER (WHERE tlbf_contains(by_bigint || by_int, v.user_id::int2, '2024-01-01 00:30+00')) AS union_as_int2,
       count(*) FILTER (WHERE tlbf_contains(by_numeric, v.user_id, '2024-01-01 00:30+00')) AS numeric_as_int,
       count(*) FILTER (WHERE tlbf_contains(by_text, v.user_id::varchar, '2024-01-01 00:30+00')) AS text_as_varchar,
       count(*) FILTER (WHERE tlbf_contains(by_row, ROW(v.user_id::bigint, v.user_id::text), '2024-01-01 00:30+00')) AS row_as_bigint_row
FROM key_visits v, key_agg_filters;
EXECUTE asked_untyped('500');
EXECUTE asked_untyped('5000');
SELECT by_text AS text_filter FROM key_agg_filters \gset
EXECUTE asked(:'text_filter', '500');
