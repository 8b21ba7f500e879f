\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.1'" to load this file. \quit

-- snowflake 1.0 to 1.1: every change here is also in snowflake--1.1.sql.
