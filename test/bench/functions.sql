-- Helpers for test/bench/run: the timer and the alternatives snowflake is
-- compared with. Loaded once into the benchmark's throwaway database.

CREATE EXTENSION snowflake;

-- Runs `setup` (untimed, committed), then `query`, and returns the elapsed
-- wall time of the query and its commit, measured inside the server with
-- clock_timestamp(), so that no client round trip is counted; also the WAL
-- the query wrote. A procedure, so that setup, query and commit are separate
-- transactions (CALL from psql in autocommit mode).
CREATE PROCEDURE bench_run(query text, setup text DEFAULT NULL,
                           INOUT elapsed_ms float8 DEFAULT NULL, INOUT wal_bytes numeric DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
    lsn0 pg_lsn;
BEGIN
    IF setup IS NOT NULL THEN
        EXECUTE setup;
        COMMIT;
    END IF;
    lsn0 := pg_current_wal_insert_lsn();
    t0 := clock_timestamp();
    EXECUTE query;
    COMMIT;
    elapsed_ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
    wal_bytes := pg_wal_lsn_diff(pg_current_wal_insert_lsn(), lsn0);
END
$$;

-- For the sustained rate: uses up snowflake.max_lead first (at least
-- `warmup` ids, then more until the ids run max_lead ms ahead of the clock),
-- then times `query` at once, in the same call, so that the clock gets no
-- time to refill the lead in between. Also reports the lead before and
-- after and how many calls waited for the clock.
-- This backend's CPU time (user + system) in clock ticks, from /proc/self/stat
-- (fields 14 and 15; the command name before them may hold spaces).
CREATE FUNCTION bench_cpu_ticks() RETURNS bigint LANGUAGE sql AS $$
    SELECT f[12]::bigint + f[13]::bigint
      FROM regexp_split_to_array(substring(pg_read_file('/proc/self/stat') FROM '\) (.*)$'), ' ') f
$$;

CREATE PROCEDURE bench_at_cap(query text, warmup bigint,
                              INOUT elapsed_ms float8 DEFAULT NULL, INOUT warmup_ids bigint DEFAULT NULL,
                              INOUT warmup_ms float8 DEFAULT NULL, INOUT lead_before bigint DEFAULT NULL,
                              INOUT lead_after bigint DEFAULT NULL, INOUT waited bigint DEFAULT NULL,
                              INOUT cpu_ticks bigint DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
    ticks0 bigint;
    waits0 bigint;
    max_lead bigint := (SELECT setting::bigint FROM pg_settings WHERE name = 'snowflake.max_lead');
BEGIN
    t0 := clock_timestamp();
    PERFORM count(snowflake_nextval()) FROM (SELECT generate_series(1, warmup)) s;
    warmup_ids := warmup;
    -- At the limit the lead reads max_lead or one less (ms rounding). A
    -- machine too slow to reach the cap stops warming up after 30 s.
    WHILE (SELECT lead_ms FROM snowflake_status()) < max_lead - 2
          AND clock_timestamp() < t0 + interval '30 s' LOOP
        PERFORM count(snowflake_nextval()) FROM (SELECT generate_series(1, 100000)) s;
        warmup_ids := warmup_ids + 100000;
    END LOOP;
    warmup_ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
    SELECT lead_ms, waits INTO lead_before, waits0 FROM snowflake_status();
    ticks0 := bench_cpu_ticks();
    t0 := clock_timestamp();
    EXECUTE query;
    elapsed_ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
    cpu_ticks := bench_cpu_ticks() - ticks0;
    SELECT lead_ms, waits - waits0 INTO lead_after, waited FROM snowflake_status();
END
$$;

-- The sequence behind nextval() in the per-call benchmark (default options,
-- as bigserial creates it: CACHE 1, a WAL record every 32 values).
CREATE SEQUENCE bench_seq;

-- The classic Instagram generator ("Sharding & IDs at Instagram", 2012),
-- as published: 41 bits of ms since a custom epoch, 13 bits of shard id,
-- 10 bits of a sequence taken modulo 1024.
CREATE SEQUENCE insta_seq;
CREATE FUNCTION insta_next_id(OUT result bigint) AS $$
DECLARE
    our_epoch bigint := 1314220021721;
    seq_id bigint;
    now_millis bigint;
    shard_id int := 5;
BEGIN
    SELECT nextval('insta_seq') % 1024 INTO seq_id;
    SELECT FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) INTO now_millis;
    result := (now_millis - our_epoch) << 23;
    result := result | (shard_id << 10);
    result := result | (seq_id);
END;
$$ LANGUAGE plpgsql;

-- PostgreSQL 15 has no uuidv7() (it arrives in 18). This is the common SQL
-- emulation: a random UUID whose first 48 bits are replaced by the Unix time
-- in ms and whose version nibble is set to 7. Time-ordered like v7 at ms
-- granularity (random within a millisecond), 16 bytes like every UUID.
CREATE FUNCTION uuid_v7_sql() RETURNS uuid AS $$
    SELECT encode(
        set_bit(set_bit(
            overlay(uuid_send(gen_random_uuid())
                    PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
                    FROM 1 FOR 6),
            52, 1), 53, 1),
        'hex')::uuid
$$ LANGUAGE sql VOLATILE PARALLEL SAFE;
