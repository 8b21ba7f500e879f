-- Labels as core's: every function of the extension that reuses a core C
-- function (LANGUAGE internal: the same prosrc) carries that function's
-- volatility, leakproofness, strictness and parallel safety, as
-- PostgreSQL's opr_sanity test requires of core's own functions.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowflake;
RESET client_min_messages;

SELECT p.oid::regprocedure AS ours, c.oid::regprocedure AS core,
       (p.provolatile, p.proleakproof, p.proisstrict, p.proparallel)
         = (c.provolatile, c.proleakproof, c.proisstrict, c.proparallel) AS same_labels
FROM pg_proc p
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
                AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake')
JOIN pg_proc c ON c.prosrc = p.prosrc AND c.prolang = p.prolang AND c.oid < 16384
WHERE p.prolang = (SELECT oid FROM pg_language WHERE lanname = 'internal')
ORDER BY p.oid::regprocedure::text, c.oid::regprocedure::text;

-- the labels that differ, if any (opr_sanity's query, on our functions)
SELECT p.oid::regprocedure AS ours, p.provolatile, p.proleakproof, p.proisstrict, p.proparallel,
       c.oid::regprocedure AS core, c.provolatile, c.proleakproof, c.proisstrict, c.proparallel
FROM pg_proc p
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
                AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake')
JOIN pg_proc c ON c.prosrc = p.prosrc AND c.prolang = p.prolang AND c.oid < 16384
WHERE p.prolang = (SELECT oid FROM pg_language WHERE lanname = 'internal')
  AND (p.provolatile, p.proleakproof, p.proisstrict, p.proparallel)
      IS DISTINCT FROM (c.provolatile, c.proleakproof, c.proisstrict, c.proparallel)
ORDER BY 1, 6;
