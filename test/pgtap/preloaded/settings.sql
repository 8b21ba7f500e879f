-- snowflake.* settings on the preloaded instance (snowflake.worker_id = 7 in
-- postgresql.conf, the other two at their defaults): visible values, their
-- definitions, refusal of session changes, and refusal of bad values.
--
-- ALTER SYSTEM cannot run in a transaction block, and pgTAP's throws_ok runs
-- its statement inside one (a PL/pgSQL EXECUTE): it would only ever catch
-- 25001. So ALTER SYSTEM goes through dblink_exec on a second connection to
-- this server, where it runs as a top-level statement; dblink re-raises the
-- remote error with its SQLSTATE and primary message.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS snowflake;
CREATE EXTENSION IF NOT EXISTS dblink;

BEGIN;
SELECT plan(48);

-- a connection string to this very server and database
CREATE FUNCTION pg_temp.alter_system(setting text) RETURNS text LANGUAGE sql AS $$
    SELECT dblink_exec(format('host=%s port=%s dbname=%s',
                              split_part(current_setting('unix_socket_directories'), ',', 1),
                              current_setting('port'), current_database()),
                       'ALTER SYSTEM ' || setting)
$$;

-- the range of a setting in ms as an error message gives it (with units from 17 on)
CREATE FUNCTION pg_temp.range_ms(low int, high int) RETURNS text LANGUAGE sql AS $$
    SELECT CASE WHEN current_setting('server_version_num')::int >= 170000
                THEN format('(%s ms .. %s ms)', low, high)
                ELSE format('(%s .. %s)', low, high) END
$$;

-- visible values
SELECT is(current_setting('snowflake.worker_id'), '7', 'worker_id from postgresql.conf is 7');
SELECT is(current_setting('snowflake.max_lead'), '1s', 'max_lead defaults to 1s');
SELECT is(current_setting('snowflake.epoch'), '2024-01-01 00:00:00+00',
          'epoch defaults to 2024-01-01 00:00:00+00');
SELECT results_eq('SHOW snowflake.worker_id', $$VALUES ('7'::text)$$, 'SHOW snowflake.worker_id');
SELECT results_eq('SHOW snowflake.max_lead', $$VALUES ('1s'::text)$$, 'SHOW snowflake.max_lead');
SELECT results_eq('SHOW snowflake.epoch', $$VALUES ('2024-01-01 00:00:00+00'::text)$$,
                  'SHOW snowflake.epoch');

-- definitions: type, context (when it may change), unit, range, built-in default
SELECT results_eq(
    $$SELECT name::text, vartype, context, coalesce(unit, ''), coalesce(min_val, ''),
             coalesce(max_val, ''), boot_val, setting, source
        FROM pg_settings WHERE name LIKE 'snowflake.%' ORDER BY name$$,
    $$VALUES
      ('snowflake.epoch', 'string', 'postmaster', '', '', '', '2024-01-01 00:00:00+00',
       '2024-01-01 00:00:00+00', 'default'),
      ('snowflake.host_name', 'string', 'postmaster', '', '', '', '', '', 'default'),
      ('snowflake.layout', 'string', 'postmaster', '', '', '', 'time=41 worker=10 sequence=12',
       'time=41 worker=10 sequence=12', 'default'),
      ('snowflake.lease_span', 'integer', 'sighup', 'ms', '100', '600000', '2000', '2000', 'default'),
      ('snowflake.max_lead', 'integer', 'sighup', 'ms', '0', '3600000', '1000', '1000', 'default'),
      ('snowflake.public_key_file', 'string', 'sighup', '', '', '', '', '', 'default'),
      ('snowflake.registry', 'string', 'postmaster', '', '', '', '', '', 'default'),
      ('snowflake.registry_max_skew', 'integer', 'sighup', 'ms', '1', '3600000', '1000', '1000', 'default'),
      ('snowflake.registry_renew', 'integer', 'sighup', 'ms', '100', '3600000', '30000', '30000', 'default'),
      ('snowflake.registry_window', 'integer', 'sighup', 'ms', '1000', '86400000', '90000', '90000', 'default'),
      ('snowflake.replay_1_0_wal', 'bool', 'postmaster', '', '', '', 'on', 'on', 'default'),
      -- the range of every layout; the layout's own is checked (0..1023 here)
      ('snowflake.worker_id', 'integer', 'sighup', '', '-1', '65535', '-1', '7',
       'configuration file')$$,
    'pg_settings: epoch, host_name, layout and registry are postmaster text, public_key_file reload-time text, lease_span, max_lead, the registry''s times and worker_id reload-time integers, replay_1_0_wal a postmaster boolean');
