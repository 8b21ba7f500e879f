\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.2'" to load this file. \quit

-- snowflake 1.1 to 1.2. There is no install script of 1.2: CREATE EXTENSION
-- runs 1.1's and this one, so that a fresh installation and an updated one
-- are made by the same statements (test/t/125_upgrade.pl compares them).
-- What changes is the registry's (test/model/RULES.md, R2', R9, R10 and the
-- operator's actions):
-- - every way into its tables' state is detected at the next call that
--   reads it: each row of its worker ids and grants records the transaction
--   that wrote it, each worker id the count of its grants; a row written
--   otherwise (a data-only restore, COPY, a hand write) or a grant gone
--   (DELETE, TRUNCATE) begins a new life, which takes the rows as they are;
-- - a new life's grace lasts the longest window a node asked, if longer than
--   the registry's maximum window (one created again with a smaller one);
-- - a new life whose clock is behind the times the lost life wrote (a
--   failover to a standby whose clock is behind) starts no window before
--   the latest of them plus a grace;
-- - snowflake_registry_end_grace() refuses a life that may have forgotten
--   windows unless told why.

-- R9: a write into the registry's worker or grant table by anything but its
-- functions (each runs with snowflake_registry.writing on, which ends with
-- it, also in the transaction that called it): counted in the sequence
-- rows_unwritten, so that the next call begins a new life. A restore with
-- its triggers disabled is told by the rows' writers (xmin) instead.
CREATE FUNCTION _snowflake_registry_written() RETURNS trigger
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF current_setting('snowflake_registry.writing', true) IS DISTINCT FROM 'on' THEN
        PERFORM nextval('snowflake_registry.rows_unwritten');
        RAISE LOG 'snowflake registry: % of its table % by something else than its functions: the next call begins a new life',
            TG_OP, TG_TABLE_NAME;
    END IF;
    RETURN CASE WHEN TG_LEVEL = 'STATEMENT' THEN NULL WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END $$;
COMMENT ON FUNCTION _snowflake_registry_written() IS 'the registry''s tables'' trigger: a write by something else than its functions begins a new life at the next call';
REVOKE ALL ON FUNCTION _snowflake_registry_written() FROM PUBLIC;

-- The 1.2 shape of a registry: each grant's writer, each worker id's count
-- of grants, the count of rows found written otherwise and the longest window
-- a node asked in a grace (sequences: a refused claim's rollback does not
-- undo them), and the trigger of its worker and grant tables.
CREATE FUNCTION snowflake_registry_add_writers()
    RETURNS void LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp
    SET snowflake_registry.writing = on AS $$
DECLARE
    ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake');
    me xid;
