-- tlbf 1.5: a key is SQL's key (enums by label, float4 and float8 apart,
-- keys of types that hash otherwise refused: in the library); the dedup
-- trigger follows the transaction (in the library, with an AFTER trigger
-- for INSERT ... ON CONFLICT); a shared filter gets its region, max_bytes,
-- when it is created, and never grows past it.

\echo Use "ALTER EXTENSION tlbf UPDATE TO '1.5'" to load this file. \quit

-- An update run on a Citus coordinator with citus.enable_ddl_propagation
-- off would leave the workers at their version: refuse it unless they
-- already run 1.5.  (Citus runs the update on the workers with that setting
-- off too, but there this node is not the coordinator.)  A worker already
-- at a later version is not behind.
DO $$
DECLARE
    behind text;
BEGIN
    IF pg_catalog.current_setting('citus.enable_ddl_propagation', true) OPERATOR(pg_catalog.=) 'off'
       AND EXISTS (SELECT FROM pg_catalog.pg_extension WHERE extname OPERATOR(pg_catalog.=) 'citus') THEN
        EXECUTE $q$SELECT pg_catalog.string_agg(pg_catalog.format('%s:%s has %s', v.node, v.port,
                                                                 COALESCE(v.version, 'no tlbf')), ', ')
                   FROM @extschema@.tlbf_cluster_versions() v
                   WHERE pg_catalog.citus_is_coordinator()
                     AND v.node IS NOT NULL
                     AND COALESCE(pg_catalog.string_to_array(v.version, '.')::int[] OPERATOR(pg_catalog.<) '{1,5}', true)$q$
            INTO behind;
        IF behind IS NOT NULL THEN
            RAISE EXCEPTION 'ALTER EXTENSION tlbf UPDATE on a Citus coordinator must reach the workers'
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = pg_catalog.format('citus.enable_ddl_propagation is off, and %s.', behind),
                      HINT = 'Run it with citus.enable_ddl_propagation on (the default), which updates every node, or update each worker first.';
        END IF;
    END IF;
END
$$;

-- A shared filter's region is taken when it is created, and it never
-- grows past it: max_bytes (NULL: what its capacity needs).
DROP FUNCTION tlbf_shared_create(text, interval, float8, bigint);
-- Not STRICT: max_bytes may be NULL (the size the capacity needs); NULL
-- in any other argument returns NULL, as STRICT would.
CREATE FUNCTION tlbf_shared_create(name text, span interval,
                                   error_rate float8 DEFAULT 0.01,
                                   capacity bigint DEFAULT 100000,
                                   max_bytes bigint DEFAULT NULL)
    RETURNS void
    AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION tlbf_shared_create(text, interval, float8, bigint, bigint) IS
    'a named filter in shared memory, for every session of this database, in a region of max_bytes it never outgrows (tlbf_admin)';
REVOKE EXECUTE ON FUNCTION tlbf_shared_create(text, interval, float8, bigint, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tlbf_shared_create(text, interval, float8, bigint, bigint) TO tlbf_admin;

COMMENT ON FUNCTION tlbf_reject_recent() IS
    'BEFORE INSERT trigger (and AFTER INSERT, for INSERT ... ON CONFLICT): skip (or with ''error'', refuse) rows whose key a shared filter saw within its span, as a unique index would (with ''threshold=P'', only when the probability of that is at least P)';

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
