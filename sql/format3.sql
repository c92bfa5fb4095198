-- Format 3 (issue 36, in development): values of the one-line layout
-- (docs/format.md), made by its core and given here in their text form, go
-- through the text and binary forms and tlbf_add, tlbf_contains,
-- tlbf_retire, tlbf_retirable, tlbf_union, tlbf_union_agg, tlbf_info,
-- tlbf_summary, tlbf_last_seen and tlbf_probability; tlbf_create_format3
-- and tlbf_agg_format3 make them.
SET TimeZone = 'UTC';

-- Empty filters of format 3: span 1 hour (twice: 2 hours), 1%, a guess of
-- 1,000 keys (a declared capacity of 30,000).
CREATE TABLE empty3 (name text, f tlbf);
INSERT INTO empty3 VALUES
('hour', 'VExCRgMAAQEDAAAAAKST1gAAAAAAjIZHAAAAAHsUrkfheoQ/AADGjle/LUDoAwAAAAAAAAAAAAAAAAAAAAAAAAAAAIAAAAgAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=='),
('two hours', 'VExCRgMAAQEDAAAAAEgnrQEAAAAAGA2PAAAAAHsUrkfheoQ/AADGjle/LUDoAwAAAAAAAAAAAAAAAAAAAAAAAAAAAIAAAAgAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=='),
('declared', 'VExCRgMAAQEDAAAAAKST1gAAAAAAjIZHAAAAAHsUrkfheoQ/AADGjle/LUAwdQAAAAAAAAAAAAAAAAAAAAAAAAAAAIAAAAgBAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==');

SELECT name, tlbf_info(f)->'version' AS version, tlbf_info(f)->'generations' AS generations,
       tlbf_info(f)->'k' AS k, tlbf_info(f)->'bytes' AS bytes, tlbf_info(f)->'declared' AS declared
FROM empty3 ORDER BY name;

-- Three hours of keys, one every 2 seconds (5,400), into the hour filter.
CREATE TABLE stream3 AS
SELECT g AS key, '2024-01-01 00:00+00'::timestamptz + g * interval '2 seconds' AS at
FROM generate_series(1, 5400) g;
CREATE TABLE filter3 (f tlbf);
DO $$
DECLARE
    f tlbf := (SELECT f FROM empty3 WHERE name = 'hour');
    r record;
BEGIN
    FOR r IN SELECT * FROM stream3 ORDER BY at LOOP
        f := tlbf_add(f, r.key, r.at);
    END LOOP;
    INSERT INTO filter3 VALUES (f);
END $$;

-- Every key of the last hour is found, at the end and at its time plus the
-- span; the error rate of 20,000 keys never added is near its target.
SELECT count(*) FILTER (WHERE NOT tlbf_contains(f, key, '2024-01-01 03:00+00')) AS missed_at_end,
       count(*) FILTER (WHERE NOT tlbf_contains(f, key, at + interval '1 hour')) AS missed_at_expiry
FROM filter3, stream3 WHERE at >= '2024-01-01 02:00+00';
SELECT count(*) FILTER (WHERE tlbf_contains(f, g, '2024-01-01 03:00+00')) BETWEEN 20 AND 220 AS near_one_percent
FROM filter3, generate_series(1000001, 1020000) g;
-- a window of 10 minutes: the keys of the last 10 minutes, and not those
-- an hour old (their generation ended 40 minutes before)
SELECT tlbf_contains(f, 5400, '2024-01-01 03:00+00', '10 minutes') AS newest,
       tlbf_contains(f, 3600, '2024-01-01 03:00+00', '10 minutes') AS hour_old
FROM filter3;
SELECT tlbf_contains(f, 5400, '2024-01-01 03:00+00', '2 hours') FROM filter3;

-- The kind of key is recorded with the first key, as in format 2: text
-- that reads as the filter's integers is found, other text refused.
SELECT tlbf_contains(f, '5400'::text, '2024-01-01 03:00+00') AS text_key,
       tlbf_info(f)->'key_kinds' AS key_kinds FROM filter3;
SELECT tlbf_contains(f, 'x'::text, '2024-01-01 03:00+00') FROM filter3;

-- tlbf_info: three generations a span of 600 keys each (and the key at
-- 03:00, the newest generation's first: 1,801 distinct keys, within the
-- range given), the oldest asked starting an hour before 03:00; one band,
-- of 22.2 bits per live key (sized for 600 keys and their noise, 3 /
-- sqrt(600) more).
SELECT (tlbf_info(f, '2024-01-01 03:00+00')->>'live_keys_low')::float8 <= 1801 AND
       (tlbf_info(f, '2024-01-01 03:00+00')->>'live_keys_high')::float8 >= 1801 AS live_keys_in_range,
       tlbf_info(f, '2024-01-01 03:00+00')->>'oldest_live' AS oldest_live,
       tlbf_info(f)->'band_count' AS bands,
       (tlbf_info(f, '2024-01-01 03:00+00')->'bits_per_live_key')::float8 BETWEEN 15 AND 23 AS bits_per_key
FROM filter3;

-- The text, binary and bytea forms carry the bytes unchanged.
SELECT f::text::tlbf::bytea = f::bytea AS text_round_trip,
       f::bytea::tlbf::bytea = f::bytea AS bytea_round_trip,
       length(f::bytea) + 4 = (tlbf_info(f)->'bytes')::int AS bytes
FROM filter3;

