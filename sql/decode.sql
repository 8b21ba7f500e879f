-- Decoding and time ranges: snowflake_decode, snowflake_to_timestamp,
-- snowflake_from_timestamp, for bigint and snowflake ids, under the default
-- epoch 2024-01-01 00:00:00+00.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowflake;
RESET client_min_messages;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';

--
-- The epoch's first millisecond
--
SELECT * FROM snowflake_decode(0);
SELECT * FROM snowflake_decode(0::snowflake);
SELECT snowflake_to_timestamp(0) AS bigint_zero, snowflake_to_timestamp(0::snowflake) AS snowflake_zero;
SELECT snowflake_from_timestamp('2024-01-01 00:00:00+00') AS epoch_id,
       snowflake_from_timestamp('2024-01-01 00:00:00.000999+00') AS epoch_sub_ms,
       snowflake_from_timestamp('2024-01-01 00:00:00.001+00') AS next_ms,
       pg_typeof(snowflake_from_timestamp('2024-01-01 00:00:00+00'));
-- the last id of the first millisecond and the first of the second
SELECT * FROM snowflake_decode(4194303);
SELECT * FROM snowflake_decode(4194304);

--
-- The layout: (ms << 22) | (worker << 12) | sequence
--
SELECT * FROM snowflake_decode((123::bigint << 22) | (1 << 12) | 7);
SELECT * FROM snowflake_decode(((123::bigint << 22) | (1023 << 12) | 4095)::snowflake);
SELECT * FROM snowflake_decode(7167350074945572864);
SELECT * FROM snowflake_decode(7167350074945572864::snowflake);
SELECT snowflake_to_timestamp(7167350074945572864) AS ts,
       '2024-01-01 00:00:00+00'::timestamptz + (7167350074945572864 >> 22) * interval '1 ms' AS by_arithmetic;
-- decoding agrees with bit arithmetic over a spread of ids, for both argument types
SELECT count(*) AS ids,
       bool_and(d.ts = '2024-01-01 00:00:00+00'::timestamptz + (x >> 22) * interval '1 ms') AS ts_ok,
       bool_and(d.worker_id = ((x >> 12) & 1023)) AS worker_ok,
       bool_and(d.sequence = (x & 4095)) AS sequence_ok,
       bool_and(snowflake_to_timestamp(x) = d.ts) AS to_timestamp_ok,
       bool_and(snowflake_decode(x::snowflake) = snowflake_decode(x)) AS snowflake_arg_ok,
       bool_and(snowflake_to_timestamp(x::snowflake) = d.ts) AS snowflake_to_timestamp_ok
FROM (SELECT g::bigint * 1844674407370955 + g AS x
      FROM generate_series(0, 4999) g) ids,
     snowflake_decode(x) d;

--
-- The last millisecond: 2^41 - 1 ms after the epoch
--
SELECT '2024-01-01 00:00:00+00'::timestamptz + 2199023255551 * interval '1 ms' AS last_ms;
SELECT * FROM snowflake_decode(9223372036854775807);
SELECT * FROM snowflake_decode(9223372036854775807::snowflake);
SELECT snowflake_to_timestamp(9223372036854775807) AS bigint_max,
       snowflake_to_timestamp(9223372036854775807::snowflake) AS snowflake_max;
SELECT snowflake_from_timestamp('2093-09-06 15:47:35.551+00') AS last_ms_id,
       snowflake_from_timestamp('2093-09-06 15:47:35.551999+00') AS last_ms_sub_ms,
       (2199023255551::bigint << 22) AS by_arithmetic;
SELECT * FROM snowflake_decode(snowflake_from_timestamp('2093-09-06 15:47:35.551+00'));

--
-- Round trips
--
-- from_timestamp -> to_timestamp truncates to the millisecond
SELECT t, snowflake_from_timestamp(t) AS id, snowflake_to_timestamp(snowflake_from_timestamp(t)) AS back
FROM (VALUES ('2024-01-01 00:00:00+00'::timestamptz), ('2024-01-01 00:00:00.0005+00'),
             ('2024-02-29 12:34:56.789+00'), ('2024-02-29 12:34:56.789999+00'),
             ('2026-11-01 00:00:00+00'), ('2050-06-15 08:00:00.001+00'),
             ('2093-09-06 15:47:35.551+00')) v(t);
