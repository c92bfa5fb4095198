-- Shared filters of both formats (issue 36, step 3).  Format 3 is the
-- default since 1.5 (tlbf.shared_format = 3); format 2 stays for filters
-- made before it, or under tlbf.shared_format = 2.  Every shared function
-- and the dedup trigger on one of each: keys found, the error rate within
-- 1.1x of the target, a copy, last seen and the posterior; a full region
-- of format 3 refuses keys (53200) rather than put them in a full piece
-- and raise the error rate; 'on_full=drop' drops the oldest bands
-- instead, with a WARNING.  Runs after setup, on a server that preloads
-- the library.
SHOW tlbf.shared_format;
SELECT tlbf_shared_create('s3', '1 hour', 0.01, 10000);
SET tlbf.shared_format = 2;
SELECT tlbf_shared_create('s2', '1 hour', 0.01, 10000);
SELECT name, info->'version' AS version, info->'declared' AS declared,
       (info->>'region_bytes')::int >= 65536 AS has_region
FROM tlbf_shared_list() WHERE name IN ('s2', 's3') ORDER BY name;
-- tlbf.shared_format only chooses what tlbf_shared_create makes
RESET tlbf.shared_format;
SELECT n, count(*) FILTER (WHERE tlbf_shared_add(n, g)) AS added
FROM unnest(ARRAY['s2', 's3']) n, generate_series(1, 5000) g GROUP BY n ORDER BY n;
SELECT n, count(*) FILTER (WHERE tlbf_shared_add(n, g)) AS added_again
FROM unnest(ARRAY['s2', 's3']) n, generate_series(1, 5000) g GROUP BY n ORDER BY n;
SELECT n, count(*) FILTER (WHERE g <= 5000 AND NOT tlbf_shared_contains(n, g)) AS missed,
       count(*) FILTER (WHERE g > 5000 AND tlbf_shared_contains(n, g)) <= 220 AS error_rate_within_1_1x
FROM unnest(ARRAY['s2', 's3']) n, generate_series(1, 25000) g GROUP BY n ORDER BY n;
-- a copy (tlbf_shared_get) answers alike; last seen and the posterior
SELECT n, tlbf_info(f)->'version' AS copy_version,
       (SELECT count(*) FROM generate_series(1, 5000) g WHERE NOT tlbf_contains(f, g)) AS copy_missed
FROM unnest(ARRAY['s2', 's3']) n, LATERAL (SELECT tlbf_shared_get(n) AS f) s ORDER BY n;
SELECT n, upper(tlbf_shared_last_seen(n, 42)) <= now() AS last_seen_known,
       tlbf_shared_last_seen(n, 4242424) IS NULL AS not_added_null,
       tlbf_shared_probability(n, 42, now(), '1 hour', 0.5) > 0.9 AS probable,
       tlbf_shared_probability(n, 4242424, now(), '1 hour', 0.5) AS absent_zero
FROM unnest(ARRAY['s2', 's3']) n ORDER BY n;
-- tlbf_shared_rebuild and the trigger
SELECT n, tlbf_shared_rebuild(n, 'SELECT g, now() FROM generate_series(5001, 6000) g') AS rebuilt
FROM unnest(ARRAY['s2', 's3']) n ORDER BY n;
CREATE TABLE events2 (k int);
CREATE TRIGGER dedup BEFORE INSERT ON events2
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('s2', 'k');
INSERT INTO events2 SELECT g FROM generate_series(5501, 6500) g;
SELECT count(*) AS stored, min(k) AS first_new FROM events2;
CREATE TABLE events3 (k int);
CREATE TRIGGER dedup BEFORE INSERT ON events3
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('s3', 'k');
INSERT INTO events3 SELECT g FROM generate_series(5501, 6500) g;
SELECT count(*) AS stored, min(k) AS first_new FROM events3;

