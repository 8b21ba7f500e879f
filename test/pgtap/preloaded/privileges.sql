-- What a non-superuser may do: a member of pg_monitor reads the status view
-- (and the function behind it); a role without it cannot. Neither can change
-- any snowflake setting, and snowflake_nextvals(n) holds its per-call bound
-- for everyone. Runs on the preloaded instance.
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
SELECT plan(21);

CREATE TEMP TABLE setting_name AS
    SELECT name, setting FROM pg_settings WHERE name LIKE 'snowflake.%';
GRANT SELECT ON setting_name TO snowflake_monitor, snowflake_plain;
SELECT is((SELECT count(*)::int FROM setting_name), 4, 'four snowflake settings to try');
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

-- a role without pg_monitor
SET LOCAL ROLE snowflake_plain;
SELECT throws_ok('SELECT * FROM snowflake_status', '42501', NULL,
                 'a role outside pg_monitor cannot read the status view');
SELECT throws_ok('SELECT * FROM snowflake_status()', '42501', NULL,
                 'nor call snowflake_status()');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
DROP ROLE snowflake_monitor;
DROP ROLE snowflake_plain;
