-- A streaming standby of the preloaded instance (same postgresql.conf:
-- snowflake.worker_id = 7): generation is refused, decoding works.
--
-- Plain TAP, without pgTAP's functions: they keep their state in temporary
-- tables, which cannot be created during recovery, so plan() itself fails on
-- a hot standby. The extensions come from the primary by replication. An
-- expected error is caught with psql's ON_ERROR_STOP off and read back from
-- :SQLSTATE and :LAST_ERROR_MESSAGE (psql prints it on stderr as well).
\set QUIET on
SELECT '1..14';

SELECT CASE WHEN pg_is_in_recovery() THEN 'ok' ELSE 'not ok' END || ' 1 - this is a hot standby';

\set ON_ERROR_STOP 0
\set VERBOSITY terse
SELECT snowflake_nextval();
SELECT CASE WHEN :'SQLSTATE' = '25006' THEN 'ok' ELSE 'not ok' END
       || ' 2 - snowflake_nextval() fails with SQLSTATE 25006 (got ' || :'SQLSTATE' || ')'
UNION ALL
SELECT CASE WHEN :'SQLSTATE' <> '00000' AND :'LAST_ERROR_MESSAGE' LIKE '%hot standby%' THEN 'ok' ELSE 'not ok' END
       || ' 3 - the message says hot standby (got: ' || :'LAST_ERROR_MESSAGE' || ')';
SELECT * FROM snowflake_nextvals(3);
SELECT CASE WHEN :'SQLSTATE' = '25006' THEN 'ok' ELSE 'not ok' END
       || ' 4 - snowflake_nextvals(3) fails with SQLSTATE 25006 (got ' || :'SQLSTATE' || ')'
UNION ALL
SELECT CASE WHEN :'SQLSTATE' <> '00000' AND :'LAST_ERROR_MESSAGE' LIKE '%hot standby%' THEN 'ok' ELSE 'not ok' END
       || ' 5 - its message says hot standby (got: ' || :'LAST_ERROR_MESSAGE' || ')';
\set ON_ERROR_STOP 1
\set VERBOSITY default

-- why: it is not that the worker id is missing
SELECT CASE WHEN current_setting('snowflake.worker_id') = '7' THEN 'ok' ELSE 'not ok' END
       || ' 6 - the standby has snowflake.worker_id = 7 (its primary''s)';

-- decoding works
SELECT CASE WHEN (ts, worker_id, sequence) = ('2024-01-01 00:00:01.234+00'::timestamptz, 5, 6)
            THEN 'ok' ELSE 'not ok' END || ' 7 - snowflake_decode(bigint) works'
  FROM snowflake_decode((1234::bigint << 22) | (5 << 12) | 6);
SELECT CASE WHEN (ts, worker_id, sequence) = ('2024-01-01 00:00:00.001+00'::timestamptz, 241, 3418)
            THEN 'ok' ELSE 'not ok' END || ' 8 - snowflake_decode(snowflake) works'
  FROM snowflake_decode('5184858'::snowflake);
SELECT CASE WHEN snowflake_to_timestamp(0) = '2024-01-01 00:00:00+00' THEN 'ok' ELSE 'not ok' END
       || ' 9 - snowflake_to_timestamp(0) is the epoch';
SELECT CASE WHEN snowflake_from_timestamp('2024-01-01 00:00:01.234+00') = 1234::bigint << 22
            THEN 'ok' ELSE 'not ok' END || ' 10 - snowflake_from_timestamp works';
SELECT CASE WHEN '42'::snowflake = 42 AND 42::bigint::snowflake::text = '42' THEN 'ok' ELSE 'not ok' END
       || ' 11 - the type, its casts and operators work';

-- status
SELECT CASE WHEN generating IS FALSE THEN 'ok' ELSE 'not ok' END
       || ' 12 - snowflake_status: not generating (got ' || coalesce(generating::text, 'null') || ')'
  FROM snowflake_status;
SELECT CASE WHEN worker_id = 7 THEN 'ok' ELSE 'not ok' END
       || ' 13 - snowflake_status: worker_id 7 (got ' || coalesce(worker_id::text, 'null') || ')'
  FROM snowflake_status;
SELECT CASE WHEN epoch = '2024-01-01 00:00:00+00' THEN 'ok' ELSE 'not ok' END
       || ' 14 - snowflake_status: the default epoch'
  FROM snowflake_status;
