-- tlbf 1.5, installed in one step: the objects that tlbf--1.0.sql and the
-- update scripts after it make, written out as they end up.  The upgrade
-- test compares a database updated from 1.0 with one installed from this
-- file, object by object: a change must be made in both places.

\echo Use "CREATE EXTENSION tlbf" to load this file. \quit


-- The type and its scalar functions (1.0).

CREATE TYPE tlbf;

CREATE FUNCTION tlbf_in(cstring) RETURNS tlbf
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION tlbf_out(tlbf) RETURNS cstring
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION tlbf_recv(internal) RETURNS tlbf
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION tlbf_send(tlbf) RETURNS bytea
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- ALIGNMENT double: the value's bit arrays are 64-bit words read in place.
CREATE TYPE tlbf (
    INPUT = @extschema@.tlbf_in,
    OUTPUT = @extschema@.tlbf_out,
    RECEIVE = @extschema@.tlbf_recv,
    SEND = @extschema@.tlbf_send,
    INTERNALLENGTH = VARIABLE,
    ALIGNMENT = double,
    STORAGE = extended
);

COMMENT ON TYPE tlbf IS 'time-limited Bloom filter: which keys were seen within a span of time';

-- IMMUTABLE: tlbf.max_filter_bytes can make it fail, never change its result.
-- Not STRICT: NULL k and l mean "choose from error_rate".
CREATE FUNCTION tlbf_create(span interval,
                            error_rate float8 DEFAULT 0.01,
                            capacity bigint DEFAULT 1000,
                            k int DEFAULT NULL,
                            l int DEFAULT NULL)
    RETURNS tlbf
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION tlbf_create(interval, float8, bigint, int, int) IS
    'an empty filter that remembers keys for span; capacity is a first guess of keys per span';

-- Not STRICT: a NULL item or time returns the filter unchanged.  IMMUTABLE:
-- the default now() is evaluated by the caller, and tlbf.max_filter_bytes and
-- tlbf.max_future can make it fail, never change its result.
CREATE FUNCTION tlbf_add(f tlbf, item "any", at timestamptz DEFAULT pg_catalog.now())
    RETURNS tlbf
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION tlbf_add(tlbf, "any", timestamptz) IS
    'a copy of the filter that also holds item, seen at time at';

CREATE FUNCTION tlbf_contains(f tlbf, item "any", at timestamptz DEFAULT pg_catalog.now())
    RETURNS boolean
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION tlbf_contains(tlbf, "any", timestamptz) IS
    'was item added within the span before at? (no false negatives)';

CREATE FUNCTION tlbf_contains(f tlbf, item "any", at timestamptz, within interval)
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'tlbf_contains_within' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION tlbf_contains(tlbf, "any", timestamptz, interval) IS
    'was item added within the interval within before at? (no false negatives)';

-- STABLE: it reads the transaction's start time, like now().
CREATE FUNCTION tlbf_contains_now(f tlbf, item "any")
    RETURNS boolean
    AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION tlbf_contains_now(tlbf, "any") IS
    'was item added within the span before now()? (the @> operator)';

CREATE OPERATOR @> (
    LEFTARG = tlbf,
    RIGHTARG = "any",
    FUNCTION = @extschema@.tlbf_contains_now
);

CREATE FUNCTION tlbf_retire(f tlbf, at timestamptz DEFAULT pg_catalog.now())
    RETURNS tlbf
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION tlbf_retire(tlbf, timestamptz) IS
    'the filter without its slices expired at at; answers from at on are unchanged';

-- STABLE: its times follow TimeZone, its numbers extra_float_digits.
CREATE FUNCTION tlbf_info(f tlbf, at timestamptz DEFAULT pg_catalog.now())
    RETURNS jsonb
    AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION tlbf_info(tlbf, timestamptz) IS
    'parameters, size and slices of the filter, with liveness judged at at';


-- Union, and aggregates that build a filter over a query (1.1).

CREATE FUNCTION tlbf_union(a tlbf, b tlbf) RETURNS tlbf
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION tlbf_union(tlbf, tlbf) IS
    'every key either filter holds, at any time; the filters must share span and hash scheme';

CREATE OPERATOR || (
    LEFTARG = tlbf,
    RIGHTARG = tlbf,
    FUNCTION = @extschema@.tlbf_union
);

-- The aggregates' support functions.  The transition functions are not
-- STRICT because the state is created on the first row; they skip rows
-- with a NULL item or time themselves.
CREATE FUNCTION tlbf_agg_trans(internal, item "any", at timestamptz, span interval)
    RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_trans(internal, item "any", at timestamptz, span interval,
                               error_rate float8)
    RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_final(internal)
    RETURNS tlbf
    AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_combine(internal, internal)
    RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_serialize(internal)
    RETURNS bytea
    AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_deserialize(bytea, internal)
    RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE AGGREGATE tlbf_agg(item "any", at timestamptz, span interval) (
    SFUNC = @extschema@.tlbf_agg_trans,
    STYPE = internal,
    SSPACE = 16384,
    FINALFUNC = @extschema@.tlbf_agg_final,
    FINALFUNC_MODIFY = READ_ONLY,
    COMBINEFUNC = @extschema@.tlbf_agg_combine,
    SERIALFUNC = @extschema@.tlbf_agg_serialize,
    DESERIALFUNC = @extschema@.tlbf_agg_deserialize,
    PARALLEL = SAFE
);

CREATE AGGREGATE tlbf_agg(item "any", at timestamptz, span interval, error_rate float8) (
    SFUNC = @extschema@.tlbf_agg_trans,
    STYPE = internal,
    SSPACE = 16384,
    FINALFUNC = @extschema@.tlbf_agg_final,
    FINALFUNC_MODIFY = READ_ONLY,
    COMBINEFUNC = @extschema@.tlbf_agg_combine,
    SERIALFUNC = @extschema@.tlbf_agg_serialize,
    DESERIALFUNC = @extschema@.tlbf_agg_deserialize,
    PARALLEL = SAFE
);

COMMENT ON AGGREGATE tlbf_agg("any", timestamptz, interval) IS
    'a filter holding every item, seen at its time, for span';
