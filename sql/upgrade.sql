-- The install script chain: version 1.0, then ALTER EXTENSION ... UPDATE to
-- the current version, ends with the same objects as a fresh install; and a
-- value written by version 1.0 (test/fixtures/tlbf-1.0.txt: keys 1..2000
-- added one a second from 2024-01-01 00:00 UTC, span 1 hour) stays
-- readable and keeps its answers.
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
SELECT extversion FROM pg_extension WHERE extname = 'tlbf';
SELECT * FROM answers();
SELECT f::text = :'fixture' AS same_bytes FROM kept;
-- the old value works with the new functions
SELECT (SELECT tlbf_contains(tlbf_union_agg(f), 1500, '2024-01-01 00:30+00') FROM kept) AS union_agg_of_old_value,
       (SELECT NOT tlbf_retirable(f, '2024-01-01 00:40+00') FROM kept) AS nothing_to_retire_yet;

-- the extension's objects after the updates ...
CREATE TEMP TABLE updated AS
SELECT pg_describe_object(classid, objid, 0) AS object
FROM pg_depend WHERE deptype = 'e'
  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'tlbf');
SELECT count(*) AS objects, md5(string_agg(object, ',' ORDER BY object)) AS objects_md5 FROM updated;
\c :regression_db
DROP DATABASE tlbf_upgrade;
-- ... and after a fresh install of the current version (this database)
SELECT count(*) AS objects,
       md5(string_agg(pg_describe_object(classid, objid, 0), ',' ORDER BY pg_describe_object(classid, objid, 0))) AS objects_md5
FROM pg_depend WHERE deptype = 'e'
  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'tlbf');
