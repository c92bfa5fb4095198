-- A key's time may be at most tlbf.max_future ahead of the server's clock:
-- one key dated in the future would keep its filter from forgetting until
-- then (slices keep the newest time they were written at, and later keys
-- count as added then).  Refused with 22008, for values and aggregates.
SET TimeZone = 'UTC';
SELECT outcome($$SELECT tlbf_add(tlbf_create('1 hour'), 1, '2999-01-01 00:00+00')$$);
SHOW tlbf.max_future;
SELECT outcome($$SELECT tlbf_add(tlbf_create('1 hour'), 1, clock_timestamp() + interval '1 minute')$$);
SELECT outcome($$SELECT tlbf_add(tlbf_create('1 hour'), 1, now() - interval '10 years')$$);

-- A table of visits with one row from a client whose clock is far ahead.
CREATE TABLE skewed AS
SELECT g AS user_id, now() - interval '1 hour' + g * interval '1 second' AS at
FROM generate_series(1, 3000) g;
INSERT INTO skewed VALUES (0, '2999-01-01 00:00+00');
SELECT outcome($$SELECT tlbf_agg(user_id, at, '1 hour') FROM skewed$$);
SELECT outcome($$SELECT tlbf_agg(user_id::bigint, at, '1 hour') FROM skewed$$);
SELECT outcome($$SELECT tlbf_agg(user_id, at, '1 hour' ORDER BY at) FROM skewed$$);
-- ... the rows up to the clock build the filter as usual
SELECT count(*) FILTER (WHERE NOT tlbf_contains(f, s.user_id, now())) AS missed
FROM (SELECT tlbf_agg(user_id, at, '1 hour') AS f FROM skewed WHERE at <= now()) a, skewed s
WHERE s.at <= now();

-- -1 accepts any time, as before 1.4: the future key then holds the rest.
SET tlbf.max_future = -1;
SELECT tlbf_agg(user_id, at, '1 hour') IS NOT NULL AS accepted FROM skewed;
SELECT tlbf_retirable(tlbf_agg(user_id, at, '1 minute'), now() + interval '1 day') AS nothing_to_retire
FROM skewed;
RESET tlbf.max_future;
-- a lowered setting applies at once, in the same session
SET tlbf.max_future = '10min';
SELECT tlbf_add(tlbf_create('1 hour'), 1, clock_timestamp() + interval '7 minutes') IS NOT NULL AS within_10min;
SET tlbf.max_future = '1min';
SELECT split_part(outcome($$SELECT tlbf_add(tlbf_create('1 hour'), 1, clock_timestamp() + interval '7 minutes')$$),
                  $$:$$, 1) AS past_1min;
RESET tlbf.max_future;
-- a plan kept (a generic plan, folded when it was made) is made again when
-- the setting changes: the check follows the setting, not the plan
SET plan_cache_mode = force_generic_plan;
SET tlbf.max_future = -1;
PREPARE far AS SELECT tlbf_add(tlbf_create('1 hour'), 1, '2999-01-01 00:00+00') IS NOT NULL AS accepted;
EXECUTE far;
RESET tlbf.max_future;
SELECT split_part(outcome($$EXECUTE far$$), $$:$$, 1) AS kept_plan_after_reset;
SET tlbf.max_future = -1;
EXECUTE far;
DEALLOCATE far;
RESET tlbf.max_future;
RESET plan_cache_mode;
SELECT split_part(outcome($$SET tlbf.max_future = -2$$), $$:$$, 1) AS below_minus_one;  -- (the message differs between versions)
DROP TABLE skewed;
