\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.1'" to load this file. \quit

-- snowflake 1.0 to 1.1: an installation of 1.0 updated here has the catalog
-- of a fresh install of 1.1 (snowflake--1.1.sql, which creates each object in
-- its final form; test/t/125_upgrade.pl compares them).

-- pg_upgrade keeps snowflake in core's integer_ops families: the library runs
-- snowflake_repair_integer_ops() in pg_upgrade's restore, once both classes
-- are restored, so no step is left for after the upgrade.
COMMENT ON FUNCTION snowflake_repair_integer_ops() IS
    'adds snowflake''s members to core''s integer_ops families where missing and binds them to its classes (pg_upgrade''s restore runs it); returns how many it changed';

-- snowflake_adopt_worker_id(after): ids continue after a time the operator gives
-- (refused without it while the clock is behind the lease's)
DROP FUNCTION snowflake_adopt_worker_id();
CREATE FUNCTION snowflake_adopt_worker_id(after timestamptz DEFAULT NULL) RETURNS integer
    AS 'MODULE_PATHNAME', 'snowflake_adopt_worker_id' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION snowflake_adopt_worker_id(timestamptz) IS
    'a restored copy takes over its source''s worker id, the source being gone for good; returns it; after: the time after which the source issued no id (refused without it while the clock is behind the lease''s)';
REVOKE ALL ON FUNCTION snowflake_adopt_worker_id(timestamptz) FROM PUBLIC;

-- snowflake_status: the registry's clock against this server's (appended)
DROP VIEW snowflake_status;
DROP FUNCTION snowflake_status();
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

-- registry lives: the registry knows when it begins a new life —
-- promoted (its timeline changed), restored or recovered to a point in time,
-- its database copied, or created afresh — by an identity kept in its
-- settings (a random registry id made at create, the server's system
-- identifier and timeline, the database's oid), compared at every call. A new
-- life starts a grace period of one maximum window plus the skew bound in
-- which no new window is granted and holders present the windows they hold
-- (snowflake_registry_present): a window granted by a lost life is
-- reinstated, never granted again. Grants record the life that made them.

-- The server's identity, for the registry's functions: the registry's role
-- need not read pg_control. SECURITY DEFINER: its SQL-standard body is bound
-- when made, never through a search_path.
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
-- tables snowflake_registry_create makes (1.1's calls it), and of a registry
-- made by 1.0's (this update calls it below when a registry is there). The
-- largest window it granted bounds the maximum window.
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

DO $$
BEGIN
    IF to_regclass('snowflake_registry.settings') IS NOT NULL THEN
        PERFORM snowflake_registry_add_lives();
        -- updated in place, the registry forgot no grant: no grace
        UPDATE snowflake_registry.settings SET grace_until_ms = 0, grace_monotonic_ms = NULL,
                                               written_xid = _snowflake_registry_writer();
    END IF;
END $$;

DROP FUNCTION snowflake_registry_create(int4range, interval);
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

-- The life of the registry, beginning a new one when its identity changed:
-- called by every call of a node.
CREATE FUNCTION snowflake_registry_life(OUT registry_id text, OUT life text, OUT life_began_ms bigint, OUT life_change text,
                                        OUT grace_until_ms bigint, OUT max_window_ms bigint, OUT server text, OUT now_ms bigint)
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp AS $$
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

CREATE OR REPLACE FUNCTION snowflake_registry_claim(holder text, holder_name text, previous integer, max_worker integer,
                                         window_ms bigint, epoch_ms bigint, layout text,
                                         OUT worker_id integer, OUT fencing_epoch bigint, OUT from_ms bigint,
                                         OUT until_ms bigint, OUT now_ms bigint)
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp AS $$
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

CREATE OR REPLACE FUNCTION snowflake_registry_renew(worker_id integer, fencing_epoch bigint, holder text, window_ms bigint,
                                         OUT until_ms bigint, OUT now_ms bigint)
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp AS $$
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

-- A holder's call at every renewal: renews its window, or, when the window
-- was granted by another life or registry than this one, presents it for
-- reinstatement, answered at once (also in a grace period). outcome:
-- renewed, reinstated, lost (the worker id is another holder's, its windows
-- apart; the window stays valid to its end) or conflict (another grant of the
-- worker id overlaps the window: two registries granted it).
CREATE FUNCTION snowflake_registry_present(worker_id integer, fencing_epoch bigint, holder text, holder_name text,
                                           from_ms bigint, until_ms bigint, window_ms bigint,
                                           held_registry text, held_life text,
                                           OUT outcome text, OUT granted_until_ms bigint, OUT reason text,
                                           OUT registry_id text, OUT life text, OUT life_change text,
                                           OUT grace_until_ms bigint, OUT server text, OUT now_ms bigint,
                                           OUT max_window_ms bigint)
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp AS $$
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

CREATE OR REPLACE FUNCTION snowflake_registry_release(worker_id integer, fencing_epoch bigint, holder text, used_until_ms bigint)
    RETURNS boolean LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SET search_path = pg_catalog, pg_temp AS $$
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

COMMENT ON FUNCTION snowflake_registry_raise_floor(timestamptz) IS 'no window granted from now on starts before this time (a failover or restore of the registry needs no floor: its grace period covers it)';

-- a release by hand and a floor record the row's writer; a release by hand
-- starts the next window one grace after the last one (test/model/RULES.md R1, R6)
CREATE OR REPLACE FUNCTION snowflake_registry_release(worker_id integer)
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
CREATE OR REPLACE FUNCTION snowflake_registry_raise_floor(to_ts timestamptz)
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

DROP FUNCTION snowflake_registry_check(regclass, name);
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

-- the type's domain: every int8. Text, binary and JSON input take
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

-- The fleet checks read ids, not sentinels: a negative value in a key column
-- (the type's domain is every bigint) is skipped, where 1.0 failed on it.
CREATE OR REPLACE FUNCTION snowflake_workers(tbl regclass, col name DEFAULT 'id')
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

-- layouts named: the IMMUTABLE decoding forms take the layout
-- after the epoch, in snowflake.layout's grammar ('default', 'js53',
-- 'sonyflake_style', '[unit=<n>ms] time=<bits> worker=<bits> sequence=<bits>';
-- 'sonyflake' with Sonyflake's epoch only). The forms given an epoch and no
-- layout decode the default layout, and refuse on a node that generates
-- another (55000, naming the form to use): none decodes a layout silently.
CREATE FUNCTION snowflake_decode(id bigint, epoch timestamptz, layout text) RETURNS snowflake_fields
    AS 'MODULE_PATHNAME', 'snowflake_decode_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION snowflake_to_timestamp(id bigint, epoch timestamptz, layout text) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'snowflake_to_timestamp_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION snowflake_from_timestamp(ts timestamptz, epoch timestamptz, layout text) RETURNS bigint
    AS 'MODULE_PATHNAME', 'snowflake_from_timestamp_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_decode(bigint, timestamptz, text) IS 'the time, worker id and sequence of an id, under the epoch and layout given';
COMMENT ON FUNCTION snowflake_to_timestamp(bigint, timestamptz, text) IS 'the time an id was made in, under the epoch and layout given';
COMMENT ON FUNCTION snowflake_from_timestamp(timestamptz, timestamptz, text) IS 'the smallest id of the timestamp''s time unit under the epoch and layout given: id >= from(t1) AND id < from(t2) selects [t1, t2)';
COMMENT ON FUNCTION snowflake_decode(bigint, timestamptz) IS 'the time, worker id and sequence of an id, under the epoch given, in the default layout (refused on a node generating another: give the layout after the epoch)';
COMMENT ON FUNCTION snowflake_to_timestamp(bigint, timestamptz) IS 'the millisecond an id was made in, under the epoch given, in the default layout (refused on a node generating another: give the layout after the epoch)';
COMMENT ON FUNCTION snowflake_from_timestamp(timestamptz, timestamptz) IS 'the smallest id of the timestamp''s millisecond under the epoch given, in the default layout (refused on a node generating another: give the layout after the epoch)';

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
COMMENT ON FUNCTION snowflake_partition_bounds(timestamptz, text, timestamptz) IS 'the ids of the UTC hour, day, week, month or year holding ts, under the epoch given, in the default layout (refused on a node generating another: give the layout after the epoch): FOR VALUES FROM (from_id) TO (to_id)';
-- the period's times computed here: the form given an epoch refuses in other layouts
CREATE OR REPLACE FUNCTION snowflake_partition_bounds(ts timestamptz, unit text,
        OUT from_id bigint, OUT to_id bigint, OUT from_ts timestamptz, OUT to_ts timestamptz)
    LANGUAGE SQL STABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
    SELECT snowflake_from_timestamp(b.from_ts), snowflake_from_timestamp(b.to_ts), b.from_ts, b.to_ts
      FROM (SELECT _snowflake_partition_unit(unit) AS unit) u,
           LATERAL (SELECT date_trunc(u.unit, ts AT TIME ZONE 'UTC') AS utc_start) t,
           LATERAL (SELECT t.utc_start AT TIME ZONE 'UTC' AS from_ts,
                           (t.utc_start + ('1 ' || u.unit)::interval) AT TIME ZONE 'UTC' AS to_ts) b;
END;

-- labels as core's: a function that reuses a core C function
-- carries that function's labels (sql/labels.sql compares them). Widening
-- from smallint and integer and converting to numeric, real and double
-- precision cannot fail: LEAKPROOF, as core's; bigint's hash functions are
-- not LEAKPROOF in core, so ours are not either.
ALTER FUNCTION snowflake(smallint) LEAKPROOF;
ALTER FUNCTION snowflake(integer) LEAKPROOF;
ALTER FUNCTION _snowflake_to_numeric(snowflake) LEAKPROOF;
ALTER FUNCTION _snowflake_to_real(snowflake) LEAKPROOF;
ALTER FUNCTION _snowflake_to_double(snowflake) LEAKPROOF;
ALTER FUNCTION _snowflake_hash(snowflake) NOT LEAKPROOF;
ALTER FUNCTION _snowflake_hash_extended(snowflake, bigint) NOT LEAKPROOF;

-- secrets: the keys of public ids live in the file that
-- snowflake.public_key_file names, never in a setting, a catalog or a dump.
-- 1.0's forms given the key as an argument put it into pg_indexes and every
-- dump of an object that uses them: they are dropped, and the update refuses
-- while an index, view or function uses them (docs/operations.md, "Public id
-- keys", gives the way). The forms given a key id are IMMUTABLE: a key id
-- keeps its key (its binding, pg_snowflake/public_keys) until retired on purpose.
DO $$
DECLARE
    users text;
BEGIN
    SELECT string_agg(pg_describe_object(d.classid, d.objid, d.objsubid), ', ' ORDER BY 1)
      INTO users
      FROM pg_depend d
     WHERE d.refclassid = 'pg_proc'::regclass AND d.deptype = 'n'
       AND d.refobjid IN ('snowflake_to_public(bigint, bytea)'::regprocedure,
                          'snowflake_from_public(text, bytea)'::regprocedure);
    IF users IS NOT NULL THEN
        RAISE EXCEPTION 'snowflake 1.1 drops snowflake_to_public(bigint, bytea) and snowflake_from_public(text, bytea), which % uses', users
            USING ERRCODE = '55000',
                  DETAIL = 'They take the key as an argument, which puts it into the catalog and every dump.',
                  HINT = 'Drop what uses them, update, put the key in the file named by snowflake.public_key_file under key id 0 and create it again on snowflake_to_public(id, 0) or snowflake_from_public(text, 0): docs/operations.md, "Public id keys".';
    END IF;
END $$;
DROP FUNCTION snowflake_to_public(bigint, bytea);
DROP FUNCTION snowflake_from_public(text, bytea);
CREATE FUNCTION snowflake_to_public(id bigint, key_id integer) RETURNS text
    AS 'MODULE_PATHNAME', 'snowflake_to_public_key_id' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION snowflake_from_public(public_id text, key_id integer) RETURNS bigint
    AS 'MODULE_PATHNAME', 'snowflake_from_public_key_id' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION snowflake_retire_public_key_id(key_id integer) RETURNS boolean
    AS 'MODULE_PATHNAME', 'snowflake_retire_public_key_id' LANGUAGE C VOLATILE STRICT;
REVOKE ALL ON FUNCTION snowflake_retire_public_key_id(integer) FROM PUBLIC;
COMMENT ON FUNCTION snowflake_to_public(bigint) IS 'the public form of an id under the first key of snowflake.public_key_file: 13 characters that hide its time, node and volume';
COMMENT ON FUNCTION snowflake_from_public(text) IS 'the id of a public form, under the key of snowflake.public_key_file it names: WHERE id = snowflake_from_public($1) reads the primary key';
COMMENT ON FUNCTION snowflake_to_public(bigint, integer) IS 'the public form of an id under the key of snowflake.public_key_file with the key id given (0..3): for index expressions and generated columns';
COMMENT ON FUNCTION snowflake_from_public(text, integer) IS 'the id of a public form made under the key id given (0..3)';
COMMENT ON FUNCTION snowflake_retire_public_key_id(integer) IS 'unbinds a key id that snowflake.public_key_file no longer holds, so that a new key may take it (its old public ids then decode to other ids): superusers only';

-- registry roles: a node's role needs no privilege on the
-- registry's tables. The functions a node's background worker calls run as
-- the extension's owner (SECURITY DEFINER, search_path pinned), and only the
-- roles snowflake_registry_grant names may call them: the registry's lives,
-- claim, renew (1.0 nodes), present and a node's release. The registry's
-- other functions are its owner's (superusers, or roles they grant them to).
-- No registry function is left to PUBLIC; its schema and tables never were.

ALTER FUNCTION snowflake_registry_life() SECURITY DEFINER;
ALTER FUNCTION snowflake_registry_claim(text, text, integer, integer, bigint, bigint, text) SECURITY DEFINER;
ALTER FUNCTION snowflake_registry_renew(integer, bigint, text, bigint) SECURITY DEFINER;
ALTER FUNCTION snowflake_registry_present(integer, bigint, text, text, bigint, bigint, bigint, text, text) SECURITY DEFINER;
ALTER FUNCTION snowflake_registry_release(integer, bigint, text, bigint) SECURITY DEFINER;
REVOKE ALL ON FUNCTION snowflake_registry_life(), snowflake_registry_claim(text, text, integer, integer, bigint, bigint, text),
    snowflake_registry_renew(integer, bigint, text, bigint),
    snowflake_registry_present(integer, bigint, text, text, bigint, bigint, bigint, text, text),
    snowflake_registry_release(integer, bigint, text, bigint), snowflake_registry_release(integer),
    snowflake_registry_create(int4range, interval, interval, interval), snowflake_registry_end_grace(),
    snowflake_registry_raise_floor(timestamptz), snowflake_registry_check(regclass, name),
    snowflake_registry_identity(), snowflake_registry_add_lives() FROM PUBLIC;

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
REVOKE ALL ON FUNCTION snowflake_registry_grant(regrole) FROM PUBLIC;
COMMENT ON FUNCTION snowflake_registry_grant(regrole) IS 'lets a role be the one nodes connect to the registry as (in the registry''s database): connect, and execute the functions a node calls, which reach the registry''s tables for it; nothing else';
-- a 1.0 registry's nodes may connect as its owner: it keeps the functions they call
DO $$
DECLARE
    registry_owner regrole := (SELECT n.nspowner::regrole FROM pg_namespace n JOIN pg_roles r ON r.oid = n.nspowner
                                WHERE n.nspname = 'snowflake_registry' AND NOT r.rolsuper);
BEGIN
    IF registry_owner IS NOT NULL AND to_regclass('snowflake_registry.settings') IS NOT NULL THEN
        PERFORM snowflake_registry_grant(registry_owner);
    END IF;
END $$;

-- a damaged lease file, or a lease taken under another epoch or layout (changed
-- on purpose): a new lease above every id this server can have issued, the
-- fence kept; superusers only
CREATE FUNCTION snowflake_repair_lease(above timestamptz DEFAULT NULL) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'snowflake_repair_lease' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION snowflake_repair_lease(timestamptz) IS
    'writes a new lease in place of a damaged one or of one taken under another epoch or layout, keeping the fence: ids continue after the clock plus the lease span and max_lead, or after "above"; returns that time';
REVOKE ALL ON FUNCTION snowflake_repair_lease(timestamptz) FROM PUBLIC;
