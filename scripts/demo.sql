-- The demo: "was this client seen in the last 10 minutes?", answered by a
-- tlbf filter fed the access log with its own timestamps, and checked
-- against the exact answer computed in SQL.
\pset footer off
SET TimeZone = 'UTC';
\set QUIET on

CREATE TABLE requests AS
SELECT row_number() OVER () AS id, client,
       to_timestamp(day || ' ' || time, 'DD/Mon/YYYY HH24:MI:SS')::timestamp AT TIME ZONE 'UTC' AS at
FROM raw_requests;
CREATE INDEX ON requests (at);
ANALYZE requests;

\echo
\echo '== The stream'
SELECT count(*) AS requests, count(DISTINCT client) AS clients,
       min(at) AS first, max(at) AS last FROM requests;

-- Feed every request, in time order, to one filter with a 10-minute span,
-- and keep a copy of the filter at four moments of the day.
CREATE TABLE moments (moment timestamptz PRIMARY KEY, filter tlbf);
DO $$
DECLARE
    wanted timestamptz[] := ARRAY['1998-05-01 02:00+00', '1998-05-01 09:30+00',
                                  '1998-05-01 17:34+00', '1998-05-01 21:59+00'];
    next_moment int := 1;
    f tlbf := tlbf_create(span => '10 minutes', error_rate => 0.01, capacity => 1000);
    r record;
BEGIN
    FOR r IN SELECT client, at FROM requests ORDER BY at, id LOOP
        WHILE next_moment <= cardinality(wanted) AND r.at > wanted[next_moment] LOOP
            INSERT INTO moments VALUES (wanted[next_moment], f);
            next_moment := next_moment + 1;
        END LOOP;
        f := tlbf_add(f, r.client, r.at);
    END LOOP;
END $$;

\echo
\echo '== Was each client seen in the 10 minutes before the moment? Filter against the exact answer'
WITH clients AS (SELECT DISTINCT client FROM requests),
answers AS (
    SELECT m.moment, c.client,
           tlbf_contains(m.filter, c.client, m.moment) AS filter_says,
           EXISTS (SELECT 1 FROM requests r
                   WHERE r.client = c.client
                     AND r.at > m.moment - interval '10 minutes' AND r.at <= m.moment) AS truth
    FROM moments m CROSS JOIN clients c
)
SELECT moment,
       count(*) FILTER (WHERE truth) AS seen_clients,
       count(*) FILTER (WHERE truth AND filter_says) AS found,
       count(*) FILTER (WHERE truth AND NOT filter_says) AS missed,
       count(*) FILTER (WHERE NOT truth AND filter_says) AS false_positives,
       round(100.0 * count(*) FILTER (WHERE NOT truth AND filter_says)
             / count(*) FILTER (WHERE NOT truth), 2) AS false_positive_pct
FROM answers GROUP BY moment ORDER BY moment;

\echo
\echo '== The filter at the day''s busiest minute, in one line (tlbf_summary) ...'
SELECT tlbf_summary(filter, moment) FROM moments WHERE moment = '1998-05-01 17:34+00';

\echo '== ... and in full (tlbf_info)'
SELECT key, value
FROM moments, jsonb_each(tlbf_info(filter, moment))
WHERE moment = '1998-05-01 17:34+00' AND key <> 'bands'
ORDER BY key;

\echo
\echo '== Its generations (200 seconds each), newest first: the distinct keys of each'
SELECT (g->>'start')::timestamptz AS generation_start, g->'keys' AS keys, g->'live' AS asked
FROM moments,
     jsonb_array_elements(tlbf_info(filter, moment)->'bands') AS b(band),
     jsonb_array_elements(band->'generations') AS e(g)
WHERE moment = '1998-05-01 17:34+00'
ORDER BY 1 DESC;

\echo
\echo '== Memory: the filter against the exact set it stands for'
SELECT m.moment,
       pg_column_size(m.filter) AS filter_bytes,
       (SELECT count(*) FROM requests r
        WHERE r.at > m.moment - interval '10 minutes' AND r.at <= m.moment) AS requests_in_window,
       round(8.0 * pg_column_size(m.filter) /
             (SELECT count(*) FROM requests r
              WHERE r.at > m.moment - interval '10 minutes' AND r.at <= m.moment), 1) AS bits_per_request
FROM moments m ORDER BY m.moment;
