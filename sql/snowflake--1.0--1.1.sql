\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.1'" to load this file. \quit

-- snowflake 1.0 to 1.1: every change here is also in snowflake--1.1.sql.

-- pg_upgrade keeps snowflake in core's integer_ops families: the library runs
-- snowflake_repair_integer_ops() in pg_upgrade's restore, once both classes
-- are restored, so no step is left for after the upgrade.
COMMENT ON FUNCTION snowflake_repair_integer_ops() IS
    'adds snowflake''s members to core''s integer_ops families where missing and binds them to its classes (pg_upgrade''s restore runs it); returns how many it changed';