SELECT isnt((SELECT short_desc FROM pg_settings WHERE name = s), NULL, s || ' is described')
  FROM unnest(ARRAY['snowflake.epoch', 'snowflake.host_name', 'snowflake.layout', 'snowflake.lease_span', 'snowflake.max_lead',
                    'snowflake.public_key_file', 'snowflake.registry', 'snowflake.registry_max_skew',
                    'snowflake.registry_renew', 'snowflake.registry_window', 'snowflake.replay_1_0_wal',
                    'snowflake.worker_id']) AS s;

-- a session cannot change them
SELECT throws_ok('SET snowflake.worker_id = 3', '55P02',
                 'parameter "snowflake.worker_id" cannot be changed now',
                 'SET snowflake.worker_id is refused');
SELECT throws_ok('SET snowflake.max_lead = 5', '55P02',
                 'parameter "snowflake.max_lead" cannot be changed now',
                 'SET snowflake.max_lead is refused');
SELECT throws_ok($$SET snowflake.epoch = '2023-01-01 00:00:00+00'$$, '55P02',
                 'parameter "snowflake.epoch" cannot be changed without restarting the server',
                 'SET snowflake.epoch is refused');
SELECT throws_ok($$SELECT set_config('snowflake.worker_id', '3', false)$$, '55P02',
                 'parameter "snowflake.worker_id" cannot be changed now',
                 'set_config(snowflake.worker_id) is refused');
SELECT throws_ok($$SELECT set_config('snowflake.max_lead', '5', true)$$, '55P02',
                 'parameter "snowflake.max_lead" cannot be changed now',
                 'set_config(snowflake.max_lead, local) is refused');
SELECT throws_ok('ALTER ROLE CURRENT_USER SET snowflake.worker_id = 3', '55P02',
                 'parameter "snowflake.worker_id" cannot be changed now',
                 'ALTER ROLE ... SET snowflake.worker_id is refused');
SELECT throws_ok('ALTER DATABASE postgres SET snowflake.epoch = ''2023-01-01''', '55P02',
                 'parameter "snowflake.epoch" cannot be changed without restarting the server',
                 'ALTER DATABASE ... SET snowflake.epoch is refused');
SELECT throws_ok('SET snowflake.worker_idd = 3', '42602',
                 'invalid configuration parameter name "snowflake.worker_idd"',
                 'a misspelt snowflake.* setting is refused (reserved prefix)');
SELECT is(current_setting('snowflake.worker_id'), '7', 'worker_id is still 7');

-- bad values are refused by ALTER SYSTEM, naming the setting (and its range)
-- (1024: past the 10 worker bits of the default layout)
SELECT throws_ok($$SELECT pg_temp.alter_system('SET snowflake.worker_id = 1024')$$, '22023',
                 '1024 is outside the valid range for parameter "snowflake.worker_id" (-1 .. 1023)',
                 'ALTER SYSTEM SET snowflake.worker_id = 1024 is refused');
SELECT throws_ok($$SELECT pg_temp.alter_system('SET snowflake.worker_id = -2')$$, '22023',
                 '-2 is outside the valid range for parameter "snowflake.worker_id" (-1 .. 65535)',
                 'ALTER SYSTEM SET snowflake.worker_id = -2 is refused');
SELECT throws_ok($$SELECT pg_temp.alter_system('SET snowflake.worker_id = ''x''')$$, '22023',
                 'invalid value for parameter "snowflake.worker_id": "x"',
                 'ALTER SYSTEM SET snowflake.worker_id = ''x'' is refused');
SELECT throws_ok($$SELECT pg_temp.alter_system('SET snowflake.max_lead = -1')$$, '22023',
                 '-1 ms is outside the valid range for parameter "snowflake.max_lead" ' || pg_temp.range_ms(0, 3600000),
                 'ALTER SYSTEM SET snowflake.max_lead = -1 is refused');
SELECT throws_ok($$SELECT pg_temp.alter_system('SET snowflake.max_lead = 3600001')$$, '22023',
                 '3600001 ms is outside the valid range for parameter "snowflake.max_lead" ' || pg_temp.range_ms(0, 3600000),
                 'ALTER SYSTEM SET snowflake.max_lead = 3600001 is refused');
