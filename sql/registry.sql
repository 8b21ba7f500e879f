-- The registry of worker ids on its own: snowflake_registry_create, the calls
-- a node's background worker makes (claim, renew, release), the operator's
-- (release by hand, the floor), the fleet check and a node's role. Each grant
-- is a window of id times that never overlaps another grant of its worker id.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowflake;
RESET client_min_messages;

\getenv abs_srcdir PG_ABS_SRCDIR
\set error_of :abs_srcdir '/test/regress/error_of.sql'
\i :error_of

SELECT * FROM pg_temp.error_of($$SELECT snowflake_registry_create('[0,)')$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_registry_create('[1000,65537)')$$);
SET client_min_messages = warning;  -- its NOTICE names the time its grace period ends
SELECT snowflake_registry_create('[0,3)', '1 hour', '10 min');
RESET client_min_messages;
-- created afresh: a grace period; a new fleet ends it
SELECT regexp_replace(e, 'until .*', 'until ...') AS error_of
  FROM pg_temp.error_of($$SELECT snowflake_registry_claim('a', 'node a', NULL, 1023, 60000, 1704067200000, 'time=41 worker=10 sequence=12')$$) e;
SELECT snowflake_registry_end_grace() AS ended, snowflake_registry_end_grace() AS ended_again;
SELECT * FROM pg_temp.error_of($$SELECT snowflake_registry_create()$$);
SELECT worker_id, state, holder_name, fencing_epoch FROM snowflake_registry.claims ORDER BY 1;

-- a claim: the worker id free the longest (never used: the lowest), its
-- window from the registry's clock; the fleet's epoch and layout recorded
CREATE TEMP TABLE a AS
    SELECT * FROM snowflake_registry_claim('a', 'node a', NULL, 1023, 60000, 1704067200000, 'time=41 worker=10 sequence=12');
SELECT worker_id, fencing_epoch, until_ms - from_ms AS window_ms, from_ms = now_ms AS from_now FROM a;
SELECT epoch_ms, layout FROM snowflake_registry.settings;
-- the same holder again (its background worker started again): the same grant
SELECT worker_id, fencing_epoch, from_ms = (SELECT from_ms FROM a) AS same_from
  FROM snowflake_registry_claim('a', 'node a', NULL, 1023, 60000, 1704067200000, 'time=41 worker=10 sequence=12');
-- other holders get the others; then none is free
SELECT worker_id, fencing_epoch
  FROM snowflake_registry_claim('b', 'node b', NULL, 1023, 60000, 1704067200000, 'time=41 worker=10 sequence=12');
SELECT worker_id, fencing_epoch
  FROM snowflake_registry_claim('c', 'node c', NULL, 1023, 60000, 1704067200000, 'time=41 worker=10 sequence=12');
SELECT * FROM pg_temp.error_of($$SELECT snowflake_registry_claim('d', 'node d', NULL, 1023, 60000, 1704067200000, 'time=41 worker=10 sequence=12')$$);
-- a claim without a holder, or with an empty window, is refused
SELECT * FROM pg_temp.error_of($$SELECT snowflake_registry_claim(NULL, 'node d', NULL, 1023, 60000, 1704067200000, 'time=41 worker=10 sequence=12')$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_registry_claim('d', 'node d', NULL, 1023, 0, 1704067200000, 'time=41 worker=10 sequence=12')$$);
-- a node of another epoch or layout belongs to another fleet
SELECT * FROM pg_temp.error_of($$SELECT snowflake_registry_claim('d', 'node d', NULL, 1023, 60000, 1704067200001, 'time=41 worker=10 sequence=12')$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_registry_claim('d', 'node d', NULL, 1023, 60000, 1704067200000, 'time=41 worker=8 sequence=14')$$);

-- renew: only the holder's grant, never shortened
SELECT until_ms >= (SELECT until_ms FROM a) + 60000 AS extended
  FROM snowflake_registry_renew(0, 1, 'a', 120000);
SELECT until_ms IS NULL AS not_held FROM snowflake_registry_renew(0, 1, 'b', 120000);
SELECT until_ms IS NULL AS not_this_grant FROM snowflake_registry_renew(0, 2, 'a', 120000);
SELECT until_ms >= (SELECT until_ms FROM a) + 60000 AS never_shortened
  FROM snowflake_registry_renew(0, 1, 'a', 1);

