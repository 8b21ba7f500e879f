-- Time partitioning by id: partition bounds from times and back, partitions
-- made for an hour, day, week, month or year, retention candidates, and
-- partition pruning of id ranges made from times, with constants and with
-- parameters. Default epoch (2024-01-01 00:00:00 UTC); times in the past, so
-- that nothing depends on today's date.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowflake;
RESET client_min_messages;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
\getenv abs_srcdir PG_ABS_SRCDIR
\set error_of :abs_srcdir '/test/pgtap/error_of.sql'
\i :error_of
\set plan_nodes :abs_srcdir '/test/regress/plan_nodes.sql'
\i :plan_nodes

--
-- snowflake_partition_bounds: the UTC period holding a time, as ids
--
SELECT unit, b.from_ts, b.to_ts,
       b.from_id = snowflake_from_timestamp(b.from_ts) AND b.to_id = snowflake_from_timestamp(b.to_ts) AS ids_of_times,
       b.to_id - b.from_id = ((extract(epoch FROM b.to_ts - b.from_ts) * 1000)::bigint << 22) AS ids_in_period
  FROM unnest(ARRAY['hour', 'day', 'week', 'month', 'year']) AS unit,
       snowflake_partition_bounds('2024-02-29 13:45:10.5+00', unit) b;
-- the zone of the input does not matter: periods are UTC
SELECT * FROM snowflake_partition_bounds('2024-03-01 01:30:00+05', 'day');
-- the IMMUTABLE form takes the epoch
SELECT * FROM snowflake_partition_bounds('2024-01-01 00:00:00+00', 'hour', '2024-01-01 00:00:00+00');
SELECT (snowflake_partition_bounds('2025-06-15 12:00:00+00', 'month', '2025-01-01 00:00:00+00')).from_id
     = snowflake_from_timestamp('2025-06-01 00:00:00+00', '2025-01-01 00:00:00+00') AS other_epoch;
SELECT * FROM pg_temp.error_of($$SELECT snowflake_partition_bounds(now(), 'minute')$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_partition_bounds('2023-12-31 23:00:00+00', 'hour')$$);
SELECT p.oid::regprocedure, p.provolatile, p.proparallel
  FROM pg_proc p WHERE p.proname IN ('snowflake_partition_bounds', 'snowflake_partitions',
       'snowflake_partitions_older_than', 'snowflake_create_partition', 'snowflake_id_span')
 ORDER BY p.oid::regprocedure::text;

--
-- snowflake_create_partition and snowflake_partitions
--
CREATE TABLE metrics (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), v integer) PARTITION BY RANGE (id);
SELECT snowflake_create_partition('metrics', '2024-02-01 10:00:00+00', 'day'),
       snowflake_create_partition('metrics', '2024-02-02 00:00:00+00', 'day'),
       snowflake_create_partition('metrics', '2024-02-03 23:59:59.999+00');  -- day by default
SELECT snowflake_create_partition('metrics', '2024-02-04 05:00:00+00', 'hour'),
       snowflake_create_partition('metrics', '2024-03-15 00:00:00+00', 'month');
-- made again: found, not made twice
SELECT snowflake_create_partition('metrics', '2024-02-01 23:00:00+00', 'day') AS again;
SELECT * FROM snowflake_partitions('metrics');
-- a time not in any partition; an overlap; a name taken by something else
SELECT * FROM pg_temp.error_of($$INSERT INTO metrics VALUES (snowflake_from_timestamp('2024-02-05 00:00:00+00'), 0)$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_create_partition('metrics', '2024-02-01 10:00:00+00', 'hour')$$);
CREATE TABLE metrics_20240205 (id bigint);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_create_partition('metrics', '2024-02-05 10:00:00+00')$$);
-- not a table partitioned by a range of ids
CREATE TABLE plain (id bigint PRIMARY KEY);
CREATE TABLE by_list (id bigint) PARTITION BY LIST (id);
CREATE TABLE by_text (id text) PARTITION BY RANGE (id);
CREATE TABLE by_two (id bigint, n bigint) PARTITION BY RANGE (id, n);
SELECT t, e.* FROM unnest(ARRAY['plain', 'by_list', 'by_text', 'by_two']) AS t,
       pg_temp.error_of(format($$SELECT snowflake_create_partition(%L, now())$$, t)) e;
