-- A catalogue of bad inputs: each gives a clean ERROR with its SQLSTATE,
-- and the server stays up.  Crafted values start from a valid filter and
-- overwrite bytes of its header or slice directory (little-endian; byte 0
-- is the first byte after the varlena length word): of format 2 (format
-- 3's damaged values: pg_regress format3).
SET TimeZone = 'UTC';

CREATE TABLE valid AS
SELECT agg2(g, '2024-01-01 00:00+00'::timestamptz + g * interval '10 ms', '1 minute' ORDER BY g) AS f
FROM generate_series(1, 20000) g;

-- The valid value's bytes with 'bytes' written at 'pos', in text form.
CREATE FUNCTION craft(pos int, bytes bytea) RETURNS text LANGUAGE sql AS $$
    SELECT translate(encode(overlay(decode(f::text, 'base64') PLACING bytes FROM pos + 1), 'base64'),
                     E'\n', '')
    FROM valid
$$;
-- The valid value's bytes cut to 'len'.
CREATE FUNCTION cut(len int) RETURNS text LANGUAGE sql AS $$
    SELECT translate(encode(substr(decode(f::text, 'base64'), 1, len), 'base64'), E'\n', '')
    FROM valid
$$;

CREATE TABLE catalogue (n serial, what text, query text);
INSERT INTO catalogue (what, query) VALUES
-- text that is not a value
    ('not base64', $$SELECT 'not base64 at all!'::tlbf$$),
    ('empty text', $$SELECT ''::tlbf$$),
    ('base64 of too few bytes', $$SELECT 'AAAA'::tlbf$$),
-- truncated, or with a length that disagrees with the header
    ('truncated in the header', $$SELECT cut(50)::tlbf$$),
    ('truncated in the directory', $$SELECT cut(200)::tlbf$$),
    ('truncated in the bits', $$SELECT cut(2000)::tlbf$$),
    ('one byte short', $$SELECT cut(octet_length(decode((SELECT f::text FROM valid), 'base64')) - 1)::tlbf$$),
    ('one word too long', $$SELECT translate(encode(decode((SELECT f::text FROM valid), 'base64') || '\x0000000000000000'::bytea, 'base64'), E'\n', '')::tlbf$$),
-- the header
    ('wrong magic number', $$SELECT craft(0, '\x00000000')::tlbf$$),
    ('unknown format version 4', $$SELECT craft(4, '\x0400')::tlbf$$),
    ('format 2 bytes as version 3', $$SELECT craft(4, '\x0300')::tlbf$$),
    ('format version 0', $$SELECT craft(4, '\x0000')::tlbf$$),
    ('unknown hash scheme', $$SELECT craft(6, '\x07')::tlbf$$),
    ('k = 0', $$SELECT craft(7, '\x00')::tlbf$$),
    ('k = 255', $$SELECT craft(7, '\xff')::tlbf$$),
    ('l = 0', $$SELECT craft(8, '\x0000')::tlbf$$),
    ('l = 65535', $$SELECT craft(8, '\xffff')::tlbf$$),
    ('two key fields, one kind', $$SELECT craft(10, '\x0200')::tlbf$$),
    ('key kind out of range', $$SELECT craft(16, '\x0f000000')::tlbf$$),
    ('huge slice count', $$SELECT craft(12, '\xffffffff')::tlbf$$),
    ('slice count one too many', $$SELECT craft(12, set_byte(substr(decode((SELECT f::text FROM valid), 'base64'), 13, 4), 0, get_byte(decode((SELECT f::text FROM valid), 'base64'), 12) + 1))::tlbf$$),
    ('fewer slices than k', $$SELECT craft(12, '\x03000000')::tlbf$$),
    ('negative span', $$SELECT craft(28, '\xffffffffffffffff')::tlbf$$),
    ('zero span', $$SELECT craft(28, '\x0000000000000000')::tlbf$$),
    ('error rate NaN', $$SELECT craft(36, '\x000000000000f87f')::tlbf$$),
    ('error rate +Infinity', $$SELECT craft(36, '\x000000000000f07f')::tlbf$$),
    ('error rate 1.0', $$SELECT craft(36, '\x000000000000f03f')::tlbf$$),
    ('capacity 0', $$SELECT craft(44, '\x0000000000000000')::tlbf$$),
    ('capacity near 2^64', $$SELECT craft(44, '\xfeffffffffffffff')::tlbf$$),
    ('newest time +infinity', $$SELECT craft(68, '\xffffffffffffff7f')::tlbf$$),
    ('newest time -infinity', $$SELECT craft(68, '\x0000000000000080')::tlbf$$),
    ('generation started after the newest time', $$SELECT craft(76, '\xfffffffffffffff0')::tlbf$$),
    ('slices but no generation start', $$SELECT craft(76, '\x0000000000000080')::tlbf$$),
    ('generation counter past its size', $$SELECT craft(92, '\xffffffffffffff0f')::tlbf$$),
    ('target generation NaN', $$SELECT craft(100, '\x000000000000f87f')::tlbf$$),
-- the slice directory
    ('slice offset not contiguous', $$SELECT craft(108, '\x01000000')::tlbf$$),
    ('slice of 0 words', $$SELECT craft(112, '\x00000000')::tlbf$$),
    ('slice size overflowing the value', $$SELECT craft(112, '\xffffff7f')::tlbf$$),
    ('slice hash index out of range', $$SELECT craft(116, '\xff000000')::tlbf$$),
    ('slice load weight 0', $$SELECT craft(120, '\x00000000')::tlbf$$),
    ('more bits set than the slice has', $$SELECT craft(124, '\xffffffffffffff00')::tlbf$$),
    ('slice time after the newest time', $$SELECT craft(132, '\xffffffffffffff7f')::tlbf$$),
    ('newest slice older than the newest time', $$SELECT craft(132, '\x0000000000000000')::tlbf$$),
-- parameters
    ('error rate NaN', $$SELECT tlbf_create('1 hour', 'NaN')$$),
    ('error rate Infinity', $$SELECT tlbf_create('1 hour', 'Infinity')$$),
    ('span with months', $$SELECT tlbf_create('1 month')$$),
    ('within with months', $$SELECT tlbf_contains(f, 1, now(), '1 mon') FROM valid$$),
    ('capacity near 2^63', $$SELECT tlbf_create('1 hour', 0.01, 9223372036854775807)$$),
    ('time +infinity', $$SELECT tlbf_add(f, 1, 'infinity') FROM valid$$),
    ('time -infinity', $$SELECT tlbf_contains(f, 1, '-infinity') FROM valid$$),
    ('k without l', $$SELECT tlbf_create('1 hour', 0.01, 1000, 12)$$),
    ('l = 100000', $$SELECT tlbf_create('1 hour', 0.01, 1000, 10, 100000)$$),
-- unions
    ('union of different spans', $$SELECT tlbf_create('1 hour') || tlbf_create('2 hours')$$),
    ('union of different hash seeds', $$SELECT f || craft(20, '\x0100000000000000')::tlbf FROM valid$$),
-- the size cap
    ('a filter beyond tlbf.max_filter_bytes', $$SET LOCAL tlbf.max_filter_bytes = '8kB'; SELECT tlbf_create('1 day', 0.0001, 10000000)$$),
-- an item without a hash function
    ('item of a type without hash', $$SELECT tlbf_add(tlbf_create('1 hour'), point(1, 1))$$);

SELECT n, what, outcome(query) FROM catalogue ORDER BY n;
SELECT count(*) >= 30 AS at_least_30 FROM catalogue;

-- Binary input (COPY ... FORMAT binary) is validated the same way: the
-- bytes of a bytea column are what tlbf_recv reads.
CREATE TABLE raw_values (b bytea);
INSERT INTO raw_values
SELECT decode(craft(7, '\x00'), 'base64') UNION ALL SELECT '\x0102'::bytea;
\copy (SELECT b FROM raw_values LIMIT 1) TO 'results/bad_value.bin' WITH (FORMAT binary)
\copy (SELECT b FROM raw_values OFFSET 1) TO 'results/short_value.bin' WITH (FORMAT binary)
CREATE TABLE received (f tlbf);
\set VERBOSITY sqlstate
\copy received FROM 'results/bad_value.bin' WITH (FORMAT binary)
\copy received FROM 'results/short_value.bin' WITH (FORMAT binary)
\set VERBOSITY default
SELECT count(*) AS received FROM received;

-- A value at the edge of validation: the smallest generation plan
-- (gen_size = 1, gen_left = 0, bytes 84 to 99).  Its union with a filter of
-- smaller k (7 at 10%, against its 10) once had gen_size 0: the union's
-- text output (and pg_dump of a table holding it) failed with "Slices
-- without insertions".  It must read back, answer, and take new keys.
CREATE TABLE edge AS
SELECT craft(84, '\x01000000000000000000000000000000')::tlbf AS f;
CREATE TABLE fewer_hashes AS
SELECT agg2(g, '2024-01-01 00:00+00'::timestamptz + g * interval '10 ms', '1 minute', 0.1 ORDER BY g) AS f
FROM generate_series(-100, -1) g;
SELECT tlbf_info(e.f)->'k' AS edge_k, tlbf_info(x.f)->'k' AS other_k,
       tlbf_info(e.f || x.f)->'k' AS union_k,
       length((e.f || x.f)::text) > 0 AS union_has_text,
       (e.f || x.f)::text::tlbf::text = (e.f || x.f)::text AS reads_back,
       (x.f || e.f)::text = (e.f || x.f)::text AS same_both_ways,
       tlbf_contains(e.f || x.f, 20000, '2024-01-01 00:03:20+00')
           AND tlbf_contains(e.f || x.f, -1, '2024-01-01 00:00:30+00') AS keys_of_both,
       tlbf_contains(tlbf_add(e.f || x.f, 123456789, '2024-01-01 00:03:30+00'), 123456789,
                     '2024-01-01 00:03:30+00') AS takes_new_keys
FROM edge e, fewer_hashes x;

-- NULLs everywhere they can appear: NULL results or no-ops, never errors.
SELECT tlbf_create(NULL) IS NULL AS a, tlbf_create('1 hour', NULL) IS NULL AS b,
       tlbf_add(NULL::tlbf, 1) IS NULL AS c, tlbf_add(f, NULL::int)::text = f::text AS d,
       tlbf_contains(NULL::tlbf, 1) IS NULL AS e, tlbf_contains(f, NULL::int) IS NULL AS f,
       tlbf_contains(f, 1, NULL) IS NULL AS g, tlbf_contains(f, 1, now(), NULL) IS NULL AS h,
       tlbf_retire(NULL::tlbf) IS NULL AS i, tlbf_retire(f, NULL) IS NULL AS j,
       tlbf_info(NULL::tlbf) IS NULL AS k, tlbf_union(f, NULL) IS NULL AS l,
       tlbf_retirable(NULL::tlbf) IS NULL AS m, (NULL::tlbf @> 1) IS NULL AS o
FROM valid;
SELECT tlbf_agg(NULL::int, NULL::timestamptz, '1 hour') IS NULL AS agg_of_nulls,
       tlbf_union_agg(NULL::tlbf) IS NULL AS union_of_nulls;

-- And the server is still up.
SELECT 'still up' AS server;