BEGIN
    ALTER TABLE snowflake_registry.grants ADD COLUMN written_xid xid;  -- the transaction that wrote the row (its xmin), or it was restored
    ALTER TABLE snowflake_registry.workers ADD COLUMN grants_count bigint NOT NULL DEFAULT 0;  -- its grants: fewer, and one was removed
    CREATE SEQUENCE snowflake_registry.rows_unwritten;  -- counts the calls that found a row written otherwise
    ALTER TABLE snowflake_registry.settings ADD COLUMN unwritten_seen bigint NOT NULL DEFAULT 0;  -- that count when the life began
    CREATE SEQUENCE snowflake_registry.longest_window MINVALUE 0 START 0;  -- the longest window a node asked (ms)
    EXECUTE format('SELECT %I._snowflake_registry_writer()', ext) INTO me;
    UPDATE snowflake_registry.grants SET written_xid = me;
    UPDATE snowflake_registry.workers w
       SET grants_count = (SELECT count(*) FROM snowflake_registry.grants g WHERE g.worker_id = w.worker_id), written_xid = me;
    EXECUTE format('CREATE TRIGGER written BEFORE INSERT OR UPDATE OR DELETE ON snowflake_registry.workers
                        FOR EACH ROW EXECUTE FUNCTION %1$I._snowflake_registry_written();
                    CREATE TRIGGER written_all BEFORE TRUNCATE ON snowflake_registry.workers
                        FOR EACH STATEMENT EXECUTE FUNCTION %1$I._snowflake_registry_written();
                    CREATE TRIGGER written BEFORE INSERT OR UPDATE OR DELETE ON snowflake_registry.grants
                        FOR EACH ROW EXECUTE FUNCTION %1$I._snowflake_registry_written();
                    CREATE TRIGGER written_all BEFORE TRUNCATE ON snowflake_registry.grants
                        FOR EACH STATEMENT EXECUTE FUNCTION %1$I._snowflake_registry_written()', ext);
END $$;
COMMENT ON FUNCTION snowflake_registry_add_writers() IS 'brings a registry of snowflake 1.1 to the shape of 1.2 (the writer of each row, the count of each worker id''s grants); the update to 1.2 does it in the database it runs in';
REVOKE ALL ON FUNCTION snowflake_registry_add_writers() FROM PUBLIC;

-- A 1.0 registry given its lives (snowflake_registry_create, or a 1.0
-- schema restored into a database at this version) gets 1.2's shape too.
CREATE OR REPLACE FUNCTION snowflake_registry_add_lives()
    RETURNS void LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp
    SET snowflake_registry.writing = on AS $$
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
    EXECUTE format('SELECT %I.snowflake_registry_add_writers()', ext);  -- and 1.2's shape
END $$;
COMMENT ON FUNCTION snowflake_registry_add_lives() IS 'brings a registry made by snowflake 1.0 to the shape of this version (its lives, then its rows'' writers); the update to 1.1 does it in the database it runs in';
REVOKE ALL ON FUNCTION snowflake_registry_add_lives() FROM PUBLIC;

DO $$
BEGIN
    IF to_regclass('snowflake_registry.settings') IS NOT NULL THEN
        PERFORM snowflake_registry_add_writers();
    END IF;
END $$;

-- R9: whether the rows of a worker id were all written by the registry's
-- functions (each records its transaction, which is then its xmin) and its
-- grants are all there (its row counts them). Otherwise it says what, and
-- counts it in the sequence rows_unwritten: the next snowflake_registry_life()
-- finds the count not the one its life began with and begins a new life, even
-- if this transaction rolls back (a refused claim).
CREATE FUNCTION _snowflake_registry_unwritten(worker integer) RETURNS text
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    why text;
BEGIN
    SELECT CASE WHEN w.xmin IS DISTINCT FROM w.written_xid
                    THEN format('the row of worker id %s was written by another transaction', worker)
                WHEN g.others THEN format('a grant of worker id %s was written by another transaction', worker)
                WHEN g.n <> w.grants_count THEN format('worker id %s has %s grants, not the %s its row counts', worker, g.n, w.grants_count) END
      INTO why
      FROM snowflake_registry.workers w,
           LATERAL (SELECT count(*) AS n, coalesce(bool_or(r.xmin IS DISTINCT FROM r.written_xid), false) AS others
                      FROM snowflake_registry.grants r WHERE r.worker_id = worker) g
     WHERE w.worker_id = worker;
    IF why IS NOT NULL THEN
        PERFORM nextval('snowflake_registry.rows_unwritten');
        RAISE LOG 'snowflake registry: % (a restore into it, COPY or a hand write): a new life begins', why;
    END IF;
    RETURN why;
END $$;
COMMENT ON FUNCTION _snowflake_registry_unwritten(integer) IS 'whether a worker id''s rows in the registry were written by something else than its functions, or a grant of it is gone: what, and the next call begins a new life';
REVOKE ALL ON FUNCTION _snowflake_registry_unwritten(integer) FROM PUBLIC;

-- R2': the window a node asks, recorded when it is the longest asked in a
-- life whose grace is in force, or that has granted no new window since it
-- began (a node asks the life alone first, and claims once the grace it
-- learns of has ended: a holder cut off may hold a longer window still). A
-- sequence: kept though a refused claim rolls back; set to 0 when a life
-- begins, so that an ask lengthens no later life's grace but by the nodes
-- that ask it again then. Whether it lengthened the grace.
CREATE FUNCTION _snowflake_registry_asked(window_ms bigint) RETURNS boolean
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF window_ms <= (SELECT h.last_value FROM snowflake_registry.longest_window h) OR pg_is_in_recovery()
       OR NOT (SELECT s.grace_monotonic_ms IS NOT NULL
                      AND (s.grace_until_ms > (extract(epoch FROM clock_timestamp()) * 1000)::bigint
                           OR NOT EXISTS (SELECT FROM snowflake_registry.grants g
                                           WHERE g.granted_ms >= s.life_began_ms AND g.reinstated_ms IS NULL))
                 FROM snowflake_registry.settings s) THEN
        RETURN false;
    END IF;
    PERFORM setval('snowflake_registry.longest_window', window_ms);
    RETURN true;
END $$;
COMMENT ON FUNCTION _snowflake_registry_asked(bigint) IS 'records the window a node asks in a grace, the longest asked lengthening it';
REVOKE ALL ON FUNCTION _snowflake_registry_asked(bigint) FROM PUBLIC;

CREATE OR REPLACE FUNCTION snowflake_registry_create(worker_ids int4range DEFAULT '[0,1024)',
                                          quarantine interval DEFAULT '10 min',
                                          max_window interval DEFAULT '90 s',
                                          max_skew interval DEFAULT '1 s')
    RETURNS void LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp
    SET snowflake_registry.writing = on AS $$
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
        USING HINT = 'For a new fleet, whose nodes hold no window of an earlier registry, end it with snowflake_registry_end_grace(). A registry created again for a running fleet waits it out.';
END $$;


CREATE OR REPLACE FUNCTION snowflake_registry_life(OUT registry_id text, OUT life text, OUT life_began_ms bigint, OUT life_change text,
                                        OUT grace_until_ms bigint, OUT max_window_ms bigint, OUT server text, OUT now_ms bigint)
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    SET snowflake_registry.writing = on AS $$
DECLARE
    ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake');
    id record;
    s snowflake_registry.settings;
    why text;
    first_ms bigint;
    me xid;
    mono bigint;
    heard bigint;     -- the longest window a node asked (A4 removed: a new life's grace covers it)
    evidence bigint;  -- the latest time the lost life's clock wrote
    -- R1: the registry's tables made again (pg_restore --clean), its
    -- settings row written by anything but its functions (a data-only
    -- restore), or a call found a row of a worker id it read so written, or
    -- a grant of it gone (_snowflake_registry_unwritten counts it in the
    -- sequence rows_unwritten, which a refused claim's rollback does not
    -- undo; the life records the count it began with, in its transaction): a
    -- rollback without a start.
    restored CONSTANT text := 'SELECT CASE
            WHEN s.tables_oids IS DISTINCT FROM ARRAY[''snowflake_registry.settings''::regclass, ''snowflake_registry.workers''::regclass,
                                                      ''snowflake_registry.grants''::regclass]::oid[]
                THEN ''restored into it: its tables were made again''
            WHEN s.xmin IS DISTINCT FROM s.written_xid
                THEN ''restored into it: its settings were written by another transaction''
            WHEN (SELECT CASE WHEN m.is_called THEN m.last_value ELSE 0 END FROM snowflake_registry.rows_unwritten m)
                 IS DISTINCT FROM s.unwritten_seen
                THEN ''restored into it: a row of its workers or grants was written by something else than its functions, or a grant is gone'' END
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
            -- R9: the rows as they are now are this life's (a restore into the
            -- running registry is taken whole, with a grace): each records
            -- its writer again, each worker id its grants' count
            UPDATE snowflake_registry.workers w SET written_xid = me WHERE w.xmin IS DISTINCT FROM w.written_xid;
            UPDATE snowflake_registry.grants g SET written_xid = me WHERE g.xmin IS DISTINCT FROM g.written_xid;
            UPDATE snowflake_registry.workers w SET grants_count = c.n, written_xid = me
              FROM (SELECT w2.worker_id, count(g.worker_id) AS n FROM snowflake_registry.workers w2
                      LEFT JOIN snowflake_registry.grants g ON g.worker_id = w2.worker_id GROUP BY w2.worker_id) c
             WHERE c.worker_id = w.worker_id AND c.n IS DISTINCT FROM w.grants_count;
            -- R10: the lost life's clock, when the server changed (promoted,
            -- restored, another server: a start of the same server reads
            -- the same clock). Windows its rows date past this clock (a
            -- failover to a standby whose clock is behind) are kept out: no
            -- new window starts before the latest time it wrote plus a grace
            heard := greatest(s.max_window_ms, (SELECT h.last_value FROM snowflake_registry.longest_window h));
            evidence := greatest(s.life_began_ms,
                                 (SELECT greatest(max(w.renewed_ms), max(w.released_ms)) FROM snowflake_registry.workers w),
                                 (SELECT greatest(max(g.granted_ms), max(g.reinstated_ms)) FROM snowflake_registry.grants g));
            PERFORM setval('snowflake_registry.longest_window', 0);
            IF evidence > now_ms AND (s.system_identifier, s.timeline) IS DISTINCT FROM (id.system_identifier, id.timeline) THEN
                why := format('%s; its clock is %s ms behind the times the lost life wrote: no window starts before %s',
                              why, evidence - now_ms, to_timestamp((evidence + heard + s.max_skew_ms) / 1000.0));
                UPDATE snowflake_registry.settings SET floor_ms = greatest(floor_ms, evidence + heard + s.max_skew_ms);
            END IF;
            -- R2: never later than a grace from now (a clock that was ahead)
            UPDATE snowflake_registry.settings
               SET life = gen_random_uuid()::text, life_began_ms = now_ms, life_change = why,
                   grace_until_ms = least(greatest(s.grace_until_ms, least(first_ms, now_ms) + s.max_window_ms + s.max_skew_ms),
                                          now_ms + s.max_window_ms + s.max_skew_ms),
                   system_identifier = id.system_identifier, timeline = id.timeline, database_oid = id.database_oid,
                   started_ms = id.started_ms, written_xid = me,
                   tables_oids = ARRAY['snowflake_registry.settings'::regclass, 'snowflake_registry.workers'::regclass,
                                       'snowflake_registry.grants'::regclass]::oid[],
                   unwritten_seen = (SELECT CASE WHEN m.is_called THEN m.last_value ELSE 0 END FROM snowflake_registry.rows_unwritten m)
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
    -- wall clock set forward during it does not shorten it); R2': a grace
    -- not ended by hand lasts the longest window a node asked, if longer
    -- than the maximum window (nodes of a registry that granted longer ones)
    grace_until_ms := s.grace_until_ms;
    IF s.grace_monotonic_ms IS NOT NULL THEN
        IF now_ms >= s.grace_until_ms THEN
            EXECUTE format('SELECT %I._snowflake_registry_monotonic_ms()', ext) INTO mono;
            grace_until_ms := greatest(grace_until_ms, now_ms + s.grace_monotonic_ms - mono);
        END IF;
        grace_until_ms := grace_until_ms + greatest(0, (SELECT h.last_value FROM snowflake_registry.longest_window h) - s.max_window_ms);
    END IF;
