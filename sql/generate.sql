-- Generation on the preloaded test instance (snowflake.worker_id = 1, default
-- epoch). Output must be deterministic: ids are never printed, only facts about them.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowflake;
RESET client_min_messages;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';

--
-- snowflake_nextval()
--
SELECT snowflake_nextval() AS first_id \gset
SELECT :first_id > 0 AS positive, pg_typeof(:first_id::bigint) AS type;
SELECT worker_id, sequence >= 0 AND sequence <= 4095 AS sequence_in_range,
       abs(extract(epoch FROM ts - clock_timestamp())) < 5 AS ts_is_now
FROM snowflake_decode(:first_id);
-- consecutive calls strictly increase, across statements
SELECT snowflake_nextval() AS second_id \gset
SELECT :second_id > :first_id AS increases;
SELECT snowflake_nextval() > :second_id AS increases_again;
-- and within a statement, in call order
SELECT a < b AS increases_within_row FROM (SELECT snowflake_nextval() AS a, snowflake_nextval() AS b) s;
WITH ids AS MATERIALIZED (
    SELECT g, snowflake_nextval() AS id FROM generate_series(1, 20000) g
)
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids,
       bool_and(id > prev) AS strictly_increasing,
       bool_and(id > :second_id) AS above_earlier_ids,
       bool_and((snowflake_decode(id)).worker_id = 1) AS worker_1,
       bool_and(abs(extract(epoch FROM snowflake_to_timestamp(id) - clock_timestamp())) < 5) AS ts_near_now
FROM (SELECT g, id, lag(id) OVER (ORDER BY g) AS prev FROM ids) s;
-- no WAL and no disk per call: 100000 ids write next to nothing (a sequence
-- would log every 32 calls)
SELECT pg_current_wal_insert_lsn() AS wal_before \gset
SELECT count(snowflake_nextval()) AS ids FROM generate_series(1, 100000);
SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'wal_before') < 8192 AS no_wal_per_call;
-- a volatile function: one id per row
SELECT count(DISTINCT snowflake_nextval()) AS distinct_per_row FROM generate_series(1, 10);
SELECT p.provolatile, p.proisstrict, p.proparallel, pg_get_function_result(p.oid) AS result
FROM pg_proc p WHERE p.oid = 'snowflake_nextval()'::regprocedure;
-- parallel workers share the one generator
CREATE TABLE par_t (n integer NOT NULL);
INSERT INTO par_t SELECT g FROM generate_series(1, 100000) g;
ANALYZE par_t;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF, VERBOSE) CREATE TEMP TABLE par_ids AS SELECT n, snowflake_nextval() AS id FROM par_t;
CREATE TEMP TABLE par_ids AS SELECT n, snowflake_nextval() AS id FROM par_t;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids,
       bool_and((snowflake_decode(id)).worker_id = 1) AS worker_1
FROM par_ids;
DROP TABLE par_t, par_ids;

--
-- DEFAULT snowflake_nextval() on bigint and snowflake keys
--
CREATE TABLE gen_b (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), n integer NOT NULL);
CREATE TABLE gen_s (id snowflake PRIMARY KEY DEFAULT snowflake_nextval(), n integer NOT NULL);
INSERT INTO gen_b (n) SELECT g FROM generate_series(1, 5000) g;
INSERT INTO gen_s (n) SELECT g FROM generate_series(1, 5000) g;
INSERT INTO gen_s (n) VALUES (5001);
SELECT count(*) AS rows, count(DISTINCT id) AS distinct_ids,
       bool_and(id > prev) AS ordered_like_inserts
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM gen_b) s;
SELECT count(*) AS rows, count(DISTINCT id) AS distinct_ids,
       bool_and(id > prev) AS ordered_like_inserts
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM gen_s) s;
-- ids of the second table come after those of the first
SELECT (SELECT max(id) FROM gen_b) < (SELECT id::bigint FROM gen_s ORDER BY id LIMIT 1) AS tables_in_order;
DROP TABLE gen_b, gen_s;

