-- Other systems' ids: snowflake_decode_as(id, layout) and
-- snowflake_from_timestamp_as(ts, layout), for the presets twitter, discord,
-- instagram, sonyflake, pgedge, mastodon and custom layouts. Each preset is
-- checked against an id published with its time; the source is next to it.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowflake;
RESET client_min_messages;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';

\getenv abs_srcdir PG_ABS_SRCDIR
\set error_of :abs_srcdir '/test/regress/error_of.sql'
\i :error_of

--
-- Twitter: 41-bit ms since 1288834974657 (twepoch in
-- https://github.com/twitter-archive/snowflake/blob/snowflake-2010/src/main/scala/com/twitter/service/snowflake/IdWorker.scala),
-- 5-bit datacenter and 5-bit worker (worker_id = datacenter << 5 | worker), 12-bit sequence.
-- Twitter's own docs (https://developer.x.com/en/docs/x-ids) publish no decodable id;
-- the id of a tweet by @Wikipedia, June 2022, with its binary split, is from
-- https://en.wikipedia.org/wiki/Snowflake_ID: machine 0101111010 (378), sequence 0.
SELECT *, worker_id >> 5 AS datacenter, worker_id & 31 AS worker
  FROM snowflake_decode_as(1541815603606036480, 'twitter');

--
-- Discord: https://discord.com/developers/docs/reference#snowflakes —
-- 175928847299117063 is 2016-04-30 11:18:25.796 UTC, internal worker 1,
-- internal process 0, increment 7 (worker_id = worker << 5 | process).
SELECT *, worker_id >> 5 AS internal_worker, worker_id & 31 AS internal_process
  FROM snowflake_decode_as(175928847299117063, 'discord');

--
-- Instagram: 41-bit ms, 13-bit shard, 10-bit sequence
-- (https://instagram-engineering.com/sharding-ids-at-instagram-1cf5a71e5a5c);
-- the epoch is the post's PL/pgSQL our_epoch 1314220021721 (its prose example
-- speaks of 2011-01-01, which no real id fits). Instagram publishes no decoded
-- id; these two media ids with their posts' times (to the second) are from
-- https://stackoverflow.com/questions/63683015 (2020-08-26T13:43:27Z and
-- 2020-08-25T13:52:46Z).
SELECT id, d.*, date_trunc('second', d.ts) AS to_the_second
  FROM (VALUES (2384288897814875714), (2383568809444681765)) AS v(id),
       snowflake_decode_as(id, 'instagram') AS d;

