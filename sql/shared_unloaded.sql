-- Shared filters on a server that did not preload the library: a clear
-- error with a hint, never a crash.  And who may call what.  On a server
-- that preloads it (make installcheck against a user's server), there is
-- nothing to check here, and nothing is left in its shared memory:
-- expected/shared_unloaded_1.out is that run.
SELECT current_setting('shared_preload_libraries') ~ '(^|[ ,])"?tlbf"?($|[ ,])' AS preloaded \gset
\if :preloaded
\echo skipped: this server preloads the tlbf library (make installcheck-preload tests shared filters)
\quit
\endif
SELECT outcome($$SELECT tlbf_shared_create('f', '1 hour')$$);
SELECT outcome($$SELECT tlbf_shared_add('f', 1)$$);
SELECT outcome($$SELECT tlbf_shared_contains('f', 1)$$);
SELECT outcome($$SELECT tlbf_shared_get('f')$$);
SELECT outcome($$SELECT * FROM tlbf_shared_list()$$);
SELECT outcome($$SELECT tlbf_shared_drop('f')$$);
SELECT outcome($$SELECT tlbf_shared_rebuild('f', 'SELECT 1, now()')$$);
SELECT outcome($$SELECT tlbf_shared_last_seen('f', 1)$$);
SELECT outcome($$SELECT tlbf_shared_probability('f', 1)$$);
CREATE TABLE shared_events (k int);
CREATE TRIGGER reject BEFORE INSERT ON shared_events
    FOR EACH ROW EXECUTE FUNCTION tlbf_reject_recent('f', 'k');
SELECT outcome($$INSERT INTO shared_events VALUES (1)$$);
SELECT tlbf_shared_add('f', 1);

-- Privileges: tlbf_admin creates and drops, tlbf_user uses, others neither.
CREATE ROLE regress_tlbf_nobody;
CREATE ROLE regress_tlbf_app IN ROLE tlbf_user;
CREATE ROLE regress_tlbf_ops IN ROLE tlbf_admin;
SET ROLE regress_tlbf_nobody;
SELECT outcome($$SELECT tlbf_shared_add('f', 1)$$);
SELECT outcome($$SELECT tlbf_shared_create('f', '1 hour')$$);
SELECT outcome($$SELECT * FROM tlbf_shared_filters$$);
SET ROLE regress_tlbf_app;
SELECT outcome($$SELECT tlbf_shared_add('f', 1)$$);
SELECT outcome($$SELECT tlbf_shared_create('f', '1 hour')$$);
SET ROLE regress_tlbf_ops;
SELECT outcome($$SELECT tlbf_shared_create('f', '1 hour')$$);
SELECT outcome($$SELECT tlbf_shared_add('f', 1)$$);
RESET ROLE;
SELECT p.oid::regprocedure AS function,
       has_function_privilege('tlbf_user', p.oid, 'EXECUTE') AS tlbf_user,
       has_function_privilege('tlbf_admin', p.oid, 'EXECUTE') AS tlbf_admin,
       has_function_privilege('regress_tlbf_nobody', p.oid, 'EXECUTE') AS others
FROM pg_proc p WHERE p.proname LIKE 'tlbf_shared%' OR p.proname = 'tlbf_reject_recent'
ORDER BY p.proname COLLATE "C", pg_get_function_identity_arguments(p.oid) COLLATE "C";
DROP ROLE regress_tlbf_nobody, regress_tlbf_app, regress_tlbf_ops;
