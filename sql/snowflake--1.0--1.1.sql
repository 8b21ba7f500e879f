\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.1'" to load this file. \quit

-- snowflake 1.0 to 1.1: every change here is also in snowflake--1.1.sql.

-- the type's domain (issue 31): every int8. Text, binary and JSON input take
-- a negative value (a sentinel such as COALESCE(id, -1)) as every cast does,
-- so that whatever a snowflake column holds dumps, copies and replicates;
-- no id is negative, and decoding one is still an error.
COMMENT ON FUNCTION _snowflake_in(cstring) IS 'type input: the decimal value, -9223372036854775808 to 9223372036854775807 (a negative one is a sentinel, never an id)';
COMMENT ON FUNCTION _snowflake_recv(internal) IS 'binary input: int8''s wire form';
COMMENT ON FUNCTION snowflake(bigint) IS 'a bigint as a snowflake, unchanged (a negative sentinel stays negative)';
COMMENT ON FUNCTION snowflake(jsonb) IS 'a JSON integer, or a JSON string of its decimal digits, as a snowflake';
COMMENT ON FUNCTION snowflake(json) IS 'a JSON integer, or a JSON string of its decimal digits, as a snowflake';
COMMENT ON FUNCTION snowflake(numeric) IS 'a numeric as a snowflake, rounded as to bigint';
COMMENT ON FUNCTION snowflake(real) IS 'a real as a snowflake, rounded as to bigint';
COMMENT ON FUNCTION snowflake(double precision) IS 'a double precision as a snowflake, rounded as to bigint';
COMMENT ON CAST (bigint AS snowflake) IS 'assignment: a bigint stored into a snowflake, unchanged';
COMMENT ON CAST (numeric AS snowflake) IS 'assignment: rounded as to bigint';
COMMENT ON CAST (real AS snowflake) IS 'assignment: rounded as to bigint';
COMMENT ON CAST (double precision AS snowflake) IS 'assignment: rounded as to bigint';
COMMENT ON CAST (jsonb AS snowflake) IS 'explicit: a JSON integer, or a JSON string of its decimal digits';
COMMENT ON CAST (json AS snowflake) IS 'explicit: a JSON integer, or a JSON string of its decimal digits';