SELECT count(*) AS timestamps,
       bool_and(snowflake_to_timestamp(snowflake_from_timestamp(t)) = date_trunc('milliseconds', t)) AS truncates,
       bool_and((snowflake_decode(snowflake_from_timestamp(t))).worker_id = 0) AS worker_0,
       bool_and((snowflake_decode(snowflake_from_timestamp(t))).sequence = 0) AS sequence_0
FROM generate_series('2024-01-01 00:00:00+00'::timestamptz, '2093-09-01 00:00:00+00',
                     interval '3 days 7 hours 11 minutes 13.017019 seconds') t;
-- to_timestamp -> from_timestamp gives the smallest id of the id's millisecond
SELECT count(*) AS ids,
       bool_and(snowflake_from_timestamp(snowflake_to_timestamp(x)) = (x >> 22) << 22) AS floors,
       bool_and(snowflake_from_timestamp(snowflake_to_timestamp(x::snowflake)) = (x >> 22) << 22) AS floors_snowflake
FROM (SELECT g::bigint * 1844674407370955 + g AS x
      FROM generate_series(0, 4999) g) ids;
-- from_timestamp is monotonic: one step of 4194304 per millisecond
SELECT count(*) AS steps,
       bool_and(snowflake_from_timestamp(t + interval '1 ms') - snowflake_from_timestamp(t) = 4194304) AS one_ms_step,
       bool_and(snowflake_from_timestamp(t + interval '999 microseconds') = snowflake_from_timestamp(t)) AS same_ms
FROM generate_series('2024-03-01 00:00:00+00'::timestamptz, '2024-03-01 00:00:01+00', interval '1 ms') t;
-- the time zone of the argument and the session do not matter
SELECT snowflake_from_timestamp('2024-06-01 02:00:00+02') = snowflake_from_timestamp('2024-06-01 00:00:00+00') AS offset_ok;
SET TimeZone = 'America/New_York';
SELECT snowflake_from_timestamp('2024-06-01 00:00:00+00') AS id_new_york,
       snowflake_to_timestamp(55082955571200000) = '2024-06-01 00:00:00+00' AS to_timestamp_ok;
SET TimeZone = 'UTC';
SELECT snowflake_from_timestamp('2024-06-01 00:00:00+00') AS id_utc;
-- timestamp and date arguments are taken in the session time zone
SELECT snowflake_from_timestamp('2024-06-01 00:00:00'::timestamp) AS from_timestamp,
       snowflake_from_timestamp('2024-06-01'::date) AS from_date;

--
-- Errors: never a wrapped value
--
SELECT * FROM snowflake_decode(-1);
SELECT * FROM snowflake_decode(-9223372036854775808);
SELECT snowflake_to_timestamp(-1);
SELECT snowflake_to_timestamp(-9223372036854775808);
SELECT snowflake_from_timestamp('2023-12-31 23:59:59.999+00');
SELECT snowflake_from_timestamp('2023-12-31 23:59:59.999999+00');
SELECT snowflake_from_timestamp('1970-01-01 00:00:00+00');
SELECT snowflake_from_timestamp('1999-12-31 23:59:59.9995+00');
SELECT snowflake_from_timestamp('4713-01-01 00:00:00+00 BC');
SELECT snowflake_from_timestamp('2093-09-06 15:47:35.552+00');
SELECT snowflake_from_timestamp('2100-01-01 00:00:00+00');
SELECT snowflake_from_timestamp('294276-12-31 23:59:59.999999+00');
SELECT snowflake_from_timestamp('infinity');
SELECT snowflake_from_timestamp('-infinity');
-- NULL in, NULL out
SELECT snowflake_decode(NULL::bigint) IS NULL AS decode_bigint, snowflake_decode(NULL::snowflake) IS NULL AS decode_snowflake,
       snowflake_to_timestamp(NULL::bigint) IS NULL AS to_bigint, snowflake_to_timestamp(NULL::snowflake) IS NULL AS to_snowflake,
       snowflake_from_timestamp(NULL) IS NULL AS from_null;

--
-- Volatility of every function of the extension: IMMUTABLE only where the
-- result can never change for the same arguments. The one-argument decoding
-- forms read snowflake.epoch: STABLE. Generation: VOLATILE.
--
SELECT p.oid::regprocedure AS function, p.provolatile AS volatility, p.proleakproof AS leakproof,
       p.proisstrict AS strict, p.proparallel AS parallel
FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake')
  AND p.proname NOT IN ('_snowflake_eq', '_snowflake_ne', '_snowflake_lt', '_snowflake_le',
                        '_snowflake_gt', '_snowflake_ge', '_snowflake_cmp')
ORDER BY p.oid::regprocedure::text COLLATE "C";
-- the 49 comparison functions: all IMMUTABLE, LEAKPROOF, STRICT, PARALLEL SAFE
SELECT count(*) AS comparison_functions, bool_and(p.provolatile = 'i') AS immutable,
       bool_and(p.proleakproof) AS leakproof, bool_and(p.proisstrict) AS strict,
       bool_and(p.proparallel = 's') AS parallel_safe
FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake')
  AND p.proname IN ('_snowflake_eq', '_snowflake_ne', '_snowflake_lt', '_snowflake_le',
                    '_snowflake_gt', '_snowflake_ge', '_snowflake_cmp');
-- snowflake_decode returns a named composite type
SELECT * FROM snowflake_decode(0) LIMIT 0;
SELECT pg_get_function_result('snowflake_decode(bigint)'::regprocedure) AS decode_result,
       pg_get_function_result('snowflake_decode(bigint,timestamptz)'::regprocedure) AS decode_at_result;
CREATE VIEW dec_v AS
    SELECT x AS id, snowflake_decode(x) AS fields, (snowflake_decode(x)).*
    FROM (VALUES ((123::bigint << 22) | (5 << 12) | 6)) v(x);
SELECT * FROM dec_v;
SELECT (fields).worker_id FROM dec_v;
SELECT d.* FROM (VALUES (4194304::snowflake)) v(id), LATERAL snowflake_decode(id) d;
DROP VIEW dec_v;

--
-- The IMMUTABLE forms take the epoch; under the default epoch they agree with
-- the STABLE forms, under another they shift by it
--
SELECT count(*) AS ids,
       bool_and(snowflake_decode(x, '2024-01-01 00:00:00+00') = snowflake_decode(x)) AS decode_agrees,
       bool_and(snowflake_to_timestamp(x, '2024-01-01 00:00:00+00') = snowflake_to_timestamp(x)) AS to_agrees,
       bool_and(snowflake_from_timestamp(snowflake_to_timestamp(x), '2024-01-01 00:00:00+00')
                = snowflake_from_timestamp(snowflake_to_timestamp(x))) AS from_agrees
FROM (SELECT g::bigint * 1844674407370955 + g AS x FROM generate_series(0, 999) g) ids;
SELECT snowflake_to_timestamp(4194304, '2010-11-04 01:42:54.657+00') AS twitter_epoch_plus_1ms,
       * FROM snowflake_decode((5::bigint << 22) | (3 << 12) | 2, '2015-01-01 00:00:00+00');
SELECT snowflake_from_timestamp('2015-01-01 00:00:00.005+00', '2015-01-01 00:00:00+00') AS discord_style;
-- bad epochs and timestamps outside the epoch's range are refused
SELECT snowflake_to_timestamp(1, 'infinity');
SELECT snowflake_to_timestamp(1, '1969-12-31 23:59:59.999+00');
SELECT snowflake_to_timestamp(1, '2024-01-01 00:00:00.0005+00');
SELECT snowflake_decode(1, '10000-01-01 00:00:00+00');
SELECT snowflake_from_timestamp('2014-12-31 23:59:59.999+00', '2015-01-01 00:00:00+00');
SELECT snowflake_from_timestamp('2090-01-01 00:00:00+00', '2015-01-01 00:00:00+00');
SELECT snowflake_from_timestamp('-infinity', '2015-01-01 00:00:00+00');
SELECT snowflake_to_timestamp(-1, '2015-01-01 00:00:00+00');

-- The IMMUTABLE forms given the layout after the epoch: 'default' agrees with
-- the default layout's forms; others decode their own fields
SELECT count(*) AS ids,
       bool_and(snowflake_decode(x, '2024-01-01 00:00:00+00', 'default') = snowflake_decode(x)) AS decode_agrees,
       bool_and(snowflake_to_timestamp(x, '2024-01-01 00:00:00+00', 'time=41 worker=10 sequence=12')
                = snowflake_to_timestamp(x)) AS to_agrees,
       bool_and(snowflake_from_timestamp(snowflake_to_timestamp(x), '2024-01-01 00:00:00+00', 'default')
                = snowflake_from_timestamp(snowflake_to_timestamp(x))) AS from_agrees
