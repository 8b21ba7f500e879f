-- snowflake 1.1: 64-bit, time-ordered, cluster-unique ids.
-- Written as if frozen: a change after a release is an upgrade script. Each
-- object is created once, as 1.1 defines it; snowflake--1.0--1.1.sql brings a
-- 1.0 installation to the same catalog (test/t/125_upgrade.pl compares them).
-- Functions users call are named snowflake*; support functions (type I/O,
-- operators, index and planner support) are named _snowflake_* so that
-- \df snowflake* lists only the former. A function that reuses a core C
-- function carries that function's labels (sql/labels.sql compares them).
-- The extension is relocatable: PL/pgSQL functions pin their search_path and
-- find the extension's functions through pg_extension; SQL-standard bodies
-- (RETURN, BEGIN ATOMIC) are bound when made.
\echo Use "CREATE EXTENSION snowflake" to load this file. \quit

-- generation and status (generation needs shared_preload_libraries = 'snowflake')

CREATE FUNCTION snowflake_nextval() RETURNS bigint
    AS 'MODULE_PATHNAME', 'snowflake_nextval' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_nextval() IS 'the next id of this node: unique, strictly increasing';

CREATE FUNCTION snowflake_nextvals(n bigint) RETURNS SETOF bigint
    AS 'MODULE_PATHNAME', 'snowflake_nextvals' LANGUAGE C VOLATILE STRICT PARALLEL SAFE ROWS 1000;
COMMENT ON FUNCTION snowflake_nextvals(bigint) IS 'n increasing ids, reserved at once; n is 1 to 1000000';

CREATE FUNCTION snowflake_status(
    OUT worker_id integer, OUT epoch timestamptz, OUT last_id bigint,
    OUT restart_floor timestamptz, OUT lead_ms bigint, OUT lease_until timestamptz, OUT clock_regressions bigint, OUT borrowed_ms bigint,
    OUT waits bigint, OUT lease_extensions bigint, OUT generating boolean, OUT writer_stalled_ms bigint,
    OUT layout text, OUT window_until timestamptz, OUT registry_reached timestamptz, OUT registry_error text,
    OUT registry_clock_skew_ms bigint, OUT not_generating text)
    AS 'MODULE_PATHNAME', 'snowflake_status' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_status() IS 'the generator''s settings, position and counters; writer_stalled_ms: how long the lease writer has not answered (NULL: it answers); layout: snowflake.layout in force; window_until, registry_reached, registry_error, registry_clock_skew_ms: under snowflake.registry, the end of the granted window of id times, the registry''s last answer, the last failure since then (or its clock out of bounds), and how far its clock was ahead of this server''s at the last exchange; not_generating: why this server issues no id (NULL while it generates)';

CREATE VIEW snowflake_status AS SELECT * FROM snowflake_status();
COMMENT ON VIEW snowflake_status IS 'the generator''s settings, position and counters';

-- monitoring roles may read it (nothing in it is secret; it changes nothing)
REVOKE ALL ON FUNCTION snowflake_status() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION snowflake_status() TO pg_monitor;
GRANT SELECT ON snowflake_status TO pg_monitor;

-- a restored copy of another node (base backup or PITR started as a primary)
-- refuses its source's worker id until given its own, or until this is run
CREATE FUNCTION snowflake_adopt_worker_id(after timestamptz DEFAULT NULL) RETURNS integer
    AS 'MODULE_PATHNAME', 'snowflake_adopt_worker_id' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION snowflake_adopt_worker_id(timestamptz) IS
    'a restored copy takes over its source''s worker id, the source being gone for good; returns it; after: the time after which the source issued no id (refused without it while the clock is behind the lease''s)';
REVOKE ALL ON FUNCTION snowflake_adopt_worker_id(timestamptz) FROM PUBLIC;

-- a damaged lease file, or a lease taken under another epoch or layout (changed
-- on purpose): a new lease above every id this server can have issued, the
-- fence kept; superusers only
CREATE FUNCTION snowflake_repair_lease(above timestamptz DEFAULT NULL) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'snowflake_repair_lease' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION snowflake_repair_lease(timestamptz) IS
    'writes a new lease in place of a damaged one or of one taken under another epoch or layout, keeping the fence: ids continue after the clock plus the lease span and max_lead, or after "above"; returns that time';
REVOKE ALL ON FUNCTION snowflake_repair_lease(timestamptz) FROM PUBLIC;

-- the snowflake type: int8's representation, binary-coercible to bigint. Its
-- domain is every int8: text, binary and JSON input take a negative value (a
-- sentinel such as COALESCE(id, -1)) as every cast does, so that whatever a
-- snowflake column holds dumps, copies and replicates; no id is negative, and
-- decoding one is an error.

CREATE TYPE snowflake;

CREATE FUNCTION _snowflake_in(cstring) RETURNS snowflake
    AS 'MODULE_PATHNAME', 'snowflake_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION _snowflake_in(cstring) IS 'type input: the decimal value, -9223372036854775808 to 9223372036854775807 (a negative one is a sentinel, never an id)';
CREATE FUNCTION _snowflake_out(snowflake) RETURNS cstring
    AS 'MODULE_PATHNAME', 'snowflake_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION _snowflake_out(snowflake) IS 'type output: the decimal id';
CREATE FUNCTION _snowflake_recv(internal) RETURNS snowflake
    AS 'MODULE_PATHNAME', 'snowflake_recv' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION _snowflake_recv(internal) IS 'binary input: int8''s wire form';
CREATE FUNCTION _snowflake_send(snowflake) RETURNS bytea
    AS 'int8send' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION _snowflake_send(snowflake) IS 'binary output: int8''s wire form';

CREATE TYPE snowflake (
    INPUT = _snowflake_in, OUTPUT = _snowflake_out,
    RECEIVE = _snowflake_recv, SEND = _snowflake_send,
    LIKE = pg_catalog.int8,
    -- numeric, not preferred: integer widens to it, it widens to bigint
    CATEGORY = 'N'
);
COMMENT ON TYPE snowflake IS '64-bit time-ordered id; text is the decimal id; between integer and bigint';

