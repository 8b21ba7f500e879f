-- Planner neutrality: installing snowflake changes no plan of a query that
-- does not use the type. A fixed set of plain bigint/integer queries is
-- explained before CREATE EXTENSION and after, in the same database, and the
-- plans are compared line by line. Runs first, before the other files create
-- the extension.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS snowflake CASCADE;
RESET client_min_messages;

CREATE TABLE orders (id bigint PRIMARY KEY, customer integer NOT NULL, ref bigint NOT NULL);
CREATE TABLE items (order_id bigint NOT NULL, qty integer NOT NULL, small smallint NOT NULL)
    PARTITION BY RANGE (order_id);
CREATE TABLE items_1 PARTITION OF items FOR VALUES FROM (0) TO (1000);
CREATE TABLE items_2 PARTITION OF items FOR VALUES FROM (1000) TO (2000);
CREATE TABLE items_3 PARTITION OF items FOR VALUES FROM (2000) TO (3000);
CREATE TABLE customers (id integer PRIMARY KEY, region integer NOT NULL);
INSERT INTO orders SELECT g, g % 100, 2999 - g FROM generate_series(0, 2999) g;
INSERT INTO items SELECT g % 3000, g % 7, g % 50 FROM generate_series(0, 29999) g;
CREATE INDEX ON items (order_id);
INSERT INTO customers SELECT g, g % 5 FROM generate_series(0, 99) g;
ANALYZE orders, items, customers;

-- The queries; each is explained with COSTS OFF, generic plans for parameters.
CREATE TABLE neutral_query (n integer PRIMARY KEY, sql text NOT NULL);
INSERT INTO neutral_query VALUES
 (1, 'SELECT count(*) FROM orders o JOIN items i ON i.order_id = o.id WHERE o.id = 5'),
 (2, 'SELECT count(*) FROM orders o JOIN items i ON i.order_id = o.id WHERE o.id = 5::bigint'),
 (3, 'SELECT count(*) FROM orders o JOIN items i ON i.order_id = o.id WHERE i.order_id = 1500::smallint'),
 (4, 'SELECT count(*) FROM orders o JOIN items i ON i.order_id = o.id WHERE o.id IN (5, 1500)'),
 (5, 'SELECT count(*) FROM orders o JOIN items i ON i.order_id = o.id WHERE o.id BETWEEN 900 AND 1100'),
 (6, 'EXECUTE by_bigint(5)'),
 (7, 'EXECUTE by_integer(5)'),
 (8, 'SELECT count(*) FROM orders o JOIN items i ON i.order_id = o.id JOIN customers c ON c.id = o.customer WHERE c.id = 3'),
 (9, 'SELECT count(*) FROM orders o JOIN items i ON i.order_id = o.ref WHERE o.ref = o.id'),
 (10, 'SELECT count(*) FROM orders o JOIN items i ON i.qty = o.customer WHERE o.customer = 3'),
 (11, 'SELECT count(*) FROM orders o JOIN items i ON i.small = o.id WHERE o.id < 10'),
 (12, 'SELECT o.id FROM orders o JOIN items i ON i.order_id = o.id ORDER BY o.id LIMIT 5'),
 (13, 'SELECT count(*) FROM orders a JOIN orders b ON a.id = b.ref JOIN customers c ON c.id = a.customer');

CREATE FUNCTION explain_all() RETURNS TABLE (n integer, line integer, plan text)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    q record;
    merge_only boolean;