-- a clean release lowers the high-water mark to after the last id, never
-- below the window's start; the node gets the worker id back by its name
SELECT snowflake_registry_release(0, 1, 'a', 0) AS released;
SELECT high_water_ms = window_from_ms AS mark_at_from, holder IS NULL AS free FROM snowflake_registry.workers WHERE worker_id = 0;
SELECT snowflake_registry_release(0, 1, 'a', 0) AS released_again;
SELECT worker_id, fencing_epoch, from_ms >= (SELECT from_ms FROM a) AS from_at_or_after
  FROM snowflake_registry_claim('a, restarted', 'node a', 0, 1023, 60000, 1704067200000, 'time=41 worker=10 sequence=12');

-- released by hand (a server gone for good): free at once, its next window
-- starting one grace after the end of the last one (R6: its holder may
-- still run), and granted empty when that is more than a maximum window
-- ahead (R3)
CREATE TEMP TABLE mark AS SELECT high_water_ms FROM snowflake_registry.workers WHERE worker_id = 1;
SELECT snowflake_registry_release(1) AS released, snowflake_registry_release(1) AS released_again;
SELECT worker_id, fencing_epoch, from_ms - (SELECT high_water_ms FROM mark) AS after_last_window_ms,
       until_ms - now_ms <= 600000 AS within_a_maximum_window
  FROM snowflake_registry_claim('e', 'node e', NULL, 1023, 60000, 1704067200000, 'time=41 worker=10 sequence=12');
SELECT until_ms IS NULL AS lost_to_e FROM snowflake_registry_renew(1, 1, 'b', 60000);

-- a grant whose window and quarantine are over goes to another holder, its
-- window one grace (maximum window and skew bound) after the old one's end
-- (R6); the old holder cannot renew it. (Rows written here as the
-- registry's functions write them: recording the writer.)
UPDATE snowflake_registry.settings SET quarantine_ms = 0, written_xid = _snowflake_registry_writer();
SET snowflake_registry.writing = on;  -- written as the registry's functions write
UPDATE snowflake_registry.workers SET expires_ms = (extract(epoch FROM clock_timestamp()) * 1000)::bigint - 1000,
                                      high_water_ms = (extract(epoch FROM clock_timestamp()) * 1000)::bigint - 1000,
                                      written_xid = _snowflake_registry_writer() WHERE worker_id = 2;
RESET snowflake_registry.writing;
CREATE TEMP TABLE expired AS SELECT high_water_ms FROM snowflake_registry.workers WHERE worker_id = 2;
SELECT worker_id, fencing_epoch, from_ms - (SELECT high_water_ms FROM expired) AS after_its_end_ms
  FROM snowflake_registry_claim('f', 'node f', NULL, 1023, 60000, 1704067200000, 'time=41 worker=10 sequence=12');
SELECT until_ms IS NULL AS lost_to_f FROM snowflake_registry_renew(2, 1, 'c', 60000);

-- the floor: no window starts below it
SELECT snowflake_registry_raise_floor(now() + interval '1 day') > now() + interval '23 hours' AS raised;
SELECT snowflake_registry_raise_floor(now()) > now() + interval '23 hours' AS never_lowered;
SELECT snowflake_registry_release(2);
SELECT worker_id, from_ms >= (SELECT floor_ms FROM snowflake_registry.settings) AS at_the_floor,
       until_ms - now_ms AS until_from_now_ms  -- R3: a maximum window from now, the window empty until then
  FROM snowflake_registry_claim('g', 'node g', NULL, 1023, 60000, 1704067200000, 'time=41 worker=10 sequence=12');

-- a node whose layout has fewer worker ids gets only those (none free here)
SELECT snowflake_registry_release(2);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_registry_claim('h', 'node h', NULL, 1, 60000, 1704067200000, 'time=41 worker=10 sequence=12')$$);

-- a longer window than the registry's maximum gets the maximum
UPDATE snowflake_registry.settings SET max_window_ms = 30000, written_xid = _snowflake_registry_writer();
SET snowflake_registry.writing = on;  -- written as the registry's functions write
UPDATE snowflake_registry.workers SET expires_ms = 0, written_xid = _snowflake_registry_writer() WHERE worker_id = 0;
RESET snowflake_registry.writing;
SELECT until_ms - now_ms AS window_ms FROM snowflake_registry_renew(0, 2, 'a, restarted', 600000);

