-- snowflake in core's integer family: wherever a snowflake meets smallint,
-- integer or bigint (joins, foreign keys, = ANY, IN (subquery), casts written
-- by hand) the planner uses the index on either side, as between the core
-- integers, with the extension's schema on the search_path and with it
-- installed in a schema that is not. Each case: the plan nodes, then the answer.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowflake;
RESET client_min_messages;
\getenv abs_srcdir PG_ABS_SRCDIR
\set plan_nodes :abs_srcdir '/test/regress/plan_nodes.sql'
\i :plan_nodes

-- 60000 orders with a bigint key; 20000 events with a snowflake key, every
-- third order's id; 60000 lines referencing events by a snowflake column.
CREATE TABLE fam_orders (id bigint PRIMARY KEY, small smallint NOT NULL, n integer NOT NULL);
CREATE TABLE fam_events (id snowflake PRIMARY KEY, n integer NOT NULL);
CREATE TABLE fam_lines (event_id snowflake NOT NULL, order_ref bigint NOT NULL);
INSERT INTO fam_orders SELECT g, g % 1000, g FROM generate_series(1, 60000) g;
INSERT INTO fam_events SELECT g * 3, g FROM generate_series(1, 20000) g;
INSERT INTO fam_lines SELECT (g % 20000 + 1) * 3, g FROM generate_series(1, 60000) g;
CREATE INDEX fam_lines_event_id ON fam_lines (event_id);
CREATE INDEX fam_lines_order_ref ON fam_lines (order_ref);
-- a partial index whose bound is an integer constant: the planner proves a
-- query's bigint bound implies it (a proof within one family)
CREATE TABLE fam_partial (id snowflake NOT NULL, n integer NOT NULL);
INSERT INTO fam_partial SELECT g, g FROM generate_series(1, 60000) g;
CREATE INDEX fam_partial_recent ON fam_partial (id) WHERE id > 59000;
ANALYZE fam_orders, fam_events, fam_lines, fam_partial;

-- an index on a snowflake column gets core's int8_ops: the one sort order of
-- bigint, whichever spelling a query uses
SELECT c.relname AS index, o.opcname AS class
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_opclass o ON o.oid = i.indclass[0]
WHERE i.indrelid IN ('fam_events'::regclass, 'fam_lines'::regclass) ORDER BY 1;

-- The cases, explained with COSTS OFF (generic plans for the prepared ones).
CREATE TABLE fam_case (n integer PRIMARY KEY, label text NOT NULL, sql text NOT NULL);
INSERT INTO fam_case VALUES
 (1, 'join snowflake = bigint, few events', 'SELECT count(*) FROM fam_events e JOIN fam_orders o ON o.id = e.id WHERE e.n < 10'),
 (2, 'join bigint = snowflake, few orders', 'SELECT count(*) FROM fam_orders o JOIN fam_events e ON e.id = o.id WHERE o.n < 10'),
 (3, 'join snowflake = smallint', 'SELECT count(*) FROM fam_orders o JOIN fam_events e ON e.id = o.small WHERE o.n < 10'),
 (4, 'id = integer literal', 'SELECT n FROM fam_events WHERE id = 300'),
 (5, 'id::bigint = literal', 'SELECT n FROM fam_events WHERE id::bigint = 300'),
 (6, 'id::bigint = bigint parameter', 'EXECUTE fam_by_bigint(300)'),
 (7, 'id = bigint parameter', 'EXECUTE fam_by_id(300)'),
 (8, 'max(id)', 'SELECT max(id) FROM fam_events'),
 (9, 'min(id::bigint)', 'SELECT min(id::bigint) FROM fam_events'),
 (10, 'ORDER BY id', 'SELECT id FROM fam_events ORDER BY id DESC LIMIT 3'),
 (11, 'ORDER BY id::bigint', 'SELECT id FROM fam_events ORDER BY id::bigint LIMIT 3'),
 (12, 'bigint = ANY (snowflake[])', 'SELECT count(*) FROM fam_orders WHERE id = ANY (''{3,6,9}''::snowflake[])'),
 (13, 'snowflake = ANY (bigint[])', 'SELECT count(*) FROM fam_events WHERE id = ANY (''{3,6,9}''::bigint[])'),
 (14, 'bigint IN (SELECT snowflake)', 'SELECT count(*) FROM fam_orders WHERE id IN (SELECT id FROM fam_events WHERE n < 10)'),
 (15, 'snowflake IN (SELECT bigint)', 'SELECT count(*) FROM fam_events WHERE id IN (SELECT id FROM fam_orders WHERE n < 10)'),
 (16, 'equivalence class across the types', 'SELECT count(*) FROM fam_events e JOIN fam_orders o ON o.id = e.id WHERE o.id = 300'),
 (17, 'snowflake range against a bigint bound', 'SELECT count(*) FROM fam_events WHERE id >= 59990::bigint'),
 (18, 'the RI query of a snowflake FK (bigint parent key)', 'EXECUTE fam_ri_check(300)'),
 (19, 'merge join (hash join and nested loop off)', 'SELECT count(*) FROM fam_events e JOIN fam_orders o ON o.id = e.id'),
 (20, 'a function with SET search_path = pg_catalog', 'SELECT pg_temp.fam_lookup(300)'),
 (21, 'partial index WHERE id > 59000, query id > 59500::bigint', 'SELECT count(*) FROM fam_partial WHERE id > 59500::bigint'),
 (22, 'partial index WHERE id > 59000, query id::bigint > 59500', 'SELECT count(*) FROM fam_partial WHERE id::bigint > 59500');

