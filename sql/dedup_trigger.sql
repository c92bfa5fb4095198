-- The dedup trigger keeps a unique index's promise within the span: a row
-- is rejected only if a row with the same key was stored by a committed
-- transaction (or by this one), plus false positives.  Keys of rows that
-- were not stored (a failed statement, a rollback, a savepoint rolled
-- back, a deferred constraint failing at commit, ROLLBACK PREPARED, ON
-- CONFLICT skipping the row) leave nothing.  (Concurrent transactions:
-- test/isolation/specs/dedup_trigger.spec.)
SELECT tlbf_shared_create('signups', '1 hour', 1e-6);
CREATE TABLE signups (email text, age int CHECK (age >= 18));
CREATE TRIGGER dedup BEFORE INSERT ON signups
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('signups', 'email');

-- a failed insert, corrected and retried, is stored
SELECT outcome($$INSERT INTO signups VALUES ('ann@example.com', 17)$$);
INSERT INTO signups VALUES ('ann@example.com', 21);
-- a row rejected (here for a key still waiting to be folded into the
-- filter) writes nothing: its transaction takes no XID
BEGIN;
INSERT INTO signups VALUES ('ann@example.com', 22);
SELECT pg_current_xact_id_if_assigned() IS NULL AS no_xid;
COMMIT;
-- a rolled-back transaction, a failing later statement
BEGIN;
INSERT INTO signups VALUES ('bob@example.com', 30);
ROLLBACK;
INSERT INTO signups VALUES ('bob@example.com', 31);
BEGIN;
INSERT INTO signups VALUES ('dan@example.com', 30);
SELECT 1 / 0;
ROLLBACK;
INSERT INTO signups VALUES ('dan@example.com', 31);
-- a savepoint rolled back: the same transaction stores the key again
BEGIN;
SAVEPOINT before_cat;
INSERT INTO signups VALUES ('cat@example.com', 40);
ROLLBACK TO SAVEPOINT before_cat;
INSERT INTO signups VALUES ('cat@example.com', 41);
-- and a key added in this transaction is a duplicate within it
INSERT INTO signups VALUES ('cat@example.com', 42);
COMMIT;
-- two rows of one statement with the same key: the first is stored
INSERT INTO signups VALUES ('kim@example.com', 20), ('kim@example.com', 21);
-- a prepared transaction rolled back leaves nothing; one committed stays
BEGIN;
INSERT INTO signups VALUES ('fay@example.com', 50);
PREPARE TRANSACTION 'fay';
ROLLBACK PREPARED 'fay';
INSERT INTO signups VALUES ('fay@example.com', 51);
BEGIN;
INSERT INTO signups VALUES ('gus@example.com', 60);
PREPARE TRANSACTION 'gus';
COMMIT PREPARED 'gus';
INSERT INTO signups VALUES ('gus@example.com', 61);
-- committed keys are rejected, as a unique index would
INSERT INTO signups VALUES ('ann@example.com', 99), ('bob@example.com', 99);
SELECT email, age FROM signups ORDER BY email, age;

-- a deferred constraint failing at commit leaves nothing
CREATE TABLE orders (id int UNIQUE DEFERRABLE INITIALLY DEFERRED, email text);
CREATE TRIGGER dedup BEFORE INSERT ON orders
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('signups', 'email');
BEGIN;
INSERT INTO orders VALUES (1, 'eve@example.com'), (1, 'zed@example.com');
COMMIT;
INSERT INTO orders VALUES (2, 'eve@example.com'), (3, 'zed@example.com');
SELECT id, email FROM orders ORDER BY id;

-- 'error' raises 23505 for a key a committed transaction stored
CREATE TABLE payments (ref text);
SELECT tlbf_shared_create('payments', '1 hour', 1e-6);
CREATE TRIGGER dedup BEFORE INSERT ON payments
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('error', 'payments', 'ref');
BEGIN;
INSERT INTO payments VALUES ('p-1');
ROLLBACK;
INSERT INTO payments VALUES ('p-1');
\set VERBOSITY terse
INSERT INTO payments VALUES ('p-1');
\set VERBOSITY default
SELECT count(*) AS payments FROM payments;

