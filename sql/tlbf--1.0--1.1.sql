-- tlbf 1.1: union, and aggregates that build a filter over a query.

\echo Use "ALTER EXTENSION tlbf UPDATE TO '1.1'" to load this file. \quit

-- STABLE: the result depends on tlbf.max_filter_bytes.
CREATE FUNCTION tlbf_union(a tlbf, b tlbf) RETURNS tlbf
    AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;

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
CREATE FUNCTION tlbf_union_agg_trans(internal, tlbf)
    RETURNS internal
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;
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

CREATE AGGREGATE tlbf_union_agg(tlbf) (
    SFUNC = @extschema@.tlbf_union_agg_trans,
    STYPE = internal,
    SSPACE = 16384,
    FINALFUNC = @extschema@.tlbf_agg_final,
    FINALFUNC_MODIFY = READ_ONLY,
    COMBINEFUNC = @extschema@.tlbf_agg_combine,
    SERIALFUNC = @extschema@.tlbf_agg_serialize,
    DESERIALFUNC = @extschema@.tlbf_agg_deserialize,
    PARALLEL = SAFE
);

COMMENT ON AGGREGATE tlbf_union_agg(tlbf) IS
    'every key any of the filters holds, at any time';
