-- Public ids: snowflake_to_public / snowflake_from_public, FF1
-- with AES over the id's 63 bits (checked against NIST's samples in
-- test/unit/ff1_test.cpp), 13 Crockford base32 characters naming the key.
-- The keys are in the file snowflake.public_key_file names, read at start and
-- reload: test/t/062_public_key.pl tests them; here, what needs no key.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowflake;
RESET client_min_messages;

\getenv abs_srcdir PG_ABS_SRCDIR
\set error_of :abs_srcdir '/test/regress/error_of.sql'
\i :error_of

-- no key file: a clear error (55000)
SELECT * FROM pg_temp.error_of($$SELECT snowflake_to_public(1)$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_from_public('0000000000001')$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_to_public(1, 0)$$);
-- malformed input (22P02), a negative id (22003), a key id out of 0..3 (22023)
SELECT * FROM pg_temp.error_of($$SELECT snowflake_from_public('2M7PZ5HWB0R4')$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_from_public('2M7PZ-HWB0R4D')$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_from_public('UM7PZ5HWB0R4D', 0)$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_to_public(-1)$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_to_public(1, 4)$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_retire_public_key_id(-1)$$);

-- keys are never a setting's value: the file's name is a reload setting (no
-- session sets it), and 1.0's snowflake.public_key refuses every key, naming
-- the file setting, without quoting it
SELECT * FROM pg_temp.error_of($$SET snowflake.public_key_file = 'public_keys'$$);
SELECT * FROM pg_temp.error_of($$SET snowflake.public_key = '2B7E151628AED2A6ABF7158809CF4F3C'$$);
SELECT * FROM pg_temp.error_of($$ALTER DATABASE postgres SET snowflake.public_key = '2B7E151628AED2A6ABF7158809CF4F3C'$$);
SELECT * FROM pg_temp.error_of($$ALTER DATABASE postgres SET snowflake.public_key_file = 'public_keys'$$);
SELECT name, context, setting FROM pg_settings WHERE name LIKE 'snowflake.public_key%' ORDER BY name;
-- a key file the server cannot open is refused naming it (ALTER SYSTEM checks it)
ALTER SYSTEM SET snowflake.public_key_file = 'no_such_file';
-- a role other than a superuser retires no key id
CREATE ROLE snowflake_public_app;
SET ROLE snowflake_public_app;
SELECT split_part(pg_temp.error_of($$SELECT snowflake_retire_public_key_id(0)$$), ':', 1) AS sqlstate;
SELECT split_part(pg_temp.error_of($$SET snowflake.public_key = ''$$), ':', 1) AS sqlstate;
RESET ROLE;
DROP ROLE snowflake_public_app;

-- labels: the key file's forms STABLE, the key id's IMMUTABLE (a key id keeps
-- its key); none LEAKPROOF; 1.0's forms given the key are gone
SELECT p.oid::regprocedure, p.provolatile, p.proparallel, p.proleakproof
  FROM pg_proc p WHERE p.proname IN ('snowflake_to_public', 'snowflake_from_public', 'snowflake_retire_public_key_id')
 ORDER BY p.oid::regprocedure::text;
SELECT has_function_privilege('public', 'snowflake_retire_public_key_id(integer)', 'EXECUTE') AS public_retires;