-- The trigger sees the row as stored: a BEFORE INSERT trigger that fires
-- after it (names sort after) is refused; fired before it, a trigger that
-- skips a row or changes its key does so before the key is taken.
CREATE TABLE ads (ad text);
SELECT tlbf_shared_create('ads', '1 hour', 1e-6);
CREATE FUNCTION skip_or_lower() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.ad = 'skip' THEN
        RETURN NULL;
    END IF;
    NEW.ad := lower(NEW.ad);
    RETURN NEW;
END $$;
CREATE TRIGGER dedup BEFORE INSERT ON ads
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('ads', 'ad');
CREATE TRIGGER normalize BEFORE INSERT ON ads FOR EACH ROW EXECUTE FUNCTION skip_or_lower();
INSERT INTO ads VALUES ('Ad-1');
ALTER TRIGGER dedup ON ads RENAME TO zz_dedup;
INSERT INTO ads VALUES ('Ad-1'), ('ad-1'), ('skip'), ('AD-2');
INSERT INTO ads VALUES ('ad-2');
SELECT ad FROM ads ORDER BY ad;
SELECT tlbf_shared_contains('ads', 'skip') AS skipped_key_taken;
-- What the trigger works out from its arguments and the table is kept
-- across statements, and worked out again when the table changes: a
-- BEFORE trigger added after it, a key column renamed.
CREATE TRIGGER zzz_late BEFORE INSERT ON ads FOR EACH ROW EXECUTE FUNCTION skip_or_lower();
INSERT INTO ads VALUES ('ad-3');
DROP TRIGGER zzz_late ON ads;
DROP TRIGGER normalize ON ads;
ALTER TABLE ads RENAME COLUMN ad TO ad_text;
INSERT INTO ads VALUES ('ad-3');
ALTER TABLE ads RENAME COLUMN ad_text TO ad;
INSERT INTO ads VALUES ('ad-3'), ('ad-3');
SELECT count(*) AS "ad-3 rows" FROM ads WHERE ad = 'ad-3';

-- INSERT ... ON CONFLICT may skip a row the BEFORE trigger let through:
-- it needs the AFTER trigger, which tells which rows were stored.
CREATE TABLE clicks (id int PRIMARY KEY, ad text);
SELECT tlbf_shared_create('clicks', '1 hour', 1e-6);
CREATE TRIGGER dedup BEFORE INSERT ON clicks
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('clicks', 'ad');
INSERT INTO clicks VALUES (1, 'ivy');
INSERT INTO clicks VALUES (1, 'jay') ON CONFLICT (id) DO NOTHING;
CREATE TRIGGER dedup_stored AFTER INSERT ON clicks
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('clicks', 'ad');
INSERT INTO clicks VALUES (1, 'jay') ON CONFLICT (id) DO NOTHING;
INSERT INTO clicks VALUES (2, 'jay') ON CONFLICT (id) DO NOTHING;
INSERT INTO clicks VALUES (3, 'ivy'), (4, 'jay') ON CONFLICT (id) DO NOTHING;
INSERT INTO clicks VALUES (2, 'kay') ON CONFLICT (id) DO UPDATE SET ad = 'kay';
INSERT INTO clicks VALUES (5, 'kay');
-- a row skipped earlier in the same transaction did not take its key
BEGIN;
INSERT INTO clicks VALUES (1, 'lee') ON CONFLICT (id) DO NOTHING;
INSERT INTO clicks VALUES (6, 'lee');
COMMIT;
-- ... and the row that took it in a savepoint rolled back leaves it free:
-- its confirmation marks its own reservation, not the skipped row's
BEGIN;
INSERT INTO clicks VALUES (1, 'mia') ON CONFLICT (id) DO NOTHING;
SAVEPOINT s;
INSERT INTO clicks VALUES (7, 'mia');
ROLLBACK TO s;
COMMIT;
INSERT INTO clicks VALUES (8, 'mia');
SELECT id, ad FROM clicks ORDER BY id;
-- A trigger that runs SQL in the middle of a statement (an audit trigger)
-- advances the command counter: the rows of one statement, or of one COPY,
-- still see each other's keys.
CREATE TABLE click_audit (ad text);
CREATE FUNCTION audit_click() RETURNS trigger LANGUAGE plpgsql
    AS $$BEGIN INSERT INTO click_audit VALUES (NEW.ad); RETURN NEW; END$$;
