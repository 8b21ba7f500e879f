-- A preloaded instance without snowflake.worker_id: generation refuses with a
-- clear error and a hint that shows the line to add; decoding still works.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS snowflake;

BEGIN;
SELECT plan(27);

\ir ../error_of.sql

SELECT is(current_setting('snowflake.worker_id'), '-1', 'current_setting: worker_id is -1 (unset)');
SELECT results_eq('SHOW snowflake.worker_id', $$VALUES ('-1'::text)$$, 'SHOW snowflake.worker_id is -1');
SELECT is(source, 'default', 'worker_id comes from the built-in default')
  FROM pg_settings WHERE name = 'snowflake.worker_id';

SELECT throws_ok('SELECT snowflake_nextval()', '55000', 'parameter "snowflake.worker_id" is not set',
                 'snowflake_nextval() refuses: worker_id is not set');
SELECT throws_ok('SELECT * FROM snowflake_nextvals(3)', '55000', 'parameter "snowflake.worker_id" is not set',
                 'snowflake_nextvals(3) refuses: worker_id is not set');
SELECT is(not_generating, 'no worker id: snowflake.worker_id is not set',
          'snowflake_status says why it does not generate') FROM snowflake_status;
CREATE TEMP TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), v int) ON COMMIT DROP;
SELECT throws_ok('INSERT INTO t (v) VALUES (1)', '55000', 'parameter "snowflake.worker_id" is not set',
                 'an INSERT relying on DEFAULT snowflake_nextval() refuses');

CREATE TEMP TABLE caught ON COMMIT DROP AS
    SELECT (pg_temp.error_of('SELECT snowflake_nextval()')).*;
SELECT is(state, '55000', 'the error is SQLSTATE 55000 (object not in prerequisite state)') FROM caught;
SELECT isnt(hint, NULL, 'the error has a hint') FROM caught;
SELECT ok(hint ~ '(^|\n)snowflake\.worker_id = [0-9]+(\n|$)',
          'the hint holds a line of its own "snowflake.worker_id = <n>"') FROM caught;
SELECT ok(hint LIKE '%postgresql.conf%', 'the hint says where the line goes') FROM caught;
SELECT ok(hint ~ '0\.\.1023', 'the hint gives the range 0..1023') FROM caught;
SELECT ok(hint LIKE '%pg_reload_conf()%', 'the hint says how to apply it (reload, no restart)') FROM caught;
SELECT is((pg_temp.error_of('SELECT snowflake_nextvals(3)')).hint, hint,
          'snowflake_nextvals() gives the same hint') FROM caught;

-- the line in the hint is a valid setting: it is accepted as it stands
SELECT is(substring(hint FROM '(?:^|\n)snowflake\.worker_id = ([0-9]+)')::int BETWEEN 0 AND 1023, true,
          'the hint''s example worker id is in range') FROM caught;

SELECT isnt((pg_temp.error_of('SELECT snowflake_nextvals(0)')).state, '00000',
            'snowflake_nextvals(0) fails as well');

-- decoding works without a worker id
SELECT results_eq(
    $$SELECT ts, worker_id, sequence FROM snowflake_decode((1234::bigint << 22) | (5 << 12) | 6)$$,
    $$VALUES ('2024-01-01 00:00:01.234+00'::timestamptz, 5, 6)$$,
    'snowflake_decode(bigint) works');
SELECT results_eq(
    $$SELECT ts, worker_id, sequence FROM snowflake_decode('5184858'::snowflake)$$,
    $$VALUES ('2024-01-01 00:00:00.001+00'::timestamptz, 241, 3418)$$,
    'snowflake_decode(snowflake) works');
SELECT is(snowflake_to_timestamp(0), '2024-01-01 00:00:00+00'::timestamptz,
          'snowflake_to_timestamp(0) is the epoch');
SELECT is(snowflake_to_timestamp('4194304'::snowflake), '2024-01-01 00:00:00.001+00'::timestamptz,
          'snowflake_to_timestamp(snowflake) works');
SELECT is(snowflake_from_timestamp('2024-01-01 00:00:01.234+00'), 1234::bigint << 22,
          'snowflake_from_timestamp works');
SELECT is('9223372036854775807'::snowflake::text, '9223372036854775807', 'the type works');

-- status: no worker id, not generating
SELECT is(worker_id, NULL, 'snowflake_status: worker_id is null') FROM snowflake_status;
SELECT is(generating, false, 'snowflake_status: not generating') FROM snowflake_status;
SELECT is(epoch, '2024-01-01 00:00:00+00'::timestamptz, 'snowflake_status: epoch') FROM snowflake_status;
SELECT is(last_id, NULL, 'snowflake_status: nothing issued') FROM snowflake_status;

-- still refused after all of the above (nothing cached a worker id)
SELECT throws_ok('SELECT snowflake_nextval()', '55000', 'parameter "snowflake.worker_id" is not set',
                 'snowflake_nextval() still refuses');

SELECT * FROM finish();
ROLLBACK;
