-- End to end through SQL: no key within the span is ever missed, and the
-- false-positive rate stays near the target, for a steady stream and a
-- bursty, out-of-order one.
SET TimeZone = 'UTC';

-- 30,000 keys over an hour into a 10-minute filter; a snapshot every 5 minutes.
CREATE TABLE events AS
SELECT g AS key,
       '2024-01-01 00:00+00'::timestamptz + (g * 120) * interval '1 ms' AS at
FROM generate_series(1, 30000) g;
-- the same number of keys in bursts: in every 10 minutes, 2000 keys within
-- 20 seconds, then 3000 over the rest; times up to a minute out of order
CREATE TABLE bursty AS
SELECT g AS key,
       '2024-01-01 00:00+00'::timestamptz
         + (g / 5000) * interval '10 minutes'
         + (CASE WHEN g % 5000 < 2000 THEN (g % 5000) * 0.01
                 ELSE 20 + (g % 5000 - 2000) * 0.19 END) * interval '1 s'
         - ((g * 7919) % 60) * interval '1 s' AS at
FROM generate_series(1, 30000) g;

CREATE TABLE snapshots (stream text, last_key int, taken timestamptz, f tlbf);
CREATE FUNCTION take_snapshots(stream text, error_rate float8) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    f tlbf := tlbf_create('10 minutes', error_rate, 1000);
    r record;
    n int := 0;
BEGIN
    FOR r IN EXECUTE format('SELECT key, at FROM %I ORDER BY key', stream) LOOP
        f := tlbf_add(f, r.key, r.at);
        n := n + 1;
        IF n % 2500 = 0 THEN
            INSERT INTO snapshots VALUES (stream, r.key, (tlbf_info(f)->>'newest')::timestamptz, f);
        END IF;
    END LOOP;
END $$;
SELECT take_snapshots('events', 0.01), take_snapshots('bursty', 0.001);

-- Every key added before a snapshot, within the span before its time, is
-- found, both at that time and at the end of its own span.
SELECT s.stream, count(*) AS checked,
       count(*) FILTER (WHERE NOT tlbf_contains(s.f, e.key, s.taken)
                           OR NOT tlbf_contains(s.f, e.key, e.at + interval '10 minutes')) AS missed
FROM snapshots s
JOIN LATERAL (SELECT * FROM events WHERE s.stream = 'events'
              UNION ALL SELECT * FROM bursty WHERE s.stream = 'bursty') e
  ON e.key <= s.last_key AND e.at >= s.taken - interval '10 minutes'
GROUP BY s.stream ORDER BY s.stream;

-- False positives over 200,000 absent keys at the last snapshot.
SELECT s.stream, tlbf_info(s.f)->'error_rate' AS target,
       (SELECT count(*) FILTER (WHERE tlbf_contains(s.f, g, s.taken))
        FROM generate_series(1000001, 1200000) g)::float8 / 200000
           <= 1.25 * (tlbf_info(s.f)->>'error_rate')::float8 AS within_target
FROM snapshots s
WHERE s.last_key = 30000 ORDER BY s.stream;
