-- A stand-in for the access log: 200,000 requests over one day from 17,500
-- clients, a few of them very busy (a Zipf-like skew), in the log's format.
INSERT INTO raw_requests (client, day, time, url, status, size)
SELECT floor(17500 * power(random(), 3))::bigint,
       to_char(t, 'DD/Mon/YYYY'), to_char(t, 'HH24:MI:SS'), '/generated', '200', '0'
FROM (SELECT '1998-04-30 22:00:00+00'::timestamptz + (g * 0.432) * interval '1 second' AS t
      FROM generate_series(1, 200000) g) AS s;