-- lives: a holder's renewal through snowflake_registry_present
CREATE TEMP TABLE life AS SELECT * FROM snowflake_registry_life();
SELECT life_change, grace_until_ms <= now_ms AS no_grace FROM life;
CREATE TEMP TABLE held AS SELECT * FROM snowflake_registry.workers WHERE worker_id = 0;
SELECT p.outcome, p.granted_until_ms - p.now_ms AS window_ms, p.life = l.life AS same_life, p.registry_id = l.registry_id AS same_registry
  FROM held h, life l, snowflake_registry_present(h.worker_id, h.fencing_epoch, h.holder, h.holder_name, h.window_from_ms, h.expires_ms, 60000, l.registry_id, l.life) p;
-- a new life (here: the timeline recorded is not the server's): a grace
-- period of the maximum window and the skew bound; no new window
UPDATE snowflake_registry.settings SET timeline = timeline + 1, written_xid = _snowflake_registry_writer();
SELECT life_change ~ '^promoted or restored: timeline \d+, was \d+$' AS promoted, life <> (SELECT life FROM life) AS new_life,
       grace_until_ms - life_began_ms AS grace_ms
  FROM snowflake_registry_life();
SELECT regexp_replace(e, 'until .*', 'until ...') AS error_of
  FROM pg_temp.error_of($$SELECT snowflake_registry_claim('n', 'node n', NULL, 1023, 60000, 1704067200000, 'time=41 worker=10 sequence=12')$$) e;
-- holders present their windows, answered at once: known ones renewed
SELECT p.outcome, p.granted_until_ms >= h.expires_ms AS kept
  FROM held h, life l, snowflake_registry_present(h.worker_id, h.fencing_epoch, h.holder, h.holder_name, h.window_from_ms, h.expires_ms, 60000, l.registry_id, l.life) p;
-- a window the lost life granted (worker id 2, after its last grant here) is reinstated
CREATE TEMP TABLE lost AS
    SELECT high_water_ms + 1 AS from_ms, high_water_ms + 20000 AS until_ms FROM snowflake_registry.workers WHERE worker_id = 2;
SELECT p.outcome, p.granted_until_ms = p.now_ms + 30000 AS within_a_maximum_window
  FROM lost, life l, snowflake_registry_present(2, 9, 'lost holder', 'node l', lost.from_ms, lost.until_ms, 60000, l.registry_id, l.life) p;
SELECT worker_id, fencing_epoch, holder, holder_name, high_water_ms >= (SELECT until_ms FROM lost) AS above
  FROM snowflake_registry.workers WHERE worker_id = 2;
SELECT reinstated_ms IS NOT NULL AS reinstated, life = (SELECT life FROM life) AS its_life FROM snowflake_registry.grants WHERE worker_id = 2 AND fencing_epoch = 9;
-- another window of worker id 2 overlapping it: a conflict (two registries),
-- also logged as a WARNING (with times)
SET client_min_messages = error;
SELECT p.outcome, p.reason ~ '^worker id 2 was granted to node l for ids from .* \(fencing epoch 9\)$' AS says
  FROM lost, snowflake_registry_present(2, 3, 'other', 'node o', lost.from_ms, lost.until_ms, 60000, 'another registry', 'its life') p;
RESET client_min_messages;
-- a worker id held by another server, windows apart: lost, not taken
SELECT p.outcome FROM held h, snowflake_registry_present(0, 7, 'x', 'node x', h.window_from_ms - 100000, h.window_from_ms - 50000, 60000, 'another registry', 'its life') p;
SELECT * FROM pg_temp.error_of($$SELECT snowflake_registry_present(0, 1, 'x', 'node x', 10, 10, 0, 'r', 'l')$$);
-- the grace period of a life that may have forgotten windows (here: a
-- promotion) is not ended by hand without a reason (no hint of a refused
-- claim suggests it); given one, it ends, the reason in the life's change,
-- and a claim is answered again (none is free here)
SELECT * FROM pg_temp.error_of($$SELECT snowflake_registry_end_grace()$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_registry_end_grace('  ')$$);
SELECT snowflake_registry_end_grace('replicated synchronously, the standby in sync') AS ended;
SELECT life_change ~ '; grace ended by hand: replicated synchronously, the standby in sync$' AS says_why FROM snowflake_registry_life();
SELECT * FROM pg_temp.error_of($$SELECT snowflake_registry_claim('n', 'node n', NULL, 1023, 60000, 1704067200000, 'time=41 worker=10 sequence=12')$$);

-- R5: a window presented to a later life after its end is never reinstated
-- (the lost life may have given its worker id to another server after it)
SELECT p.outcome, p.reason ~ '^the window presented ended at .*, before this registry''s clock' AS says
  FROM snowflake_registry_present(1, 42, 'ended holder', 'node z', 1000, 2000, 60000, 'another registry', 'its life') p;
SELECT count(*) AS reinstated FROM snowflake_registry.grants WHERE fencing_epoch = 42;

-- R1: a row of the registry written by anything but its functions (a
-- data-only restore, COPY, an UPDATE by hand) begins a new life at the next
-- call, with a grace; its rows are its own again after it
CREATE TEMP TABLE before_restore AS SELECT life FROM snowflake_registry_life();
UPDATE snowflake_registry.settings SET quarantine_ms = quarantine_ms;
SELECT l.life_change, l.life <> b.life AS new_life, l.grace_until_ms - l.life_began_ms AS grace_ms
  FROM snowflake_registry_life() l, before_restore b;
SELECT count(*) AS rows_not_its_own FROM snowflake_registry.settings s WHERE s.xmin IS DISTINCT FROM s.written_xid;
SELECT snowflake_registry_end_grace('a test') AS ended;
UPDATE snowflake_registry.settings SET quarantine_ms = quarantine_ms;
SELECT life_change, grace_until_ms > now_ms AS in_grace FROM snowflake_registry_life();
-- the same inside a savepoint, by the registry's functions: its own rows
SELECT snowflake_registry_end_grace('a test') AS ended;
BEGIN;
SAVEPOINT s;
SELECT snowflake_registry_raise_floor('2000-01-01') IS NOT NULL AS floor_kept;
RELEASE SAVEPOINT s;
COMMIT;
SELECT life_change, grace_until_ms > now_ms AS in_grace FROM snowflake_registry_life();

-- R5, holders told apart by incarnation: a rollback no start revealed (a
-- VM resumed from a memory snapshot: the rows as the registry wrote them)
-- forgot twin x1's grant and granted its fencing epoch again to y1, a server
-- of the same host name, port and data directory; x1 presenting it is a
-- rollback (a new life) and a conflict, not a lost grant
SELECT snowflake_registry_end_grace('a test') AS ended, snowflake_registry_release(1) AS released;
CREATE TEMP TABLE twin AS
    SELECT c.* FROM snowflake_registry_claim('x1', 'twin:5432 /data', NULL, 1023, 60000, 1704067200000, 'time=41 worker=10 sequence=12') c;
SET snowflake_registry.writing = on;  -- written as the registry's functions write (a memory snapshot)
DELETE FROM snowflake_registry.grants g USING twin WHERE g.worker_id = twin.worker_id AND g.fencing_epoch = twin.fencing_epoch;
UPDATE snowflake_registry.workers r SET holder = NULL, fencing_epoch = twin.fencing_epoch - 1, high_water_ms = 0,
                                        grants_count = r.grants_count - 1, written_xid = _snowflake_registry_writer()
  FROM twin WHERE r.worker_id = twin.worker_id;
RESET snowflake_registry.writing;
SELECT c.worker_id = t.worker_id AND c.fencing_epoch = t.fencing_epoch AS same_grant_again
  FROM twin t, snowflake_registry_claim('y1', 'twin:5432 /data', t.worker_id, 1023, 60000, 1704067200000, 'time=41 worker=10 sequence=12') c;
SET client_min_messages = error;
SELECT p.outcome, p.life <> l.life AS new_life
  FROM twin t, snowflake_registry_life() l,
       snowflake_registry_present(t.worker_id, t.fencing_epoch, 'x1', 'twin:5432 /data', t.from_ms, t.until_ms, 60000, l.registry_id, l.life) p;
RESET client_min_messages;
SELECT snowflake_registry_end_grace('a test') AS ended;

-- R5: a grant of an earlier life is presented, never claimed back: its
-- holder claiming in a later life's grace (a 1.0 node claims without asking
-- the life first) is refused like any claimer
SELECT snowflake_registry_end_grace('a test') AS ended, snowflake_registry_release(2) AS released;
CREATE TEMP TABLE earlier AS
    SELECT c.* FROM snowflake_registry_claim('e1', 'node e1', NULL, 1023, 60000, 1704067200000, 'time=41 worker=10 sequence=12') c;
