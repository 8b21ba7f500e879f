-- What a non-superuser may do (docs/privileges.md): PUBLIC executes every
-- function of the extension but snowflake_status() (pg_monitor),
-- snowflake_adopt_worker_id() (superusers, or whom they grant it) and the
-- registry's (its nodes' role, snowflake_registry_grant; its operator); a member of
-- pg_monitor reads the status view (and the function behind it); a role
-- without it cannot. Neither can change any snowflake setting, and
-- snowflake_nextvals(n) holds its per-call bound for everyone. The helpers
-- that alter or read a table do so as their caller: a role that does not own
-- the table (or may not read it) is refused. Runs on the preloaded instance.
--
-- ALTER SYSTEM cannot run in a transaction block (pgTAP's throws_ok is one),
-- so it goes through dblink_exec on a second connection, logged in as the role
-- under test; the roles are therefore made outside the test's transaction.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS snowflake;
CREATE EXTENSION IF NOT EXISTS dblink;
DROP ROLE IF EXISTS snowflake_monitor;
DROP ROLE IF EXISTS snowflake_plain;
CREATE ROLE snowflake_monitor LOGIN IN ROLE pg_monitor;
CREATE ROLE snowflake_plain LOGIN;

BEGIN;
SELECT plan(57);

-- the catalog: who may execute what
SELECT set_eq(
    $$SELECT p.oid::regprocedure FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid
       WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
         AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake')
         AND NOT has_function_privilege('snowflake_plain', p.oid, 'EXECUTE')$$,
    ARRAY['snowflake_status()'::regprocedure, 'snowflake_adopt_worker_id(timestamptz)'::regprocedure,
          'snowflake_repair_lease(timestamptz)'::regprocedure, 'snowflake_repair_integer_ops()'::regprocedure, 'snowflake_retire_public_key_id(integer)'::regprocedure,
          'snowflake_registry_life()', 'snowflake_registry_claim(text,text,integer,integer,bigint,bigint,text)',
          'snowflake_registry_renew(integer,bigint,text,bigint)',
          'snowflake_registry_present(integer,bigint,text,text,bigint,bigint,bigint,text,text)',
          'snowflake_registry_release(integer,bigint,text,bigint)', 'snowflake_registry_release(integer)',
          'snowflake_registry_create(int4range,interval,interval,interval)', 'snowflake_registry_end_grace(text)',
          'snowflake_registry_raise_floor(timestamptz)', 'snowflake_registry_check(regclass,name)',
          'snowflake_registry_identity()', 'snowflake_registry_add_lives()', 'snowflake_registry_grant(regrole)',
          'snowflake_registry_add_writers()', '_snowflake_registry_unwritten(integer)', '_snowflake_registry_asked(bigint)',
          '_snowflake_registry_written()'],
    'a role without privileges may execute every function of the extension but snowflake_status(), snowflake_adopt_worker_id(), snowflake_repair_lease(), snowflake_repair_integer_ops(), snowflake_retire_public_key_id() and the registry''s (its nodes'' role and its operator''s)');
SELECT results_eq(
    $$SELECT has_function_privilege('pg_monitor', 'snowflake_status()', 'EXECUTE'),
             has_function_privilege('pg_monitor', 'snowflake_adopt_worker_id(timestamptz)', 'EXECUTE')$$,
    $$VALUES (true, false)$$,
    'pg_monitor may execute snowflake_status(), not snowflake_adopt_worker_id()');
SELECT results_eq(
    $$SELECT c.oid::regclass, has_table_privilege('snowflake_plain', c.oid, 'SELECT'),
             has_table_privilege('pg_monitor', c.oid, 'SELECT')
        FROM pg_depend d JOIN pg_class c ON c.oid = d.objid
       WHERE d.classid = 'pg_class'::regclass AND d.deptype = 'e'
         AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake')$$,
    $$VALUES ('snowflake_status'::regclass, false, true)$$,
    'the one relation of the extension, the status view: pg_monitor may read it, PUBLIC may not');

-- tables of the superuser's, for the helpers that alter or read a table
CREATE TABLE priv_owned (id serial PRIMARY KEY);
CREATE TABLE priv_parts (id bigint) PARTITION BY RANGE (id);
CREATE TABLE priv_plain_key (id bigint PRIMARY KEY);
ALTER TABLE priv_plain_key OWNER TO snowflake_plain;
CREATE TABLE priv_plain_ref (id integer REFERENCES priv_plain_key);

CREATE TEMP TABLE setting_name AS
    SELECT name, setting FROM pg_settings WHERE name LIKE 'snowflake.%';
GRANT SELECT ON setting_name TO snowflake_monitor, snowflake_plain;
SELECT is((SELECT count(*)::int FROM setting_name), 12, 'twelve snowflake settings to try');
-- ALTER SYSTEM as a role, on its own connection to this server
CREATE FUNCTION pg_temp.alter_system_as(role name, setting text) RETURNS text LANGUAGE sql AS $$
    SELECT dblink_exec(format('host=%s port=%s dbname=%s user=%s',
                              split_part(current_setting('unix_socket_directories'), ',', 1),
                              current_setting('port'), current_database(), role),
                       'ALTER SYSTEM ' || setting)
$$;
SELECT throws_ok(format($$SELECT pg_temp.alter_system_as(%L, %L)$$, role,
                        format('SET %s = %L', name, setting)),
                 '42501', NULL, format('%s cannot ALTER SYSTEM SET %s', role, name))
  FROM setting_name, (VALUES ('snowflake_monitor'), ('snowflake_plain')) r(role)
 ORDER BY role, name;
SELECT is_empty($$SELECT name FROM pg_file_settings WHERE name LIKE 'snowflake.%'
                    AND sourcefile LIKE '%postgresql.auto.conf'$$,
                'postgresql.auto.conf holds no snowflake setting');

-- a member of pg_monitor
SET LOCAL ROLE snowflake_monitor;
SELECT is(worker_id, current_setting('snowflake.worker_id')::int,
          'a pg_monitor member reads the status view') FROM snowflake_status;
SELECT is(worker_id, current_setting('snowflake.worker_id')::int,
          'a pg_monitor member calls snowflake_status()') FROM snowflake_status();
SELECT throws_ok('SELECT count(*) FROM snowflake_nextvals(1000001)', '54000',
                 'snowflake_nextvals() returns at most 1000000 ids per call, not 1000001',
                 'the nextvals bound holds for a non-superuser');
SELECT throws_ok('SELECT count(*) FROM snowflake_nextvals(9223372036854775807)', '54000', NULL,
                 'the largest bigint is refused at once');
SELECT is((SELECT count(*)::int FROM snowflake_nextvals(1000000)), 1000000,
          'snowflake_nextvals(1000000), the bound itself, is served');
SELECT throws_ok(format('SET %s = %L', name, setting), NULL, NULL, format('SET %s is refused', name))
  FROM setting_name ORDER BY name;

SELECT throws_ok('SELECT snowflake_adopt_worker_id()', '42501', NULL,
                 'a pg_monitor member cannot call snowflake_adopt_worker_id()');

-- a role without pg_monitor
SET LOCAL ROLE snowflake_plain;
SELECT throws_ok('SELECT * FROM snowflake_status', '42501', NULL,
                 'a role outside pg_monitor cannot read the status view');
SELECT throws_ok('SELECT * FROM snowflake_status()', '42501', NULL,
                 'nor call snowflake_status()');
SELECT throws_ok('SELECT snowflake_adopt_worker_id()', '42501', NULL,
                 'nor snowflake_adopt_worker_id()');
SELECT is((snowflake_decode(snowflake_nextval())).worker_id, current_setting('snowflake.worker_id')::int,
          'it makes ids and decodes them');
SELECT throws_ok($$SELECT * FROM snowflake_convert_column('priv_owned', 'id')$$, '42501',
                 'must be owner of table public.priv_owned', 'snowflake_convert_column() refuses a table it does not own');
SELECT throws_ok($$SELECT * FROM snowflake_convert_column('priv_owned', 'id', dry_run => true)$$, '42501',
                 'must be owner of table public.priv_owned', 'even for a dry run');
SELECT throws_ok($$SELECT * FROM snowflake_convert_column('priv_plain_key', 'id')$$, '42501',
                 'column "id" of table public.priv_plain_ref references public.priv_plain_key.id, and is to be widened to bigint, but you do not own public.priv_plain_ref',
                 'or a table of its own that a table it does not own references with a column to widen');
SELECT throws_ok($$SELECT snowflake_create_partition('priv_parts', '2024-07-01 00:00:00+00')$$, '42501', NULL,
                 'snowflake_create_partition() refuses a table it does not own');
SELECT throws_ok($$SELECT * FROM snowflake_workers('priv_owned')$$, '42501', NULL,
                 'snowflake_workers() refuses a table it may not read');
SELECT is_empty($$SELECT * FROM snowflake_partitions('priv_parts')$$,
                'snowflake_partitions() reads the catalog only, which every role may read');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
DROP ROLE snowflake_monitor;
DROP ROLE snowflake_plain;
