-- The snowflake type: text and binary I/O, casts, operator resolution, JSON,
-- operator classes, index use (B-tree, BRIN), time windows and joins with bigint.
-- Output must be deterministic: no generated id is ever printed.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowflake;
RESET client_min_messages;
SET TimeZone = 'UTC';
\getenv abs_srcdir PG_ABS_SRCDIR
\set plan_nodes :abs_srcdir '/test/regress/plan_nodes.sql'
\i :plan_nodes

--
-- Text input and output
--
SELECT '0'::snowflake AS zero, '1'::snowflake AS one,
       '9223372036854775807'::snowflake AS max, '7167350074945572864'::snowflake AS example;
-- leading zeros are digits too
SELECT '00042'::snowflake AS leading_zeros,
       '000000000009223372036854775807'::snowflake AS padded_max;
-- the domain is every int8: a negative value (a sentinel, never an id) has a
-- leading minus sign; -0 is 0
SELECT '-1'::snowflake AS minus_one, '-0'::snowflake AS minus_zero, '-007'::snowflake AS minus_seven,
       '-9223372036854775808'::snowflake AS min, '-9223372036854775807'::snowflake AS min_plus_one;
-- text -> snowflake -> text is the identity on canonical input
SELECT x, x::snowflake::text = x AS round_trip
FROM (VALUES ('0'), ('1'), ('4194304'), ('2147483648'), ('9223372036854775806'),
             ('9223372036854775807'), ('-1'), ('-2147483649'), ('-9223372036854775808')) v(x);
SELECT NULL::snowflake IS NULL AS null_in_null_out;
-- every malformed form is refused, naming the input
SELECT ''::snowflake;
SELECT '-'::snowflake;
SELECT '--1'::snowflake;
SELECT '- 1'::snowflake;
SELECT '+1'::snowflake;
SELECT ' 1'::snowflake;
SELECT '1 '::snowflake;
SELECT '1 2'::snowflake;
SELECT '1a'::snowflake;
SELECT 'a1'::snowflake;
SELECT '0x1'::snowflake;
SELECT '1.0'::snowflake;
SELECT '1e3'::snowflake;
SELECT 'abc'::snowflake;
SELECT '9223372036854775808'::snowflake;
SELECT '09223372036854775808'::snowflake;
SELECT '-9223372036854775809'::snowflake;
SELECT '18446744073709551616'::snowflake;
SELECT '99999999999999999999999999999999999999999999'::snowflake;
-- too many digits followed by junk is a syntax error
SELECT '99999999999999999999x'::snowflake;

--
-- Binary I/O: the wire form is int8's
--
SELECT x, _snowflake_send(x::snowflake) AS snowflake_send, _snowflake_send(x::snowflake) = int8send(x) AS same_as_int8send
FROM (VALUES (0::bigint), (1), (4194304), (7167350074945572864), (9223372036854775807), (-1),
             (-9223372036854775808)) v(x);
-- snowflake_recv, through binary COPY: int8 bytes read back as snowflake
\getenv abs_builddir PG_ABS_BUILDDIR
\set binfile :abs_builddir '/results/type_binary.data'
CREATE TABLE bin_b (id bigint);
CREATE TABLE bin_s (id snowflake);
INSERT INTO bin_b VALUES (0), (1), (7167350074945572864), (9223372036854775807), (NULL);
COPY bin_b TO :'binfile' (FORMAT binary);
COPY bin_s FROM :'binfile' (FORMAT binary);
SELECT id FROM bin_s ORDER BY id;
-- and snowflake bytes read back as bigint
TRUNCATE bin_b;
COPY bin_s TO :'binfile' (FORMAT binary);
COPY bin_b FROM :'binfile' (FORMAT binary);
SELECT count(*) AS rows, count(*) FILTER (WHERE id IN (0, 1, 7167350074945572864, 9223372036854775807)) AS matched
FROM bin_b;
-- a negative int8 on the wire is read as it is, and written back the same
TRUNCATE bin_b, bin_s;
INSERT INTO bin_b VALUES (-1), (-9223372036854775808);
COPY bin_b TO :'binfile' (FORMAT binary);
COPY bin_s FROM :'binfile' (FORMAT binary);
SELECT id FROM bin_s ORDER BY id;
TRUNCATE bin_b;
COPY bin_s TO :'binfile' (FORMAT binary);
COPY bin_b FROM :'binfile' (FORMAT binary);
SELECT id FROM bin_b ORDER BY id;
DROP TABLE bin_b, bin_s;

--
-- Casts
--
SELECT castsource::regtype, casttarget::regtype, castfunc::regprocedure, castcontext, castmethod
FROM pg_cast
WHERE castsource = 'snowflake'::regtype OR casttarget = 'snowflake'::regtype
ORDER BY castsource::regtype::text, casttarget::regtype::text;
SELECT 42::snowflake AS from_int, pg_typeof(42::snowflake);
SELECT 42::bigint::snowflake AS from_bigint, 9223372036854775807::bigint::snowflake AS from_max_bigint,
       2147483647::integer::snowflake AS from_max_int, 0::snowflake AS from_zero;
SELECT 7167350074945572864::snowflake::bigint AS to_bigint,
       pg_typeof(7167350074945572864::snowflake::bigint);
SELECT 42::snowflake::bigint::integer AS via_bigint_to_int;
SELECT CAST(CAST(9223372036854775807 AS snowflake) AS bigint) = 9223372036854775807 AS bigint_round_trip;
-- bigint, smallint and integer convert exactly, negatives too (the sentinel
-- idioms, below)
SELECT (-1)::bigint::snowflake AS bigint_minus_one, (-9223372036854775808)::bigint::snowflake AS bigint_min,
       snowflake(-5::bigint) AS function_of_bigint;
SELECT (-1)::snowflake AS integer_minus_one, (-2147483648)::integer::snowflake AS integer_min,
       (-32768)::smallint::snowflake AS smallint_min, snowflake(-5) AS function_of_integer;
-- numeric, real and double precision: explicitly and by assignment, both ways,
-- rounding as bigint does, negatives too
SELECT 7167350074945572864::snowflake::numeric AS to_numeric, 4194304::snowflake::double precision AS to_double,
       4194304::snowflake::real AS to_real, 12.5::numeric::snowflake AS from_numeric,
       12.4::double precision::snowflake AS from_double, 2.5::real::snowflake AS from_real,
       9223372036854775807::numeric::snowflake AS from_numeric_max;
SELECT (-0.5)::numeric::snowflake AS minus_half, (-1.0)::double precision::snowflake AS minus_one_double,
       (-9223372036854775808)::numeric::snowflake AS numeric_min;