SELECT c.worker_id = e.worker_id AS same_life_renewed
  FROM earlier e, snowflake_registry_claim('e1', 'node e1', NULL, 1023, 60000, 1704067200000, 'time=41 worker=10 sequence=12') c;
UPDATE snowflake_registry.settings SET timeline = timeline + 1, written_xid = _snowflake_registry_writer();
SELECT regexp_replace(e, 'until .*', 'until ...') AS error_of
  FROM pg_temp.error_of($$SELECT snowflake_registry_claim('e1', 'node e1', NULL, 1023, 60000, 1704067200000, 'time=41 worker=10 sequence=12')$$) e;
SELECT snowflake_registry_end_grace('a test') AS ended;

-- R1: its tables restored without their sequence (COPY, pg_restore
-- --data-only of each table) after a later life began: the grace counts
-- from this call, not from the later life's first call the sequence holds
-- (here a grace of 1 ms, so that one counted from that call is over)
SELECT snowflake_registry_end_grace('a test') AS ended;
UPDATE snowflake_registry.settings SET max_window_ms = 1, max_skew_ms = 0,
       life_began_ms = (extract(epoch FROM pg_postmaster_start_time()) * 1000)::bigint, written_xid = _snowflake_registry_writer();
SELECT setval('snowflake_registry.life_first_call', (extract(epoch FROM pg_postmaster_start_time()) * 1000)::bigint + 1) > 0 AS later_life;
UPDATE snowflake_registry.settings SET quarantine_ms = quarantine_ms;  -- restored
SELECT life_change FROM snowflake_registry_life();
SELECT grace_until_ms - life_began_ms AS grace_from_this_call_ms FROM snowflake_registry.settings;
UPDATE snowflake_registry.settings SET max_window_ms = 30000, max_skew_ms = 1000, written_xid = _snowflake_registry_writer();
SELECT snowflake_registry_end_grace('a test') AS ended;

