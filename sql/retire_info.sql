-- tlbf_info and tlbf_retire.
-- (Filters of format 2, made by tlbf_create_format2, as tlbf_create made
-- them until 1.5; tlbf_create's format 3: pg_regress format3.)
SET TimeZone = 'UTC';

-- Ten minutes of keys, one per second, in a 5-minute filter.
CREATE TABLE stream AS
SELECT g AS key, '2024-01-01 00:00+00'::timestamptz + g * interval '1 second' AS at
FROM generate_series(1, 600) g;
CREATE TABLE filter (f tlbf);
DO $$
DECLARE
    f tlbf := tlbf_create_format2('5 minutes', 0.01, 300);
    r record;
BEGIN
    FOR r IN SELECT * FROM stream ORDER BY at LOOP
        f := tlbf_add(f, r.key, r.at);
    END LOOP;
    INSERT INTO filter VALUES (f);
END $$;

SELECT key, value FROM filter, jsonb_each(tlbf_info(f, '2024-01-01 00:10+00'))
WHERE key NOT IN ('slices') ORDER BY key;

-- Each slice: its size, fill, time, and whether it has expired.
SELECT count(*) AS slices,
       count(*) FILTER (WHERE (s->>'expired')::boolean) AS expired,
       max((s->>'fill_ratio')::float8) <= 0.55 AS at_most_half_full,
       min(s->>'updated_at') AS oldest_update
FROM filter, jsonb_array_elements(tlbf_info(f, '2024-01-01 00:10+00')->'slices') s;

-- Two minutes after the last key, retiring drops the expired slices and
-- changes no answer from then on.
CREATE TABLE retired AS
SELECT tlbf_retire(f, '2024-01-01 00:12+00') AS f FROM filter;
SELECT (tlbf_info(o.f)->>'slice_count')::int - (tlbf_info(r.f)->>'slice_count')::int AS dropped,
       (tlbf_info(r.f)->>'bytes')::int < (tlbf_info(o.f)->>'bytes')::int AS smaller,
       tlbf_info(r.f, '2024-01-01 00:12+00')->'live_slices' =
           tlbf_info(o.f, '2024-01-01 00:12+00')->'live_slices' AS same_live_slices
FROM filter o, retired r;
SELECT count(*) AS differing_answers
FROM filter o, retired r, generate_series(1, 2000) g,
     (VALUES ('2024-01-01 00:12+00'::timestamptz), ('2024-01-01 00:14+00'), ('2024-01-01 00:20+00')) AS t(at)
WHERE tlbf_contains(o.f, g, t.at) <> tlbf_contains(r.f, g, t.at);

-- Nothing more to retire: the same value back.
SELECT tlbf_retire(f, '2024-01-01 00:12+00')::text = f::text AS unchanged FROM retired;

-- Long after the last key: every slice goes, the filter is a header again.
SELECT key, value FROM filter,
     jsonb_each(tlbf_info(tlbf_retire(f, '2024-01-02 00:00+00'), '2024-01-02 00:00+00'))
WHERE key IN ('slice_count', 'live_slices', 'bits', 'bytes', 'inserted', 'newest', 'oldest_live')
ORDER BY key;

-- ... and fills again from scratch.
SELECT tlbf_contains(tlbf_add(tlbf_retire(f, '2024-01-02 00:00+00'), 123456789, '2024-01-02 00:00+00'),
                     123456789, '2024-01-02 00:01+00') AS refills
FROM filter;