SELECT 9223372036854775808::numeric::snowflake;
SELECT (-9223372036854775809)::numeric::snowflake;
CREATE TEMP TABLE to_numeric_t (n numeric, d double precision, r real);
INSERT INTO to_numeric_t SELECT s, s, s FROM (VALUES ('1000'::snowflake)) v(s);
SELECT * FROM to_numeric_t;
DROP TABLE to_numeric_t;

--
-- Assignment into a snowflake column
--
CREATE TABLE assign_t (id snowflake PRIMARY KEY DEFAULT snowflake_nextval(), note text NOT NULL);
INSERT INTO assign_t VALUES (1, 'integer literal');
INSERT INTO assign_t VALUES (9223372036854775807, 'bigint literal');
INSERT INTO assign_t VALUES (2::bigint, 'bigint expression');
INSERT INTO assign_t VALUES ('3', 'quoted literal');
PREPARE ins_bigint(bigint) AS INSERT INTO assign_t VALUES ($1, 'bigint parameter');
EXECUTE ins_bigint(4);
PREPARE ins_int(integer) AS INSERT INTO assign_t VALUES ($1, 'integer parameter');
EXECUTE ins_int(5);
PREPARE ins_unknown AS INSERT INTO assign_t VALUES ($1, 'untyped parameter');
EXECUTE ins_unknown(6);
INSERT INTO assign_t SELECT g, 'integer column' FROM generate_series(10, 11) g;
INSERT INTO assign_t SELECT g::bigint, 'bigint column' FROM generate_series(12, 13) g;
INSERT INTO assign_t SELECT snowflake_from_timestamp('2024-01-01 00:00:00.001+00'), 'bigint function result';
COPY assign_t FROM stdin;
20	copy text
21	copy text
\.
INSERT INTO assign_t (note) VALUES ('default snowflake_nextval()');
INSERT INTO assign_t (note) SELECT 'default snowflake_nextval()' FROM generate_series(1, 99);
UPDATE assign_t SET id = 7 WHERE id = 6;
UPDATE assign_t SET id = id::bigint + 1 WHERE id = 7;
SELECT id, note FROM assign_t WHERE note NOT LIKE 'default%' ORDER BY id;
-- the generated defaults: 100 distinct ids of worker 1, all above the fixed ones
SELECT count(*) AS generated, count(DISTINCT id) AS distinct_ids,
       bool_and((snowflake_decode(id)).worker_id = 1) AS worker_1,
       bool_and(id > 4194304) AS above_fixed
FROM assign_t WHERE note LIKE 'default%';
-- negative values, as in a bigint key: from bigint, text, numeric, a bigint
-- parameter, an integer parameter, arithmetic
INSERT INTO assign_t VALUES (-1::bigint, 'negative bigint');
INSERT INTO assign_t VALUES ('-2', 'negative text');
INSERT INTO assign_t VALUES (-3.0, 'negative numeric');
EXECUTE ins_bigint(-4);
EXECUTE ins_int(-5);
UPDATE assign_t SET id = id - 7 WHERE id = 1;
SELECT id, note FROM assign_t WHERE id < 0 ORDER BY id;
UPDATE assign_t SET id = 1 WHERE id = -6;
DELETE FROM assign_t WHERE id < 0;
-- unique key
INSERT INTO assign_t VALUES (1, 'duplicate');
INSERT INTO assign_t VALUES (1, 'upsert') ON CONFLICT (id) DO UPDATE SET note = excluded.note;
SELECT id, note FROM assign_t WHERE id = 1;
DEALLOCATE ins_bigint; DEALLOCATE ins_int; DEALLOCATE ins_unknown;
DROP TABLE assign_t;

--
-- Operator resolution: snowflake against smallint, integer, bigint (and
-- snowflake) literals and columns, on either side, for = <> < <= > >=.
-- Each must resolve (no "operator is not unique"), to the operator shown, and
-- answer like the same comparison on bigint. s takes 4, 5, 6; the other side is 5,
-- so the answers column reads (s=4, s=5, s=6).
--
CREATE TABLE ops_t (s snowflake, t snowflake, h smallint, i integer, b bigint);
INSERT INTO ops_t VALUES (4, 5, 5, 5, 5), (5, 5, 5, 5, 5), (6, 5, 5, 5, 5);
CREATE FUNCTION pg_temp.resolve(operand text, snowflake_left boolean, op text,
                                OUT signature text, OUT answers text, OUT correct boolean)
LANGUAGE plpgsql AS $$
DECLARE
    expr text := CASE WHEN snowflake_left THEN format('s %s %s', op, operand)
                      ELSE format('%s %s s', operand, op) END;
    reference text := CASE WHEN snowflake_left THEN format('s::bigint %s (%s)::bigint', op, operand)
                           ELSE format('(%s)::bigint %s s::bigint', operand, op) END;
BEGIN
    EXECUTE format('CREATE TEMP VIEW resolve_v AS SELECT s, %s AS r FROM ops_t', expr);
    -- the operator(s) the parser chose
    SELECT string_agg(format('%s %s %s', o.oprleft::regtype, o.oprname, o.oprright::regtype), ', ')
      INTO signature
      FROM pg_depend d
      JOIN pg_rewrite w ON w.oid = d.objid
      JOIN pg_operator o ON o.oid = d.refobjid
     WHERE d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_operator'::regclass
       AND w.ev_class = 'resolve_v'::regclass;
    SELECT string_agg(CASE WHEN r THEN 't' ELSE 'f' END, '' ORDER BY s) INTO answers FROM resolve_v;
    -- the same comparison on bigint
    EXECUTE format('SELECT bool_and((%s) = (%s)) FROM ops_t', expr, reference) INTO correct;
    DROP VIEW resolve_v;
EXCEPTION WHEN others THEN
    signature := 'ERROR: ' || SQLERRM;
END $$;
SELECT operand, CASE WHEN l THEN 'snowflake OP operand' ELSE 'operand OP snowflake' END AS form,
       op, r.signature, r.answers, r.correct