CREATE TRIGGER audit BEFORE INSERT ON clicks FOR EACH ROW EXECUTE FUNCTION audit_click();
INSERT INTO clicks VALUES (20, 'ned'), (21, 'ned'), (22, 'ned');
INSERT INTO clicks SELECT g, 'ola' FROM generate_series(23, 25) g ON CONFLICT (id) DO NOTHING;
COPY clicks FROM stdin;
26	pam
27	pam
\.
BEGIN;
COPY clicks FROM stdin;
28	rex
\.
INSERT INTO clicks VALUES (29, 'rex');
COMMIT;
-- ... and a statement skipped by ON CONFLICT leaves its key free for the next
BEGIN;
INSERT INTO clicks VALUES (20, 'sue') ON CONFLICT (id) DO NOTHING;
INSERT INTO clicks VALUES (30, 'sue');
COMMIT;
SELECT id, ad FROM clicks WHERE id >= 20 ORDER BY id;
SELECT count(*) AS "audited rows" FROM click_audit;
DROP TRIGGER audit ON clicks;
-- The AFTER trigger must confirm every row when its statement ends: a
-- deferrable one, or one with a WHEN condition, is refused.
DROP TRIGGER dedup_stored ON clicks;
CREATE CONSTRAINT TRIGGER dedup_stored AFTER INSERT ON clicks DEFERRABLE
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('clicks', 'ad');
INSERT INTO clicks VALUES (31, 'tom');
DROP TRIGGER dedup_stored ON clicks;
CREATE TRIGGER dedup_stored AFTER INSERT ON clicks FOR EACH ROW
    WHEN (NEW.id > 100) EXECUTE FUNCTION tlbf_reject_recent('clicks', 'ad');
INSERT INTO clicks VALUES (31, 'tom');
DROP TRIGGER dedup_stored ON clicks;
-- An AFTER trigger that does not fire in this session (it fires on the
-- origin only, the BEFORE trigger always) confirms nothing: the BEFORE
-- trigger then takes keys as stored, and refuses ON CONFLICT.
CREATE TRIGGER dedup_stored AFTER INSERT ON clicks
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('clicks', 'ad');
ALTER TABLE clicks ENABLE ALWAYS TRIGGER dedup;
SET session_replication_role = replica;
INSERT INTO clicks VALUES (31, 'uma');
INSERT INTO clicks VALUES (32, 'uma');
INSERT INTO clicks VALUES (33, 'val') ON CONFLICT (id) DO NOTHING;
RESET session_replication_role;
INSERT INTO clicks VALUES (34, 'uma'), (35, 'wes') ON CONFLICT (id) DO NOTHING;
SELECT id, ad FROM clicks WHERE id > 30 ORDER BY id;
ALTER TABLE clicks ENABLE TRIGGER dedup;
-- without the AFTER trigger (dropped since), ON CONFLICT is refused again
DROP TRIGGER dedup_stored ON clicks;
INSERT INTO clicks VALUES (7, 'max') ON CONFLICT (id) DO NOTHING;

