-- The same package with shared_preload_libraries = 'tlbf': shared memory
-- and the background launcher (scripts/test_deb.sh compares the output
-- with preloaded.out).
CREATE EXTENSION tlbf;
SELECT tlbf_shared_create('clicks', '10 minutes') IS NOT NULL AS created \gset
SELECT 'a shared filter takes a new key once: '
       || tlbf_shared_add('clicks', 42) || ' then ' || tlbf_shared_add('clicks', 42);
-- the launcher starts with the server: wait for it (at most 180 seconds,
-- the TAP tests' timeout: a busy machine is slow, not broken)
DO $$
BEGIN
    FOR i IN 1..1800 LOOP
        EXIT WHEN EXISTS (SELECT FROM pg_stat_activity WHERE backend_type = 'tlbf launcher');
        PERFORM pg_sleep(0.1);
    END LOOP;
END $$;
SELECT 'launchers running: ' || count(*) FROM pg_stat_activity WHERE backend_type = 'tlbf launcher';
