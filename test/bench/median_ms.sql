-- pg_temp.median_ms(queries, runs): the median time of each query, in
-- milliseconds, running them in turn so that every query sees the same
-- machine (these machines are noisy; compare within one run only).
CREATE OR REPLACE FUNCTION pg_temp.median_ms(queries text[], runs int)
RETURNS TABLE (query int, median_ms numeric)
LANGUAGE plpgsql AS $$
DECLARE
    times float8[][] := array_fill(0::float8, ARRAY[array_length(queries, 1), runs]);
    t0 timestamptz;
BEGIN
    FOR r IN 1..runs LOOP
        FOR q IN 1..array_length(queries, 1) LOOP
            t0 := clock_timestamp();
            EXECUTE queries[q];
            times[q][r] := extract(epoch FROM clock_timestamp() - t0) * 1000;
        END LOOP;
    END LOOP;
    FOR q IN 1..array_length(queries, 1) LOOP
        query := q;
        median_ms := round((SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY t)
                            FROM unnest(times[q:q][1:runs]) t)::numeric, 1);
        RETURN NEXT;
    END LOOP;
END $$;
