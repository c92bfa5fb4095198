-- tlbf 1.0: the tlbf type and its scalar functions.

\echo Use "CREATE EXTENSION tlbf" to load this file. \quit

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

-- STABLE, not IMMUTABLE: the result depends on tlbf.max_filter_bytes.
-- Not STRICT: NULL k and l mean "choose from error_rate".
CREATE FUNCTION tlbf_create(span interval,
                            error_rate float8 DEFAULT 0.01,
                            capacity bigint DEFAULT 1000,
                            k int DEFAULT NULL,
                            l int DEFAULT NULL)
    RETURNS tlbf
    AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL SAFE;

COMMENT ON FUNCTION tlbf_create(interval, float8, bigint, int, int) IS
    'an empty filter that remembers keys for span; capacity is a first guess of keys per span';

-- Not STRICT: a NULL item or time returns the filter unchanged.
CREATE FUNCTION tlbf_add(f tlbf, item "any", at timestamptz DEFAULT pg_catalog.now())
    RETURNS tlbf
    AS 'MODULE_PATHNAME' LANGUAGE C STABLE PARALLEL SAFE;

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

CREATE FUNCTION tlbf_info(f tlbf, at timestamptz DEFAULT pg_catalog.now())
    RETURNS jsonb
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION tlbf_info(tlbf, timestamptz) IS
    'parameters, size and slices of the filter, with liveness judged at at';