END $$;


-- A grace ended by hand: a created life whose nodes presented no window of
-- an earlier registry (a new fleet), or any life when told why (the
-- operator knows that no node holds a window it forgot: it replicated
-- synchronously and the standby promoted was in sync).
DROP FUNCTION snowflake_registry_end_grace();
CREATE FUNCTION snowflake_registry_end_grace(because text DEFAULT NULL)
    RETURNS boolean LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake');
    l record;
    cur snowflake_registry.settings;
    ended boolean;
    me xid;
BEGIN
    EXECUTE format('SELECT now_ms, grace_until_ms FROM %I.snowflake_registry_life()', ext) INTO l;
    EXECUTE format('SELECT %I._snowflake_registry_writer()', ext) INTO me;
    SELECT * INTO STRICT cur FROM snowflake_registry.settings FOR UPDATE;
    IF coalesce(btrim(because), '') = '' AND l.now_ms < l.grace_until_ms
       AND (cur.life_change IS DISTINCT FROM 'created'
            OR EXISTS (SELECT FROM snowflake_registry.grants g
                        WHERE g.reinstated_ms >= cur.life_began_ms)) THEN
        RAISE EXCEPTION 'the snowflake registry''s grace period is not ended: %',
                        CASE WHEN cur.life_change = 'created' THEN 'it was created again: its nodes presented windows of an earlier one'
                             ELSE format('its life began by a change: %s', cur.life_change) END
            USING ERRCODE = '55000',
                  DETAIL = format('It may have forgotten windows its nodes hold; until %s, a new window could overlap one of them.',
                                  to_timestamp(l.grace_until_ms / 1000.0)),
                  HINT = 'Wait for the grace period to end; pass a reason only if no node can hold a window the registry forgot (it replicated synchronously and its standby was in sync).';
    END IF;
    UPDATE snowflake_registry.settings s SET grace_until_ms = l.now_ms, grace_monotonic_ms = NULL, written_xid = me,
           life_change = CASE WHEN coalesce(btrim(because), '') = '' OR s.life_change LIKE '%; grace ended by hand: %' THEN s.life_change
                              ELSE format('%s; grace ended by hand: %s', s.life_change, because) END
     WHERE s.grace_until_ms > l.now_ms OR s.grace_monotonic_ms IS NOT NULL RETURNING true INTO ended;
    IF ended THEN
        RAISE LOG 'snowflake registry: grace period ended by snowflake_registry_end_grace(%)', coalesce(quote_literal(because), '');
    END IF;
    RETURN coalesce(ended, false);
