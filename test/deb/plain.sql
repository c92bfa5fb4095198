-- A package installed with apt, in a fresh cluster without the library
-- preloaded (scripts/test_deb.sh compares the output with plain.out).
-- :version is the control file's default_version.
CREATE EXTENSION tlbf;
SELECT 'installs the control file''s version: ' || (extversion = :'version')
FROM pg_extension WHERE extname = 'tlbf';
SELECT 'updates from 1.0 to it: ' || count(*)
FROM pg_extension_update_paths('tlbf')
WHERE source = '1.0' AND target = :'version' AND path IS NOT NULL;
WITH f AS (SELECT tlbf_add(tlbf_create('1 hour'), 'k', '2024-01-01 12:00+00') AS f)
SELECT 'a key added at 12:00, at 13:00: ' || tlbf_contains(f, 'k', '2024-01-01 13:00+00')
       || ', another key: ' || tlbf_contains(f, 'other', '2024-01-01 13:00+00')
FROM f;
WITH f AS (SELECT tlbf_agg(g, '2024-01-01 00:00+00'::timestamptz + g * interval '1 second', '1 hour') AS f
           FROM generate_series(1, 1000) g)
SELECT 'keys of 1000 an aggregate finds: '
       || count(*) FILTER (WHERE tlbf_contains(f, g, '2024-01-01 00:20+00'))
FROM f, generate_series(1, 1000) g;
SELECT tlbf_summary(tlbf_create('10 minutes'));
SELECT 'bytea round trip: ' || (f::bytea::tlbf::text = f::text)
FROM (SELECT tlbf_add(tlbf_create('1 hour'), 1, '2024-01-01 12:00+00') AS f) AS v;