SELECT * FROM pg_temp.error_of($$SELECT snowflake_create_partition('metrics', now(), 'fortnight')$$);
SELECT count(*) AS partitions FROM pg_inherits WHERE inhparent = 'metrics'::regclass;
-- a snowflake key; MINVALUE and DEFAULT partitions have no times
CREATE TABLE events (id snowflake PRIMARY KEY, body text) PARTITION BY RANGE (id);
SELECT snowflake_create_partition('events', '2024-05-31 12:00:00+00', 'week');
CREATE TABLE events_before PARTITION OF events FOR VALUES FROM (MINVALUE) TO ('1000');
CREATE TABLE events_default PARTITION OF events DEFAULT;
SELECT * FROM snowflake_partitions('events');

--
-- rows sit in the partition of their id's time
--
-- a row every 7 minutes from 2024-02-01 to 2024-02-04 00:00, and from 05:00 to 06:00
INSERT INTO metrics (id, v)
SELECT snowflake_from_timestamp(t) + g % 4096, g
  FROM generate_series(0, 900) g, LATERAL (SELECT '2024-02-01 00:00:00+00'::timestamptz + g * interval '7 minutes' AS t) s
 WHERE t < '2024-02-04 00:00:00+00' OR t >= '2024-02-04 05:00:00+00' AND t < '2024-02-04 06:00:00+00';
SELECT p.partition, count(m.*) AS rows,
       bool_and(snowflake_to_timestamp(m.id) >= p.from_ts AND snowflake_to_timestamp(m.id) < p.to_ts) AS all_in_period
  FROM snowflake_partitions('metrics') p LEFT JOIN metrics m ON m.tableoid = p.partition
 GROUP BY p.partition, p.from_id ORDER BY p.from_id;
ANALYZE metrics;

--
-- retention candidates: partitions whose every id is older than the age
--
SELECT array_agg(p::text ORDER BY p::text) AS older_than_cutoff
  FROM snowflake_partitions_older_than('metrics', now() - '2024-02-03 00:00:00+00'::timestamptz) p;
SELECT array_agg(p::text) AS older_than_cutoff_plus_1ms
  FROM snowflake_partitions_older_than('metrics', now() - '2024-02-02 23:59:59.999+00'::timestamptz) p;
SELECT count(*) AS all_older_than_a_day FROM snowflake_partitions_older_than('metrics', interval '1 day');
SELECT count(*) AS none_older_than_a_century FROM snowflake_partitions_older_than('metrics', interval '100 years');
-- it drops nothing itself; dropping them is one statement each
SELECT format('DROP TABLE %s', p) FROM snowflake_partitions_older_than('metrics', now() - '2024-02-02 00:00:00+00'::timestamptz) p \gexec
SELECT array_agg(partition::text ORDER BY from_id) AS left FROM snowflake_partitions('metrics');

--
-- pruning: id >= from_timestamp(t1) AND id < from_timestamp(t2) reads only
-- the partitions of [t1, t2)
--
-- constants, STABLE forms (snowflake.epoch): pruned when the query starts
SELECT pg_temp.plan_nodes($$SELECT count(*) FROM metrics
    WHERE id >= snowflake_from_timestamp('2024-02-03 06:00:00+00')
      AND id < snowflake_from_timestamp('2024-02-03 18:00:00+00')$$) AS stable_constants;
-- constants, IMMUTABLE forms: pruned when the query is planned
SELECT pg_temp.plan_nodes($$SELECT count(*) FROM metrics
    WHERE id >= snowflake_from_timestamp('2024-02-02 12:00:00+00', '2024-01-01 00:00:00+00')
      AND id < snowflake_from_timestamp('2024-02-04 05:30:00+00', '2024-01-01 00:00:00+00')$$) AS immutable_constants;
-- parameters, generic plan: pruned when the query starts
SET plan_cache_mode = force_generic_plan;
PREPARE window_count(timestamptz, timestamptz) AS
    SELECT count(*) FROM metrics WHERE id >= snowflake_from_timestamp($1) AND id < snowflake_from_timestamp($2);