-- Damaged values are refused, whole: cut short, nine bands, a generation
-- far in the future (the first slot's, bytes 100 to 107), a version no
-- reader knows.
SELECT substr(f::text, 1, 200)::tlbf FROM filter3;
SELECT set_byte(f::bytea, 10, 9)::tlbf FROM filter3;
SELECT set_byte(f::bytea, 106, 127)::tlbf FROM filter3;
SELECT set_byte(f::bytea, 4, 4)::tlbf FROM filter3;
SELECT substr(f::bytea, 1, 200)::tlbf FROM filter3;

-- tlbf_retire: nothing to retire at the newest time (the same value), the
-- generations older than the span two hours on (the value shrinks to its
-- header, as one of format 2 does, and is retirable no more); answers
-- after that time do not change; a new key after it goes into a band sized
-- about as before (within 10%).
SELECT tlbf_retirable(f, '2024-01-01 03:00+00') AS now_retirable,
       tlbf_retire(f, '2024-01-01 03:00+00')::bytea = f::bytea AS unchanged,
       tlbf_retirable(f, '2024-01-01 05:00+00') AS later_retirable,
       tlbf_info(tlbf_retire(f, '2024-01-01 05:00+00'))->'band_count' AS bands_left,
       octet_length(tlbf_retire(f, '2024-01-01 05:00+00')::bytea) AS bytes_left,
       tlbf_retirable(tlbf_retire(f, '2024-01-01 05:00+00'), '2024-01-01 06:00+00') AS retirable_again,
       tlbf_contains(tlbf_retire(f, '2024-01-01 03:30+00'), 5400, '2024-01-01 03:30+00') AS still_found,
       abs((tlbf_info(tlbf_add(tlbf_retire(f, '2024-01-01 05:00+00'), 1, '2024-01-01 05:00+00'))->'bands'->0->>'lines')::float8
           / (tlbf_info(tlbf_add(f, 1, '2024-01-01 05:00+00'))->'bands'->0->>'lines')::float8 - 1) < 0.1 AS sized_as_before
FROM filter3;

-- tlbf_union: the keys split in two by parity, built apart with the
-- declared capacity, unite into the bytes of one filter of all the keys.
CREATE TABLE shards3 (part int, f tlbf);
DO $$
DECLARE
    whole tlbf := (SELECT f FROM empty3 WHERE name = 'declared');
    odd tlbf := whole;
    even tlbf := whole;
    r record;
BEGIN
    FOR r IN SELECT * FROM stream3 WHERE at < '2024-01-01 01:00+00' ORDER BY at LOOP
        whole := tlbf_add(whole, r.key, r.at);
        IF r.key % 2 = 0 THEN even := tlbf_add(even, r.key, r.at);
        ELSE odd := tlbf_add(odd, r.key, r.at); END IF;
    END LOOP;
    INSERT INTO shards3 VALUES (0, whole), (1, odd), (2, even);
END $$;
-- (every byte: the bits, and the counts of bits set, times and insertions)
SELECT tlbf_info(w.f)->'band_count' AS bands, tlbf_info(tlbf_union(o.f, e.f))->'band_count' AS union_bands,
       tlbf_union(o.f, e.f)::bytea = w.f::bytea AS same_bytes_as_one_builder,
       (SELECT count(*) FROM stream3 WHERE at < '2024-01-01 01:00+00'
        AND NOT tlbf_contains(tlbf_union(o.f, e.f), key, '2024-01-01 01:00+00')) AS missed
FROM shards3 w, shards3 o, shards3 e WHERE w.part = 0 AND o.part = 1 AND e.part = 2;

-- tlbf_create makes format 3 since 1.5: tlbf_create_format3's value for the
-- same span, error rate and capacity (a guess); given k and l (the paper's
-- parameters), format 2, as tlbf_create_format2 does without them; a span
-- of a few microseconds has one generation; its arguments are checked as
-- before.
SELECT tlbf_create('1 hour')::bytea = tlbf_create_format3('1 hour')::bytea AS same_as_format3,
       tlbf_create('10 minutes', 0.001, 5000)::bytea = tlbf_create_format3('10 minutes', 0.001, 5000)::bytea
         AS same_with_parameters,
       tlbf_info(tlbf_create('1 hour', k => 10, l => 25))->'version' AS with_k_and_l,
       tlbf_info(tlbf_create_format2('1 hour'))->'version' AS format2,
       tlbf_info(tlbf_add(tlbf_create('1 hour'), 1))->'version' AS after_add;
SELECT span, tlbf_info(tlbf_create(span::interval))->'generations' AS generations,
       tlbf_contains(tlbf_add(tlbf_create(span::interval), 1, '2024-01-01'), 1, '2024-01-01') AS found
FROM (VALUES ('0.000001 seconds'), ('0.000002 seconds'), ('0.000003 seconds'), ('1 hour')) v(span);
SELECT outcome($$SELECT tlbf_create('1 hour', 0.7)$$);
SELECT outcome($$SELECT tlbf_create('1 month')$$);
-- Unions refused: another span ...
SELECT tlbf_union(a.f, b.f) FROM empty3 a, empty3 b WHERE a.name = 'hour' AND b.name = 'two hours';
-- ... and, worded as for format 2 (the same SQLSTATEs), keys of different
-- kinds or types, and (which format 2 merges with its smaller k) different
-- error rates: format 3 unites bit for bit.
SELECT tlbf_add(tlbf_create_format3('1 hour'), 1) || tlbf_add(tlbf_create_format3('1 hour'), 'a'::text);
SELECT tlbf_add(tlbf_create_format3('1 hour'), '10.0.0.1'::inet) || tlbf_add(tlbf_create_format3('1 hour'), '12:00'::time);
SELECT tlbf_create_format3('1 hour', 0.01) || tlbf_create_format3('1 hour', 0.001);
-- A filter that holds no key takes the other's kind.
SELECT tlbf_contains(tlbf_create_format3('1 hour') || tlbf_add(tlbf_create_format3('1 hour'), 'a'::text, now()), 'a'::text) AS empty_takes_kind;

-- A union with a filter of format 1 or 2 (whose bits cannot be merged)
-- carries the older one whole, frozen, behind the bands: queries ask both
-- parts; new keys go to the bands; the carried value goes once tlbf_add or
-- tlbf_retire moves past its span (its keys have all expired).  Here the
-- old filter holds keys 1-500 added at 00:00-00:10, the new one keys
-- 501-1000 at 00:20-00:30.
CREATE TABLE carry3 AS
SELECT (SELECT agg2(g, '2024-01-01 00:00+00'::timestamptz + g * interval '1.2 s', '1 hour' ORDER BY g)
        FROM generate_series(1, 500) g) AS old,
       (SELECT tlbf_agg(g, '2024-01-01 00:20+00'::timestamptz + (g - 500) * interval '1.2 s', '1 hour')
        FROM generate_series(501, 1000) g) AS new;
ALTER TABLE carry3 ADD COLUMN u tlbf;
UPDATE carry3 SET u = new || old;
SELECT tlbf_summary(u, '2024-01-01 00:40+00') FROM carry3;
SELECT tlbf_info(u, '2024-01-01 00:40+00')->'version' AS version,
       tlbf_info(u, '2024-01-01 00:40+00')->'carries'->'version' AS carried_version,
       (tlbf_info(u, '2024-01-01 00:40+00')->'bytes')::int =
         (tlbf_info(new)->'bytes')::int + (tlbf_info(old)->'bytes')::int AS bytes_of_both,
       (old || new)::bytea = u::bytea AS either_order,
       (u::text)::tlbf::bytea = u::bytea AS text_round_trip,
       decode(u::text, 'base64') = tlbf_send(u) AS send_matches_text
FROM carry3;
SELECT count(*) FILTER (WHERE NOT tlbf_contains(u, g, '2024-01-01 00:40+00')) AS missed,
       count(*) FILTER (WHERE tlbf_contains(u, g + 1000000, '2024-01-01 00:40+00')) < 40 AS few_false,
       count(*) FILTER (WHERE tlbf_last_seen(u, g, '2024-01-01 00:40+00') IS NULL) AS unseen,
       count(*) FILTER (WHERE tlbf_probability(u, g, '2024-01-01 00:40+00', NULL, 0.5) < 0.9) AS doubted
FROM carry3, generate_series(1, 1000) g;
-- the newer answer of the two parts, and either part's probability
SELECT upper(tlbf_last_seen(u, 7, '2024-01-01 00:40+00')) AS old_key_last_seen,
       upper(tlbf_last_seen(tlbf_add(u, 7, '2024-01-01 00:35+00'), 7, '2024-01-01 00:40+00'))
         AS added_again_last_seen,
       round(tlbf_probability(u, 1000007, '2024-01-01 00:40+00', NULL, 0.5)::numeric, 2) AS absent_key
FROM carry3;
-- new keys go to the bands; the carried value stays while its keys are
-- in the span, and goes after (tlbf_add, tlbf_retire: at most one span)
SELECT tlbf_contains(tlbf_add(u, 2000, '2024-01-01 00:50+00'), 7, '2024-01-01 00:50+00') AS kept_in_span,
       tlbf_info(tlbf_add(u, 2000, '2024-01-01 00:50+00'))->'carries' IS NOT NULL AS still_carried,
       tlbf_info(tlbf_add(u, 2000, '2024-01-01 01:15+00'))->'carries' IS NULL AS dropped_by_add,
       tlbf_info(tlbf_retire(u, '2024-01-01 01:15+00'))->'carries' IS NULL AS dropped_by_retire,
       tlbf_retirable(u, '2024-01-01 01:15+00') AS retirable,
       tlbf_retire(u, '2024-01-01 01:45+00')::bytea = tlbf_retire(new, '2024-01-01 01:45+00')::bytea
         AS then_the_bands_alone
FROM carry3;
-- tlbf_union_agg carries the same, in any order and from a parallel plan
CREATE TABLE carry3_parts AS
SELECT part, agg2(g, '2024-01-01 00:00+00'::timestamptz + g * interval '1.2 s', '1 hour' ORDER BY g) AS f
FROM generate_series(1, 500) g, LATERAL (SELECT g % 4 AS part) p GROUP BY part
UNION ALL
SELECT 10 + part, tlbf_agg(g, '2024-01-01 00:20+00'::timestamptz + (g - 500) * interval '1.2 s', '1 hour')
FROM generate_series(501, 1000) g, LATERAL (SELECT g % 4 AS part) p GROUP BY part;
SELECT count(*) FILTER (WHERE NOT tlbf_contains(f, g, '2024-01-01 00:40+00')) AS missed,
       tlbf_info(f)->'carries'->'version' AS carried_version
FROM (SELECT tlbf_union_agg(f ORDER BY part DESC) AS f FROM carry3_parts) u, generate_series(1, 1000) g GROUP BY 2;
SELECT count(*) FILTER (WHERE NOT tlbf_contains(f, g, '2024-01-01 00:40+00')) AS shuffled_missed
FROM (SELECT tlbf_union_agg(f ORDER BY md5(part::text)) AS f FROM carry3_parts) u, generate_series(1, 1000) g;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT tlbf_union_agg(f) FROM carry3_parts;
SELECT count(*) FILTER (WHERE NOT tlbf_contains(f, g, '2024-01-01 00:40+00')) AS parallel_missed
FROM (SELECT tlbf_union_agg(f) AS f FROM carry3_parts) u, generate_series(1, 1000) g;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;
-- a union with a carrier keeps a declared capacity the bands share
SELECT tlbf_info(d || (d || old))->'declared' AS declared_kept
FROM carry3, (SELECT tlbf_add(tlbf_create_format3('1 hour', 0.01, 1000, true), 3, '2024-01-01 00:30+00') AS d) s;
-- refused as a union of format 2 is: another span, keys of another kind
SELECT new || tlbf_add(tlbf_create_format2('2 hours'), 1, '2024-01-01') FROM carry3;
SELECT new || tlbf_add(tlbf_create_format2('1 hour'), 'a'::text, '2024-01-01') FROM carry3;
-- tlbf_to_format3: a value of format 1 or 2 as one of format 3 carrying it
-- (empty bands sized for its observed rate): every answer as before, for
-- keys it holds and keys it does not, at any time; new keys go to the
-- bands; a value of format 3 comes back as it is.  tlbf_format reads the
-- header alone.
SELECT tlbf_format(old) AS old_format, tlbf_format(new) AS new_format, tlbf_format(u) AS union_format,
       tlbf_format(tlbf_to_format3(old)) AS moved_format,
       tlbf_info(tlbf_to_format3(old))->'carries'->'version' AS carried_version,
       tlbf_to_format3(new)::bytea = new::bytea AS format3_unchanged,
       tlbf_to_format3(u)::bytea = u::bytea AS carrier_unchanged,
       tlbf_to_format3(NULL) IS NULL AS null_null,
       tlbf_info(tlbf_to_format3(tlbf_retire(old, '2024-01-01 02:00+00')))->'carries' IS NULL AS empty_carries_nothing
FROM carry3;
SELECT count(*) FILTER (WHERE tlbf_contains(m, g, t) <> tlbf_contains(old, g, t)) AS contains_changed,
       count(*) FILTER (WHERE tlbf_last_seen(m, g, t) IS DISTINCT FROM tlbf_last_seen(old, g, t)) AS last_seen_changed,
       count(*) FILTER (WHERE g <= 500 AND t < '2024-01-01 01:00+00' AND NOT tlbf_contains(m, g, t)) AS missed
FROM (SELECT old, tlbf_to_format3(old) AS m FROM carry3) c, generate_series(1, 2000) g,
     unnest(ARRAY['2024-01-01 00:10+00', '2024-01-01 00:40+00', '2024-01-01 01:05+00']::timestamptz[]) t;
SELECT tlbf_contains(a, 7, '2024-01-01 00:40+00') AS old_key, tlbf_contains(a, 5000, '2024-01-01 00:40+00') AS new_key,
       tlbf_info(a)->'carries' IS NOT NULL AS carried,
       tlbf_info(tlbf_add(a, 5001, '2024-01-01 01:15+00'))->'carries' IS NULL AS dropped_after_span,
       tlbf_contains(a, '5000'::text, '2024-01-01 00:40+00') AS text_of_an_integer
FROM (SELECT tlbf_add(tlbf_to_format3(old), 5000, '2024-01-01 00:30+00') AS a FROM carry3) s;
-- its bands take the keys the old value took: a key of another kind is
-- refused as it was (the old value holds integers)
SELECT tlbf_add(old, 'x'::text, '2024-01-01 00:30+00') FROM carry3;
SELECT tlbf_add(tlbf_to_format3(old), 'x'::text, '2024-01-01 00:30+00') FROM carry3;
-- its first generation is sized for the rate the old value saw (500 keys
-- in 10 minutes: 3,000 an hour), not its creator's guess (1,000)
SELECT (tlbf_info(tlbf_add(tlbf_to_format3(old), 1, '2024-01-01 00:30+00'))->>'bytes')::int >
       (tlbf_info(tlbf_add(tlbf_create('1 hour'), 1, '2024-01-01 00:30+00'))->>'bytes')::int
         + (tlbf_info(old)->>'bytes')::int AS sized_for_rate
FROM carry3;
-- what it returns does not depend on tlbf.max_filter_bytes (IMMUTABLE): a
-- lower setting makes the first tlbf_add fail instead
CREATE TEMP TABLE moved_default AS
SELECT f, tlbf_to_format3(f)::bytea AS b FROM (SELECT tlbf_create_format2('1 hour', 0.01, 1000000) AS f) s;
SET tlbf.max_filter_bytes = '64kB';
SELECT tlbf_to_format3(f)::bytea = b AS same_under_any_setting FROM moved_default;
SELECT tlbf_add(tlbf_to_format3(f), 1, '2024-01-01 00:30+00') FROM moved_default;
RESET tlbf.max_filter_bytes;
-- tlbf_agg_format3's states carry nothing (a user's aggregate may pass one)
SELECT format('CREATE AGGREGATE pg_temp.onto_carrier2(item int, at timestamptz, span interval, error_rate float8, capacity bigint) ('
              'SFUNC = tlbf_agg_format3_trans, STYPE = tlbf, INITCOND = %L)', u::text) AS ddl FROM carry3 \gset
