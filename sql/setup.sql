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
