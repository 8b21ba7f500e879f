-- The extension's catalog, one line per object (definitions on one line), for comparing an updated
-- installation with a fresh one (test/t/125_upgrade.pl): every member of the
-- extension (functions with their full definitions, operators, types, casts,
-- operator classes and families, views), each with its comment and
-- privileges, and every member of an operator family, core ones too, that
-- involves it, with its family and what binds it there.
WITH ours AS (
    SELECT d.classid, d.objid, d.objsubid FROM pg_catalog.pg_depend d
     WHERE d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.deptype = 'e'
       AND d.refobjid = (SELECT e.oid FROM pg_catalog.pg_extension e WHERE e.extname = 'snowflake'))
SELECT pg_catalog.replace(line, E'\n', ' ') FROM (
SELECT pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid) || ' | ' ||
       coalesce(CASE d.classid
           WHEN 'pg_catalog.pg_proc'::pg_catalog.regclass THEN
               (SELECT CASE WHEN p.prokind = 'a'
                            THEN pg_catalog.format('aggregate %s %s %s %s', a.aggtransfn::pg_catalog.regprocedure,
                                                   a.aggfinalfn::pg_catalog.regproc, a.aggcombinefn::pg_catalog.regproc,
                                                   a.aggtranstype::pg_catalog.regtype)
                            ELSE pg_catalog.pg_get_functiondef(p.oid) END || ' ' ||
                       p.proleakproof || ' ' || coalesce(p.proacl::pg_catalog.text, 'default')
                  FROM pg_catalog.pg_proc p LEFT JOIN pg_catalog.pg_aggregate a ON a.aggfnoid = p.oid
                 WHERE p.oid = d.objid)
           WHEN 'pg_catalog.pg_operator'::pg_catalog.regclass THEN
               (SELECT pg_catalog.format('%s %s %s %s %s %s %s', o.oprcode::pg_catalog.regproc, o.oprrest, o.oprjoin,
                                         o.oprcom::pg_catalog.regoperator, o.oprnegate::pg_catalog.regoperator,
                                         o.oprcanmerge, o.oprcanhash)
                  FROM pg_catalog.pg_operator o WHERE o.oid = d.objid)
           WHEN 'pg_catalog.pg_amop'::pg_catalog.regclass THEN
               (SELECT pg_catalog.format('%s %s %s', a.amoppurpose, a.amopopr::pg_catalog.regoperator, a.amopsortfamily)
                  FROM pg_catalog.pg_amop a WHERE a.oid = d.objid)
           WHEN 'pg_catalog.pg_amproc'::pg_catalog.regclass THEN
               (SELECT a.amproc::pg_catalog.regprocedure::pg_catalog.text FROM pg_catalog.pg_amproc a WHERE a.oid = d.objid)
           WHEN 'pg_catalog.pg_cast'::pg_catalog.regclass THEN
               (SELECT pg_catalog.format('%s %s %s', c.castfunc::pg_catalog.regprocedure, c.castcontext, c.castmethod)
                  FROM pg_catalog.pg_cast c WHERE c.oid = d.objid)
           WHEN 'pg_catalog.pg_type'::pg_catalog.regclass THEN
               (SELECT pg_catalog.format('%s %s %s %s %s %s %s %s %s %s', t.typlen, t.typbyval, t.typalign, t.typcategory,
                                         t.typispreferred, t.typinput::pg_catalog.regproc, t.typoutput::pg_catalog.regproc,
                                         t.typreceive::pg_catalog.regproc, t.typsend::pg_catalog.regproc,
                                         coalesce(t.typacl::pg_catalog.text, 'default'))
                  FROM pg_catalog.pg_type t WHERE t.oid = d.objid)
           WHEN 'pg_catalog.pg_class'::pg_catalog.regclass THEN
               (SELECT c.relkind::pg_catalog.text || ' ' || coalesce(pg_catalog.pg_get_viewdef(c.oid), '') || ' ' ||
                       coalesce(c.relacl::pg_catalog.text, 'default')
                  FROM pg_catalog.pg_class c WHERE c.oid = d.objid)
           WHEN 'pg_catalog.pg_opclass'::pg_catalog.regclass THEN
               (SELECT pg_catalog.format('%s %s %s', pg_catalog.pg_describe_object('pg_catalog.pg_opfamily'::pg_catalog.regclass, c.opcfamily, 0), c.opcintype::pg_catalog.regtype, c.opcdefault)
                  FROM pg_catalog.pg_opclass c WHERE c.oid = d.objid)
       END, '') || ' | ' ||
       coalesce(pg_catalog.obj_description(d.objid, (SELECT c.relname FROM pg_catalog.pg_class c WHERE c.oid = d.classid)), 'no comment')
  FROM ours d
UNION ALL
-- every member of an operator family (core ones too) that is one of its
-- operators or support functions or names one of its types (core's
-- btequalimage(oid) for snowflake, say): they belong to its operator classes,
-- not to it. Each with its family (in its description) and everything it
-- depends on, so a member loose in its family, bound to another class or
-- missing shows (what pg_dump --binary-upgrade writes, and so what the next
-- pg_upgrade keeps, is what is bound to a class)
SELECT pg_catalog.pg_describe_object('pg_catalog.pg_amop'::pg_catalog.regclass, a.oid, 0) || ' | ' ||
       a.amoppurpose::pg_catalog.text || ' | ' || coalesce((
           SELECT pg_catalog.string_agg(pg_catalog.format('%s %s', d.deptype, pg_catalog.pg_describe_object(d.refclassid, d.refobjid, d.refobjsubid)),
                                        ', ' ORDER BY d.deptype, pg_catalog.pg_describe_object(d.refclassid, d.refobjid, d.refobjsubid))
             FROM pg_catalog.pg_depend d
            WHERE d.classid = 'pg_catalog.pg_amop'::pg_catalog.regclass AND d.objid = a.oid), 'no dependency')
  FROM pg_catalog.pg_amop a
 WHERE a.amopopr IN (SELECT d.objid FROM ours d WHERE d.classid = 'pg_catalog.pg_operator'::pg_catalog.regclass)
    OR a.amoplefttype IN (SELECT d.objid FROM ours d WHERE d.classid = 'pg_catalog.pg_type'::pg_catalog.regclass)
    OR a.amoprighttype IN (SELECT d.objid FROM ours d WHERE d.classid = 'pg_catalog.pg_type'::pg_catalog.regclass)
UNION ALL
SELECT pg_catalog.pg_describe_object('pg_catalog.pg_amproc'::pg_catalog.regclass, a.oid, 0) || ' | ' || coalesce((
           SELECT pg_catalog.string_agg(pg_catalog.format('%s %s', d.deptype, pg_catalog.pg_describe_object(d.refclassid, d.refobjid, d.refobjsubid)),
                                        ', ' ORDER BY d.deptype, pg_catalog.pg_describe_object(d.refclassid, d.refobjid, d.refobjsubid))
             FROM pg_catalog.pg_depend d
            WHERE d.classid = 'pg_catalog.pg_amproc'::pg_catalog.regclass AND d.objid = a.oid), 'no dependency')
  FROM pg_catalog.pg_amproc a
 WHERE a.amproc IN (SELECT d.objid FROM ours d WHERE d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass)
    OR a.amproclefttype IN (SELECT d.objid FROM ours d WHERE d.classid = 'pg_catalog.pg_type'::pg_catalog.regclass)
    OR a.amprocrighttype IN (SELECT d.objid FROM ours d WHERE d.classid = 'pg_catalog.pg_type'::pg_catalog.regclass)
) catalog(line)
 ORDER BY 1;
