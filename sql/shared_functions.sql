-- Shared filters on a server that preloads the library (the worker off):
-- what tlbf_shared_rebuild accepts and refuses, and the sizes
-- tlbf_shared_create reports.  Runs after setup.
CREATE TABLE rebuild_source (k int, at timestamptz);
INSERT INTO rebuild_source SELECT g, now() - g * interval '1 s' FROM generate_series(1, 100) g;
SELECT tlbf_shared_create('rebuilt', '1 hour');
SELECT tlbf_shared_rebuild('rebuilt', 'SELECT k, at FROM rebuild_source');
SELECT count(*) FILTER (WHERE NOT tlbf_shared_contains('rebuilt', g)) AS missed
FROM generate_series(1, 100) g;

-- rows with a NULL time are skipped, as tlbf_agg skips them
SELECT tlbf_shared_rebuild('rebuilt', 'SELECT 1, NULL::timestamptz');
-- a time that is not finite, or too many key columns: an error, not 0
SELECT outcome($$SELECT tlbf_shared_rebuild('rebuilt', 'SELECT 1, ''infinity''::timestamptz')$$);
SELECT outcome(format('SELECT tlbf_shared_rebuild(%L, %L)', 'rebuilt',
       'SELECT ' || (SELECT string_agg(g::text, ', ') FROM generate_series(1, 9) g) || ', now()'));
SELECT outcome($$SELECT tlbf_shared_rebuild('rebuilt', 'SELECT 1')$$);
-- a statement that returns no rows says so; one that returns rows may
-- change data (the caller's own query, with the caller's rights)
SELECT outcome($$SELECT tlbf_shared_rebuild('rebuilt', 'DELETE FROM rebuild_source WHERE k > 90')$$);
SELECT tlbf_shared_rebuild('rebuilt', 'DELETE FROM rebuild_source WHERE k > 90 RETURNING k, at');
SELECT count(*) AS rows_left FROM rebuild_source;

-- when a key was last added, and how sure a "yes" is (as for a tlbf value)
SELECT tlbf_shared_last_seen('rebuilt', 5) @> (SELECT at FROM rebuild_source WHERE k = 5) AS range_holds_it,
       tlbf_shared_last_seen('rebuilt', -5) IS NULL AS absent_is_null,
       tlbf_shared_probability('rebuilt', 5) > 0.99 AS present_near_certain,
       tlbf_shared_probability('rebuilt', -5) AS absent_is_zero,
       tlbf_shared_probability('rebuilt', 5, prior => NULL) IS NULL AS null_prior;
SELECT outcome($$SELECT tlbf_shared_probability('rebuilt', 5, now(), '2 hours')$$);
SELECT outcome($$SELECT tlbf_shared_last_seen('no such filter', 5)$$);

-- the trigger's threshold: a row is skipped only when the probability that
-- its key is a recent duplicate reaches it (prior 0: never)
CREATE TABLE clicks (k int);
SELECT tlbf_shared_create('clicks', '1 hour');
CREATE TRIGGER sure BEFORE INSERT ON clicks
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('threshold=0.5', 'clicks', 'k');
INSERT INTO clicks VALUES (1), (1), (2);
SELECT count(*) AS rows_after_threshold_half FROM clicks;
DROP TRIGGER sure ON clicks;
CREATE TRIGGER never_sure BEFORE INSERT ON clicks
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('error', 'threshold=0.5', 'prior=0', 'clicks', 'k');
INSERT INTO clicks VALUES (1), (1);
SELECT count(*) AS rows_after_prior_zero FROM clicks;
DROP TRIGGER never_sure ON clicks;
CREATE TRIGGER bad BEFORE INSERT ON clicks
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('threshold=2', 'clicks', 'k');
SELECT outcome($$INSERT INTO clicks VALUES (3)$$);
DROP TABLE clicks;
SELECT tlbf_shared_drop('clicks');

-- A composite key: the trigger keyed on (user_id, ad_id) and the SQL
-- calls asked with ROW(...) hash alike; integer fields of any width and
-- untyped fields convert; another kind of key is refused, not missed.
SELECT tlbf_shared_create('ad_clicks', '1 hour');
CREATE TABLE ad_clicks (user_id bigint, ad_id int, at timestamptz DEFAULT now());
CREATE TRIGGER dedup BEFORE INSERT ON ad_clicks
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('ad_clicks', 'user_id', 'ad_id');
INSERT INTO ad_clicks (user_id, ad_id) VALUES (1, 42), (1, 42), (1, 43), (2, 42);
SELECT count(*) AS stored FROM ad_clicks;
SELECT tlbf_shared_contains('ad_clicks', ROW(1, 42)) AS seen,
       tlbf_shared_contains('ad_clicks', ROW(1::int2, '42')) AS seen_typed_otherwise,
       tlbf_shared_contains('ad_clicks', ROW(1, 44)) AS unseen,
       tlbf_shared_add('ad_clicks', ROW(2, 42)) AS added_again,
       tlbf_shared_add('ad_clicks', ROW(3, 42)) AS added_new,
       tlbf_shared_probability('ad_clicks', ROW(1, 42), prior => 0.5) > 0.5 AS likely,
       tlbf_shared_last_seen('ad_clicks', ROW(9, 9)) IS NULL AS never;