-- Bursts: all the keys of a transaction come at one time (its start), and
-- a filter's region never grows.  40,000 keys at one time, three times,
-- fit a filter made for 200,000 keys: each is found, and no row repeats a
-- key (a new key may be taken for a repeat at the error rate).
SELECT tlbf_shared_create('burst', '1 hour', 0.001, 200000);
CREATE TABLE burst (id int PRIMARY KEY, k int);
CREATE TRIGGER dedup BEFORE INSERT ON burst
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('burst', 'k');
CREATE TRIGGER dedup_stored AFTER INSERT ON burst
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('burst', 'k');
INSERT INTO burst SELECT g, g FROM generate_series(1, 40000) g;
INSERT INTO burst SELECT g, g FROM generate_series(20001, 60000) g ON CONFLICT (id) DO NOTHING;
INSERT INTO burst SELECT g, g FROM generate_series(60001, 100000) g;
SELECT count(*) = count(DISTINCT k) AS no_repeats, count(*) >= 100000 - 200 AS new_keys_stored,
       (SELECT count(*) FROM generate_series(1, 100000) g WHERE NOT tlbf_shared_contains('burst', g)) AS absent,
       (SELECT (info->>'truncated')::int FROM tlbf_shared_list() WHERE name = 'burst') AS truncated
FROM burst;
-- ON CONFLICT skipping 20,000 rows of one statement: their keys are not
-- taken; the keys of the 20,000 it stored are
INSERT INTO burst SELECT g, g + 100000 FROM generate_series(80001, 120000) g ON CONFLICT (id) DO NOTHING;
SELECT count(*) FILTER (WHERE g <= 100000 AND tlbf_shared_contains('burst', g + 100000)) <= 100
           AS skipped_keys_free,
       count(*) FILTER (WHERE g > 100000 AND NOT tlbf_shared_contains('burst', g + 100000))
           AS stored_keys_absent
FROM generate_series(80001, 120000) g;

-- a generated key column is refused: a BEFORE trigger sees it as NULL
CREATE TABLE skus (customer int, sku text, sku_norm text GENERATED ALWAYS AS (lower(sku)) STORED);
CREATE TRIGGER dedup BEFORE INSERT ON skus
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('clicks', 'customer', 'sku_norm');
INSERT INTO skus (customer, sku) VALUES (1, 'A');

-- A filter written before 1.4 (format 1, no kind of key) by a trigger
-- keyed on two columns holds their fields combined: asked with ROW(...), it
-- finds them.  (Made here from a filter of format 2 holding ROW(1, 42),
-- whose fields hash as the trigger's do, with its header set back to
-- format 1: shared filters are of format 3 since 1.5.)
CREATE TABLE pairs (user_id int, ad_id int);
SELECT tlbf_shared_create('pairs', '1 hour', 1e-6);
CREATE TRIGGER dedup BEFORE INSERT ON pairs
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('pairs', 'user_id', 'ad_id');
INSERT INTO pairs VALUES (1, 42);
CREATE FUNCTION format_1(f tlbf) RETURNS tlbf LANGUAGE sql AS $$
    SELECT overlay(overlay(overlay(f::bytea PLACING '\x0100'::bytea FROM 5)
                           PLACING '\x0000'::bytea FROM 11)
                   PLACING '\x00000000'::bytea FROM 17)::tlbf
$$;
INSERT INTO tlbf_shared_filters (name, filter, region_bytes, saved_at)
SELECT 'pairs_v1', format_1(tlbf_add(tlbf_create_format2('1 hour', 1e-6, 1000), ROW(1, 42), now())),
       1048576, now();
SELECT tlbf_info(tlbf_shared_get('pairs_v1'))->'version' AS version,
       tlbf_shared_contains('pairs_v1', ROW(1, 42)) AS row_found,
       tlbf_shared_contains('pairs_v1', ROW(1, 43)) AS other_row;
-- Its fields' text cannot be read as kinds it does not record: refused.
SELECT outcome($$SELECT tlbf_shared_contains_fields('pairs_v1', '1', '42')$$);

DROP TABLE signups, orders, payments, ads, clicks, burst, skus, pairs;
DROP FUNCTION format_1(tlbf);
DROP FUNCTION skip_or_lower();
DROP TABLE click_audit;
DROP FUNCTION audit_click();
SELECT tlbf_shared_drop(name) FROM tlbf_shared_list()
WHERE name IN ('signups', 'payments', 'ads', 'clicks', 'burst', 'pairs', 'pairs_v1');