-- a renewal lowers a high water that a registry clock running ahead raised
-- to what the holder holds, so that its worker id is not kept out later
CREATE TEMP TABLE poisoned AS SELECT * FROM snowflake_registry.workers WHERE worker_id = 0;
SET snowflake_registry.writing = on;  -- written as the registry's functions write
UPDATE snowflake_registry.workers SET high_water_ms = high_water_ms + 600000, written_xid = _snowflake_registry_writer()
 WHERE worker_id = 0;
RESET snowflake_registry.writing;
SELECT p.outcome
  FROM poisoned h, snowflake_registry_life() l,
       snowflake_registry_present(h.worker_id, h.fencing_epoch, h.holder, h.holder_name, h.window_from_ms, h.expires_ms, 60000,
                                  l.registry_id, l.life) p;
SELECT high_water_ms <= (extract(epoch FROM clock_timestamp()) * 1000)::bigint + 30000 AS within_a_window
  FROM snowflake_registry.workers WHERE worker_id = 0;

-- R2 at every call: a grace that ends more than one grace from now (set
-- while the clock ran ahead) ends one grace from now
UPDATE snowflake_registry.settings SET grace_until_ms = grace_until_ms + 3600000, written_xid = _snowflake_registry_writer();
SELECT grace_until_ms - now_ms <= max_window_ms + 1000 AS at_most_a_grace_from_now FROM snowflake_registry_life();
SELECT grace_until_ms - now_ms <= max_window_ms + 1000 AS stays_so FROM snowflake_registry_life();
SELECT snowflake_registry_end_grace('a test') AS ended;
-- R2 by the monotonic clock: a grace whose end the wall clock reached early
-- (set forward during it) lasts its length all the same
UPDATE snowflake_registry.settings SET grace_until_ms = (extract(epoch FROM clock_timestamp()) * 1000)::bigint - 1000,
       grace_monotonic_ms = _snowflake_registry_monotonic_ms() + 5000, written_xid = _snowflake_registry_writer();
