-- An instance without shared_preload_libraries = 'snowflake' (but with
-- snowflake.worker_id = 7 in postgresql.conf): generation refuses and says
-- how to fix it; the type, its casts and operators, and decoding all work.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS snowflake;
CREATE EXTENSION IF NOT EXISTS dblink;

BEGIN;
SELECT plan(38);

\ir ../error_of.sql

SELECT is(current_setting('shared_preload_libraries'), '', 'snowflake is not preloaded here');

-- generation refuses, naming shared_preload_libraries in message and hint
CREATE TEMP TABLE caught ON COMMIT DROP AS
    SELECT 'snowflake_nextval()' AS call, (pg_temp.error_of('SELECT snowflake_nextval()')).*
    UNION ALL
    SELECT 'snowflake_nextvals(3)', (pg_temp.error_of('SELECT * FROM snowflake_nextvals(3)')).*;
SELECT is(state, '55000', call || ' fails with SQLSTATE 55000') FROM caught ORDER BY call;
SELECT matches(message, 'shared_preload_libraries', call || ': the message names shared_preload_libraries')
  FROM caught ORDER BY call;
SELECT matches(hint, 'shared_preload_libraries *= *''snowflake''',
               call || ': the hint shows the setting to add') FROM caught ORDER BY call;
SELECT matches(hint, 'restart', call || ': the hint says a restart is needed') FROM caught ORDER BY call;
SELECT throws_ok('SELECT snowflake_nextval()', '55000', NULL, 'snowflake_nextval() throws 55000');
SELECT throws_ok('SELECT snowflake_nextvals(3)', '55000', NULL, 'snowflake_nextvals(3) throws 55000');

-- the type, casts and operators
CREATE TEMP TABLE t (id snowflake PRIMARY KEY, b bigint) ON COMMIT DROP;
SELECT lives_ok($$INSERT INTO t VALUES ('1', 1), (2::bigint, 2), (3, 3), (9223372036854775807, 4)$$,
                'snowflake column accepts text, bigint and integer values');
SELECT is(count(*)::int, 2, 'snowflake compares with integer literals') FROM t WHERE id < 3;
SELECT is(count(*)::int, 3, 'snowflake = bigint column') FROM t WHERE id = b;
SELECT is(count(*)::int, 1, 'bigint = snowflake') FROM t WHERE 2::bigint = id;
SELECT is((SELECT id FROM t ORDER BY id DESC LIMIT 1)::text, '9223372036854775807',
          'ORDER BY snowflake DESC finds the largest');
SELECT is(array_agg(id::bigint ORDER BY id), ARRAY[1, 2, 3, 9223372036854775807]::bigint[],
          'ORDER BY snowflake sorts numerically') FROM t;
SELECT is('-1'::snowflake::bigint, -1::bigint, 'a negative value (a sentinel) is read on input');
SELECT throws_ok($$SELECT '9223372036854775808'::snowflake$$, '22003',
                 'value "9223372036854775808" is out of range for type snowflake',
                 'a value beyond 2^63-1 is refused on input');
SELECT is((-5)::bigint::snowflake::text, '-5', 'a negative bigint converts unchanged');
SELECT is(to_json('123'::snowflake)::text, '"123"', 'to_json(snowflake) is a JSON string');

-- decoding honours the default epoch
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
SELECT is(snowflake_from_timestamp('2024-01-01 00:00:01.234+00'), 1234::bigint << 22,
          'snowflake_from_timestamp works');
SELECT is(snowflake_to_timestamp(snowflake_from_timestamp('2026-03-04 05:06:07.089+00')),
          '2026-03-04 05:06:07.089+00'::timestamptz, 'from_timestamp and to_timestamp round trip');
SELECT throws_ok('SELECT snowflake_to_timestamp(-1)', '22003', 'snowflake id must not be negative: -1',
                 'decoding a negative id is refused');
SELECT throws_ok($$SELECT snowflake_from_timestamp('2023-12-31 23:59:59.999+00')$$, '22008', NULL,
                 'a timestamp before the epoch is refused');

-- settings are defined once the library is loaded (it is, by now)
SELECT is(current_setting('snowflake.worker_id'), '7', 'worker_id from postgresql.conf is 7');
SELECT is(current_setting('snowflake.max_lead'), '1s', 'max_lead defaults to 1s');
SELECT is(current_setting('snowflake.epoch'), '2024-01-01 00:00:00+00', 'epoch defaults to 2024-01-01');

-- status: settings, but no generator
SELECT is(worker_id, 7, 'snowflake_status: worker_id 7') FROM snowflake_status;
SELECT is(epoch, '2024-01-01 00:00:00+00'::timestamptz, 'snowflake_status: epoch') FROM snowflake_status;
SELECT ok(last_id IS NULL AND lead_ms IS NULL AND lease_until IS NULL AND clock_regressions IS NULL
          AND borrowed_ms IS NULL AND waits IS NULL AND lease_extensions IS NULL,
          'snowflake_status: the generator''s fields are null') FROM snowflake_status;
SELECT is(generating IS NOT TRUE, true, 'snowflake_status: not generating') FROM snowflake_status;

-- Row estimates on a snowflake column are bigint's without preload too: in a
-- new session whose first statement is the EXPLAIN, the comparison's planner
-- support loads the library (and its statistics hook) before any estimate.
-- 200000 ids, one a second; a 1-minute window (bigint's estimate: about 60).
CREATE FUNCTION pg_temp.this_server() RETURNS text LANGUAGE sql AS $$
    SELECT format('host=%s port=%s dbname=%s',
                  split_part(current_setting('unix_socket_directories'), ',', 1),
                  current_setting('port'), current_database())
$$;
SELECT is(dblink_exec(pg_temp.this_server(), $$
    DROP TABLE IF EXISTS estimate_np;
    CREATE TABLE estimate_np (id snowflake PRIMARY KEY);
    INSERT INTO estimate_np SELECT (g::bigint * 1000) << 22 FROM generate_series(0, 199999) g;
    ANALYZE estimate_np$$), 'ANALYZE', 'a table of 200000 ids, analysed, in another session');
SELECT ok(rows BETWEEN 30 AND 120, format('a 1-minute window is estimated at %s rows in a new session', rows))
  FROM dblink(pg_temp.this_server(),
              format('EXPLAIN (FORMAT JSON) SELECT * FROM estimate_np WHERE id >= %s::bigint AND id < %s::bigint',
                     (36000::bigint * 1000) << 22, (36060::bigint * 1000) << 22)) AS t(plan json),
       LATERAL (SELECT (plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8 AS rows) r;
SELECT is(dblink_exec(pg_temp.this_server(), 'DROP TABLE estimate_np'), 'DROP TABLE', 'and dropped');

SELECT * FROM finish();
ROLLBACK;