-- A filter of format 2 moves to format 3 on its own: the pass that
-- retires expired keys (the launcher's, every tlbf.naptime; here one by
-- hand) makes it a carrier in its region, its keys answered as before,
-- new keys going to the bands; the carried value goes once its keys have
-- expired (a key at a later time moves the filter's newest time past them).
SET tlbf.shared_format = 2;
SELECT tlbf_shared_create('mover', '1 hour', 0.01, 10000, 1024 * 1024);
RESET tlbf.shared_format;
SELECT count(*) FILTER (WHERE g <= 2000 AND tlbf_shared_add('mover', g, now() - interval '30 minutes')) AS added_earlier,
       count(*) FILTER (WHERE g > 2000 AND tlbf_shared_add('mover', g)) AS added_now
FROM generate_series(1, 4000) g;
SELECT tlbf_shared_rebuild('mover', 'SELECT g, now() FROM generate_series(4001, 5000) g') AS rebuilt;
SELECT count(*) FILTER (WHERE tlbf_shared_contains('mover', g)) AS fp_before FROM generate_series(100001, 120000) g \gset
SELECT tlbf_last_seen(tlbf_shared_get('mover'), 42) AS seen_42_before,
       round(tlbf_shared_probability('mover', 4242, now(), '1 hour', 0.5)::numeric, 6) AS p_4242_before \gset
SELECT count(*) >= 0 AS pass_ran FROM tlbf_maintenance_run();
SELECT info->'version' AS version, info->'carries'->'version' AS carries,
       info->'carries'->'key_kinds' AS carried_kinds, info->'seed' = info->'carries'->'seed' AS same_seed
FROM tlbf_shared_list() WHERE name = 'mover';
-- the same answers: every key, the same false positives among 20,000
-- never added or more (the bands are empty), last seen and the posterior
SELECT count(*) FILTER (WHERE g <= 5000 AND NOT tlbf_shared_contains('mover', g)) AS missed,
       count(*) FILTER (WHERE g > 100000 AND tlbf_shared_contains('mover', g)) >= :fp_before AS fp_kept
FROM generate_series(1, 120000) g WHERE g <= 5000 OR g > 100000;
SELECT tlbf_shared_last_seen('mover', 42) = :'seen_42_before' AS last_seen_same,
       round(tlbf_shared_probability('mover', 4242, now(), '1 hour', 0.5)::numeric, 6) >= :p_4242_before AS posterior_kept;
-- new keys go to the bands; known keys are still refused by the trigger
SELECT count(*) FILTER (WHERE tlbf_shared_add('mover', g)) AS added_after FROM generate_series(4501, 7000) g;
CREATE TABLE moved (k int);
CREATE TRIGGER dedup BEFORE INSERT ON moved
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('mover', 'k');
INSERT INTO moved SELECT g FROM generate_series(6501, 8000) g;
SELECT count(*) AS stored, min(k) AS first_stored FROM moved;
SELECT count(*) FILTER (WHERE NOT tlbf_shared_contains('mover', g)) AS missed_after
FROM generate_series(1, 8000) g;
-- three times the capacity more: the bands split (the carried value moves
-- up before each new band); a copy is a valid value of format 3 carrying
-- the old one, answering alike
SELECT count(*) FILTER (WHERE tlbf_shared_add('mover', g)) AS added_more FROM generate_series(10001, 40000) g;
SELECT tlbf_format(f) AS copy_format, tlbf_info(f)->'carries'->'version' AS copy_carries,
       (tlbf_info(f)->>'band_count')::int > 1 AS bands_split,
       (SELECT count(*) FROM generate_series(1, 40000) g WHERE (g <= 8000 OR g > 10000) AND NOT tlbf_contains(f, g)) AS copy_missed
FROM (SELECT tlbf_shared_get('mover') AS f) s;
-- a later pass keeps it while its keys are live; a key 2 hours ahead
-- makes them expire, and the next pass drops the carried value
SELECT count(*) >= 0 AS pass_ran FROM tlbf_maintenance_run();
SELECT info->'carries'->'version' AS still_carries, info->'key_kinds' AS kinds
FROM tlbf_shared_list() WHERE name = 'mover';
SET tlbf.max_future = '3h';
SELECT tlbf_shared_add('mover', 99999, now() + interval '2 hours') AS added_ahead;
-- (a copy folds the keys of committed transactions in first)
SELECT tlbf_shared_get('mover') IS NOT NULL AS folded;
RESET tlbf.max_future;
SELECT count(*) >= 0 AS pass_ran FROM tlbf_maintenance_run();
SELECT info->'version' AS version, info ? 'carries' AS carries, tlbf_shared_contains('mover', 99999, now() + interval '2 hours') AS ahead_found
FROM tlbf_shared_list() WHERE name = 'mover';
-- a region made small for format 2 (its least, 145,184 bytes for 100,000
-- keys) has no room for two first bands of format 3: the filter stays of
-- format 2 and keeps taking keys
SET tlbf.shared_format = 2;
SELECT tlbf_shared_create('small2', '1 hour', 0.01, 100000, 145184);
RESET tlbf.shared_format;
SELECT count(*) FILTER (WHERE tlbf_shared_add('small2', g)) AS added FROM generate_series(1, 1000) g;
SELECT count(*) >= 0 AS pass_ran FROM tlbf_maintenance_run();
SELECT info->'version' AS version FROM tlbf_shared_list() WHERE name = 'small2';
SELECT count(*) FILTER (WHERE tlbf_shared_add('small2', g)) AS added_after_pass FROM generate_series(1001, 2000) g;
SELECT count(*) FILTER (WHERE NOT tlbf_shared_contains('small2', g)) AS missed FROM generate_series(1, 2000) g;
SELECT tlbf_shared_drop('small2');
-- under tlbf.shared_format = 2 (in the pass's session) a filter stays of format 2
SET tlbf.shared_format = 2;
SELECT tlbf_shared_create('stayer', '1 hour', 0.01, 10000);
SELECT tlbf_shared_add('stayer', 1) AS added;
SELECT count(*) >= 0 AS pass_ran FROM tlbf_maintenance_run();
RESET tlbf.shared_format;
SELECT info->'version' AS version FROM tlbf_shared_list() WHERE name = 'stayer';
DROP TABLE moved;
SELECT tlbf_shared_drop(name) FROM tlbf_shared_list() WHERE name IN ('mover', 'stayer');

-- A region of 64 kB for 1,000 keys, given 200,000 in batches: the
-- default trigger refuses a batch with 53200 once no band fits, every key
-- it took is still found and nothing was dropped.
SELECT tlbf_shared_create('cramped3', '1 hour', 0.01, 1000, 65536);
SELECT tlbf_shared_create('loose3', '1 hour', 0.01, 1000, 65536);
CREATE TABLE cramped3 (k int);
CREATE TRIGGER dedup BEFORE INSERT ON cramped3
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('cramped3', 'k');
CREATE TABLE outcomes3 (batch int, outcome text);
SELECT format('INSERT INTO outcomes3 VALUES (%s, outcome(%L))', b,
              format('INSERT INTO cramped3 SELECT g FROM generate_series(%s, %s) g',
                     b * 10000 + 1, (b + 1) * 10000))
FROM generate_series(0, 19) b \gexec
SELECT count(*) FILTER (WHERE outcome LIKE '53200:%') > 0 AS some_refused,
       count(*) FILTER (WHERE outcome NOT LIKE '53200:%' AND outcome <> 'ok') AS other_errors
FROM outcomes3;
SELECT count(*) FILTER (WHERE NOT tlbf_shared_contains('cramped3', k)) AS stored_missed FROM cramped3;
SELECT info->>'truncated' AS truncated FROM tlbf_shared_list() WHERE name = 'cramped3';
SELECT refused_full > 0 AS counted_refusals FROM tlbf_shared_stats() WHERE name = 'cramped3';
-- ... and with 'on_full=drop' every batch goes in, the oldest bands
-- dropped (a WARNING each time, counted in truncated)
CREATE TABLE loose3 (k int);
CREATE TRIGGER dedup BEFORE INSERT ON loose3
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('on_full=drop', 'loose3', 'k');
SET client_min_messages = error;
SELECT format('INSERT INTO outcomes3 VALUES (%s, outcome(%L))', 100 + b,
              format('INSERT INTO loose3 SELECT g FROM generate_series(%s, %s) g',
                     b * 10000 + 1, (b + 1) * 10000))
FROM generate_series(0, 19) b \gexec
RESET client_min_messages;
SELECT count(*) FILTER (WHERE outcome <> 'ok') AS drop_errors FROM outcomes3 WHERE batch >= 100;
SELECT (info->>'truncated')::int > 0 AS dropped_counted FROM tlbf_shared_list() WHERE name = 'loose3';
-- the newest keys are there
SELECT count(*) FILTER (WHERE NOT tlbf_shared_contains('loose3', g)) AS newest_missed
FROM generate_series(199001, 200000) g;

DROP TABLE events2, events3, cramped3, loose3, outcomes3;
SELECT tlbf_shared_drop(name) FROM tlbf_shared_list() WHERE name IN ('s2', 's3', 'cramped3', 'loose3');
