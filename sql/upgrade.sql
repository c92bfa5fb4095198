-- The install script chain: version 1.0, then ALTER EXTENSION ... UPDATE to
-- the current version, ends with the same objects as a fresh install, each
-- with the same definition, labels and grants (test/upgrade/extension_objects.sql
-- describes them; the comparison lists every object that differs, none when
-- the two match); and a value written by version 1.0
-- (test/fixtures/tlbf-1.0.txt: keys 1..2000 added one a second from
-- 2024-01-01 00:00 UTC, span 1 hour) stays readable and keeps its answers.
-- Nothing here names today's objects or counts them: the test holds for
-- every version of the extension and of PostgreSQL.
\set regression_db :DBNAME
\set fixture `cat test/fixtures/tlbf-1.0.txt`
CREATE DATABASE tlbf_upgrade;
\c tlbf_upgrade
SET TimeZone = 'UTC';
CREATE EXTENSION tlbf VERSION '1.0';
CREATE TABLE kept (f tlbf);
INSERT INTO kept VALUES (:'fixture');

CREATE FUNCTION answers() RETURNS TABLE (present_found bigint, absent_found bigint)
LANGUAGE sql AS $$
    SELECT count(*) FILTER (WHERE g <= 2000 AND tlbf_contains(f, g, '2024-01-01 01:00+00')),
           count(*) FILTER (WHERE g > 2000 AND tlbf_contains(f, g, '2024-01-01 01:00+00'))
    FROM kept, generate_series(1, 102000) g
$$;
SELECT extversion FROM pg_extension WHERE extname = 'tlbf';
SELECT * FROM answers();

ALTER EXTENSION tlbf UPDATE TO '1.1';
ALTER EXTENSION tlbf UPDATE TO '1.2';
ALTER EXTENSION tlbf UPDATE;
SELECT extversion = default_version AS at_default_version
FROM pg_extension JOIN pg_available_extensions ON name = extname WHERE extname = 'tlbf';
SELECT * FROM answers();
SELECT f::text = :'fixture' AS same_bytes FROM kept;
-- the old value works with the new functions
SELECT (SELECT tlbf_contains(tlbf_union_agg(f), 1500, '2024-01-01 00:30+00') FROM kept) AS union_agg_of_old_value,
       (SELECT NOT tlbf_retirable(f, '2024-01-01 00:40+00') FROM kept) AS nothing_to_retire_yet;
-- it records no kind of key (format version 1): keys hash by their own type,
-- as then; added to, it takes them so; a union with another such value
-- records no kind either, and one with a filter that records its kind is
-- refused (the union could answer neither way)
SELECT tlbf_info(f)->'version' AS version, tlbf_info(f)->'key_kinds' AS key_kinds,
       tlbf_contains(tlbf_add(f, 'new'::text, '2024-01-01 00:40+00'), 'new'::text,
                     '2024-01-01 00:41+00') AS takes_text_as_then,
       tlbf_info(f || f)->'key_kinds' AS union_kinds,
       tlbf_contains(f || f, 1500, '2024-01-01 00:30+00') AS union_finds_old
FROM kept;
SELECT f || tlbf_agg_of_ints
FROM kept, (SELECT tlbf_agg(g, '2024-01-01 00:20+00', '1 hour') AS tlbf_agg_of_ints
            FROM generate_series(90000, 90010) g) AS a;

-- moved to format 3 (tlbf_to_format3, as the maintenance pass does after
-- the update), it carries the old value and answers the same; a key added
-- then goes to format 3's bands
SELECT tlbf_format(f) AS format FROM kept;
UPDATE kept SET f = tlbf_to_format3(f);
SELECT tlbf_format(f) AS format, tlbf_info(f)->'carries'->'version' AS carried_version FROM kept;
SELECT * FROM answers();
SELECT tlbf_contains(tlbf_add(f, 3000, '2024-01-01 00:40+00'), 3000, '2024-01-01 00:41+00') AS new_key_found,
       tlbf_contains(tlbf_add(f, 3000, '2024-01-01 00:40+00'), 1500, '2024-01-01 00:41+00') AS old_key_found,
       tlbf_info(tlbf_add(f, 3000, '2024-01-01 00:40+00'))->'key_kinds' AS bands_kinds
FROM kept;

-- the extension's objects after the updates ...
DROP TABLE kept;
DROP FUNCTION answers();
\set ECHO none
\i test/upgrade/extension_objects.sql
SELECT json_agg(o)::text AS updated_objects FROM pg_temp.extension_objects('tlbf') o \gset
\set ECHO all
-- ... and after a fresh install, in a database of its own
CREATE DATABASE tlbf_fresh;
\c tlbf_fresh
CREATE EXTENSION tlbf;
\set ECHO none
\i test/upgrade/extension_objects.sql
SELECT json_agg(o)::text AS fresh_objects FROM pg_temp.extension_objects('tlbf') o \gset
\set ECHO all
\c :regression_db
DROP DATABASE tlbf_upgrade;
DROP DATABASE tlbf_fresh;
CREATE TEMP TABLE updated AS
SELECT * FROM json_to_recordset(:'updated_objects') AS o(object text, description text);
CREATE TEMP TABLE fresh AS
SELECT * FROM json_to_recordset(:'fresh_objects') AS o(object text, description text);
-- every object whose definition differs, with what differs, or that only
-- one of them has: no rows when the two match
CREATE FUNCTION pg_temp.only_in(a text, b text) RETURNS text LANGUAGE sql AS $$
    SELECT CASE WHEN a IS NULL THEN '(no such object)'
                ELSE (SELECT string_agg(attr, '; ' ORDER BY n)
                      FROM unnest(string_to_array(a, '; ')) WITH ORDINALITY AS x(attr, n)
                      WHERE attr <> ALL (string_to_array(coalesce(b, ''), '; '))) END
$$;
\x on
SELECT coalesce(u.object, f.object) AS object,
       pg_temp.only_in(u.description, f.description) AS after_update,
       pg_temp.only_in(f.description, u.description) AS fresh_install
FROM updated u FULL JOIN fresh f USING (object)
WHERE u.description IS DISTINCT FROM f.description
ORDER BY 1;
\x off
-- (the comparison saw every kind of object the extension has)
SELECT ARRAY['aggregate', 'cast', 'extension', 'function', 'operator', 'table', 'type']
       <@ array_agg(DISTINCT split_part(object, ' ', 1)) AS every_kind_compared
FROM fresh;
