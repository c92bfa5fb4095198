-- tlbf 1.3: named filters in shared memory, an atomic test-and-add, and a
-- trigger that rejects recent duplicates.  Needs shared_preload_libraries.

\echo Use "ALTER EXTENSION tlbf UPDATE TO '1.3'" to load this file. \quit

-- Two roles: members of tlbf_admin create and drop shared filters, members
-- of tlbf_user use them.  Roles belong to the cluster, so they outlive the
-- extension and are made by its first install.  A role of that name that
-- exists already is granted to only if no one but superusers controls it:
-- otherwise whoever made it (any role with CREATEROLE) could have made
-- itself a member beforehand and would receive the grants.
DO $$
DECLARE
    role_name name;
    role_id oid;
BEGIN
    FOREACH role_name IN ARRAY ARRAY['tlbf_user', 'tlbf_admin']::name[] LOOP
        SELECT r.oid INTO role_id FROM pg_catalog.pg_roles r
        WHERE r.rolname OPERATOR(pg_catalog.=) role_name;
        CONTINUE WHEN NOT FOUND;
        IF EXISTS (SELECT FROM pg_catalog.pg_roles r
                   WHERE r.oid OPERATOR(pg_catalog.=) role_id
                     AND (r.rolcanlogin OR r.rolsuper OR r.rolcreaterole OR r.rolcreatedb
                          OR r.rolreplication OR r.rolbypassrls))
           OR EXISTS (SELECT FROM pg_catalog.pg_auth_members m
                      WHERE m.roleid OPERATOR(pg_catalog.=) role_id
                        AND (NOT EXISTS (SELECT FROM pg_catalog.pg_roles g
                                         WHERE g.oid OPERATOR(pg_catalog.=) m.grantor AND g.rolsuper)
                             OR (m.admin_option AND
                                 NOT EXISTS (SELECT FROM pg_catalog.pg_roles a
                                             WHERE a.oid OPERATOR(pg_catalog.=) m.member AND a.rolsuper))))
        THEN
            RAISE EXCEPTION 'role "%" already exists and was not made by the tlbf extension', role_name
                USING ERRCODE = 'duplicate_object',
                      DETAIL = 'It can log in, has special attributes, or members or ADMIN OPTION that a non-superuser granted; the extension''s grants would reach them.',
                      HINT = pg_catalog.format('Drop the role (DROP ROLE %I) and run CREATE EXTENSION again, or have a superuser make it safe.', role_name);
        END IF;
    END LOOP;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname OPERATOR(pg_catalog.=) 'tlbf_user') THEN
        CREATE ROLE tlbf_user NOLOGIN;
        COMMENT ON ROLE tlbf_user IS 'tlbf: members use shared filters (made by CREATE EXTENSION tlbf)';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname OPERATOR(pg_catalog.=) 'tlbf_admin') THEN
        CREATE ROLE tlbf_admin NOLOGIN IN ROLE tlbf_user;
        COMMENT ON ROLE tlbf_admin IS 'tlbf: members create and drop shared filters (made by CREATE EXTENSION tlbf)';
    END IF;
END $$;

-- The saved copies of this database's shared filters, written by the
-- background worker every tlbf.snapshot_interval and at shutdown, read back
-- after a restart.  pg_dump carries them.
CREATE TABLE tlbf_shared_filters (
    name text PRIMARY KEY,
    filter tlbf NOT NULL,
    region_bytes bigint NOT NULL,
    saved_at timestamptz NOT NULL
);

COMMENT ON TABLE tlbf_shared_filters IS
    'saved copies of the shared tlbf filters of this database';

SELECT pg_catalog.pg_extension_config_dump('@extschema@.tlbf_shared_filters', '');
REVOKE ALL ON tlbf_shared_filters FROM PUBLIC;
GRANT SELECT, INSERT, DELETE ON tlbf_shared_filters TO tlbf_admin;

CREATE FUNCTION tlbf_shared_create(name text, span interval,
                                   error_rate float8 DEFAULT 0.01,
                                   capacity bigint DEFAULT 100000)
    RETURNS void
    AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
CREATE FUNCTION tlbf_shared_drop(name text)
    RETURNS void
    AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
CREATE FUNCTION tlbf_shared_rebuild(name text, query text)
    RETURNS bigint
    AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

-- VOLATILE: the answers change as other sessions add keys.
CREATE FUNCTION tlbf_shared_add(name text, item "any", at timestamptz DEFAULT pg_catalog.now())
    RETURNS boolean
    AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
CREATE FUNCTION tlbf_shared_contains(name text, item "any", at timestamptz DEFAULT pg_catalog.now())
    RETURNS boolean
    AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION tlbf_shared_get(name text)
    RETURNS tlbf
    AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION tlbf_shared_list(OUT name text, OUT info jsonb)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE FUNCTION tlbf_reject_recent()
    RETURNS trigger
    AS 'MODULE_PATHNAME' LANGUAGE C;

COMMENT ON FUNCTION tlbf_shared_create(text, interval, float8, bigint) IS
    'a named filter in shared memory, for every session of this database (tlbf_admin)';
COMMENT ON FUNCTION tlbf_shared_drop(text) IS
    'drop a named shared filter and its saved copy (tlbf_admin)';
COMMENT ON FUNCTION tlbf_shared_rebuild(text, text) IS
    'add every (key, time) row of a query to a shared filter, e.g. after a crash (tlbf_admin)';
COMMENT ON FUNCTION tlbf_shared_add(text, "any", timestamptz) IS
    'add item to a shared filter; true when it was not already present (atomic)';
COMMENT ON FUNCTION tlbf_shared_contains(text, "any", timestamptz) IS
    'was item added to the shared filter within its span before at?';
COMMENT ON FUNCTION tlbf_shared_get(text) IS
    'a consistent copy of a shared filter as a tlbf value';
COMMENT ON FUNCTION tlbf_shared_list() IS
    'the shared filters of this database, with tlbf_info';
COMMENT ON FUNCTION tlbf_reject_recent() IS
    'BEFORE INSERT trigger: skip (or with ''error'', refuse) rows whose key a shared filter saw within its span';

REVOKE EXECUTE ON FUNCTION tlbf_shared_create(text, interval, float8, bigint),
                           tlbf_shared_drop(text),
                           tlbf_shared_rebuild(text, text),
                           tlbf_shared_add(text, "any", timestamptz),
                           tlbf_shared_contains(text, "any", timestamptz),
                           tlbf_shared_get(text),
                           tlbf_shared_list(),
                           tlbf_reject_recent()
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tlbf_shared_create(text, interval, float8, bigint),
                          tlbf_shared_drop(text),
                          tlbf_shared_rebuild(text, text)
    TO tlbf_admin;
GRANT EXECUTE ON FUNCTION tlbf_shared_add(text, "any", timestamptz),
                          tlbf_shared_contains(text, "any", timestamptz),
                          tlbf_shared_get(text),
                          tlbf_shared_list(),
                          tlbf_reject_recent()
    TO tlbf_user;