COMMENT ON AGGREGATE tlbf_agg("any", timestamptz, interval, float8) IS
    'a filter holding every item, seen at its time, for span, at error_rate';

-- The state of the aggregates below, a type of its own so that Citus can
-- split them: each shard's partial state crosses to the coordinator in
-- this type's binary or text (base64) form (1.4).
CREATE TYPE tlbf_agg_state;

CREATE FUNCTION tlbf_agg_state_in(cstring) RETURNS tlbf_agg_state
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_state_out(tlbf_agg_state) RETURNS cstring
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_state_recv(internal) RETURNS tlbf_agg_state
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_state_send(tlbf_agg_state) RETURNS bytea
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE tlbf_agg_state (
    INPUT = @extschema@.tlbf_agg_state_in,
    OUTPUT = @extschema@.tlbf_agg_state_out,
    RECEIVE = @extschema@.tlbf_agg_state_recv,
    SEND = @extschema@.tlbf_agg_state_send,
    INTERNALLENGTH = VARIABLE,
    ALIGNMENT = double,
    STORAGE = extended
);

COMMENT ON TYPE tlbf_agg_state IS
    'the partial state of tlbf_agg and tlbf_union_agg, as it crosses between processes and nodes';

-- One transition function for every item type: its C function learns the
-- type from the declaration when the caller (Citus) passes no expression.
CREATE FUNCTION tlbf_agg_typed_trans(tlbf_agg_state, item smallint, at timestamptz,
                                     span interval)
    RETURNS tlbf_agg_state AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_typed_trans(tlbf_agg_state, item integer, at timestamptz,
                                     span interval)
    RETURNS tlbf_agg_state AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_typed_trans(tlbf_agg_state, item bigint, at timestamptz,
                                     span interval)
    RETURNS tlbf_agg_state AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_typed_trans(tlbf_agg_state, item text, at timestamptz,
                                     span interval)
    RETURNS tlbf_agg_state AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_typed_trans(tlbf_agg_state, item uuid, at timestamptz,
                                     span interval)
    RETURNS tlbf_agg_state AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_typed_trans(tlbf_agg_state, item bytea, at timestamptz,
                                     span interval)
    RETURNS tlbf_agg_state AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_typed_trans(tlbf_agg_state, item smallint, at timestamptz,
                                     span interval, error_rate float8)
    RETURNS tlbf_agg_state AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_typed_trans(tlbf_agg_state, item integer, at timestamptz,
                                     span interval, error_rate float8)
    RETURNS tlbf_agg_state AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_typed_trans(tlbf_agg_state, item bigint, at timestamptz,
                                     span interval, error_rate float8)
    RETURNS tlbf_agg_state AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_typed_trans(tlbf_agg_state, item text, at timestamptz,
                                     span interval, error_rate float8)
    RETURNS tlbf_agg_state AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_typed_trans(tlbf_agg_state, item uuid, at timestamptz,
                                     span interval, error_rate float8)
    RETURNS tlbf_agg_state AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_typed_trans(tlbf_agg_state, item bytea, at timestamptz,
                                     span interval, error_rate float8)
    RETURNS tlbf_agg_state AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_union_agg_typed_trans(tlbf_agg_state, tlbf)
    RETURNS tlbf_agg_state AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_typed_combine(tlbf_agg_state, tlbf_agg_state)
    RETURNS tlbf_agg_state AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_typed_final(tlbf_agg_state)
    RETURNS tlbf AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL SAFE;

-- tlbf_agg for the item types distributed tables are most often keyed by:
-- a call with an item of one of them (or an untyped literal or parameter,
-- which resolves to text) chooses these over tlbf_agg("any", ...), and
-- gives the same filter.  They hash exactly as tlbf_add does: integers as
-- integers, whatever their width, and varchar, char(n) and name, which are
-- cast to text, as text.
CREATE AGGREGATE tlbf_agg(item smallint, at timestamptz, span interval) (
    SFUNC = @extschema@.tlbf_agg_typed_trans,
    STYPE = @extschema@.tlbf_agg_state,
    SSPACE = 16384,
    FINALFUNC = @extschema@.tlbf_agg_typed_final,
    FINALFUNC_MODIFY = READ_ONLY,
    COMBINEFUNC = @extschema@.tlbf_agg_typed_combine,
    PARALLEL = SAFE
);

CREATE AGGREGATE tlbf_agg(item smallint, at timestamptz, span interval, error_rate float8) (
    SFUNC = @extschema@.tlbf_agg_typed_trans,
    STYPE = @extschema@.tlbf_agg_state,
    SSPACE = 16384,
    FINALFUNC = @extschema@.tlbf_agg_typed_final,
    FINALFUNC_MODIFY = READ_ONLY,
    COMBINEFUNC = @extschema@.tlbf_agg_typed_combine,
    PARALLEL = SAFE
);

COMMENT ON AGGREGATE tlbf_agg(smallint, timestamptz, interval) IS
    'a filter holding every item, seen at its time, for span';
COMMENT ON AGGREGATE tlbf_agg(smallint, timestamptz, interval, float8) IS
    'a filter holding every item, seen at its time, for span, at error_rate';

CREATE AGGREGATE tlbf_agg(item integer, at timestamptz, span interval) (
    SFUNC = @extschema@.tlbf_agg_typed_trans,
    STYPE = @extschema@.tlbf_agg_state,
    SSPACE = 16384,
    FINALFUNC = @extschema@.tlbf_agg_typed_final,
    FINALFUNC_MODIFY = READ_ONLY,
    COMBINEFUNC = @extschema@.tlbf_agg_typed_combine,
    PARALLEL = SAFE
);

CREATE AGGREGATE tlbf_agg(item integer, at timestamptz, span interval, error_rate float8) (
    SFUNC = @extschema@.tlbf_agg_typed_trans,
    STYPE = @extschema@.tlbf_agg_state,
    SSPACE = 16384,
    FINALFUNC = @extschema@.tlbf_agg_typed_final,
    FINALFUNC_MODIFY = READ_ONLY,
    COMBINEFUNC = @extschema@.tlbf_agg_typed_combine,
    PARALLEL = SAFE
);

