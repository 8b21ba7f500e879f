-- Public ids: snowflake_to_public / snowflake_from_public, FF1
-- with AES over the id's 63 bits (checked against NIST's samples in
-- test/unit/ff1_test.cpp), 13 Crockford base32 characters naming the key.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowflake;
RESET client_min_messages;

\getenv abs_srcdir PG_ABS_SRCDIR
\set error_of :abs_srcdir '/test/regress/error_of.sql'
\i :error_of

-- no key yet: a clear error
SELECT * FROM pg_temp.error_of($$SELECT snowflake_to_public(1)$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_from_public('0000000000001')$$);

-- NIST's AES-128 sample key (FF1samples 1-3); the forms are pinned: the same
-- key gives the same public ids on every server, after every restart
SET snowflake.public_key = '2B7E151628AED2A6ABF7158809CF4F3C';
SELECT id, snowflake_to_public(id) AS public_id, snowflake_from_public(snowflake_to_public(id)) = id AS round_trip
  FROM (VALUES (0::bigint), (1), (2), (382741621101301760), (382741621101301761), (9223372036854775807)) v(id);
-- the forms given the key: the same, with key id 0
SELECT snowflake_to_public(382741621101301760, '\x2B7E151628AED2A6ABF7158809CF4F3C'::bytea)
     = snowflake_to_public(382741621101301760) AS same,
       snowflake_from_public(snowflake_to_public(42), '\x2B7E151628AED2A6ABF7158809CF4F3C'::bytea) AS id;
-- input as base32: any case, I and L as 1, O as 0
SELECT snowflake_from_public(lower(snowflake_to_public(42))) AS lower_case;

-- round trips over 100,000 consecutive ids and random ones; no two alike
SELECT count(*) AS ids, count(DISTINCT p) AS distinct_forms, bool_and(snowflake_from_public(p) = id) AS all_round_trip
  FROM (SELECT id, snowflake_to_public(id) AS p FROM generate_series(382741621101301760, 382741621101401759) id) s;
SELECT bool_and(snowflake_from_public(snowflake_to_public(id)) = id) AS random_round_trip
  FROM (SELECT (random() * 9223372036854775807)::bigint AS id FROM generate_series(1, 10000)) s;
-- consecutive ids give forms with no visible order: Spearman's rank
-- correlation over 100,000 consecutive ids (the README gives it)
SELECT abs(round(corr(id_rank, public_rank)::numeric, 3)) < 0.01 AS no_order, round(corr(id_rank, public_rank)::numeric, 4) AS rho
  FROM (SELECT rank() OVER (ORDER BY id) AS id_rank, rank() OVER (ORDER BY p COLLATE "C") AS public_rank
          FROM (SELECT id, snowflake_to_public(id) AS p FROM generate_series(382741621101301760, 382741621101401759) id) s) r;
-- another key gives unrelated forms
SELECT count(*) FILTER (WHERE a = b) AS equal, abs(round(corr(ra, rb)::numeric, 3)) < 0.02 AS unrelated
  FROM (SELECT a, b, rank() OVER (ORDER BY a COLLATE "C") AS ra, rank() OVER (ORDER BY b COLLATE "C") AS rb
          FROM (SELECT snowflake_to_public(id) AS a,
                       snowflake_to_public(id, '\x000102030405060708090a0b0c0d0e0f'::bytea) AS b
                  FROM generate_series(1, 50000) id) s) r;

-- a lookup by public id reads the primary key
CREATE TABLE accounts (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), name text);
INSERT INTO accounts (name) SELECT 'a' || g FROM generate_series(1, 1000) g;
ANALYZE accounts;
EXPLAIN (COSTS OFF) SELECT name FROM accounts WHERE id = snowflake_from_public('2M7PZ5HWB0R4D');
SELECT a.name = b.name AS found FROM accounts a, accounts b
 WHERE a.id = (SELECT min(id) FROM accounts) AND b.id = snowflake_from_public(snowflake_to_public(a.id));
DROP TABLE accounts;

-- malformed, or made under a key id not held: 22P02 naming the input; a
-- negative id: 22003; a key of another length: 22023
SELECT * FROM pg_temp.error_of($$SELECT snowflake_from_public('2M7PZ5HWB0R4')$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_from_public('2M7PZ-HWB0R4D')$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_from_public('2M7PZ5HWB0R4DX')$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_from_public('UM7PZ5HWB0R4D')$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_from_public('ZM7PZ5HWB0R4D')$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_from_public('ZM7PZ5HWB0R4D', '\x2B7E151628AED2A6ABF7158809CF4F3C'::bytea)$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_to_public(-1)$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_to_public(1, '\x0102'::bytea)$$);
-- a wrong key cannot be told: it decodes to another id
SELECT snowflake_from_public(snowflake_to_public(42), '\x000102030405060708090a0b0c0d0e0f'::bytea) <> 42 AS another_id;

-- rotation: the new key first (key id 1), the old one after it; old public
-- ids still decode, new ones name key id 1 (first character 8-F)
CREATE TEMP TABLE old_forms AS SELECT id, snowflake_to_public(id) AS p FROM generate_series(1, 1000) id;
SET snowflake.public_key = '1:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f, 0:2B7E151628AED2A6ABF7158809CF4F3C';
SELECT bool_and(snowflake_from_public(p) = id) AS old_forms_decode FROM old_forms;
SELECT bool_and(left(snowflake_to_public(id), 1) BETWEEN '8' AND 'F') AS new_forms_name_key_1,
       bool_and(snowflake_from_public(snowflake_to_public(id)) = id) AS new_forms_round_trip
  FROM generate_series(1, 1000) id;
-- the old key dropped: its forms are refused, naming the key id
SET snowflake.public_key = '1:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f';
SELECT * FROM pg_temp.error_of($$SELECT snowflake_from_public('0000000000001')$$);

-- bad settings are refused without quoting the key
SELECT * FROM pg_temp.error_of($$SET snowflake.public_key = '2B7E151628AED2A6ABF7158809CF4F'$$);
SELECT * FROM pg_temp.error_of($$SET snowflake.public_key = '0:2B7E151628AED2A6ABF7158809CF4F3C, 0:2B7E151628AED2A6ABF7158809CF4F3C'$$);
SELECT * FROM pg_temp.error_of($$SET snowflake.public_key = '4:2B7E151628AED2A6ABF7158809CF4F3C'$$);

-- only superusers read or set the key; anyone may use it
CREATE ROLE snowflake_public_app;
SET ROLE snowflake_public_app;
SELECT split_part(pg_temp.error_of($$SHOW snowflake.public_key$$), ':', 1) AS sqlstate;  -- the message varies by major
SELECT split_part(pg_temp.error_of($$SELECT current_setting('snowflake.public_key')$$), ':', 1) AS sqlstate;  -- the message varies by major
SELECT count(*) AS visible_in_pg_settings FROM pg_settings WHERE name = 'snowflake.public_key';
SELECT * FROM pg_temp.error_of($$SET snowflake.public_key = '2B7E151628AED2A6ABF7158809CF4F3C'$$);
SELECT snowflake_from_public(snowflake_to_public(7)) AS app_round_trip;
RESET ROLE;
DROP ROLE snowflake_public_app;
RESET snowflake.public_key;

-- labels: the setting's forms STABLE, the key-given ones IMMUTABLE; none LEAKPROOF
SELECT p.oid::regprocedure, p.provolatile, p.proparallel, p.proleakproof
  FROM pg_proc p WHERE p.proname IN ('snowflake_to_public', 'snowflake_from_public') ORDER BY p.oid::regprocedure::text;