BEGIN
    EXECUTE 'PREPARE by_bigint(bigint) AS '
        'SELECT count(*) FROM orders o JOIN items i ON i.order_id = o.id WHERE o.id = $1';
    EXECUTE 'PREPARE by_integer(integer) AS '
        'SELECT count(*) FROM orders o JOIN items i ON i.order_id = o.id WHERE o.id = $1';
    FOR merge_only IN VALUES (false), (true) LOOP
        -- the second round forces merge joins
        PERFORM set_config('enable_hashjoin', CASE WHEN merge_only THEN 'off' ELSE 'on' END, true);
        PERFORM set_config('enable_nestloop', CASE WHEN merge_only THEN 'off' ELSE 'on' END, true);
        FOR q IN SELECT * FROM neutral_query ORDER BY neutral_query.n LOOP
            line := 0;
            FOR plan IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q.sql LOOP
                n := q.n + CASE WHEN merge_only THEN 100 ELSE 0 END;
                line := line + 1;
                RETURN NEXT;
            END LOOP;
        END LOOP;
    END LOOP;
    EXECUTE 'DEALLOCATE by_bigint';
    EXECUTE 'DEALLOCATE by_integer';
END $$;

-- How expressions over core types resolve: the type each gives. An operator
-- or function of ours taking a core type on one side could make one of these
-- ambiguous ("operator is not unique") or resolve it elsewhere.
CREATE TABLE neutral_expression (n integer PRIMARY KEY, sql text NOT NULL);
INSERT INTO neutral_expression VALUES
 (1, '1.5 < 5'), (2, '5 < 1.5'), (3, '2 * 1.5'), (4, '1000 / 3.0'), (5, 'round(1234, -2)'),
 (6, 'round(1.25, 1)'), (7, '1::bigint + 1'), (8, '1::bigint * 2.5'), (9, 'COALESCE(1, 2.5)'),
 (10, 'GREATEST(1, 2::bigint)'), (11, '1.5::real < 2'), (12, 'abs(-5)'), (13, '5 % 3'),
 (14, 'max(x)'), (15, 'sum(x)'), (16, '2::smallint + 3'), (17, '1 = 1.0::double precision'),
 (18, 'CASE WHEN true THEN 1 ELSE 2.5 END'), (19, 'ARRAY[1, 2::bigint]'), (20, '-1 + 2::bigint');
CREATE FUNCTION resolve_all() RETURNS TABLE (n integer, resolves_to text) LANGUAGE plpgsql AS $$
DECLARE
    q record;
BEGIN
    FOR q IN SELECT * FROM neutral_expression ORDER BY neutral_expression.n LOOP
        n := q.n;
        EXECUTE format('SELECT pg_typeof(%s)::text FROM (VALUES (1)) v(x)', q.sql) INTO resolves_to;
        RETURN NEXT;
    END LOOP;
END $$;
-- core's integer families, as they are without the extension
CREATE VIEW integer_ops_now AS
    SELECT 'amop' AS kind, a.amname, o.amopstrategy AS num, o.amoplefttype::regtype::text AS lefttype,
           o.amoprighttype::regtype::text AS righttype, o.amopopr::regoperator::text AS member
      FROM pg_amop o JOIN pg_opfamily f ON f.oid = o.amopfamily JOIN pg_am a ON a.oid = f.opfmethod
     WHERE f.opfname = 'integer_ops'
    UNION ALL
    SELECT 'amproc', a.amname, p.amprocnum, p.amproclefttype::regtype::text, p.amprocrighttype::regtype::text,
           p.amproc::regprocedure::text
      FROM pg_amproc p JOIN pg_opfamily f ON f.oid = p.amprocfamily JOIN pg_am a ON a.oid = f.opfmethod
     WHERE f.opfname = 'integer_ops';
CREATE TABLE integer_ops_without AS TABLE integer_ops_now;

CREATE TABLE plan_without AS SELECT * FROM explain_all();
CREATE TABLE resolved_without AS SELECT * FROM resolve_all();
CREATE EXTENSION snowflake;
CREATE TABLE plan_with AS SELECT * FROM explain_all();
CREATE TABLE resolved_with AS SELECT * FROM resolve_all();