COMMENT ON AGGREGATE tlbf_agg(integer, timestamptz, interval) IS
    'a filter holding every item, seen at its time, for span';
COMMENT ON AGGREGATE tlbf_agg(integer, timestamptz, interval, float8) IS
    'a filter holding every item, seen at its time, for span, at error_rate';

CREATE AGGREGATE tlbf_agg(item bigint, at timestamptz, span interval) (
    SFUNC = @extschema@.tlbf_agg_typed_trans,
    STYPE = @extschema@.tlbf_agg_state,
    SSPACE = 16384,
    FINALFUNC = @extschema@.tlbf_agg_typed_final,
    FINALFUNC_MODIFY = READ_ONLY,
    COMBINEFUNC = @extschema@.tlbf_agg_typed_combine,
    PARALLEL = SAFE
);

CREATE AGGREGATE tlbf_agg(item bigint, at timestamptz, span interval, error_rate float8) (
    SFUNC = @extschema@.tlbf_agg_typed_trans,
    STYPE = @extschema@.tlbf_agg_state,
    SSPACE = 16384,
    FINALFUNC = @extschema@.tlbf_agg_typed_final,
    FINALFUNC_MODIFY = READ_ONLY,
    COMBINEFUNC = @extschema@.tlbf_agg_typed_combine,
    PARALLEL = SAFE
);

COMMENT ON AGGREGATE tlbf_agg(bigint, timestamptz, interval) IS
    'a filter holding every item, seen at its time, for span';
COMMENT ON AGGREGATE tlbf_agg(bigint, timestamptz, interval, float8) IS
    'a filter holding every item, seen at its time, for span, at error_rate';

CREATE AGGREGATE tlbf_agg(item text, at timestamptz, span interval) (
    SFUNC = @extschema@.tlbf_agg_typed_trans,
    STYPE = @extschema@.tlbf_agg_state,
    SSPACE = 16384,
    FINALFUNC = @extschema@.tlbf_agg_typed_final,
    FINALFUNC_MODIFY = READ_ONLY,
    COMBINEFUNC = @extschema@.tlbf_agg_typed_combine,
    PARALLEL = SAFE
);

CREATE AGGREGATE tlbf_agg(item text, at timestamptz, span interval, error_rate float8) (
    SFUNC = @extschema@.tlbf_agg_typed_trans,
    STYPE = @extschema@.tlbf_agg_state,
    SSPACE = 16384,
    FINALFUNC = @extschema@.tlbf_agg_typed_final,
    FINALFUNC_MODIFY = READ_ONLY,
    COMBINEFUNC = @extschema@.tlbf_agg_typed_combine,
    PARALLEL = SAFE
);

COMMENT ON AGGREGATE tlbf_agg(text, timestamptz, interval) IS
    'a filter holding every item, seen at its time, for span';
COMMENT ON AGGREGATE tlbf_agg(text, timestamptz, interval, float8) IS
    'a filter holding every item, seen at its time, for span, at error_rate';

CREATE AGGREGATE tlbf_agg(item uuid, at timestamptz, span interval) (
    SFUNC = @extschema@.tlbf_agg_typed_trans,
    STYPE = @extschema@.tlbf_agg_state,
    SSPACE = 16384,
    FINALFUNC = @extschema@.tlbf_agg_typed_final,
    FINALFUNC_MODIFY = READ_ONLY,
    COMBINEFUNC = @extschema@.tlbf_agg_typed_combine,
    PARALLEL = SAFE
);

CREATE AGGREGATE tlbf_agg(item uuid, at timestamptz, span interval, error_rate float8) (
    SFUNC = @extschema@.tlbf_agg_typed_trans,
    STYPE = @extschema@.tlbf_agg_state,
    SSPACE = 16384,
    FINALFUNC = @extschema@.tlbf_agg_typed_final,
    FINALFUNC_MODIFY = READ_ONLY,
    COMBINEFUNC = @extschema@.tlbf_agg_typed_combine,
    PARALLEL = SAFE
);

COMMENT ON AGGREGATE tlbf_agg(uuid, timestamptz, interval) IS
    'a filter holding every item, seen at its time, for span';
COMMENT ON AGGREGATE tlbf_agg(uuid, timestamptz, interval, float8) IS
    'a filter holding every item, seen at its time, for span, at error_rate';

CREATE AGGREGATE tlbf_agg(item bytea, at timestamptz, span interval) (
    SFUNC = @extschema@.tlbf_agg_typed_trans,
    STYPE = @extschema@.tlbf_agg_state,
    SSPACE = 16384,
    FINALFUNC = @extschema@.tlbf_agg_typed_final,
    FINALFUNC_MODIFY = READ_ONLY,
    COMBINEFUNC = @extschema@.tlbf_agg_typed_combine,
    PARALLEL = SAFE
);

CREATE AGGREGATE tlbf_agg(item bytea, at timestamptz, span interval, error_rate float8) (
    SFUNC = @extschema@.tlbf_agg_typed_trans,
    STYPE = @extschema@.tlbf_agg_state,
    SSPACE = 16384,
    FINALFUNC = @extschema@.tlbf_agg_typed_final,
    FINALFUNC_MODIFY = READ_ONLY,
    COMBINEFUNC = @extschema@.tlbf_agg_typed_combine,
    PARALLEL = SAFE
);

COMMENT ON AGGREGATE tlbf_agg(bytea, timestamptz, interval) IS
    'a filter holding every item, seen at its time, for span';
COMMENT ON AGGREGATE tlbf_agg(bytea, timestamptz, interval, float8) IS
    'a filter holding every item, seen at its time, for span, at error_rate';

CREATE AGGREGATE tlbf_union_agg(tlbf) (
    SFUNC = @extschema@.tlbf_union_agg_typed_trans,
    STYPE = @extschema@.tlbf_agg_state,
    SSPACE = 16384,
    FINALFUNC = @extschema@.tlbf_agg_typed_final,
    FINALFUNC_MODIFY = READ_ONLY,
    COMBINEFUNC = @extschema@.tlbf_agg_typed_combine,
    PARALLEL = SAFE
);

