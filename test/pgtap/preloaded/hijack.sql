-- The search_path cannot hijack the extension's SQL-language and PL/pgSQL
-- functions (CVE-2018-1058's class): a role without privileges plants
-- functions, operators, aggregates, types and tables named like what those
-- functions use, in its own schema placed before pg_catalog and in public,
-- and every such function of the extension (listed from the catalog, so that
-- one added later must be added here) gives, called by that role and by a
-- superuser under the hostile search_path, what it gave before. Runs on the
-- preloaded instance.
--
-- The model: SQL-language functions have SQL-standard bodies (BEGIN ATOMIC or
-- RETURN), bound to the objects they name when made; PL/pgSQL ones pin
-- search_path = pg_catalog, pg_temp, name the extension's functions through
-- pg_extension's schema and quote every identifier of their dynamic SQL.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS snowflake;
DROP ROLE IF EXISTS snowflake_hijacker;
CREATE ROLE snowflake_hijacker;

BEGIN;
SELECT plan(122);
SET LOCAL search_path = public, pg_catalog;

-- the extension's functions by language
CREATE TEMP VIEW extension_function AS
    SELECT p.oid::regprocedure AS fn, l.lanname, p.prosqlbody IS NOT NULL AS sql_standard, p.proconfig, p.prosecdef
      FROM pg_depend d
      JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'snowflake'
      JOIN pg_proc p ON p.oid = d.objid
      JOIN pg_language l ON l.oid = p.prolang
     WHERE d.classid = 'pg_proc'::regclass AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e';

-- 1. the model in the catalog
SELECT is_empty($$SELECT fn FROM extension_function WHERE lanname NOT IN ('c', 'internal', 'sql', 'plpgsql')$$,
                'the extension''s functions are C, internal, SQL or PL/pgSQL');
SELECT is_empty($$SELECT fn FROM extension_function WHERE lanname = 'sql' AND NOT sql_standard$$,
                'every SQL-language function has a SQL-standard body (bound when made, not through the search_path)');
SELECT is_empty($$SELECT fn FROM extension_function
                   WHERE lanname = 'plpgsql' AND proconfig IS DISTINCT FROM '{"search_path=pg_catalog, pg_temp"}'
                     AND proconfig IS DISTINCT FROM '{"search_path=pg_catalog, pg_temp",snowflake_registry.writing=on}'$$,
                'every PL/pgSQL function pins search_path = pg_catalog, pg_temp (the registry''s writers also snowflake_registry.writing)');
SELECT set_eq($$SELECT fn FROM extension_function WHERE prosecdef$$,
              ARRAY['snowflake_registry_life()', 'snowflake_registry_claim(text,text,integer,integer,bigint,bigint,text)',
                    'snowflake_registry_renew(integer,bigint,text,bigint)',
                    'snowflake_registry_present(integer,bigint,text,text,bigint,bigint,bigint,text,text)',
                    'snowflake_registry_release(integer,bigint,text,bigint)', 'snowflake_registry_identity()',
                    '_snowflake_registry_written()']::regprocedure[],
              'no function of the extension is SECURITY DEFINER but the five a registry''s node calls, the identity they read and its tables'' trigger');
SELECT is_empty(
    $$SELECT f.oid::regprocedure
        FROM (SELECT o.oprcode AS oid FROM pg_operator o
               WHERE o.oid IN (SELECT objid FROM pg_depend WHERE classid = 'pg_operator'::regclass
                                  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake'))
              UNION SELECT c.castfunc FROM pg_cast c
               WHERE c.oid IN (SELECT objid FROM pg_depend WHERE classid = 'pg_cast'::regclass
                                  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake'))
              UNION SELECT unnest(ARRAY[a.aggtransfn, a.aggcombinefn, a.aggfinalfn]::oid[]) FROM pg_aggregate a
               WHERE a.aggfnoid IN (SELECT objid FROM pg_depend WHERE classid = 'pg_proc'::regclass
                                       AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake'))) f
        JOIN pg_proc p ON p.oid = f.oid JOIN pg_language l ON l.oid = p.prolang
       WHERE NOT (l.lanname IN ('c', 'internal') OR l.lanname = 'sql' AND p.prosqlbody IS NOT NULL)$$,
    'the functions behind the operators, casts and aggregates are C, internal or SQL-standard');
SELECT is((SELECT count(*)::int FROM extension_function WHERE lanname IN ('sql', 'plpgsql')), 32,
          'thirty-two SQL-language and PL/pgSQL functions to try (one a trigger''s, tried by the writes of the others)');

-- 2. what each such function gives, from a call with every identifier qualified
--    (%1$s: the tag of the try, below; the call and what it must give)
CREATE TEMP TABLE call (fn regprocedure, label text, expected_sql text, call_sql text);
INSERT INTO call VALUES
    ('snowflake(numeric)', 'a numeric, rounded',
     NULL, $$SELECT public.snowflake(12.5::pg_catalog.numeric)$$),
    ('snowflake(real)', 'a real, rounded',
     NULL, $$SELECT public.snowflake(12.4::pg_catalog.float4)$$),
    ('snowflake(double precision)', 'a double precision, and a negative one',
     NULL, $$SELECT public.snowflake(12.6::pg_catalog.float8) UNION ALL SELECT public.snowflake((-2)::pg_catalog.float8)$$),
    -- superusers only (the role may not call it: not compared for the role)
    ('snowflake_repair_integer_ops()', 'by a superuser, nothing to change',
     $$SELECT 0$$, $$SELECT public.snowflake_repair_integer_ops()$$),
    ('snowflake(json)', 'a JSON string and number',
     NULL, $$SELECT public.snowflake('"123"'::pg_catalog.json) UNION ALL SELECT public.snowflake('456'::pg_catalog.json)$$),
    ('_snowflake_partition_unit(text)', 'every unit',
     NULL, $$SELECT public._snowflake_partition_unit(u) FROM (VALUES ('hour'::pg_catalog.text), ('day'), ('week'), ('month'), ('year')) v(u)$$),
    ('_snowflake_partition_unit(text)', 'a bad unit',
     NULL, $$SELECT public._snowflake_partition_unit('fortnight'::pg_catalog.text)$$),
    ('snowflake_partition_bounds(timestamptz,text,timestamptz)', 'every unit, an epoch given',
     NULL, $$SELECT b.* FROM (VALUES ('hour'::pg_catalog.text), ('day'), ('week'), ('month'), ('year')) v(u),
                  LATERAL public.snowflake_partition_bounds('2024-02-29 13:45:00+05'::timestamp with time zone, v.u,
                                                            '2015-01-01 00:00:00+00'::timestamp with time zone) b$$),
    ('snowflake_partition_bounds(timestamptz,text,timestamptz,text)', 'every unit, an epoch and a layout given',
     NULL, $$SELECT b.* FROM (VALUES ('hour'::pg_catalog.text), ('day'), ('week'), ('month'), ('year')) v(u),
                  LATERAL public.snowflake_partition_bounds('2024-02-29 13:45:00+05'::timestamp with time zone, v.u,
                                                            '2015-01-01 00:00:00+00'::timestamp with time zone,
                                                            'js53'::pg_catalog.text) b$$),
    ('snowflake_partition_bounds(timestamptz,text)', 'every unit, snowflake.epoch',
     NULL, $$SELECT b.* FROM (VALUES ('hour'::pg_catalog.text), ('day'), ('week'), ('month'), ('year')) v(u),
                  LATERAL public.snowflake_partition_bounds('2024-12-31 23:59:59.999+00'::timestamp with time zone, v.u) b$$),
    ('snowflake_partitions(regclass)', 'a table with day partitions and a default one',
     NULL, $$SELECT * FROM public.snowflake_partitions('public.hj_parts_%1$s'::pg_catalog.regclass)$$),
    ('snowflake_partitions_older_than(regclass,interval)', 'older than a day',
     NULL, $$SELECT * FROM public.snowflake_partitions_older_than('public.hj_parts_%1$s'::pg_catalog.regclass, '1 day'::interval)$$),
    ('snowflake_create_partition(regclass,timestamptz,text)', 'a partition that exists',
     NULL, $$SELECT public.snowflake_create_partition('public.hj_parts_%1$s'::pg_catalog.regclass,
                                                      '2024-07-01 12:00:00+00'::timestamp with time zone, 'day'::pg_catalog.text)$$),
    ('snowflake_create_partition(regclass,timestamptz,text)', 'a new partition, of a snowflake key',
     $$SELECT 'public.hj_new_%1$s_2024w27'::pg_catalog.text$$,
     $$SELECT public.snowflake_create_partition('public.hj_new_%1$s'::pg_catalog.regclass,
                                                '2024-07-03 12:00:00+00'::timestamp with time zone, 'week'::pg_catalog.text)$$),
    ('snowflake_id_span(interval,boolean)', 'an hour and a day',
     NULL, $$SELECT public.snowflake_id_span('1 hour'::interval) UNION ALL SELECT public.snowflake_id_span('1 day'::interval, true)$$),
    ('snowflake_id_span(interval,boolean)', 'a month',
     NULL, $$SELECT public.snowflake_id_span('1 month'::interval)$$),
    ('snowflake_workers(regclass,name)', 'three workers',
     NULL, $$SELECT * FROM public.snowflake_workers('public.hj_workers'::pg_catalog.regclass, 'id'::pg_catalog.name)$$),
    ('snowflake_convert_column(regclass,name,boolean,boolean)', 'what the dry run showed, done',
     $$SELECT step, table_name, column_name, old_type, new_type, action, statement, lock_mode, rewrite
         FROM public.snowflake_convert_column('public.hj_convert_%1$s'::pg_catalog.regclass, 'id'::pg_catalog.name, true)$$,
     $$SELECT step, table_name, column_name, old_type, new_type, action, statement, lock_mode, rewrite
         FROM public.snowflake_convert_column('public.hj_convert_%1$s'::pg_catalog.regclass, 'id'::pg_catalog.name)$$);
    -- the registry (made below, before the tries): each try claims, renews and releases as its own holder
INSERT INTO call VALUES
    ('snowflake_registry_create(int4range,interval,interval,interval)', 'a range it refuses',
     NULL, $$SELECT true FROM public.snowflake_registry_create('[-1,8)'::pg_catalog.int4range, '1 hour'::pg_catalog.interval,
                                                             '10 min'::pg_catalog.interval, '1 s'::pg_catalog.interval)$$),
    ('snowflake_registry_identity()', 'this server',
     NULL, $$SELECT * FROM public.snowflake_registry_identity()$$),
    ('snowflake_registry_add_lives()', 'on a registry that has them',
     NULL, $$SELECT public.snowflake_registry_add_lives()$$),
    ('snowflake_registry_add_writers()', 'on a registry that has them',
     NULL, $$SELECT public.snowflake_registry_add_writers()$$),
    ('_snowflake_registry_unwritten(integer)', 'a worker id it does not grant',
     NULL, $$SELECT public._snowflake_registry_unwritten(99)$$),
    ('_snowflake_registry_asked(bigint)', 'no window',
     NULL, $$SELECT public._snowflake_registry_asked(0::pg_catalog.int8)$$),
    ('snowflake_registry_life()', 'its life',
     NULL, $$SELECT registry_id IS NOT NULL, life_change, max_window_ms FROM public.snowflake_registry_life()$$),
    ('snowflake_registry_end_grace(text)', 'ended already',
     NULL, $$SELECT public.snowflake_registry_end_grace()$$),
    ('snowflake_registry_present(integer,bigint,text,text,bigint,bigint,bigint,text,text)', 'a worker id it does not grant, from this life and another',
     NULL, $$SELECT p.outcome, p.reason FROM public.snowflake_registry_life() l,
                LATERAL public.snowflake_registry_present(99, 1::pg_catalog.int8, 'hj-%1$s'::pg_catalog.text, 'try %1$s'::pg_catalog.text,
                        1::pg_catalog.int8, 2::pg_catalog.int8, 60000::pg_catalog.int8, l.registry_id, l.life) p
             UNION ALL SELECT outcome, reason FROM public.snowflake_registry_present(99, 1::pg_catalog.int8, 'hj-%1$s'::pg_catalog.text,
                        'try %1$s'::pg_catalog.text, 1::pg_catalog.int8, 2::pg_catalog.int8, 60000::pg_catalog.int8,
                        'another registry'::pg_catalog.text, 'its life'::pg_catalog.text)$$),
    ('snowflake_registry_grant(regrole)', 'the role',
     NULL, $$SELECT public.snowflake_registry_grant('snowflake_hijacker'::pg_catalog.regrole)$$),
    ('snowflake_registry_claim(text,text,integer,integer,bigint,bigint,text)', 'a claim, then the same holder''s again',
     NULL, $$SELECT worker_id, fencing_epoch FROM public.snowflake_registry_claim('hj-%1$s'::pg_catalog.text,
                'try %1$s'::pg_catalog.text, NULL::pg_catalog.int4, 7, 60000::pg_catalog.int8, 1704067200000::pg_catalog.int8,
                'time=41 worker=10 sequence=12'::pg_catalog.text)$$),
    ('snowflake_registry_renew(integer,bigint,text,bigint)', 'the holder''s grant, and one it does not hold',
     NULL, $$SELECT r.until_ms IS NOT NULL FROM snowflake_registry.workers w,
                LATERAL public.snowflake_registry_renew(w.worker_id, w.fencing_epoch, 'hj-%1$s'::pg_catalog.text, 60000::pg_catalog.int8) r
              WHERE w.holder OPERATOR(pg_catalog.=) 'hj-%1$s'::pg_catalog.text
             UNION ALL SELECT until_ms IS NOT NULL FROM public.snowflake_registry_renew(7, 99::pg_catalog.int8, 'hj-%1$s'::pg_catalog.text, 1::pg_catalog.int8)$$),
    ('snowflake_registry_release(integer,bigint,text,bigint)', 'a grant the caller does not hold',
     NULL, $$SELECT public.snowflake_registry_release(0, 1::pg_catalog.int8, 'nobody'::pg_catalog.text, 0::pg_catalog.int8)$$),
    ('snowflake_registry_release(integer)', 'a worker id nobody holds',
     NULL, $$SELECT public.snowflake_registry_release(7)$$),
    ('snowflake_registry_raise_floor(timestamptz)', 'to 2000',
     NULL, $$SELECT public.snowflake_registry_raise_floor('2000-01-01 00:00:00+00'::pg_catalog.timestamptz)$$),
    ('snowflake_registry_check(regclass,name)', 'three workers, no window',
     NULL, $$SELECT * FROM public.snowflake_registry_check('public.hj_workers'::pg_catalog.regclass, 'id'::pg_catalog.name)$$);
UPDATE call SET expected_sql = call_sql WHERE expected_sql IS NULL;
SELECT set_eq($$SELECT DISTINCT fn FROM call$$,
              $$SELECT fn FROM extension_function WHERE lanname IN ('sql', 'plpgsql') AND fn <> '_snowflake_registry_written()'::regprocedure$$,
              'every SQL-language and PL/pgSQL function of the extension is called');

-- Runs every call under a search_path, as the current role, and keeps its
-- rows as text (or its error). Only the call itself runs under that path.
CREATE TEMP TABLE result (tag text, kind text, fn regprocedure, label text, result text);
CREATE FUNCTION pg_temp.run_calls(tag text, kind text, path text) RETURNS void
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    c record;
    stmt text;
    res text;
BEGIN
    FOR c IN SELECT * FROM pg_temp.call ORDER BY fn::text, label LOOP
        stmt := format('CREATE TEMP TABLE pg_temp.call_output AS %s',
                       format(CASE kind WHEN 'expected' THEN c.expected_sql ELSE c.call_sql END, tag));
        BEGIN
            PERFORM pg_catalog.set_config('search_path', path, true);
            EXECUTE stmt;
            PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
            SELECT string_agg(o::text, ' | ' ORDER BY o.ctid) INTO res FROM pg_temp.call_output o;
            DROP TABLE pg_temp.call_output;
        EXCEPTION WHEN OTHERS THEN
            res := format('ERROR %s: %s', SQLSTATE, SQLERRM);
        END;
        INSERT INTO pg_temp.result VALUES (tag, kind, c.fn, c.label, res);
    END LOOP;
END $$;
GRANT SELECT ON call TO snowflake_hijacker;
GRANT INSERT ON result TO snowflake_hijacker;

-- 3. a registry the role may use (its epoch and layout set, as by a first
--    claim); the role's tables, per try: a serial key referenced by an
--    integer foreign key, partitioned tables, a table of ids from three workers
SELECT public.snowflake_registry_create('[0,8)', '1 hour');
SELECT public.snowflake_registry_end_grace();
UPDATE snowflake_registry.settings SET epoch_ms = 1704067200000, layout = 'time=41 worker=10 sequence=12',
                                       written_xid = public._snowflake_registry_writer();
SELECT public.snowflake_registry_grant('snowflake_hijacker');
GRANT EXECUTE ON FUNCTION public.snowflake_registry_create(int4range, interval, interval, interval),
    public.snowflake_registry_identity(), public.snowflake_registry_add_lives(), public.snowflake_registry_end_grace(text),
    public.snowflake_registry_add_writers(), public._snowflake_registry_unwritten(integer), public._snowflake_registry_asked(bigint),
    public.snowflake_registry_release(integer), public.snowflake_registry_raise_floor(timestamptz),
    public.snowflake_registry_check(regclass, name), public.snowflake_registry_grant(regrole) TO snowflake_hijacker;
GRANT USAGE ON SCHEMA snowflake_registry TO snowflake_hijacker;
GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA snowflake_registry TO snowflake_hijacker;
GRANT SELECT ON ALL SEQUENCES IN SCHEMA snowflake_registry TO snowflake_hijacker;
GRANT CREATE ON SCHEMA public TO snowflake_hijacker;  -- as before PostgreSQL 15
CREATE SCHEMA evil AUTHORIZATION snowflake_hijacker;
SET LOCAL ROLE snowflake_hijacker;
CREATE TABLE public.hj_workers (id bigint PRIMARY KEY);
INSERT INTO public.hj_workers
    SELECT public.snowflake_from_timestamp('2024-07-01 00:00:00+00'::timestamptz) | (w << 12) | s
      FROM (VALUES (1), (2), (1023)) v(w), generate_series(0, 2) s;
DO $$
DECLARE
    tag text;
BEGIN
    FOREACH tag IN ARRAY ARRAY['hijacker', 'victim', 'public'] LOOP
        EXECUTE format($sql$
            CREATE TABLE public.hj_convert_%1$s (id serial PRIMARY KEY, note text);
            CREATE TABLE public.hj_convert_%1$s_ref (id bigint PRIMARY KEY,
                                                   convert_id integer REFERENCES public.hj_convert_%1$s);
            INSERT INTO public.hj_convert_%1$s (note) VALUES ('one'), ('two');
            INSERT INTO public.hj_convert_%1$s_ref VALUES (1, 1), (2, 2);
            CREATE TABLE public.hj_parts_%1$s (id bigint) PARTITION BY RANGE (id);
            SELECT public.snowflake_create_partition('public.hj_parts_%1$s', '2024-07-01 12:00:00+00', 'day');
            SELECT public.snowflake_create_partition('public.hj_parts_%1$s', '2024-07-02 12:00:00+00', 'day');
            CREATE TABLE public.hj_parts_%1$s_rest PARTITION OF public.hj_parts_%1$s DEFAULT;
            CREATE TABLE public.hj_new_%1$s (id public.snowflake) PARTITION BY RANGE (id);
        $sql$, tag);
        PERFORM pg_temp.run_calls(tag, 'expected', 'public');
    END LOOP;
END $$;
RESET ROLE;
SELECT is_empty($$SELECT fn, label, result FROM result WHERE kind = 'expected' AND result ~ '^ERROR'
                   AND label NOT IN ('a bad unit', 'a month',
                                     'by a superuser, nothing to change', 'a range it refuses',
                                     'on a registry that has them', 'the role')$$,
                'before the hostile objects, every call works');
SELECT is((SELECT count(*)::int FROM result WHERE kind = 'expected' AND result ~ '^ERROR 22023'), 9,
          'but for a bad unit, a month and a registry range, refused (22023)');
SELECT is((SELECT count(*)::int FROM result WHERE kind = 'expected' AND label = 'a double precision, and a negative one'
              AND result = '(13) | (-2)'), 3,
          'a double precision and a negative one convert, rounded (13, -2)');

-- 4. the hostile objects, in the role's own schema and in public: functions,
--    operators, aggregates, domains and relations named like what the
--    functions use, each raising 'hijacked' when used
-- (the role's own statements here see pg_catalog only: public is planted too)
SET LOCAL ROLE snowflake_hijacker;
SET LOCAL search_path = pg_catalog;
CREATE FUNCTION evil.hijacked() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'hijacked'; END $$;
DO $$
DECLARE
    f record;
    s name;
    n integer := 0;
BEGIN
    FOR f IN SELECT * FROM (VALUES
        ('date_trunc', 'text, timestamp', 'timestamp'), ('date_trunc', 'text, timestamptz', 'timestamptz'),
        ('date_trunc', 'text, timestamptz, text', 'timestamptz'),
        ('format', 'text', 'text'), ('format', 'text, text', 'text'), ('format', 'text, name', 'text'),
        ('format', 'text, VARIADIC text[]', 'text'), ('format', 'text, name, name', 'text'),
        ('format', 'text, regclass, name', 'text'), ('format', 'text, name, regclass', 'text'),
        ('now', '', 'timestamptz'), ('to_regclass', 'text', 'regclass'), ('to_char', 'timestamp, text', 'text'),
        ('octet_length', 'text', 'integer'), ('quote_ident', 'text', 'text'), ('trunc', 'numeric', 'numeric'),
        ('pg_get_expr', 'pg_node_tree, oid', 'text'), ('pg_has_role', 'oid, text', 'boolean'),
        ('pg_partition_root', 'regclass', 'regclass'), ('generate_subscripts', 'anyarray, integer', 'SETOF integer'),
        ('pg_describe_object', 'oid, oid, integer', 'text'), ('current_setting', 'text', 'text'),
        ('set_config', 'text, text, boolean', 'text'), ('greatest', 'timestamptz, timestamptz', 'timestamptz'),
        ('textcat', 'text, text', 'text'), ('int8eq', 'bigint, bigint', 'boolean'),
        ('jsonb', 'json', 'jsonb'), ('interval', 'text', 'interval'), ('timezone', 'text, timestamptz', 'timestamp'),
        ('timezone', 'text, timestamp', 'timestamptz'), ('extract', 'text, interval', 'numeric'),
        ('substring', 'text, text', 'text'),
        ('snowflake_nextval', '', 'bigint'), ('snowflake_from_timestamp', 'timestamptz', 'bigint'),
        ('snowflake_from_timestamp', 'timestamptz, timestamptz', 'bigint'),
        ('snowflake_from_timestamp', 'timestamptz, timestamptz, text', 'bigint'),
        ('snowflake_to_timestamp', 'bigint', 'timestamptz'), ('snowflake_to_timestamp', 'bigint, timestamptz', 'timestamptz'),
        ('snowflake_decode', 'bigint', 'public.snowflake_fields'), ('snowflake', 'jsonb', 'public.snowflake'),
        ('_snowflake_partition_unit', 'text', 'text'),
        ('snowflake_partition_bounds', 'timestamptz, text, timestamptz, OUT from_id bigint, OUT to_id bigint, OUT from_ts timestamptz, OUT to_ts timestamptz', 'record'),
        ('snowflake_partition_bounds', 'timestamptz, text, timestamptz, text, OUT from_id bigint, OUT to_id bigint, OUT from_ts timestamptz, OUT to_ts timestamptz', 'record'),
        ('snowflake_partition_bounds', 'timestamptz, text, OUT from_id bigint, OUT to_id bigint, OUT from_ts timestamptz, OUT to_ts timestamptz', 'record'),
        ('snowflake_partitions', 'regclass', 'TABLE (partition regclass, from_id bigint, to_id bigint, from_ts timestamptz, to_ts timestamptz)')
        ) v(name, args, returns)
    LOOP
        FOREACH s IN ARRAY ARRAY['evil', 'public'] LOOP
            -- public holds the extension: its own names are planted in evil only
            CONTINUE WHEN s = 'public' AND f.name ~ 'snowflake';
            EXECUTE format($sql$CREATE FUNCTION %I.%I(%s) RETURNS %s LANGUAGE plpgsql AS 'BEGIN RAISE EXCEPTION USING MESSAGE = ''hijacked: %s.%s(%s)''; END'$sql$,
                           s, f.name, f.args, f.returns, s, f.name, f.args);
        END LOOP;
    END LOOP;
    -- operators on the core types (and the extension's), each in evil
    FOR f IN SELECT * FROM (VALUES
        ('=', 'bigint', 'bigint'), ('<>', 'bigint', 'bigint'), ('<', 'bigint', 'bigint'), ('<=', 'bigint', 'bigint'),
        ('>=', 'bigint', 'bigint'), ('>', 'bigint', 'bigint'), ('|', 'bigint', 'bigint'), ('<<', 'bigint', 'integer'),
        ('=', 'integer', 'integer'), ('=', 'text', 'text'), ('<>', 'text', 'text'), ('~', 'text', 'text'),
        ('!~', 'text', 'text'), ('||', 'text', 'text'), ('=', 'name', 'name'), ('=', 'oid', 'oid'),
        ('=', 'regclass', 'regclass'), ('=', 'oid', 'regclass'), ('=', 'regclass', 'oid'), ('<>', 'oid', 'oid'),
        ('=', 'regtype', 'regtype'), ('=', 'oid', 'regtype'), ('=', '"char"', '"char"'), ('=', 'smallint', 'smallint'),
        ('=', 'smallint[]', 'smallint[]'), ('=', 'int2vector', 'smallint[]'),
        ('+', 'timestamp', 'interval'), ('+', 'timestamptz', 'interval'), ('-', 'timestamptz', 'interval'),
        ('%', 'numeric', 'numeric'), ('*', 'numeric', 'integer'), ('*', 'numeric', 'numeric'),
        ('<>', 'numeric', 'numeric'), ('<=', 'numeric', 'numeric'), ('>=', 'numeric', 'numeric'),
        ('>=', 'bigint', 'public.snowflake'), ('<=', 'public.snowflake', 'bigint'),
        ('||', 'text[]', 'text'), ('=', 'boolean', 'boolean')) v(op, l, r)
    LOOP
        n := n + 1;
        EXECUTE format($sql$CREATE FUNCTION evil.hijacked_op_%s(%s, %s) RETURNS boolean LANGUAGE plpgsql
                            AS 'BEGIN RAISE EXCEPTION USING MESSAGE = ''hijacked: operator %s (%s, %s)''; END'$sql$, n, f.l, f.r, f.op, f.l, f.r);
        EXECUTE format('CREATE OPERATOR evil.%s (LEFTARG = %s, RIGHTARG = %s, FUNCTION = evil.hijacked_op_%s)', f.op, f.l, f.r, n);
    END LOOP;
END $$;
CREATE FUNCTION evil.hijacked_state(bigint, bigint) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'hijacked: an aggregate'; END $$;
CREATE FUNCTION evil.hijacked_count(bigint) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'hijacked: count(*)'; END $$;
CREATE FUNCTION evil.hijacked_text_state(text, text, text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'hijacked: string_agg'; END $$;
CREATE AGGREGATE evil.max(bigint) (SFUNC = evil.hijacked_state, STYPE = bigint);
CREATE AGGREGATE evil.min(bigint) (SFUNC = evil.hijacked_state, STYPE = bigint);
CREATE AGGREGATE evil.count(*) (SFUNC = evil.hijacked_count, STYPE = bigint);
CREATE AGGREGATE evil.string_agg(text, text) (SFUNC = evil.hijacked_text_state, STYPE = text);
-- the catalogs and the convert function's temporary tables, as relations
-- that raise when read (and cannot be written)
DO $$
DECLARE
    r record;
    s name;
BEGIN
    FOR r IN SELECT * FROM (VALUES ('pg_class'), ('pg_attribute'), ('pg_attrdef'), ('pg_constraint'), ('pg_depend'),
                                   ('pg_extension'), ('pg_namespace'), ('pg_inherits'), ('pg_partitioned_table'),
                                   ('_snowflake_convert_plan'), ('_snowflake_convert_family')) v(name) LOOP
        FOREACH s IN ARRAY ARRAY['evil', 'public'] LOOP
            CONTINUE WHEN s = 'public' AND r.name ~ '^pg_';
            EXECUTE format('CREATE VIEW %I.%I AS SELECT oid AS relid, oid, relname AS attname FROM pg_catalog.pg_class
                             WHERE evil.hijacked() LIMIT 0', s, r.name);
        END LOOP;
    END LOOP;
END $$;
-- the types named without pg_catalog in PL/pgSQL, as domains that refuse every value
CREATE DOMAIN evil.regclass AS pg_catalog.oid CHECK (evil.hijacked());
CREATE DOMAIN evil.regtype AS pg_catalog.oid CHECK (evil.hijacked());
CREATE DOMAIN evil.name AS pg_catalog.text CHECK (evil.hijacked());
CREATE DOMAIN evil.text AS pg_catalog.varchar CHECK (evil.hijacked());
CREATE DOMAIN evil.json AS pg_catalog.text CHECK (evil.hijacked());
CREATE DOMAIN evil.snowflake AS pg_catalog.int8 CHECK (evil.hijacked());
INSERT INTO pg_temp.result
    SELECT 'planted', 'count', NULL::regprocedure, 'functions', count(*) FROM pg_proc
     WHERE proowner = 'snowflake_hijacker'::regrole AND prokind IN ('f', 'a')
    UNION ALL
    SELECT 'planted', 'count', NULL::regprocedure, 'operators', count(*) FROM pg_operator WHERE oprowner = 'snowflake_hijacker'::regrole
    UNION ALL
    SELECT 'planted', 'count', NULL::regprocedure, 'views', count(*) FROM pg_class WHERE relowner = 'snowflake_hijacker'::regrole AND relkind = 'v'
    UNION ALL
    SELECT 'planted', 'count', NULL::regprocedure, 'domains', count(*) FROM pg_type WHERE typowner = 'snowflake_hijacker'::regrole AND typtype = 'd';

-- 5. every call again: (hijacker) by the role, its schema before pg_catalog;
--    (victim) by a superuser with that search_path; (public) by a superuser
--    with search_path "$user", public, where the role planted too
SELECT pg_temp.run_calls('hijacker', 'call', 'evil, pg_catalog, public');
RESET ROLE;
SELECT pg_temp.run_calls('victim', 'call', 'evil, pg_catalog, public');
SELECT pg_temp.run_calls('public', 'call', '"$user", public');

-- the converted keys default to the extension's snowflake_nextval()
INSERT INTO pg_temp.result
    SELECT t, 'default', 'public.snowflake_convert_column(regclass,name,boolean,boolean)', 'the new default',
           pg_get_expr(d.adbin, d.adrelid) || ' ' || format_type(a.atttypid, a.atttypmod) || ' '
           || (SELECT format_type(atttypid, atttypmod) FROM pg_attribute
                WHERE attrelid = format('public.hj_convert_%s_ref', t)::regclass AND attname = 'convert_id')
      FROM unnest(ARRAY['hijacker', 'victim', 'public']) t
      JOIN pg_attribute a ON a.attrelid = format('public.hj_convert_%s', t)::regclass AND a.attname = 'id'
      LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum;
-- the hostile objects go (pgTAP itself is no more protected from them than any
-- other code that does not pin its search_path)
DROP OWNED BY snowflake_hijacker;
SET LOCAL search_path = public, pg_catalog;

SELECT is(result, expected, format('the role planted %s %s', expected, label))
  FROM result JOIN (VALUES ('functions', '124'), ('operators', '39'), ('views', '13'), ('domains', '6')) v(label, expected) USING (label)
 WHERE kind = 'count' ORDER BY label;

SELECT is(c.result, e.result, format('%s, %s: %s', c.tag, c.fn, c.label))
  FROM result c JOIN result e ON e.tag = c.tag AND e.fn = c.fn AND e.label = c.label AND e.kind = 'expected'
 WHERE c.kind = 'call' AND NOT (c.tag = 'hijacker' AND c.fn = 'snowflake_repair_integer_ops()'::regprocedure)
 ORDER BY c.tag, c.fn::text, c.label;
SELECT is(result, 'public.snowflake_nextval() bigint bigint',
          format('%s: the converted key defaults to public.snowflake_nextval(), the referencing column is widened', tag))
  FROM result WHERE kind = 'default' ORDER BY tag;

-- 6. the dynamic SQL quotes the extension's schema and the tables' names once,
--    whatever they hold
CREATE SCHEMA "Snow ""Flake""; --";
ALTER EXTENSION snowflake SET SCHEMA "Snow ""Flake""; --";
CREATE SCHEMA "Part ""S""";
CREATE TABLE "Part ""S"""."Keys ""K""" ("the ""id""" serial PRIMARY KEY);
CREATE TABLE "Part ""S"""."Parts ""P""" (id bigint) PARTITION BY RANGE (id);
SELECT public.is("Snow ""Flake""; --".snowflake_id_span('1 day'), 86400000::bigint << 22,
                 'snowflake_id_span() from a schema whose name needs quoting');
SELECT public.is(("Snow ""Flake""; --".snowflake_create_partition('"Part ""S"""."Parts ""P"""', '2024-07-01 12:00:00+00'))::text,
                 '"Part ""S"""."Parts ""P""_20240701"', 'snowflake_create_partition() of a table whose names need quoting');
SELECT public.is((SELECT array_agg(statement ORDER BY step) FILTER (WHERE lock_mode IS NOT NULL) FROM "Snow ""Flake""; --".snowflake_convert_column('"Part ""S"""."Keys ""K"""', 'the "id"')),
                 ARRAY['ALTER TABLE "Part ""S"""."Keys ""K""" ALTER COLUMN "the ""id""" DROP DEFAULT',
                       'ALTER TABLE "Part ""S"""."Keys ""K""" ALTER COLUMN "the ""id""" TYPE bigint',
                       'ALTER TABLE "Part ""S"""."Keys ""K""" ALTER COLUMN "the ""id""" SET DEFAULT "Snow ""Flake""; --".snowflake_nextval()',
                       'DROP SEQUENCE "Part ""S"""."Keys ""K""_the ""id""_seq"'],
                 'snowflake_convert_column() of a column whose names need quoting');
INSERT INTO "Part ""S"""."Keys ""K""" DEFAULT VALUES;
SELECT public.is(worker_id, 7, 'snowflake_workers() of it') FROM "Snow ""Flake""; --".snowflake_workers('"Part ""S"""."Keys ""K"""', 'the "id"');

SELECT * FROM finish();
ROLLBACK;
DROP ROLE snowflake_hijacker;
