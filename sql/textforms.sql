-- Short text forms: snowflake_to_base32 / snowflake_from_base32 (Crockford,
-- 13 characters) and snowflake_to_base62 / snowflake_from_base62 (0-9A-Za-z,
-- 11 characters), for bigint and snowflake ids.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowflake;
RESET client_min_messages;

\getenv abs_srcdir PG_ABS_SRCDIR
\set error_of :abs_srcdir '/test/regress/error_of.sql'
\i :error_of

--
-- Round trips at 0, 1, 2^53 and 2^63-1, as bigint and as snowflake
--
SELECT id, snowflake_to_base32(id) AS base32, snowflake_to_base62(id) AS base62,
       snowflake_from_base32(snowflake_to_base32(id)) = id AS base32_back,
       snowflake_from_base62(snowflake_to_base62(id)) = id AS base62_back,
       snowflake_to_base32(id::snowflake) = snowflake_to_base32(id) AS same_for_snowflake,
       snowflake_to_base62(id::snowflake) = snowflake_to_base62(id) AS same_for_snowflake62
  FROM (VALUES (0::bigint), (1), (9007199254740992), (9223372036854775807)) AS v(id);
SELECT pg_typeof(snowflake_to_base32(1)), pg_typeof(snowflake_from_base32('0000000000001')),
       snowflake_from_base32('7ZZZZZZZZZZZZ')::snowflake AS as_snowflake;
-- a quoted snowflake resolves to the bigint overload
SELECT snowflake_to_base32('7167350074945572864'::snowflake) AS quoted,
       snowflake_to_base62('7167350074945572864'::snowflake) AS quoted62;
SELECT snowflake_to_base32(NULL) IS NULL AS null_in, snowflake_from_base62(NULL) IS NULL AS null_out;

--
-- Base32 input: case-insensitive, I and L read as 1, O as 0; canonical output
--
SELECT t AS input, snowflake_from_base32(t) AS id, snowflake_to_base32(snowflake_from_base32(t)) AS canonical
  FROM (VALUES ('7zzzzzzzzzzzz'), ('0000000000001'), ('000000000000i'), ('000000000000L'),
               ('o00000000000l'), ('3nmq4xvbd0000'), ('3NMQ4XVBD0000')) AS v(t);

--
-- Every malformed or out-of-range input is an error naming it
--
SELECT t AS input, pg_temp.error_of(format('SELECT snowflake_from_base32(%L)', t)) AS base32_error
  FROM (VALUES (''), ('000000000001'), ('00000000000001'), ('000000-000001'), ('0000-0000-0001'),
               ('000000000000U'), ('000000000000u'), (' 000000000001'), ('000000000001 '),
               ('-000000000001'), ('+000000000001'), ('00000000000*1'), ('0000000000é1'),
               ('8000000000000'), ('ZZZZZZZZZZZZZ'), ('zzzzzzzzzzzzz')) AS v(t);
SELECT t AS input, pg_temp.error_of(format('SELECT snowflake_from_base62(%L)', t)) AS base62_error
  FROM (VALUES (''), ('0000000001'), ('000000000001'), ('00000-00001'), (' 0000000001'),
               ('0000000001 '), ('-0000000001'), ('000000000_1'), ('00000000é1'),
               ('AzL8n0Y58m8'), ('zzzzzzzzzzz')) AS v(t);
-- negative ids have no text form
SELECT pg_temp.error_of('SELECT snowflake_to_base32(-1)') AS negative32,
       pg_temp.error_of('SELECT snowflake_to_base62(-9223372036854775808)') AS negative62;
-- the full report, with its detail
SELECT snowflake_from_base32('01ARZ3NDEKTSU');
SELECT snowflake_from_base32('8ZZZZZZZZZZZZ');
SELECT snowflake_from_base62('abc');

--
-- 100,000 random ids of every magnitude: round trips, and the text forms sort
-- as the ids: base32 in the C and the database's default collation, base62
-- in the C collation
--
SELECT setseed(0.25);
CREATE TEMP TABLE forms AS
SELECT id, snowflake_to_base32(id) AS b32, snowflake_to_base62(id) AS b62
  FROM (SELECT DISTINCT (floor(random() * 9223372036854775807::numeric)::bigint
                         >> (random() * 40)::int) AS id
          FROM generate_series(1, 100000)
        UNION SELECT unnest(ARRAY[0, 1, 9007199254740992, 9223372036854775807])) AS random_ids;
SELECT count(*) AS ids, count(DISTINCT length(id::text)) AS decimal_lengths,
       bool_and(snowflake_from_base32(b32) = id) AS base32_round_trips,
       bool_and(snowflake_from_base62(b62) = id) AS base62_round_trips,
       bool_and(snowflake_from_base32(lower(b32)) = id) AS lower_case_reads
  FROM forms;
SELECT bool_and(by_id = by_b32_c) AS base32_c_order,
       bool_and(by_id = by_b32_default) AS base32_default_order,
       bool_and(by_id = by_b62_c) AS base62_c_order
  FROM (SELECT row_number() OVER (ORDER BY id) AS by_id,
               row_number() OVER (ORDER BY b32 COLLATE "C") AS by_b32_c,
               row_number() OVER (ORDER BY b32) AS by_b32_default,
               row_number() OVER (ORDER BY b62 COLLATE "C") AS by_b62_c
          FROM forms) AS ranks;
-- A linguistic collation (ICU's root, as en_US is) compares letters
-- case-insensitively first: upper-case base32 keeps the order, base62 does
-- not (use COLLATE "C" for it).
SELECT bool_and(by_id = by_b32_icu) AS base32_icu_order,
       bool_and(by_id = by_b62_icu) AS base62_icu_order
  FROM (SELECT row_number() OVER (ORDER BY id) AS by_id,
               row_number() OVER (ORDER BY b32 COLLATE "und-x-icu") AS by_b32_icu,
               row_number() OVER (ORDER BY b62 COLLATE "und-x-icu") AS by_b62_icu
          FROM forms) AS ranks;
SELECT 'a0000000000' < 'B0000000000' COLLATE "und-x-icu" AS icu_a_before_b,
       'a0000000000' < 'B0000000000' COLLATE "C" AS c_a_before_b;

--
-- IMMUTABLE: usable in an index expression and a generated column
--
CREATE TEMP TABLE links (id snowflake PRIMARY KEY,
                         slug text GENERATED ALWAYS AS (snowflake_to_base62(id)) STORED);
CREATE INDEX ON links (snowflake_to_base32(id));
INSERT INTO links VALUES (7167350074945572864), (1);
SELECT id, slug, snowflake_to_base32(id) FROM links ORDER BY slug COLLATE "C";
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM links WHERE snowflake_to_base32(id) = '66XWAXCZ00400';
SELECT id FROM links WHERE snowflake_to_base32(id) = '66XWAXCZ00400';
RESET enable_seqscan;
DROP TABLE forms, links;
