-- Every function of the extension with its labels: kind (f function, a
-- aggregate), volatility (i, s, v), strictness and parallel safety (s, r,
-- u), so that a label that changes shows in the diff.  docs/reference.md's "Labels"
-- says why each is what it is.
SELECT p.oid::regprocedure AS function, p.prokind AS kind, p.provolatile AS volatile,
       p.proisstrict AS strict, p.proparallel AS parallel
FROM pg_depend d
JOIN pg_proc p ON p.oid = d.objid
WHERE d.classid = 'pg_proc'::regclass
  AND d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'tlbf')
  AND d.deptype = 'e'
ORDER BY p.proname COLLATE "C", pg_get_function_identity_arguments(p.oid) COLLATE "C";

-- Why tlbf_info is STABLE: the same call gives other text under another
-- TimeZone (its times) or extra_float_digits (its numbers).
SET TimeZone = 'UTC';
SET extra_float_digits = 1;
CREATE TEMP TABLE info_before AS
SELECT tlbf_info(tlbf_add(tlbf_create_format2('1 hour'), 1, '2024-01-01 12:00+00'), '2024-01-01 12:30+00') AS i;
SET TimeZone = 'Asia/Tokyo';
SET extra_float_digits = -15;
SELECT b.i->>'newest' AS newest_utc, a.i->>'newest' AS newest_tokyo,
       b.i->>'bits_per_live_item' AS bits_per_item_shortest,
       a.i->>'bits_per_live_item' AS bits_per_item_1_digit
FROM info_before b,
     LATERAL (SELECT tlbf_info(tlbf_add(tlbf_create_format2('1 hour'), 1, '2024-01-01 12:00+00'),
                               '2024-01-01 12:30+00') AS i) a;
RESET TimeZone;
RESET extra_float_digits;