CREATE FUNCTION pg_temp.fam_lookup(key bigint) RETURNS SETOF text LANGUAGE plpgsql
    SET search_path = pg_catalog AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) SELECT n FROM public.fam_events WHERE id = $1' USING key LOOP
        RETURN NEXT line;
    END LOOP;
END $$;

CREATE FUNCTION pg_temp.fam_plans() RETURNS TABLE (n integer, label text, plan text)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    c record;
    -- the type's name as this search_path spells it
    snowflake_type text := format_type((SELECT oid FROM pg_type WHERE typname = 'snowflake'), NULL);
BEGIN
    EXECUTE 'PREPARE fam_by_bigint(bigint) AS SELECT n FROM fam_events WHERE id::bigint = $1';
    EXECUTE 'PREPARE fam_by_id(bigint) AS SELECT n FROM fam_events WHERE id = $1';
    -- what PostgreSQL runs for each row deleted from a referenced bigint key
    EXECUTE 'PREPARE fam_ri_check(bigint) AS SELECT 1 FROM ONLY fam_lines x WHERE $1 = event_id FOR KEY SHARE OF x';
    FOR c IN SELECT * FROM fam_case ORDER BY fam_case.n LOOP
        n := c.n;
        label := c.label;
        IF c.n = 19 THEN
            PERFORM set_config('enable_hashjoin', 'off', true);
            PERFORM set_config('enable_nestloop', 'off', true);
        END IF;
        IF c.n = 20 THEN
            SELECT string_agg(regexp_replace(l, '^[ ->]*', ''), '; ') INTO plan
              FROM pg_temp.fam_lookup(300) l WHERE l ~ '(Scan|Index Cond|Filter)';
        ELSE
            plan := pg_temp.plan_nodes(replace(c.sql, '::snowflake', '::' || snowflake_type));
        END IF;
        RETURN NEXT;
        PERFORM set_config('enable_hashjoin', 'on', true);
        PERFORM set_config('enable_nestloop', 'on', true);
    END LOOP;
    EXECUTE 'DEALLOCATE fam_by_bigint';
    EXECUTE 'DEALLOCATE fam_by_id';
    EXECUTE 'DEALLOCATE fam_ri_check';
END $$;

-- the answers, the same under every plan
SELECT (SELECT count(*) FROM fam_events e JOIN fam_orders o ON o.id = e.id WHERE e.n < 10) AS join_few,
       (SELECT count(*) FROM fam_orders o JOIN fam_events e ON e.id = o.small WHERE o.n < 10) AS join_smallint,
       (SELECT max(id) FROM fam_events) AS max_id,
       (SELECT count(*) FROM fam_orders WHERE id IN (SELECT id FROM fam_events WHERE n < 10)) AS semi_join,
       (SELECT count(*) FROM fam_events e JOIN fam_orders o ON o.id = e.id) AS join_all;

-- 1. the extension's schema on the search_path
SELECT * FROM pg_temp.fam_plans();

-- 2. the extension in a schema of its own, not on the search_path: every
-- operator a query names resolves to core's bigint ones through the implicit
-- cast, and the plans are the same
CREATE SCHEMA fam_ext;
ALTER EXTENSION snowflake SET SCHEMA fam_ext;
SET search_path = public;
SELECT * FROM pg_temp.fam_plans();
SELECT count(*) AS events_at_300, max(id) AS max_id FROM fam_events WHERE id::bigint = 300 OR id = 300;

-- 3. foreign keys in both directions between snowflake and every core
-- integer type (bigint, integer, smallint parents; snowflake parents)
CREATE TABLE fam_fk_bigint (x bigint REFERENCES fam_events (id));
CREATE TABLE fam_fk_integer (x integer REFERENCES fam_events (id));
CREATE TABLE fam_fk_smallint (x smallint REFERENCES fam_events (id));
CREATE TABLE fam_small_parent (id smallint PRIMARY KEY);
CREATE TABLE fam_int_parent (id integer PRIMARY KEY);
INSERT INTO fam_small_parent VALUES (3), (6);
INSERT INTO fam_int_parent VALUES (3), (6);
CREATE TABLE fam_fk_to_small (x fam_ext.snowflake REFERENCES fam_small_parent (id));
CREATE TABLE fam_fk_to_int (x fam_ext.snowflake REFERENCES fam_int_parent (id));
CREATE TABLE fam_fk_to_bigint (x fam_ext.snowflake REFERENCES fam_orders (id));
INSERT INTO fam_fk_bigint VALUES (3), (60000);
INSERT INTO fam_fk_integer VALUES (6);
INSERT INTO fam_fk_smallint VALUES (9);
INSERT INTO fam_fk_to_small VALUES (3);
INSERT INTO fam_fk_to_int VALUES (6);
INSERT INTO fam_fk_to_bigint VALUES (59999);
-- what is not there is refused, both ways
INSERT INTO fam_fk_bigint VALUES (4);
INSERT INTO fam_fk_to_int VALUES (4);
DELETE FROM fam_events WHERE id = 3;
DELETE FROM fam_orders WHERE id = 59999;
SELECT c.conname, pg_get_constraintdef(c.oid) FROM pg_constraint c
WHERE c.conrelid::regclass::text LIKE 'fam_fk%' AND c.contype = 'f' ORDER BY 1;
DROP TABLE fam_fk_bigint, fam_fk_integer, fam_fk_smallint, fam_fk_to_small, fam_fk_to_int, fam_fk_to_bigint,
    fam_small_parent, fam_int_parent;

-- back to the schema the other files use
ALTER EXTENSION snowflake SET SCHEMA public;
DROP SCHEMA fam_ext;
RESET search_path;
DROP TABLE fam_case, fam_lines, fam_events, fam_orders, fam_partial;
