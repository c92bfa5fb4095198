-- The tlbf type: text and binary input and output.
-- (Filters of format 2, made by tlbf_create_format2, as tlbf_create made
-- them until 1.5; tlbf_create's format 3: pg_regress format3.)
SET TimeZone = 'UTC';

-- An empty filter is just a header, in base64.
SELECT tlbf_create_format2('1 hour');

-- Text round-trips exactly, for an empty filter and one with many slices.
CREATE TABLE io_filters (id int, f tlbf);
INSERT INTO io_filters VALUES (1, tlbf_create_format2('1 hour'));
DO $$
DECLARE
    f tlbf := tlbf_create_format2('10 minutes', 0.01, 100);
BEGIN
    FOR i IN 1..3000 LOOP
        f := tlbf_add(f, i, '2024-01-01 00:00+00'::timestamptz + i * interval '1 second');
    END LOOP;
    INSERT INTO io_filters VALUES (2, f);
END $$;
SELECT id, f::text::tlbf::text = f::text AS text_round_trip,
       length(f::text) AS text_length, tlbf_info(f)->'slice_count' AS slices
FROM io_filters ORDER BY id;

-- The same bytes every time: a filter built from the same keys and times
-- has one representation (this also pins the format and the hashing).
SELECT md5(f::text) FROM io_filters WHERE id = 2;

-- Binary send gives the same bytes as the text form.
SELECT id, decode(f::text, 'base64') = tlbf_send(f) AS send_matches_text
FROM io_filters ORDER BY id;

-- Binary COPY out and back in keeps every answer.
\copy io_filters TO 'results/io_filters.bin' WITH (FORMAT binary)
CREATE TABLE io_copy (LIKE io_filters);
\copy io_copy FROM 'results/io_filters.bin' WITH (FORMAT binary)
SELECT a.id, a.f::text = b.f::text AS same_value
FROM io_filters a JOIN io_copy b USING (id) ORDER BY a.id;
SELECT count(*) FILTER (WHERE tlbf_contains(f, g, '2024-01-01 00:55+00')) AS found
FROM io_copy, generate_series(2801, 3000) g WHERE id = 2;

-- Bad text is refused with 22P02, never read.
SELECT 'not base64!'::tlbf;
SELECT outcome($$SELECT 'AAAA'::tlbf$$);
SELECT outcome($$SELECT substr(f::text, 1, 100)::tlbf FROM io_filters WHERE id = 2$$);
SELECT outcome($$SELECT substr(f::text, 1, length(f::text) - 4)::tlbf FROM io_filters WHERE id = 2$$);
SELECT outcome($$SELECT (f::text || 'AAAA')::tlbf FROM io_filters WHERE id = 2$$);

-- Bad text is reported softly where the caller asks (pg_input_is_valid,
-- PostgreSQL 16 and later: 'valid' false and the error's SQLSTATE, no
-- ERROR); on 15, which has no soft errors, the same answers come from a
-- cast.  (EXECUTE: on 15 the functions do not exist.)
CREATE FUNCTION input_check(v text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    ok boolean;
    state text;
BEGIN
    IF current_setting('server_version_num')::int >= 160000 THEN
        EXECUTE 'SELECT pg_input_is_valid($1, ''tlbf'')' INTO ok USING v;
        EXECUTE 'SELECT sql_error_code FROM pg_input_error_info($1, ''tlbf'')' INTO state USING v;
    ELSE
        BEGIN
            PERFORM v::tlbf;
            ok := true;
        EXCEPTION WHEN OTHERS THEN
            ok := false;
            state := SQLSTATE;
        END;
    END IF;
    RETURN CASE WHEN ok THEN 'valid' ELSE 'invalid ' || state END;
END $$;
SELECT input_check(f::text) AS whole,
       input_check('not base64!') AS not_base64,
       input_check('AAAA') AS too_short,
       input_check(substr(f::text, 1, length(f::text) - 4)) AS cut,
       input_check(f::text || 'AAAA') AS trailing
FROM io_filters WHERE id = 2;
DROP FUNCTION input_check(text);
