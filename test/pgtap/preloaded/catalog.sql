-- The SQL surface as installed: functions (signature, result, volatility,
-- strictness, parallel safety), the type, its casts, operators and operator
-- classes. Runs on the preloaded instance (snowflake.worker_id = 7).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS snowflake;

BEGIN;
SELECT plan(187);

-- functions: name, arguments, result, volatility, strictness, parallel safety
CREATE TEMP TABLE expected_function (name name, args name[], returns text, volatility text)
    ON COMMIT DROP;
INSERT INTO expected_function VALUES
    ('snowflake_nextval',        '{}',              'bigint',        'volatile'),
    ('snowflake_nextvals',       '{bigint}',        'setof bigint',  'volatile'),
    ('snowflake_status',         '{}',              'record',        'volatile'),
    ('snowflake_decode',         '{bigint}',        'snowflake_fields', 'stable'),
    ('snowflake_decode',         '{bigint,timestamp with time zone}', 'snowflake_fields', 'immutable'),
    ('snowflake_to_timestamp',   '{bigint}',        'timestamp with time zone', 'stable'),
    ('snowflake_to_timestamp',   '{bigint,timestamp with time zone}', 'timestamp with time zone', 'immutable'),
    ('snowflake_from_timestamp', '{timestamp with time zone}', 'bigint',        'stable'),
    ('snowflake_from_timestamp', '{timestamp with time zone,timestamp with time zone}', 'bigint', 'immutable'),
    ('snowflake_to_base32',      '{bigint}',        'text',          'immutable'),
    ('snowflake_from_base32',    '{text}',          'bigint',        'immutable'),
    ('snowflake_to_base62',      '{bigint}',        'text',          'immutable'),
    ('snowflake_from_base62',    '{text}',          'bigint',        'immutable'),
    ('snowflake_to_public',      '{bigint}',        'text',          'stable'),
    ('snowflake_from_public',    '{text}',          'bigint',        'stable'),
    ('snowflake_to_public',      '{bigint,integer}', 'text',         'immutable'),
    ('snowflake_from_public',    '{text,integer}',  'bigint',        'immutable'),
    ('snowflake_decode_as',      '{bigint,text}',   'snowflake_fields', 'immutable'),
    ('snowflake_from_timestamp_as', '{timestamp with time zone,text}', 'bigint', 'immutable');

SELECT has_function(name, args, format('function %s(%s) exists', name, array_to_string(args, ', ')))
  FROM expected_function ORDER BY name, args;
SELECT function_returns(name, args, returns) FROM expected_function ORDER BY name, args;
SELECT volatility_is(name, args, volatility) FROM expected_function ORDER BY name, args;
SELECT is_strict(name, args) FROM expected_function ORDER BY name, args;
SELECT is(p.proparallel, 's', format('%s is PARALLEL SAFE', p.oid::regprocedure))
  FROM expected_function e
  JOIN pg_proc p ON p.oid = format('%I(%s)', e.name, array_to_string(e.args, ','))::regprocedure
 ORDER BY e.name, e.args;

-- the adoption of a restored copy's worker id: writes a file, superusers only
SELECT has_function('snowflake_adopt_worker_id', '{timestamp with time zone}'::name[], 'function snowflake_adopt_worker_id(after timestamptz) exists');
SELECT function_returns('snowflake_adopt_worker_id', '{timestamp with time zone}'::name[], 'integer');
SELECT volatility_is('snowflake_adopt_worker_id', '{timestamp with time zone}'::name[], 'volatile');
SELECT is(p.proparallel, 'u', 'snowflake_adopt_worker_id() is PARALLEL UNSAFE')
  FROM pg_proc p WHERE p.oid = 'snowflake_adopt_worker_id(timestamptz)'::regprocedure;
SELECT ok(NOT EXISTS (SELECT FROM pg_proc p, aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
                       WHERE p.oid = 'snowflake_adopt_worker_id(timestamptz)'::regprocedure AND a.grantee = 0),
          'PUBLIC may not call snowflake_adopt_worker_id()');

-- the fleet check: reads a table (STABLE), a temporary one too (PARALLEL RESTRICTED)
SELECT has_function('snowflake_workers', '{regclass,name}'::name[], 'function snowflake_workers(regclass, name) exists');
SELECT function_returns('snowflake_workers', '{regclass,name}'::name[], 'setof record');
SELECT volatility_is('snowflake_workers', '{regclass,name}'::name[], 'stable');
SELECT is(p.proparallel, 'r', 'snowflake_workers(regclass, name) is PARALLEL RESTRICTED')
  FROM pg_proc p WHERE p.oid = 'snowflake_workers(regclass,name)'::regprocedure;

SELECT columns_are('snowflake_fields', ARRAY['ts', 'worker_id', 'sequence'],
                   'snowflake_decode returns snowflake_fields (ts, worker_id, sequence)');