SELECT outcome(:'ddl');
SELECT outcome('SELECT pg_temp.onto_carrier2(1, ''2024-01-01 00:30+00'', ''1 hour'', 0.01, 1000)');
-- Damaged carriers are refused: the flag without a carried value, a
-- carried value cut short, of format 3, or of another span.
SELECT outcome(format('SELECT %L::bytea::tlbf', set_byte(new::bytea, 71, get_byte(new::bytea, 71) | 2))) FROM carry3;
SELECT outcome(format('SELECT %L::bytea::tlbf', substr(u::bytea, 1, octet_length(u::bytea) - 8))) FROM carry3;
SELECT outcome(format('SELECT %L::bytea::tlbf', set_byte(u::bytea, octet_length(new::bytea) + 8, 3))) FROM carry3;
SELECT outcome(format('SELECT %L::bytea::tlbf', set_byte(u::bytea, octet_length(new::bytea) + 36, 1))) FROM carry3;

-- tlbf_last_seen: the generation (20 minutes) in which a key was last
-- added, cut at 'at'; NULL for a key not added.
SELECT tlbf_last_seen(f, 5400, '2024-01-01 03:00+00') AS newest_key,
       tlbf_last_seen(f, 4000, '2024-01-01 03:00+00') AS older_key,
       tlbf_last_seen(f, 1000001, '2024-01-01 03:00+00') AS not_added
FROM filter3;

-- Made by SQL (1.5, until tlbf_create and tlbf_agg make format 3):
-- tlbf_create_format3 gives the empty filters above, a NULL argument NULL;
-- bad parameters are refused as tlbf_create's are.
SELECT name, tlbf_create_format3('1 hour', 0.01, 1000, false)::bytea = f::bytea AS guess,
       tlbf_create_format3('1 hour', 0.01, 30000, true)::bytea = f::bytea AS declared
FROM empty3 WHERE name IN ('hour', 'declared') ORDER BY name;
SELECT tlbf_create_format3('1 hour')::bytea = f::bytea AS defaults FROM empty3 WHERE name = 'hour';
SELECT tlbf_create_format3(NULL) IS NULL AS null_span,
       tlbf_create_format3('1 hour', 0.01, 1000, NULL) IS NULL AS null_declared;
SELECT tlbf_create_format3('1 hour', 0.7);
SELECT tlbf_create_format3('1 hour', 0.01, 0, true);
SELECT tlbf_create_format3('1 hour', 0.01, 0);
SELECT tlbf_create_format3('1 month');
SET tlbf.max_filter_bytes = '1MB';
SELECT tlbf_create_format3('1 hour', 0.01, 10000000, true);
RESET tlbf.max_filter_bytes;

-- tlbf_agg_format3(item, at, span, error_rate, capacity): a filter with
-- a declared capacity, the bytes of tlbf_add fed the rows one by one, in
-- any order the rows come; rows with a NULL item or time are skipped.
CREATE TABLE added3 AS SELECT 0 AS part, tlbf_create_format3('1 hour', 0.01, 1800, true) AS f;
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM stream3 ORDER BY at LOOP
        UPDATE added3 SET f = tlbf_add(f, r.key, r.at);
    END LOOP;
END $$;
SELECT (SELECT f FROM added3)::bytea = tlbf_agg_format3(key, at, '1 hour', 0.01, 1800)::bytea AS as_added,
       (SELECT f FROM added3)::bytea = tlbf_agg_format3(key, at, '1 hour', 0.01, 1800 ORDER BY key DESC)::bytea AS backwards,
       (SELECT f FROM added3)::bytea = tlbf_agg_format3(key, at, '1 hour', 0.01, 1800 ORDER BY md5(key::text))::bytea AS shuffled
