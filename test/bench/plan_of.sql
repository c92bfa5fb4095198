-- pg_temp.plan_of(query): the plan PostgreSQL picks for a query, as the
-- chain of its first (outer) children: 'Aggregate > Hash Join > Seq Scan on
-- t'.  A benchmark checks with it that it measures the plan it names.
CREATE OR REPLACE FUNCTION pg_temp.plan_of(query text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    node jsonb;
    chain text[] := '{}';
BEGIN
    EXECUTE 'EXPLAIN (FORMAT JSON) ' || query INTO node;
    node := node -> 0 -> 'Plan';
    WHILE node IS NOT NULL LOOP
        chain := chain || (node ->> 'Node Type' ||
                           coalesce(' on ' || (node ->> 'Relation Name'), ''));
        node := node -> 'Plans' -> 0;
    END LOOP;
    RETURN array_to_string(chain, ' > ');
END $$;
