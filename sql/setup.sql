-- Runs first: the extension, and a helper the other tests use to show an
-- error's SQLSTATE, message and detail as a value.
CREATE EXTENSION tlbf;

CREATE FUNCTION outcome(query text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    detail text;
BEGIN
    EXECUTE query;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
    RETURN SQLSTATE || ': ' || SQLERRM || coalesce(' (' || nullif(detail, '') || ')', '');
END $$;

-- Filters of formats 1 and 2 built row by row, as tlbf_agg built them
-- before 1.5 (the same bytes as tlbf_add's, rows in time order: call it
-- with ORDER BY at), for the tests of those formats; tlbf_agg builds
-- format 3.
CREATE FUNCTION add_row2(f tlbf, item anyelement, at timestamptz, span interval, error_rate float8)
    RETURNS tlbf LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN item IS NULL OR at IS NULL THEN f
                ELSE tlbf_add(coalesce(f, tlbf_create_format2(span, error_rate)), item, at) END $$;
CREATE FUNCTION add_row2(f tlbf, item anyelement, at timestamptz, span interval)
    RETURNS tlbf LANGUAGE sql IMMUTABLE AS $$ SELECT add_row2(f, item, at, span, 0.01) $$;
CREATE AGGREGATE agg2(anyelement, timestamptz, interval) (SFUNC = add_row2, STYPE = tlbf);
CREATE AGGREGATE agg2(anyelement, timestamptz, interval, float8) (SFUNC = add_row2, STYPE = tlbf);
