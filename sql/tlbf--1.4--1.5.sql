-- tlbf 1.5: a key is SQL's key (enums by label, float4 and float8 apart,
-- keys of types that hash otherwise refused: all in the library).

\echo Use "ALTER EXTENSION tlbf UPDATE TO '1.5'" to load this file. \quit

-- An update run on a Citus coordinator with citus.enable_ddl_propagation
-- off would leave the workers at their version: refuse it unless they
-- already run 1.5.  (Citus runs the update on the workers with that setting
-- off too, but there this node is not the coordinator.)  A worker already
-- at a later version is not behind.
DO $$
DECLARE
    behind text;
BEGIN
    IF pg_catalog.current_setting('citus.enable_ddl_propagation', true) OPERATOR(pg_catalog.=) 'off'
       AND EXISTS (SELECT FROM pg_catalog.pg_extension WHERE extname OPERATOR(pg_catalog.=) 'citus') THEN
        EXECUTE $q$SELECT pg_catalog.string_agg(pg_catalog.format('%s:%s has %s', v.node, v.port,
                                                                 COALESCE(v.version, 'no tlbf')), ', ')
                   FROM @extschema@.tlbf_cluster_versions() v
                   WHERE pg_catalog.citus_is_coordinator()
                     AND v.node IS NOT NULL
                     AND COALESCE(pg_catalog.string_to_array(v.version, '.')::int[] OPERATOR(pg_catalog.<) '{1,5}', true)$q$
            INTO behind;
        IF behind IS NOT NULL THEN
            RAISE EXCEPTION 'ALTER EXTENSION tlbf UPDATE on a Citus coordinator must reach the workers'
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = pg_catalog.format('citus.enable_ddl_propagation is off, and %s.', behind),
                      HINT = 'Run it with citus.enable_ddl_propagation on (the default), which updates every node, or update each worker first.';
        END IF;
    END IF;
END
$$;