COMMENT ON AGGREGATE tlbf_union_agg(tlbf) IS
    'every key any of the filters holds, at any time';


-- Retiring stale slices of stored filters, by a background worker or by hand (1.2).

CREATE FUNCTION tlbf_retirable(f tlbf, at timestamptz DEFAULT pg_catalog.now())
    RETURNS boolean
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION tlbf_retirable(tlbf, timestamptz) IS
    'would tlbf_retire(f, at) drop any slice? (reads only the slice directory)';

-- The columns the maintenance worker looks after.  pg_dump carries its
-- rows.  Anyone may read it; only a table's owner may add or remove its
-- rows, and anyone may remove rows of tables that no longer exist.
CREATE TABLE tlbf_maintained (
    tbl regclass NOT NULL,
    col name NOT NULL,
    PRIMARY KEY (tbl, col)
);

COMMENT ON TABLE tlbf_maintained IS
    'tlbf columns whose expired slices the maintenance worker retires (see tlbf_maintain)';

SELECT pg_catalog.pg_extension_config_dump('@extschema@.tlbf_maintained', '');

ALTER TABLE tlbf_maintained ENABLE ROW LEVEL SECURITY;
GRANT SELECT, INSERT, DELETE ON tlbf_maintained TO PUBLIC;
CREATE POLICY anyone_reads ON tlbf_maintained FOR SELECT USING (true);
CREATE POLICY owners_register ON tlbf_maintained FOR INSERT
    WITH CHECK (pg_catalog.pg_has_role((SELECT relowner FROM pg_catalog.pg_class
                                        WHERE oid OPERATOR(pg_catalog.=) tbl), 'USAGE'));
CREATE POLICY owners_unregister ON tlbf_maintained FOR DELETE
    USING (NOT EXISTS (SELECT FROM pg_catalog.pg_class WHERE oid OPERATOR(pg_catalog.=) tbl)
           OR pg_catalog.pg_has_role((SELECT relowner FROM pg_catalog.pg_class
                                      WHERE oid OPERATOR(pg_catalog.=) tbl), 'USAGE'));

-- Checks shared by tlbf_maintain and tlbf_unmaintain.
CREATE FUNCTION tlbf_check_maintainable(tbl regclass, col name) RETURNS void
    LANGUAGE plpgsql STABLE STRICT SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    col_type oid;
