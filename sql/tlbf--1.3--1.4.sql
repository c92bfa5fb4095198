-- tlbf 1.4: safe to deploy.  The snapshot table is written only by the
-- extension's functions, function labels match what they read, and the
-- maintenance worker reports what it did.

\echo Use "ALTER EXTENSION tlbf UPDATE TO '1.4'" to load this file. \quit

-- Labels
-- tlbf_info writes its times in the session's TimeZone and its numbers as
-- extra_float_digits asks: the same arguments may give another result in
-- another session, which IMMUTABLE (1.0) promised they would not (an
-- expression index or a constant-folded plan would keep a stale text).
ALTER FUNCTION tlbf_info(tlbf, timestamptz) STABLE;
