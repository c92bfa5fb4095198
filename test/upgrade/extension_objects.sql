-- pg_temp.extension_objects(name): one row per member of the extension,
-- its identity and what defines it, in text that holds no OID and reads the
-- same in any database of the cluster, so that two installs can be compared
-- object by object (sql/upgrade.sql).  Which objects a PostgreSQL version
-- records as members differs (17 also lists array and row types); two
-- installs on the same server list the same ones.
--
--   function, aggregate: kind, arguments with defaults, result, volatility,
--     strictness, parallel label, security definer, leakproof, cost, rows,
--     settings, language, body, grants (an aggregate also its support
--     functions, state type and initial value)
--   type: storage, I/O functions, element and array types, grants
--   operator: operand and result types, function, commutator, negator,
--     estimators, merge and hash
--   table, view, sequence: columns with types, NOT NULL, defaults and
--     column grants; constraints, indexes, triggers, row security and
--     policies; whether pg_dump dumps its rows (and which); grants
--   cast: function, context (explicit, assignment, implicit) and method
--   schema: grants
--   every member: owner and comment
-- The extension itself: its schema and relocatability.
CREATE FUNCTION pg_temp.acl_text(acl aclitem[], objtype "char", owner oid) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT coalesce(string_agg(g, ',' ORDER BY g), 'none')
    FROM (SELECT CASE a.grantee WHEN 0 THEN 'PUBLIC' ELSE a.grantee::regrole::text END
                 || ':' || a.privilege_type || CASE WHEN a.is_grantable THEN '*' ELSE '' END AS g
          FROM aclexplode(coalesce(acl, acldefault(objtype, owner))) a) grants
$$;