FROM (VALUES (1, '''5''::smallint'), (2, '5'), (3, '''5''::bigint'), (4, '''5'''),
             (5, 'h'), (6, 'i'), (7, 'b'), (8, 't')) operands(k, operand),
     (VALUES (true), (false)) sides(l),
     (VALUES (1, '='), (2, '<>'), (3, '<'), (4, '<='), (5, '>'), (6, '>=')) ops(j, op),
     LATERAL pg_temp.resolve(operand, l, op) r
ORDER BY k, l DESC, j;
-- larger literals: a bigint literal, the maximum
SELECT s = 5000000000 AS eq, s < 5000000000 AS lt, 5000000000 > s AS gt_r,
       s < 9223372036854775807 AS lt_max, 9223372036854775807 >= s AS ge_max_r
FROM ops_t ORDER BY s;
-- IN, BETWEEN, ANY
SELECT s, s IN (4, 6) AS in_ints, s IN (4::bigint, 6::bigint) AS in_bigints,
       s BETWEEN 5 AND 6 AS between_ints, s = ANY (ARRAY[5, 6]) AS any_int4s,
       s = ANY (ARRAY[5, 6]::bigint[]) AS any_int8s, s NOT IN (h, i, b) AS not_in_columns
FROM ops_t ORDER BY s;

-- parameters: bigint, integer, smallint and untyped, on either side
PREPARE cmp_bigint(bigint) AS
    SELECT s, s = $1 AS eq, s <> $1 AS ne, s < $1 AS lt, s <= $1 AS le, s > $1 AS gt, s >= $1 AS ge,
           $1 = s AS r_eq, $1 <> s AS r_ne, $1 < s AS r_lt, $1 <= s AS r_le, $1 > s AS r_gt, $1 >= s AS r_ge
    FROM ops_t ORDER BY s;
PREPARE cmp_int(integer) AS
    SELECT s, s = $1 AS eq, s <> $1 AS ne, s < $1 AS lt, s <= $1 AS le, s > $1 AS gt, s >= $1 AS ge,
           $1 = s AS r_eq, $1 <> s AS r_ne, $1 < s AS r_lt, $1 <= s AS r_le, $1 > s AS r_gt, $1 >= s AS r_ge
    FROM ops_t ORDER BY s;
PREPARE cmp_smallint(smallint) AS
    SELECT s, s = $1 AS eq, s <> $1 AS ne, s < $1 AS lt, s <= $1 AS le, s > $1 AS gt, s >= $1 AS ge,
           $1 = s AS r_eq, $1 <> s AS r_ne, $1 < s AS r_lt, $1 <= s AS r_le, $1 > s AS r_gt, $1 >= s AS r_ge
    FROM ops_t ORDER BY s;
PREPARE cmp_untyped AS
    SELECT s, s = $1 AS eq, s <> $1 AS ne, s < $1 AS lt, s <= $1 AS le, s > $1 AS gt, s >= $1 AS ge
    FROM ops_t ORDER BY s;
EXECUTE cmp_bigint(5);
EXECUTE cmp_int(5);
EXECUTE cmp_smallint(5);
EXECUTE cmp_untyped(5);
SELECT name, parameter_types FROM pg_prepared_statements WHERE name LIKE 'cmp%' ORDER BY name;
-- the generic plans compare with the parameter as it is (snowflake OP its type)
SET plan_cache_mode = force_generic_plan;
PREPARE where_bigint(bigint) AS SELECT s FROM ops_t WHERE s >= $1 AND $1 <> s;
PREPARE where_int(integer) AS SELECT s FROM ops_t WHERE s >= $1 AND $1 <> s;
PREPARE where_smallint(smallint) AS SELECT s FROM ops_t WHERE s >= $1 AND $1 <> s;
EXPLAIN (VERBOSE, COSTS OFF) EXECUTE where_bigint(5);
EXPLAIN (VERBOSE, COSTS OFF) EXECUTE where_int(5);
EXPLAIN (VERBOSE, COSTS OFF) EXECUTE where_smallint(5);
EXECUTE where_bigint(5);
EXECUTE where_int(5);
EXECUTE where_smallint(5);
RESET plan_cache_mode;
DEALLOCATE ALL;
DROP TABLE ops_t;

--
-- JSON: a snowflake is a JSON string, a bigint stays a number
--
SELECT to_json(9223372036854775807::snowflake) AS json_snowflake,
       to_jsonb(9223372036854775807::snowflake) AS jsonb_snowflake,
       to_json(9223372036854775807::bigint) AS json_bigint,
       to_jsonb(9223372036854775807::bigint) AS jsonb_bigint;
SELECT json_typeof(to_json(1::snowflake)) AS snowflake_kind, jsonb_typeof(to_jsonb(1::snowflake)) AS snowflake_kindb,
       json_typeof(to_json(1::bigint)) AS bigint_kind, jsonb_typeof(to_jsonb(1::bigint)) AS bigint_kindb;
SELECT (to_jsonb(7167350074945572864::snowflake) #>> '{}')::snowflake = 7167350074945572864 AS json_round_trip;
CREATE TABLE json_t (id snowflake, ref bigint, note text);
INSERT INTO json_t VALUES (7167350074945572864, 7167350074945572864, 'x');
SELECT row_to_json(json_t) FROM json_t;
SELECT to_jsonb(json_t) FROM json_t;
SELECT json_build_object('id', id, 'ref', ref) AS obj, json_agg(id) AS agg FROM json_t GROUP BY id, ref;
SELECT array_to_json(ARRAY[1, 9223372036854775807]::snowflake[]) AS arr;
DROP TABLE json_t;

--
-- Operator classes
--
-- snowflake's B-tree and hash classes are members of core's integer_ops
-- families, complete (amvalidate) with the classes of smallint, integer and
-- bigint; not DEFAULT, so that an index on a snowflake column gets int8_ops
SELECT opcname, amname, opcdefault, amvalidate(c.oid) AS valid
FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod
WHERE opcintype = 'snowflake'::regtype ORDER BY amname, opcname;
SELECT c.opcname, a.amname, f.opfname AS family
FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod JOIN pg_opfamily f ON f.oid = c.opcfamily
WHERE c.opcintype = 'snowflake'::regtype ORDER BY a.amname, c.opcname;
SELECT amvalidate(c.oid) AS int8_ops_valid FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod
WHERE c.opcname = 'int8_ops' AND a.amname IN ('btree', 'hash');
-- the members of core's families that are ours, each involving snowflake,
-- each bound to our class of its access method (so that DROP EXTENSION and
-- pg_upgrade see them as ours; see snowflake_repair_integer_ops())
SELECT a.amname, o.amopstrategy, o.amoplefttype::regtype, o.amoprighttype::regtype, o.amopopr::regoperator,
       (SELECT c.opcname FROM pg_depend r JOIN pg_opclass c ON c.oid = r.refobjid
         WHERE r.classid = 'pg_amop'::regclass AND r.objid = o.oid AND r.refclassid = 'pg_opclass'::regclass
           AND r.deptype = 'i') AS member_of
FROM pg_amop o JOIN pg_opfamily f ON f.oid = o.amopfamily JOIN pg_am a ON a.oid = f.opfmethod
WHERE f.opfname = 'integer_ops' AND 'snowflake'::regtype IN (o.amoplefttype, o.amoprighttype)
ORDER BY a.amname, o.amoplefttype::regtype::text, o.amoprighttype::regtype::text, o.amopstrategy;
SELECT a.amname, p.amprocnum, p.amproclefttype::regtype, p.amprocrighttype::regtype, p.amproc::regprocedure,
       (SELECT c.opcname FROM pg_depend r JOIN pg_opclass c ON c.oid = r.refobjid
         WHERE r.classid = 'pg_amproc'::regclass AND r.objid = p.oid AND r.refclassid = 'pg_opclass'::regclass
           AND r.deptype = 'i') AS member_of
FROM pg_amproc p JOIN pg_opfamily f ON f.oid = p.amprocfamily JOIN pg_am a ON a.oid = f.opfmethod
WHERE f.opfname = 'integer_ops' AND 'snowflake'::regtype IN (p.amproclefttype, p.amprocrighttype)
ORDER BY a.amname, p.amproclefttype::regtype::text, p.amprocrighttype::regtype::text, p.amprocnum;
-- comparison operators are leakproof, and merge/hash-joinable where they should be
SELECT o.oprname, count(*) AS operators, bool_and(p.proleakproof) AS leakproof,
       bool_and(o.oprcanmerge) AS merges, bool_and(o.oprcanhash) AS hashes
FROM pg_operator o JOIN pg_proc p ON p.oid = o.oprcode
WHERE 'snowflake'::regtype IN (o.oprleft, o.oprright)
GROUP BY o.oprname ORDER BY o.oprname;
-- (the hash functions are bigint's, with its labels: not leakproof; sql/labels.sql)
SELECT proname, count(*) AS functions, bool_and(proleakproof) AS leakproof
FROM pg_proc
WHERE proname ~ '^_snowflake_(eq|ne|lt|le|gt|ge|cmp|hash|hash_extended)$'
GROUP BY proname ORDER BY proname;
-- hashing agrees with bigint's
SELECT x, _snowflake_hash(x::snowflake) = hashint8(x) AS hash_matches,
       _snowflake_hash_extended(x::snowflake, 0) = hashint8extended(x, 0) AS extended_0_matches,
       _snowflake_hash_extended(x::snowflake, 42) = hashint8extended(x, 42) AS extended_42_matches,
       x > 2147483647 OR _snowflake_hash(x::snowflake) = hashint4(x::integer) AS integer_hash_matches,
       x > 32767 OR _snowflake_hash(x::snowflake) = hashint2(x::smallint) AS smallint_hash_matches
FROM (VALUES (0::bigint), (1), (4194305), (7167350074945572864), (9223372036854775807)) v(x);
-- ordering is numeric, not textual
SELECT x FROM (VALUES ('10'::snowflake), ('9'), ('100'), ('0'), ('9223372036854775807')) v(x) ORDER BY x;
SELECT x FROM (VALUES ('10'::snowflake), ('9'), ('100'), ('0'), ('9223372036854775807')) v(x) ORDER BY x DESC;
SELECT count(DISTINCT x) AS distinct_values FROM (VALUES ('10'::snowflake), ('10'), ('9'), ('09')) v(x);

--
-- Index use for time windows, on a bigint and on a snowflake primary key.
-- 100000 ids, one a second from 2024-06-01 00:00:00 UTC, worker 1, sequence n % 7.
--
CREATE TABLE ev_b (id bigint PRIMARY KEY, n integer NOT NULL);
CREATE TABLE ev_s (id snowflake PRIMARY KEY, n integer NOT NULL);
INSERT INTO ev_b
SELECT snowflake_from_timestamp('2024-06-01 00:00:00+00'::timestamptz + g * interval '1 second')
       + (1 << 12) + g % 7, g
FROM generate_series(0, 99999) g;
INSERT INTO ev_s SELECT id, n FROM ev_b;
VACUUM ANALYZE ev_b, ev_s;
EXPLAIN (COSTS OFF) SELECT * FROM ev_b
WHERE id >= snowflake_from_timestamp('2024-06-01 10:00:00+00') AND id < snowflake_from_timestamp('2024-06-01 10:01:00+00');
EXPLAIN (COSTS OFF) SELECT * FROM ev_s
WHERE id >= snowflake_from_timestamp('2024-06-01 10:00:00+00') AND id < snowflake_from_timestamp('2024-06-01 10:01:00+00');
EXPLAIN (COSTS OFF) SELECT count(*) FROM ev_b
WHERE id >= snowflake_from_timestamp('2024-06-01 10:00:00+00') AND id < snowflake_from_timestamp('2024-06-01 11:00:00+00');
EXPLAIN (COSTS OFF) SELECT count(*) FROM ev_s
WHERE id >= snowflake_from_timestamp('2024-06-01 10:00:00+00') AND id < snowflake_from_timestamp('2024-06-01 11:00:00+00');
SELECT min(n), max(n), count(*) FROM ev_b
WHERE id >= snowflake_from_timestamp('2024-06-01 10:00:00+00') AND id < snowflake_from_timestamp('2024-06-01 10:01:00+00');
SELECT min(n), max(n), count(*) FROM ev_s
WHERE id >= snowflake_from_timestamp('2024-06-01 10:00:00+00') AND id < snowflake_from_timestamp('2024-06-01 10:01:00+00');
SELECT count(*) FROM ev_s
WHERE id >= snowflake_from_timestamp('2024-06-01 10:00:00+00') AND id < snowflake_from_timestamp('2024-06-01 11:00:00+00');
-- point lookups by integer literal, bigint, text and from the other side use the key
EXPLAIN (COSTS OFF) SELECT n FROM ev_s WHERE id = 5;
EXPLAIN (COSTS OFF) SELECT n FROM ev_s WHERE 55233950515204102 = id;
EXPLAIN (COSTS OFF) SELECT n FROM ev_s WHERE id = '55233950515204102';
-- 2024-06-01 10:00:00 is row 36000: worker 1, sequence 36000 % 7 = 6
SELECT n FROM ev_s WHERE id = 55233950515204102;
SELECT n FROM ev_s WHERE 55233950515204102 = id;
SELECT n FROM ev_s WHERE id = '55233950515204102';
SELECT n FROM ev_b WHERE id = '55233950515204102'::snowflake;
SELECT count(*) AS none FROM ev_s WHERE id = 5 OR id = 55233950515204101;
-- newest first comes straight from the index
EXPLAIN (COSTS OFF) SELECT n FROM ev_s ORDER BY id DESC LIMIT 3;
SELECT n FROM ev_s ORDER BY id DESC LIMIT 3;
DROP TABLE ev_b, ev_s;

--
-- [t1, t2) selects exactly the ids made in that window: for each millisecond
-- around the boundaries, the smallest and largest id of the millisecond and
-- ids of workers 0, 1 and 1023.
--
CREATE TABLE win_b (id bigint PRIMARY KEY);
INSERT INTO win_b
SELECT snowflake_from_timestamp('2024-06-01 12:00:00+00'::timestamptz + ms * interval '1 ms')
       + (w << 12) + q
FROM generate_series(-2, 6) ms, (VALUES (0), (1), (1023)) workers(w), (VALUES (0), (1), (4095)) seqs(q);
CREATE TABLE win_s (id snowflake PRIMARY KEY);
INSERT INTO win_s SELECT id FROM win_b;
-- exact millisecond boundaries: [.000, .003) holds ms 0, 1, 2
SELECT to_char(d.ts, 'HH24:MI:SS.MS') AS ms, count(*) AS ids, min(d.worker_id) AS min_worker,
       max(d.worker_id) AS max_worker, min(d.sequence) AS min_seq, max(d.sequence) AS max_seq
FROM win_b, snowflake_decode(id) d
WHERE id >= snowflake_from_timestamp('2024-06-01 12:00:00+00')
  AND id < snowflake_from_timestamp('2024-06-01 12:00:00.003+00')
GROUP BY d.ts ORDER BY d.ts;
SELECT to_char(d.ts, 'HH24:MI:SS.MS') AS ms, count(*) AS ids
FROM win_s, snowflake_decode(id) d
WHERE id >= snowflake_from_timestamp('2024-06-01 12:00:00+00')
  AND id < snowflake_from_timestamp('2024-06-01 12:00:00.003+00')
GROUP BY d.ts ORDER BY d.ts;
-- the largest id before the window and the smallest at its end are outside,
-- the smallest at its start and the largest before its end are inside
SELECT snowflake_from_timestamp('2024-06-01 12:00:00+00') - 1 AS last_before,
       snowflake_from_timestamp('2024-06-01 12:00:00+00') AS first_in,
       snowflake_from_timestamp('2024-06-01 12:00:00.003+00') - 1 AS last_in,
       snowflake_from_timestamp('2024-06-01 12:00:00.003+00') AS first_after;
SELECT (SELECT count(*) FROM win_b WHERE id = snowflake_from_timestamp('2024-06-01 12:00:00+00') - 1) AS last_before_exists,
       (SELECT count(*) FROM win_b WHERE id = snowflake_from_timestamp('2024-06-01 12:00:00.003+00') - 1) AS last_in_exists,
       (SELECT count(*) FROM win_s
         WHERE id >= snowflake_from_timestamp('2024-06-01 12:00:00+00')
           AND id < snowflake_from_timestamp('2024-06-01 12:00:00.003+00')
           AND id IN (snowflake_from_timestamp('2024-06-01 12:00:00+00') - 1,
                      snowflake_from_timestamp('2024-06-01 12:00:00+00'),
                      snowflake_from_timestamp('2024-06-01 12:00:00.003+00') - 1,
                      snowflake_from_timestamp('2024-06-01 12:00:00.003+00'))) AS boundary_ids_selected;
-- sub-millisecond bounds work on whole milliseconds: [.000999, .003999) holds ms 0, 1, 2
SELECT to_char(d.ts, 'HH24:MI:SS.MS') AS ms, count(*) AS ids
FROM win_b, snowflake_decode(id) d
WHERE id >= snowflake_from_timestamp('2024-06-01 12:00:00.000999+00')
  AND id < snowflake_from_timestamp('2024-06-01 12:00:00.003999+00')
GROUP BY d.ts ORDER BY d.ts;
-- a window of one millisecond, and an empty one
SELECT count(*) AS one_ms FROM win_s
WHERE id >= snowflake_from_timestamp('2024-06-01 11:59:59.999+00') AND id < snowflake_from_timestamp('2024-06-01 12:00:00+00');
SELECT count(*) AS empty FROM win_s
WHERE id >= snowflake_from_timestamp('2024-06-01 12:00:00.001+00') AND id < snowflake_from_timestamp('2024-06-01 12:00:00.0015+00');
-- the same windows agree with decoding, for both column types
SELECT bool_and((id >= snowflake_from_timestamp(t1) AND id < snowflake_from_timestamp(t2))
                = (snowflake_to_timestamp(id) >= date_trunc('milliseconds', t1)
                   AND snowflake_to_timestamp(id) < date_trunc('milliseconds', t2))) AS bigint_agrees,
       count(*) AS checks
FROM win_b,
     (SELECT '2024-06-01 12:00:00+00'::timestamptz + a * interval '0.7 ms' AS t1,
             '2024-06-01 12:00:00+00'::timestamptz + b * interval '0.7 ms' AS t2
      FROM generate_series(-4, 10) a, generate_series(-4, 10) b) bounds;
SELECT bool_and((id >= snowflake_from_timestamp(t1) AND id < snowflake_from_timestamp(t2))
                = (snowflake_to_timestamp(id) >= date_trunc('milliseconds', t1)
                   AND snowflake_to_timestamp(id) < date_trunc('milliseconds', t2))) AS snowflake_agrees,
       count(*) AS checks
FROM win_s,
     (SELECT '2024-06-01 12:00:00+00'::timestamptz + a * interval '0.7 ms' AS t1,
             '2024-06-01 12:00:00+00'::timestamptz + b * interval '0.7 ms' AS t2
      FROM generate_series(-4, 10) a, generate_series(-4, 10) b) bounds;
DROP TABLE win_b, win_s;

--
-- BRIN minmax on a snowflake column (no B-tree on the table)
--
CREATE TABLE brin_t (id snowflake NOT NULL, n integer NOT NULL);
INSERT INTO brin_t
SELECT snowflake_from_timestamp('2024-06-01 00:00:00+00'::timestamptz + g * interval '1 second') + (1 << 12), g
FROM generate_series(0, 99999) g;
CREATE INDEX brin_t_id ON brin_t USING brin (id);
ANALYZE brin_t;
-- the documented idiom, with snowflake_from_timestamp() returning bigint
EXPLAIN (COSTS OFF) SELECT count(*) FROM brin_t
WHERE id >= snowflake_from_timestamp('2024-06-01 01:00:00+00') AND id < snowflake_from_timestamp('2024-06-01 02:00:00+00');
SELECT count(*), min(n), max(n) FROM brin_t
WHERE id >= snowflake_from_timestamp('2024-06-01 01:00:00+00') AND id < snowflake_from_timestamp('2024-06-01 02:00:00+00');
-- the same with snowflake bounds
EXPLAIN (COSTS OFF) SELECT count(*) FROM brin_t
WHERE id >= snowflake_from_timestamp('2024-06-01 01:00:00+00')::snowflake
  AND id < snowflake_from_timestamp('2024-06-01 02:00:00+00')::snowflake;
SELECT count(*), min(n), max(n) FROM brin_t
WHERE id >= snowflake_from_timestamp('2024-06-01 01:00:00+00')::snowflake
  AND id < snowflake_from_timestamp('2024-06-01 02:00:00+00')::snowflake;
DROP TABLE brin_t;

--
-- Hash joins between a snowflake column and bigint and integer columns (the
-- cross-type = is hashable, not mergeable); merge joins between snowflake columns
--
CREATE TABLE join_s (id snowflake NOT NULL, n integer NOT NULL);
CREATE TABLE join_b (id bigint NOT NULL, n integer NOT NULL, i integer NOT NULL);
INSERT INTO join_s SELECT g * 3, g FROM generate_series(1, 3000) g;
INSERT INTO join_b SELECT g * 2, g, g * 2 FROM generate_series(1, 3000) g;
ANALYZE join_s, join_b;
SET enable_mergejoin = off;
SET enable_nestloop = off;
SELECT pg_temp.plan_nodes('SELECT count(*) FROM join_s s JOIN join_b b ON s.id = b.id') AS snowflake_bigint;
SELECT count(*), min(b.id), max(b.id), sum(s.n), sum(b.n) FROM join_s s JOIN join_b b ON s.id = b.id;
SELECT pg_temp.plan_nodes('SELECT count(*) FROM join_b b JOIN join_s s ON b.id = s.id') AS bigint_snowflake;
SELECT count(*) FROM join_b b JOIN join_s s ON b.id = s.id;
SELECT pg_temp.plan_nodes('SELECT count(*) FROM join_s s JOIN join_b b ON s.id = b.i') AS snowflake_integer;
SELECT count(*) FROM join_s s JOIN join_b b ON s.id = b.i;
SELECT pg_temp.plan_nodes('SELECT count(*) FROM join_b b JOIN join_s s USING (id)') AS using_bigint;
SELECT count(*), pg_typeof(min(id)) FROM join_b b JOIN join_s s USING (id);
SELECT s.id, s.n, b.n FROM join_s s JOIN join_b b ON s.id = b.id ORDER BY s.id LIMIT 3;
RESET enable_mergejoin;
SET enable_hashjoin = off;
SELECT pg_temp.plan_nodes('SELECT count(*) FROM join_s s JOIN join_s t ON s.id = t.id') AS snowflake_snowflake;
SELECT count(*) FROM join_s s JOIN join_s t ON s.id = t.id;
RESET enable_hashjoin;
RESET enable_nestloop;
-- the answer every plan must give
SELECT count(*) AS expected_matches FROM generate_series(1, 6000) x WHERE x % 6 = 0;
-- equivalence classes mixing the two types plan and run
SELECT s.id, s.n, b.n FROM join_s s JOIN join_b b ON s.id = b.id WHERE s.id = 6;
SELECT s.id, s.n, b.n FROM join_s s JOIN join_b b ON s.id = b.id WHERE b.id = 6;
SELECT s.id, s.n, b.n FROM join_s s JOIN join_b b ON s.id = b.id JOIN join_s s2 ON s2.id = b.id WHERE s2.id = 12::smallint;
-- grouping and DISTINCT by hashing and by sorting
SELECT count(*) FROM (SELECT DISTINCT id FROM (SELECT id FROM join_s UNION ALL SELECT id FROM join_s) u) d;
SET enable_hashagg = off;
SELECT count(*) FROM (SELECT DISTINCT id FROM (SELECT id FROM join_s UNION ALL SELECT id FROM join_s) u) d;
RESET enable_hashagg;
DROP TABLE join_s, join_b;
-- snowflake -> integer, refusing what does not fit
SELECT 2147483647::snowflake::integer AS fits, pg_typeof(5::snowflake::integer),
       32767::snowflake::smallint AS fits_smallint, pg_typeof(5::snowflake::smallint);
SELECT 2147483648::snowflake::integer;
SELECT 32768::snowflake::smallint;
-- min and max are bigint's (snowflake widens to bigint), so that they read
-- the index under any search_path
SELECT min(x::snowflake), max(x::snowflake), pg_typeof(max(x::snowflake)) FROM generate_series(1, 10) x;
SELECT min(x::snowflake), max(x::snowflake) FROM generate_series(1, 0) x;
CREATE TABLE agg_t (id snowflake PRIMARY KEY);
INSERT INTO agg_t SELECT x FROM generate_series(1, 1000) x;
ANALYZE agg_t;
SELECT pg_temp.plan_nodes('SELECT max(id) FROM agg_t') AS max_by_index;
SELECT max(id), min(id) FROM agg_t;
DROP TABLE agg_t;

--
-- Mixing with smallint, integer and bigint: snowflake sits between integer and
-- bigint. Each form: its result type and value.
--
CREATE TABLE mix_t (id snowflake, b bigint, i integer, h smallint);
INSERT INTO mix_t VALUES (7, 8, 9, 10), (NULL, 8, 9, 10);
SELECT form, pg_typeof(v)::text AS resolves_to, v::text AS value
FROM (
    SELECT 1, 'COALESCE(id, 0)', COALESCE(id, 0) FROM mix_t WHERE id IS NULL
    UNION ALL SELECT 2, 'COALESCE(id, i)', COALESCE(id, i) FROM mix_t WHERE id IS NULL
    UNION ALL SELECT 3, 'COALESCE(id, h)', COALESCE(id, h) FROM mix_t WHERE id IS NULL
    UNION ALL SELECT 4, 'CASE WHEN id > 5 THEN id ELSE 0 END', CASE WHEN id > 5 THEN id ELSE 0 END FROM mix_t WHERE id IS NOT NULL
    UNION ALL SELECT 5, 'GREATEST(id, 3)', GREATEST(id, 3) FROM mix_t WHERE id IS NOT NULL
    UNION ALL SELECT 6, 'LEAST(id, 3)', LEAST(id, 3) FROM mix_t WHERE id IS NOT NULL
    UNION ALL SELECT 7, 'NULLIF(id, 7)', NULLIF(id, 7) FROM mix_t WHERE id IS NOT NULL
    ) AS snowflake_forms(k, form, v)
ORDER BY k;
SELECT pg_typeof(ARRAY[id, 1]) AS array_type, ARRAY[id, 1] AS array_value,
       pg_typeof(ARRAY[1, id]) AS array_type_2, pg_typeof(ARRAY[id, h]) AS with_smallint
FROM mix_t WHERE id IS NOT NULL;
-- with bigint the common type is bigint
SELECT pg_typeof(COALESCE(id, b)) AS coalesce_bigint, COALESCE(id, b) AS value,
       pg_typeof(GREATEST(id, b)) AS greatest_bigint, GREATEST(id, b) AS greatest,
       pg_typeof(CASE WHEN true THEN id ELSE 5::bigint END) AS case_bigint,
       pg_typeof(ARRAY[id, b]) AS array_bigint
FROM mix_t WHERE id IS NOT NULL;
SELECT pg_typeof(x) AS union_type, x FROM (SELECT id FROM mix_t UNION SELECT 1::bigint) u(x) ORDER BY x;
SELECT pg_typeof(x) AS union_type, x FROM (SELECT id FROM mix_t UNION SELECT 1) u(x) ORDER BY x;
SELECT pg_typeof(x) AS values_type, x FROM (VALUES ('5'::snowflake), (6), (7::smallint)) v(x) ORDER BY x;
CREATE TABLE mix_b (id bigint);
INSERT INTO mix_b VALUES (7), (8);
SELECT pg_typeof(id) AS using_type, id FROM mix_t JOIN mix_b USING (id);
SELECT pg_typeof(id) AS full_using_type, id FROM mix_t FULL JOIN mix_b USING (id) ORDER BY id;
-- arithmetic is bigint's
SELECT id + 1 AS plus, pg_typeof(id + 1), id - id AS minus, pg_typeof(id * 2::bigint), id % 4 AS modulo
FROM mix_t WHERE id IS NOT NULL;
-- functions on bigint take a snowflake; snowflake_decode of a quoted id and of an integer resolve
SELECT pg_typeof(abs(id)) AS abs_type, int8send(id) AS int8send FROM mix_t WHERE id IS NOT NULL;
SELECT (snowflake_decode('7167350074945572864')).worker_id AS quoted,
       (snowflake_decode(5)).sequence AS integer_arg,
       (snowflake_decode(5::bigint)).sequence AS bigint_arg,
       (snowflake_decode('5'::snowflake)).sequence AS snowflake_arg;
SELECT count(*) AS decode_overloads FROM pg_proc WHERE proname = 'snowflake_decode';
-- assignment: integer, smallint, bigint and snowflake values into the other types' columns
INSERT INTO mix_t (id, b, i, h) VALUES (11::smallint, '12'::snowflake, '13'::snowflake, '14'::snowflake);
INSERT INTO mix_t (id) SELECT b FROM mix_t WHERE b = 8 LIMIT 1;
SELECT id, b, i, h FROM mix_t WHERE id IN (8, 11) ORDER BY id;
-- sentinel idioms with a negative integer give what they give on bigint: the
-- integer widens to snowflake exactly, and the value prints and reads back;
-- decoding such a value is refused
SELECT form, pg_typeof(v)::text AS resolves_to, v::text AS value
FROM (
    SELECT 1, 'COALESCE(id, -1)', COALESCE(id, -1) FROM mix_t WHERE id IS NULL
    UNION ALL SELECT 2, 'GREATEST(id, -1::smallint)', GREATEST(id, -1::smallint) FROM mix_t WHERE id IS NOT NULL
    UNION ALL SELECT 3, 'CASE WHEN id > 7 THEN id ELSE -1 END', CASE WHEN id > 7 THEN id ELSE -1 END FROM mix_t WHERE id IS NOT NULL
    UNION ALL SELECT 4, 'LEAST(id, -2147483648)', LEAST(id, -2147483648) FROM mix_t WHERE id IS NOT NULL
    ) AS sentinel_forms(k, form, v)
ORDER BY k;
SELECT count(*) AS unmatched FROM mix_b b LEFT JOIN mix_t t ON t.id = b.id + 1 WHERE COALESCE(t.id, -1) = -1;
SELECT COALESCE(id, -1)::text::snowflake AS text_round_trip, to_jsonb(COALESCE(id, -1)) AS json,
       to_jsonb(COALESCE(id, -1))::snowflake AS json_round_trip
FROM mix_t WHERE id IS NULL;
SELECT snowflake_decode(COALESCE(id, -1)) FROM mix_t WHERE id IS NULL;
-- a negative bigint and negative text are sentinels too
INSERT INTO mix_t (id) VALUES (-1::bigint);
SELECT COALESCE(id, '-1') AS text_sentinel FROM mix_t WHERE id IS NULL;
DELETE FROM mix_t WHERE id = -1;
-- numeric, real and double precision do not mix implicitly (see the casts in
-- the install script): a cast to numeric or bigint says which arithmetic
SELECT id::numeric / 1000.0 AS numeric_division, id::numeric * 1.5 AS numeric_product,
       id::bigint = 7.0 AS numeric_comparison, round(id::numeric, -1) AS rounded,
       COALESCE(id::numeric, 1.5) AS numeric_coalesce, id::double precision * 0.5 AS double_product
FROM mix_t WHERE id IS NOT NULL;
-- (terse: PostgreSQL 19 words this error's hint differently)
\set VERBOSITY terse
SELECT id / 1000.0 FROM mix_t;
\set VERBOSITY default
SELECT COALESCE(id, 1.5) FROM mix_t;
DROP TABLE mix_t, mix_b;
-- no conversions by text parsing: these fail when the statement is analysed
SELECT 1::snowflake::interval;
SELECT 20240101::snowflake::date;
SELECT '1'::snowflake::boolean;
CREATE TABLE text_t (id snowflake);
INSERT INTO text_t VALUES (true);
INSERT INTO text_t VALUES ('1'::text);
INSERT INTO text_t VALUES (1.5);
INSERT INTO text_t VALUES (now());
SELECT count(*) AS rows_inserted FROM text_t;
-- explicit conversions to and from text remain, as for every type
SELECT '42'::text::snowflake AS from_text, 42::snowflake::text AS to_text, pg_typeof(42::snowflake::text);
DROP TABLE text_t;
-- index use with smallint, integer, bigint literals, parameters and columns, on either side
CREATE TABLE idx_t (id snowflake PRIMARY KEY, b bigint NOT NULL, i integer NOT NULL, h smallint NOT NULL);
INSERT INTO idx_t SELECT g, g, g, g % 30000 FROM generate_series(1, 50000) g;
CREATE TABLE probe_t (b bigint, i integer, h smallint);
INSERT INTO probe_t VALUES (5, 5, 5);
ANALYZE idx_t, probe_t;
PREPARE idx_bigint(bigint) AS SELECT id FROM idx_t WHERE id = $1;
PREPARE idx_int(integer) AS SELECT id FROM idx_t WHERE $1 = id;
PREPARE idx_smallint(smallint) AS SELECT id FROM idx_t WHERE id <= $1;
SET plan_cache_mode = force_generic_plan;
SELECT q, pg_temp.plan_nodes(q) AS plan
FROM unnest(ARRAY[
    'SELECT id FROM idx_t WHERE id = 5',
    'SELECT id FROM idx_t WHERE 5 = id',
    'SELECT id FROM idx_t WHERE id = 5::bigint',
    'SELECT id FROM idx_t WHERE id <= 2::smallint',
    'SELECT id FROM idx_t WHERE id = ANY (ARRAY[5, 6]::bigint[])',
    'SELECT id FROM idx_t WHERE id IN (5::bigint, 6::bigint)',
    'SELECT id FROM idx_t WHERE 3::smallint >= id',
    'SELECT id FROM idx_t WHERE id = ''5''',
    'SELECT id FROM idx_t WHERE id IN (5, 6)',
    'SELECT id FROM idx_t WHERE id BETWEEN 5 AND 7',
    'EXECUTE idx_bigint(5)',
    'EXECUTE idx_int(5)',
    'EXECUTE idx_smallint(5)',
    'SELECT t.id FROM probe_t p JOIN idx_t t ON t.id = p.b',
    'SELECT t.id FROM probe_t p JOIN idx_t t ON p.i = t.id',
    'SELECT t.id FROM probe_t p JOIN idx_t t ON t.id = p.h']) AS q;