SELECT throws_ok($$SELECT pg_temp.alter_system('SET snowflake.max_lead = ''2h''')$$, '22023',
                 '7200000 ms is outside the valid range for parameter "snowflake.max_lead" ' || pg_temp.range_ms(0, 3600000),
                 'ALTER SYSTEM SET snowflake.max_lead = ''2h'' is refused');
SELECT throws_ok($$SELECT pg_temp.alter_system('SET snowflake.epoch = ''nonsense''')$$, '22023',
                 'invalid value for parameter "snowflake.epoch": "nonsense"',
                 'ALTER SYSTEM SET snowflake.epoch = ''nonsense'' is refused');
SELECT throws_ok($$SELECT pg_temp.alter_system('SET snowflake.epoch = ''1969-12-31''')$$, '22023',
                 'invalid value for parameter "snowflake.epoch": "1969-12-31"',
                 'ALTER SYSTEM SET snowflake.epoch = ''1969-12-31'' is refused');
SELECT throws_ok($$SELECT pg_temp.alter_system('SET snowflake.epoch = ''1970-01-01 00:00:00+01''')$$,
                 '22023', 'invalid value for parameter "snowflake.epoch": "1970-01-01 00:00:00+01"',
                 'ALTER SYSTEM SET snowflake.epoch before 1970-01-01 UTC is refused');
SELECT throws_ok($$SELECT pg_temp.alter_system('SET snowflake.epoch = ''2023-02-29''')$$, '22023',
                 'invalid value for parameter "snowflake.epoch": "2023-02-29"',
                 'ALTER SYSTEM SET snowflake.epoch = ''2023-02-29'' (no such day) is refused');
SELECT throws_ok($$SELECT pg_temp.alter_system('SET snowflake.epoch = ''''')$$, '22023',
                 'invalid value for parameter "snowflake.epoch": ""',
                 'ALTER SYSTEM SET snowflake.epoch = '''' is refused');

-- the detail of a refused epoch says what an epoch looks like
CREATE FUNCTION pg_temp.error_detail(statement text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE detail text;
BEGIN
    EXECUTE statement;
    RETURN NULL;
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
    RETURN detail;
END $$;
SELECT matches(pg_temp.error_detail($$SELECT pg_temp.alter_system('SET snowflake.epoch = ''nonsense''')$$),
               '1970-01-01.*2024-01-01 00:00:00\+00',
               'a refused epoch''s detail gives the range and an example');

-- in-range values are accepted (and taken back; nothing is reloaded)
SELECT lives_ok($$SELECT pg_temp.alter_system('SET snowflake.worker_id = 0')$$,
                'ALTER SYSTEM SET snowflake.worker_id = 0 is accepted');
SELECT lives_ok($$SELECT pg_temp.alter_system('SET snowflake.worker_id = 1023')$$,
                'ALTER SYSTEM SET snowflake.worker_id = 1023 is accepted');
SELECT lives_ok($$SELECT pg_temp.alter_system('SET snowflake.max_lead = 0')$$,
                'ALTER SYSTEM SET snowflake.max_lead = 0 is accepted');
SELECT lives_ok($$SELECT pg_temp.alter_system('SET snowflake.max_lead = ''1h''')$$,
                'ALTER SYSTEM SET snowflake.max_lead = ''1h'' (3600000 ms) is accepted');
SELECT lives_ok($$SELECT pg_temp.alter_system('SET snowflake.epoch = ''1970-01-01 00:00:00+00''')$$,
                'ALTER SYSTEM SET snowflake.epoch = ''1970-01-01 00:00:00+00'' is accepted');
SELECT lives_ok($$SELECT pg_temp.alter_system('SET snowflake.epoch = ''2023-06-01T12:30:00.250Z''')$$,
                'ALTER SYSTEM SET snowflake.epoch = ''2023-06-01T12:30:00.250Z'' is accepted');
SELECT lives_ok($$SELECT pg_temp.alter_system('RESET snowflake.worker_id'),
                         pg_temp.alter_system('RESET snowflake.max_lead'),
                         pg_temp.alter_system('RESET snowflake.epoch')$$,
                'ALTER SYSTEM RESET of the three settings');
SELECT is(pg_read_file('postgresql.auto.conf') ~ 'snowflake', false,
          'postgresql.auto.conf holds no snowflake setting afterwards');

SELECT * FROM finish();
ROLLBACK;