SELECT hasnt_function('snowflake_decode', ARRAY['snowflake'],
                      'no snowflake overload of snowflake_decode: the bigint one serves both');
SELECT is_empty(
    $$SELECT p.oid::regprocedure FROM pg_proc p
       WHERE p.proname ~ '^snowflake_(to|from)_(base32|base62|public)$|_as$' AND p.proleakproof$$,
    'text forms, public ids and layouts are not LEAKPROOF: bad input throws');
SELECT hasnt_function('snowflake_to_base32', ARRAY['snowflake'],
                      'no snowflake overload of snowflake_to_base32: the bigint one serves both');
SELECT has_view('snowflake_status', 'view snowflake_status exists');
SELECT columns_are('snowflake_status',
    ARRAY['worker_id', 'epoch', 'last_id', 'restart_floor', 'lead_ms', 'lease_until', 'clock_regressions',
          'borrowed_ms', 'waits', 'lease_extensions', 'generating', 'writer_stalled_ms', 'layout',
          'window_until', 'registry_reached', 'registry_error', 'registry_clock_skew_ms', 'not_generating'],
    'snowflake_status shows worker id, epoch, position, counters, layout, the registry''s grant and why it does not generate');

-- the type: 8 bytes, by value, int8's alignment, numeric category, not preferred
SELECT has_type('snowflake', 'type snowflake exists');
SELECT results_eq(
    $$SELECT typlen::int, typbyval, typalign::text, typcategory::text, typispreferred, typtype::text
        FROM pg_type WHERE oid = 'snowflake'::regtype$$,
    $$VALUES (8, true, 'd', 'N', false, 'b')$$,
    'snowflake is a base type of 8 bytes, passed by value, like int8, in the numeric category, not preferred');
SELECT is((SELECT typsend::text FROM pg_type WHERE oid = 'snowflake'::regtype), '_snowflake_send',
          'snowflake has a binary send function');
SELECT is((SELECT typreceive::text FROM pg_type WHERE oid = 'snowflake'::regtype), '_snowflake_recv',
          'snowflake has a binary receive function');
SELECT is(int8send(12345), _snowflake_send('12345'), 'the wire form of a snowflake is int8''s');

-- casts: smallint, integer -> snowflake -> bigint implicitly; bigint -> snowflake by assignment
SELECT has_cast('bigint', 'snowflake', 'snowflake', 'cast bigint -> snowflake exists');
SELECT has_cast('integer', 'snowflake', 'snowflake', 'cast integer -> snowflake exists');
SELECT has_cast('snowflake', 'bigint', 'cast snowflake -> bigint exists');
SELECT cast_context_is('bigint', 'snowflake', 'assignment');
SELECT cast_context_is('integer', 'snowflake', 'implicit');
SELECT cast_context_is('smallint', 'snowflake', 'implicit');
SELECT cast_context_is('snowflake', 'bigint', 'implicit');
SELECT cast_context_is('snowflake', 'integer', 'assignment');
SELECT cast_context_is('jsonb', 'snowflake', 'explicit');
SELECT is((SELECT castmethod::text FROM pg_cast
            WHERE castsource = 'snowflake'::regtype AND casttarget = 'bigint'::regtype),
          'b', 'snowflake -> bigint is binary-coercible (no function)');
SELECT set_eq(
    $$SELECT castsource::regtype::text, casttarget::regtype::text FROM pg_cast
       WHERE (castsource = 'snowflake'::regtype OR casttarget = 'snowflake'::regtype)
         AND castcontext = 'i'$$,
    $$VALUES ('smallint', 'snowflake'), ('integer', 'snowflake'), ('snowflake', 'bigint')$$,
    'the implicit casts are exactly smallint, integer -> snowflake -> bigint');
SELECT is(42::bigint::snowflake::text, '42', 'bigint -> snowflake cast keeps the value');
SELECT is(42::snowflake::bigint, 42::bigint, 'snowflake -> bigint cast keeps the value');
SELECT is((-1)::bigint::snowflake::text, '-1', 'a negative bigint -> snowflake cast keeps the value (a sentinel)');
SELECT is((-1)::integer::snowflake::bigint, -1::bigint,
          'a negative integer widens to snowflake as to bigint (sentinels such as COALESCE(id, -1))');

-- operators: = <> < <= > >= for snowflake with snowflake, bigint, integer, smallint on either side
SELECT has_operator(l, op, r, 'boolean', format('operator %s(%s, %s) exists', op, l, r))
  FROM (VALUES ('snowflake', 'snowflake'), ('snowflake', 'bigint'), ('bigint', 'snowflake'),
               ('snowflake', 'integer'), ('integer', 'snowflake'),
               ('snowflake', 'smallint'), ('smallint', 'snowflake')) AS s(l, r)
 CROSS JOIN unnest(ARRAY['=', '<>', '<', '<=', '>', '>=']) AS op
 ORDER BY l DESC, r DESC, op;
