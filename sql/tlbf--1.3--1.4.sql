-- tlbf 1.4: safe to deploy.  The snapshot table is written only by the
-- extension's functions, function labels match what they read, and the
-- maintenance worker reports what it did.  Values can be read in psql: a
-- one-line summary, and casts to and from bytea.

\echo Use "ALTER EXTENSION tlbf UPDATE TO '1.4'" to load this file. \quit

-- Only the extension's functions write the snapshot table, as its owner:
-- a row is what the server loads into shared memory.
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON tlbf_shared_filters FROM tlbf_admin;

-- Saved filters are stored uncompressed: their bits do not compress, and
-- trying took 5x longer than writing them (a crash loses the insertions
-- of one snapshot interval plus one save).
ALTER TABLE tlbf_shared_filters ALTER COLUMN filter SET STORAGE EXTERNAL;

-- Loading a saved filter takes a share of the cluster's shared memory,
-- which only tlbf_admin may give.  So a row is loaded only in the database
-- that wrote it: every row written is stamped with that database (a
-- restore's rows where they are restored), and a copy of a database (CREATE
-- DATABASE ... TEMPLATE) keeps its template's stamps until a member of
-- tlbf_admin adopts its filters (tlbf_shared_adopt).
ALTER TABLE tlbf_shared_filters ADD COLUMN database_oid oid;
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
-- The rows saved so far are this database's: the superuser who updates it
-- says so.  (A copy made before the update is taken for the original.)
UPDATE @extschema@.tlbf_shared_filters
SET database_oid = (SELECT d.oid FROM pg_catalog.pg_database d
                    WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database());

-- The registry's policies, with their operators named by schema.
ALTER POLICY owners_register ON tlbf_maintained
    WITH CHECK (pg_catalog.pg_has_role((SELECT relowner FROM pg_catalog.pg_class
                                        WHERE oid OPERATOR(pg_catalog.=) tbl), 'USAGE'));
ALTER POLICY owners_unregister ON tlbf_maintained
    USING (NOT EXISTS (SELECT FROM pg_catalog.pg_class WHERE oid OPERATOR(pg_catalog.=) tbl)
           OR pg_catalog.pg_has_role((SELECT relowner FROM pg_catalog.pg_class
                                      WHERE oid OPERATOR(pg_catalog.=) tbl), 'USAGE'));

-- What maintenance passes did, per registered column: written by the
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

-- Labels
-- tlbf_info writes its times in the session's TimeZone and its numbers as
-- extra_float_digits asks: the same arguments may give another result in
-- another session, which IMMUTABLE (1.0) promised they would not (an
-- expression index or a constant-folded plan would keep a stale text).
ALTER FUNCTION tlbf_info(tlbf, timestamptz) STABLE;
-- tlbf.max_filter_bytes is now a limit that makes these fail (54000) rather
-- than a size that filters were cut to: their results depend on their
-- arguments alone, so they can be IMMUTABLE, as UPDATEs and upserts on
-- Citus tables require.
ALTER FUNCTION tlbf_create(interval, float8, bigint, int, int) IMMUTABLE;
ALTER FUNCTION tlbf_add(tlbf, "any", timestamptz) IMMUTABLE;
ALTER FUNCTION tlbf_union(tlbf, tlbf) IMMUTABLE;

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

-- Copies of a database: a member of tlbf_admin makes the saved filters
-- a copy carries its own (see database_oid above).
CREATE FUNCTION tlbf_shared_adopt()
    RETURNS bigint
    AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION tlbf_shared_adopt() IS
    'in a copy of a database: make the saved shared filters it copied its own, loaded on their next use (tlbf_admin)';

REVOKE EXECUTE ON FUNCTION tlbf_shared_adopt() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tlbf_shared_adopt() TO tlbf_admin;

COMMENT ON FUNCTION tlbf_reject_recent() IS
    'BEFORE INSERT trigger: skip (or with ''error'', refuse) rows whose key a shared filter saw within its span (with ''threshold=P'', only when the probability of that is at least P)';

-- Reading values: a value's text is its bytes in base64, which dump,
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

-- tlbf_union_agg keeps its name, arguments and dependent views; only its
-- state changes to tlbf_agg_state.
CREATE OR REPLACE AGGREGATE tlbf_union_agg(tlbf) (
    SFUNC = @extschema@.tlbf_union_agg_typed_trans,
    STYPE = @extschema@.tlbf_agg_state,
    SSPACE = 16384,
    FINALFUNC = @extschema@.tlbf_agg_typed_final,
    FINALFUNC_MODIFY = READ_ONLY,
    COMBINEFUNC = @extschema@.tlbf_agg_typed_combine,
    PARALLEL = SAFE
);
DROP FUNCTION @extschema@.tlbf_union_agg_trans(internal, tlbf);

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

-- An update run on a Citus coordinator with citus.enable_ddl_propagation
-- off would leave the workers at their version: refuse it unless they
-- already run 1.4.  (Citus runs the update on the workers with that setting
-- off too, but there this node is not the coordinator.)
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
                     AND COALESCE(pg_catalog.string_to_array(v.version, '.')::int[] OPERATOR(pg_catalog.<) '{1,4}', true)$q$
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
