-- The tlbf type: text and binary input and output.
SET TimeZone = 'UTC';

-- An empty filter is just a header, in base64.
SELECT tlbf_create('1 hour');

-- Text round-trips exactly, for an empty filter and one with many slices.
CREATE TABLE io_filters (id int, f tlbf);
INSERT INTO io_filters VALUES (1, tlbf_create('1 hour'));
DO $$
DECLARE
    f tlbf := tlbf_create('10 minutes', 0.01, 100);
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