--
-- snowflake_nextvals(n)
--
SELECT snowflake_nextval() AS before_batch \gset
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids,
       bool_and(id > prev) AS strictly_increasing,
       bool_and(id > :before_batch) AS after_earlier_ids,
       bool_and((snowflake_decode(id)).worker_id = 1) AS worker_1
FROM (SELECT id, lag(id) OVER (ORDER BY k) AS prev
      FROM snowflake_nextvals(5) WITH ORDINALITY AS t(id, k)) s;
SELECT snowflake_nextval() AS after_batch \gset
SELECT :after_batch > :before_batch AS nextval_after_batch;
-- a batch larger than one millisecond's 4096 ids
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids,
       bool_and(id > prev) AS strictly_increasing,
       bool_and(id > :after_batch) AS after_earlier_ids,
       bool_and((snowflake_decode(id)).worker_id = 1) AS worker_1,
       count(DISTINCT snowflake_to_timestamp(id)) >= 3 AS spans_several_ms
FROM (SELECT id, lag(id) OVER (ORDER BY k) AS prev
      FROM snowflake_nextvals(10000) WITH ORDINALITY AS t(id, k)) s;
SELECT count(*) AS one FROM snowflake_nextvals(1);
SELECT pg_typeof(x) FROM snowflake_nextvals(1) x;
-- bad counts
SELECT * FROM snowflake_nextvals(0);
SELECT * FROM snowflake_nextvals(-1);
SELECT * FROM snowflake_nextvals(-9223372036854775808);
SELECT count(*) AS null_count FROM snowflake_nextvals(NULL);
SELECT p.provolatile, p.proisstrict, p.proparallel, p.proretset, pg_get_function_result(p.oid) AS result
FROM pg_proc p WHERE p.oid = 'snowflake_nextvals(bigint)'::regprocedure;

--
-- snowflake_status
--
SELECT * FROM snowflake_status LIMIT 0;
SELECT * FROM snowflake_status() LIMIT 0;
-- the C function fills the columns its SQL definition has: an older definition
-- (a prefix) works, one with more columns than the library knows is refused
CREATE FUNCTION pg_temp.status_prefix(OUT worker_id integer, OUT epoch timestamptz)
    AS '$libdir/snowflake', 'snowflake_status' LANGUAGE C;
SELECT worker_id, epoch FROM pg_temp.status_prefix();
CREATE FUNCTION pg_temp.status_longer(
    OUT worker_id integer, OUT epoch timestamptz, OUT last_id bigint, OUT restart_floor timestamptz,
    OUT lead_ms bigint, OUT lease_until timestamptz, OUT clock_regressions bigint, OUT borrowed_ms bigint,
    OUT waits bigint, OUT lease_extensions bigint, OUT generating boolean, OUT writer_stalled_ms bigint,
    OUT layout text, OUT window_until timestamptz, OUT registry_reached timestamptz, OUT registry_error text,
    OUT registry_clock_skew_ms bigint, OUT not_generating text, OUT later integer)
    AS '$libdir/snowflake', 'snowflake_status' LANGUAGE C;
SELECT * FROM pg_temp.status_longer();
-- the layout in force (snowflake.layout), in its canonical form
SELECT layout, current_setting('snowflake.layout') AS setting FROM snowflake_status;
SELECT snowflake_nextval() AS latest \gset
SELECT worker_id, epoch, generating, not_generating,
       last_id >= :latest AS last_id_covers_latest,
       lead_ms >= 0 AND lead_ms <= 1000 AS lead_within_max_lead,
       lease_until >= snowflake_to_timestamp(last_id) AS lease_covers_last_id,
       clock_regressions >= 0 AS regressions_ok, borrowed_ms >= 0 AS borrowed_ok,
       waits >= 0 AS waits_ok, lease_extensions >= 1 AS lease_extended
FROM snowflake_status;
SELECT (SELECT row(s.*)::text FROM snowflake_status() s) IS NOT NULL AS function_works;