SELECT is_empty(
    $$SELECT o.oid::regoperator FROM pg_operator o JOIN pg_proc p ON p.oid = o.oprcode
       WHERE (o.oprleft = 'snowflake'::regtype OR o.oprright = 'snowflake'::regtype)
         AND o.oprname IN ('=', '<>', '<', '<=', '>', '>=') AND NOT p.proleakproof$$,
    'every comparison operator with snowflake is leakproof');
SELECT is(count(*)::int, 42, 'there are 42 comparison operators with snowflake')
  FROM pg_operator WHERE oprleft = 'snowflake'::regtype OR oprright = 'snowflake'::regtype;
SELECT lives_ok($$SELECT '5'::snowflake = 5, 5 = '5'::snowflake, '5'::snowflake < 6::bigint,
                         6::bigint > '5'::snowflake, '5'::snowflake <> '6'::snowflake$$,
                'comparisons with integer literals and bigint resolve without ambiguity');
SELECT ok('5'::snowflake < 6 AND 6::bigint >= '6'::snowflake AND '7'::snowflake = 7::bigint
          AND NOT ('7'::snowflake <> 7), 'comparisons with bigint give the right answers');

-- operator classes: btree and hash in core's integer_ops (not DEFAULT: an
-- index on a snowflake column gets int8_ops), a default BRIN class
SELECT has_opclass('snowflake_ops', 'operator class snowflake_ops exists');
SELECT has_opclass('snowflake_minmax_ops', 'operator class snowflake_minmax_ops exists');
SELECT results_eq(
    $$SELECT a.amname::text COLLATE "default", c.opcname::text COLLATE "default", c.opcdefault,
             f.opfname::text COLLATE "default"
        FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod JOIN pg_opfamily f ON f.oid = c.opcfamily
       WHERE c.opcintype = 'snowflake'::regtype ORDER BY a.amname$$,
    $$VALUES ('brin', 'snowflake_minmax_ops', true, 'snowflake_minmax_ops'),
             ('btree', 'snowflake_ops', false, 'integer_ops'), ('hash', 'snowflake_ops', false, 'integer_ops')$$,
    'snowflake''s btree and hash classes are in core''s integer_ops, not default; its BRIN class is default');
SELECT results_eq(
    $$SELECT amproclefttype::regtype::text, amprocrighttype::regtype::text, amprocnum::int
        FROM pg_amproc
       WHERE amprocfamily = (SELECT oid FROM pg_opfamily
                              WHERE opfname = 'integer_ops'
                                AND opfmethod = (SELECT oid FROM pg_am WHERE amname = 'btree'))
         AND 'snowflake'::regtype IN (amproclefttype, amprocrighttype)
       ORDER BY 1, 2, 3$$,
    $$VALUES ('bigint', 'snowflake', 1), ('integer', 'snowflake', 1), ('smallint', 'snowflake', 1),
             ('snowflake', 'bigint', 1), ('snowflake', 'bigint', 3), ('snowflake', 'integer', 1),
             ('snowflake', 'smallint', 1), ('snowflake', 'snowflake', 1), ('snowflake', 'snowflake', 2),
             ('snowflake', 'snowflake', 4)$$,
    'integer_ops compares snowflake with the integers, with sort support, in_range and equalimage');
SELECT is((SELECT count(*)::int FROM pg_amop
            WHERE amopfamily = (SELECT oid FROM pg_opfamily
                                 WHERE opfname = 'integer_ops'
                                   AND opfmethod = (SELECT oid FROM pg_am WHERE amname = 'hash'))
              AND 'snowflake'::regtype IN (amoplefttype, amoprighttype)),
          7, 'the hash integer_ops holds = for snowflake and its mixes with the integers');
SELECT is(snowflake_repair_integer_ops(), 0, 'snowflake_repair_integer_ops() finds nothing missing after CREATE EXTENSION');
SELECT is_empty(
    $$SELECT amopopr::regoperator FROM pg_amop o JOIN pg_opfamily f ON f.oid = o.amopfamily
       WHERE f.opfname LIKE 'snowflake%' AND o.amoplefttype <> 'snowflake'::regtype
         AND o.amoprighttype <> 'snowflake'::regtype$$,
    'no operator between two core types in any snowflake family (planner neutrality)');
SELECT hasnt_function('max', ARRAY['snowflake'], 'no max(snowflake): bigint''s max() reads the index under any search_path');
SELECT hasnt_function('min', ARRAY['snowflake'], 'no min(snowflake): bigint''s min() reads the index under any search_path');
SELECT is(_snowflake_hash('123456789'), hashint8(123456789),
          'snowflake hashes like bigint (hash-compatible)');
SELECT is(_snowflake_hash_extended('123456789', 42), hashint8extended(123456789, 42),
          'snowflake extended hash is bigint''s');

SELECT * FROM finish();
ROLLBACK;
