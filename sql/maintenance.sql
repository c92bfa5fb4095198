-- Registering tlbf columns for retirement, and a maintenance pass by hand
-- (the server here does not preload the library, so no worker runs).
SET TimeZone = 'UTC';

CREATE TABLE user_filters (id int PRIMARY KEY, f tlbf, note text);
-- 40 filters: even ids were last written an hour ago, odd ids just now
INSERT INTO user_filters
SELECT id, f, 'user ' || id
FROM generate_series(1, 40) id,
LATERAL (SELECT agg2(k, now() - CASE WHEN id % 2 = 0 THEN interval '1 hour' ELSE interval '0' END
                          + k * interval '1 ms', '10 minutes' ORDER BY k) AS f
         FROM generate_series(1, 300) k) s;

-- (first with tlbf.maintenance_to_format3 off: values of format 2 stay so)
SET tlbf.maintenance_to_format3 = off;
SELECT tlbf_maintain('user_filters', 'f');
SELECT tlbf_maintain('user_filters', 'f');   -- twice is fine
SELECT tbl, col FROM tlbf_maintained;

SELECT count(*) FILTER (WHERE tlbf_retirable(f)) AS retirable, count(*) AS rows FROM user_filters;
CREATE TEMP TABLE versions AS SELECT id, xmin::text AS version FROM user_filters;

SELECT tbl, col, rows_rewritten, bytes_freed > 0 AS freed_space FROM tlbf_maintenance_run();

-- the idle filters are empty now, the active ones untouched (same row version)
SELECT id % 2 = 0 AS idle, count(*) AS rows,
       max((tlbf_info(f)->>'live_slices')::int) AS max_live_slices,
       max((tlbf_info(f)->>'bytes')::int) AS max_bytes,
       count(*) FILTER (WHERE u.xmin::text <> v.version) AS rewritten
FROM user_filters u JOIN versions v USING (id)
GROUP BY 1 ORDER BY 1;
-- the active ones still answer every key
SELECT count(*) FILTER (WHERE NOT tlbf_contains(f, k)) AS missed
FROM user_filters, generate_series(1, 300) k WHERE id % 2 = 1;
-- nothing left to do
SELECT rows_rewritten, bytes_freed FROM tlbf_maintenance_run();

-- With tlbf.maintenance_to_format3 on (the default) a pass moves every
-- value of format 1 or 2 to format 3 (tlbf_to_format3): the idle ones,
-- empty, become empty values of format 3; the active ones carry their old
-- value, which still answers every key; a second pass has nothing to do.
RESET tlbf.maintenance_to_format3;
CREATE TEMP TABLE before_move AS SELECT id, f FROM user_filters;
SELECT rows_rewritten FROM tlbf_maintenance_run();
SELECT id % 2 = 0 AS idle, count(*) AS rows, min(tlbf_format(f)) AS format,
       count(*) FILTER (WHERE tlbf_info(f) ? 'carries') AS carrying,
       min((tlbf_info(f)->'carries'->>'version')::int) AS carried_version
FROM user_filters GROUP BY 1 ORDER BY 1;
SELECT count(*) FILTER (WHERE tlbf_contains(u.f, k) <> tlbf_contains(b.f, k)) AS answers_changed,
       count(*) FILTER (WHERE k <= 300 AND NOT tlbf_contains(u.f, k)) AS missed
FROM user_filters u JOIN before_move b USING (id), generate_series(1, 2000) k WHERE id % 2 = 1;
SELECT rows_rewritten FROM tlbf_maintenance_run();
-- new keys go to format 3's bands
UPDATE user_filters SET f = tlbf_add(f, 5000 + id, now()) WHERE id <= 2;
SELECT id, tlbf_format(f) AS format, tlbf_contains(f, 5000 + id) AS new_key_found,
       tlbf_contains(f, 10) AS old_key_found
FROM user_filters WHERE id <= 2 ORDER BY id;

-- Only the owner registers; the column must exist and be a tlbf.
CREATE ROLE regress_tlbf_other;
GRANT SELECT, UPDATE ON user_filters TO regress_tlbf_other;
CREATE TABLE not_filters (id int, f text);
SET ROLE regress_tlbf_other;
SELECT outcome($$SELECT tlbf_maintain('user_filters', 'f')$$);
SELECT outcome($$SELECT tlbf_unmaintain('user_filters', 'f')$$);
SELECT outcome($$DELETE FROM tlbf_maintained$$);
SELECT outcome($$INSERT INTO tlbf_maintained VALUES ('user_filters', 'note')$$);
SELECT count(*) AS still_registered FROM tlbf_maintained;
RESET ROLE;
SELECT outcome($$SELECT tlbf_maintain('user_filters', 'nope')$$);
SELECT outcome($$SELECT tlbf_maintain('user_filters', 'note')$$);
SELECT outcome($$SELECT tlbf_maintain('not_filters', 'f')$$);
SELECT outcome($$SELECT tlbf_maintain('tlbf_maintained_missing', 'f')$$);
SELECT outcome($$SELECT tlbf_maintain('pg_class', 'relname')$$);

-- Dropped columns and tables: their registrations are forgotten by the
-- next pass, and the other tables are still done.
CREATE TABLE gone_soon (id int, f tlbf, g tlbf);
INSERT INTO gone_soon VALUES (1, tlbf_add(tlbf_create('1 minute'), 1, now() - interval '1 hour'),
                              tlbf_add(tlbf_create('1 minute'), 1, now() - interval '1 hour'));