FROM (SELECT g::bigint * 1844674407370955 + g AS x FROM generate_series(0, 999) g) ids;
SELECT * FROM snowflake_decode((5::bigint << 12) | (3 << 6) | 2, '2024-01-01 00:00:00+00', 'js53');
SELECT * FROM snowflake_decode((5::bigint << 22) | (3 << 14) | 2, '2024-01-01 00:00:00+00', 'time=41 worker=8 sequence=14');
SELECT snowflake_from_timestamp('2024-01-01 00:00:00.005+00', '2024-01-01 00:00:00+00', 'js53') AS js53_5ms,
       snowflake_from_timestamp('2024-01-01 00:00:00.025+00', '2024-01-01 00:00:00+00', 'sonyflake_style') AS sonyflake_style_20ms;
SELECT * FROM snowflake_partition_bounds('2026-11-25 10:00:00+00', 'day', '2024-01-01 00:00:00+00', 'js53');
-- 'sonyflake' is Sonyflake's layout, its epoch included: taken with that epoch only
SELECT (d.ts, d.worker_id, d.sequence) = (a.ts, a.worker_id, a.sequence) AS as_decode_as
FROM snowflake_decode(494152093532487681, '2014-09-01 00:00:00+00', 'sonyflake') d,
     snowflake_decode_as(494152093532487681, 'sonyflake') a;
SELECT snowflake_to_timestamp(494152093532487681, '2024-01-01 00:00:00+00', 'sonyflake');
SELECT snowflake_to_timestamp(1, '2024-01-01 00:00:00+00', 'twitter');
SELECT snowflake_to_timestamp(1, '2024-01-01 00:00:00+00', 'time=41 worker=10 sequence=13');
SELECT snowflake_to_timestamp(1, '2024-01-01 00:00:00+00', 'epoch=0 time=41 worker=10 sequence=12');
SELECT snowflake_to_timestamp(9007199254740992, '2024-01-01 00:00:00+00', 'js53');
SELECT snowflake_to_timestamp(1, '2024-01-01 00:00:00.0005+00', 'js53');

