-- Included by sql/*.sql (pg_regress) with \i.
-- The plan nodes of a query (scan and join types, with index and table), one
-- line: what is asserted of a plan, in a form PostgreSQL majors print alike.
CREATE FUNCTION pg_temp.plan_nodes(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    line text;
    nodes text[] := '{}';
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        IF line ~ '(Scan|Join|Nested Loop|Subplans Removed)' THEN
            nodes := nodes || regexp_replace(line, '^[ ->]*', '');
        END IF;
    END LOOP;
    RETURN array_to_string(nodes, '; ');
END $$;
