-- tlbf 1.2: retiring stale slices of stored filters, by a background
-- worker or by hand.

\echo Use "ALTER EXTENSION tlbf UPDATE TO '1.2'" to load this file. \quit

CREATE FUNCTION tlbf_retirable(f tlbf, at timestamptz DEFAULT pg_catalog.now())
    RETURNS boolean
    AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION tlbf_retirable(tlbf, timestamptz) IS
    'would tlbf_retire(f, at) drop any slice? (reads only the slice directory)';

-- The columns the maintenance worker looks after.  pg_dump carries its
-- rows.  Anyone may read it; only a table's owner may add or remove its
-- rows, and anyone may remove rows of tables that no longer exist.
CREATE TABLE tlbf_maintained (
    tbl regclass NOT NULL,
    col name NOT NULL,
    PRIMARY KEY (tbl, col)
);

COMMENT ON TABLE tlbf_maintained IS
    'tlbf columns whose expired slices the maintenance worker retires (see tlbf_maintain)';

SELECT pg_catalog.pg_extension_config_dump('@extschema@.tlbf_maintained', '');

ALTER TABLE tlbf_maintained ENABLE ROW LEVEL SECURITY;
GRANT SELECT, INSERT, DELETE ON tlbf_maintained TO PUBLIC;
CREATE POLICY anyone_reads ON tlbf_maintained FOR SELECT USING (true);
CREATE POLICY owners_register ON tlbf_maintained FOR INSERT
    WITH CHECK (pg_catalog.pg_has_role((SELECT relowner FROM pg_catalog.pg_class
                                        WHERE oid OPERATOR(pg_catalog.=) tbl), 'USAGE'));
CREATE POLICY owners_unregister ON tlbf_maintained FOR DELETE
    USING (NOT EXISTS (SELECT FROM pg_catalog.pg_class WHERE oid OPERATOR(pg_catalog.=) tbl)
           OR pg_catalog.pg_has_role((SELECT relowner FROM pg_catalog.pg_class
                                      WHERE oid OPERATOR(pg_catalog.=) tbl), 'USAGE'));

-- Checks shared by tlbf_maintain and tlbf_unmaintain.
CREATE FUNCTION tlbf_check_maintainable(tbl regclass, col name) RETURNS void
    LANGUAGE plpgsql STABLE STRICT SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    col_type oid;
BEGIN
    IF NOT pg_has_role((SELECT relowner FROM pg_class WHERE oid = tbl), 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of table %', tbl
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF (SELECT relkind FROM pg_class WHERE oid = tbl) <> 'r' THEN
        RAISE EXCEPTION '% is not a table', tbl
            USING ERRCODE = 'wrong_object_type',
                  HINT = 'Register each partition of a partitioned table.';
    END IF;
    SELECT atttypid INTO col_type FROM pg_attribute
    WHERE attrelid = tbl AND attname = col AND attnum > 0 AND NOT attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of relation % does not exist', col, tbl
            USING ERRCODE = 'undefined_column';
    END IF;
    IF col_type <> '@extschema@.tlbf'::regtype THEN
        RAISE EXCEPTION 'column "%" of relation % is not of type tlbf', col, tbl
            USING ERRCODE = 'datatype_mismatch';
    END IF;
END $$;

CREATE FUNCTION tlbf_maintain(tbl regclass, col name) RETURNS void
    LANGUAGE plpgsql STRICT SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM @extschema@.tlbf_check_maintainable(tbl, col);
    INSERT INTO @extschema@.tlbf_maintained VALUES (tbl, col) ON CONFLICT DO NOTHING;
END $$;

COMMENT ON FUNCTION tlbf_maintain(regclass, name) IS
    'let the maintenance worker retire the expired slices of this tlbf column (table owner only)';

CREATE FUNCTION tlbf_unmaintain(tbl regclass, col name) RETURNS void
    LANGUAGE plpgsql STRICT SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT pg_has_role((SELECT relowner FROM pg_class WHERE oid = tbl), 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of table %', tbl
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    DELETE FROM @extschema@.tlbf_maintained m WHERE m.tbl = $1 AND m.col = $2;
END $$;

COMMENT ON FUNCTION tlbf_unmaintain(regclass, name) IS
    'stop retiring the expired slices of this tlbf column (table owner only)';

CREATE FUNCTION tlbf_maintenance_run(
    OUT tbl regclass, OUT col name, OUT rows_rewritten bigint, OUT bytes_freed bigint)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION tlbf_maintenance_run() IS
    'one maintenance pass by hand, in this transaction, over the registered tables you may update';
