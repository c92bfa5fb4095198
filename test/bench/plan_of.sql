-- pg_temp.plan_of(query): the plan PostgreSQL picks for a query, as the
-- chain of its outer children, InitPlans and SubPlans left out:
-- 'Aggregate > Hash Join > Seq Scan on t'.  A benchmark checks with it that
-- it measures the plan it names, or prints it.
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
        -- the outer child, past any InitPlan or SubPlan
        node := (SELECT c FROM jsonb_array_elements(node -> 'Plans') WITH ORDINALITY AS p(c, i)
                 WHERE c ->> 'Parent Relationship' NOT IN ('InitPlan', 'SubPlan')
                 ORDER BY i LIMIT 1);
    END LOOP;
    RETURN array_to_string(chain, ' > ');
END $$;