-- casts: integer -> snowflake -> bigint implicitly, bigint -> snowflake by
-- assignment. Every int8 is a snowflake (the type's domain, above), so a
-- sentinel like COALESCE(id, -1) keeps its value, as on bigint, and prints
-- and reads back. bigint is the only implicit target: a second one (numeric,
-- real or double precision, as bigint has) would make max(id), id + id and
-- every function overloaded for bigint and numeric ambiguous, or silently
-- double precision; and an operator between snowflake and numeric would make
-- numeric < 5 ambiguous for everyone (integer widens to both). So snowflake
-- converts to and from them by assignment and explicitly, and arithmetic
-- resolves through bigint. The widenings from smallint and integer and the
-- conversions to numeric, real and double precision cannot fail: LEAKPROOF,
-- as the core functions they reuse are.

CREATE FUNCTION snowflake(smallint) RETURNS snowflake
    AS 'int28' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION snowflake(smallint) IS 'a smallint widened to snowflake, as to bigint (a negative sentinel stays negative)';
CREATE FUNCTION snowflake(integer) RETURNS snowflake
    AS 'int48' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION snowflake(integer) IS 'an integer widened to snowflake, as to bigint (a negative sentinel stays negative)';
CREATE FUNCTION snowflake(bigint) RETURNS snowflake
    AS 'MODULE_PATHNAME', 'snowflake_from_bigint' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake(bigint) IS 'a bigint as a snowflake, unchanged (a negative sentinel stays negative)';
CREATE FUNCTION snowflake(jsonb) RETURNS snowflake
    AS 'MODULE_PATHNAME', 'snowflake_from_jsonb' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake(jsonb) IS 'a JSON integer, or a JSON string of its decimal digits, as a snowflake';
CREATE FUNCTION snowflake(json) RETURNS snowflake
    LANGUAGE SQL IMMUTABLE STRICT PARALLEL SAFE RETURN snowflake($1::jsonb);
COMMENT ON FUNCTION snowflake(json) IS 'a JSON integer, or a JSON string of its decimal digits, as a snowflake';
CREATE FUNCTION _snowflake_to_integer(snowflake) RETURNS integer
    AS 'int84' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION _snowflake_to_integer(snowflake) IS 'cast support: snowflake to integer, refusing what does not fit';
CREATE FUNCTION _snowflake_to_smallint(snowflake) RETURNS smallint
    AS 'int82' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION _snowflake_to_smallint(snowflake) IS 'cast support: snowflake to smallint, refusing what does not fit';

CREATE CAST (smallint AS snowflake) WITH FUNCTION snowflake(smallint) AS IMPLICIT;
COMMENT ON CAST (smallint AS snowflake) IS 'implicit: smallint widens to snowflake as to bigint';
CREATE CAST (integer AS snowflake) WITH FUNCTION snowflake(integer) AS IMPLICIT;
COMMENT ON CAST (integer AS snowflake) IS 'implicit: integer widens to snowflake as to bigint';
CREATE CAST (bigint AS snowflake) WITH FUNCTION snowflake(bigint) AS ASSIGNMENT;
COMMENT ON CAST (bigint AS snowflake) IS 'assignment: a bigint stored into a snowflake, unchanged';
CREATE CAST (snowflake AS bigint) WITHOUT FUNCTION AS IMPLICIT;
COMMENT ON CAST (snowflake AS bigint) IS 'implicit, binary: every snowflake is a bigint';
CREATE CAST (snowflake AS integer) WITH FUNCTION _snowflake_to_integer(snowflake) AS ASSIGNMENT;
COMMENT ON CAST (snowflake AS integer) IS 'assignment: refuses ids above 2147483647';
CREATE CAST (snowflake AS smallint) WITH FUNCTION _snowflake_to_smallint(snowflake) AS ASSIGNMENT;
COMMENT ON CAST (snowflake AS smallint) IS 'assignment: refuses ids above 32767';
CREATE CAST (jsonb AS snowflake) WITH FUNCTION snowflake(jsonb);
COMMENT ON CAST (jsonb AS snowflake) IS 'explicit: a JSON integer, or a JSON string of its decimal digits';
CREATE CAST (json AS snowflake) WITH FUNCTION snowflake(json);
COMMENT ON CAST (json AS snowflake) IS 'explicit: a JSON integer, or a JSON string of its decimal digits';

-- numeric, real and double precision: by assignment both ways (bigint's
-- conversions; fractions round as they do to bigint)
CREATE FUNCTION _snowflake_to_numeric(snowflake) RETURNS numeric
    AS 'int8_numeric' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION _snowflake_to_numeric(snowflake) IS 'cast support: snowflake to numeric';
CREATE FUNCTION _snowflake_to_real(snowflake) RETURNS real
    AS 'i8tof' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION _snowflake_to_real(snowflake) IS 'cast support: snowflake to real';
CREATE FUNCTION _snowflake_to_double(snowflake) RETURNS double precision
    AS 'i8tod' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION _snowflake_to_double(snowflake) IS 'cast support: snowflake to double precision';
CREATE FUNCTION snowflake(numeric) RETURNS snowflake
    LANGUAGE SQL IMMUTABLE STRICT PARALLEL SAFE RETURN snowflake($1::bigint);
COMMENT ON FUNCTION snowflake(numeric) IS 'a numeric as a snowflake, rounded as to bigint';
CREATE FUNCTION snowflake(real) RETURNS snowflake
    LANGUAGE SQL IMMUTABLE STRICT PARALLEL SAFE RETURN snowflake($1::bigint);
COMMENT ON FUNCTION snowflake(real) IS 'a real as a snowflake, rounded as to bigint';
CREATE FUNCTION snowflake(double precision) RETURNS snowflake
    LANGUAGE SQL IMMUTABLE STRICT PARALLEL SAFE RETURN snowflake($1::bigint);
COMMENT ON FUNCTION snowflake(double precision) IS 'a double precision as a snowflake, rounded as to bigint';
CREATE CAST (snowflake AS numeric) WITH FUNCTION _snowflake_to_numeric(snowflake) AS ASSIGNMENT;
COMMENT ON CAST (snowflake AS numeric) IS 'assignment: every snowflake is a numeric (not implicit: see the operators)';
CREATE CAST (snowflake AS real) WITH FUNCTION _snowflake_to_real(snowflake) AS ASSIGNMENT;
COMMENT ON CAST (snowflake AS real) IS 'assignment: a snowflake as real (not implicit: see the operators)';
CREATE CAST (snowflake AS double precision) WITH FUNCTION _snowflake_to_double(snowflake) AS ASSIGNMENT;
COMMENT ON CAST (snowflake AS double precision) IS 'assignment: a snowflake as double precision (not implicit: see the operators)';
CREATE CAST (numeric AS snowflake) WITH FUNCTION snowflake(numeric) AS ASSIGNMENT;
COMMENT ON CAST (numeric AS snowflake) IS 'assignment: rounded as to bigint';
CREATE CAST (real AS snowflake) WITH FUNCTION snowflake(real) AS ASSIGNMENT;
COMMENT ON CAST (real AS snowflake) IS 'assignment: rounded as to bigint';
CREATE CAST (double precision AS snowflake) WITH FUNCTION snowflake(double precision) AS ASSIGNMENT;
COMMENT ON CAST (double precision AS snowflake) IS 'assignment: rounded as to bigint';

-- comparison operators: snowflake with snowflake, bigint, integer and
-- smallint on either side, on int8's internal functions (the bits are
-- int8's). Planner support (and a statistics hook in the library) shows the
-- planner snowflake operands as bigint, so that estimates are bigint's.

CREATE FUNCTION _snowflake_comparison_support(internal) RETURNS internal
    AS 'MODULE_PATHNAME', 'snowflake_comparison_support' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION _snowflake_comparison_support(internal) IS 'planner support: comparisons with a snowflake constant are estimated as with a bigint one';

-- snowflake x snowflake
CREATE FUNCTION _snowflake_eq(snowflake, snowflake) RETURNS boolean AS 'int8eq' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION _snowflake_eq(snowflake, snowflake) IS 'implements = (snowflake, snowflake)';
CREATE FUNCTION _snowflake_ne(snowflake, snowflake) RETURNS boolean AS 'int8ne' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION _snowflake_ne(snowflake, snowflake) IS 'implements <> (snowflake, snowflake)';
CREATE FUNCTION _snowflake_lt(snowflake, snowflake) RETURNS boolean AS 'int8lt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_lt(snowflake, snowflake) IS 'implements < (snowflake, snowflake)';
CREATE FUNCTION _snowflake_le(snowflake, snowflake) RETURNS boolean AS 'int8le' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_le(snowflake, snowflake) IS 'implements <= (snowflake, snowflake)';
CREATE FUNCTION _snowflake_gt(snowflake, snowflake) RETURNS boolean AS 'int8gt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_gt(snowflake, snowflake) IS 'implements > (snowflake, snowflake)';
CREATE FUNCTION _snowflake_ge(snowflake, snowflake) RETURNS boolean AS 'int8ge' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_ge(snowflake, snowflake) IS 'implements >= (snowflake, snowflake)';
CREATE FUNCTION _snowflake_cmp(snowflake, snowflake) RETURNS integer AS 'btint8cmp' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION _snowflake_cmp(snowflake, snowflake) IS 'B-tree support: -1, 0 or 1 as the first is less than, equal to or greater than the second';
CREATE OPERATOR = (LEFTARG = snowflake, RIGHTARG = snowflake, FUNCTION = _snowflake_eq, COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES);
COMMENT ON OPERATOR = (snowflake, snowflake) IS 'equal to';
CREATE OPERATOR <> (LEFTARG = snowflake, RIGHTARG = snowflake, FUNCTION = _snowflake_ne, COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel);
COMMENT ON OPERATOR <> (snowflake, snowflake) IS 'not equal to';
CREATE OPERATOR < (LEFTARG = snowflake, RIGHTARG = snowflake, FUNCTION = _snowflake_lt, COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
COMMENT ON OPERATOR < (snowflake, snowflake) IS 'less than';
CREATE OPERATOR <= (LEFTARG = snowflake, RIGHTARG = snowflake, FUNCTION = _snowflake_le, COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
COMMENT ON OPERATOR <= (snowflake, snowflake) IS 'less than or equal to';
CREATE OPERATOR > (LEFTARG = snowflake, RIGHTARG = snowflake, FUNCTION = _snowflake_gt, COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
COMMENT ON OPERATOR > (snowflake, snowflake) IS 'greater than';
CREATE OPERATOR >= (LEFTARG = snowflake, RIGHTARG = snowflake, FUNCTION = _snowflake_ge, COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);
COMMENT ON OPERATOR >= (snowflake, snowflake) IS 'greater than or equal to';

-- snowflake x bigint
CREATE FUNCTION _snowflake_eq(snowflake, bigint) RETURNS boolean AS 'int8eq' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_eq(snowflake, bigint) IS 'implements = (snowflake, bigint)';
CREATE FUNCTION _snowflake_ne(snowflake, bigint) RETURNS boolean AS 'int8ne' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION _snowflake_ne(snowflake, bigint) IS 'implements <> (snowflake, bigint)';
CREATE FUNCTION _snowflake_lt(snowflake, bigint) RETURNS boolean AS 'int8lt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_lt(snowflake, bigint) IS 'implements < (snowflake, bigint)';
CREATE FUNCTION _snowflake_le(snowflake, bigint) RETURNS boolean AS 'int8le' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_le(snowflake, bigint) IS 'implements <= (snowflake, bigint)';
CREATE FUNCTION _snowflake_gt(snowflake, bigint) RETURNS boolean AS 'int8gt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_gt(snowflake, bigint) IS 'implements > (snowflake, bigint)';
CREATE FUNCTION _snowflake_ge(snowflake, bigint) RETURNS boolean AS 'int8ge' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_ge(snowflake, bigint) IS 'implements >= (snowflake, bigint)';
CREATE FUNCTION _snowflake_cmp(snowflake, bigint) RETURNS integer AS 'btint8cmp' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION _snowflake_cmp(snowflake, bigint) IS 'B-tree support: -1, 0 or 1 as the first is less than, equal to or greater than the second';
CREATE OPERATOR = (LEFTARG = snowflake, RIGHTARG = bigint, FUNCTION = _snowflake_eq, COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES);
COMMENT ON OPERATOR = (snowflake, bigint) IS 'equal to';
CREATE OPERATOR <> (LEFTARG = snowflake, RIGHTARG = bigint, FUNCTION = _snowflake_ne, COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel);
COMMENT ON OPERATOR <> (snowflake, bigint) IS 'not equal to';
CREATE OPERATOR < (LEFTARG = snowflake, RIGHTARG = bigint, FUNCTION = _snowflake_lt, COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
COMMENT ON OPERATOR < (snowflake, bigint) IS 'less than';
CREATE OPERATOR <= (LEFTARG = snowflake, RIGHTARG = bigint, FUNCTION = _snowflake_le, COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
COMMENT ON OPERATOR <= (snowflake, bigint) IS 'less than or equal to';
CREATE OPERATOR > (LEFTARG = snowflake, RIGHTARG = bigint, FUNCTION = _snowflake_gt, COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
COMMENT ON OPERATOR > (snowflake, bigint) IS 'greater than';
CREATE OPERATOR >= (LEFTARG = snowflake, RIGHTARG = bigint, FUNCTION = _snowflake_ge, COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);
COMMENT ON OPERATOR >= (snowflake, bigint) IS 'greater than or equal to';

-- bigint x snowflake
CREATE FUNCTION _snowflake_eq(bigint, snowflake) RETURNS boolean AS 'int8eq' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_eq(bigint, snowflake) IS 'implements = (bigint, snowflake)';
CREATE FUNCTION _snowflake_ne(bigint, snowflake) RETURNS boolean AS 'int8ne' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION _snowflake_ne(bigint, snowflake) IS 'implements <> (bigint, snowflake)';
CREATE FUNCTION _snowflake_lt(bigint, snowflake) RETURNS boolean AS 'int8lt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_lt(bigint, snowflake) IS 'implements < (bigint, snowflake)';
CREATE FUNCTION _snowflake_le(bigint, snowflake) RETURNS boolean AS 'int8le' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_le(bigint, snowflake) IS 'implements <= (bigint, snowflake)';
CREATE FUNCTION _snowflake_gt(bigint, snowflake) RETURNS boolean AS 'int8gt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_gt(bigint, snowflake) IS 'implements > (bigint, snowflake)';
CREATE FUNCTION _snowflake_ge(bigint, snowflake) RETURNS boolean AS 'int8ge' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_ge(bigint, snowflake) IS 'implements >= (bigint, snowflake)';
CREATE FUNCTION _snowflake_cmp(bigint, snowflake) RETURNS integer AS 'btint8cmp' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION _snowflake_cmp(bigint, snowflake) IS 'B-tree support: -1, 0 or 1 as the first is less than, equal to or greater than the second';
CREATE OPERATOR = (LEFTARG = bigint, RIGHTARG = snowflake, FUNCTION = _snowflake_eq, COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES);
COMMENT ON OPERATOR = (bigint, snowflake) IS 'equal to';
CREATE OPERATOR <> (LEFTARG = bigint, RIGHTARG = snowflake, FUNCTION = _snowflake_ne, COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel);
COMMENT ON OPERATOR <> (bigint, snowflake) IS 'not equal to';
CREATE OPERATOR < (LEFTARG = bigint, RIGHTARG = snowflake, FUNCTION = _snowflake_lt, COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
COMMENT ON OPERATOR < (bigint, snowflake) IS 'less than';
CREATE OPERATOR <= (LEFTARG = bigint, RIGHTARG = snowflake, FUNCTION = _snowflake_le, COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
COMMENT ON OPERATOR <= (bigint, snowflake) IS 'less than or equal to';
CREATE OPERATOR > (LEFTARG = bigint, RIGHTARG = snowflake, FUNCTION = _snowflake_gt, COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
COMMENT ON OPERATOR > (bigint, snowflake) IS 'greater than';
CREATE OPERATOR >= (LEFTARG = bigint, RIGHTARG = snowflake, FUNCTION = _snowflake_ge, COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);
COMMENT ON OPERATOR >= (bigint, snowflake) IS 'greater than or equal to';

-- snowflake x integer
CREATE FUNCTION _snowflake_eq(snowflake, integer) RETURNS boolean AS 'int84eq' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_eq(snowflake, integer) IS 'implements = (snowflake, integer)';
CREATE FUNCTION _snowflake_ne(snowflake, integer) RETURNS boolean AS 'int84ne' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION _snowflake_ne(snowflake, integer) IS 'implements <> (snowflake, integer)';
CREATE FUNCTION _snowflake_lt(snowflake, integer) RETURNS boolean AS 'int84lt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_lt(snowflake, integer) IS 'implements < (snowflake, integer)';
CREATE FUNCTION _snowflake_le(snowflake, integer) RETURNS boolean AS 'int84le' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_le(snowflake, integer) IS 'implements <= (snowflake, integer)';
CREATE FUNCTION _snowflake_gt(snowflake, integer) RETURNS boolean AS 'int84gt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_gt(snowflake, integer) IS 'implements > (snowflake, integer)';
CREATE FUNCTION _snowflake_ge(snowflake, integer) RETURNS boolean AS 'int84ge' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_ge(snowflake, integer) IS 'implements >= (snowflake, integer)';
CREATE FUNCTION _snowflake_cmp(snowflake, integer) RETURNS integer AS 'btint84cmp' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION _snowflake_cmp(snowflake, integer) IS 'B-tree support: -1, 0 or 1 as the first is less than, equal to or greater than the second';
CREATE OPERATOR = (LEFTARG = snowflake, RIGHTARG = integer, FUNCTION = _snowflake_eq, COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES);
COMMENT ON OPERATOR = (snowflake, integer) IS 'equal to';
CREATE OPERATOR <> (LEFTARG = snowflake, RIGHTARG = integer, FUNCTION = _snowflake_ne, COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel);
COMMENT ON OPERATOR <> (snowflake, integer) IS 'not equal to';
CREATE OPERATOR < (LEFTARG = snowflake, RIGHTARG = integer, FUNCTION = _snowflake_lt, COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
COMMENT ON OPERATOR < (snowflake, integer) IS 'less than';
CREATE OPERATOR <= (LEFTARG = snowflake, RIGHTARG = integer, FUNCTION = _snowflake_le, COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
COMMENT ON OPERATOR <= (snowflake, integer) IS 'less than or equal to';
CREATE OPERATOR > (LEFTARG = snowflake, RIGHTARG = integer, FUNCTION = _snowflake_gt, COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
COMMENT ON OPERATOR > (snowflake, integer) IS 'greater than';
CREATE OPERATOR >= (LEFTARG = snowflake, RIGHTARG = integer, FUNCTION = _snowflake_ge, COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);
COMMENT ON OPERATOR >= (snowflake, integer) IS 'greater than or equal to';

-- integer x snowflake
CREATE FUNCTION _snowflake_eq(integer, snowflake) RETURNS boolean AS 'int48eq' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_eq(integer, snowflake) IS 'implements = (integer, snowflake)';
CREATE FUNCTION _snowflake_ne(integer, snowflake) RETURNS boolean AS 'int48ne' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION _snowflake_ne(integer, snowflake) IS 'implements <> (integer, snowflake)';
CREATE FUNCTION _snowflake_lt(integer, snowflake) RETURNS boolean AS 'int48lt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_lt(integer, snowflake) IS 'implements < (integer, snowflake)';
CREATE FUNCTION _snowflake_le(integer, snowflake) RETURNS boolean AS 'int48le' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_le(integer, snowflake) IS 'implements <= (integer, snowflake)';
CREATE FUNCTION _snowflake_gt(integer, snowflake) RETURNS boolean AS 'int48gt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_gt(integer, snowflake) IS 'implements > (integer, snowflake)';
CREATE FUNCTION _snowflake_ge(integer, snowflake) RETURNS boolean AS 'int48ge' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_ge(integer, snowflake) IS 'implements >= (integer, snowflake)';
CREATE FUNCTION _snowflake_cmp(integer, snowflake) RETURNS integer AS 'btint48cmp' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION _snowflake_cmp(integer, snowflake) IS 'B-tree support: -1, 0 or 1 as the first is less than, equal to or greater than the second';
CREATE OPERATOR = (LEFTARG = integer, RIGHTARG = snowflake, FUNCTION = _snowflake_eq, COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES);
COMMENT ON OPERATOR = (integer, snowflake) IS 'equal to';
CREATE OPERATOR <> (LEFTARG = integer, RIGHTARG = snowflake, FUNCTION = _snowflake_ne, COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel);
COMMENT ON OPERATOR <> (integer, snowflake) IS 'not equal to';
CREATE OPERATOR < (LEFTARG = integer, RIGHTARG = snowflake, FUNCTION = _snowflake_lt, COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
COMMENT ON OPERATOR < (integer, snowflake) IS 'less than';
CREATE OPERATOR <= (LEFTARG = integer, RIGHTARG = snowflake, FUNCTION = _snowflake_le, COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
COMMENT ON OPERATOR <= (integer, snowflake) IS 'less than or equal to';
CREATE OPERATOR > (LEFTARG = integer, RIGHTARG = snowflake, FUNCTION = _snowflake_gt, COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
COMMENT ON OPERATOR > (integer, snowflake) IS 'greater than';
CREATE OPERATOR >= (LEFTARG = integer, RIGHTARG = snowflake, FUNCTION = _snowflake_ge, COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);
COMMENT ON OPERATOR >= (integer, snowflake) IS 'greater than or equal to';

-- snowflake x smallint
CREATE FUNCTION _snowflake_eq(snowflake, smallint) RETURNS boolean AS 'int82eq' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_eq(snowflake, smallint) IS 'implements = (snowflake, smallint)';
CREATE FUNCTION _snowflake_ne(snowflake, smallint) RETURNS boolean AS 'int82ne' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION _snowflake_ne(snowflake, smallint) IS 'implements <> (snowflake, smallint)';
CREATE FUNCTION _snowflake_lt(snowflake, smallint) RETURNS boolean AS 'int82lt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_lt(snowflake, smallint) IS 'implements < (snowflake, smallint)';
CREATE FUNCTION _snowflake_le(snowflake, smallint) RETURNS boolean AS 'int82le' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_le(snowflake, smallint) IS 'implements <= (snowflake, smallint)';
CREATE FUNCTION _snowflake_gt(snowflake, smallint) RETURNS boolean AS 'int82gt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_gt(snowflake, smallint) IS 'implements > (snowflake, smallint)';
CREATE FUNCTION _snowflake_ge(snowflake, smallint) RETURNS boolean AS 'int82ge' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_ge(snowflake, smallint) IS 'implements >= (snowflake, smallint)';
CREATE FUNCTION _snowflake_cmp(snowflake, smallint) RETURNS integer AS 'btint82cmp' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION _snowflake_cmp(snowflake, smallint) IS 'B-tree support: -1, 0 or 1 as the first is less than, equal to or greater than the second';
CREATE OPERATOR = (LEFTARG = snowflake, RIGHTARG = smallint, FUNCTION = _snowflake_eq, COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES);
COMMENT ON OPERATOR = (snowflake, smallint) IS 'equal to';
CREATE OPERATOR <> (LEFTARG = snowflake, RIGHTARG = smallint, FUNCTION = _snowflake_ne, COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel);
COMMENT ON OPERATOR <> (snowflake, smallint) IS 'not equal to';
CREATE OPERATOR < (LEFTARG = snowflake, RIGHTARG = smallint, FUNCTION = _snowflake_lt, COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
COMMENT ON OPERATOR < (snowflake, smallint) IS 'less than';
CREATE OPERATOR <= (LEFTARG = snowflake, RIGHTARG = smallint, FUNCTION = _snowflake_le, COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
COMMENT ON OPERATOR <= (snowflake, smallint) IS 'less than or equal to';
CREATE OPERATOR > (LEFTARG = snowflake, RIGHTARG = smallint, FUNCTION = _snowflake_gt, COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
COMMENT ON OPERATOR > (snowflake, smallint) IS 'greater than';
CREATE OPERATOR >= (LEFTARG = snowflake, RIGHTARG = smallint, FUNCTION = _snowflake_ge, COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);
COMMENT ON OPERATOR >= (snowflake, smallint) IS 'greater than or equal to';

-- smallint x snowflake
CREATE FUNCTION _snowflake_eq(smallint, snowflake) RETURNS boolean AS 'int28eq' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_eq(smallint, snowflake) IS 'implements = (smallint, snowflake)';
CREATE FUNCTION _snowflake_ne(smallint, snowflake) RETURNS boolean AS 'int28ne' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION _snowflake_ne(smallint, snowflake) IS 'implements <> (smallint, snowflake)';
CREATE FUNCTION _snowflake_lt(smallint, snowflake) RETURNS boolean AS 'int28lt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_lt(smallint, snowflake) IS 'implements < (smallint, snowflake)';
CREATE FUNCTION _snowflake_le(smallint, snowflake) RETURNS boolean AS 'int28le' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_le(smallint, snowflake) IS 'implements <= (smallint, snowflake)';
CREATE FUNCTION _snowflake_gt(smallint, snowflake) RETURNS boolean AS 'int28gt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_gt(smallint, snowflake) IS 'implements > (smallint, snowflake)';
CREATE FUNCTION _snowflake_ge(smallint, snowflake) RETURNS boolean AS 'int28ge' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF SUPPORT _snowflake_comparison_support;
COMMENT ON FUNCTION _snowflake_ge(smallint, snowflake) IS 'implements >= (smallint, snowflake)';
CREATE FUNCTION _snowflake_cmp(smallint, snowflake) RETURNS integer AS 'btint28cmp' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
COMMENT ON FUNCTION _snowflake_cmp(smallint, snowflake) IS 'B-tree support: -1, 0 or 1 as the first is less than, equal to or greater than the second';
CREATE OPERATOR = (LEFTARG = smallint, RIGHTARG = snowflake, FUNCTION = _snowflake_eq, COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES);
COMMENT ON OPERATOR = (smallint, snowflake) IS 'equal to';
CREATE OPERATOR <> (LEFTARG = smallint, RIGHTARG = snowflake, FUNCTION = _snowflake_ne, COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel);
COMMENT ON OPERATOR <> (smallint, snowflake) IS 'not equal to';
CREATE OPERATOR < (LEFTARG = smallint, RIGHTARG = snowflake, FUNCTION = _snowflake_lt, COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
COMMENT ON OPERATOR < (smallint, snowflake) IS 'less than';
CREATE OPERATOR <= (LEFTARG = smallint, RIGHTARG = snowflake, FUNCTION = _snowflake_le, COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
COMMENT ON OPERATOR <= (smallint, snowflake) IS 'less than or equal to';
CREATE OPERATOR > (LEFTARG = smallint, RIGHTARG = snowflake, FUNCTION = _snowflake_gt, COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
COMMENT ON OPERATOR > (smallint, snowflake) IS 'greater than';
CREATE OPERATOR >= (LEFTARG = smallint, RIGHTARG = snowflake, FUNCTION = _snowflake_ge, COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);
COMMENT ON OPERATOR >= (smallint, snowflake) IS 'greater than or equal to';

-- index and hash support: int8's functions. bigint's hash functions are not
-- LEAKPROOF in core, so ours are not either.

CREATE FUNCTION _snowflake_sortsupport(internal) RETURNS void
    AS 'btint8sortsupport' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION _snowflake_sortsupport(internal) IS 'B-tree support: sort support, int8''s';
CREATE FUNCTION _snowflake_in_range(snowflake, snowflake, bigint, boolean, boolean) RETURNS boolean
    AS 'in_range_int8_int8' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION _snowflake_in_range(snowflake, snowflake, bigint, boolean, boolean) IS 'B-tree support: window frames RANGE BETWEEN n PRECEDING/FOLLOWING';
CREATE FUNCTION _snowflake_hash(snowflake) RETURNS integer
    AS 'hashint8' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION _snowflake_hash(snowflake) IS 'hash support: bigint''s hash';
CREATE FUNCTION _snowflake_hash_extended(snowflake, bigint) RETURNS bigint
    AS 'hashint8extended' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION _snowflake_hash_extended(snowflake, bigint) IS 'hash support: bigint''s extended hash';

-- operator classes. snowflake joins core's integer_ops B-tree and hash
-- families as a fourth integer beside smallint, integer and bigint, so that
-- the planner crosses between them as between the core integers: an index on
-- either side serves a comparison or join with the other (foreign keys in both
-- directions, parameterized index scans, merge and hash joins, equivalence
-- classes, = ANY (array)). Every member we add involves snowflake: no plan of
-- a query without the type changes.
--
-- The classes are not DEFAULT: an index on a snowflake column gets core's
-- int8_ops (snowflake is binary-coercible to bigint), and sorting a snowflake
-- uses bigint's < and >. An index, ORDER BY id, ORDER BY id::bigint and
-- max(id) (bigint's aggregate) then all speak of the one sort order, whether
-- the query was written with the extension's schema on the search_path or not.
--
-- The classes are created with snowflake's own operators and functions.
-- PostgreSQL keeps cross-type members and optional support functions loose in
-- a family, and a core family is never dumped: pg_upgrade would lose them,
-- and fail on any foreign key between snowflake and a core integer.
-- snowflake_repair_integer_ops() adds them and binds every member to our
-- classes: here, and in pg_upgrade's restore, where the library runs it once
-- both classes are restored, so that no step is left for after the upgrade.

CREATE OPERATOR CLASS snowflake_ops FOR TYPE snowflake USING btree FAMILY pg_catalog.integer_ops AS
    OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
    FUNCTION 1 _snowflake_cmp(snowflake, snowflake);
COMMENT ON OPERATOR CLASS snowflake_ops USING btree IS 'snowflake in core''s integer_ops B-tree family; indexes default to int8_ops';

CREATE OPERATOR CLASS snowflake_ops FOR TYPE snowflake USING hash FAMILY pg_catalog.integer_ops AS
    OPERATOR 1 =,
    FUNCTION 1 _snowflake_hash(snowflake);
COMMENT ON OPERATOR CLASS snowflake_ops USING hash IS 'snowflake in core''s integer_ops hash family (bigint''s hash)';

CREATE FUNCTION snowflake_repair_integer_ops() RETURNS integer
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake');
    member record;
    added integer := 0;
BEGIN
    FOR member IN
        WITH pair(lefttype, righttype) AS (
            VALUES ('snowflake', 'bigint'), ('bigint', 'snowflake'), ('snowflake', 'integer'),
                   ('integer', 'snowflake'), ('snowflake', 'smallint'), ('smallint', 'snowflake')),
        typed(lefttype, righttype, left_sql, right_sql) AS (
            SELECT lefttype, righttype,
                   CASE lefttype WHEN 'snowflake' THEN format('%I.snowflake', ext) ELSE lefttype END,
                   CASE righttype WHEN 'snowflake' THEN format('%I.snowflake', ext) ELSE righttype END
              FROM (SELECT * FROM pair UNION ALL VALUES ('snowflake', 'snowflake')) p)
        -- (access method, operator or function, number, types, what to add)
        SELECT 'btree' AS am, 'o' AS kind, s.num, t.left_sql, t.right_sql,
               format('OPERATOR %s %I.%s (%s, %s)', s.num, ext, s.op, t.left_sql, t.right_sql) AS item
          FROM typed t CROSS JOIN (VALUES (1, '<'), (2, '<='), (3, '='), (4, '>='), (5, '>')) s(num, op)
         WHERE t.lefttype <> t.righttype
        UNION ALL
        SELECT 'btree', 'f', 1, t.left_sql, t.right_sql,
               format('FUNCTION 1 %I._snowflake_cmp(%s, %s)', ext, t.left_sql, t.right_sql)
          FROM typed t WHERE t.lefttype <> t.righttype
        UNION ALL
        SELECT 'hash', 'o', 1, t.left_sql, t.right_sql,
               format('OPERATOR 1 %I.= (%s, %s)', ext, t.left_sql, t.right_sql)
          FROM typed t WHERE t.lefttype <> t.righttype
        UNION ALL
        SELECT 'btree', 'f', f.num, f.left_sql, f.right_sql, f.item
          FROM typed t, LATERAL (VALUES
              (2, t.left_sql, t.left_sql, format('FUNCTION 2 (%1$s, %1$s) %2$I._snowflake_sortsupport(internal)', t.left_sql, ext)),
              (3, t.left_sql, 'bigint', format('FUNCTION 3 (%1$s, bigint) %2$I._snowflake_in_range(%1$s, %1$s, bigint, boolean, boolean)', t.left_sql, ext)),
              (4, t.left_sql, t.left_sql, format('FUNCTION 4 (%1$s, %1$s) pg_catalog.btequalimage(oid)', t.left_sql))) f(num, left_sql, right_sql, item)
         WHERE t.lefttype = 'snowflake' AND t.righttype = 'snowflake'
        UNION ALL
        SELECT 'hash', 'f', 2, t.left_sql, t.right_sql,
               format('FUNCTION 2 (%1$s, %1$s) %2$I._snowflake_hash_extended(%1$s, bigint)', t.left_sql, ext)
          FROM typed t WHERE t.lefttype = 'snowflake' AND t.righttype = 'snowflake'
    LOOP
        IF member.kind = 'o' AND NOT EXISTS (
               SELECT FROM pg_amop o JOIN pg_opfamily f ON f.oid = o.amopfamily JOIN pg_am a ON a.oid = f.opfmethod
                WHERE f.opfname = 'integer_ops' AND f.opfnamespace = 'pg_catalog'::regnamespace AND a.amname = member.am
                  AND o.amopstrategy = member.num AND o.amoplefttype = member.left_sql::regtype
                  AND o.amoprighttype = member.right_sql::regtype)
           OR member.kind = 'f' AND NOT EXISTS (
               SELECT FROM pg_amproc p JOIN pg_opfamily f ON f.oid = p.amprocfamily JOIN pg_am a ON a.oid = f.opfmethod
                WHERE f.opfname = 'integer_ops' AND f.opfnamespace = 'pg_catalog'::regnamespace AND a.amname = member.am
                  AND p.amprocnum = member.num AND p.amproclefttype = member.left_sql::regtype
                  AND p.amprocrighttype = member.right_sql::regtype) THEN
            EXECUTE format('ALTER OPERATOR FAMILY pg_catalog.integer_ops USING %s ADD %s', member.am, member.item);
            added := added + 1;
        END IF;
    END LOOP;
    -- Each member naming snowflake is bound to our class of its access method
    -- (an internal dependency, as snowflake's own members have): so DROP
    -- EXTENSION removes it with the class, and pg_dump --binary-upgrade (what
    -- pg_upgrade restores from) writes it into the class's definition, before
    -- any foreign key or index that needs it. A restored class binds only its
    -- own members again: hence the repair after each pg_upgrade.
    WITH member AS (
        SELECT 'pg_amop'::regclass AS classid, o.oid AS objid, c.oid AS opclass
          FROM pg_amop o JOIN pg_opclass c ON c.opcfamily = o.amopfamily
         WHERE c.opcintype = format('%I.snowflake', ext)::regtype
           AND format('%I.snowflake', ext)::regtype IN (o.amoplefttype, o.amoprighttype)
        UNION ALL
        SELECT 'pg_amproc'::regclass, p.oid, c.oid
          FROM pg_amproc p JOIN pg_opclass c ON c.opcfamily = p.amprocfamily
         WHERE c.opcintype = format('%I.snowflake', ext)::regtype
           AND format('%I.snowflake', ext)::regtype IN (p.amproclefttype, p.amprocrighttype)),
    bound AS (
        INSERT INTO pg_depend (classid, objid, objsubid, refclassid, refobjid, refobjsubid, deptype)
        SELECT m.classid, m.objid, 0, 'pg_opclass'::regclass, m.opclass, 0, 'i'
          FROM member m
         WHERE NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = m.classid AND d.objid = m.objid
                                                      AND d.refclassid = 'pg_opclass'::regclass AND d.deptype = 'i')
        RETURNING 1)
    SELECT added + count(*) INTO added FROM bound;
    RETURN added;
END
$$;
COMMENT ON FUNCTION snowflake_repair_integer_ops() IS
    'adds snowflake''s members to core''s integer_ops families where missing and binds them to its classes (pg_upgrade''s restore runs it); returns how many it changed';
REVOKE ALL ON FUNCTION snowflake_repair_integer_ops() FROM PUBLIC;
SELECT snowflake_repair_integer_ops();

CREATE OPERATOR FAMILY snowflake_minmax_ops USING brin;
COMMENT ON OPERATOR FAMILY snowflake_minmax_ops USING brin IS 'BRIN minmax for snowflake, also against smallint, integer and bigint';
CREATE OPERATOR CLASS snowflake_minmax_ops DEFAULT FOR TYPE snowflake USING brin FAMILY snowflake_minmax_ops AS
    OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
    FUNCTION 1 brin_minmax_opcinfo(internal),
    FUNCTION 2 brin_minmax_add_value(internal, internal, internal, internal),
    FUNCTION 3 brin_minmax_consistent(internal, internal, internal),
    FUNCTION 4 brin_minmax_union(internal, internal, internal),
    OPERATOR 1 < (snowflake, bigint), OPERATOR 2 <= (snowflake, bigint), OPERATOR 3 = (snowflake, bigint),
    OPERATOR 4 >= (snowflake, bigint), OPERATOR 5 > (snowflake, bigint),
    OPERATOR 1 < (snowflake, integer), OPERATOR 2 <= (snowflake, integer), OPERATOR 3 = (snowflake, integer),
    OPERATOR 4 >= (snowflake, integer), OPERATOR 5 > (snowflake, integer),
    OPERATOR 1 < (snowflake, smallint), OPERATOR 2 <= (snowflake, smallint), OPERATOR 3 = (snowflake, smallint),
    OPERATOR 4 >= (snowflake, smallint), OPERATOR 5 > (snowflake, smallint);
COMMENT ON OPERATOR CLASS snowflake_minmax_ops USING brin IS 'default BRIN class for snowflake: minmax';

-- decoding: one overload, on bigint, serves snowflake too (it widens to
-- bigint). The one-argument forms honour snowflake.epoch and snowflake.layout
-- and are STABLE. The forms given the epoch and the layout are IMMUTABLE
-- (index expressions, generated columns, CHECK constraints, partition
-- bounds); the layout is in snowflake.layout's grammar ('default', 'js53',
-- 'sonyflake_style', '[unit=<n>ms] time=<bits> worker=<bits> sequence=<bits>';
-- 'sonyflake' with Sonyflake's epoch only). The forms given an epoch and no
-- layout decode the default layout, and refuse on a node that generates
-- another (55000, naming the form to use): none decodes a layout silently.

CREATE TYPE snowflake_fields AS (ts timestamptz, worker_id integer, sequence integer);
COMMENT ON TYPE snowflake_fields IS 'what an id holds: its millisecond, worker id and sequence';

CREATE FUNCTION snowflake_decode(id bigint) RETURNS snowflake_fields
    AS 'MODULE_PATHNAME', 'snowflake_decode' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_decode(bigint) IS 'the time, worker id and sequence of an id, under snowflake.epoch';
CREATE FUNCTION snowflake_decode(id bigint, epoch timestamptz) RETURNS snowflake_fields
    AS 'MODULE_PATHNAME', 'snowflake_decode_at' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_decode(bigint, timestamptz) IS 'the time, worker id and sequence of an id, under the epoch given, in the default layout (refused on a node generating another: give the layout after the epoch)';
CREATE FUNCTION snowflake_decode(id bigint, epoch timestamptz, layout text) RETURNS snowflake_fields
    AS 'MODULE_PATHNAME', 'snowflake_decode_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_decode(bigint, timestamptz, text) IS 'the time, worker id and sequence of an id, under the epoch and layout given';

CREATE FUNCTION snowflake_to_timestamp(id bigint) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'snowflake_to_timestamp' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_to_timestamp(bigint) IS 'the millisecond an id was made in, under snowflake.epoch';
CREATE FUNCTION snowflake_to_timestamp(id bigint, epoch timestamptz) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'snowflake_to_timestamp_at' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_to_timestamp(bigint, timestamptz) IS 'the millisecond an id was made in, under the epoch given, in the default layout (refused on a node generating another: give the layout after the epoch)';
CREATE FUNCTION snowflake_to_timestamp(id bigint, epoch timestamptz, layout text) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'snowflake_to_timestamp_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_to_timestamp(bigint, timestamptz, text) IS 'the time an id was made in, under the epoch and layout given';

CREATE FUNCTION snowflake_from_timestamp(ts timestamptz) RETURNS bigint
    AS 'MODULE_PATHNAME', 'snowflake_from_timestamp' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_from_timestamp(timestamptz) IS 'the smallest id of the timestamp''s millisecond under snowflake.epoch: id >= from(t1) AND id < from(t2) selects [t1, t2)';
CREATE FUNCTION snowflake_from_timestamp(ts timestamptz, epoch timestamptz) RETURNS bigint
    AS 'MODULE_PATHNAME', 'snowflake_from_timestamp_at' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_from_timestamp(timestamptz, timestamptz) IS 'the smallest id of the timestamp''s millisecond under the epoch given, in the default layout (refused on a node generating another: give the layout after the epoch)';
CREATE FUNCTION snowflake_from_timestamp(ts timestamptz, epoch timestamptz, layout text) RETURNS bigint
    AS 'MODULE_PATHNAME', 'snowflake_from_timestamp_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_from_timestamp(timestamptz, timestamptz, text) IS 'the smallest id of the timestamp''s time unit under the epoch and layout given: id >= from(t1) AND id < from(t2) selects [t1, t2)';

-- other systems' ids: twitter, discord, instagram, sonyflake, pgedge,
-- mastodon, or a custom layout 'epoch=... [unit=Nms] time=N worker=N sequence=N'
-- (fields from the highest bits down). The layout is always explicit, so
-- these are IMMUTABLE.

CREATE FUNCTION snowflake_decode_as(id bigint, layout text) RETURNS snowflake_fields
    AS 'MODULE_PATHNAME', 'snowflake_decode_as' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_decode_as(bigint, text) IS 'the time, worker (node, shard, machine) and sequence of another system''s id, under a named or custom layout';
CREATE FUNCTION snowflake_from_timestamp_as(ts timestamptz, layout text) RETURNS bigint
    AS 'MODULE_PATHNAME', 'snowflake_from_timestamp_as' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_from_timestamp_as(timestamptz, text) IS 'the smallest id of the timestamp''s time unit under a named or custom layout: id >= from(t1) AND id < from(t2) selects [t1, t2)';

-- short text forms: fixed width, so that sorting the text (C collation)
-- sorts the ids. One overload, on bigint, serves snowflake too. Decoding
-- throws on bad text, so none of these is LEAKPROOF.

CREATE FUNCTION snowflake_to_base32(id bigint) RETURNS text
    AS 'MODULE_PATHNAME', 'snowflake_to_base32' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_to_base32(bigint) IS 'the id as 13 Crockford base32 characters, upper case; sorts as the id';
CREATE FUNCTION snowflake_from_base32(text) RETURNS bigint
    AS 'MODULE_PATHNAME', 'snowflake_from_base32' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_from_base32(text) IS 'the id of 13 Crockford base32 characters: any case, I and L as 1, O as 0, no hyphens';
CREATE FUNCTION snowflake_to_base62(id bigint) RETURNS text
    AS 'MODULE_PATHNAME', 'snowflake_to_base62' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_to_base62(bigint) IS 'the id as 11 base62 characters (0-9A-Za-z); sorts as the id in the C collation';
CREATE FUNCTION snowflake_from_base62(text) RETURNS bigint
    AS 'MODULE_PATHNAME', 'snowflake_from_base62' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_from_base62(text) IS 'the id of 11 base62 characters (0-9A-Za-z, case-sensitive)';

-- public ids: FF1 (NIST SP 800-38G) with AES over the id's 63 bits, as 13
-- Crockford base32 characters naming the key: a keyed permutation, decoded
-- back to the primary key. The keys live in the file that
-- snowflake.public_key_file names, never in a setting, a catalog or a dump.
-- The one-argument forms read the file's keys (STABLE); the forms given a key
-- id (0..3) are IMMUTABLE: a key id keeps its key (its binding,
-- pg_snowflake/public_keys) until retired on purpose. Decoding throws on bad
-- text: not LEAKPROOF.

CREATE FUNCTION snowflake_to_public(id bigint) RETURNS text
    AS 'MODULE_PATHNAME', 'snowflake_to_public' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_to_public(bigint) IS 'the public form of an id under the first key of snowflake.public_key_file: 13 characters that hide its time, node and volume';
CREATE FUNCTION snowflake_from_public(public_id text) RETURNS bigint
    AS 'MODULE_PATHNAME', 'snowflake_from_public' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_from_public(text) IS 'the id of a public form, under the key of snowflake.public_key_file it names: WHERE id = snowflake_from_public($1) reads the primary key';
CREATE FUNCTION snowflake_to_public(id bigint, key_id integer) RETURNS text
    AS 'MODULE_PATHNAME', 'snowflake_to_public_key_id' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_to_public(bigint, integer) IS 'the public form of an id under the key of snowflake.public_key_file with the key id given (0..3): for index expressions and generated columns';
CREATE FUNCTION snowflake_from_public(public_id text, key_id integer) RETURNS bigint
    AS 'MODULE_PATHNAME', 'snowflake_from_public_key_id' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_from_public(text, integer) IS 'the id of a public form made under the key id given (0..3)';
CREATE FUNCTION snowflake_retire_public_key_id(key_id integer) RETURNS boolean
    AS 'MODULE_PATHNAME', 'snowflake_retire_public_key_id' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION snowflake_retire_public_key_id(integer) IS 'unbinds a key id that snowflake.public_key_file no longer holds, so that a new key may take it (its old public ids then decode to other ids): superusers only';
REVOKE ALL ON FUNCTION snowflake_retire_public_key_id(integer) FROM PUBLIC;

-- adopting snowflake in an existing schema. PL/pgSQL that runs DDL as the
-- caller (SECURITY INVOKER), as do the partition helpers below: the caller
-- must own what is altered or created.

CREATE FUNCTION snowflake_convert_column(tbl regclass, col name, dry_run boolean DEFAULT false,
                                         subscribers_widened boolean DEFAULT false)
    RETURNS TABLE (step integer, table_name regclass, column_name name, old_type regtype, new_type regtype,
                   action text, statement text, lock_mode text, rewrite boolean, table_rows bigint, locked_ms numeric)
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
    ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake');
    key_rel pg_class;
    key_att pg_attribute;
    key_default pg_attrdef;
    key_sequence regclass;
    drop_sequence boolean := false;
    -- the columns to convert (relid, attname, typid, widen) and their tables'
    -- partitions and inheritance children (root, relid, parent, how): jsonb,
    -- not temporary tables, so that a dry run works read-only and on a standby
    plan jsonb;
    family jsonb;
    blocker record;
    widened record;
    max_value bigint;
    first_new bigint;
    far_id bigint;
    passes boolean;
    stmt text;
    locked_at timestamptz;
    counts jsonb := '{}';
    own_defaults jsonb;
    member record;
    n bigint;
BEGIN
    SELECT * INTO key_rel FROM pg_class WHERE oid = tbl;
    IF key_rel.relkind NOT IN ('r', 'p') THEN
        RAISE EXCEPTION '% is not a table', tbl USING ERRCODE = 'wrong_object_type';
    END IF;
    IF key_rel.relispartition THEN
        RAISE EXCEPTION 'table % is a partition', tbl USING ERRCODE = 'wrong_object_type',
            HINT = format('Convert the column of its partitioned table %s.', pg_partition_root(tbl));
    END IF;
    IF NOT pg_has_role(key_rel.relowner, 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of table %', tbl USING ERRCODE = 'insufficient_privilege';
    END IF;
    SELECT * INTO key_att FROM pg_attribute WHERE attrelid = tbl AND attname = col AND attnum > 0 AND NOT attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of table % does not exist', col, tbl USING ERRCODE = 'undefined_column';
    END IF;
    IF key_att.atttypid NOT IN ('smallint'::regtype, 'integer'::regtype, 'bigint'::regtype) THEN
        RAISE EXCEPTION 'column "%" of table % is %, not smallint, integer or bigint', col, tbl, key_att.atttypid::regtype
            USING ERRCODE = 'datatype_mismatch';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_constraint
                    WHERE conrelid = tbl AND contype IN ('p', 'u') AND conkey = ARRAY[key_att.attnum]) THEN
        RAISE EXCEPTION 'column "%" of table % is not a key', col, tbl USING ERRCODE = 'object_not_in_prerequisite_state',
            DETAIL = 'Only the one column of a PRIMARY KEY or UNIQUE constraint is converted.';
    END IF;
    -- GENERATED ALWAYS refuses ids an INSERT gives; a DEFAULT cannot
    IF key_att.attidentity = 'a' THEN
        RAISE EXCEPTION 'column "%" of table % is GENERATED ALWAYS AS IDENTITY', col, tbl
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'A snowflake_nextval() default cannot refuse the ids an INSERT gives, as ALWAYS does: after the conversion they would be taken.',
                  HINT = format('To accept that, first: ALTER TABLE %s ALTER COLUMN %I SET GENERATED BY DEFAULT; then convert.', tbl, col);
    END IF;

    -- the key and every column whose foreign key references a column of the
    -- set, recursively (multi-level and self references), on partitioned
    -- tables at their root; a domain column is widened only through its domain
    WITH RECURSIVE closure(relid, attname) AS (
        SELECT tbl::oid, col
        UNION
        SELECT CASE WHEN r.relispartition THEN pg_partition_root(r.oid)::oid ELSE r.oid END, fa.attname
          FROM closure c
          JOIN pg_attribute ka ON ka.attrelid = c.relid AND ka.attname = c.attname
          JOIN pg_constraint fk ON fk.contype = 'f' AND fk.conparentid = 0 AND fk.confrelid = c.relid
          CROSS JOIN LATERAL generate_subscripts(fk.confkey, 1) AS i
          JOIN pg_attribute fa ON fa.attrelid = fk.conrelid AND fa.attnum = fk.conkey[i]
          JOIN pg_class r ON r.oid = fk.conrelid
         WHERE fk.confkey[i] = ka.attnum)
    SELECT coalesce(jsonb_agg(jsonb_build_object('relid', c.relid, 'attname', c.attname, 'typid', a.atttypid,
                                                  'widen', a.atttypid IN ('smallint'::regtype, 'integer'::regtype))), '[]')
      INTO plan
      FROM closure c JOIN pg_attribute a ON a.attrelid = c.relid AND a.attname = c.attname;
    -- with their partitions and inheritance children, at every level
    WITH RECURSIVE tree(root, relid, parent) AS (
        SELECT p.relid, p.relid, NULL::oid FROM jsonb_to_recordset(plan) AS p(relid oid)
        UNION
        SELECT t.root, i.inhrelid, i.inhparent FROM pg_inherits i JOIN tree t ON i.inhparent = t.relid)
    SELECT jsonb_agg(jsonb_build_object('root', t.root, 'relid', t.relid, 'parent', t.parent,
                                        'how', CASE WHEN t.parent IS NULL THEN NULL
                                                    WHEN c.relispartition THEN 'partition of' ELSE 'inherits from' END))
      INTO family
      FROM tree t JOIN pg_class c ON c.oid = t.relid;

    -- the generator it replaces: identity, a nextval() default, or none
    SELECT * INTO key_default FROM pg_attrdef WHERE adrelid = tbl AND adnum = key_att.attnum;
    IF key_default.oid IS NOT NULL THEN
        SELECT d.refobjid INTO key_sequence FROM pg_depend d JOIN pg_class s ON s.oid = d.refobjid AND s.relkind = 'S'
         WHERE d.classid = 'pg_attrdef'::regclass AND d.objid = key_default.oid AND d.refclassid = 'pg_class'::regclass;
        IF key_sequence IS NULL OR pg_get_expr(key_default.adbin, tbl) !~ '^nextval\(' THEN
            RAISE EXCEPTION 'column "%" of table % has DEFAULT %, not a sequence''s', col, tbl, pg_get_expr(key_default.adbin, tbl)
                USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
        -- the sequence owned by the column goes, unless something besides the
        -- column's defaults (inherited by partitions and children) uses it
        drop_sequence := EXISTS (SELECT FROM pg_depend WHERE classid = 'pg_class'::regclass AND objid = key_sequence
                                    AND refobjid = tbl AND refobjsubid = key_att.attnum AND deptype = 'a')
            AND NOT EXISTS (
                SELECT FROM pg_depend d
                 WHERE d.refclassid = 'pg_class'::regclass AND d.refobjid = key_sequence
                   AND NOT (d.classid = 'pg_attrdef'::regclass AND d.objid IN (
                       SELECT ad.oid FROM pg_attrdef ad JOIN pg_attribute a ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum
                        WHERE a.attname = col
                          AND ad.adrelid IN (SELECT f.relid FROM jsonb_to_recordset(family) AS f(root oid, relid oid) WHERE f.root = tbl))));
    END IF;

    FOR blocker IN
        SELECT p.relid::regclass AS relid, p.attname FROM jsonb_to_recordset(plan) AS p(relid oid, attname name, widen boolean)
          JOIN pg_class rel ON rel.oid = p.relid
         WHERE p.widen AND NOT pg_has_role(rel.relowner, 'USAGE')
    LOOP
        RAISE EXCEPTION 'column "%" of table % references %.%, and is to be widened to bigint, but you do not own %',
            blocker.attname, blocker.relid, tbl, quote_ident(col), blocker.relid
            USING ERRCODE = 'insufficient_privilege', HINT = 'The owner of both tables, or a member of both owners'' roles, can convert it.';
    END LOOP;
    -- when converting, the locks the ALTERs take are taken before the checks,
    -- so that nothing checked changes before it is altered
    IF NOT dry_run THEN
        FOR widened IN SELECT DISTINCT p.relid::regclass AS relid FROM jsonb_to_recordset(plan) AS p(relid oid, widen boolean)
                        WHERE p.widen OR p.relid = tbl ORDER BY 1 LOOP
            EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', widened.relid);
        END LOOP;
        locked_at := clock_timestamp();
    END IF;
    FOR blocker IN
        SELECT p.relid::regclass AS relid, p.attname FROM jsonb_to_recordset(plan) AS p(relid oid, attname name, widen boolean)
          JOIN pg_partitioned_table pt ON pt.partrelid = p.relid
          JOIN pg_attribute a ON a.attrelid = p.relid AND a.attname = p.attname
         WHERE p.widen AND a.attnum = ANY (pt.partattrs)
    LOOP
        RAISE EXCEPTION 'column "%" of table % is its partition key, which PostgreSQL cannot widen to bigint', blocker.attname, blocker.relid
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'Copy the rows into a new table partitioned by a bigint key, then convert that.';
    END LOOP;
    FOR blocker IN
        SELECT DISTINCT p.relid::regclass AS relid, p.attname, pg_describe_object(d.classid, d.objid, 0) AS what
          FROM jsonb_to_recordset(plan) AS p(relid oid, attname name, widen boolean)
          JOIN jsonb_to_recordset(family) AS f(root oid, relid oid) ON f.root = p.relid
          JOIN pg_attribute a ON a.attrelid = f.relid AND a.attname = p.attname
          JOIN pg_depend d ON d.refclassid = 'pg_class'::regclass AND d.refobjid = f.relid AND d.refobjsubid = a.attnum
         WHERE p.widen
           AND (d.classid IN ('pg_rewrite'::regclass, 'pg_policy'::regclass, 'pg_trigger'::regclass,
                              'pg_publication_rel'::regclass)
                -- a generated column's expression (a column's own default depends on it too)
                OR d.classid = 'pg_attrdef'::regclass
                   AND (SELECT ad.adnum FROM pg_attrdef ad WHERE ad.oid = d.objid) <> a.attnum)
    LOOP
        RAISE EXCEPTION 'column "%" of table % is used by %', blocker.attname, blocker.relid, blocker.what
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'PostgreSQL cannot change the type of a column that such an object uses: drop it, convert, create it again.';
    END LOOP;

    -- A published table's subscribers receive the new ids: one whose column is
    -- still smallint or integer fails to apply them, and replication stops.
    IF NOT subscribers_widened THEN
        FOR blocker IN
            SELECT DISTINCT pt.pubname, p.relid::regclass AS relid, p.attname
              FROM jsonb_to_recordset(plan) AS p(relid oid, attname name)
              JOIN jsonb_to_recordset(family) AS f(root oid, relid oid) ON f.root = p.relid
              JOIN pg_class c ON c.oid = f.relid JOIN pg_namespace n ON n.oid = c.relnamespace
              JOIN pg_publication_tables pt ON pt.schemaname = n.nspname AND pt.tablename = c.relname
             ORDER BY 1, 2
        LOOP
            RAISE EXCEPTION 'table % is in publication %', blocker.relid, blocker.pubname
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = 'Its subscribers will receive snowflake ids: a subscriber whose column is still smallint or integer fails to apply them, and replication stops.',
                      HINT = format('On every subscriber first: ALTER TABLE %s ALTER COLUMN %I TYPE bigint; (and each referencing column the dry run lists); then call again with subscribers_widened => true.',
                                    blocker.relid, blocker.attname);
        END LOOP;
    END IF;

    -- CHECK constraints of the key and of the referencing columns, and the
    -- domains of domain-typed columns, that a snowflake id would violate: each
    -- is tried on a row of the table (or, when it has none, a row of NULLs)
    -- holding the largest id this node can make in the next ten years
    EXECUTE format('SELECT %I.snowflake_from_timestamp(now() + interval ''10 years 1 day'') - 1', ext) INTO far_id;
    FOR blocker IN
        SELECT p.relid::regclass AS relid, p.attname, p.typid::regtype AS typid, b.typbasetype::regtype AS base
          FROM jsonb_to_recordset(plan) AS p(relid oid, attname name, typid oid)
          JOIN pg_type t ON t.oid = p.typid AND t.typtype = 'd'
          CROSS JOIN LATERAL (WITH RECURSIVE chain(oid, typbasetype) AS (
                                  SELECT t.oid, t.typbasetype
                                  UNION ALL
                                  SELECT d.oid, d.typbasetype FROM chain JOIN pg_type d ON d.oid = chain.typbasetype AND d.typtype = 'd')
                              SELECT typbasetype FROM chain ORDER BY (SELECT typtype FROM pg_type WHERE oid = chain.typbasetype) = 'd' LIMIT 1) b
    LOOP
        IF blocker.base <> 'bigint'::regtype THEN
            RAISE EXCEPTION 'column "%" of table % is of domain %, over %, which cannot hold snowflake ids', blocker.attname, blocker.relid, blocker.typid, blocker.base
                USING ERRCODE = 'datatype_mismatch',
                      HINT = format('Change its type first: ALTER TABLE %s ALTER COLUMN %I TYPE bigint (or a domain over bigint).', blocker.relid, blocker.attname);
        END IF;
        BEGIN
            EXECUTE format('SELECT %s::bigint::%s', far_id, blocker.typid);
        EXCEPTION WHEN check_violation OR not_null_violation THEN
            RAISE EXCEPTION 'domain % of column "%" of table % refuses snowflake ids', blocker.typid, blocker.attname, blocker.relid
                USING ERRCODE = 'check_violation',
                      DETAIL = format('%s refuses the largest id of the next ten years: every insert would fail.', blocker.typid),
                      HINT = 'Change the domain''s constraint to allow 64-bit ids, or the column''s type to bigint, then convert.';
        END;
    END LOOP;
    FOR blocker IN
        SELECT f.relid::regclass AS relid, p.attname, con.conname, pg_get_constraintdef(con.oid) AS definition,
               pg_get_expr(con.conbin, con.conrelid) AS expr,
               (SELECT format('SELECT %s FROM ONLY %s UNION ALL SELECT %s',
                              string_agg(CASE WHEN a2.attname = p.attname THEN format('%s::bigint AS %I', far_id, a2.attname)
                                              ELSE format('%I', a2.attname) END, ', ' ORDER BY a2.attnum),
                              f.relid::regclass,
                              string_agg(CASE WHEN a2.attname = p.attname THEN format('%s::bigint', far_id)
                                              ELSE format('NULL::%s', format_type(a2.atttypid, a2.atttypmod)) END, ', ' ORDER BY a2.attnum))
                  FROM pg_attribute a2 WHERE a2.attrelid = f.relid AND a2.attnum > 0 AND NOT a2.attisdropped) AS row_sql
          FROM jsonb_to_recordset(plan) AS p(relid oid, attname name)
          JOIN jsonb_to_recordset(family) AS f(root oid, relid oid) ON f.root = p.relid
          JOIN pg_attribute a ON a.attrelid = f.relid AND a.attname = p.attname
          JOIN pg_constraint con ON con.conrelid = f.relid AND con.contype = 'c' AND a.attnum = ANY (con.conkey)
    LOOP
        EXECUTE format('SELECT (%s) IS NOT FALSE FROM (%s LIMIT 1) AS row_with_a_snowflake_id', blocker.expr, blocker.row_sql)
            INTO passes;
        IF NOT passes THEN
            RAISE EXCEPTION 'constraint % of table % refuses snowflake ids: %', blocker.conname, blocker.relid, blocker.definition
                USING ERRCODE = 'check_violation',
                      DETAIL = format('Column "%s" would hold snowflake ids (2^22 for every millisecond since "snowflake.epoch"); every insert would fail.',
                                      blocker.attname),
                      HINT = 'Drop the constraint or change it to allow 64-bit ids, then convert.';
        END IF;
    END LOOP;

    -- old ids must sort below every new one
    EXECUTE format('SELECT max(%I)::bigint FROM %s', col, tbl) INTO max_value;
    EXECUTE format('SELECT %I.snowflake_from_timestamp(now())', ext) INTO first_new;
    IF max_value >= first_new THEN
        RAISE EXCEPTION 'column "%" of table % holds %, not below the first new id %', col, tbl, max_value, first_new
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Existing ids must sort below the ids snowflake_nextval() makes from now on.';
    END IF;

    -- Each step is run (unless a dry run) and then reported: a row for every
    -- table it rewrites or re-defaults, partitions and inheritance children
    -- included, with the table's rows (in a dry run the planner's estimate,
    -- NULL if never analysed) and how long the locks have been held.
    FOR member IN SELECT DISTINCT f.relid::regclass AS relid, c.reltuples, c.relkind
                    FROM jsonb_to_recordset(family) AS f(relid oid) JOIN pg_class c ON c.oid = f.relid LOOP
        IF dry_run OR NOT has_table_privilege(member.relid, 'SELECT') THEN
            n := CASE WHEN member.reltuples >= 0 THEN member.reltuples::bigint END;
        ELSE
            EXECUTE format('SELECT count(*) FROM %s%s', CASE WHEN member.relkind <> 'p' THEN 'ONLY ' END, member.relid) INTO n;
        END IF;
        counts := counts || jsonb_build_object(member.relid::oid::text, n);
    END LOOP;
    -- defaults of partitions and children of their own, which the new one replaces
    SELECT coalesce(jsonb_object_agg(f.relid, pg_get_expr(d.adbin, d.adrelid)), '{}') INTO own_defaults
      FROM jsonb_to_recordset(family) AS f(root oid, relid oid, parent oid)
      JOIN pg_attribute a ON a.attrelid = f.relid AND a.attname = col
      JOIN pg_attrdef d ON d.adrelid = f.relid AND d.adnum = a.attnum
     WHERE f.root = tbl AND f.parent IS NOT NULL
       AND (key_default.oid IS NULL OR pg_get_expr(d.adbin, d.adrelid) <> pg_get_expr(key_default.adbin, tbl));
    step := 0;
    stmt := NULL;
    IF key_att.attidentity <> '' THEN
        stmt := format('ALTER TABLE %s ALTER COLUMN %I DROP IDENTITY', tbl, col);
        action := 'drop identity (and its sequence)';
    ELSIF key_default.oid IS NOT NULL THEN
        stmt := format('ALTER TABLE %s ALTER COLUMN %I DROP DEFAULT', tbl, col);
        action := 'drop default';
    END IF;
    IF stmt IS NOT NULL THEN
        step := step + 1;
        IF NOT dry_run THEN EXECUTE stmt; END IF;
        RETURN QUERY SELECT step, tbl, col, key_att.atttypid::regtype, key_att.atttypid::regtype,
                            action, stmt, 'ACCESS EXCLUSIVE', false,
                            (counts ->> tbl::oid::text)::bigint, round(extract(epoch FROM clock_timestamp() - locked_at) * 1000, 1);
    END IF;

    -- one ALTER TABLE per table (one rewrite of it and of its partitions or
    -- children), the key's table first
    FOR widened IN
        SELECT p.relid::regclass AS relid, string_agg(format('ALTER COLUMN %I TYPE bigint', p.attname), ', ' ORDER BY p.attname) AS clauses
          FROM jsonb_to_recordset(plan) AS p(relid oid, attname name, widen boolean) WHERE p.widen
         GROUP BY p.relid ORDER BY p.relid <> tbl, p.relid::regclass::text
    LOOP
        step := step + 1;
        stmt := format('ALTER TABLE %s %s', widened.relid, widened.clauses);
        IF NOT dry_run THEN EXECUTE stmt; END IF;
        RETURN QUERY
            SELECT step, f.relid::regclass, p.attname, p.typid::regtype, 'bigint'::regtype,
                   'widen' || coalesce(' (' || f.how || ' ' || f.parent::regclass::text || ')', ''), stmt, 'ACCESS EXCLUSIVE', true,
                   (counts ->> f.relid::text)::bigint, round(extract(epoch FROM clock_timestamp() - locked_at) * 1000, 1)
              FROM jsonb_to_recordset(plan) AS p(relid oid, attname name, typid oid, widen boolean)
              JOIN jsonb_to_recordset(family) AS f(root oid, relid oid, parent oid, how text) ON f.root = p.relid
             WHERE p.relid = widened.relid AND p.widen ORDER BY f.parent IS NOT NULL, f.relid::regclass::text, p.attname;
        -- the foreign keys on the widened columns are dropped and made again,
        -- with their names, and checked: the referencing table is locked too
        RETURN QUERY
            SELECT step, fk.conrelid::regclass, fa.attname, fa.atttypid::regtype, fa.atttypid::regtype,
                   format('foreign key %I checked again', fk.conname), stmt, 'ACCESS EXCLUSIVE', false,
                   (counts ->> fk.conrelid::text)::bigint, round(extract(epoch FROM clock_timestamp() - locked_at) * 1000, 1)
              FROM jsonb_to_recordset(plan) AS p(relid oid, attname name, widen boolean)
              JOIN pg_attribute ka ON ka.attrelid = p.relid AND ka.attname = p.attname
              JOIN pg_constraint fk ON fk.contype = 'f' AND fk.conparentid = 0 AND fk.confrelid = p.relid
              CROSS JOIN LATERAL generate_subscripts(fk.confkey, 1) AS i
              JOIN pg_attribute fa ON fa.attrelid = fk.conrelid AND fa.attnum = fk.conkey[i]
             WHERE p.relid = widened.relid AND p.widen AND fk.confkey[i] = ka.attnum
               AND NOT EXISTS (SELECT FROM jsonb_to_recordset(plan) AS w(relid oid, attname name, widen boolean)
                                WHERE w.relid = fk.conrelid AND w.attname = fa.attname AND w.widen)
             ORDER BY 2, 3;
    END LOOP;

    -- the new default reaches every partition and inheritance child, replacing
    -- any default of their own (which the report names)
    step := step + 1;
    stmt := format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %I.snowflake_nextval()', tbl, col, ext);
    IF NOT dry_run THEN EXECUTE stmt; END IF;
    RETURN QUERY
        SELECT step, f.relid::regclass, col, 'bigint'::regtype, 'bigint'::regtype,
               'set default' || coalesce(' (' || f.how || ' ' || f.parent::regclass::text || ')', '')
                   || coalesce(', replacing its own DEFAULT ' || (own_defaults ->> f.relid::text), ''),
               stmt, 'ACCESS EXCLUSIVE', false,
               (counts ->> f.relid::text)::bigint, round(extract(epoch FROM clock_timestamp() - locked_at) * 1000, 1)
          FROM jsonb_to_recordset(family) AS f(root oid, relid oid, parent oid, how text)
         WHERE f.root = tbl ORDER BY f.parent IS NOT NULL, f.relid::regclass::text;

    IF drop_sequence THEN
        step := step + 1;
        stmt := format('DROP SEQUENCE %s', key_sequence);
        action := format('drop sequence %s, owned by the column', key_sequence);
        IF NOT dry_run THEN EXECUTE stmt; END IF;
        RETURN QUERY SELECT step, tbl, col, 'bigint'::regtype, 'bigint'::regtype,
                            action, stmt, 'ACCESS EXCLUSIVE', false,
                            NULL::bigint, round(extract(epoch FROM clock_timestamp() - locked_at) * 1000, 1);
    END IF;

    -- a changed column type fails every server-side prepared statement that
    -- returns it, in every session, until it is prepared again
    IF EXISTS (SELECT FROM jsonb_to_recordset(plan) AS p(widen boolean) WHERE p.widen) THEN
        step := step + 1;
        RETURN QUERY SELECT step, tbl, col, NULL::regtype, NULL::regtype,
            'other sessions: prepare again what returns a widened column (DISCARD ALL, or reconnect)',
            'DISCARD ALL', NULL::text, false, NULL::bigint, NULL::numeric;
    END IF;
END $$;
COMMENT ON FUNCTION snowflake_convert_column(regclass, name, boolean, boolean) IS 'turns a serial, identity (BY DEFAULT) or nextval() key into bigint DEFAULT snowflake_nextval(), widening the foreign keys that reference it; a row per step and table (partitions and children included) with its rows and how long the locks have been held; dry_run shows the statements only and works read-only; refuses GENERATED ALWAYS, a published table unless subscribers_widened, and CHECK constraints or domains that snowflake ids would violate';

-- time partitioning: a table partitioned by RANGE of a bigint or snowflake id
-- holds in each partition the ids of one UTC hour, day, week, month or year.
-- The bounds take the forms of decoding: under the epoch and layout given
-- (IMMUTABLE), under the epoch given in the default layout, or under
-- snowflake.epoch and snowflake.layout (STABLE).

CREATE FUNCTION _snowflake_partition_unit(unit text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF unit NOT IN ('hour', 'day', 'week', 'month', 'year') THEN
        RAISE EXCEPTION 'invalid partition unit: "%"', unit USING ERRCODE = 'invalid_parameter_value',
            HINT = 'The unit is hour, day, week, month or year (UTC).';
    END IF;
    RETURN unit;
END $$;
COMMENT ON FUNCTION _snowflake_partition_unit(text) IS 'the partition unit, checked: hour, day, week, month or year';

CREATE FUNCTION snowflake_partition_bounds(ts timestamptz, unit text, epoch timestamptz,
        OUT from_id bigint, OUT to_id bigint, OUT from_ts timestamptz, OUT to_ts timestamptz)
    LANGUAGE SQL IMMUTABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
    SELECT snowflake_from_timestamp(b.from_ts, epoch), snowflake_from_timestamp(b.to_ts, epoch), b.from_ts, b.to_ts
      FROM (SELECT _snowflake_partition_unit(unit) AS unit) u,
           LATERAL (SELECT date_trunc(u.unit, ts AT TIME ZONE 'UTC') AS utc_start) t,
           LATERAL (SELECT t.utc_start AT TIME ZONE 'UTC' AS from_ts,
                           (t.utc_start + ('1 ' || u.unit)::interval) AT TIME ZONE 'UTC' AS to_ts) b;
END;
COMMENT ON FUNCTION snowflake_partition_bounds(timestamptz, text, timestamptz) IS 'the ids of the UTC hour, day, week, month or year holding ts, under the epoch given, in the default layout (refused on a node generating another: give the layout after the epoch): FOR VALUES FROM (from_id) TO (to_id)';

CREATE FUNCTION snowflake_partition_bounds(ts timestamptz, unit text, epoch timestamptz, layout text,
        OUT from_id bigint, OUT to_id bigint, OUT from_ts timestamptz, OUT to_ts timestamptz)
    LANGUAGE SQL IMMUTABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
    SELECT snowflake_from_timestamp(b.from_ts, epoch, layout), snowflake_from_timestamp(b.to_ts, epoch, layout), b.from_ts, b.to_ts
      FROM (SELECT _snowflake_partition_unit(unit) AS unit) u,
           LATERAL (SELECT date_trunc(u.unit, ts AT TIME ZONE 'UTC') AS utc_start) t,
           LATERAL (SELECT t.utc_start AT TIME ZONE 'UTC' AS from_ts,
                           (t.utc_start + ('1 ' || u.unit)::interval) AT TIME ZONE 'UTC' AS to_ts) b;
END;
COMMENT ON FUNCTION snowflake_partition_bounds(timestamptz, text, timestamptz, text) IS 'the ids of the UTC hour, day, week, month or year holding ts, under the epoch and layout given: FOR VALUES FROM (from_id) TO (to_id)';

-- under snowflake.epoch and snowflake.layout: the period's times are computed
-- here, as the form given an epoch refuses in other layouts
CREATE FUNCTION snowflake_partition_bounds(ts timestamptz, unit text,
        OUT from_id bigint, OUT to_id bigint, OUT from_ts timestamptz, OUT to_ts timestamptz)
    LANGUAGE SQL STABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
    SELECT snowflake_from_timestamp(b.from_ts), snowflake_from_timestamp(b.to_ts), b.from_ts, b.to_ts
      FROM (SELECT _snowflake_partition_unit(unit) AS unit) u,
           LATERAL (SELECT date_trunc(u.unit, ts AT TIME ZONE 'UTC') AS utc_start) t,
           LATERAL (SELECT t.utc_start AT TIME ZONE 'UTC' AS from_ts,
                           (t.utc_start + ('1 ' || u.unit)::interval) AT TIME ZONE 'UTC' AS to_ts) b;
END;
COMMENT ON FUNCTION snowflake_partition_bounds(timestamptz, text) IS 'the ids of the UTC hour, day, week, month or year holding ts, under snowflake.epoch and snowflake.layout: FOR VALUES FROM (from_id) TO (to_id)';

CREATE FUNCTION snowflake_partitions(parent regclass)
    RETURNS TABLE (partition regclass, from_id bigint, to_id bigint, from_ts timestamptz, to_ts timestamptz)
    LANGUAGE SQL STABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
    SELECT b.partition, b.from_id, b.to_id,
           CASE WHEN b.from_id >= 0 THEN snowflake_to_timestamp(b.from_id) END,
           CASE WHEN b.to_id >= 0 THEN snowflake_to_timestamp(b.to_id) END
      FROM (SELECT c.oid::regclass AS partition,
                   substring(pg_get_expr(c.relpartbound, c.oid) FROM $re$FROM \('?(-?\d+)'?\)$re$)::bigint AS from_id,
                   substring(pg_get_expr(c.relpartbound, c.oid) FROM $re$TO \('?(-?\d+)'?\)$re$)::bigint AS to_id
              FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
             WHERE i.inhparent = parent AND c.relispartition) b
     ORDER BY b.from_id NULLS LAST, b.partition::text;
END;
COMMENT ON FUNCTION snowflake_partitions(regclass) IS 'the partitions of a table partitioned by id ranges, with their bounds as ids and times (NULL: MINVALUE, MAXVALUE, DEFAULT)';

CREATE FUNCTION snowflake_partitions_older_than(parent regclass, age interval) RETURNS SETOF regclass
    LANGUAGE SQL STABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
    SELECT p.partition FROM snowflake_partitions(parent) p
     WHERE p.to_id <= snowflake_from_timestamp(greatest(now() - age, snowflake_to_timestamp(0)))
     ORDER BY p.from_id;
END;
COMMENT ON FUNCTION snowflake_partitions_older_than(regclass, interval) IS 'the partitions holding only ids made more than age ago, oldest first, for retention (it drops nothing)';

CREATE FUNCTION snowflake_create_partition(parent regclass, ts timestamptz, unit text DEFAULT 'day') RETURNS regclass
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake');
    key_type regtype;
    bounds record;
    schema_name name;
    partition_name text;
    existing regclass;
BEGIN
    SELECT a.atttypid INTO key_type
      FROM pg_partitioned_table pt JOIN pg_attribute a ON a.attrelid = pt.partrelid AND a.attnum = pt.partattrs[0]
     WHERE pt.partrelid = parent AND pt.partstrat = 'r' AND pt.partnatts = 1;
    IF key_type IS NULL THEN
        RAISE EXCEPTION 'table % is not partitioned by RANGE of one column', parent USING ERRCODE = 'wrong_object_type';
    END IF;
    IF key_type NOT IN ('bigint'::regtype, format('%I.snowflake', ext)::regtype) THEN
        RAISE EXCEPTION 'the partition key of table % is %, not bigint or snowflake', parent, key_type
            USING ERRCODE = 'datatype_mismatch';
    END IF;
    EXECUTE format('SELECT * FROM %I.snowflake_partition_bounds($1, $2)', ext) INTO bounds USING ts, unit;
    SELECT n.nspname, c.relname || '_' || to_char(bounds.from_ts AT TIME ZONE 'UTC',
               CASE unit WHEN 'hour' THEN 'YYYYMMDD"_"HH24' WHEN 'day' THEN 'YYYYMMDD' WHEN 'week' THEN 'IYYY"w"IW'
                         WHEN 'month' THEN 'YYYYMM' ELSE 'YYYY' END)
      INTO schema_name, partition_name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = parent;
    IF octet_length(partition_name) >= 64 THEN  -- NAMEDATALEN
        RAISE EXCEPTION 'partition name "%" is too long', partition_name USING ERRCODE = 'name_too_long';
    END IF;
    existing := to_regclass(format('%I.%I', schema_name, partition_name));
    IF existing IS NOT NULL THEN
        -- made before with these bounds: nothing to do
        IF EXISTS (SELECT FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                    WHERE i.inhparent = parent AND c.oid = existing
                      AND pg_get_expr(c.relpartbound, c.oid) = format('FOR VALUES FROM (%L) TO (%L)', bounds.from_id, bounds.to_id)) THEN
            RETURN existing;
        END IF;
        RAISE EXCEPTION 'relation % already exists and is not the % partition of %', existing, unit, parent
            USING ERRCODE = 'duplicate_table';
    END IF;
    EXECUTE format('CREATE TABLE %I.%I PARTITION OF %s FOR VALUES FROM (%L) TO (%L)',
                   schema_name, partition_name, parent, bounds.from_id, bounds.to_id);
    RETURN format('%I.%I', schema_name, partition_name)::regclass;
END $$;
COMMENT ON FUNCTION snowflake_create_partition(regclass, timestamptz, text) IS 'creates (or finds) the partition of the UTC hour, day, week, month or year holding ts, named parent_YYYYMMDD and the like';

CREATE FUNCTION snowflake_id_span(span interval, aligned boolean DEFAULT false) RETURNS bigint
    LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake');
    span_ms numeric := extract(epoch FROM span) * 1000;
    epoch_ms numeric;
    ids bigint;
BEGIN
    IF extract(month FROM span) <> 0 OR extract(year FROM span) <> 0 OR span_ms <= 0 OR span_ms <> trunc(span_ms) THEN
        RAISE EXCEPTION 'invalid id span: %', span USING ERRCODE = 'invalid_parameter_value',
            HINT = 'A span is a positive whole number of milliseconds, without months or years (their length varies).';
    END IF;
    -- A length of time (retention, a distance between ids) needs no alignment;
    -- a partition interval does, for its ranges to start where UTC periods start.
    IF aligned THEN
        EXECUTE format('SELECT extract(epoch FROM %I.snowflake_to_timestamp(0)) * 1000', ext) INTO epoch_ms;
        IF epoch_ms % span_ms <> 0 THEN
            RAISE EXCEPTION 'parameter "snowflake.epoch" is not a multiple of % from 1970-01-01 00:00 UTC', span
                USING ERRCODE = 'invalid_parameter_value',
                      DETAIL = 'Partitions of this many ids from id 0 would not start where UTC periods of this length start.',
                      HINT = 'For a partition interval, use a span the epoch is a multiple of (an hour, a day); a retention needs no alignment: leave out aligned.';
        END IF;
    END IF;
    -- the first id of the span's end after the epoch: ms << 22 in the default layout
    EXECUTE format('SELECT %1$I.snowflake_from_timestamp(%1$I.snowflake_to_timestamp(0) + $1)', ext) INTO ids USING span;
    RETURN ids;
END $$;
COMMENT ON FUNCTION snowflake_id_span(interval, boolean) IS 'how many ids a span of time holds (ms << 22 in the default layout; snowflake.layout''s): pg_partman''s retention, and with aligned => true its p_interval (refusing spans the epoch is not a multiple of)';

-- the fleet check: which worker ids made the keys of a table (an aggregator
-- of several nodes sees an unexpected or shared worker id). It reads the
-- table, so STABLE, and PARALLEL RESTRICTED (a temporary table cannot be read
-- in a parallel worker); it finds the extension's functions as the helpers
-- above do.

CREATE FUNCTION snowflake_workers(tbl regclass, col name DEFAULT 'id')
    RETURNS TABLE (worker_id integer, rows bigint, first_ts timestamptz, last_ts timestamptz, origins text[])
    LANGUAGE plpgsql STABLE STRICT PARALLEL RESTRICTED SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake');
    -- where each row came from, by the transaction that wrote it (track_commit_timestamp):
    -- 'local', the subscription (or replication origin) it was applied from, or 'unknown'
    origin text := CASE WHEN current_setting('track_commit_timestamp')::boolean THEN
        $o$(SELECT CASE o.roident WHEN 0 THEN 'local'
                                  ELSE coalesce((SELECT s.subname::text FROM pg_subscription s WHERE r.roname = 'pg_' || s.oid), r.roname::text, 'unknown') END
              FROM pg_xact_commit_timestamp_origin(xmin) o LEFT JOIN pg_replication_origin r ON r.roident = o.roident)$o$
        ELSE 'NULL::text' END;
BEGIN
    RETURN QUERY EXECUTE format(
        'SELECT (%1$I.snowflake_decode(k)).worker_id, count(*), %1$I.snowflake_to_timestamp(min(k)), %1$I.snowflake_to_timestamp(max(k)),
                CASE WHEN count(o) > 0 THEN array_agg(DISTINCT coalesce(o, ''unknown'') ORDER BY coalesce(o, ''unknown'')) END
           FROM (SELECT %2$I::bigint AS k, %4$s AS o FROM %3$s WHERE %2$I::bigint >= 0) AS keys GROUP BY 1 ORDER BY 1',
        ext, col, tbl, origin);
END $$;
COMMENT ON FUNCTION snowflake_workers(regclass, name) IS 'the worker ids in a table''s snowflake keys, with how many rows each made, the times of its first and last, and (with track_commit_timestamp) the origins its rows came from: a fleet check for an aggregator of several nodes, where two origins under one worker id are two nodes sharing it';

-- fleets: worker ids claimed from a registry (snowflake.registry on the
-- nodes). snowflake_registry_create() makes the registry in the current
-- database, in the schema snowflake_registry: a row per worker id it may
-- grant, the history of its grants, and one row of settings. Each grant is a
-- window of id times [from, until) that never overlaps another grant of the
-- same worker id: from is the registry's clock, or later: the worker id's
-- high-water mark (the highest until ever granted, lowered only by its
-- holder's clean release to the time after its last id) or the floor. A
-- node's background worker calls claim, present (a 1.0 node: renew) and
-- release; the row lock of the settings row orders the claims. Times are ms
-- since 1970 (the registry's clock_timestamp()).
--
-- Lives: the registry knows when it begins a new life — promoted (its
-- timeline changed), restored or recovered to a point in time, its database
-- copied, or created afresh — by an identity kept in its settings (a random
-- registry id made at create, the server's system identifier and timeline,
-- the database's oid), compared at every call. A new life starts a grace
-- period of one maximum window plus the skew bound in which no new window is
-- granted and holders present the windows they hold
-- (snowflake_registry_present): a window granted by a lost life is
-- reinstated, never granted again. Grants record the life that made them.
--
-- Roles: a node's role needs no privilege on the registry's tables. The
-- functions a node's background worker calls run as the extension's owner
-- (SECURITY DEFINER, search_path pinned), and only the roles
-- snowflake_registry_grant names may call them: the registry's life, claim,
-- renew (1.0 nodes), present and a node's release. The registry's other
-- functions are its owner's (superusers, or roles they grant them to).
-- snowflake_registry_identity is SECURITY DEFINER too, so that the registry's
-- functions read the server's identity whoever calls them. No registry
-- function is left to PUBLIC; its schema and tables never were.

-- The server's identity, for the registry's functions: the registry's role
-- need not read pg_control. Its SQL-standard body is bound when made, never
-- through a search_path.
CREATE FUNCTION snowflake_registry_identity(OUT system_identifier bigint, OUT timeline bigint, OUT database_oid oid,
                                            OUT started_ms bigint, OUT promoted_ms bigint)
    LANGUAGE sql VOLATILE PARALLEL UNSAFE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT c.system_identifier, t.timeline,
           (SELECT d.oid FROM pg_database d WHERE d.datname = current_database()),
           (extract(epoch FROM pg_postmaster_start_time()) * 1000)::bigint,
           (SELECT (extract(epoch FROM f.modification) * 1000)::bigint
              FROM pg_stat_file('pg_wal/' || upper(lpad(to_hex(t.timeline), 8, '0')) || '.history', true) f)
      FROM pg_control_system() c,
           LATERAL (SELECT CASE WHEN pg_is_in_recovery() THEN NULL
                                ELSE ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint END
                           AS timeline) t;
END;
COMMENT ON FUNCTION snowflake_registry_identity() IS 'the identity of the registry''s server and database: system identifier, timeline (NULL in recovery), database oid, when the server started and when it was promoted to its timeline (its history file, NULL on the first)';
REVOKE ALL ON FUNCTION snowflake_registry_identity() FROM PUBLIC;

-- The transaction writing a row of the registry's tables (its xmin, also
-- inside a savepoint): every write records it, and a row whose xmin differs
-- was written by something else (a restore into the running registry). It
-- and the monotonic clock tell nothing secret: anyone may call them, as the
-- registry's operator functions, which run as their caller, do.
CREATE FUNCTION _snowflake_registry_writer() RETURNS xid
    AS 'MODULE_PATHNAME', 'snowflake_registry_writer' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION _snowflake_registry_writer() IS 'the id of the current (sub)transaction, assigned if it has none: the registry''s functions record it in each row they write';
-- The machine's monotonic clock: a grace lasts its length by it too.
CREATE FUNCTION _snowflake_registry_monotonic_ms() RETURNS bigint
    AS 'MODULE_PATHNAME', 'snowflake_registry_monotonic_ms' LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION _snowflake_registry_monotonic_ms() IS 'ms since this machine started (CLOCK_MONOTONIC, never set): the registry''s grace lasts its length by it as well as by the wall clock';

-- The registry's shape for lives, added to the settings and grants of the
-- tables snowflake_registry_create makes, and of a registry made by 1.0's
-- (the 1.0 to 1.1 update calls it when a registry is there). The largest
-- window it granted bounds the maximum window.
CREATE FUNCTION snowflake_registry_add_lives()
    RETURNS void LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake');
    id record;
    me xid;
BEGIN
    EXECUTE format('SELECT * FROM %I.snowflake_registry_identity()', ext) INTO id;
    ALTER TABLE snowflake_registry.settings
        ADD COLUMN max_window_ms bigint NOT NULL DEFAULT 90000 CHECK (max_window_ms > 0),
        ADD COLUMN max_skew_ms bigint NOT NULL DEFAULT 1000 CHECK (max_skew_ms >= 0),
        ADD COLUMN registry_id text,        -- random, made at create: this registry and no other
        ADD COLUMN life text,               -- random, made when a life begins
        ADD COLUMN life_began_ms bigint,
        ADD COLUMN life_change text,        -- why it began
        ADD COLUMN grace_until_ms bigint NOT NULL DEFAULT 0,  -- no new window before it
        ADD COLUMN system_identifier bigint,  -- the identity of the life
        ADD COLUMN timeline bigint,
        ADD COLUMN database_oid oid,
        ADD COLUMN started_ms bigint,  -- the server's start: every start may be a rollback
        ADD COLUMN tables_oids oid[],  -- settings, workers, grants: tables made again (pg_restore --clean) are a rollback
        ADD COLUMN written_xid xid,    -- the transaction that wrote the row (its xmin), or it was restored
        ADD COLUMN grace_monotonic_ms bigint;  -- the grace's end by _snowflake_registry_monotonic_ms()
    ALTER TABLE snowflake_registry.workers ADD COLUMN written_xid xid;
    -- the first call of a life (ms since 1970): a sequence, not undone by a rollback
    CREATE SEQUENCE snowflake_registry.life_first_call MINVALUE 0 START 0;
    ALTER TABLE snowflake_registry.grants
        ADD COLUMN registry_id text,  -- the registry and life that made the grant (a reinstated one: the presenter's)
        ADD COLUMN life text,
        ADD COLUMN reinstated_ms bigint,  -- presented by its holder in a later life
        ADD COLUMN holder text;  -- the incarnation granted it (holders are told apart by it, not by name)
    EXECUTE format('SELECT %I._snowflake_registry_writer()', ext) INTO me;
    UPDATE snowflake_registry.settings
       SET registry_id = gen_random_uuid()::text, life = gen_random_uuid()::text,
           life_began_ms = (extract(epoch FROM clock_timestamp()) * 1000)::bigint, life_change = 'lives added (1.0''s registry)',
           max_window_ms = greatest(90000, (SELECT max(w.expires_ms - w.renewed_ms) FROM snowflake_registry.workers w)),
           system_identifier = id.system_identifier, timeline = id.timeline, database_oid = id.database_oid,
           started_ms = id.started_ms, written_xid = me,
           tables_oids = ARRAY['snowflake_registry.settings'::regclass, 'snowflake_registry.workers'::regclass,
                               'snowflake_registry.grants'::regclass]::oid[];
    -- a new life with a grace: a 1.0 registry restored may have forgotten
    -- grants (the update of a running one ends it: it forgot nothing)
    UPDATE snowflake_registry.settings s
       SET grace_until_ms = s.life_began_ms + s.max_window_ms + s.max_skew_ms, written_xid = me;
    EXECUTE format('UPDATE snowflake_registry.settings s SET grace_monotonic_ms = %I._snowflake_registry_monotonic_ms()
                       + s.grace_until_ms - (extract(epoch FROM clock_timestamp()) * 1000)::bigint', ext);
    UPDATE snowflake_registry.workers SET written_xid = me;
    UPDATE snowflake_registry.grants g SET registry_id = s.registry_id, life = s.life FROM snowflake_registry.settings s;
    UPDATE snowflake_registry.grants g SET holder = w.holder
      FROM snowflake_registry.workers w WHERE w.worker_id = g.worker_id AND w.fencing_epoch = g.fencing_epoch;
END $$;
COMMENT ON FUNCTION snowflake_registry_add_lives() IS 'brings a registry made by snowflake 1.0 to the shape of 1.1 (its lives); the update to 1.1 does it in the database it runs in';
REVOKE ALL ON FUNCTION snowflake_registry_add_lives() FROM PUBLIC;

CREATE FUNCTION snowflake_registry_create(worker_ids int4range DEFAULT '[0,1024)',
                                          quarantine interval DEFAULT '10 min',
                                          max_window interval DEFAULT '90 s',
                                          max_skew interval DEFAULT '1 s')
    RETURNS void LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake');
    s record;
BEGIN
    IF lower(worker_ids) IS NULL OR upper(worker_ids) IS NULL OR lower(worker_ids) < 0 OR upper(worker_ids) > 65536 THEN
        RAISE EXCEPTION 'the worker ids of a registry are a bounded range within [0,65536), not %', worker_ids
            USING ERRCODE = '22023';
    END IF;
    IF max_window < interval '1 s' OR max_skew < interval '0' OR quarantine < interval '0' THEN
        RAISE EXCEPTION 'a registry''s maximum window is at least 1 s, its skew bound and quarantine not negative'
            USING ERRCODE = '22023';
    END IF;
    CREATE SCHEMA snowflake_registry;
    COMMENT ON SCHEMA snowflake_registry IS 'the snowflake registry: worker ids granted to nodes as windows of id times';
    CREATE TABLE snowflake_registry.settings (
        one boolean PRIMARY KEY DEFAULT true CHECK (one),
        floor_ms bigint NOT NULL DEFAULT 0,   -- no window starts below it (snowflake_registry_raise_floor)
        quarantine_ms bigint NOT NULL CHECK (quarantine_ms >= 0),  -- an expired grant's worker id rests this long
        epoch_ms bigint,  -- the fleet's snowflake.epoch and snowflake.layout, from the first claim
        layout text);
    INSERT INTO snowflake_registry.settings (quarantine_ms)
        VALUES ((extract(epoch FROM quarantine) * 1000)::bigint);
    CREATE TABLE snowflake_registry.workers (
        worker_id integer PRIMARY KEY,
        fencing_epoch bigint NOT NULL DEFAULT 0,  -- the grant held, or the last one
        holder text,          -- the holding server's incarnation (made at its start, kept in memory); NULL: released
        holder_name text,     -- host:port and data directory of the holder, or of the last one
        window_from_ms bigint,
        high_water_ms bigint NOT NULL DEFAULT 0,  -- no id of this worker id is at or past it
        expires_ms bigint,    -- the window's end: the holder refuses ids from then on
        renewed_ms bigint,
        released_ms bigint);
    INSERT INTO snowflake_registry.workers (worker_id)
        SELECT generate_series(lower(worker_ids), upper(worker_ids) - 1);
    CREATE TABLE snowflake_registry.grants (
        worker_id integer NOT NULL,
        fencing_epoch bigint NOT NULL,
        holder_name text NOT NULL,
        from_ms bigint NOT NULL,
        until_ms bigint NOT NULL,  -- renewals raise it; a clean release lowers it to after the last id
        granted_ms bigint NOT NULL,
        PRIMARY KEY (worker_id, fencing_epoch));
    CREATE VIEW snowflake_registry.claims AS
        SELECT w.worker_id,
               CASE WHEN w.holder IS NULL THEN 'free'
                    WHEN w.expires_ms > n.ms THEN 'held'
                    WHEN w.expires_ms + s.quarantine_ms > n.ms THEN 'quarantine'
                    ELSE 'free' END AS state,
               w.holder_name, w.fencing_epoch,
               to_timestamp(w.window_from_ms / 1000.0) AS window_from,
               to_timestamp(w.expires_ms / 1000.0) AS window_until,
               to_timestamp(w.renewed_ms / 1000.0) AS renewed_at,
               to_timestamp(w.released_ms / 1000.0) AS released_at
          FROM snowflake_registry.workers w, snowflake_registry.settings s,
               LATERAL (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms) n;
    COMMENT ON VIEW snowflake_registry.claims IS 'each worker id of the registry: held, in quarantine (its holder stopped renewing) or free, with its holder and window';
    EXECUTE format('SELECT %I.snowflake_registry_add_lives()', ext);
    -- created afresh: a new life, whose grace lets holders of a lost registry present their windows
    UPDATE snowflake_registry.settings
       SET max_window_ms = (extract(epoch FROM max_window) * 1000)::bigint, max_skew_ms = (extract(epoch FROM max_skew) * 1000)::bigint,
           life_change = 'created'  -- written_xid: add_lives', in this transaction
    RETURNING * INTO s;
    UPDATE snowflake_registry.settings SET grace_until_ms = s.life_began_ms + s.max_window_ms + s.max_skew_ms RETURNING * INTO s;
    EXECUTE format('UPDATE snowflake_registry.settings SET grace_monotonic_ms = %I._snowflake_registry_monotonic_ms() + $1', ext)
        USING s.max_window_ms + s.max_skew_ms;
    RAISE NOTICE 'the snowflake registry grants no new window until % (its grace period)', to_timestamp(s.grace_until_ms / 1000.0)
        USING HINT = 'For a new fleet, whose nodes hold no window of an earlier registry, end it with snowflake_registry_end_grace().';
END $$;
COMMENT ON FUNCTION snowflake_registry_create(int4range, interval, interval, interval) IS 'creates the registry of a fleet''s worker ids in the current database (schema snowflake_registry): the worker ids it grants, how long the worker id of a holder that stopped renewing rests, the longest window it grants and the clock skew it allows for; its grace period starts';
REVOKE ALL ON FUNCTION snowflake_registry_create(int4range, interval, interval, interval) FROM PUBLIC;

-- The life of the registry, beginning a new one when its identity changed:
-- called by every call of a node.
CREATE FUNCTION snowflake_registry_life(OUT registry_id text, OUT life text, OUT life_began_ms bigint, OUT life_change text,
                                        OUT grace_until_ms bigint, OUT max_window_ms bigint, OUT server text, OUT now_ms bigint)
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake');
    id record;
    s snowflake_registry.settings;
    why text;
    first_ms bigint;
    me xid;
    mono bigint;
    -- R1: the registry's tables made again (pg_restore --clean) or its
    -- settings row written by anything but its functions (a data-only
    -- restore): a rollback without a start. (Not a worker id's row: a 1.0
    -- node's renewal in flight across the update to 1.1 writes one.)
    restored CONSTANT text := 'SELECT CASE
            WHEN s.tables_oids IS DISTINCT FROM ARRAY[''snowflake_registry.settings''::regclass, ''snowflake_registry.workers''::regclass,
                                                      ''snowflake_registry.grants''::regclass]::oid[]
                THEN ''restored into it: its tables were made again''
            WHEN s.xmin IS DISTINCT FROM s.written_xid
                THEN ''restored into it: its settings were written by another transaction'' END
          FROM snowflake_registry.settings s';
BEGIN
    EXECUTE format('SELECT * FROM %I.snowflake_registry_identity()', ext) INTO id;
    IF id.timeline IS NULL THEN
        RAISE EXCEPTION 'the snowflake registry is on a server in recovery'
            USING ERRCODE = '25006',
                  HINT = 'Nodes follow a registry''s failover with a multi-host "snowflake.registry" and target_session_attrs=read-write.';
    END IF;
    SELECT * INTO STRICT s FROM snowflake_registry.settings;
    EXECUTE restored INTO why;
    now_ms := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
    IF why IS NOT NULL OR (s.system_identifier, s.timeline, s.database_oid, s.started_ms)
       IS DISTINCT FROM (id.system_identifier, id.timeline, id.database_oid, id.started_ms)
       OR s.grace_until_ms > now_ms + s.max_window_ms + s.max_skew_ms THEN
        SELECT * INTO STRICT s FROM snowflake_registry.settings FOR UPDATE;  -- one call begins it
        EXECUTE restored INTO why;
        EXECUTE format('SELECT %I._snowflake_registry_writer()', ext) INTO me;
        now_ms := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
        IF why IS NOT NULL OR (s.system_identifier, s.timeline, s.database_oid, s.started_ms)
           IS DISTINCT FROM (id.system_identifier, id.timeline, id.database_oid, id.started_ms) THEN
            -- The grace counts from the first call that met this life: the
            -- lost life (another registry running until nodes reached this
            -- one, a restore started long before, a clock set right after
            -- the start) may have granted until then. It is kept in a
            -- sequence, which a call whose transaction rolls back (a claim
            -- refused in the grace) does not undo: every later call of the
            -- life finds the same grace. A mark from before this server's
            -- start or promotion, or not after the life the settings row
            -- records began (a restored sequence), is an earlier life's; so
            -- is any after a restore into the running registry (its tables
            -- restored without their sequence keep a later life's mark).
            first_ms := (SELECT f.last_value FROM snowflake_registry.life_first_call f);
            IF why IS NOT NULL OR first_ms < greatest(id.started_ms, id.promoted_ms) OR first_ms <= s.life_began_ms
               OR (s.system_identifier, s.database_oid) IS DISTINCT FROM (id.system_identifier, id.database_oid) THEN
                first_ms := now_ms;
                PERFORM setval('snowflake_registry.life_first_call', now_ms);
            END IF;
            why := CASE WHEN why IS NOT NULL THEN why
                        WHEN s.system_identifier IS DISTINCT FROM id.system_identifier
                             THEN format('another server: system identifier %s, was %s', id.system_identifier, s.system_identifier)
                        WHEN s.database_oid IS DISTINCT FROM id.database_oid
                             THEN format('its database copied: oid %s, was %s', id.database_oid, s.database_oid)
                        WHEN s.timeline IS DISTINCT FROM id.timeline
                             THEN format('promoted or restored: timeline %s, was %s', id.timeline, s.timeline)
                        ELSE format('its server started at %s (restarted, restored or a copy)', to_timestamp(id.started_ms / 1000.0)) END;
            -- R2: never later than a grace from now (a clock that was ahead)
            UPDATE snowflake_registry.settings
               SET life = gen_random_uuid()::text, life_began_ms = now_ms, life_change = why,
                   grace_until_ms = least(greatest(s.grace_until_ms, least(first_ms, now_ms) + s.max_window_ms + s.max_skew_ms),
                                          now_ms + s.max_window_ms + s.max_skew_ms),
                   system_identifier = id.system_identifier, timeline = id.timeline, database_oid = id.database_oid,
                   started_ms = id.started_ms, written_xid = me,
                   tables_oids = ARRAY['snowflake_registry.settings'::regclass, 'snowflake_registry.workers'::regclass,
                                       'snowflake_registry.grants'::regclass]::oid[]
            RETURNING * INTO s;
            EXECUTE format('SELECT %I._snowflake_registry_monotonic_ms()', ext) INTO mono;
            UPDATE snowflake_registry.settings SET grace_monotonic_ms = mono + (s.grace_until_ms - now_ms) RETURNING * INTO s;
            RAISE LOG 'snowflake registry: a new life begins (%): no new window is granted until %, holders present theirs',
                why, to_timestamp(s.grace_until_ms / 1000.0);
        ELSIF s.grace_until_ms > now_ms + s.max_window_ms + s.max_skew_ms THEN
            -- R2 at every call: a grace set while the clock ran ahead (and
            -- stepped back since) ends one grace from now at the latest
            UPDATE snowflake_registry.settings SET grace_until_ms = now_ms + s.max_window_ms + s.max_skew_ms, written_xid = me
            RETURNING * INTO s;
            RAISE LOG 'snowflake registry: its grace period ends at % (one grace from now: its clock went back)',
                to_timestamp(s.grace_until_ms / 1000.0);
        END IF;
    END IF;
    registry_id := s.registry_id; life := s.life; life_began_ms := s.life_began_ms; life_change := s.life_change;
    max_window_ms := s.max_window_ms;
    server := format('%s:%s', id.system_identifier, (extract(epoch FROM pg_postmaster_start_time()) * 1000000)::bigint);
    now_ms := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
    -- R2: the grace in force lasts its length by the monotonic clock too (a
    -- wall clock set forward during it does not shorten it)
    grace_until_ms := s.grace_until_ms;
    IF s.grace_monotonic_ms IS NOT NULL AND now_ms >= s.grace_until_ms THEN
        EXECUTE format('SELECT %I._snowflake_registry_monotonic_ms()', ext) INTO mono;
        grace_until_ms := greatest(grace_until_ms, now_ms + s.grace_monotonic_ms - mono);
    END IF;
END $$;
COMMENT ON FUNCTION snowflake_registry_life() IS 'the registry''s life (begun anew when its server, timeline or database changed, or a restore rewrote its tables) and its grace period (called by nodes)';
REVOKE ALL ON FUNCTION snowflake_registry_life() FROM PUBLIC;

CREATE FUNCTION snowflake_registry_end_grace()
    RETURNS boolean LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake');
    now_ms bigint;
    ended boolean;
    me xid;
BEGIN
    EXECUTE format('SELECT now_ms FROM %I.snowflake_registry_life()', ext) INTO now_ms;
    EXECUTE format('SELECT %I._snowflake_registry_writer()', ext) INTO me;
    UPDATE snowflake_registry.settings s SET grace_until_ms = now_ms, grace_monotonic_ms = NULL, written_xid = me
     WHERE s.grace_until_ms > now_ms OR s.grace_monotonic_ms IS NOT NULL RETURNING true INTO ended;
    IF ended THEN
        RAISE LOG 'snowflake registry: grace period ended by snowflake_registry_end_grace()';
    END IF;
    RETURN coalesce(ended, false);
END $$;
COMMENT ON FUNCTION snowflake_registry_end_grace() IS 'ends the registry''s grace period now: safe only when it replicated synchronously, or no node can hold a window granted by an earlier life (a new fleet)';
REVOKE ALL ON FUNCTION snowflake_registry_end_grace() FROM PUBLIC;

CREATE FUNCTION snowflake_registry_claim(holder text, holder_name text, previous integer, max_worker integer,
                                         window_ms bigint, epoch_ms bigint, layout text,
                                         OUT worker_id integer, OUT fencing_epoch bigint, OUT from_ms bigint,
                                         OUT until_ms bigint, OUT now_ms bigint)
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake');
    s snowflake_registry.settings;
    w snowflake_registry.workers;
    counts text;
    me xid;
    gap bigint;  -- R6: after a holder that did not release its worker id cleanly
    grace_end bigint;
BEGIN
    -- not STRICT (previous may be NULL), so a NULL holder cannot make a grant that looks free
    IF holder IS NULL OR holder_name IS NULL OR max_worker IS NULL OR window_ms IS NULL OR window_ms < 1
       OR epoch_ms IS NULL OR layout IS NULL THEN
        RAISE EXCEPTION 'a claim needs a holder, its name, the highest worker id, a window of at least 1 ms, the epoch and the layout'
            USING ERRCODE = '22023';
    END IF;
    EXECUTE format('SELECT grace_until_ms FROM %I.snowflake_registry_life()', ext) INTO grace_end;
    EXECUTE format('SELECT %I._snowflake_registry_writer()', ext) INTO me;
    SELECT * INTO STRICT s FROM snowflake_registry.settings FOR UPDATE;  -- one claim at a time
    now_ms := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
    window_ms := least(window_ms, s.max_window_ms);  -- a longer window gets the registry's maximum
    gap := s.max_window_ms + s.max_skew_ms;
    IF s.epoch_ms IS NULL THEN
        UPDATE snowflake_registry.settings SET epoch_ms = snowflake_registry_claim.epoch_ms, layout = snowflake_registry_claim.layout,
                                               written_xid = me;
    ELSIF s.epoch_ms <> snowflake_registry_claim.epoch_ms OR s.layout <> snowflake_registry_claim.layout THEN
        RAISE EXCEPTION 'this registry grants worker ids for snowflake.epoch % and snowflake.layout "%", not % and "%"',
            to_timestamp(s.epoch_ms / 1000.0), s.layout, to_timestamp(snowflake_registry_claim.epoch_ms / 1000.0), snowflake_registry_claim.layout
            USING ERRCODE = '22023',
                  HINT = 'Every node of a fleet has the same epoch and layout; a node of another fleet needs a registry of its own.';
    END IF;
    -- the grant this server holds already (its background worker started
    -- again), known to this life (R5: a window of an earlier life is
    -- presented, never claimed back)
    SELECT * INTO w FROM snowflake_registry.workers r
     WHERE r.holder = snowflake_registry_claim.holder AND r.renewed_ms > s.life_began_ms FOR UPDATE;
    IF FOUND THEN
        UPDATE snowflake_registry.workers r  -- R3: no later than one maximum window from now
           SET expires_ms = least(greatest(r.expires_ms, now_ms + window_ms), now_ms + s.max_window_ms),
               high_water_ms = greatest(r.high_water_ms, now_ms + window_ms), renewed_ms = now_ms, written_xid = me
         WHERE r.worker_id = w.worker_id RETURNING r.expires_ms INTO until_ms;
        UPDATE snowflake_registry.grants g SET until_ms = greatest(g.until_ms, snowflake_registry_claim.until_ms)
         WHERE g.worker_id = w.worker_id AND g.fencing_epoch = w.fencing_epoch;
        worker_id := w.worker_id; fencing_epoch := w.fencing_epoch; from_ms := w.window_from_ms;
        RETURN;
    END IF;
    IF now_ms < grace_end THEN
        RAISE EXCEPTION 'the snowflake registry grants no new window until %', to_timestamp(grace_end / 1000.0)
            USING ERRCODE = '55000',
                  DETAIL = format('It began a new life at %s (%s); until the grace period ends, nodes holding a window of an earlier life present it.',
                                  to_timestamp(s.life_began_ms / 1000.0), s.life_change),
                  HINT = 'The node claims again by itself. snowflake_registry_end_grace() ends the grace period, safe only when the registry replicated synchronously or no node can hold a window of an earlier life.';
    END IF;
    -- the worker id this server released cleanly, or the one free the longest
    -- (one whose next window starts by now first: ids are not dated ahead).
    -- R6: a worker id whose holder's window expired (not released) starts
    -- its next window one grace after that window's end, so that no
    -- presented window a later life reinstates reaches it
    SELECT * INTO w FROM snowflake_registry.workers r
     WHERE r.worker_id = previous AND r.worker_id <= max_worker AND r.holder IS NULL AND r.holder_name = snowflake_registry_claim.holder_name
       FOR UPDATE;
    IF NOT FOUND THEN
        SELECT * INTO w FROM snowflake_registry.workers r
         WHERE r.worker_id <= max_worker AND (r.holder IS NULL OR r.expires_ms + s.quarantine_ms <= now_ms)
         ORDER BY greatest(r.high_water_ms + CASE WHEN r.holder IS NULL THEN 0 ELSE gap END, s.floor_ms) > now_ms,
                  CASE WHEN r.holder IS NULL THEN r.released_ms ELSE r.expires_ms + s.quarantine_ms END NULLS FIRST, r.worker_id
         LIMIT 1 FOR UPDATE;
    END IF;
    IF NOT FOUND THEN
        SELECT format('%s held, %s in quarantine', count(*) FILTER (WHERE c.state = 'held'),
                      count(*) FILTER (WHERE c.state = 'quarantine'))
          INTO counts FROM snowflake_registry.claims c WHERE c.worker_id <= max_worker;
        RAISE EXCEPTION 'no worker id is free in the snowflake registry'
            USING ERRCODE = '53400', DETAIL = format('Of its worker ids up to %s: %s.', max_worker, counts),
                  HINT = 'Release the worker id of a server that is gone for good with snowflake_registry_release(worker_id), or wait for the quarantine to end.';
    END IF;
    from_ms := greatest(w.high_water_ms + CASE WHEN w.holder IS NULL THEN 0 ELSE gap END, s.floor_ms, now_ms);
    -- R3: a window starting more than a maximum window ahead is granted empty, and grows by renewals
    until_ms := least(from_ms + window_ms, now_ms + s.max_window_ms);
    worker_id := w.worker_id;
    -- above every grant recorded (a reinstated grant may have set the row's lower)
    fencing_epoch := greatest(w.fencing_epoch, (SELECT max(g.fencing_epoch) FROM snowflake_registry.grants g WHERE g.worker_id = w.worker_id)) + 1;
    UPDATE snowflake_registry.workers r
       SET fencing_epoch = snowflake_registry_claim.fencing_epoch, holder = snowflake_registry_claim.holder, holder_name = snowflake_registry_claim.holder_name,
           window_from_ms = from_ms, high_water_ms = greatest(from_ms, until_ms), expires_ms = until_ms, renewed_ms = now_ms,
           released_ms = NULL, written_xid = me
     WHERE r.worker_id = w.worker_id;
    INSERT INTO snowflake_registry.grants (worker_id, fencing_epoch, holder_name, from_ms, until_ms, granted_ms, registry_id, life, holder)
        VALUES (worker_id, fencing_epoch, holder_name, from_ms, until_ms, now_ms, s.registry_id, s.life, snowflake_registry_claim.holder);
END $$;
COMMENT ON FUNCTION snowflake_registry_claim(text, text, integer, integer, bigint, bigint, text) IS 'grants a node a worker id and a window of id times (called by the node''s background worker)';
REVOKE ALL ON FUNCTION snowflake_registry_claim(text, text, integer, integer, bigint, bigint, text) FROM PUBLIC;

-- a 1.0 node's renewal (a 1.1 node presents its window instead)
CREATE FUNCTION snowflake_registry_renew(worker_id integer, fencing_epoch bigint, holder text, window_ms bigint,
                                         OUT until_ms bigint, OUT now_ms bigint)
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake');
    max_window bigint;
    me xid;
BEGIN
    EXECUTE format('SELECT now_ms, least($1, max_window_ms), max_window_ms FROM %I.snowflake_registry_life()', ext)
        USING window_ms INTO now_ms, window_ms, max_window;
    EXECUTE format('SELECT %I._snowflake_registry_writer()', ext) INTO me;
    UPDATE snowflake_registry.workers r  -- R3
       SET expires_ms = least(greatest(r.expires_ms, now_ms + window_ms), now_ms + max_window),
           high_water_ms = greatest(r.high_water_ms, now_ms + window_ms), renewed_ms = now_ms, written_xid = me
     WHERE r.worker_id = snowflake_registry_renew.worker_id AND r.fencing_epoch = snowflake_registry_renew.fencing_epoch AND r.holder = snowflake_registry_renew.holder
     RETURNING r.expires_ms INTO until_ms;
    IF NOT FOUND THEN
        RETURN;  -- until_ms NULL: the grant is gone (another holder, or released)
    END IF;
    UPDATE snowflake_registry.grants g SET until_ms = greatest(g.until_ms, snowflake_registry_renew.until_ms)
     WHERE g.worker_id = snowflake_registry_renew.worker_id AND g.fencing_epoch = snowflake_registry_renew.fencing_epoch;
END $$;
COMMENT ON FUNCTION snowflake_registry_renew(integer, bigint, text, bigint) IS 'extends a node''s window, if the grant is still its own (called by the node''s background worker)';
REVOKE ALL ON FUNCTION snowflake_registry_renew(integer, bigint, text, bigint) FROM PUBLIC;

-- A holder's call at every renewal: renews its window, or, when the window
-- was granted by another life or registry than this one, presents it for
-- reinstatement, answered at once (also in a grace period). outcome:
-- renewed, reinstated, lost (the worker id is another holder's, its windows
-- apart, or the window presented has ended; the window stays valid to its
-- end) or conflict (another grant of the worker id overlaps the window: two
-- registries granted it). Holders are told apart by their incarnation.
CREATE FUNCTION snowflake_registry_present(worker_id integer, fencing_epoch bigint, holder text, holder_name text,
                                           from_ms bigint, until_ms bigint, window_ms bigint,
                                           held_registry text, held_life text,
                                           OUT outcome text, OUT granted_until_ms bigint, OUT reason text,
                                           OUT registry_id text, OUT life text, OUT life_change text,
                                           OUT grace_until_ms bigint, OUT server text, OUT now_ms bigint,
                                           OUT max_window_ms bigint)
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake');
    l record;
    w snowflake_registry.workers;
    g snowflake_registry.grants;
    me xid;
    l_mono bigint;
    p_worker integer := snowflake_registry_present.worker_id;
    p_epoch bigint := snowflake_registry_present.fencing_epoch;
    p_holder text := snowflake_registry_present.holder;
    p_name text := snowflake_registry_present.holder_name;
    p_from bigint := snowflake_registry_present.from_ms;
    p_until bigint := snowflake_registry_present.until_ms;
BEGIN
    IF window_ms < 1 THEN
        RAISE EXCEPTION 'a presented window renews by at least 1 ms' USING ERRCODE = '22023';
    END IF;
    EXECUTE format('SELECT * FROM %I.snowflake_registry_life()', ext) INTO l;
    EXECUTE format('SELECT %I._snowflake_registry_writer()', ext) INTO me;
    registry_id := l.registry_id; life := l.life; life_change := l.life_change;
    grace_until_ms := l.grace_until_ms; server := l.server; now_ms := l.now_ms; max_window_ms := l.max_window_ms;
    window_ms := least(window_ms, l.max_window_ms);
    IF held_registry = l.registry_id AND held_life = l.life THEN  -- a renewal
        -- R3: no later than one maximum window from now; the high water is
        -- what the holder holds (its window as it presents it, and this
        -- answer), so that a registry clock that ran ahead does not keep
        -- the worker id out once the holder is gone
        UPDATE snowflake_registry.workers r
           SET expires_ms = least(greatest(r.expires_ms, now_ms + window_ms), now_ms + l.max_window_ms),
               high_water_ms = greatest(r.window_from_ms, p_until,
                                        least(greatest(r.expires_ms, now_ms + window_ms), now_ms + l.max_window_ms)),
               renewed_ms = now_ms, written_xid = me
         WHERE r.worker_id = p_worker AND r.fencing_epoch = p_epoch AND r.holder = p_holder
         RETURNING r.expires_ms INTO granted_until_ms;
        IF FOUND THEN
            UPDATE snowflake_registry.grants r SET until_ms = greatest(r.until_ms, granted_until_ms)
             WHERE r.worker_id = p_worker AND r.fencing_epoch = p_epoch;
            outcome := 'renewed';
            RETURN;
        END IF;
        EXECUTE format('SELECT %I._snowflake_registry_monotonic_ms()', ext) INTO l_mono;
        -- A grant of this life the registry does not know (none of the
        -- worker id at or after its fencing epoch), or one it granted again
        -- to another incarnation for times the window covers: it was rolled
        -- back (a snapshot resumed, a backup restored) without a new start. A
        -- new life begins, and the window is presented to it (a grant
        -- overlapping it is a conflict, below).
        IF NOT EXISTS (SELECT FROM snowflake_registry.workers r WHERE r.worker_id = p_worker)
           OR (EXISTS (SELECT FROM snowflake_registry.grants r WHERE r.worker_id = p_worker AND r.fencing_epoch >= p_epoch)
               AND NOT EXISTS (SELECT FROM snowflake_registry.grants r
                                WHERE r.worker_id = p_worker AND r.fencing_epoch >= p_epoch
                                  AND NOT (r.fencing_epoch = p_epoch AND CASE WHEN r.holder IS NULL THEN r.holder_name = p_name
                                                                             ELSE r.holder = p_holder END)
                                  AND (r.fencing_epoch = p_epoch OR (r.from_ms < p_until AND p_from < r.until_ms)))) THEN
            outcome := 'lost'; reason := 'another server holds the worker id, or it was released';
            RETURN;
        END IF;
        UPDATE snowflake_registry.settings s
           SET life = gen_random_uuid()::text, life_began_ms = now_ms,
               life_change = format('rolled back: worker id %s presented with fencing epoch %s, which it does not know or granted again', p_worker, p_epoch),
               grace_until_ms = now_ms + s.max_window_ms + s.max_skew_ms, written_xid = me,
               grace_monotonic_ms = l_mono + s.max_window_ms + s.max_skew_ms
        RETURNING s.life, s.life_change, s.grace_until_ms INTO life, life_change, grace_until_ms;
        RAISE LOG 'snowflake registry: a new life begins (%): no new window is granted until %, holders present theirs',
            life_change, to_timestamp(grace_until_ms / 1000.0);
    END IF;
    PERFORM 1 FROM snowflake_registry.settings FOR UPDATE;  -- ordered with the claims
    SELECT * INTO w FROM snowflake_registry.workers r WHERE r.worker_id = p_worker FOR UPDATE;
    IF NOT FOUND THEN
        outcome := 'lost'; reason := format('worker id %s is not one this registry grants', p_worker);
        RETURN;
    END IF;
    -- R5: an ended window is never reinstated (a lost life may have given
    -- the worker id to another server for the times after it)
    IF p_until <= now_ms THEN
        outcome := 'lost';
        reason := format('the window presented ended at %s, before this registry''s clock (%s)',
                         to_timestamp(p_until / 1000.0), to_timestamp(now_ms / 1000.0));
        RETURN;
    END IF;
    -- another grant of the worker id (another incarnation's, or another
    -- fencing epoch) whose window overlaps the one presented
    SELECT * INTO g FROM snowflake_registry.grants r
     WHERE r.worker_id = p_worker
       AND NOT (r.fencing_epoch = p_epoch AND CASE WHEN r.holder IS NULL THEN r.holder_name = p_name ELSE r.holder = p_holder END)
       AND r.from_ms < p_until AND p_from < r.until_ms
     ORDER BY r.fencing_epoch LIMIT 1;
    IF NOT FOUND THEN  -- its fencing epoch granted to another incarnation
        SELECT * INTO g FROM snowflake_registry.grants r
         WHERE r.worker_id = p_worker AND r.fencing_epoch = p_epoch
           AND CASE WHEN r.holder IS NULL THEN r.holder_name <> p_name ELSE r.holder <> p_holder END;
    END IF;
    IF FOUND THEN
        outcome := 'conflict';
        reason := format('worker id %s was granted to %s for ids from %s until %s (fencing epoch %s)', p_worker, g.holder_name,
                         to_timestamp(g.from_ms / 1000.0), to_timestamp(g.until_ms / 1000.0), g.fencing_epoch);
        RAISE WARNING 'snowflake registry: % presented worker id % (fencing epoch %) for ids from % until %, but %',
            p_name, p_worker, p_epoch, to_timestamp(p_from / 1000.0), to_timestamp(p_until / 1000.0), reason;
        RETURN;
    END IF;
    IF w.holder IS NOT NULL AND (w.holder, w.fencing_epoch) IS DISTINCT FROM (p_holder, p_epoch) AND w.expires_ms > now_ms THEN
        outcome := 'lost'; reason := format('another server holds worker id %s (%s), after the window presented', p_worker, w.holder_name);
        RETURN;
    END IF;
    -- R3: no later than one maximum window from now
    granted_until_ms := least(greatest(p_until, now_ms + window_ms), now_ms + l.max_window_ms);
    UPDATE snowflake_registry.workers r
       SET fencing_epoch = p_epoch, holder = p_holder, holder_name = p_name,
           window_from_ms = CASE WHEN (w.holder, w.fencing_epoch) IS NOT DISTINCT FROM (p_holder, p_epoch) THEN r.window_from_ms ELSE p_from END,
           high_water_ms = greatest(r.high_water_ms, granted_until_ms, p_until),
           expires_ms = least(greatest(r.expires_ms, granted_until_ms), now_ms + l.max_window_ms), renewed_ms = now_ms,
           released_ms = NULL, written_xid = me
     WHERE r.worker_id = p_worker RETURNING r.expires_ms INTO granted_until_ms;
    INSERT INTO snowflake_registry.grants AS r (worker_id, fencing_epoch, holder_name, from_ms, until_ms, granted_ms, registry_id, life,
                                                reinstated_ms, holder)
        VALUES (p_worker, p_epoch, p_name, p_from, greatest(granted_until_ms, p_until), now_ms, held_registry, held_life, now_ms, p_holder)
        ON CONFLICT ON CONSTRAINT grants_pkey DO UPDATE
           SET from_ms = least(r.from_ms, EXCLUDED.from_ms), until_ms = greatest(r.until_ms, EXCLUDED.until_ms),
               reinstated_ms = EXCLUDED.reinstated_ms, holder = EXCLUDED.holder;
    RAISE LOG 'snowflake registry: worker id % reinstated for % (fencing epoch %), its window granted by registry % life %, now until %',
        p_worker, p_name, p_epoch, held_registry, held_life, to_timestamp(granted_until_ms / 1000.0);
    outcome := 'reinstated';
END $$;
COMMENT ON FUNCTION snowflake_registry_present(integer, bigint, text, text, bigint, bigint, bigint, text, text) IS 'a holder''s renewal, presenting its window for reinstatement when another life or registry granted it (called by the node''s background worker)';
REVOKE ALL ON FUNCTION snowflake_registry_present(integer, bigint, text, text, bigint, bigint, bigint, text, text) FROM PUBLIC;

CREATE FUNCTION snowflake_registry_release(worker_id integer, fencing_epoch bigint, holder text, used_until_ms bigint)
    RETURNS boolean LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake');
    now_ms bigint;
    mark bigint;
    me xid;
BEGIN
    EXECUTE format('SELECT now_ms FROM %I.snowflake_registry_life()', ext) INTO now_ms;
    EXECUTE format('SELECT %I._snowflake_registry_writer()', ext) INTO me;
    UPDATE snowflake_registry.workers r
       SET holder = NULL, released_ms = now_ms, expires_ms = least(r.expires_ms, now_ms),
           high_water_ms = greatest(r.window_from_ms, least(r.high_water_ms, used_until_ms)), written_xid = me
     WHERE r.worker_id = snowflake_registry_release.worker_id AND r.fencing_epoch = snowflake_registry_release.fencing_epoch AND r.holder = snowflake_registry_release.holder
     RETURNING r.high_water_ms INTO mark;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    UPDATE snowflake_registry.grants g SET until_ms = mark
     WHERE g.worker_id = snowflake_registry_release.worker_id AND g.fencing_epoch = snowflake_registry_release.fencing_epoch;
    RETURN true;
END $$;
COMMENT ON FUNCTION snowflake_registry_release(integer, bigint, text, bigint) IS 'a node''s clean release of its worker id, its last id being below used_until_ms (called at a clean shutdown)';
REVOKE ALL ON FUNCTION snowflake_registry_release(integer, bigint, text, bigint) FROM PUBLIC;

CREATE FUNCTION snowflake_registry_release(worker_id integer)
    RETURNS boolean LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake');
    me xid;
BEGIN
    EXECUTE format('SELECT %I._snowflake_registry_writer()', ext) INTO me;
    -- R6: its holder may still run (it only looked gone): the next window
    -- starts one grace after its window's end, beyond anything a later life
    -- could extend that window to
    UPDATE snowflake_registry.workers r
       SET holder = NULL, released_ms = (extract(epoch FROM clock_timestamp()) * 1000)::bigint,
           high_water_ms = greatest(r.high_water_ms, r.expires_ms) + s.max_window_ms + s.max_skew_ms, written_xid = me
      FROM snowflake_registry.settings s
     WHERE r.worker_id = snowflake_registry_release.worker_id AND r.holder IS NOT NULL;
    RETURN FOUND;
END $$;
COMMENT ON FUNCTION snowflake_registry_release(integer) IS 'frees the worker id of a server that is gone for good, without waiting for its quarantine; its next window starts one grace (maximum window plus skew bound) after the last one granted';
REVOKE ALL ON FUNCTION snowflake_registry_release(integer) FROM PUBLIC;

CREATE FUNCTION snowflake_registry_raise_floor(to_ts timestamptz)
    RETURNS timestamptz LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake');
    floor_ms bigint;
    me xid;
BEGIN
    EXECUTE format('SELECT %I._snowflake_registry_writer()', ext) INTO me;
    UPDATE snowflake_registry.settings s SET floor_ms = greatest(s.floor_ms, (extract(epoch FROM to_ts) * 1000)::bigint), written_xid = me
    RETURNING s.floor_ms INTO floor_ms;
    RETURN to_timestamp(floor_ms / 1000.0);
END $$;
COMMENT ON FUNCTION snowflake_registry_raise_floor(timestamptz) IS 'no window granted from now on starts before this time (a failover or restore of the registry needs no floor: its grace period covers it)';
REVOKE ALL ON FUNCTION snowflake_registry_raise_floor(timestamptz) FROM PUBLIC;

CREATE FUNCTION snowflake_registry_check(tbl regclass, col name DEFAULT 'id')
    RETURNS TABLE (worker_id integer, ids bigint, outside_windows bigint, first_outside timestamptz, last_outside timestamptz,
                   lives bigint, registries bigint)
    LANGUAGE plpgsql STABLE STRICT PARALLEL RESTRICTED SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake');
    spec text := (SELECT format('epoch=%s %s', s.epoch_ms, s.layout) FROM snowflake_registry.settings s);
BEGIN
    IF spec IS NULL THEN
        RAISE EXCEPTION 'the snowflake registry has granted no worker id yet' USING ERRCODE = '55000';
    END IF;
    RETURN QUERY EXECUTE format(
        'SELECT f.worker_id, count(*), count(*) FILTER (WHERE g.worker_id IS NULL),
                min(f.ts) FILTER (WHERE g.worker_id IS NULL), max(f.ts) FILTER (WHERE g.worker_id IS NULL),
                count(DISTINCT g.life), count(DISTINCT g.registry_id)
           FROM (SELECT %2$I::bigint AS k FROM %3$s WHERE %2$I::bigint >= 0) keys,
                LATERAL %1$I.snowflake_decode_as(k, %4$L) f
                LEFT JOIN LATERAL (SELECT r.worker_id, r.life, r.registry_id FROM snowflake_registry.grants r
                                    WHERE r.worker_id = f.worker_id
                                      AND f.ts >= to_timestamp(r.from_ms / 1000.0) AND f.ts < to_timestamp(r.until_ms / 1000.0)
                                    LIMIT 1) g ON true
          GROUP BY 1 ORDER BY 1',
        ext, col, tbl, spec);
END $$;
COMMENT ON FUNCTION snowflake_registry_check(regclass, name) IS 'the fleet check against the registry: for each worker id in a table''s snowflake keys, its ids, those whose time is in no window the registry granted that worker id, and how many registry lives and registries granted the windows of its ids (more than one registry: windows reinstated from a replaced registry, or two registries granting the fleet''s worker ids)';
REVOKE ALL ON FUNCTION snowflake_registry_check(regclass, name) FROM PUBLIC;

CREATE FUNCTION snowflake_registry_grant(node_role regrole)
    RETURNS void LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake');
    fn text;
BEGIN
    IF to_regclass('snowflake_registry.settings') IS NULL THEN
        RAISE EXCEPTION 'there is no snowflake registry in database "%"', current_database()
            USING ERRCODE = '55000', HINT = 'Grant a node''s role in the registry''s database, once snowflake_registry_create() has made it.';
    END IF;
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO %s', current_database(), node_role);
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO %s', ext, node_role);
    FOREACH fn IN ARRAY ARRAY['snowflake_registry_life()',
                              'snowflake_registry_claim(text, text, integer, integer, bigint, bigint, text)',
                              'snowflake_registry_renew(integer, bigint, text, bigint)',
                              'snowflake_registry_present(integer, bigint, text, text, bigint, bigint, bigint, text, text)',
                              'snowflake_registry_release(integer, bigint, text, bigint)'] LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION %I.%s TO %s', ext, fn, node_role);
        -- a GRANT by a role without the grant option only warns
        IF NOT has_function_privilege(node_role, format('%I.%s', ext, fn)::regprocedure, 'EXECUTE')
           OR NOT has_schema_privilege(node_role, ext, 'USAGE')
           OR NOT has_database_privilege(node_role, current_database(), 'CONNECT') THEN
            RAISE EXCEPTION 'could not grant % what the nodes of a snowflake registry need', node_role
                USING ERRCODE = '42501', HINT = 'A superuser grants it.';
        END IF;
    END LOOP;
END $$;
COMMENT ON FUNCTION snowflake_registry_grant(regrole) IS 'lets a role be the one nodes connect to the registry as (in the registry''s database): connect, and execute the functions a node calls, which reach the registry''s tables for it; nothing else';
REVOKE ALL ON FUNCTION snowflake_registry_grant(regrole) FROM PUBLIC;