END $$;
COMMENT ON FUNCTION snowflake_registry_end_grace(text) IS 'ends the registry''s grace period now: for a new fleet; a life that began by a start, promotion, restore or recreation only given why no node can hold a window it forgot (it replicated synchronously)';
REVOKE ALL ON FUNCTION snowflake_registry_end_grace(text) FROM PUBLIC;

CREATE OR REPLACE FUNCTION snowflake_registry_claim(holder text, holder_name text, previous integer, max_worker integer,
                                         window_ms bigint, epoch_ms bigint, layout text,
                                         OUT worker_id integer, OUT fencing_epoch bigint, OUT from_ms bigint,
                                         OUT until_ms bigint, OUT now_ms bigint)
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    SET snowflake_registry.writing = on AS $$
DECLARE
    ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake');
    s snowflake_registry.settings;
    w snowflake_registry.workers;
    counts text;
    me xid;
    gap bigint;  -- R6: after a holder that did not release its worker id cleanly
    grace_end bigint;
    unwritten text;
    asked boolean;
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
    -- R2': the window asked, of a node of this fleet, lengthens a grace in force
    IF (s.epoch_ms IS NULL OR (s.epoch_ms, s.layout) = (snowflake_registry_claim.epoch_ms, snowflake_registry_claim.layout)) THEN
        EXECUTE format('SELECT %I._snowflake_registry_asked($1)', ext) USING window_ms INTO asked;
        IF asked THEN
            EXECUTE format('SELECT grace_until_ms FROM %I.snowflake_registry_life()', ext) INTO grace_end;
        END IF;
    END IF;
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
        EXECUTE format('SELECT %I._snowflake_registry_unwritten($1)', ext) USING w.worker_id INTO unwritten;
    END IF;
    IF FOUND AND unwritten IS NULL THEN
        UPDATE snowflake_registry.workers r  -- R3: no later than one maximum window from now
           SET expires_ms = least(greatest(r.expires_ms, now_ms + window_ms), now_ms + s.max_window_ms),
               high_water_ms = greatest(r.high_water_ms, now_ms + window_ms), renewed_ms = now_ms, written_xid = me
         WHERE r.worker_id = w.worker_id RETURNING r.expires_ms INTO until_ms;
        UPDATE snowflake_registry.grants g SET until_ms = greatest(g.until_ms, snowflake_registry_claim.until_ms), written_xid = me
         WHERE g.worker_id = w.worker_id AND g.fencing_epoch = w.fencing_epoch;
        worker_id := w.worker_id; fencing_epoch := w.fencing_epoch; from_ms := w.window_from_ms;
        RETURN;
    END IF;
    IF now_ms < grace_end THEN
        RAISE EXCEPTION 'the snowflake registry grants no new window until %', to_timestamp(grace_end / 1000.0)
            USING ERRCODE = '55000',
                  DETAIL = format('It began a new life at %s (%s); until the grace period ends, nodes holding a window of an earlier life present it.',
                                  to_timestamp(s.life_began_ms / 1000.0), s.life_change),
                  HINT = 'The node claims again by itself once it ends.';
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
    -- R9: a worker id whose rows were written by something else than these
    -- functions (a restore into the running registry, COPY, a hand write) or
    -- whose grants are not all there is not granted from them: the next call
    -- begins a new life (its mark outlives this refusal's rollback)
    EXECUTE format('SELECT %I._snowflake_registry_unwritten($1)', ext) USING w.worker_id INTO unwritten;
    IF unwritten IS NOT NULL THEN
        RAISE EXCEPTION 'the snowflake registry grants no new window until %',
                        to_timestamp((now_ms + greatest(s.max_window_ms, window_ms) + s.max_skew_ms) / 1000.0)
            USING ERRCODE = '55000',
                  DETAIL = format('Its tables were changed by something else than its functions (%s): a new life begins, whose grace period lets holders present their windows.', unwritten),
                  HINT = 'The node claims again by itself once it ends.';
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
           released_ms = NULL, grants_count = r.grants_count + 1, written_xid = me
     WHERE r.worker_id = w.worker_id;
    INSERT INTO snowflake_registry.grants (worker_id, fencing_epoch, holder_name, from_ms, until_ms, granted_ms, registry_id, life, holder,
                                           written_xid)
        VALUES (worker_id, fencing_epoch, holder_name, from_ms, until_ms, now_ms, s.registry_id, s.life, snowflake_registry_claim.holder, me);
END $$;


CREATE OR REPLACE FUNCTION snowflake_registry_renew(worker_id integer, fencing_epoch bigint, holder text, window_ms bigint,
                                         OUT until_ms bigint, OUT now_ms bigint)
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    SET snowflake_registry.writing = on AS $$
DECLARE
    ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake');
    max_window bigint;
    me xid;
    unwritten text;
BEGIN
    EXECUTE format('SELECT now_ms, least($1, max_window_ms), max_window_ms FROM %I.snowflake_registry_life()', ext)
        USING window_ms INTO now_ms, window_ms, max_window;
    EXECUTE format('SELECT %I._snowflake_registry_writer()', ext) INTO me;
    -- R9: rows written by something else begin a new life first
    EXECUTE format('SELECT %I._snowflake_registry_unwritten($1)', ext) USING worker_id INTO unwritten;
    IF unwritten IS NOT NULL THEN
        EXECUTE format('SELECT now_ms FROM %I.snowflake_registry_life()', ext) INTO now_ms;
    END IF;
    UPDATE snowflake_registry.workers r  -- R3
       SET expires_ms = least(greatest(r.expires_ms, now_ms + window_ms), now_ms + max_window),
           high_water_ms = greatest(r.high_water_ms, now_ms + window_ms), renewed_ms = now_ms, written_xid = me
     WHERE r.worker_id = snowflake_registry_renew.worker_id AND r.fencing_epoch = snowflake_registry_renew.fencing_epoch AND r.holder = snowflake_registry_renew.holder
     RETURNING r.expires_ms INTO until_ms;
    IF NOT FOUND THEN
        RETURN;  -- until_ms NULL: the grant is gone (another holder, or released)
    END IF;
    UPDATE snowflake_registry.grants g SET until_ms = greatest(g.until_ms, snowflake_registry_renew.until_ms), written_xid = me
     WHERE g.worker_id = snowflake_registry_renew.worker_id AND g.fencing_epoch = snowflake_registry_renew.fencing_epoch;
END $$;


CREATE OR REPLACE FUNCTION snowflake_registry_present(worker_id integer, fencing_epoch bigint, holder text, holder_name text,
                                           from_ms bigint, until_ms bigint, window_ms bigint,
                                           held_registry text, held_life text,
                                           OUT outcome text, OUT granted_until_ms bigint, OUT reason text,
                                           OUT registry_id text, OUT life text, OUT life_change text,
                                           OUT grace_until_ms bigint, OUT server text, OUT now_ms bigint,
                                           OUT max_window_ms bigint)
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    SET snowflake_registry.writing = on AS $$
DECLARE
    ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake');
    l record;
    w snowflake_registry.workers;
    g snowflake_registry.grants;
    me xid;
    l_mono bigint;
    unwritten text;
    inserted boolean;
    asked boolean;
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
    -- R2': the window asked lengthens a grace in force
    EXECUTE format('SELECT %I._snowflake_registry_asked($1)', ext) USING window_ms INTO asked;
    IF asked THEN
        EXECUTE format('SELECT * FROM %I.snowflake_registry_life()', ext) INTO l;
    END IF;
    EXECUTE format('SELECT %I._snowflake_registry_writer()', ext) INTO me;
    -- R9: the worker id's rows written by something else than these
    -- functions (a restore into the running registry, COPY, a hand write), or
    -- a grant of it gone: a new life begins, and the window is presented to it
    EXECUTE format('SELECT %I._snowflake_registry_unwritten($1)', ext) USING p_worker INTO unwritten;
    IF unwritten IS NOT NULL THEN
        EXECUTE format('SELECT * FROM %I.snowflake_registry_life()', ext) INTO l;
    END IF;
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
            UPDATE snowflake_registry.grants r SET until_ms = greatest(r.until_ms, granted_until_ms), written_xid = me
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
                                                reinstated_ms, holder, written_xid)
        VALUES (p_worker, p_epoch, p_name, p_from, greatest(granted_until_ms, p_until), now_ms, held_registry, held_life, now_ms, p_holder, me)
        ON CONFLICT ON CONSTRAINT grants_pkey DO UPDATE
           SET from_ms = least(r.from_ms, EXCLUDED.from_ms), until_ms = greatest(r.until_ms, EXCLUDED.until_ms),
               reinstated_ms = EXCLUDED.reinstated_ms, holder = EXCLUDED.holder, written_xid = me
        RETURNING r.xmax = 0 INTO inserted;
    IF inserted THEN
        UPDATE snowflake_registry.workers r SET grants_count = r.grants_count + 1, written_xid = me WHERE r.worker_id = p_worker;
    END IF;
    RAISE LOG 'snowflake registry: worker id % reinstated for % (fencing epoch %), its window granted by registry % life %, now until %',
        p_worker, p_name, p_epoch, held_registry, held_life, to_timestamp(granted_until_ms / 1000.0);
    outcome := 'reinstated';
