-- tlbf_agg over items of the common types has a state of a real type,
-- tlbf_agg_state, so that Citus can split it (test/citus tests that); here,
-- on one server: each item type reaches the aggregate that hashes it as
-- tlbf_add and tlbf_contains do, the typed aggregates give the filter the
-- "any" one gives, and a state that crosses as text, as Citus sends it,
-- gives the same filter again.  States from outside are checked.
SET TimeZone = 'UTC';
SELECT setseed(0.25);

CREATE TABLE keyed AS
SELECT g, (random() * 5000)::int AS k,
       '2024-01-01 00:00+00'::timestamptz + g * interval '100 ms' AS at
FROM generate_series(1, 20000) g;
CREATE TYPE colour AS ENUM ('red', 'green', 'blue');
CREATE DOMAIN user_id AS bigint;

-- Every type finds an aggregate, and the filter answers yes for every key
-- it was built from, asked as tlbf_contains asks (a key hashed otherwise
-- by the aggregate would be a false negative).
CREATE FUNCTION misses(item text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    result bigint;
BEGIN
    EXECUTE pg_catalog.format(
        'WITH f AS (SELECT tlbf_agg(%1$s, at, ''1 hour'') AS f FROM keyed)
         SELECT count(*) FILTER (WHERE NOT tlbf_contains(f, %1$s, ''2024-01-01 00:40+00''))
         FROM keyed, f', item) INTO result;
    RETURN result;
END $$;
SELECT item, misses(item)
FROM unnest(ARRAY['k::smallint', 'k::integer', 'k::bigint', 'k::user_id', 'k::numeric',
                  'k::real', 'k::double precision', 'k::text', 'k::varchar', 'k::char(6)',
                  'k::text::name', 'md5(k::text)::uuid', 'convert_to(k::text, ''UTF8'')',
                  'date ''2024-01-01'' + k', 'at::timestamp', 'at', 'to_jsonb(k)',
                  '(ARRAY[''red'', ''green'', ''blue''])[k % 3 + 1]::colour']) AS item;
-- an untyped literal is text; "char", which both text and "any" take,
-- needs a cast
SELECT tlbf_contains(tlbf_agg('a key', at, '1 hour'), 'a key'::text, max(at)) FROM keyed;
-- (terse: PostgreSQL 19 moved part of the hint to a detail)
\set VERBOSITY terse
SELECT tlbf_agg('a'::"char", at, '1 hour') FROM keyed;
\set VERBOSITY default
-- a driver's untyped parameter is text too
PREPARE by_parameter AS
SELECT tlbf_contains(tlbf_agg($1, at, '1 hour'), 'a key'::text, max(at)) FROM keyed;
EXECUTE by_parameter('a key');
DEALLOCATE by_parameter;

-- The same filter as the aggregate with an internal state (tlbf_agg
-- ("any", ...), made callable here for items of any type).
CREATE AGGREGATE any_item_agg("any", timestamptz, interval) (
    SFUNC = tlbf_agg_trans, STYPE = internal, FINALFUNC = tlbf_agg_final,
    COMBINEFUNC = tlbf_agg_combine, SERIALFUNC = tlbf_agg_serialize,
    DESERIALFUNC = tlbf_agg_deserialize);
SELECT (SELECT tlbf_agg(k, at, '1 hour')::bytea FROM keyed) =
       (SELECT any_item_agg(k, at, '1 hour')::bytea FROM keyed) AS integer_same,
       (SELECT tlbf_agg(k::text, at, '1 hour')::bytea FROM keyed) =
       (SELECT any_item_agg(k::text, at, '1 hour')::bytea FROM keyed) AS text_same,
       (SELECT tlbf_agg(k::smallint, at, '1 hour')::bytea FROM keyed) =
       (SELECT tlbf_agg(k::bigint, at, '1 hour')::bytea FROM keyed) AS widths_same;

-- As Citus runs it: a partial state per part of the rows (here thirds of
-- the table, rows in any order), sent as text, combined, then finished.
CREATE AGGREGATE partial_agg(bigint, timestamptz, interval) (
    SFUNC = tlbf_agg_typed_trans, STYPE = tlbf_agg_state);
CREATE AGGREGATE combined(tlbf_agg_state) (
    SFUNC = tlbf_agg_typed_combine, STYPE = tlbf_agg_state,
    FINALFUNC = tlbf_agg_typed_final);
CREATE TABLE sent AS
SELECT g % 3 AS part, partial_agg(k, at, '1 hour')::text AS state
FROM (SELECT * FROM keyed ORDER BY random()) s GROUP BY g % 3;
SELECT count(*), min(length(state)) > 1000 AS rows_sent FROM sent;
SELECT (SELECT combined(state::tlbf_agg_state)::bytea FROM sent) =
       (SELECT tlbf_agg(k, at, '1 hour' ORDER BY at)::bytea FROM keyed) AS same_as_ordered;

-- A state from outside is checked before use: every one-byte change of a
-- sent state either fails to read (22P02/22P03, never a crash) or gives a
-- filter.
CREATE FUNCTION damaged_states() RETURNS TABLE (refused bigint, read bigint)
LANGUAGE plpgsql AS $$
DECLARE
    good bytea := decode((SELECT state FROM sent WHERE part = 0), 'base64');
    bad bytea;
    f tlbf;
BEGIN
    refused := 0;
    read := 0;
    FOR i IN 0 .. least(length(good) - 1, 400) LOOP
        bad := set_byte(good, i, (get_byte(good, i) + 1 + i % 200) % 256);
        BEGIN
            SELECT combined(encode(bad, 'base64')::tlbf_agg_state) INTO f;
            read := read + 1;
        EXCEPTION WHEN invalid_binary_representation OR invalid_text_representation THEN
            refused := refused + 1;
        END;
    END LOOP;
    RETURN NEXT;
END $$;
SELECT refused > 0 AS some_refused, refused + read AS tried FROM damaged_states();
SELECT 'not base64!'::tlbf_agg_state;
SELECT encode('\x0102'::bytea, 'base64')::tlbf_agg_state;
-- A state of rows, as tlbf_agg sent them before 1.5 (a Citus node not yet
-- updated): refused, saying why.
SELECT encode(convert_to('TLBR', 'UTF8') || '\x0100000000000000'::bytea, 'base64')::tlbf_agg_state;

-- States sent as text, of two halves of the rows, combined.
CREATE TABLE sent_filters AS
SELECT g % 2 AS part, partial_agg(k, at, '1 hour')::text AS state
FROM (SELECT g, k, at FROM keyed UNION ALL
      SELECT g + 20000, k, at + interval '2000 s' FROM keyed) s GROUP BY g % 2;
SELECT count(*) FILTER (WHERE NOT tlbf_contains(f, k, '2024-01-01 01:13:00+00'))
FROM (SELECT * FROM keyed WHERE at > '2024-01-01 00:15+00') r,
     (SELECT combined(state::tlbf_agg_state) AS f FROM sent_filters) s;

-- A state that holds filters of format 3 (tlbf_union_agg's), made from
-- outside, takes no rows: an aggregate that starts from one refuses its
-- first row instead of ignoring it.
DO $$BEGIN
  EXECUTE format('CREATE AGGREGATE rows_after_filters(bigint, timestamptz, interval) (
                    SFUNC = tlbf_agg_typed_trans, STYPE = tlbf_agg_state,
                    FINALFUNC = tlbf_agg_typed_final, INITCOND = %L)',
                 tlbf_create_format3('1 hour')::text);
END$$;
SELECT rows_after_filters(k, at, '1 hour') FROM keyed;
DROP AGGREGATE rows_after_filters(bigint, timestamptz, interval);

-- In parallel, the partial states cross from the workers as flat states.
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT tlbf_agg(k, at, '1 hour') FROM keyed;
SELECT (SELECT tlbf_agg(k, at, '1 hour')::bytea FROM keyed) =
       (SELECT tlbf_agg(k, at, '1 hour' ORDER BY at)::bytea FROM keyed) AS parallel_same;
EXPLAIN (COSTS OFF) SELECT tlbf_union_agg(f) FROM (SELECT tlbf_agg(k, at, '1 hour') f FROM keyed GROUP BY g % 4) s;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET parallel_leader_participation;

-- As a window function, with a frame that grows.
SELECT count(DISTINCT tlbf_summary(f, '2024-01-01 00:40+00')) FROM (
    SELECT tlbf_agg(k, at, '1 hour') OVER (ORDER BY g ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS f
    FROM keyed WHERE g <= 50) s;

-- The support functions need an aggregate.
SELECT tlbf_agg_typed_trans(NULL, 1::bigint, now(), '1 hour');

DROP TABLE keyed, sent, sent_filters;
DROP AGGREGATE any_item_agg("any", timestamptz, interval);
DROP AGGREGATE partial_agg(bigint, timestamptz, interval);
DROP AGGREGATE combined(tlbf_agg_state);
DROP FUNCTION misses(text), damaged_states();
DROP TYPE colour;
DROP DOMAIN user_id;
