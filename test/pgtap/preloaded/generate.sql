-- Generation on the preloaded instance (snowflake.worker_id = 7): a round trip
-- through decoding, batches, argument checks and the status view.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS snowflake;

BEGIN;
SELECT plan(30);

CREATE TEMP TABLE made (n int, id bigint, before timestamptz, after timestamptz) ON COMMIT DROP;
INSERT INTO made SELECT 1, snowflake_nextval(), clock_timestamp(), NULL;
UPDATE made SET after = clock_timestamp();
INSERT INTO made SELECT 2, snowflake_nextval(), NULL, NULL;

SELECT cmp_ok((SELECT id FROM made WHERE n = 1), '>', 0::bigint, 'snowflake_nextval() is positive');
SELECT cmp_ok((SELECT id FROM made WHERE n = 2), '>', (SELECT id FROM made WHERE n = 1),
              'a second call gives a larger id');
SELECT is((snowflake_decode(id)).worker_id, 7, 'the id decodes to worker 7')
  FROM made WHERE n = 1;
SELECT is(((id >> 12) & 1023)::int, 7, 'the worker bits 21..12 hold 7') FROM made WHERE n = 1;
SELECT is(snowflake_to_timestamp(id), (snowflake_decode(id)).ts,
          'snowflake_to_timestamp agrees with snowflake_decode') FROM made WHERE n = 1;
SELECT ok(snowflake_to_timestamp(id) BETWEEN date_trunc('milliseconds', before) - interval '1 s'
                                         AND after + interval '1 s',
          'the id decodes to the time it was made (within the 1s max_lead)')
  FROM made WHERE n = 1;
SELECT is(snowflake_from_timestamp(snowflake_to_timestamp(id)), id & ~((1::bigint << 22) - 1),
          'snowflake_from_timestamp(to_timestamp(id)) is the first id of its millisecond')
  FROM made WHERE n = 1;
SELECT is((snowflake_decode(id::snowflake)).worker_id, 7, 'decoding a snowflake gives worker 7 too')
  FROM made WHERE n = 1;

-- batches
CREATE TEMP TABLE batch ON COMMIT DROP AS
    SELECT row_number() OVER () AS n, id FROM snowflake_nextvals(3) AS id;
SELECT is(count(*)::int, 3, 'snowflake_nextvals(3) returns 3 ids') FROM batch;
SELECT is(count(*)::int, 0, 'the batch is strictly increasing, in order')
  FROM batch a JOIN batch b ON b.n = a.n + 1 WHERE b.id <= a.id;
SELECT cmp_ok((SELECT min(id) FROM batch), '>', (SELECT max(id) FROM made),
              'the batch comes after earlier ids');
SELECT is(array_agg(DISTINCT (snowflake_decode(id)).worker_id), ARRAY[7], 'the batch is from worker 7')
  FROM batch;
SELECT is(count(*)::int, 5000, 'snowflake_nextvals(5000) returns 5000 ids (more than a millisecond''s 4096)')
  FROM snowflake_nextvals(5000);
SELECT is(count(DISTINCT id)::int, 5000, 'and they are distinct') FROM snowflake_nextvals(5000) AS id;
SELECT is_empty('SELECT * FROM snowflake_nextvals(NULL)', 'snowflake_nextvals(NULL) is empty (strict)');
SELECT throws_ok('SELECT snowflake_nextvals(0)', '22023',
                 'snowflake_nextvals() needs a count of at least 1, not 0', 'snowflake_nextvals(0) is refused');
SELECT throws_ok('SELECT * FROM snowflake_nextvals(-3)', '22023',
                 'snowflake_nextvals() needs a count of at least 1, not -3', 'snowflake_nextvals(-3) is refused');

-- as a column default: bigint and snowflake columns
CREATE TEMP TABLE t_bigint (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), v int) ON COMMIT DROP;
CREATE TEMP TABLE t_snowflake (id snowflake PRIMARY KEY DEFAULT snowflake_nextval(), v int) ON COMMIT DROP;
SELECT lives_ok('INSERT INTO t_bigint (v) SELECT g FROM generate_series(1, 100) g',
                'DEFAULT snowflake_nextval() fills a bigint key');
SELECT lives_ok('INSERT INTO t_snowflake (v) SELECT g FROM generate_series(1, 100) g',
                'DEFAULT snowflake_nextval() fills a snowflake key');
SELECT ok(bool_and(prev IS NULL OR id > prev), 'the bigint keys increase in insert order')
  FROM (SELECT id, lag(id) OVER (ORDER BY v) AS prev FROM t_bigint) s;
SELECT ok(bool_and(prev IS NULL OR id > prev), 'the snowflake keys increase in insert order')
  FROM (SELECT id, lag(id) OVER (ORDER BY v) AS prev FROM t_snowflake) s;
SELECT cmp_ok((SELECT min(id::bigint) FROM t_snowflake), '>', (SELECT max(id) FROM t_bigint),
              'ids keep increasing across tables');

-- the status view
SELECT is(worker_id, 7, 'snowflake_status: worker_id 7') FROM snowflake_status;
SELECT is(epoch, '2024-01-01 00:00:00+00'::timestamptz, 'snowflake_status: the default epoch') FROM snowflake_status;
SELECT is(generating, true, 'snowflake_status: generating') FROM snowflake_status;
SELECT cmp_ok(last_id, '>=', (SELECT max(id::bigint) FROM t_snowflake), 'snowflake_status: last_id is the last id issued')
  FROM snowflake_status;
SELECT cmp_ok(lease_until, '>=', snowflake_to_timestamp(last_id), 'snowflake_status: the lease covers the last id')
  FROM snowflake_status;
SELECT cmp_ok(lead_ms, '<=', 1000::bigint, 'snowflake_status: lead within max_lead') FROM snowflake_status;
SELECT ok(clock_regressions >= 0 AND borrowed_ms >= 0 AND waits >= 0 AND lease_extensions >= 1,
          'snowflake_status: counters are present (at least one lease extension)') FROM snowflake_status;
SELECT results_eq('SELECT worker_id, epoch, generating FROM snowflake_status',
                  'SELECT worker_id, epoch, generating FROM snowflake_status()',
                  'the view shows the function');

SELECT * FROM finish();
ROLLBACK;