SELECT grace_until_ms > now_ms AS still_in_grace, grace_until_ms - now_ms BETWEEN 4000 AND 5000 AS its_length_left
  FROM snowflake_registry_life();
SELECT regexp_replace(e, 'until .*', 'until ...') AS error_of
  FROM pg_temp.error_of($$SELECT snowflake_registry_claim('m', 'node m', NULL, 1023, 60000, 1704067200000, 'time=41 worker=10 sequence=12')$$) e;
SELECT snowflake_registry_end_grace('a test') AS ended;

-- the history, and the view
SELECT worker_id, fencing_epoch, holder_name FROM snowflake_registry.grants ORDER BY 1, 2;
SELECT worker_id, state, holder_name, fencing_epoch FROM snowflake_registry.claims ORDER BY 1;

-- the fleet check: an id inside a window granted to its worker id, and ids outside every one
CREATE TABLE registry_ids (id bigint);
INSERT INTO registry_ids
    SELECT snowflake_from_timestamp_as(to_timestamp((from_ms + 1) / 1000.0), 'epoch=1704067200000 time=41 worker=10 sequence=12') | (0 << 12)
      FROM snowflake_registry.grants WHERE worker_id = 0 AND fencing_epoch = 2;
INSERT INTO registry_ids VALUES (1 << 12), (2 << 12 | 5), (NULL), (-1);  -- a sentinel is skipped
SELECT * FROM snowflake_registry_check('registry_ids');
DROP TABLE registry_ids;

-- a node's role (snowflake_registry_grant): it may call what a node calls,
-- which reach the registry's tables for it (SECURITY DEFINER), and nothing
-- else; a role not granted may call no registry function
CREATE ROLE snowflake_registry_node;
CREATE ROLE snowflake_registry_plain;
SELECT snowflake_registry_grant('snowflake_registry_node');
SELECT p.oid::regprocedure AS function, p.prosecdef AS definer,
       has_function_privilege('snowflake_registry_node', p.oid, 'EXECUTE') AS node,
       has_function_privilege('snowflake_registry_plain', p.oid, 'EXECUTE') AS plain
  FROM pg_proc p WHERE p.proname LIKE 'snowflake\_registry\_%' ORDER BY 1::text;
