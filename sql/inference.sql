-- When a key was last added (tlbf_last_seen) and how likely a "yes" is
-- true (tlbf_probability).  Keys 1..3000 added one a second from
-- 2024-01-01 00:00 UTC, key g at second g; span one hour.
SET TimeZone = 'UTC';
CREATE TABLE inferred AS
SELECT agg2(g, '2024-01-01 00:00+00'::timestamptz + g * interval '1 s', '1 hour' ORDER BY g) AS f
FROM generate_series(1, 3000) g;

-- every key added within the span: its range holds the time it was added,
-- but for the few whose bits a newer run of slices also holds by chance
-- (a false positive newer than the key's own run)
SELECT count(*) AS keys,
       count(*) FILTER (WHERE tlbf_last_seen(f, g, '2024-01-01 00:55+00')
                             @> ('2024-01-01 00:00+00'::timestamptz + g * interval '1 s')) AS range_holds_it,
       count(*) FILTER (WHERE lower_inf(tlbf_last_seen(f, g, '2024-01-01 00:55+00'))) AS unbounded_below,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM upper(r) - lower(r))) < 300
         AS median_under_5_minutes
FROM inferred, generate_series(1, 3000) g,
     LATERAL (SELECT tlbf_last_seen(f, g, '2024-01-01 00:55+00') AS r) s;
-- one key's range, as a value
SELECT tlbf_last_seen(f, 1500, '2024-01-01 00:55+00') @> '2024-01-01 00:25+00'::timestamptz AS holds,
       upper(tlbf_last_seen(f, 1500, '2024-01-01 00:55+00')) - '2024-01-01 00:25+00'::timestamptz
         < interval '5 minutes' AS close_above
FROM inferred;
-- absent, and past the span: NULL
SELECT tlbf_last_seen(f, -1, '2024-01-01 00:55+00') IS NULL AS absent_is_null,
       tlbf_last_seen(f, 10, '2024-01-01 03:00+00') IS NULL AS expired_is_null,
       tlbf_last_seen(f, NULL::int, '2024-01-01 00:55+00') IS NULL AS null_item
FROM inferred;

-- probabilities: in [0, 1]; 0 for a "no", whatever the prior; near 1 for
-- keys in lightly filled slices; the prior orders them
SELECT count(*) FILTER (WHERE p < 0 OR p > 1) AS out_of_range,
       round(min(p)::numeric, 3) AS min_present
FROM inferred, generate_series(1, 3000) g,
     LATERAL (SELECT tlbf_probability(f, g, '2024-01-01 00:55+00') AS p) s;
SELECT tlbf_probability(f, -1, '2024-01-01 00:55+00', prior => 1) AS absent_certain_no,
       tlbf_probability(f, 2000, '2024-01-01 00:55+00', prior => 0) AS prior_zero,
       tlbf_probability(f, 2000, '2024-01-01 00:55+00', prior => 1) AS prior_one,
       tlbf_probability(f, 2000, '2024-01-01 00:55+00', prior => 0.001)
         < tlbf_probability(f, 2000, '2024-01-01 00:55+00', prior => 0.5) AS prior_orders
FROM inferred;
-- a shorter window: only slices written within it count (key 1000 was
-- added 38 minutes before, key 2900 two minutes before)
SELECT tlbf_probability(f, 1000, '2024-01-01 00:55+00', '10 minutes') AS old_key_in_10_minutes,
       tlbf_probability(f, 2900, '2024-01-01 00:55+00', '10 minutes') > 0.99 AS new_key_in_10_minutes
FROM inferred;
-- over 100,000 keys never added, at a prior of 1%: the false positives'
-- mean probability is below the real keys' (which are all found)
SELECT count(*) FILTER (WHERE p > 0) > 0 AS some_false_positives,
       avg(p) FILTER (WHERE p > 0) < (SELECT avg(tlbf_probability(f, g, '2024-01-01 00:55+00', prior => 0.01))
                                      FROM inferred, generate_series(1, 3000) g) AS below_real_keys
FROM inferred, generate_series(1000001, 1100000) g,
     LATERAL (SELECT tlbf_probability(f, g, '2024-01-01 00:55+00', prior => 0.01) AS p) s;

-- NULLs and bad arguments
SELECT tlbf_probability(NULL::tlbf, 1) IS NULL AS null_filter,
       tlbf_probability(f, NULL::int) IS NULL AS null_item,
       tlbf_probability(f, 1, NULL) IS NULL AS null_time,
       tlbf_probability(f, 1, '2024-01-01 00:55+00', NULL) IS NOT NULL AS null_within_is_span,
       tlbf_probability(f, 1, '2024-01-01 00:55+00', prior => NULL) IS NULL AS null_prior
FROM inferred;
SELECT outcome($$SELECT tlbf_probability(f, 1, '2024-01-01 00:55+00', prior => 1.5) FROM inferred$$);
SELECT outcome($$SELECT tlbf_probability(f, 1, '2024-01-01 00:55+00', prior => 'NaN') FROM inferred$$);
SELECT outcome($$SELECT tlbf_probability(f, 1, '2024-01-01 00:55+00', '2 hours') FROM inferred$$);
SELECT outcome($$SELECT tlbf_last_seen(f, 1, 'infinity') FROM inferred$$);
DROP TABLE inferred;