--
-- Sonyflake: 39 bits of 10 ms units since 2014-09-01 00:00:00 UTC, then an
-- 8-bit sequence, then a 16-bit machine id in the low bits
-- (https://github.com/sony/sonyflake README). Sony publishes no id with its
-- time: this vector is DERIVED from the documented algorithm — the
-- 29453760000th 10 ms unit (2024-01-01 00:00:00 UTC), sequence 5, machine 1:
-- (29453760000 << 24) | (5 << 16) | 1.
SELECT (29453760000::bigint << 24) | (5 << 16) | 1 AS derived_id;
SELECT * FROM snowflake_decode_as(494152093532487681, 'sonyflake');

--
-- pgEdge snowflake: 41-bit ms since 2023-01-01, a 12-bit counter in bits
-- 10-21, the 10-bit node in bits 0-9 (https://github.com/pgEdge/snowflake
-- README). https://github.com/pgEdge/snowflake/blob/main/docs/snowflake_functions.md:
-- 136169504773242881 has get_epoch 1704996539.845 (2024-01-11 13:08:59.845-05),
-- node 1, and format() count 0.
SELECT * FROM snowflake_decode_as(136169504773242881, 'pgedge');

--
-- Mastodon: 48-bit ms since 1970, 16 low bits of hashed sequence
-- (https://github.com/mastodon/mastodon/blob/main/lib/mastodon/snowflake.rb;
-- worker_id is 0). https://docs.joinmastodon.org/entities/Status/ shows
-- status 103270115826048975 created_at 2019-12-08T03:48:33.901Z: the id was
-- made by Snowflake.id_at(created_at), whole seconds plus rand(1000) ms, so
-- the id's millisecond is .849 within that second.
SELECT d.*, date_trunc('second', d.ts) = '2019-12-08 03:48:33+00' AS same_second
  FROM snowflake_decode_as(103270115826048975, 'mastodon') AS d;

--
-- Range bounds: the smallest id of a time unit, so that
-- id >= from(t1) AND id < from(t2) selects the ids made in [t1, t2)
--
SELECT l AS layout, snowflake_from_timestamp_as(t, l) AS first_id,
       (snowflake_decode_as(snowflake_from_timestamp_as(t, l), l)).*,
       snowflake_from_timestamp_as(t, l) <= id AND id < snowflake_from_timestamp_as(t + interval '1 ms', l)
           AS holds_published_id
  FROM (VALUES ('twitter', 1541815603606036480, '2022-06-28 16:07:40.105+00'::timestamptz),
               ('discord', 175928847299117063, '2016-04-30 11:18:25.796+00'),
               ('instagram', 2384288897814875714, '2020-08-26 13:43:27.313+00'),
               ('pgedge', 136169504773242881, '2024-01-11 18:08:59.845+00'),
               ('mastodon', 103270115826048975, '2019-12-08 03:48:33.849+00')) AS v(l, id, t);
-- Sonyflake's unit is 10 ms: every instant of a unit gives its first id
SELECT t, snowflake_from_timestamp_as(t, 'sonyflake') AS first_id
  FROM (VALUES ('2024-01-01 00:00:00+00'::timestamptz), ('2024-01-01 00:00:00.009999+00'),
               ('2024-01-01 00:00:00.010+00')) AS v(t);
-- each layout's first and last instant
SELECT l AS layout,
       snowflake_from_timestamp_as(epoch, l) AS first_id,
       (snowflake_decode_as(9223372036854775807, l)).ts AS last_time,
       snowflake_from_timestamp_as((snowflake_decode_as(9223372036854775807, l)).ts, l) >> bits
           = 9223372036854775807 >> bits AS last_unit_bound
  FROM (VALUES ('twitter', '2010-11-04 01:42:54.657+00'::timestamptz, 22),
               ('discord', '2015-01-01 00:00:00+00', 22), ('instagram', '2011-08-24 21:07:01.721+00', 23),
               ('sonyflake', '2014-09-01 00:00:00+00', 24), ('pgedge', '2023-01-01 00:00:00+00', 22),
               ('mastodon', '1970-01-01 00:00:00+00', 16)) AS v(l, epoch, bits);
SELECT pg_temp.error_of($$SELECT snowflake_from_timestamp_as('2010-11-04 01:42:54.656+00', 'twitter')$$) AS before_epoch,
       pg_temp.error_of($$SELECT snowflake_from_timestamp_as('2100-01-01', 'twitter')$$) AS past_end,
       pg_temp.error_of($$SELECT snowflake_from_timestamp_as('infinity', 'discord')$$) AS infinite;

--
-- Custom layouts: epoch, unit, then the fields from the highest bits down
--
SELECT * FROM snowflake_decode_as(1541815603606036480, 'epoch=1288834974657 time=41 worker=10 sequence=12');
SELECT * FROM snowflake_decode_as(494152093532487681, 'epoch=2014-09-01T00:00:00Z unit=10ms time=39 sequence=8 worker=16');
-- this extension's own layout, with its default epoch
SELECT id, snowflake_decode_as(id, 'epoch=2024-01-01 time=41 worker=10 sequence=12')
              = snowflake_decode(id, '2024-01-01+00') AS same_as_snowflake_decode
  FROM (VALUES (0::bigint), (7167350074945572864), (9223372036854775807)) AS v(id);
SELECT snowflake_from_timestamp_as('2026-11-01', 'epoch=2024-01-01 time=41 worker=10 sequence=12')
       = snowflake_from_timestamp('2026-11-01', '2024-01-01+00') AS same_as_from_timestamp;
-- narrow layouts refuse ids with bits above them
SELECT * FROM snowflake_decode_as(16777215, 'epoch=0 time=20 worker=2 sequence=2');
SELECT pg_temp.error_of($$SELECT snowflake_decode_as(16777216, 'epoch=0 time=20 worker=2 sequence=2')$$) AS too_wide;
-- a time past timestamptz's range
SELECT pg_temp.error_of($$SELECT snowflake_decode_as(9223372036854775807, 'epoch=9999-12-31 unit=86400000ms time=63 worker=0 sequence=0')$$) AS past_timestamptz;

--
-- Errors: unknown names and bad custom layouts are named, with a hint
--
SELECT l AS layout, pg_temp.error_of(format('SELECT snowflake_decode_as(1, %L)', l)) AS error
  FROM (VALUES ('Twitter'), ('snowflake'), (''), ('epoch=0 time=41 worker=10'),
               ('epoch=0 worker=10 time=41 sequence=12'), ('epoch=0 time=41 worker=20 sequence=12'),
               ('epoch=0 unit=10 time=41 worker=10 sequence=12'), ('epoch=1969-12-31 time=41 worker=10 sequence=12'),
               ('epoch=0 time=41 node=10 sequence=12')) AS v(l);
SELECT * FROM snowflake_decode_as(1, 'tweeter');
SELECT snowflake_from_timestamp_as(now(), 'epoch=0 time=41 worker=10 sequence=12 time=41');
SELECT pg_temp.error_of($$SELECT snowflake_decode_as(-1, 'discord')$$) AS negative;

--
-- IMMUTABLE, with the layout explicit: an index expression and partition bounds
--
CREATE TABLE messages (id bigint PRIMARY KEY) PARTITION BY RANGE (id);
CREATE TABLE messages_2016 PARTITION OF messages
    FOR VALUES FROM (snowflake_from_timestamp_as('2016-01-01', 'discord'))
                 TO (snowflake_from_timestamp_as('2017-01-01', 'discord'));
CREATE TABLE messages_2017 PARTITION OF messages
    FOR VALUES FROM (snowflake_from_timestamp_as('2017-01-01', 'discord'))
                 TO (snowflake_from_timestamp_as('2018-01-01', 'discord'));
CREATE INDEX ON messages (((snowflake_decode_as(id, 'discord')).ts));
INSERT INTO messages VALUES (175928847299117063);
SELECT tableoid::regclass AS partition, id FROM messages;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF)
SELECT id FROM messages
 WHERE id >= snowflake_from_timestamp_as('2016-04-30', 'discord')
   AND id < snowflake_from_timestamp_as('2016-05-01', 'discord');
SELECT id FROM messages
 WHERE id >= snowflake_from_timestamp_as('2016-04-30', 'discord')
   AND id < snowflake_from_timestamp_as('2016-05-01', 'discord');
EXPLAIN (COSTS OFF)
SELECT id FROM messages WHERE (snowflake_decode_as(id, 'discord')).ts >= '2016-04-30 11:18:25+00';
RESET enable_seqscan;
DROP TABLE messages;
