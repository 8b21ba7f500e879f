-- The extension's catalog, specified once: every function, type, cast,
-- operator, operator class and family member it installs or binds, with
-- their labels and who may use them. A change to the install or upgrade
-- scripts shows here first (test/t/125_upgrade.pl checks that an updated
-- installation has a fresh one's catalog; test/upgrade/catalog.sql is its
-- comparison, definitions included).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowflake;
RESET client_min_messages;

CREATE TEMP VIEW ours AS
SELECT d.classid, d.objid FROM pg_depend d
 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake');

-- functions: result (record: OUT or TABLE columns); volatility, strictness, parallel safety, leakproofness,
-- security definer; language; whether PUBLIC may execute it
SELECT p.oid::regprocedure AS function,
       CASE WHEN p.proretset THEN 'setof ' ELSE '' END || p.prorettype::regtype AS result,
       p.provolatile AS vol, p.proisstrict AS strict, p.proparallel AS par, p.proleakproof AS leakproof,
       p.prosecdef AS definer, l.lanname AS lang,
       EXISTS (SELECT FROM aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
                WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE') AS public
  FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
 WHERE p.oid IN (SELECT objid FROM ours WHERE classid = 'pg_proc'::regclass)
 ORDER BY p.oid::regprocedure::text;

-- types: the base type (int8's storage, numeric category), the composite
-- result of decoding (a view's row type is listed as a member from 19 on: not here)
SELECT t.oid::regtype AS type, t.typtype, t.typlen, t.typbyval, t.typalign, t.typcategory, t.typispreferred,
       t.typinput::regproc, t.typoutput::regproc, t.typreceive::regproc, t.typsend::regproc
  FROM pg_type t
 WHERE t.oid IN (SELECT objid FROM ours WHERE classid = 'pg_type'::regclass) AND t.typelem = 0
   AND (t.typrelid = 0 OR (SELECT c.relkind FROM pg_class c WHERE c.oid = t.typrelid) = 'c')  -- not a view's row type
 ORDER BY t.oid::regtype::text;

-- columns of the composite type and the view
SELECT a.attrelid::regclass AS relation, c.relkind, a.attnum, a.attname, a.atttypid::regtype AS type
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
 WHERE a.attnum > 0 AND NOT a.attisdropped
   AND (c.oid IN (SELECT objid FROM ours WHERE classid = 'pg_class'::regclass)
        OR c.reltype IN (SELECT objid FROM ours WHERE classid = 'pg_type'::regclass))
 ORDER BY a.attrelid::regclass::text, a.attnum;

-- casts: context (i implicit, a assignment, e explicit) and method (f
-- function, b binary-coercible)
SELECT c.castsource::regtype AS source, c.casttarget::regtype AS target, c.castfunc::regprocedure AS function,
       c.castcontext AS context, c.castmethod AS method
  FROM pg_cast c
 WHERE c.oid IN (SELECT objid FROM ours WHERE classid = 'pg_cast'::regclass)
 ORDER BY c.castsource::regtype::text, c.casttarget::regtype::text;

-- operators: the function behind each, its leakproofness, commutator,
-- negator, estimators, and whether it merges and hashes
SELECT o.oid::regoperator AS operator, o.oprcode AS function, p.proleakproof AS leakproof,
       o.oprcom::regoperator AS commutator, o.oprnegate::regoperator AS negator,
       o.oprrest AS restrict, o.oprjoin AS join, o.oprcanmerge AS merges, o.oprcanhash AS hashes
  FROM pg_operator o JOIN pg_proc p ON p.oid = o.oprcode
 WHERE o.oid IN (SELECT objid FROM ours WHERE classid = 'pg_operator'::regclass)
 ORDER BY o.oid::regoperator::text;

-- operator classes: snowflake's btree and hash classes in core's
-- integer_ops (not default: an index on a snowflake column takes int8_ops),
-- a default BRIN class
SELECT am.amname AS am, c.opcname AS class, c.opcdefault AS "default", f.opfname AS family
  FROM pg_opclass c JOIN pg_am am ON am.oid = c.opcmethod JOIN pg_opfamily f ON f.oid = c.opcfamily
 WHERE c.oid IN (SELECT objid FROM ours WHERE classid = 'pg_opclass'::regclass)
 ORDER BY 1, 2;

-- the members of every operator family that involve snowflake (core's
-- integer_ops among them): operators by strategy, support functions by number
SELECT * FROM (
    SELECT am.amname AS am, f.opfname AS family, o.amoplefttype::regtype::text AS left,
           o.amoprighttype::regtype::text AS right, 'operator' AS kind, o.amopstrategy AS number,
           o.amopopr::regoperator::text AS member
      FROM pg_amop o JOIN pg_opfamily f ON f.oid = o.amopfamily JOIN pg_am am ON am.oid = f.opfmethod
     WHERE 'snowflake'::regtype IN (o.amoplefttype, o.amoprighttype)
    UNION ALL
    SELECT am.amname, f.opfname, p.amproclefttype::regtype::text, p.amprocrighttype::regtype::text, 'function',
           p.amprocnum, p.amproc::regprocedure::text
      FROM pg_amproc p JOIN pg_opfamily f ON f.oid = p.amprocfamily JOIN pg_am am ON am.oid = f.opfmethod
     WHERE 'snowflake'::regtype IN (p.amproclefttype, p.amprocrighttype)) members
 ORDER BY am, family, "left", "right", kind DESC, number;