END $$;


CREATE OR REPLACE FUNCTION snowflake_registry_release(worker_id integer, fencing_epoch bigint, holder text, used_until_ms bigint)
    RETURNS boolean LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    SET snowflake_registry.writing = on AS $$
DECLARE
    ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake');
    now_ms bigint;
    mark bigint;
    me xid;
BEGIN
    -- R9: rows written by something else begin a new life first
    EXECUTE format('SELECT %I._snowflake_registry_unwritten($1)', ext) USING snowflake_registry_release.worker_id;
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
    UPDATE snowflake_registry.grants g SET until_ms = mark, written_xid = me
     WHERE g.worker_id = snowflake_registry_release.worker_id AND g.fencing_epoch = snowflake_registry_release.fencing_epoch;
    RETURN true;
END $$;
COMMENT ON FUNCTION snowflake_registry_release(integer, bigint, text, bigint) IS 'a node''s clean release of its worker id, its last id being below used_until_ms (called at a clean shutdown)';
REVOKE ALL ON FUNCTION snowflake_registry_release(integer, bigint, text, bigint) FROM PUBLIC;

CREATE OR REPLACE FUNCTION snowflake_registry_release(worker_id integer)
    RETURNS boolean LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp
    SET snowflake_registry.writing = on AS $$
DECLARE
    ext name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'snowflake');
    me xid;
BEGIN
    -- R9: rows written by something else begin a new life first (its
    -- grace keeps the worker id out past any window the lost rows knew)
    EXECUTE format('SELECT %I._snowflake_registry_unwritten($1)', ext) USING snowflake_registry_release.worker_id;
    EXECUTE format('SELECT %I.snowflake_registry_life()', ext);
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
