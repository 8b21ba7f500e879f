-- The type as it behaves: its wire form, its casts' values, comparisons that
-- resolve, hashing like bigint, operator families free of core-only members.
-- (What the catalog holds, labels and all, is specified once: the regression
-- test sql/catalog.sql and expected/catalog.out.) Runs on the preloaded
-- instance (snowflake.worker_id = 7).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS snowflake;

BEGIN;
SELECT plan(11);

SELECT is(int8send(12345), _snowflake_send('12345'), 'the wire form of a snowflake is int8''s');

SELECT is(42::bigint::snowflake::text, '42', 'bigint -> snowflake cast keeps the value');
SELECT is(42::snowflake::bigint, 42::bigint, 'snowflake -> bigint cast keeps the value');
SELECT is((-1)::bigint::snowflake::text, '-1', 'a negative bigint -> snowflake cast keeps the value (a sentinel)');
SELECT is((-1)::integer::snowflake::bigint, -1::bigint,
          'a negative integer widens to snowflake as to bigint (sentinels such as COALESCE(id, -1))');

SELECT lives_ok($$SELECT '5'::snowflake = 5, 5 = '5'::snowflake, '5'::snowflake < 6::bigint,
                         6::bigint > '5'::snowflake, '5'::snowflake <> '6'::snowflake$$,
                'comparisons with integer literals and bigint resolve without ambiguity');
SELECT ok('5'::snowflake < 6 AND 6::bigint >= '6'::snowflake AND '7'::snowflake = 7::bigint
          AND NOT ('7'::snowflake <> 7), 'comparisons with bigint give the right answers');

SELECT is(snowflake_repair_integer_ops(), 0, 'snowflake_repair_integer_ops() finds nothing missing after CREATE EXTENSION');
SELECT is_empty(
    $$SELECT amopopr::regoperator FROM pg_amop o JOIN pg_opfamily f ON f.oid = o.amopfamily
       WHERE f.opfname LIKE 'snowflake%' AND o.amoplefttype <> 'snowflake'::regtype
         AND o.amoprighttype <> 'snowflake'::regtype$$,
    'no operator between two core types in any snowflake family (planner neutrality)');
SELECT is(_snowflake_hash('123456789'), hashint8(123456789),
          'snowflake hashes like bigint (hash-compatible)');
SELECT is(_snowflake_hash_extended('123456789', 42), hashint8extended(123456789, 42),
          'snowflake extended hash is bigint''s');

SELECT * FROM finish();
ROLLBACK;