-- index expressions, generated columns, CHECK constraints and partition bounds
-- take the IMMUTABLE forms, and refuse the STABLE ones where PostgreSQL requires it
CREATE TABLE dec_t (id bigint);
-- (caught here: PostgreSQL 19 adds the statement's position to this error)
DO $$
BEGIN
  CREATE INDEX dec_t_stable ON dec_t (snowflake_to_timestamp(id));
EXCEPTION WHEN invalid_object_definition THEN
  RAISE NOTICE '% (%)', SQLERRM, SQLSTATE;
END $$;
CREATE INDEX dec_t_ts ON dec_t (snowflake_to_timestamp(id, '2024-01-01 00:00:00+00'));
INSERT INTO dec_t VALUES (4194304), (7167350074945572864);
SET enable_seqscan = off;
SELECT id FROM dec_t WHERE snowflake_to_timestamp(id, '2024-01-01 00:00:00+00') >= '2025-01-01' ORDER BY id;
RESET enable_seqscan;
DROP TABLE dec_t;
CREATE TABLE gen_t (id snowflake PRIMARY KEY,
                    made timestamptz GENERATED ALWAYS AS (snowflake_to_timestamp(id)) STORED);
CREATE TABLE gen_t (id snowflake PRIMARY KEY,
                    made timestamptz GENERATED ALWAYS AS (snowflake_to_timestamp(id, '2024-01-01 00:00:00+00')) STORED,
                    worker integer GENERATED ALWAYS AS ((snowflake_decode(id, '2024-01-01 00:00:00+00')).worker_id) STORED,
                    CHECK (id >= snowflake_from_timestamp('2024-06-01 00:00:00+00', '2024-01-01 00:00:00+00')));
INSERT INTO gen_t (id) VALUES (snowflake_from_timestamp('2024-06-01 12:00:00+00') + (9 << 12));
SELECT made, worker FROM gen_t;
INSERT INTO gen_t (id) VALUES (snowflake_from_timestamp('2024-05-31 23:59:59.999+00'));
DROP TABLE gen_t;
CREATE TABLE part_t (id snowflake PRIMARY KEY, n integer) PARTITION BY RANGE (id);
CREATE TABLE part_t_may PARTITION OF part_t FOR VALUES
    FROM (snowflake_from_timestamp('2024-05-01 00:00:00+00', '2024-01-01 00:00:00+00'))
    TO (snowflake_from_timestamp('2024-06-01 00:00:00+00', '2024-01-01 00:00:00+00'));
CREATE TABLE part_t_june PARTITION OF part_t FOR VALUES
    FROM (snowflake_from_timestamp('2024-06-01 00:00:00+00', '2024-01-01 00:00:00+00'))
    TO (snowflake_from_timestamp('2024-07-01 00:00:00+00', '2024-01-01 00:00:00+00'));
CREATE TABLE part_t_july PARTITION OF part_t FOR VALUES
    FROM (snowflake_from_timestamp('2024-07-01 00:00:00+00', '2024-01-01 00:00:00+00'))
    TO (snowflake_from_timestamp('2024-08-01 00:00:00+00', '2024-01-01 00:00:00+00'));
INSERT INTO part_t
SELECT snowflake_from_timestamp('2024-05-01 00:00:00+00'::timestamptz + g * interval '1 minute'), g
FROM generate_series(0, 131039) g;
ANALYZE part_t;
SELECT tableoid::regclass AS partition, count(*) FROM part_t GROUP BY 1 ORDER BY tableoid::regclass::text COLLATE "C";
-- time windows with the STABLE forms prune at run time and use the primary key
\getenv abs_srcdir PG_ABS_SRCDIR
\set plan_nodes :abs_srcdir '/test/regress/plan_nodes.sql'
\i :plan_nodes
SELECT pg_temp.plan_nodes($$SELECT count(*) FROM part_t
    WHERE id >= snowflake_from_timestamp('2024-06-10 00:00:00+00')
      AND id < snowflake_from_timestamp('2024-06-10 01:00:00+00')$$) AS stable_window;
SELECT count(*), min(n), max(n) FROM part_t
WHERE id >= snowflake_from_timestamp('2024-06-10 00:00:00+00')
  AND id < snowflake_from_timestamp('2024-06-10 01:00:00+00');
-- with the IMMUTABLE forms, at plan time
SELECT pg_temp.plan_nodes($$SELECT count(*) FROM part_t
    WHERE id >= snowflake_from_timestamp('2024-06-10 00:00:00+00', '2024-01-01 00:00:00+00')
      AND id < snowflake_from_timestamp('2024-06-10 01:00:00+00', '2024-01-01 00:00:00+00')$$) AS immutable_window;
-- a plain (not partitioned) table: the primary key serves the window
CREATE TABLE pk_t (id snowflake PRIMARY KEY, n integer);
INSERT INTO pk_t SELECT id, n FROM part_t;
ANALYZE pk_t;
SELECT pg_temp.plan_nodes($$SELECT * FROM pk_t
    WHERE id >= snowflake_from_timestamp('2024-06-10 00:00:00+00')
      AND id < snowflake_from_timestamp('2024-06-10 01:00:00+00')$$) AS pk_window;
DROP TABLE part_t, pk_t;

-- a quoted id (as JSON carries it) resolves to the one bigint overload
SELECT * FROM snowflake_decode('7167350074945572864');
SELECT snowflake_to_timestamp('7167350074945572864');
SELECT snowflake_to_timestamp('-1');

-- the fleet check: worker ids in a table's keys, rows and first/last time of
-- each; NULL keys and sentinels (negative values) are skipped, names are
-- quoted, the column may be snowflake
CREATE SCHEMA "Fleet";
CREATE TABLE "Fleet"."Agg" ("Key" snowflake, n integer);
INSERT INTO "Fleet"."Agg"
SELECT snowflake_from_timestamp('2024-06-10 00:00:00+00'::timestamptz + g * interval '1 min') | (w << 12) | g, g
FROM (VALUES (2), (1023), (0)) AS w (w), generate_series(1, w % 5 + 1) g;
INSERT INTO "Fleet"."Agg" VALUES (NULL, 0), (-1, 0), ('-9223372036854775808', 0);
SELECT * FROM snowflake_workers('"Fleet"."Agg"', 'Key');
-- the default column is id
CREATE TABLE "Fleet".t (id bigint DEFAULT snowflake_nextval());
INSERT INTO "Fleet".t DEFAULT VALUES;
SELECT worker_id, rows, first_ts = last_ts AS one_ms FROM snowflake_workers('"Fleet".t');
DROP SCHEMA "Fleet" CASCADE;
