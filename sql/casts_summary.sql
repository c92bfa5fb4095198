-- Reading values: CAST (tlbf AS bytea), CAST (bytea AS tlbf), and the
-- one-line tlbf_summary.
-- (Filters of format 2, made by tlbf_create_format2, as tlbf_create made
-- them until 1.5; tlbf_create's format 3: pg_regress format3.)
SET TimeZone = 'UTC';

CREATE TABLE cs_filters (id int, f tlbf);
INSERT INTO cs_filters VALUES (1, tlbf_create_format2('1 hour'));
DO $$
DECLARE
    f tlbf := tlbf_create_format2('10 minutes', 0.01, 100);
BEGIN
    FOR i IN 1..3000 LOOP
        f := tlbf_add(f, i, '2024-01-01 00:00+00'::timestamptz + i * interval '1 second');
    END LOOP;
    INSERT INTO cs_filters VALUES (2, f);
END $$;
-- a value stored out of line (TOASTed), about 2 MB
INSERT INTO cs_filters
SELECT 3, tlbf_agg(g, '2024-01-01 00:00+00'::timestamptz + g * interval '1 ms', '1 hour' ORDER BY g)
FROM generate_series(1, 500000) g;
SELECT id, pg_column_size(f) > 1000000 AS large FROM cs_filters ORDER BY id;

-- tlbf -> bytea -> tlbf gives back the same bytes, the bytes binary output
-- sends (the value without its 4-byte length word), and the same answers.
SELECT id,
       f::bytea::tlbf::text = f::text AS round_trip,
       f::bytea = tlbf_send(f) AS bytea_is_send,
       length(f::bytea) = (tlbf_info(f)->>'bytes')::int - 4 AS bytea_length
FROM cs_filters ORDER BY id;
SELECT count(*) FILTER (WHERE g BETWEEN 2701 AND 3000 AND at = '2024-01-01 00:55+00'
                               AND tlbf_contains(f::bytea::tlbf, g, at)) AS found_of_300,
       count(*) FILTER (WHERE tlbf_contains(f::bytea::tlbf, g, at) IS DISTINCT FROM tlbf_contains(f, g, at)) AS other_answers
FROM cs_filters, generate_series(1, 20000) g,
     unnest(ARRAY['2024-01-01 00:20+00', '2024-01-01 00:55+00']::timestamptz[]) at
WHERE id = 2;
-- bytea -> tlbf -> bytea as well
SELECT tlbf_send(f)::tlbf::bytea = tlbf_send(f) AS bytea_round_trip FROM cs_filters ORDER BY id;

-- NULL in, NULL out.
SELECT NULL::tlbf::bytea IS NULL AS null_to_bytea, NULL::bytea::tlbf IS NULL AS null_from_bytea;

-- Bad bytes are refused as binary input refuses them: 22P03, with what is
-- wrong; nothing is read past the value.
CREATE FUNCTION good() RETURNS bytea LANGUAGE sql AS $$ SELECT f::bytea FROM cs_filters WHERE id = 2 $$;
SELECT label, outcome(query) FROM (VALUES
    ('empty', $$SELECT ''::bytea::tlbf$$),
    ('garbage', $$SELECT '\xdeadbeef'::bytea::tlbf$$),
    ('text, not bytes', $$SELECT convert_to(repeat('not a filter ', 100), 'UTF8')::tlbf$$),
    ('truncated in the header', $$SELECT substr(good(), 1, 50)::tlbf$$),
    ('truncated in the directory', $$SELECT substr(good(), 1, 200)::tlbf$$),
    ('truncated by one word', $$SELECT substr(good(), 1, length(good()) - 8)::tlbf$$),
    ('one byte too many', $$SELECT (good() || '\x00'::bytea)::tlbf$$),
    ('with a length word in front', $$SELECT ('\x00000000'::bytea || good())::tlbf$$),
    ('slice count one too high', $$SELECT set_byte(good(), 12, get_byte(good(), 12) + 1)::tlbf$$),
    ('slice count one too low', $$SELECT set_byte(good(), 12, get_byte(good(), 12) - 1)::tlbf$$),
    ('newest slice one word longer', $$SELECT set_byte(good(), 112, get_byte(good(), 112) + 1)::tlbf$$),
    ('bad format version', $$SELECT set_byte(good(), 4, 9)::tlbf$$)
) AS t(label, query);
-- the server is still up, and the good bytes still make a value
SELECT good()::tlbf::text = f::text AS still_good FROM cs_filters WHERE id = 2;

-- The casts are explicit only: a bytea is not taken for a filter, nor a
-- filter for a bytea, unless asked.
SELECT castsource::regtype, casttarget::regtype, castfunc::regprocedure, castcontext
FROM pg_cast WHERE castsource = 'tlbf'::regtype OR casttarget = 'tlbf'::regtype
ORDER BY 1::text, 2::text;
SELECT outcome($$INSERT INTO cs_filters VALUES (9, '\x00'::bytea)$$);
-- (without the detail PostgreSQL 19 adds)
SELECT split_part(outcome($$SELECT length(f) FROM cs_filters$$), ' (', 1) AS outcome;

-- The summary: one line.  An empty filter ...
SELECT tlbf_summary(tlbf_create_format2('1 hour'));
SELECT tlbf_summary(tlbf_create_format2('10 minutes', 0.001));
-- ... a filled one, asked at its last insertion and after its span, when
-- nothing is live ...
SELECT tlbf_summary(f, '2024-01-01 00:50+00') FROM cs_filters WHERE id = 2;
SELECT tlbf_summary(f, '2024-01-01 02:00+00') FROM cs_filters WHERE id = 2;
-- ... with its parts as tlbf_info gives them ...
SELECT m[1]::interval = '10 minutes' AS span, m[2] = i->>'k' AS k, m[3] = i->>'l' AS l,
       m[4] = i->>'live_keys_estimate' AS live_keys,
       m[5] = i->>'live_keys_low' AS low, m[6] = i->>'live_keys_high' AS high,
       m[7] = i->>'bytes' AS bytes, m[8]::timestamptz = (i->>'newest')::timestamptz AS newest
FROM cs_filters,
     LATERAL (SELECT tlbf_info(f, '2024-01-01 00:50+00') AS i) info,
     LATERAL (SELECT regexp_match(tlbf_summary(f, '2024-01-01 00:50+00'),
                                  '^tlbf\(span (.*), k (\d+), l (\d+), ~(\d+) distinct live keys \((\d+) to (\d+)\), (\d+) bytes, newest (.*)\)$') AS m) parts
WHERE id = 2;
-- ... distinct keys, not insertions: 500 users, each seen every 8 minutes
-- for an hour (3,750 insertions), in a one-hour filter, are ~500 keys (the
-- summary said ~2,321 live items before) ...
SELECT tlbf_summary(tlbf_agg(u, at, '1 hour' ORDER BY at, u), '2024-01-01 01:00+00')
FROM (SELECT u, '2024-01-01 00:00+00'::timestamptz
                + (u * 7919 % 480) * interval '1 second' + j * interval '8 minutes' AS at
      FROM generate_series(1, 500) u, generate_series(0, 7) j) visits
WHERE at < '2024-01-01 01:00+00';
-- ... its newest time in the session's TimeZone (hence STABLE) ...
SET TimeZone = 'Asia/Tokyo';
SELECT tlbf_summary(f, '2024-01-01 00:50+00') FROM cs_filters WHERE id = 2;
SET TimeZone = 'UTC';
-- ... the span in the largest unit that divides it ...
SELECT span, tlbf_summary(tlbf_create_format2(span::interval)) FROM (VALUES
    ('1 second'), ('90 seconds'), ('1.5 seconds'), ('0.000001 seconds'), ('36 hours'), ('7 days')
) AS s(span);
-- ... the slices a filter had to drop, if any (the header's count, set in
-- its bytea form: no size cap drops slices any more) ...
SELECT tlbf_summary(set_byte(tlbf_add(tlbf_create_format2('1 hour'), 1, '2024-01-01 00:00+00')::bytea, 60, 16)::tlbf,
                    '2024-01-01 00:00+00') LIKE '%, truncated 16)' AS summary_names_dropped_slices;
-- ... and NULL in, NULL out.
SELECT tlbf_summary(NULL) IS NULL AS null_filter,
       tlbf_summary(tlbf_create_format2('1 hour'), NULL) IS NULL AS null_time;
-- A table shown in psql, readably.
SELECT id, tlbf_summary(f, '2024-01-01 00:50+00') FROM cs_filters ORDER BY id;

DROP FUNCTION good();
DROP TABLE cs_filters;
