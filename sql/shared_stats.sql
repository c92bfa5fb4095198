-- The counters of shared filters (tlbf_shared_stats) against a known
-- workload, to the row: keys the trigger and tlbf_shared_add took and
-- turned away, keys asked and found, a filter refused for room, and a
-- reset.  On a server that preloads the library, the worker off (so no
-- save: last_saved stays NULL; test/t/003_shared.pl sees one).  Runs after
-- setup.
SELECT tlbf_shared_create('counted', '1 hour', 1e-6, 1000);
CREATE TABLE counted (k int);
CREATE TRIGGER dedup BEFORE INSERT ON counted
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('counted', 'k');
SELECT added, rejected, lookups, found, grown, refused_full, last_saved, stats_reset <= now() AS reset_at_creation
FROM tlbf_shared_stats() WHERE name = 'counted';

-- 120 rows, 20 of them repeats within the statement; then 20 rows, 10 of
-- them seen before; then one row rolled back (taken when it was tried)
INSERT INTO counted SELECT g FROM generate_series(1, 100) g
UNION ALL SELECT g FROM generate_series(1, 20) g;
INSERT INTO counted SELECT g FROM generate_series(91, 110) g;
BEGIN;
INSERT INTO counted VALUES (200);
ROLLBACK;
SELECT tlbf_shared_add('counted', 300) AS first, tlbf_shared_add('counted', 300) AS again;
SELECT count(*) AS stored FROM counted;

-- 400 keys asked: 1-110 and 300 are there, 200 is not (rolled back);
-- then one each by the other questions
SELECT count(*) FILTER (WHERE tlbf_shared_contains('counted', g)) AS found
FROM generate_series(1, 400) g;
SELECT tlbf_shared_contains_fields('counted', '5') AS by_fields,
       tlbf_shared_last_seen('counted', 999) IS NULL AS never_seen,
       tlbf_shared_probability('counted', 1) > 0 AS probably;

-- added: 100 + 10 + 1 (rolled back) + 1 = 112; rejected: 20 + 10 + 1 = 31
-- (the trigger's 141 rows tried are added + rejected but for
-- tlbf_shared_add's two); lookups 403, found 113
SELECT added, rejected, lookups, found, refused_full, last_saved
FROM tlbf_shared_stats() WHERE name = 'counted';

-- A filter refused for room: a region of 64 kB for a capacity of 1,000,
-- offered 30,000 new keys a transaction.  Once full, it refuses every
-- insertion (53200) until it has room: each failed statement counts one.
SELECT tlbf_shared_create('cramped', '1 hour', 0.01, 1000, 65536);
CREATE TEMP TABLE cramming (round int, outcome text);
INSERT INTO cramming VALUES (1, outcome($$SELECT count(*) FROM generate_series(30000, 59999) g WHERE tlbf_shared_add('cramped', g)$$));
INSERT INTO cramming VALUES (2, outcome($$SELECT count(*) FROM generate_series(60000, 89999) g WHERE tlbf_shared_add('cramped', g)$$));
INSERT INTO cramming VALUES (3, outcome($$SELECT count(*) FROM generate_series(90000, 119999) g WHERE tlbf_shared_add('cramped', g)$$));
INSERT INTO cramming VALUES (4, outcome($$SELECT count(*) FROM generate_series(120000, 149999) g WHERE tlbf_shared_add('cramped', g)$$));
INSERT INTO cramming VALUES (5, outcome($$SELECT count(*) FROM generate_series(150000, 179999) g WHERE tlbf_shared_add('cramped', g)$$));
INSERT INTO cramming VALUES (6, outcome($$SELECT count(*) FROM generate_series(180000, 209999) g WHERE tlbf_shared_add('cramped', g)$$));
SELECT count(*) FILTER (WHERE outcome LIKE '53200:%') > 0 AS some_refused,
       count(*) FILTER (WHERE outcome NOT LIKE '53200:%' AND outcome <> 'ok') AS other_errors
FROM cramming;
SELECT s.grown > 0 AS grew,
       s.refused_full = (SELECT count(*) FROM cramming WHERE outcome LIKE '53200:%') AS refusals_counted
FROM tlbf_shared_stats() s WHERE name = 'cramped';

-- A reset: one filter by name, then all of this database's
SELECT tlbf_shared_stats_reset('counted') AS reset_one;
SELECT name, added, rejected, lookups, found, grown, refused_full
FROM tlbf_shared_stats() WHERE name = 'counted';
SELECT tlbf_shared_stats_reset() >= 2 AS reset_all;
SELECT name, added + rejected + lookups + found + grown + refused_full AS counted
FROM tlbf_shared_stats() WHERE name IN ('counted', 'cramped') ORDER BY name COLLATE "C";
SELECT tlbf_shared_stats_reset('no such filter') AS reset_none;

-- who may read them, who may reset them
SELECT has_function_privilege('tlbf_user', 'tlbf_shared_stats()', 'EXECUTE') AS user_reads,
       has_function_privilege('tlbf_user', 'tlbf_shared_stats_reset(text)', 'EXECUTE') AS user_resets,
       has_function_privilege('tlbf_admin', 'tlbf_shared_stats_reset(text)', 'EXECUTE') AS admin_resets;

DROP TABLE counted;
SELECT tlbf_shared_drop('counted'), tlbf_shared_drop('cramped');