BEGIN
    IF NOT pg_has_role((SELECT relowner FROM pg_class WHERE oid = tbl), 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of table %', tbl
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF (SELECT relkind FROM pg_class WHERE oid = tbl) <> 'r' THEN
        RAISE EXCEPTION '% is not a table', tbl
            USING ERRCODE = 'wrong_object_type',
                  HINT = 'Register each partition of a partitioned table.';
    END IF;
    SELECT atttypid INTO col_type FROM pg_attribute
    WHERE attrelid = tbl AND attname = col AND attnum > 0 AND NOT attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of relation % does not exist', col, tbl
            USING ERRCODE = 'undefined_column';
    END IF;
    IF col_type <> '@extschema@.tlbf'::regtype THEN
        RAISE EXCEPTION 'column "%" of relation % is not of type tlbf', col, tbl
            USING ERRCODE = 'datatype_mismatch';
    END IF;
END $$;

CREATE FUNCTION tlbf_maintain(tbl regclass, col name) RETURNS void
    LANGUAGE plpgsql STRICT SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM @extschema@.tlbf_check_maintainable(tbl, col);
    INSERT INTO @extschema@.tlbf_maintained VALUES (tbl, col) ON CONFLICT DO NOTHING;
END $$;

COMMENT ON FUNCTION tlbf_maintain(regclass, name) IS
    'let the maintenance worker retire the expired slices of this tlbf column (table owner only)';

CREATE FUNCTION tlbf_unmaintain(tbl regclass, col name) RETURNS void
    LANGUAGE plpgsql STRICT SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT pg_has_role((SELECT relowner FROM pg_class WHERE oid = tbl), 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of table %', tbl
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    DELETE FROM @extschema@.tlbf_maintained m WHERE m.tbl = $1 AND m.col = $2;
END $$;

COMMENT ON FUNCTION tlbf_unmaintain(regclass, name) IS
    'stop retiring the expired slices of this tlbf column (table owner only)';

CREATE FUNCTION tlbf_maintenance_run(
    OUT tbl regclass, OUT col name, OUT rows_rewritten bigint, OUT bytes_freed bigint)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION tlbf_maintenance_run() IS
    'one maintenance pass by hand, in this transaction, over the registered tables you may update';


-- Named filters in shared memory, an atomic test-and-add, and a trigger that rejects recent duplicates (1.3).

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
    saved_at timestamptz NOT NULL,
    database_oid oid
);

COMMENT ON TABLE tlbf_shared_filters IS
    'saved copies of the shared tlbf filters of this database';

SELECT pg_catalog.pg_extension_config_dump('@extschema@.tlbf_shared_filters', '');
-- Only the extension's functions write it, as its owner: a row is what the
-- server loads into shared memory.
REVOKE ALL ON tlbf_shared_filters FROM PUBLIC;
GRANT SELECT ON tlbf_shared_filters TO tlbf_admin;
-- Stored uncompressed: the bits do not compress, and trying took 5x
-- longer than writing them (a crash loses one snapshot interval plus one
-- save).
ALTER TABLE tlbf_shared_filters ALTER COLUMN filter SET STORAGE EXTERNAL;
-- Loading a saved filter takes a share of the cluster's shared memory,
-- which only tlbf_admin may give.  So a row is loaded only in the database
-- that wrote it: every row written is stamped with that database (a
-- restore's rows where they are restored), and a copy of a database (CREATE
-- DATABASE ... TEMPLATE) keeps its template's stamps until a member of
-- tlbf_admin adopts its filters (tlbf_shared_adopt).
COMMENT ON COLUMN tlbf_shared_filters.database_oid IS
    'the database that wrote the row: its filter is loaded only there (see tlbf_shared_adopt)';
CREATE FUNCTION tlbf_shared_filters_stamp() RETURNS trigger
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    NEW.database_oid := (SELECT d.oid FROM pg_catalog.pg_database d
                         WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database());
    RETURN NEW;
END $$;
REVOKE EXECUTE ON FUNCTION tlbf_shared_filters_stamp() FROM PUBLIC;
CREATE TRIGGER stamp_database BEFORE INSERT OR UPDATE ON tlbf_shared_filters
    FOR EACH ROW EXECUTE FUNCTION @extschema@.tlbf_shared_filters_stamp();
-- whatever session_replication_role the writer runs with
ALTER TABLE tlbf_shared_filters ENABLE ALWAYS TRIGGER stamp_database;

-- Not STRICT: max_bytes may be NULL (the size the capacity needs); NULL
-- in any other argument returns NULL, as STRICT would.
CREATE FUNCTION tlbf_shared_create(name text, span interval,
                                   error_rate float8 DEFAULT 0.01,
                                   capacity bigint DEFAULT 100000,
                                   max_bytes bigint DEFAULT NULL)
    RETURNS void
    AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE PARALLEL UNSAFE;
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

COMMENT ON FUNCTION tlbf_shared_create(text, interval, float8, bigint, bigint) IS
    'a named filter in shared memory, for every session of this database, in a region of max_bytes it never outgrows (tlbf_admin)';
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
    'BEFORE INSERT trigger (and AFTER INSERT, for INSERT ... ON CONFLICT): skip (or with ''error'', refuse) rows whose key a shared filter saw within its span, as a unique index would (with ''threshold=P'', only when the probability of that is at least P)';

REVOKE EXECUTE ON FUNCTION tlbf_shared_create(text, interval, float8, bigint, bigint),
                           tlbf_shared_drop(text),
                           tlbf_shared_rebuild(text, text),
                           tlbf_shared_add(text, "any", timestamptz),
                           tlbf_shared_contains(text, "any", timestamptz),
                           tlbf_shared_get(text),
                           tlbf_shared_list(),
                           tlbf_reject_recent()
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tlbf_shared_create(text, interval, float8, bigint, bigint),
                          tlbf_shared_drop(text),
                          tlbf_shared_rebuild(text, text)
    TO tlbf_admin;
GRANT EXECUTE ON FUNCTION tlbf_shared_add(text, "any", timestamptz),
                          tlbf_shared_contains(text, "any", timestamptz),
                          tlbf_shared_get(text),
                          tlbf_shared_list(),
                          tlbf_reject_recent()
    TO tlbf_user;


-- What maintenance passes did, per registered column (1.4): written by the
-- passes (as the table's owner), read through tlbf_maintenance_status.
-- Not dumped: it describes this server's passes.
CREATE TABLE tlbf_maintenance_stats (
    tbl regclass NOT NULL,
    col name NOT NULL,
    last_pass timestamptz,
    rows_rewritten bigint NOT NULL DEFAULT 0,
    bytes_freed bigint NOT NULL DEFAULT 0,
    last_error text,
    last_error_at timestamptz,
    PRIMARY KEY (tbl, col)
);
REVOKE ALL ON tlbf_maintenance_stats FROM PUBLIC;

CREATE VIEW tlbf_maintenance_status AS
SELECT m.tbl, m.col, s.last_pass,
       COALESCE(s.rows_rewritten, 0) AS rows_rewritten,
       COALESCE(s.bytes_freed, 0) AS bytes_freed,
       s.last_error, s.last_error_at
FROM @extschema@.tlbf_maintained m
LEFT JOIN @extschema@.tlbf_maintenance_stats s
       ON s.tbl::pg_catalog.oid OPERATOR(pg_catalog.=) m.tbl::pg_catalog.oid
      AND s.col OPERATOR(pg_catalog.=) m.col
-- a table's last error may quote its rows: only for those who may read it
WHERE pg_catalog.has_table_privilege(m.tbl::pg_catalog.oid, 'SELECT');
GRANT SELECT ON tlbf_maintenance_status TO PUBLIC;

COMMENT ON VIEW tlbf_maintenance_status IS
    'per registered tlbf column you may read: the last maintenance pass, rows rewritten and bytes freed so far, the last error';

-- Beyond yes and no: when a key was last added, and how likely a "yes" is
-- true (docs/inference.md).  IMMUTABLE: they read only their arguments.
CREATE FUNCTION tlbf_last_seen(f tlbf, item "any", at timestamptz DEFAULT pg_catalog.now())
    RETURNS tstzrange
    AS 'MODULE_PATHNAME', 'tlbf_last_seen_range' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION tlbf_last_seen(tlbf, "any", timestamptz) IS
    'the interval in which item was last added; NULL if the filter says it was not added within the span before at';

-- Not STRICT: a NULL within means the span.
CREATE FUNCTION tlbf_probability(f tlbf, item "any", at timestamptz DEFAULT pg_catalog.now(),
                                 within interval DEFAULT NULL, prior float8 DEFAULT 0.5)
    RETURNS float8
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION tlbf_probability(tlbf, "any", timestamptz, interval, float8) IS
    'the probability that item was added within within (default: the span) before at, given the bits read and the prior';

-- VOLATILE: the answers change as other sessions add keys.
CREATE FUNCTION tlbf_shared_last_seen(name text, item "any", at timestamptz DEFAULT pg_catalog.now())
    RETURNS tstzrange
    AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION tlbf_shared_probability(name text, item "any", at timestamptz DEFAULT pg_catalog.now(),
                                        within interval DEFAULT NULL, prior float8 DEFAULT 0.5)
    RETURNS float8
    AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION tlbf_shared_last_seen(text, "any", timestamptz) IS
    'as tlbf_last_seen, for a shared filter';
COMMENT ON FUNCTION tlbf_shared_probability(text, "any", timestamptz, interval, float8) IS
    'as tlbf_probability, for a shared filter';

REVOKE EXECUTE ON FUNCTION tlbf_shared_last_seen(text, "any", timestamptz),
                           tlbf_shared_probability(text, "any", timestamptz, interval, float8)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tlbf_shared_last_seen(text, "any", timestamptz),
                          tlbf_shared_probability(text, "any", timestamptz, interval, float8)
    TO tlbf_user;

-- Copies of a database (1.4): a member of tlbf_admin makes the saved filters
-- a copy carries its own (see database_oid above).
CREATE FUNCTION tlbf_shared_adopt()
    RETURNS bigint
    AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION tlbf_shared_adopt() IS
    'in a copy of a database: make the saved shared filters it copied its own, loaded on their next use (tlbf_admin)';

REVOKE EXECUTE ON FUNCTION tlbf_shared_adopt() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tlbf_shared_adopt() TO tlbf_admin;


-- Reading values (1.4): a value's text is its bytes in base64, which dump,
-- restore and COPY need but nobody can read (an 8 MB filter prints an 11 MB
-- line).  A one-line summary, and casts to and from bytea for the bytes.

-- STABLE: it writes the newest time in the session's TimeZone.
CREATE FUNCTION tlbf_summary(f tlbf, at timestamptz DEFAULT pg_catalog.now())
    RETURNS text
    AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION tlbf_summary(tlbf, timestamptz) IS
    'one line: span, k, l, distinct live keys at at (estimate and range), bytes, newest insertion';

-- The casts carry the bytes binary I/O carries; bytea to tlbf validates
-- them as binary input does.  Explicit only: a bytea is no filter until
-- someone says so.
CREATE FUNCTION tlbf_to_bytea(tlbf) RETURNS bytea
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION tlbf_from_bytea(bytea) RETURNS tlbf
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION tlbf_to_bytea(tlbf) IS
    'the value''s bytes, as binary output sends them (CAST (f AS bytea))';
COMMENT ON FUNCTION tlbf_from_bytea(bytea) IS
    'a value from its bytes, checked as binary input checks them (CAST (b AS tlbf))';

CREATE CAST (tlbf AS bytea) WITH FUNCTION @extschema@.tlbf_to_bytea(tlbf);
CREATE CAST (bytea AS tlbf) WITH FUNCTION @extschema@.tlbf_from_bytea(bytea);

-- Keys from drivers (1.4).  An untyped parameter or literal ($1 from a
-- driver, PREPARE ... tlbf_contains(f, $1)) cannot take the type "any";
-- these forms give it text, which a filter of another kind of key converts
-- to its own (key_match.c: '42' is the integer 42 for a filter of
-- integers) or refuses.  The same C functions serve both forms.
CREATE FUNCTION tlbf_add(f tlbf, item text, at timestamptz DEFAULT pg_catalog.now())
    RETURNS tlbf
    AS 'MODULE_PATHNAME', 'tlbf_add' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_contains(f tlbf, item text, at timestamptz DEFAULT pg_catalog.now())
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'tlbf_contains' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION tlbf_contains(f tlbf, item text, at timestamptz, within interval)
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'tlbf_contains_within' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION tlbf_contains_now(f tlbf, item text)
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'tlbf_contains_now' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE OPERATOR @> (
    LEFTARG = tlbf,
    RIGHTARG = text,
    FUNCTION = @extschema@.tlbf_contains_now
);
CREATE FUNCTION tlbf_last_seen(f tlbf, item text, at timestamptz DEFAULT pg_catalog.now())
    RETURNS tstzrange
    AS 'MODULE_PATHNAME', 'tlbf_last_seen_range' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION tlbf_probability(f tlbf, item text, at timestamptz DEFAULT pg_catalog.now(),
                                 within interval DEFAULT NULL, prior float8 DEFAULT 0.5)
    RETURNS float8
    AS 'MODULE_PATHNAME', 'tlbf_probability' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_shared_add(name text, item text, at timestamptz DEFAULT pg_catalog.now())
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'tlbf_shared_add' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
CREATE FUNCTION tlbf_shared_contains(name text, item text, at timestamptz DEFAULT pg_catalog.now())
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'tlbf_shared_contains' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION tlbf_shared_last_seen(name text, item text, at timestamptz DEFAULT pg_catalog.now())
    RETURNS tstzrange
    AS 'MODULE_PATHNAME', 'tlbf_shared_last_seen' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
CREATE FUNCTION tlbf_shared_probability(name text, item text, at timestamptz DEFAULT pg_catalog.now(),
                                        within interval DEFAULT NULL, prior float8 DEFAULT 0.5)
    RETURNS float8
    AS 'MODULE_PATHNAME', 'tlbf_shared_probability' LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION tlbf_add(tlbf, text, timestamptz) IS
    'as tlbf_add(tlbf, "any", timestamptz), for untyped parameters';
COMMENT ON FUNCTION tlbf_contains(tlbf, text, timestamptz) IS
    'as tlbf_contains(tlbf, "any", timestamptz), for untyped parameters';
COMMENT ON FUNCTION tlbf_contains(tlbf, text, timestamptz, interval) IS
    'as tlbf_contains(tlbf, "any", timestamptz, interval), for untyped parameters';
COMMENT ON FUNCTION tlbf_contains_now(tlbf, text) IS
    'as tlbf_contains_now(tlbf, "any"), for untyped parameters';
COMMENT ON FUNCTION tlbf_last_seen(tlbf, text, timestamptz) IS
    'as tlbf_last_seen(tlbf, "any", timestamptz), for untyped parameters';
COMMENT ON FUNCTION tlbf_probability(tlbf, text, timestamptz, interval, float8) IS
    'as tlbf_probability(tlbf, "any", ...), for untyped parameters';
COMMENT ON FUNCTION tlbf_shared_add(text, text, timestamptz) IS
    'as tlbf_shared_add(text, "any", timestamptz), for untyped parameters';
COMMENT ON FUNCTION tlbf_shared_contains(text, text, timestamptz) IS
    'as tlbf_shared_contains(text, "any", timestamptz), for untyped parameters';
COMMENT ON FUNCTION tlbf_shared_last_seen(text, text, timestamptz) IS
    'as tlbf_shared_last_seen(text, "any", timestamptz), for untyped parameters';
COMMENT ON FUNCTION tlbf_shared_probability(text, text, timestamptz, interval, float8) IS
    'as tlbf_shared_probability(text, "any", ...), for untyped parameters';

REVOKE EXECUTE ON FUNCTION tlbf_shared_add(text, text, timestamptz),
                           tlbf_shared_contains(text, text, timestamptz),
                           tlbf_shared_last_seen(text, text, timestamptz),
                           tlbf_shared_probability(text, text, timestamptz, interval, float8)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tlbf_shared_add(text, text, timestamptz),
                          tlbf_shared_contains(text, text, timestamptz),
                          tlbf_shared_last_seen(text, text, timestamptz),
                          tlbf_shared_probability(text, text, timestamptz, interval, float8)
    TO tlbf_user;

-- A key of several columns from a driver (1.5): ROW($1, $2) cannot take
-- untyped parameters; the text of each field, read as the filter's kind
-- for it (key_match.c), can.  At the transaction's start, as now().
CREATE FUNCTION tlbf_shared_contains_fields(name text, VARIADIC fields text[])
    RETURNS boolean
    AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION tlbf_shared_contains_fields(text, text[]) IS
    'as tlbf_shared_contains(name, ROW(...)), for a key of several columns given as untyped parameters';
REVOKE EXECUTE ON FUNCTION tlbf_shared_contains_fields(text, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tlbf_shared_contains_fields(text, text[]) TO tlbf_user;

-- What each shared filter did (1.5): counters in shared memory, from the
-- filter's creation or load, or the last reset (docs/operating.md,
-- "Watching shared filters").
CREATE FUNCTION tlbf_shared_stats(OUT name text, OUT added bigint, OUT rejected bigint,
                                  OUT lookups bigint, OUT found bigint, OUT grown bigint,
                                  OUT refused_full bigint, OUT last_saved timestamptz,
                                  OUT stats_reset timestamptz)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE PARALLEL SAFE;
-- Not STRICT: NULL resets every filter of the database.
CREATE FUNCTION tlbf_shared_stats_reset(name text DEFAULT NULL)
    RETURNS integer
    AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION tlbf_shared_stats() IS
    'counters of this database''s shared filters: keys added and rejected, lookups and found, growths, insertions refused for room, last save';
COMMENT ON FUNCTION tlbf_shared_stats_reset(text) IS
    'count from zero again for a shared filter, or for all of this database''s (NULL); returns how many (tlbf_admin)';
REVOKE EXECUTE ON FUNCTION tlbf_shared_stats(), tlbf_shared_stats_reset(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tlbf_shared_stats() TO tlbf_user;
GRANT EXECUTE ON FUNCTION tlbf_shared_stats_reset(text) TO tlbf_admin;

-- Citus clusters (1.4).  Each node has its own copy of the extension's SQL
-- objects; a query sent to a node that runs another version can fail on
-- what that version lacks.  tlbf_cluster_versions() asks every worker
-- (through Citus) which version it runs; tlbf_check_cluster() raises an
-- error if any differs from this node's.
CREATE FUNCTION tlbf_cluster_versions(OUT node text, OUT port integer, OUT version text)
    RETURNS SETOF record
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    RETURN QUERY SELECT NULL::text, NULL::integer, e.extversion::text
                 FROM pg_catalog.pg_extension e WHERE e.extname OPERATOR(pg_catalog.=) 'tlbf';
    IF EXISTS (SELECT FROM pg_catalog.pg_extension WHERE extname OPERATOR(pg_catalog.=) 'citus') THEN
        RETURN QUERY EXECUTE
            $q$SELECT w.nodename, w.nodeport::integer,
                      CASE WHEN w.success AND w.result OPERATOR(pg_catalog.<>) '' THEN w.result END
               FROM pg_catalog.run_command_on_workers(
                   'SELECT extversion FROM pg_catalog.pg_extension WHERE extname OPERATOR(pg_catalog.=) ''tlbf''') w
               ORDER BY 1, 2$q$;
    END IF;
END
$$;

COMMENT ON FUNCTION tlbf_cluster_versions() IS
    'the tlbf version of this node (node NULL) and of each Citus worker (NULL: none, or unreachable)';

CREATE FUNCTION tlbf_check_cluster()
    RETURNS text
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    mine text;
    others text;
BEGIN
    SELECT v.version INTO mine FROM @extschema@.tlbf_cluster_versions() v WHERE v.node IS NULL;
    SELECT pg_catalog.string_agg(pg_catalog.format('%s:%s has %s', v.node, v.port,
                                                   COALESCE(v.version, 'no tlbf (or cannot be reached)')),
                                 ', ')
      INTO others
      FROM @extschema@.tlbf_cluster_versions() v
     WHERE v.node IS NOT NULL AND v.version IS DISTINCT FROM mine;
    IF others IS NOT NULL THEN
        RAISE EXCEPTION 'tlbf versions differ between the nodes of this Citus cluster'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = pg_catalog.format('This node has %s; %s.', mine, others),
                  HINT = 'Run ALTER EXTENSION tlbf UPDATE on the coordinator with citus.enable_ddl_propagation on (the default): it updates every node.';
    END IF;
    RETURN mine;
END
$$;

COMMENT ON FUNCTION tlbf_check_cluster() IS
    'the tlbf version every node of the Citus cluster runs; an error naming the nodes that run another';
-- Format 2, the paper's layout, as tlbf_create made it until 1.5 (1.5):
-- for comparisons, tests, and filters to unite slice by slice with stored
-- ones of format 2.  The same labels as tlbf_create.
CREATE FUNCTION tlbf_create_format2(span interval,
                                    error_rate float8 DEFAULT 0.01,
                                    capacity bigint DEFAULT 1000)
    RETURNS tlbf
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION tlbf_create_format2(interval, float8, bigint) IS
    'an empty filter of format 2 (the paper''s layout), as tlbf_create made until 1.5';

-- Values of formats 1 and 2 move to format 3 (1.5: issue 36): tlbf_format
-- says which a value is, from its header alone; tlbf_to_format3 gives a
-- value of format 3 carrying one of format 1 or 2 until its keys expire
-- (the maintenance pass applies it to the columns it tends).
CREATE FUNCTION tlbf_format(f tlbf)
    RETURNS integer
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION tlbf_format(tlbf) IS
    'the format of a filter value: 1 or 2 (the paper''s layout), or 3';
CREATE FUNCTION tlbf_to_format3(f tlbf)
    RETURNS tlbf
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION tlbf_to_format3(tlbf) IS
    'the filter as a value of format 3, carrying one of format 1 or 2 until its keys expire';


-- Format 3 (1.5: issue 36, docs/format.md), with more choices than
-- tlbf_create and tlbf_agg give (which make it too since 1.5).
-- IMMUTABLE as tlbf_create; STRICT: a NULL argument gives NULL.
CREATE FUNCTION tlbf_create_format3(span interval,
                                    error_rate float8 DEFAULT 0.01,
                                    capacity bigint DEFAULT 1000,
                                    declared boolean DEFAULT false)
    RETURNS tlbf
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION tlbf_create_format3(interval, float8, bigint, boolean) IS
    'an empty filter of format 3 (in development); a declared capacity sizes every generation, so that filters built apart unite bit for bit';

-- For any item type: the state is internal (Citus then gathers the rows:
-- it splits an aggregate whose state has a type of its own, and cannot
-- pass an item of type "any" to its workers), serialized for parallel
-- plans as its filter's bytes.  Not STRICT: the first row makes the
-- state.  IMMUTABLE as tlbf_add: a row's bits depend on its key and time
-- alone.  The support functions refuse to run outside an aggregate.
CREATE FUNCTION tlbf_agg_format3_any_trans(internal, item "any", at timestamptz, span interval,
                                           error_rate float8, capacity bigint)
    RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_format3_any_final(internal)
    RETURNS tlbf
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_format3_any_combine(internal, internal)
    RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_format3_any_serialize(internal)
    RETURNS bytea
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_format3_any_deserialize(bytea, internal)
    RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE AGGREGATE tlbf_agg_format3(item "any", at timestamptz, span interval,
                                  error_rate float8, capacity bigint) (
    SFUNC = @extschema@.tlbf_agg_format3_any_trans,
    STYPE = internal,
    FINALFUNC = @extschema@.tlbf_agg_format3_any_final,
    FINALFUNC_MODIFY = READ_ONLY,
    COMBINEFUNC = @extschema@.tlbf_agg_format3_any_combine,
    SERIALFUNC = @extschema@.tlbf_agg_format3_any_serialize,
    DESERIALFUNC = @extschema@.tlbf_agg_format3_any_deserialize,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE tlbf_agg_format3("any", timestamptz, interval, float8, bigint) IS
    'a filter of format 3 (in development) holding every item, seen at its time, for span, at error_rate, with a declared capacity of keys per span';

-- tlbf_agg_format3 for the item types distributed tables are most often
-- keyed by, as tlbf_agg has them: the state is the filter itself, a tlbf
-- value (no final function, no serialization), which Citus's workers send
-- the coordinator, one per shard and group, and which the transition and
-- combine functions change in place.  Not STRICT: the first row makes the
-- state.  An untyped literal or parameter resolves to text.  The same
-- filter as the "any" form gives.
CREATE FUNCTION tlbf_agg_format3_combine(tlbf, tlbf)
    RETURNS tlbf
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_format3_trans(tlbf, item smallint, at timestamptz, span interval,
                                       error_rate float8, capacity bigint)
    RETURNS tlbf AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_format3_trans(tlbf, item integer, at timestamptz, span interval,
                                       error_rate float8, capacity bigint)
    RETURNS tlbf AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_format3_trans(tlbf, item bigint, at timestamptz, span interval,
                                       error_rate float8, capacity bigint)
    RETURNS tlbf AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_format3_trans(tlbf, item text, at timestamptz, span interval,
                                       error_rate float8, capacity bigint)
    RETURNS tlbf AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_format3_trans(tlbf, item uuid, at timestamptz, span interval,
                                       error_rate float8, capacity bigint)
    RETURNS tlbf AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION tlbf_agg_format3_trans(tlbf, item bytea, at timestamptz, span interval,
                                       error_rate float8, capacity bigint)
    RETURNS tlbf AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE tlbf_agg_format3(item smallint, at timestamptz, span interval,
                                  error_rate float8, capacity bigint) (
    SFUNC = @extschema@.tlbf_agg_format3_trans,
    STYPE = @extschema@.tlbf,
    COMBINEFUNC = @extschema@.tlbf_agg_format3_combine,
    PARALLEL = SAFE
);
CREATE AGGREGATE tlbf_agg_format3(item integer, at timestamptz, span interval,
                                  error_rate float8, capacity bigint) (
    SFUNC = @extschema@.tlbf_agg_format3_trans,
    STYPE = @extschema@.tlbf,
    COMBINEFUNC = @extschema@.tlbf_agg_format3_combine,
    PARALLEL = SAFE
);
CREATE AGGREGATE tlbf_agg_format3(item bigint, at timestamptz, span interval,
                                  error_rate float8, capacity bigint) (
    SFUNC = @extschema@.tlbf_agg_format3_trans,
    STYPE = @extschema@.tlbf,
    COMBINEFUNC = @extschema@.tlbf_agg_format3_combine,
    PARALLEL = SAFE
);
CREATE AGGREGATE tlbf_agg_format3(item text, at timestamptz, span interval,
                                  error_rate float8, capacity bigint) (
    SFUNC = @extschema@.tlbf_agg_format3_trans,
    STYPE = @extschema@.tlbf,
    COMBINEFUNC = @extschema@.tlbf_agg_format3_combine,
    PARALLEL = SAFE
);
CREATE AGGREGATE tlbf_agg_format3(item uuid, at timestamptz, span interval,
                                  error_rate float8, capacity bigint) (
    SFUNC = @extschema@.tlbf_agg_format3_trans,
    STYPE = @extschema@.tlbf,
    COMBINEFUNC = @extschema@.tlbf_agg_format3_combine,
    PARALLEL = SAFE
);
CREATE AGGREGATE tlbf_agg_format3(item bytea, at timestamptz, span interval,
                                  error_rate float8, capacity bigint) (
    SFUNC = @extschema@.tlbf_agg_format3_trans,
    STYPE = @extschema@.tlbf,
    COMBINEFUNC = @extschema@.tlbf_agg_format3_combine,
    PARALLEL = SAFE
);