SELECT tlbf_maintain('gone_soon', 'f'), tlbf_maintain('gone_soon', 'g');
ALTER TABLE gone_soon DROP COLUMN g;
SELECT tbl, col, rows_rewritten FROM tlbf_maintenance_run() ORDER BY 1, 2;
SELECT tbl::text, col FROM tlbf_maintained ORDER BY 1, 2;
CREATE TABLE dropped_soon (f tlbf);
SELECT tlbf_maintain('dropped_soon', 'f');
DROP TABLE dropped_soon;
SELECT count(*) AS rows_back FROM tlbf_maintenance_run();
SELECT tbl::text, col FROM tlbf_maintained ORDER BY 1, 2;

-- A user sees only the tables it may update.
SET ROLE regress_tlbf_other;
SELECT tbl, col FROM tlbf_maintenance_run();
RESET ROLE;

-- It needs both SELECT and UPDATE: with either alone, its pass leaves the
-- table alone (no row rewritten, no row locked, no trigger fired).
CREATE TABLE half_rights (id int, f tlbf);
INSERT INTO half_rights
SELECT id, tlbf_add(tlbf_create('1 minute'), id, now() - interval '1 hour') FROM generate_series(1, 5) id;
SELECT tlbf_maintain('half_rights', 'f');
CREATE ROLE regress_tlbf_reader;
CREATE ROLE regress_tlbf_writer;
GRANT SELECT ON half_rights TO regress_tlbf_reader;
GRANT UPDATE ON half_rights TO regress_tlbf_writer;
SET ROLE regress_tlbf_reader;
SELECT tbl, col FROM tlbf_maintenance_run();
RESET ROLE;
SET ROLE regress_tlbf_writer;
SELECT tbl, col FROM tlbf_maintenance_run();
RESET ROLE;
SELECT count(*) FILTER (WHERE tlbf_retirable(f)) AS still_retirable FROM half_rights;
GRANT SELECT ON half_rights TO regress_tlbf_writer;
SET ROLE regress_tlbf_writer;
SELECT tbl, col, rows_rewritten FROM tlbf_maintenance_run();
RESET ROLE;
SELECT count(*) FILTER (WHERE tlbf_retirable(f)) AS still_retirable FROM half_rights;
SELECT tlbf_unmaintain('half_rights', 'f');
DROP TABLE half_rights;
DROP ROLE regress_tlbf_reader;
DROP ROLE regress_tlbf_writer;

SELECT tlbf_unmaintain('user_filters', 'f');
SELECT tlbf_unmaintain('gone_soon', 'f');
SELECT count(*) AS registrations FROM tlbf_maintained;
REVOKE ALL ON user_filters FROM regress_tlbf_other;
DROP ROLE regress_tlbf_other;

-- A superuser's pass by hand runs each table's code (triggers, rules) as
-- the table's owner, in a security-restricted operation with search_path
-- pg_catalog, pg_temp; a table whose rewrite fails is skipped with a
-- WARNING and its error shown in tlbf_maintenance_status.
CREATE ROLE regress_tlbf_owner;
GRANT CREATE ON SCHEMA public TO regress_tlbf_owner;
CREATE TABLE who_ran (usr name, superuser boolean, temp_table boolean);
GRANT INSERT ON who_ran TO regress_tlbf_owner;
SET ROLE regress_tlbf_owner;
CREATE FUNCTION owned_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    temp_table boolean := true;
BEGIN
    BEGIN
        CREATE TEMP TABLE in_restricted_operation (x int);
    EXCEPTION WHEN insufficient_privilege THEN
        temp_table := false;
    END;
    INSERT INTO public.who_ran
    SELECT current_user, rolsuper, temp_table FROM pg_catalog.pg_roles WHERE rolname = current_user;
    RETURN NEW;
END $$;
CREATE TABLE owned (id int, f tlbf);
CREATE TRIGGER owned_trigger BEFORE UPDATE ON owned FOR EACH ROW EXECUTE FUNCTION owned_trigger();
INSERT INTO owned SELECT i, tlbf_add(tlbf_create('1 minute'), i, now() - interval '1 hour')
FROM generate_series(1, 5) i;
CREATE TABLE refuses (id int, f tlbf);
INSERT INTO refuses SELECT i, tlbf_add(tlbf_create('1 minute'), i, now() - interval '1 hour')
FROM generate_series(1, 5) i;
CREATE RULE no_updates AS ON UPDATE TO refuses DO INSTEAD NOTHING;
SELECT tlbf_maintain('owned', 'f'), tlbf_maintain('refuses', 'f');
RESET ROLE;
SELECT tbl, rows_rewritten FROM tlbf_maintenance_run() ORDER BY 1;
SELECT usr, superuser, temp_table, count(*) AS rows FROM who_ran GROUP BY 1, 2, 3;
SELECT tbl, rows_rewritten, last_pass IS NOT NULL AS passed, last_error
FROM tlbf_maintenance_status ORDER BY 1;
-- the status shows only tables one may read (an error may quote rows)
CREATE ROLE regress_tlbf_stranger;
SET ROLE regress_tlbf_stranger;
SELECT count(*) AS rows_seen_by_a_stranger FROM tlbf_maintenance_status;
RESET ROLE;
DROP ROLE regress_tlbf_stranger;
DROP TABLE owned, refuses, who_ran;
DROP FUNCTION owned_trigger();
SELECT count(*) AS registrations_left FROM tlbf_maintenance_run();
REVOKE CREATE ON SCHEMA public FROM regress_tlbf_owner;
DROP ROLE regress_tlbf_owner;