-- every query was explained, and merge joins were forced where asked
SELECT count(DISTINCT n) AS queries, count(*) > 0 AS explained,
       bool_or(plan LIKE '%Merge Join%') AS has_merge_join,
       bool_or(plan LIKE '%Hash Join%') AS has_hash_join,
       bool_or(plan LIKE '%items_1%' AND n = 1) AND NOT bool_or(plan LIKE '%items_2%' AND n = 1)
           AS query_1_scans_one_partition
FROM plan_without;
-- the plans with the extension are those without it: no line differs
SELECT coalesce(a.n, b.n) AS query, coalesce(a.line, b.line) AS line,
       a.plan AS without_extension, b.plan AS with_extension
FROM plan_without a FULL JOIN plan_with b USING (n, line)
WHERE a.plan IS DISTINCT FROM b.plan
ORDER BY 1, 2;

-- every expression resolves as it did
SELECT count(*) AS expressions FROM resolved_without;
SELECT e.n, e.sql, a.resolves_to AS without_extension, b.resolves_to AS with_extension
FROM neutral_expression e JOIN resolved_without a USING (n) JOIN resolved_with b USING (n)
WHERE a.resolves_to IS DISTINCT FROM b.resolves_to;

-- The rule behind it, in the catalog: every operator and support function the
-- extension adds to core's integer_ops families involves snowflake (the
-- planner finds families through operators: core × core is core's alone).
SELECT a.amname, o.amoplefttype::regtype, o.amoprighttype::regtype, o.amopopr::regoperator
FROM pg_amop o JOIN pg_opfamily f ON f.oid = o.amopfamily JOIN pg_am a ON a.oid = f.opfmethod
WHERE f.opfname = 'integer_ops'
  AND (a.amname, o.amopstrategy, o.amoplefttype::regtype::text, o.amoprighttype::regtype::text,
       o.amopopr::regoperator::text) NOT IN (SELECT amname, num, lefttype, righttype, member
                                             FROM integer_ops_without WHERE kind = 'amop')
  AND o.amoplefttype <> 'snowflake'::regtype AND o.amoprighttype <> 'snowflake'::regtype;
SELECT a.amname, p.amprocnum, p.amproclefttype::regtype, p.amprocrighttype::regtype, p.amproc::regprocedure
FROM pg_amproc p JOIN pg_opfamily f ON f.oid = p.amprocfamily JOIN pg_am a ON a.oid = f.opfmethod
WHERE f.opfname = 'integer_ops'
  AND (a.amname, p.amprocnum, p.amproclefttype::regtype::text, p.amprocrighttype::regtype::text,
       p.amproc::regprocedure::text) NOT IN (SELECT amname, num, lefttype, righttype, member
                                             FROM integer_ops_without WHERE kind = 'amproc')
  AND p.amproclefttype <> 'snowflake'::regtype AND p.amprocrighttype <> 'snowflake'::regtype;
-- nor does any family of ours hold an operator between two core types
SELECT f.opfname, a.amname, o.amopopr::regoperator
FROM pg_amop o JOIN pg_opfamily f ON f.oid = o.amopfamily JOIN pg_am a ON a.oid = f.opfmethod
WHERE f.opfname LIKE 'snowflake%'
  AND o.amoplefttype <> 'snowflake'::regtype AND o.amoprighttype <> 'snowflake'::regtype;

-- DROP EXTENSION leaves core's integer_ops exactly as it was (our members are
-- parts of our operator classes, not loose members of the family)
DROP EXTENSION snowflake;
SELECT count(*) > 0 AS integer_ops_members_recorded FROM integer_ops_without;
TABLE integer_ops_now EXCEPT ALL TABLE integer_ops_without;
TABLE integer_ops_without EXCEPT ALL TABLE integer_ops_now;

DROP TABLE plan_without, plan_with, neutral_query, orders, items, customers, neutral_expression, resolved_without,
    resolved_with, integer_ops_without;
DROP VIEW integer_ops_now;
DROP FUNCTION explain_all();
DROP FUNCTION resolve_all();