FROM stream3;
SELECT (SELECT f FROM added3)::bytea =
       tlbf_agg_format3(CASE WHEN key > 0 THEN key END, at, '1 hour', 0.01, 1800)::bytea AS nulls_skipped
FROM (SELECT key, at FROM stream3 UNION ALL SELECT NULL, now() UNION ALL SELECT 1, NULL) s;
SELECT tlbf_agg_format3(key, at, '1 hour', 0.01, 1800) IS NULL AS no_rows_null
FROM stream3 WHERE key < 0;
SELECT tlbf_agg_format3(NULL::int, at, '1 hour', 0.01, 1800) IS NULL AS only_null_rows FROM stream3;

-- A declared filter past 1 MB (here 3.3 MB) holds up to 1,024 keys back
-- and sets them together (tb_insert_many, whose bytes are those of the
-- keys one by one: the core's unit tests and fuzz_format3 check that): the
-- same bytes in any order, in one state or in three groups, and every key
-- found.
CREATE TABLE wide3 AS SELECT g AS key, '2024-01-01 00:00+00'::timestamptz + g * interval '150 ms' AS at
FROM generate_series(1, 20000) g;
SELECT f::bytea = (SELECT tlbf_agg_format3(key, at, '1 hour', 0.01, 1000000 ORDER BY key DESC)::bytea FROM wide3) AS backwards,
       f::bytea = (SELECT tlbf_agg_format3(key, at, '1 hour', 0.01, 1000000 ORDER BY md5(key::text))::bytea FROM wide3) AS shuffled,
       f::bytea = (SELECT tlbf_union_agg(g)::bytea FROM (SELECT tlbf_agg_format3(key, at, '1 hour', 0.01, 1000000) AS g
                                                        FROM wide3 GROUP BY key % 3) s) AS groups_unite,
       (SELECT count(*) FROM wide3 WHERE tlbf_contains(f, key, '2024-01-01 00:50+00')) AS found,
       octet_length(f::bytea) > 1024 * 1024 AS past_1mb
FROM (SELECT tlbf_agg_format3(key, at, '1 hour', 0.01, 1000000) AS f FROM wide3) s;
DROP TABLE wide3;

-- Keys of other types, one kind or several, of a collation: the aggregate
-- (which hashes a state's keys with their type's hasher once its first key
-- showed that the general path would) gives the bytes of tlbf_add called
-- on each row (pg_temp.add_each).
SELECT tlbf_create_format3('1 hour', 0.01, 3000, true)::text AS empty_3000 \gset
CREATE AGGREGATE pg_temp.add_each(item "any", at timestamptz) (
    SFUNC = tlbf_add, STYPE = tlbf, INITCOND = :'empty_3000');
CREATE TABLE keys3 AS
SELECT g, '2024-01-01 00:00+00'::timestamptz + g * interval '1 second' AS at FROM generate_series(1, 2000) g;
SELECT 'smallint' AS key, pg_temp.add_each(g::smallint, at)::bytea = tlbf_agg_format3(g::smallint, at, '1 hour', 0.01, 3000)::bytea AS same FROM keys3
UNION ALL SELECT 'integer', pg_temp.add_each(g::int, at)::bytea = tlbf_agg_format3(g::int, at, '1 hour', 0.01, 3000)::bytea FROM keys3
UNION ALL SELECT 'text', pg_temp.add_each('k' || g, at)::bytea = tlbf_agg_format3('k' || g, at, '1 hour', 0.01, 3000)::bytea FROM keys3
UNION ALL SELECT 'text, "C"', pg_temp.add_each(('k' || g) COLLATE "C", at)::bytea = tlbf_agg_format3(('k' || g) COLLATE "C", at, '1 hour', 0.01, 3000)::bytea FROM keys3
UNION ALL SELECT 'text of integers', pg_temp.add_each((g % 50)::text, at)::bytea = tlbf_agg_format3((g % 50)::text, at, '1 hour', 0.01, 3000)::bytea FROM keys3
UNION ALL SELECT 'text, mixed', pg_temp.add_each(CASE WHEN g % 2 = 0 THEN g::text ELSE 'k' || g END, at)::bytea =
                 tlbf_agg_format3(CASE WHEN g % 2 = 0 THEN g::text ELSE 'k' || g END, at, '1 hour', 0.01, 3000)::bytea FROM keys3
UNION ALL SELECT 'uuid', pg_temp.add_each(md5(g::text)::uuid, at)::bytea = tlbf_agg_format3(md5(g::text)::uuid, at, '1 hour', 0.01, 3000)::bytea FROM keys3
UNION ALL SELECT 'numeric', pg_temp.add_each(g::numeric / 7, at)::bytea = tlbf_agg_format3(g::numeric / 7, at, '1 hour', 0.01, 3000)::bytea FROM keys3
UNION ALL SELECT 'float8', pg_temp.add_each(g::float8 / 3, at)::bytea = tlbf_agg_format3(g::float8 / 3, at, '1 hour', 0.01, 3000)::bytea FROM keys3
UNION ALL SELECT 'float4', pg_temp.add_each(g::float4, at)::bytea = tlbf_agg_format3(g::float4, at, '1 hour', 0.01, 3000)::bytea FROM keys3
UNION ALL SELECT 'date', pg_temp.add_each('2024-01-01'::date + g, at)::bytea = tlbf_agg_format3('2024-01-01'::date + g, at, '1 hour', 0.01, 3000)::bytea FROM keys3
UNION ALL SELECT 'row', pg_temp.add_each(ROW(g, 'x' || g), at)::bytea = tlbf_agg_format3(ROW(g, 'x' || g), at, '1 hour', 0.01, 3000)::bytea FROM keys3;

-- The same bytes from any plan: a parallel one (partial states merged by
-- OR), groups hashed or sorted, shards united.
CREATE TABLE big3 AS SELECT g AS key, '2024-01-01 00:00+00'::timestamptz + g * interval '20 ms' AS at
FROM generate_series(1, 200000) g;
ANALYZE big3;
CREATE TABLE serial3 AS SELECT tlbf_agg_format3(key, at, '1 hour', 0.01, 200000) AS f FROM big3;
CREATE TABLE serial3n AS SELECT tlbf_agg_format3(key::numeric, at, '1 hour', 0.01, 200000) AS f FROM big3;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT tlbf_agg_format3(key, at, '1 hour', 0.01, 200000) FROM big3;
SELECT tlbf_agg_format3(key, at, '1 hour', 0.01, 200000)::bytea = (SELECT f FROM serial3)::bytea AS parallel_same
FROM big3;
-- (an item type with no typed form: the state is internal, serialized)
SELECT tlbf_agg_format3(key::numeric, at, '1 hour', 0.01, 200000)::bytea = (SELECT f FROM serial3n)::bytea
       AS parallel_same_numeric
FROM big3;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
SET enable_sort = off;
CREATE TABLE hashed3 AS SELECT key % 3 AS part, tlbf_agg_format3(key, at, '1 hour', 0.01, 200000) AS f
FROM big3 GROUP BY key % 3;
RESET enable_sort;
SET enable_hashagg = off;
SELECT h.part, h.f::bytea = g.f::bytea AS hashed_same_as_sorted
FROM hashed3 h, (SELECT key % 3 AS part, tlbf_agg_format3(key, at, '1 hour', 0.01, 200000) AS f
                 FROM big3 GROUP BY key % 3) g
WHERE h.part = g.part ORDER BY h.part;
RESET enable_hashagg;
-- three parts of one declared capacity unite into the whole's bytes
SELECT tlbf_union(tlbf_union(a.f, b.f), c.f)::bytea =
       (SELECT tlbf_agg_format3(key, at, '1 hour', 0.01, 200000) FROM big3)::bytea AS parts_unite
FROM hashed3 a, hashed3 b, hashed3 c WHERE a.part = 0 AND b.part = 1 AND c.part = 2;
-- tlbf_union_agg unites them into the same bytes, in any order, with NULL
-- rows, and from a parallel plan (20 parts of one declared capacity, each
-- a partial state's union, united again by OR); NULL when there is nothing
-- to unite; formats 1 and 2 do not join a union of format 3 (either way).
SELECT tlbf_union_agg(h.f ORDER BY part)::bytea = (SELECT f FROM serial3)::bytea AS union_agg_same,
       tlbf_union_agg(h.f ORDER BY part DESC)::bytea = (SELECT f FROM serial3)::bytea AS backwards_same
FROM (SELECT part, f FROM hashed3 UNION ALL SELECT 3, NULL) h;
CREATE TABLE parts3 AS SELECT key % 20 AS part, tlbf_agg_format3(key, at, '1 hour', 0.01, 200000) AS f
FROM big3 GROUP BY key % 20;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT tlbf_union_agg(f) FROM parts3;
SELECT tlbf_union_agg(f)::bytea = (SELECT f FROM serial3)::bytea AS parallel_union_same FROM parts3;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;
SELECT tlbf_union_agg(f) IS NULL AS nothing_to_unite FROM parts3 WHERE part < 0;
-- (an empty filter of format 2, before or after them, changes nothing:
-- with no slice, it is not carried)
SELECT tlbf_union_agg(f ORDER BY part)::bytea = (SELECT f FROM serial3)::bytea AS empty_format2_last,
       tlbf_union_agg(f ORDER BY part DESC)::bytea = (SELECT f FROM serial3)::bytea AS empty_format2_first
FROM (SELECT part, f FROM parts3 UNION ALL SELECT 20, tlbf_create_format2('1 hour')) u;
SELECT tlbf_union_agg(f) FROM empty3;
-- every key of the last hour found, ~1% of 100,000 others
SELECT count(*) FILTER (WHERE NOT tlbf_contains(f, key, '2024-01-01 01:06:40+00')) AS missed
FROM serial3, big3 WHERE at >= '2024-01-01 00:06:40+00';
SELECT count(*) FILTER (WHERE tlbf_contains(f, g, '2024-01-01 01:06:40+00')) BETWEEN 200 AND 1100 AS near_one_percent
FROM serial3, generate_series(1000001, 1100000) g;

-- A rollup (docs/reference.md, Union): a day's filters over a span of a
-- week, whose generations (56 hours) each day cuts.  Built with one
-- declared capacity, the days unite into the bytes of the week's filter.
-- Sized apart (tlbf_agg sizes each day for its own keys), a generation's
-- parts differ in size and stay side by side: every key found, but more
-- bands and bytes than the week's own filter, and a higher error rate.
CREATE TABLE week3 AS SELECT g % 3000 AS key, '2024-01-01 00:00+00'::timestamptz + g * interval '1 min' AS at
FROM generate_series(1, 14 * 1440) g;
CREATE TABLE days3 AS SELECT date_trunc('day', at) AS day, tlbf_agg_format3(key, at, '7 days', 0.01, 10000) AS declared,
       tlbf_agg(key, at, '7 days') AS sized
FROM week3 GROUP BY 1;
SELECT u.declared::bytea = w.declared::bytea AS declared_days_unite,
       (tlbf_info(u.declared)->>'band_count')::int AS declared_bands,
       (SELECT count(*) FROM week3 WHERE at > '2024-01-08 00:00+00'
          AND NOT (tlbf_contains(u.sized, key, '2024-01-15 00:00+00') AND tlbf_contains(u.declared, key, '2024-01-15 00:00+00'))) AS missed,
       (tlbf_info(w.sized)->>'band_count')::int AS week_sized_bands,
       (tlbf_info(u.sized)->>'band_count')::int > 1 AS days_sized_side_by_side,
       octet_length(u.sized::bytea) > octet_length(w.sized::bytea) AS days_sized_larger,
       (SELECT count(*) FILTER (WHERE tlbf_contains(u.sized, -g, '2024-01-15 00:00+00'))
             > count(*) FILTER (WHERE tlbf_contains(w.sized, -g, '2024-01-15 00:00+00'))
        FROM generate_series(1, 20000) g) AS days_sized_more_false_positives
FROM (SELECT tlbf_union_agg(declared) AS declared, tlbf_union_agg(sized) AS sized FROM days3) u,
     (SELECT tlbf_agg_format3(key, at, '7 days', 0.01, 10000) AS declared, tlbf_agg(key, at, '7 days') AS sized
      FROM week3) w;
-- a union larger than tlbf.max_filter_bytes fails (54000), as every operation does
SET tlbf.max_filter_bytes = '16kB';
SELECT max(octet_length(sized::bytea)) <= 16 * 1024 AS each_day_fits FROM days3;
SELECT tlbf_union_agg(sized) FROM days3;
RESET tlbf.max_filter_bytes;
DROP TABLE week3, days3;

-- As a window function, both forms: each row's filter holds the rows so
-- far (the last one, all of them), and earlier results are not changed by
-- later rows.
SELECT key, tlbf_info(f)->'inserted' AS inserted, tlbf_contains(f, 5, '2024-01-01 00:00:11+00') AS has_5,
       tlbf_info(fn)->'inserted' AS inserted_numeric
FROM (SELECT key, tlbf_agg_format3(key, at, '1 hour', 0.01, 1800) OVER (ORDER BY at) AS f,
             tlbf_agg_format3(key::numeric, at, '1 hour', 0.01, 1800) OVER (ORDER BY at) AS fn
      FROM stream3 WHERE key <= 6) w ORDER BY key;

-- tlbf_agg(item, at, span [, error_rate]), no capacity: the rows'
-- hashes are kept per generation and the filter built at the end, one band
-- sized for the busiest generation's distinct keys (counted by a sketch).
-- A stream of 2 hours whose rate goes up tenfold after 40 minutes and
-- back after 80, keys repeated: the same bytes in any order, from a
-- parallel plan (hashes sent to the leader), hashed or sorted groups; every
-- key of the last hour found; the error rate within 1.1x of the target on
-- 200,000 keys never added; one band, its size set by the busy generations.
CREATE TABLE rated3 AS
SELECT g % 50000 AS key, '2024-01-01 00:00+00'::timestamptz + s.t AS at
FROM (SELECT g, CASE WHEN g <= 2400 THEN g * interval '1 s'
                     WHEN g <= 26400 THEN interval '40 min' + (g - 2400) * interval '100 ms'
                     ELSE interval '80 min' + (g - 26400) * interval '1 s' END AS t
      FROM generate_series(1, 28800) g) s;
CREATE TABLE built3 AS SELECT tlbf_agg(key, at, '1 hour') AS f FROM rated3;
SELECT tlbf_agg(key, at, '1 hour' ORDER BY key DESC)::bytea = (SELECT f FROM built3)::bytea AS backwards,
       tlbf_agg(key, at, '1 hour' ORDER BY md5(key::text))::bytea = (SELECT f FROM built3)::bytea AS shuffled,
       tlbf_agg(key, at, '1 hour', 0.01)::bytea = (SELECT f FROM built3)::bytea AS default_error_rate,
       tlbf_agg(CASE WHEN key > 0 THEN key END, at, '1 hour')::bytea =
         (SELECT tlbf_agg(key, at, '1 hour') FROM rated3 WHERE key > 0)::bytea AS nulls_skipped
FROM rated3;
SELECT tlbf_info(f)->'band_count' AS bands, tlbf_info(f)->'inserted' AS inserted,
       tlbf_info(f)->'declared' AS declared, tlbf_info(f)->'bytes' AS bytes
FROM built3;
-- Keys of the types Citus sees most take typed forms, whose state is a
-- tlbf_agg_state holding the hashes (Citus splits them); other keys the
-- "any" form, whose state is internal.  Both give the same bytes: the
-- "any" form called on integer keys (pg_temp.agg_any), serial, parallel
-- and spilled below.
CREATE AGGREGATE pg_temp.agg_any(item "any", at timestamptz, span interval) (
    SFUNC = tlbf_agg_trans, STYPE = internal,
    FINALFUNC = tlbf_agg_final, COMBINEFUNC = tlbf_agg_combine,
    SERIALFUNC = tlbf_agg_serialize, DESERIALFUNC = tlbf_agg_deserialize,
    PARALLEL = SAFE);
SELECT pg_temp.agg_any(key, at, '1 hour')::bytea = (SELECT f FROM built3)::bytea AS any_form_same
FROM rated3;
-- A state's hashes cross as a tlbf_agg_state (base64 in text), checked on
-- the way in; a transition function refuses a state of the other kind
-- (tlbf_union_agg's filters; an aggregate of a user's may pass one).
CREATE AGGREGATE pg_temp.hashes_of(item int, at timestamptz, span interval) (
    SFUNC = tlbf_agg_typed_trans, STYPE = tlbf_agg_state);
SELECT pg_temp.hashes_of(key, at, '1 hour')::text AS hashes_text FROM rated3 WHERE key < 5 \gset
SELECT length(:'hashes_text') AS text_length, left(:'hashes_text', 6) AS magic;
SELECT :'hashes_text'::tlbf_agg_state::text = :'hashes_text' AS round_trip;
SELECT outcome(format('SELECT %L::tlbf_agg_state', left(:'hashes_text', 40)));
SELECT outcome(format('SELECT %L::tlbf_agg_state', left(:'hashes_text', length(:'hashes_text') - 24)));
CREATE AGGREGATE pg_temp.filters_of(tlbf) (
    SFUNC = tlbf_union_agg_typed_trans, STYPE = tlbf_agg_state);
CREATE TEMP TABLE states3 AS
SELECT (SELECT pg_temp.hashes_of(key, at, '1 hour')::text FROM rated3 WHERE key < 5) AS hashes,
       (SELECT pg_temp.filters_of(f)::text FROM built3) AS filters;
DO $$
BEGIN
    EXECUTE format('CREATE AGGREGATE pg_temp.filters_onto_hashes(tlbf) ('
                   'SFUNC = tlbf_union_agg_typed_trans, STYPE = tlbf_agg_state, INITCOND = %L)',
                   (SELECT hashes FROM states3));
    EXECUTE format('CREATE AGGREGATE pg_temp.hashes_onto_filters(item int, at timestamptz, span interval) ('
                   'SFUNC = tlbf_agg_typed_trans, STYPE = tlbf_agg_state, INITCOND = %L)',
                   (SELECT filters FROM states3));
END $$;
SELECT pg_temp.filters_onto_hashes(f) FROM built3;
SELECT pg_temp.hashes_onto_filters(key, at, '1 hour') FROM rated3;
SELECT count(*) FILTER (WHERE NOT tlbf_contains(f, key, '2024-01-01 02:00+00')) AS missed
FROM built3, rated3 WHERE at >= '2024-01-01 01:00+00';
SELECT count(*) FILTER (WHERE tlbf_contains(f, g, '2024-01-01 02:00+00')) <= 2200 AS within_1_1x_target
FROM built3, generate_series(1000001, 1200000) g;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
ANALYZE rated3;
EXPLAIN (COSTS OFF) SELECT tlbf_agg(key, at, '1 hour') FROM rated3;
SELECT tlbf_agg(key, at, '1 hour')::bytea = (SELECT f FROM built3)::bytea AS parallel_same,
       pg_temp.agg_any(key, at, '1 hour')::bytea = (SELECT f FROM built3)::bytea AS any_form_parallel_same
FROM rated3;
-- A partial step passes its hashes as one value, at most 1GB (about 67M
-- rows within the span; tlbf.agg_pass_limit, a developer's setting, lowers
-- it here): past it, 54000 with a hint (declare a capacity, or run
-- serially), from either form; the serial plan has no such limit.  (The
-- leader's partial step serializes too: with no worker allowed to start,
-- the leader raises it, and no worker's CONTEXT line races into the output.)
SET tlbf.agg_pass_limit = '64kB';
SET max_parallel_workers = 0;
EXPLAIN (COSTS OFF) SELECT tlbf_agg(key, at, '1 hour') FROM big3;
SELECT tlbf_agg(key, at, '1 hour') IS NOT NULL FROM big3;
SELECT pg_temp.agg_any(key, at, '1 hour') IS NOT NULL FROM big3;
SET max_parallel_workers_per_gather = 0;
SELECT tlbf_agg(key, at, '1 hour') IS NOT NULL AS serial_built FROM big3;
RESET tlbf.agg_pass_limit;
RESET max_parallel_workers;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
SET enable_sort = off;
CREATE TABLE hashedlog3 AS SELECT key % 3 AS part, tlbf_agg(key::text, at, '1 hour', 0.02) AS f
FROM rated3 GROUP BY key % 3;
RESET enable_sort;
SET enable_hashagg = off;
SELECT h.part, h.f::bytea = g.f::bytea AS hashed_same_as_sorted
FROM hashedlog3 h, (SELECT key % 3 AS part, tlbf_agg(key::text, at, '1 hour', 0.02) AS f
                    FROM rated3 GROUP BY key % 3) g
WHERE h.part = g.part ORDER BY h.part;
RESET enable_hashagg;
-- Past its share of work_mem a state writes its chunks of hashes to a
-- temporary file, read back at the end: the same bytes serial, from a
-- parallel plan (the workers' states spill, and the leader's), hashed
-- groups (which share work_mem) and as a window aggregate; an error after
-- a spill leaves no file behind (pg_regress fails on a "temporary file
-- leak" warning).
SET work_mem = '64kB';
SELECT temp_files AS temp_files_before FROM pg_stat_database WHERE datname = current_database() \gset
SELECT tlbf_agg(key, at, '1 hour')::bytea = (SELECT f FROM built3)::bytea AS spilled_same,
       tlbf_agg(key, at, '1 hour' ORDER BY md5(key::text))::bytea = (SELECT f FROM built3)::bytea
         AS spilled_shuffled,
       pg_stat_force_next_flush() IS NOT NULL AS flushed
FROM rated3;
-- (it did spill: the database's count of temporary files went up, as the
-- statistics flushed at the end of that statement say)
SELECT temp_files > :temp_files_before AS spilled FROM pg_stat_database WHERE datname = current_database();
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT tlbf_agg(key, at, '1 hour')::bytea = (SELECT f FROM built3)::bytea AS parallel_spilled_same,
       pg_temp.agg_any(key, at, '1 hour')::bytea = (SELECT f FROM built3)::bytea AS any_form_parallel_spilled_same
FROM rated3;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
SET enable_sort = off;
SELECT h.part, h.f::bytea = g.f::bytea AS spilled_hashed_same
FROM hashedlog3 h, (SELECT key % 3 AS part, tlbf_agg(key::text, at, '1 hour', 0.02) AS f
                    FROM rated3 GROUP BY key % 3) g
WHERE h.part = g.part ORDER BY h.part;
RESET enable_sort;
-- (a window puts its rows into a filter as they come, as tlbf_add does,
-- whose final function is called after each row: 6,000 rows)
SELECT tlbf_create_format3('1 hour')::text AS empty_hour \gset
CREATE AGGREGATE pg_temp.add_all(item "any", at timestamptz) (
    SFUNC = tlbf_add, STYPE = tlbf, INITCOND = :'empty_hour');
SELECT count(*) FILTER (WHERE tlbf_info(f)->>'inserted' = n::text
                          AND tlbf_contains(f, key, at)) AS windows_right,
       bool_and(f::bytea = (SELECT pg_temp.add_all(key, at ORDER BY at)
                            FROM (SELECT * FROM rated3 ORDER BY at LIMIT 6000) r)::bytea)
         FILTER (WHERE n = 6000) AS last_is_tlbf_add_s
FROM (SELECT key, at, row_number() OVER w AS n, tlbf_agg(key, at, '1 hour') OVER w AS f
      FROM (SELECT * FROM rated3 ORDER BY at LIMIT 6000) r
      WINDOW w AS (ORDER BY at ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)) s
WHERE n % 2000 = 0;
SELECT tlbf_agg(key, CASE WHEN key = 27000 THEN 'infinity' ELSE at END, '1 hour') FROM rated3;
RESET work_mem;
-- Partitionwise aggregation: a partial aggregate per partition, combined
-- in the same process (its states serialized all the same, and their
-- chunks moved, while each partial aggregate resets its memory for its
-- next group): the same bytes, sorted and hashed, in memory and spilled.
CREATE TABLE parted3 (part int, key int, at timestamptz) PARTITION BY RANGE (key);
CREATE TABLE parted3_low PARTITION OF parted3 FOR VALUES FROM (0) TO (25000);
CREATE TABLE parted3_high PARTITION OF parted3 FOR VALUES FROM (25000) TO (50000);
INSERT INTO parted3 SELECT key % 3, key, at FROM rated3;
ANALYZE parted3;
SET enable_partitionwise_aggregate = on;
SET max_parallel_workers_per_gather = 0;
SET enable_hashagg = off;
EXPLAIN (COSTS OFF) SELECT part, tlbf_agg(key::text, at, '1 hour', 0.02) FROM parted3 GROUP BY part;
SELECT h.part, h.f::bytea = p.f::bytea AS partitionwise_sorted_same
FROM hashedlog3 h JOIN (SELECT part, tlbf_agg(key::text, at, '1 hour', 0.02) AS f
                        FROM parted3 GROUP BY part) p USING (part) ORDER BY part;
RESET enable_hashagg;
SET enable_sort = off;
SET work_mem = '64kB';
SELECT h.part, h.f::bytea = p.f::bytea AS partitionwise_hashed_spilled_same
FROM hashedlog3 h JOIN (SELECT part, tlbf_agg(key::text, at, '1 hour', 0.02) AS f
                        FROM parted3 GROUP BY part) p USING (part) ORDER BY part;
RESET work_mem;
RESET enable_sort;
RESET enable_partitionwise_aggregate;
RESET max_parallel_workers_per_gather;
-- A band larger than tlbf.agg_bucketed_band (a developer's setting; the
-- last-level cache's size) is set bucket by bucket: each run of hashes
-- sorted by its top byte first, so that the lines set stay in the cache
-- (agg_format3_log.c).  400,000 keys at 0.1% (a band of 1.9 MB) give the
-- same bytes set so as set in order, serial, reversed, spilled (read back
-- in batches of the band's size) and from a parallel plan; every key
-- found, the error rate within 1.1x of the target on 200,000 keys never
-- added.
CREATE TABLE wide3 AS
SELECT g AS key, '2024-01-01 00:00+00'::timestamptz + g * interval '5 ms' AS at
FROM generate_series(1, 400000) g;
CREATE TABLE wideb3 AS SELECT tlbf_agg(key, at, '1 hour', 0.001) AS f FROM wide3;
SET tlbf.agg_bucketed_band = '1MB';
SELECT tlbf_agg(key, at, '1 hour', 0.001)::bytea = (SELECT f FROM wideb3)::bytea AS wide_bucketed_same
FROM wide3;
SELECT (tlbf_info(f)->>'bytes')::bigint > 1048576 AS over_1mb,
       (SELECT tlbf_agg(key, at, '1 hour', 0.001 ORDER BY key DESC) FROM wide3)::bytea = f::bytea
         AS wide_reversed_same
FROM wideb3;
SELECT count(*) FILTER (WHERE NOT tlbf_contains(f, key, '2024-01-01 00:33:20+00')) AS wide_missed,
       count(*) FILTER (WHERE tlbf_contains(f, key + 1000000, '2024-01-01 00:33:20+00')) <= 220
         AS wide_error_rate_within_1_1x
FROM wide3 CROSS JOIN wideb3 WHERE key <= 400000;
SET work_mem = '64kB';
SELECT tlbf_agg(key, at, '1 hour', 0.001)::bytea = (SELECT f FROM wideb3)::bytea AS wide_spilled_same
FROM wide3;
-- (the file counts against temp_file_limit, as a sort's: 6.4 MB of hashes)
-- (its SQLSTATE: newer versions quote the setting's name in the message)
SET temp_file_limit = '1MB';
SET max_parallel_workers_per_gather = 0;
SELECT left(outcome($$SELECT tlbf_agg(key, at, '1 hour', 0.001) FROM wide3$$), 5) AS over_temp_file_limit;
RESET max_parallel_workers_per_gather;
RESET temp_file_limit;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT tlbf_agg(key, at, '1 hour', 0.001)::bytea = (SELECT f FROM wideb3)::bytea AS wide_parallel_spilled_same
FROM wide3;
RESET work_mem;
SELECT tlbf_agg(key, at, '1 hour', 0.001)::bytea = (SELECT f FROM wideb3)::bytea AS wide_parallel_same
FROM wide3;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET tlbf.agg_bucketed_band;
DROP TABLE wide3, wideb3;
-- rows older than the span before the newest are not kept; none or only
-- NULL rows give NULL; the parameters are checked
SELECT tlbf_contains(f, 1, '2024-01-01 00:30+00') AS old_key_kept,
       tlbf_info(f)->'inserted' AS inserted
FROM (SELECT tlbf_agg(k, at, '1 hour') AS f
      FROM (VALUES (1, '2024-01-01 00:00+00'::timestamptz), (2, '2024-01-01 03:00+00')) v(k, at)) s;
-- a row after a pause longer than the span (the generation of the row
-- before forgotten) goes to its own generation, whatever the generation's
-- length (an odd one here: the row was once lost)
SELECT tlbf_contains(f, 2, '2024-01-01 03:00+00') AS after_pause_found,
       tlbf_contains(f, 1, '2024-01-01 00:00+00') AS before_pause_kept
FROM (SELECT tlbf_agg(k, at, '3600.000003 seconds') AS f
      FROM (VALUES (1, '2024-01-01 00:00+00'::timestamptz), (2, '2024-01-01 03:00+00')) v(k, at)) s;
-- 40 random streams (a fixed seed): spans of any length to the
-- microsecond, rows with pauses longer than the span now and then; every
-- key of the span before the newest time found (rows in time order), and
-- the same bytes from the rows shuffled, past work_mem
SELECT setseed(0.36);
CREATE TABLE random3 AS
SELECT s, (600 + random() * 7200)::int * interval '1 s' + (random() * 1000000)::int * interval '1 microsecond' AS span
FROM generate_series(1, 40) s;
CREATE TABLE random3_rows AS
SELECT s, key, '2024-01-01 00:00+00'::timestamptz + sum(gap) OVER (PARTITION BY s ORDER BY key) AS at
FROM (SELECT s, key, CASE WHEN random() < 0.01 THEN 2.5 * span ELSE random() * span / 200 END AS gap
      FROM random3, generate_series(1, 500) key) g;
CREATE TABLE random3_built AS
SELECT s, tlbf_agg(key, at, span) AS f, max(at) AS newest FROM random3_rows JOIN random3 USING (s) GROUP BY s;
SELECT count(*) FILTER (WHERE NOT tlbf_contains(f, key, newest)) AS missed, count(*) > 4000 AS enough
FROM random3_rows r JOIN random3 USING (s) JOIN random3_built USING (s) WHERE at >= newest - span;
SET work_mem = '64kB';
SELECT count(*) FILTER (WHERE b.f::bytea <> o.f::bytea) AS differ, count(*) AS streams
FROM random3_built b JOIN (SELECT s, tlbf_agg(key, at, span ORDER BY md5(key::text)) AS f
                           FROM random3_rows JOIN random3 USING (s) GROUP BY s) o USING (s);
RESET work_mem;
SELECT tlbf_agg(key, at, '1 hour') IS NULL AS no_rows_null FROM rated3 WHERE key < 0;
SELECT tlbf_agg(NULL::int, at, '1 hour') IS NULL AS only_null_rows FROM rated3;
SELECT tlbf_agg(key, at, NULL) FROM rated3;
SELECT tlbf_agg(key, at, '1 hour', 0.7) FROM rated3;
SET tlbf.max_filter_bytes = '64kB';
SELECT tlbf_agg(key, at, '1 hour') FROM rated3;
RESET tlbf.max_filter_bytes;
SELECT tlbf_agg(key, at, '1 hour', NULL) FROM rated3;

-- tlbf_summary and tlbf_info count the distinct keys of the generations a
-- query asks, once each however many generations they came back in (the
-- OR of their pieces), with a range of two standard deviations either
-- side: 100 filters of 2,000 distinct keys each, added one to three times
-- over the hour.
SELECT tlbf_summary(f, '2024-01-01 03:00+00') FROM filter3;
CREATE TABLE counted3 AS
SELECT r, tlbf_agg_format3(k + r * 1000000, '2024-01-01 00:00+00'::timestamptz + ((k * 7 + j * 1237 + r) % 3600) * interval '1 s',
                           '1 hour', 0.01, 8000) AS f
FROM generate_series(1, 100) r, generate_series(1, 2000) k, generate_series(1, 1 + k % 3) j GROUP BY r;
SELECT count(*) FILTER (WHERE (i->>'live_keys_low')::float8 <= 2000 AND 2000 <= (i->>'live_keys_high')::float8)
         >= 85 AS range_holds_the_count,
       max(abs((i->>'live_keys_estimate')::float8 - 2000)) < 40 AS estimate_within_2_percent,
       min((i->>'inserted')::int) AS fewest_insertions
FROM (SELECT tlbf_info(f, '2024-01-01 01:00+00') AS i FROM counted3) s;

-- tlbf_probability (core/tb_infer.c): a generation's piece gives the
-- chance of a key's bits exactly, and its times where the window starts.
-- A stream of 2.5 hours, one key a second: a third from an audience of
-- 1,000 that comes back every 50 minutes, the rest new.  Asked for every
-- key of the stream and 20,000 never added, with the share of them added
-- within the window as the prior: calibrated (in every tenth with 100
-- keys or more, the share really within the window is within 0.1 of the
-- mean probability), no key within the window given 0, and no worse than
-- the paper's layout on the same stream (Brier scores; format 2's filter
-- of the same error rate).
CREATE TABLE events3 AS
SELECT CASE WHEN i % 3 = 0 THEN (i * 7919) % 3000 ELSE 100000 + i END AS key,
       '2024-01-01 00:00+00'::timestamptz + i * interval '1 s' AS at
FROM generate_series(1, 9000) i;
CREATE TABLE inferred3 AS
SELECT 3 AS format, tlbf_agg_format3(key, at, '1 hour', 0.05, 6000) AS f FROM events3
UNION ALL SELECT 2, agg2(key, at, '1 hour', 0.05 ORDER BY at) FROM events3
-- (30: format 3 built without a capacity, one band for the busiest generation)
UNION ALL SELECT 30, tlbf_agg(key, at, '1 hour', 0.05) FROM events3;
CREATE TABLE asked3 AS
SELECT key, max(at) AS last FROM events3 GROUP BY key
UNION ALL SELECT g, NULL FROM generate_series(500000, 520000) g;
CREATE TABLE answers3 AS
WITH windows AS MATERIALIZED (
  SELECT within, (SELECT count(*) FILTER (WHERE last >= '2024-01-01 02:30+00'::timestamptz - within)::float8
                         / count(*) FROM asked3) AS base_rate
  FROM (VALUES (interval '1 hour'), (interval '45 minutes'), (interval '10 minutes')) w(within))
SELECT w.within, i.format, a.key, coalesce(a.last >= '2024-01-01 02:30+00'::timestamptz - w.within, false) AS truly,
       tlbf_probability(i.f, a.key, '2024-01-01 02:30+00', w.within, w.base_rate) AS p
FROM windows w, inferred3 i, asked3 a;
SELECT within, format, bool_and(abs(predicted - observed) < 0.1) AS calibrated
FROM (SELECT within, format, avg(p) AS predicted, avg(truly::int) AS observed
      FROM answers3 WHERE format IN (3, 30) AND p > 0
      GROUP BY within, format, width_bucket(p, 0, 1.000001, 10)
      HAVING count(*) >= 100) b
GROUP BY within, format ORDER BY within, format;
SELECT within, count(*) FILTER (WHERE format IN (3, 30) AND truly AND p = 0) AS missed,
       avg((p - truly::int) ^ 2) FILTER (WHERE format = 3)
         <= avg((p - truly::int) ^ 2) FILTER (WHERE format = 2) AS brier_no_worse_than_format_2,
       avg((p - truly::int) ^ 2) FILTER (WHERE format = 30)
         <= 1.10 * avg((p - truly::int) ^ 2) FILTER (WHERE format = 2) AS without_capacity_within_10_percent
FROM answers3 GROUP BY within ORDER BY within;
-- (sized for its keys, the filter without a capacity is the smallest: its
-- Brier scores measured 0.0010 / 0.0220 / 0.0251 against format 2's
-- 0.0033 / 0.0203 / 0.0264 (built row by row, as tlbf_add builds it), in
-- 6,460 bytes against 8,260)
SELECT (SELECT octet_length(f::bytea) FROM inferred3 WHERE format = 30)
       < (SELECT octet_length(f::bytea) FROM inferred3 WHERE format = 2) AS without_capacity_smaller;
-- a key added at 01:25:01 only, asked over the hour before 02:30: its
-- generation (01:20 to 01:40) lies half before the window, so about even
SELECT tlbf_probability(f, 100000 + 5101, '2024-01-01 02:30+00', '1 hour', 0.25) BETWEEN 0.3 AND 0.7 AS about_even,
       tlbf_probability(f, 100000 + 8900, '2024-01-01 02:30+00', '1 hour', 0.25) > 0.95 AS recent_sure,
       tlbf_probability(f, 100000 + 8900, '2024-01-01 02:30+00', '1 hour', 0) AS prior_zero,
       tlbf_probability(f, 100000 + 8900, '2024-01-01 02:30+00', '1 hour', 1) AS prior_one,
       tlbf_probability(f, 100000 + 8900, '2024-01-01 02:30+00', NULL, 0.25) =
         tlbf_probability(f, 100000 + 8900, '2024-01-01 02:30+00', '1 hour', 0.25) AS null_within_is_span,
       tlbf_probability(f, NULL::int, '2024-01-01 02:30+00') IS NULL AS null_item
FROM inferred3 WHERE format = 3;
SELECT tlbf_probability(f, 1, '2024-01-01 02:30+00', '2 hours') FROM inferred3 WHERE format = 3;
SELECT tlbf_probability(f, 1, '2024-01-01 02:30+00', prior => 1.5) FROM inferred3 WHERE format = 3;
SELECT tlbf_probability(f, 'x'::text, '2024-01-01 02:30+00') FROM inferred3 WHERE format = 3;

-- A large filter (a band of 20 MB: huge_pages.c advises huge pages for
-- it as it grows, and moves a stored one onto them after 1,000 lookups by
-- one call site) answers the same, before and after.
CREATE TABLE large3 AS
SELECT tlbf_add(tlbf_add(tlbf_create_format3('1 hour', 0.01, 8000000, true), 1, '2024-01-01 00:00+00'),
                2, '2024-01-01 00:05+00') AS f;
SELECT (SELECT octet_length(f::bytea) > 16 * 1024 * 1024 FROM large3) AS large,
       count(*) FILTER (WHERE tlbf_contains(f, g, '2024-01-01 00:10+00')) AS found,
       count(*) FILTER (WHERE g <= 2 AND tlbf_contains(f, g, '2024-01-01 00:10+00')) AS both_keys
FROM large3, generate_series(1, 3000) g;

-- Refused: NULL or bad parameters, the support functions outside an
-- aggregate.
SELECT tlbf_agg_format3(key, at, NULL, 0.01, 1800) FROM stream3;
SELECT tlbf_agg_format3(key, at, '1 hour', 0.01, 0) FROM stream3;
SELECT tlbf_agg_format3_trans(NULL, 1, now(), '1 hour', 0.01, 1800);
SELECT tlbf_agg_format3_combine(f, f) FROM added3;


-- A filter keeps one span of history (docs/reference.md, the guarantee):
-- a key added out of order goes to its own generation and is forgotten on
-- its own schedule (format 2 moves it up to the newest time); one dated
-- more than a span before the newest time is not added.
WITH f AS (SELECT tlbf_add(tlbf_add(tlbf_create('1 hour'), 1, '2024-01-01 12:00+00'), 2, '2024-01-01 11:10+00') AS f,
                  tlbf_add(tlbf_add(tlbf_create_format2('1 hour'), 1, '2024-01-01 12:00+00'), 2, '2024-01-01 11:10+00') AS f2)
SELECT tlbf_last_seen(f, 2, '2024-01-01 12:00+00') AS own_generation,
       tlbf_contains(f, 2, '2024-01-01 12:05+00') AS found_within_span,
       tlbf_contains(f, 2, '2024-01-01 12:25+00') AS found_past_its_slack,
       tlbf_contains(f2, 2, '2024-01-01 12:25+00') AS format2_moved_up,
       tlbf_contains(tlbf_add(f, 3, '2024-01-01 10:00+00'), 3, '2024-01-01 10:30+00') AS older_than_span_added
FROM f;

-- tlbf_info's keys, as docs/reference.md lists them: of format 3 (with a
-- band and its generations, and a carried value), and of format 2
SELECT string_agg(k, ', ' ORDER BY k) AS format3_keys
FROM jsonb_object_keys(tlbf_info(tlbf_add(tlbf_create('1 hour'), 42, '2024-01-01 00:00+00'))) k;
SELECT (SELECT string_agg(k, ', ' ORDER BY k) FROM jsonb_object_keys(i->'bands'->0) k) AS band_keys,
       (SELECT string_agg(k, ', ' ORDER BY k) FROM jsonb_object_keys(i->'bands'->0->'generations'->0) k)
         AS generation_keys,
       i ? 'carries' AS plain_carries,
       tlbf_info(tlbf_to_format3(tlbf_add(tlbf_create_format2('1 hour'), 42, '2024-01-01 00:00+00')))->'carries'->'version'
         AS carried_version
FROM (SELECT tlbf_info(tlbf_add(tlbf_create('1 hour'), 42, '2024-01-01 00:00+00')) AS i) s;
SELECT string_agg(k, ', ' ORDER BY k) AS format2_keys
FROM jsonb_object_keys(tlbf_info(tlbf_add(tlbf_create_format2('1 hour'), 42, '2024-01-01 00:00+00'))) k;

DROP TABLE empty3, stream3, filter3, shards3, added3, keys3, big3, serial3, serial3n, hashed3, parts3, counted3, events3, inferred3, asked3, answers3, large3;