INSERT INTO ad_clicks (user_id, ad_id) VALUES (3, 42);
SELECT count(*) AS stored FROM ad_clicks;
SELECT tlbf_info(tlbf_shared_get('ad_clicks'))->'key_kinds' AS key_kinds;
SELECT outcome($$SELECT tlbf_shared_contains('ad_clicks', 1)$$);
SELECT outcome($$SELECT tlbf_shared_contains('ad_clicks', ROW(1, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid))$$);
-- The same key from a driver's untyped parameters: each field's text read
-- as the filter's kind for it (ROW($1, $2) cannot take them).
PREPARE fields_asked(unknown, unknown) AS SELECT tlbf_shared_contains_fields('ad_clicks', $1, $2);
EXECUTE fields_asked('1', '42');
EXECUTE fields_asked('1', '44');
EXECUTE fields_asked('1', NULL);
INSERT INTO ad_clicks (user_id, ad_id) VALUES (5, NULL);
EXECUTE fields_asked('5', NULL);
DEALLOCATE fields_asked;
SELECT tlbf_shared_contains_fields('ad_clicks', '3', '42') AS seen,
       tlbf_shared_contains_fields('ad_clicks', VARIADIC ARRAY['2', '42']) AS seen_as_array;
SELECT outcome($$SELECT tlbf_shared_contains_fields('ad_clicks', '1', 'x')$$);
SELECT outcome($$SELECT tlbf_shared_contains_fields('ad_clicks', '1')$$);
SELECT outcome($$SELECT tlbf_shared_contains_fields('ad_clicks', VARIADIC '{}'::text[])$$);
SELECT outcome($$SELECT tlbf_shared_contains_fields('ad_clicks', VARIADIC '{{1,42}}'::text[])$$);
SELECT outcome($$SELECT tlbf_shared_contains_fields('ad_clicks', '1', '2', '3', '4', '5', '6', '7', '8', '9')$$);
DROP TABLE ad_clicks;
SELECT tlbf_shared_drop('ad_clicks');

-- A shared filter records its kind with its first key, whichever call adds it.
SELECT tlbf_shared_create('typed', '1 hour');
PREPARE shared_asked AS SELECT tlbf_shared_contains('typed', $1);
SELECT tlbf_shared_add('typed', 42::bigint) AS first, tlbf_shared_add('typed', '42') AS untyped_again;
EXECUTE shared_asked('42');
EXECUTE shared_asked('43');
SELECT outcome($$SELECT tlbf_shared_rebuild('typed', 'SELECT ''x''::text, now()')$$);
SELECT tlbf_shared_rebuild('typed', 'SELECT g::numeric, now() FROM generate_series(100, 109) g') AS rebuilt,
       tlbf_shared_contains('typed', 105) AS rebuilt_found;
-- a trigger whose key columns are of another kind than the filter's first
-- keys: the insert fails with 42804 (a text column's values are parsed:
-- 22P02 for one that is no integer), no row is stored, no key added
CREATE TABLE typed_events (id uuid, name text);
CREATE TRIGGER dedup_id BEFORE INSERT ON typed_events
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('typed', 'id');
SELECT outcome($$INSERT INTO typed_events VALUES ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '1')$$);
DROP TRIGGER dedup_id ON typed_events;
CREATE TRIGGER dedup_name BEFORE INSERT ON typed_events
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('typed', 'name');
SELECT outcome($$INSERT INTO typed_events VALUES (NULL, 'x')$$);
INSERT INTO typed_events VALUES (NULL, '42'), (NULL, '31337');
SELECT count(*) AS stored FROM typed_events;
DROP TABLE typed_events;

-- a key dated past tlbf.max_future is refused here too
SET TimeZone = 'UTC';
SELECT outcome($$SELECT tlbf_shared_add('typed', 7, '2999-01-01 00:00+00')$$);
SELECT outcome($$SELECT tlbf_shared_rebuild('typed', 'SELECT 7, ''2999-01-01 00:00+00''::timestamptz')$$);
SELECT tlbf_shared_contains('typed', 7) AS added_anyway;
SELECT tlbf_shared_drop('typed');

-- a filter larger than shared memory: the size it would need, as computed
SELECT outcome($$SELECT tlbf_shared_create('huge', '1 hour', 0.01, 1099511627776)$$);
SELECT outcome($$SELECT tlbf_shared_create('', '1 hour')$$);
SELECT outcome(format('SELECT tlbf_shared_create(%L, %L)', repeat('n', 64), '1 hour'));

-- nobody but the extension writes the snapshot table
CREATE ROLE regress_tlbf_ops IN ROLE tlbf_admin;
SET ROLE regress_tlbf_ops;
SELECT count(*) AS rows_readable FROM tlbf_shared_filters WHERE name = 'rebuilt';
SELECT outcome($$INSERT INTO tlbf_shared_filters SELECT 'x', filter, region_bytes, saved_at FROM tlbf_shared_filters$$);
SELECT outcome($$UPDATE tlbf_shared_filters SET region_bytes = -8$$);
SELECT outcome($$DELETE FROM tlbf_shared_filters$$);
SELECT tlbf_shared_drop('rebuilt');
RESET ROLE;
DROP ROLE regress_tlbf_ops;
DROP TABLE rebuild_source;
-- tlbf_shared_get copies a filter of over 16 MB in pieces, each under the
-- filter's lock (and cancellable between them): the copy holds every key.
SELECT tlbf_shared_create('large', '1 hour', 0.000001, 1500000, 48000000);
SELECT tlbf_shared_rebuild('large', $$SELECT g, now() FROM generate_series(1, 1500000) g$$);
WITH f AS MATERIALIZED (SELECT tlbf_shared_get('large') AS f)
SELECT pg_column_size(f) > 16 * 1024 * 1024 AS in_pieces,
       (SELECT count(*) FROM generate_series(1, 1500000) g WHERE NOT tlbf_contains(f, g)) AS missing,
       tlbf_info(f)->'inserted' = (SELECT info->'inserted' FROM tlbf_shared_list() WHERE name = 'large')
           AS same_count
FROM f;
SELECT tlbf_shared_drop('large');
SELECT count(*) AS filters_left FROM tlbf_shared_list();
