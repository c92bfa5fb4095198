-- pg_temp.median_ms(queries, runs): the fastest and the median time of each
-- query, in milliseconds, over `runs` rounds.  Every round runs every query
-- once, so that each sees the same machine (these machines are noisy;
-- compare within one run only), and each round starts one query further on,
-- so that no query always follows the same one (whose caches it would find
-- warm or cold).
CREATE OR REPLACE FUNCTION pg_temp.median_ms(queries text[], runs int)
RETURNS TABLE (query int, min_ms numeric, median_ms numeric)
LANGUAGE plpgsql AS $$
DECLARE
    n int := array_length(queries, 1);
    times float8[][] := array_fill(0::float8, ARRAY[array_length(queries, 1), runs]);
    q int;
    t0 timestamptz;
BEGIN
    FOR r IN 1..runs LOOP
        FOR i IN 0..n - 1 LOOP
            q := (r - 1 + i) % n + 1;
            t0 := clock_timestamp();
            EXECUTE queries[q];
            times[q][r] := extract(epoch FROM clock_timestamp() - t0) * 1000;
        END LOOP;
    END LOOP;
    FOR q IN 1..n LOOP
        query := q;
        SELECT round(min(t)::numeric, 1),
               round((percentile_disc(0.5) WITHIN GROUP (ORDER BY t))::numeric, 1)
        INTO min_ms, median_ms
        FROM unnest(times[q:q][1:runs]) t;
        RETURN NEXT;
    END LOOP;
END $$;