SELECT pg_temp.plan_nodes($$EXECUTE window_count('2024-02-04 05:00:00+00', '2024-02-04 06:00:00+00')$$) AS generic_one_hour;
SELECT pg_temp.plan_nodes($$EXECUTE window_count('2024-02-02 00:00:00+00', '2024-02-04 00:00:00+00')$$) AS generic_two_days;
EXECUTE window_count('2024-02-03 06:00:00+00', '2024-02-03 18:00:00+00');
SELECT count(*) AS expected FROM metrics
 WHERE snowflake_to_timestamp(id) >= '2024-02-03 06:00:00+00' AND snowflake_to_timestamp(id) < '2024-02-03 18:00:00+00';
PREPARE window_ids(bigint, bigint) AS SELECT count(*) FROM metrics WHERE id >= $1 AND id < $2;
SELECT pg_temp.plan_nodes(format($$EXECUTE window_ids(%s, %s)$$,
    snowflake_from_timestamp('2024-02-03 00:00:00+00'), snowflake_from_timestamp('2024-02-03 00:00:01+00'))) AS generic_ids;
DEALLOCATE ALL;
RESET plan_cache_mode;
DROP TABLE metrics, events, metrics_20240205, plain, by_list, by_text, by_two;

--
-- snowflake_id_span: how many ids a span of time holds (pg_partman's interval)
--
SELECT snowflake_id_span('1 hour') AS hour, snowflake_id_span('1 day') AS day,
       snowflake_id_span('1 day') = snowflake_from_timestamp('2024-01-02 00:00:00+00') AS day_is_id_of_day_two,
       snowflake_id_span('1 ms') = 1 << 22 AS one_ms;
SELECT s, e.* FROM unnest(ARRAY['1 month', '0', '-1 hour', '1.5 ms']::interval[]) AS s,
       pg_temp.error_of(format('SELECT snowflake_id_span(%L)', s)) e;
-- a retention is a length of time: 7, 30 and 90 days, whatever the epoch
SELECT snowflake_id_span('7 days') = 604800000::bigint << 22 AS week,
       snowflake_id_span('30 days') = 2592000000::bigint << 22 AS month_of_days,
       snowflake_id_span('90 days') = 7776000000::bigint << 22 AS quarter_of_days;
-- a partition interval (aligned => true) must start where UTC periods start:
-- the default epoch, 2024-01-01, is a whole number of hours and days from
-- 1970-01-01, not of weeks
SELECT snowflake_id_span('1 hour', aligned => true) = snowflake_id_span('1 hour') AS hour_aligned,
       snowflake_id_span('1 day', aligned => true) = snowflake_id_span('1 day') AS day_aligned;
SELECT e.* FROM pg_temp.error_of($$SELECT snowflake_id_span('7 days', aligned => true)$$) e;

--
-- the extension is relocatable: the helpers find its functions wherever it
-- is, with a search_path that does not hold it
--
CREATE SCHEMA elsewhere;
ALTER EXTENSION snowflake SET SCHEMA elsewhere;
SET search_path = public;
CREATE TABLE moved (id serial PRIMARY KEY);
INSERT INTO moved DEFAULT VALUES;
SELECT step, action, statement FROM elsewhere.snowflake_convert_column('moved', 'id');
INSERT INTO moved DEFAULT VALUES RETURNING id > 2147483647 AS generated_by_snowflake;
CREATE TABLE moved_parts (id bigint PRIMARY KEY) PARTITION BY RANGE (id);
SELECT elsewhere.snowflake_create_partition('moved_parts', '2024-07-01 12:00:00+00', 'month');
SELECT partition, from_ts, to_ts FROM elsewhere.snowflake_partitions('moved_parts');
SELECT count(*) AS older FROM elsewhere.snowflake_partitions_older_than('moved_parts', interval '1 day');
SELECT elsewhere.snowflake_id_span('1 day') = 86400000::bigint << 22 AS span;
DROP TABLE moved, moved_parts;
ALTER EXTENSION snowflake SET SCHEMA public;
DROP SCHEMA elsewhere;
RESET search_path;
