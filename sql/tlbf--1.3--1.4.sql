-- tlbf 1.4: safe to deploy.  The snapshot table is written only by the
-- extension's functions, function labels match what they read, and the
-- maintenance worker reports what it did.

\echo Use "ALTER EXTENSION tlbf UPDATE TO '1.4'" to load this file. \quit