CREATE FUNCTION pg_temp.extension_objects(ext name) RETURNS TABLE (object text, description text)
LANGUAGE sql STABLE AS $$
WITH members AS (
    SELECT d.classid, d.objid, d.objsubid, i.type, i.identity
    FROM pg_depend d
    CROSS JOIN LATERAL pg_identify_object(d.classid, d.objid, d.objsubid) i
    WHERE d.refclassid = 'pg_extension'::regclass
      AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = ext)
      AND d.deptype = 'e'
)
SELECT m.type || ' ' || m.identity,
       concat_ws('; ',
           CASE m.classid
           WHEN 'pg_proc'::regclass THEN (
               SELECT concat_ws('; ',
                   'kind ' || p.prokind::text,
                   'arguments (' || pg_get_function_arguments(p.oid) || ')',
                   'returns ' || pg_get_function_result(p.oid),
                   CASE p.provolatile WHEN 'i' THEN 'IMMUTABLE' WHEN 's' THEN 'STABLE' ELSE 'VOLATILE' END,
                   CASE WHEN p.proisstrict THEN 'STRICT' ELSE 'CALLED ON NULL INPUT' END,
                   CASE p.proparallel WHEN 's' THEN 'PARALLEL SAFE' WHEN 'r' THEN 'PARALLEL RESTRICTED'
                                      ELSE 'PARALLEL UNSAFE' END,
                   CASE WHEN p.prosecdef THEN 'SECURITY DEFINER' END,
                   CASE WHEN p.proleakproof THEN 'LEAKPROOF' END,
                   'cost ' || p.procost, 'rows ' || p.prorows,
                   'support ' || nullif(p.prosupport, 0)::regproc,
                   'set ' || array_to_string(p.proconfig, ', '),
                   'language ' || l.lanname,
                   CASE WHEN l.lanname IN ('c', 'internal') THEN 'symbol ' || p.prosrc || coalesce(' in ' || p.probin, '')
                        ELSE 'body md5 ' || md5(btrim(regexp_replace(
                                 coalesce(pg_get_function_sqlbody(p.oid), p.prosrc), '\s+', ' ', 'g'))) END,
                   (SELECT concat_ws('; ', 'aggregate kind ' || a.aggkind::text,
                                'transition ' || a.aggtransfn::regproc,
                                'final ' || nullif(a.aggfinalfn, 0)::regproc,
                                'final extra ' || a.aggfinalextra, 'final modify ' || a.aggfinalmodify::text,
                                'combine ' || nullif(a.aggcombinefn, 0)::regproc,
                                'serialize ' || nullif(a.aggserialfn, 0)::regproc,
                                'deserialize ' || nullif(a.aggdeserialfn, 0)::regproc,
                                'moving transition ' || nullif(a.aggmtransfn, 0)::regproc,
                                'sort operator ' || nullif(a.aggsortop, 0)::regoperator,
                                'state ' || format_type(a.aggtranstype, NULL),
                                'state space ' || a.aggtransspace, 'initial ' || a.agginitval)
                    FROM pg_aggregate a WHERE a.aggfnoid = p.oid),
                   'grants ' || pg_temp.acl_text(p.proacl, 'f', p.proowner),
                   'owner ' || p.proowner::regrole)
               FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE p.oid = m.objid)
           WHEN 'pg_type'::regclass THEN (
               SELECT concat_ws('; ',
                   'kind ' || t.typtype::text, 'category ' || t.typcategory::text, 'preferred ' || t.typispreferred,
                   'length ' || t.typlen, 'by value ' || t.typbyval, 'align ' || t.typalign::text,
                   'storage ' || t.typstorage::text, 'delimiter ' || t.typdelim::text,
                   'input ' || t.typinput::regproc, 'output ' || t.typoutput::regproc,
                   'receive ' || t.typreceive::regproc, 'send ' || t.typsend::regproc,
                   'typmod in ' || t.typmodin::regproc, 'typmod out ' || t.typmodout::regproc,
                   'analyze ' || t.typanalyze::regproc, 'subscript ' || t.typsubscript::regproc,
                   'element ' || nullif(t.typelem, 0)::regtype, 'array ' || nullif(t.typarray, 0)::regtype,
                   'relation ' || nullif(t.typrelid, 0)::regclass,
                   'base ' || nullif(t.typbasetype, 0)::regtype, 'not null ' || t.typnotnull,
                   'default ' || t.typdefault, 'collation ' || nullif(t.typcollation, 0)::regcollation,
                   'grants ' || pg_temp.acl_text(t.typacl, 'T', t.typowner),
                   'owner ' || t.typowner::regrole)
               FROM pg_type t WHERE t.oid = m.objid)
           WHEN 'pg_operator'::regclass THEN (
               SELECT concat_ws('; ',
                   'kind ' || o.oprkind::text,
                   'left ' || nullif(o.oprleft, 0)::regtype, 'right ' || nullif(o.oprright, 0)::regtype,
                   'result ' || o.oprresult::regtype, 'function ' || o.oprcode::regproc,
                   'commutator ' || nullif(o.oprcom, 0)::regoperator,
                   'negator ' || nullif(o.oprnegate, 0)::regoperator,
                   'restrict ' || nullif(o.oprrest, 0)::regproc, 'join ' || nullif(o.oprjoin, 0)::regproc,
                   'merges ' || o.oprcanmerge, 'hashes ' || o.oprcanhash,
                   'owner ' || o.oprowner::regrole)
               FROM pg_operator o WHERE o.oid = m.objid)
           WHEN 'pg_class'::regclass THEN (
               SELECT concat_ws('; ',
                   'kind ' || c.relkind::text, 'persistence ' || c.relpersistence::text,
                   'options ' || array_to_string(c.reloptions, ', '),
                   'columns (' || (
                       SELECT string_agg(concat_ws(' ', quote_ident(a.attname), format_type(a.atttypid, a.atttypmod),
                                                   CASE WHEN a.attnotnull THEN 'NOT NULL' END,
                                                   'DEFAULT ' || pg_get_expr(ad.adbin, ad.adrelid),
                                                   'COLLATE ' || nullif(a.attcollation, 0)::regcollation,
                                                   'GRANTS ' || array_to_string(a.attacl, ',')),
                                         ', ' ORDER BY a.attnum)
                       FROM pg_attribute a
                       LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
                       WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) || ')',
                   'constraints (' || (
                       SELECT string_agg(con.conname || ' ' || pg_get_constraintdef(con.oid), ', '
                                         ORDER BY con.conname)
                       FROM pg_constraint con WHERE con.conrelid = c.oid) || ')',
                   'indexes (' || (
                       SELECT string_agg(pg_get_indexdef(ix.indexrelid), ', ' ORDER BY pg_get_indexdef(ix.indexrelid))
                       FROM pg_index ix WHERE ix.indrelid = c.oid) || ')',
                   'triggers (' || (
                       SELECT string_agg(pg_get_triggerdef(tg.oid), ', ' ORDER BY tg.tgname)
                       FROM pg_trigger tg WHERE tg.tgrelid = c.oid AND NOT tg.tgisinternal) || ')',
                   CASE WHEN c.relrowsecurity THEN 'row security' END,
                   CASE WHEN c.relforcerowsecurity THEN 'forced row security' END,
                   'policies (' || (
                       SELECT string_agg(format('%s %s %s to %s using %s check %s', pol.polname,
                                                CASE WHEN pol.polpermissive THEN 'permissive' ELSE 'restrictive' END,
                                                pol.polcmd,
                                                (SELECT string_agg(g, ',' ORDER BY g) FROM unnest(pol.polroles) r,
                                                 LATERAL (SELECT CASE r WHEN 0 THEN 'PUBLIC' ELSE r::regrole::text END) rn(g)),
                                                pg_get_expr(pol.polqual, pol.polrelid),
                                                pg_get_expr(pol.polwithcheck, pol.polrelid)), ', '
                                         ORDER BY pol.polname)
                       FROM pg_policy pol WHERE pol.polrelid = c.oid) || ')',
                   CASE WHEN c.relkind IN ('v', 'm') THEN 'query ' || pg_get_viewdef(c.oid) END,
                   (SELECT 'dumped rows ' || coalesce(nullif(e.extcondition[pos], ''), 'all')
                    FROM pg_extension e, unnest(e.extconfig) WITH ORDINALITY AS cfg(rel, pos)
                    WHERE e.extname = ext AND cfg.rel = c.oid),
                   'grants ' || pg_temp.acl_text(c.relacl, CASE c.relkind WHEN 'S' THEN 's' ELSE 'r' END::"char", c.relowner),
                   'owner ' || c.relowner::regrole)
               FROM pg_class c WHERE c.oid = m.objid)
           WHEN 'pg_cast'::regclass THEN (
               SELECT concat_ws('; ',
                   'function ' || nullif(c.castfunc, 0)::regprocedure,
                   'context ' || c.castcontext::text, 'method ' || c.castmethod::text)
               FROM pg_cast c WHERE c.oid = m.objid)
           WHEN 'pg_namespace'::regclass THEN (
               SELECT 'grants ' || pg_temp.acl_text(n.nspacl, 'n', n.nspowner) || '; owner ' || n.nspowner::regrole
               FROM pg_namespace n WHERE n.oid = m.objid)
           END,
           (SELECT 'comment ' || quote_literal(ds.description) FROM pg_description ds
            WHERE ds.classoid = m.classid AND ds.objoid = m.objid AND ds.objsubid = m.objsubid))
FROM members m
UNION ALL
SELECT 'extension ' || quote_ident(e.extname),
       concat_ws('; ', 'schema ' || e.extnamespace::regnamespace, 'relocatable ' || e.extrelocatable,
                 'owner ' || e.extowner::regrole)
FROM pg_extension e WHERE e.extname = ext
$$;