RESET plan_cache_mode;
EXECUTE idx_bigint(5);
EXECUTE idx_int(5);
EXECUTE idx_smallint(2);
SELECT id FROM idx_t WHERE id = ANY (ARRAY[6, 5, 5, 70000]::bigint[]) ORDER BY id;
SELECT id FROM idx_t WHERE id = ANY (ARRAY[6, 5, 5, 70000]::integer[]) ORDER BY id;
SELECT id FROM idx_t WHERE id = ANY (ARRAY[6, 5, 5, 700]::smallint[]) ORDER BY id DESC;
DEALLOCATE ALL;
DROP TABLE idx_t, probe_t;

--
-- JSON back to snowflake: a JSON integer, or a JSON string of its decimal digits
--
SELECT ('{"id": "7167350074945572864"}'::jsonb -> 'id')::snowflake AS from_jsonb_string,
       ('{"id": 7167350074945572864}'::jsonb -> 'id')::snowflake AS from_jsonb_number,
       ('{"id": "7167350074945572864"}'::json -> 'id')::snowflake AS from_json_string,
       ('{"id": 42}'::json -> 'id')::snowflake AS from_json_number,
       ('{"id": "7167350074945572864"}'::jsonb ->> 'id')::snowflake AS from_text;
SELECT (to_jsonb(x) #> '{}')::snowflake = x AS jsonb_round_trip, (to_json(x))::snowflake = x AS json_round_trip
FROM (VALUES (0::snowflake), (9223372036854775807), (-1), (-9223372036854775808)) v(x);
SELECT ('{"id": -1}'::jsonb -> 'id')::snowflake AS from_negative_number,
       ('{"id": "-9223372036854775808"}'::jsonb -> 'id')::snowflake AS from_min_string;
SELECT ('{"id": null}'::jsonb -> 'id')::snowflake;
SELECT ('{"id": true}'::jsonb -> 'id')::snowflake;
SELECT ('{"id": [1]}'::jsonb -> 'id')::snowflake;
SELECT ('{"id": {}}'::jsonb -> 'id')::snowflake;
SELECT ('{"id": 1.5}'::jsonb -> 'id')::snowflake;
SELECT ('{"id": "x1"}'::jsonb -> 'id')::snowflake;
SELECT ('{"id": 9223372036854775808}'::jsonb -> 'id')::snowflake;
SELECT ('{"id": -9223372036854775809}'::jsonb -> 'id')::snowflake;

--
-- Window frames: RANGE with an offset over a snowflake ORDER BY (in_range)
--
CREATE TABLE win_t (id snowflake, n integer);
INSERT INTO win_t SELECT g * 3, g FROM generate_series(1, 8) g;
SELECT id, n,
       sum(n) OVER (ORDER BY id RANGE BETWEEN 5 PRECEDING AND CURRENT ROW) AS preceding_5,
       sum(n) OVER (ORDER BY id RANGE BETWEEN CURRENT ROW AND 6::bigint FOLLOWING) AS following_6,
       sum(n) OVER (ORDER BY id DESC RANGE BETWEEN 3::smallint PRECEDING AND 3 FOLLOWING) AS desc_3,
       count(*) OVER (ORDER BY id RANGE BETWEEN 9223372036854775807 PRECEDING AND 9223372036854775807 FOLLOWING) AS all_rows
FROM win_t ORDER BY id;
-- the same frames over the ids as bigint agree
SELECT bool_and(a = b) AS agrees_with_bigint FROM (
    SELECT sum(n) OVER (ORDER BY id RANGE BETWEEN 5 PRECEDING AND 4 FOLLOWING) AS a,
           sum(n) OVER (ORDER BY id::bigint RANGE BETWEEN 5 PRECEDING AND 4 FOLLOWING) AS b
    FROM win_t) w;
SELECT sum(n) OVER (ORDER BY id RANGE BETWEEN -1 PRECEDING AND CURRENT ROW) FROM win_t;
DROP TABLE win_t;

--
-- Every object of the extension a user sees carries a COMMENT: this lists the
-- members without one (it must be empty), and counts the members by kind.
-- Objects made along with another (array types, a view's row type) depend on
-- it internally and are not counted; they are members from PostgreSQL 17 on.
--
SELECT pg_describe_object(d.classid, d.objid, 0) AS without_comment
FROM pg_depend d
WHERE d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake')
  AND d.deptype = 'e'
  AND NOT EXISTS (SELECT FROM pg_depend i WHERE i.classid = d.classid AND i.objid = d.objid AND i.deptype = 'i')
  AND obj_description(d.objid, d.classid::regclass::name) IS NULL
ORDER BY 1;
SELECT d.classid::regclass AS kind, count(*) AS members
FROM pg_depend d
WHERE d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake')
  AND d.deptype = 'e'
  AND NOT EXISTS (SELECT FROM pg_depend i WHERE i.classid = d.classid AND i.objid = d.objid AND i.deptype = 'i')
GROUP BY 1 ORDER BY d.classid::regclass::text COLLATE "C";
-- support functions sort apart: \df snowflake* lists only these
SELECT p.oid::regprocedure AS listed_by_df_snowflake
FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake')
  AND p.proname LIKE 'snowflake%'
ORDER BY p.oid::regprocedure::text COLLATE "C";