SELECT has_schema_privilege('snowflake_registry_node', 'snowflake_registry', 'USAGE') AS registry_schema,
       (SELECT count(*) FROM pg_class c WHERE c.relnamespace = 'snowflake_registry'::regnamespace
           AND has_table_privilege('snowflake_registry_node', c.oid, 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE')) AS tables;
SET ROLE snowflake_registry_node;
SELECT life_change FROM snowflake_registry_life();
SELECT snowflake_registry_release(0, 99, 'nobody', 0) AS released;
SELECT * FROM pg_temp.error_of($$SELECT snowflake_registry_claim('r', 'node r', NULL, 1023, 60000, 1704067200000, 'time=41 worker=10 sequence=12')$$);
SELECT * FROM pg_temp.error_of($$SELECT count(*) FROM snowflake_registry.grants$$);
SELECT * FROM pg_temp.error_of($$UPDATE snowflake_registry.workers SET holder = NULL$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_registry_raise_floor(now())$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_registry_end_grace()$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_registry_release(0)$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_registry_create()$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_registry_grant('snowflake_registry_plain')$$);
SET ROLE snowflake_registry_plain;
SELECT * FROM pg_temp.error_of($$SELECT snowflake_registry_life()$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_registry_release(0, 99, 'nobody', 0)$$);
RESET ROLE;
SELECT * FROM pg_temp.error_of($$SELECT snowflake_registry_grant('no_such_role')$$);

-- R9: a worker id's rows written by anything but the registry's functions
-- (a data-only restore of the workers or grants table, COPY, a hand write),
-- or a grant of it gone (DELETE, TRUNCATE), begin a new life at the next
-- call that reads them: a claim is refused (its mark outlives the refusal's
-- rollback), the next call's life is new, with a grace; the rows are then
-- the life's own (no new life again)
SELECT snowflake_registry_end_grace('a test') AS ended, snowflake_registry_release(0) AS released;
CREATE TEMP TABLE r9 AS
    SELECT c.* FROM snowflake_registry_claim('r9', 'node r9', NULL, 1023, 30000, 1704067200000, 'time=41 worker=10 sequence=12') c;
CREATE TEMP TABLE r9_life AS SELECT * FROM snowflake_registry_life();
CREATE TEMP TABLE r9_rows AS SELECT * FROM snowflake_registry.grants WHERE worker_id = (SELECT worker_id FROM r9);
CREATE FUNCTION pg_temp.r9_present() RETURNS TABLE (outcome text, new_life boolean, life_change text) LANGUAGE sql AS $$
    SELECT p.outcome, p.life <> l.life, p.life_change
      FROM r9 c, r9_life l, snowflake_registry.workers w,
           snowflake_registry_present(c.worker_id, c.fencing_epoch, 'r9', 'node r9', c.from_ms, w.expires_ms, 30000, l.registry_id, l.life) p
     WHERE w.worker_id = c.worker_id $$;
-- a hand write of its worker id's row: the holder's renewal meets a new life, its window reinstated
UPDATE snowflake_registry.workers SET released_ms = NULL WHERE worker_id = (SELECT worker_id FROM r9);
SELECT * FROM pg_temp.r9_present();
SELECT count(*) AS rows_not_its_own FROM snowflake_registry.workers w WHERE w.xmin IS DISTINCT FROM w.written_xid;
SELECT snowflake_registry_end_grace('a test') AS ended;
DELETE FROM r9_life; INSERT INTO r9_life SELECT * FROM snowflake_registry_life();
SELECT outcome, new_life FROM pg_temp.r9_present();  -- its own again: renewed
-- a grant gone (DELETE), then its rows restored (as by COPY): each a new life
DELETE FROM snowflake_registry.grants WHERE worker_id = (SELECT worker_id FROM r9);
SELECT outcome, new_life, life_change FROM pg_temp.r9_present();
SELECT snowflake_registry_end_grace('a test') AS ended;
DELETE FROM r9_life; INSERT INTO r9_life SELECT * FROM snowflake_registry_life();
SET snowflake_registry.writing = on;  -- the grants taken out as the registry's functions would
DELETE FROM snowflake_registry.grants WHERE worker_id = (SELECT worker_id FROM r9);
UPDATE snowflake_registry.workers SET grants_count = grants_count - (SELECT count(*) FROM r9_rows), written_xid = _snowflake_registry_writer()
 WHERE worker_id = (SELECT worker_id FROM r9);
INSERT INTO snowflake_registry.grants SELECT * FROM r9_rows;  -- as COPY or a data-only restore with its triggers disabled writes them
UPDATE snowflake_registry.workers SET grants_count = grants_count + (SELECT count(*) FROM r9_rows), written_xid = _snowflake_registry_writer()
 WHERE worker_id = (SELECT worker_id FROM r9);
RESET snowflake_registry.writing;
SELECT outcome, new_life, life_change FROM pg_temp.r9_present();
-- TRUNCATE of the grants: another node's claim of a worker id whose grants
-- are gone is refused, and the next call begins a new life
SELECT snowflake_registry_end_grace('a test') AS ended;
SELECT snowflake_registry_release(w.worker_id, w.fencing_epoch, w.holder, 0) AS released
  FROM snowflake_registry.workers w WHERE w.holder = 'r9';
TRUNCATE snowflake_registry.grants;
SELECT regexp_replace(e, 'until .*', 'until ...') AS error_of
  FROM pg_temp.error_of($$SELECT snowflake_registry_claim('r9b', 'node r9', 0, 1023, 30000, 1704067200000, 'time=41 worker=10 sequence=12')$$) e;
SELECT life_change, grace_until_ms > now_ms AS in_grace FROM snowflake_registry_life();
SELECT count(*) AS counts_not_its_own FROM snowflake_registry.workers w
 WHERE w.grants_count <> (SELECT count(*) FROM snowflake_registry.grants g WHERE g.worker_id = w.worker_id);
SELECT snowflake_registry_end_grace('a test') AS ended;

-- a hand write in the transaction of a registry function that wrote the
-- same row (psql with AUTOCOMMIT off): its writer is that function's, but
-- it was not written by it (the tables' trigger): a new life at the next call
SELECT snowflake_registry_end_grace('a test') AS ended;
BEGIN;
SELECT worker_id >= 0 AS claimed FROM snowflake_registry_claim('st', 'node st', NULL, 1023, 30000, 1704067200000, 'time=41 worker=10 sequence=12');
UPDATE snowflake_registry.workers SET holder = NULL, high_water_ms = 0, expires_ms = 0 WHERE holder = 'st';
COMMIT;
SELECT life_change, grace_until_ms > now_ms AS in_grace FROM snowflake_registry_life();
SELECT snowflake_registry_end_grace('a test') AS ended;

-- R2': a new life's grace lasts the longest window a node asked, when that
-- is longer than the maximum window (a registry created again with a
-- smaller one than its holders hold): asked in the grace by a claim, even
-- one refused; a life begins hearing nothing (the asks of earlier lives
-- lengthen none of its grace)
UPDATE snowflake_registry.settings SET timeline = timeline + 1, written_xid = _snowflake_registry_writer();
SELECT grace_until_ms - life_began_ms AS grace_ms FROM snowflake_registry_life();
SELECT regexp_replace(e, 'until .*', 'until ...') AS error_of
  FROM pg_temp.error_of($$SELECT snowflake_registry_claim('long', 'node long', NULL, 1023, 120000, 1704067200000, 'time=41 worker=10 sequence=12')$$) e;
SELECT grace_until_ms - life_began_ms AS grace_ms, max_window_ms FROM snowflake_registry_life();
SELECT snowflake_registry_end_grace('a test') AS ended;
SELECT grace_until_ms <= now_ms AS ended_by_hand_stays_ended FROM snowflake_registry_life();

-- R10: a new life whose clock is behind the times the lost life wrote (a
-- failover to a standby whose clock is behind the primary's) starts no
-- window before the latest of them plus a grace
UPDATE snowflake_registry.settings SET floor_ms = 0, written_xid = _snowflake_registry_writer();  -- the floor raised above, set back
SET snowflake_registry.writing = on;  -- written as the registry's functions write
UPDATE snowflake_registry.workers SET holder = 'fast', renewed_ms = (extract(epoch FROM clock_timestamp()) * 1000)::bigint + 30000,
       written_xid = _snowflake_registry_writer() WHERE worker_id = 0;
RESET snowflake_registry.writing;
CREATE TEMP TABLE fast AS SELECT renewed_ms FROM snowflake_registry.workers WHERE worker_id = 0;
UPDATE snowflake_registry.settings SET timeline = timeline + 1, written_xid = _snowflake_registry_writer();
SELECT regexp_replace(life_change, '\d+ ms behind .* no window starts before .*', 'N ms behind ... no window starts before ...') AS life_change
  FROM snowflake_registry_life();
SELECT floor_ms - (SELECT renewed_ms FROM fast) AS floor_after_its_clock_ms FROM snowflake_registry.settings;  -- the grace (R2')
SELECT snowflake_registry_end_grace('a test') AS ended;

-- a registry created again: once a holder presented a window of the lost
-- one, its grace is not ended by hand without a reason
DROP SCHEMA snowflake_registry CASCADE;
SET client_min_messages = warning;
SELECT snowflake_registry_create('[0,2)', '0', '6 s');
RESET client_min_messages;
SELECT p.outcome FROM snowflake_registry_present(0, 3, 'earlier holder', 'node e', (extract(epoch FROM clock_timestamp()) * 1000)::bigint - 1000,
       (extract(epoch FROM clock_timestamp()) * 1000)::bigint + 5000, 6000, 'the lost registry', 'its life') p;
SELECT * FROM pg_temp.error_of($$SELECT snowflake_registry_end_grace()$$);

DROP SCHEMA snowflake_registry CASCADE;
SELECT * FROM pg_temp.error_of($$SELECT snowflake_registry_grant('snowflake_registry_plain')$$);
DROP OWNED BY snowflake_registry_node;
DROP ROLE snowflake_registry_node, snowflake_registry_plain;
SELECT * FROM pg_temp.error_of($$SELECT snowflake_registry_check('pg_class', 'oid')$$);
