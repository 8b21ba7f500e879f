// Worker ids claimed from a registry (snowflake.registry): a table on a
// PostgreSQL server (snowflake_registry_create) grants a worker id together
// with a window of id times [from, until) that never overlaps another grant
// of that worker id, and the generator refuses ids at or past `until`
// (apply_grant, src/core/generator.hpp). This server's background worker — not
// a backend — claims and renews well before `until` (this file); after a clean
// shutdown the postmaster releases (registry_release.cpp); the insert path
// never waits on the registry. The holder is this server's incarnation
// (registry_client.hpp).
#include "datadir.hpp"
#include "registry.hpp"

#include "registry_client.hpp"
#include "registry_release.hpp"
#include "registry_settings.hpp"

extern "C" {
#include "access/xlog.h"
#include "libpq-fe.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "postmaster/postmaster.h"
#include "storage/ipc.h"
#include "storage/pmsignal.h"
#include "utils/datetime.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

PGDLLEXPORT void snowflake_registry_worker_main(Datum argument);
}

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdlib>

namespace snowflake::pg {

namespace {

// A time (ms since 1970) as PostgreSQL prints it, in a buffer of the caller's:
// timestamptz_to_str's own is one static buffer, and a pstrdup of it would
// grow this long-lived worker's memory at every line logged.
struct TimeText {
    char text[MAXDATELEN + 1];
};
const char* time_text(TimeText& buffer, std::int64_t unix_ms) {
    copy_name(buffer.text, timestamptz_to_str(timestamptz_of_unix_ms(unix_ms)));
    return buffer.text;
}


void set_error(SharedState::Registry& registry, const char* text) {
    SpinLockAcquire(&registry.lock);
    copy_name(registry.error, text);
    SpinLockRelease(&registry.lock);
}


// Each call to the registry waits at most this long.
std::int64_t call_timeout_ms() { return std::clamp<std::int64_t>(registry_renew_setting, 1000, 5000); }
// How often the worker renews: well before the window ends, at most a third of it.
std::int64_t granted_window_ms(const SharedState::Registry& registry) {
    const std::int64_t granted = registry.window_ms.load();
    return granted > 0 ? std::min<std::int64_t>(granted, registry_window_setting) : registry_window_setting;
}
std::int64_t renew_interval_ms(const SharedState::Registry& registry) {
    return std::min<std::int64_t>(registry_renew_setting, granted_window_ms(registry) / 3);
}

// The registry life that granted the window held.
void set_life(SharedState::Registry& registry, const char* registry_id, const char* life) {
    SpinLockAcquire(&registry.lock);
    copy_name(registry.registry_id, registry_id);
    copy_name(registry.life, life);
    SpinLockRelease(&registry.lock);
}
void get_life(const SharedState::Registry& registry, char (&registry_id)[40], char (&life)[40]) {
    auto& lock = const_cast<slock_t&>(registry.lock);
    SpinLockAcquire(&lock);
    copy_name(registry_id, registry.registry_id);
    copy_name(life, registry.life);
    SpinLockRelease(&lock);
}

// Whether the registry's server ("system identifier:start time in us", from
// snowflake_registry_life) is this one: its shutdown cannot wait for itself.
bool is_this_server(const char* server) {
    char own[64];
    snprintf(own, sizeof own, "%" PRIu64 ":%" PRId64, static_cast<std::uint64_t>(GetSystemIdentifier()),
             static_cast<std::int64_t>(PgStartTime) + kUnixToPostgresMs * 1000);
    return strcmp(server, own) == 0;
}

// Publishes a grant to the generator: the floor rises to `from`, then the
// worker id and the window's end are published in one word.
// A window whose start is more than snowflake.max_lead ahead of the clock
// (the worker id's last window ended there: a floor, or a release by hand)
// is held back until the clock comes within max_lead of it, so that no id is
// dated further ahead; apply_pending() applies it then.
void apply_pending(SharedState& state) {
    SharedState::Registry& registry = state.registry;
    const std::uint32_t worker_id = registry.worker_id.load();
    const std::int64_t from_ms = registry.from_ms.load();
    const bool ahead = from_ms - unix_now_ms() > max_lead_setting;
    const bool was_pending = registry.pending.exchange(worker_id != kNoWorker && ahead);
    if (worker_id == kNoWorker || ahead) {
        // what the operator sees meanwhile (snowflake_status.registry_error)
        if (worker_id != kNoWorker) {
            char text[256];
            snprintf(text, sizeof text,
                     "worker id %u is granted for ids from %s, %" PRId64
                     " ms ahead of this server's clock: issued from when the clock is within snowflake.max_lead of it",
                     worker_id, timestamptz_to_str(timestamptz_of_unix_ms(from_ms)), from_ms - unix_now_ms());
            set_error(registry, text);
        }
        return;
    }
    if (was_pending) set_error(registry, "");
    apply_grant(state.generator, state.layout, worker_id, units_from(state, from_ms),
                units_from(state, registry.until_ms.load()), now_units(state));
}

// R4 (test/model/RULES.md): a window ends no later than the window asked (at
// most the registry's maximum) after this server's clock at the send of the
// exchange that granted it, whatever `until` the registry answered: what a
// later life of the registry forgets ends within its grace by construction.
std::int64_t cap_window(std::int64_t until_ms, std::int64_t sent_ms, std::int64_t asked_ms,
                        std::int64_t max_window_ms) {
    return std::min(until_ms, sent_ms + std::min(asked_ms, max_window_ms));
}

// R7: the registry's clock against the middle of the round trip [before,
// after] (positive: the registry's ahead), kept for snowflake_status; false,
// with `error` saying so, when the two differ by more than
// snowflake.registry_max_skew with the round trip's uncertainty.
bool compare_clocks(SharedState::Registry& registry, std::int64_t before, std::int64_t after,
                    std::int64_t registry_now, char (&error)[256]) {
    const std::int64_t skew = registry_now - (before + after) / 2;
    const std::int64_t uncertainty = (after - before + 1) / 2;
    registry.clock_skew_ms.store(skew);
    if (std::abs(skew) + uncertainty <= registry_max_skew_setting) return true;
    snprintf(error, sizeof error,
             "the registry's clock is %" PRId64 " ms %s this server's (+/- %" PRId64
             " ms), more than snowflake.registry_max_skew (%d ms)",
             std::abs(skew), skew < 0 ? "behind" : "ahead of", uncertainty, registry_max_skew_setting);
    return false;
}

// A clock out of bounds: in registry_error, and a WARNING when it goes out
// of bounds and once a minute while it stays so (this worker's state).
std::int64_t clock_warned_ms = 0;  // 0: the clocks agreed at the last call
void clock_out_of_bounds(SharedState::Registry& registry, const char (&error)[256], const char* consequence) {
    const std::int64_t now = unix_now_ms();
    if (clock_warned_ms == 0 || now - clock_warned_ms >= 60000) {
        clock_warned_ms = now;
        ereport(WARNING, (errmsg("snowflake: %s", error), errdetail("%s", consequence),
                          errhint("Synchronize this server's clock and the registry's (NTP).")));
    }
    set_error(registry, error);
}

void publish(SharedState& state, std::uint32_t worker_id, std::int64_t fencing_epoch, std::int64_t from_ms,
             std::int64_t until_ms, std::int64_t registry_now_ms) {
    SharedState::Registry& registry = state.registry;
    registry.fencing_epoch.store(fencing_epoch);
    registry.from_ms.store(from_ms);
    registry.until_ms.store(until_ms);
    registry.window_ms.store(until_ms - std::max(registry_now_ms, from_ms));
    registry.worker_id.store(worker_id);
    registry.reached_ms.store(unix_now_ms());
    set_error(registry, "");
    apply_pending(state);
}

// This server, as the registry's view shows it: host:port and data directory
// (the host as snowflake.host_name names it).
const char* holder_name() {
    static char name[512];
    if (name[0] == '\0') {
        snprintf(name, sizeof name, "%s:%d %s", server_host_name(), PostPortNumber, DataDir);
    }
    return name;
}

// A claim that failed (the registry unreachable, refusing this server or its
// role, or granting nothing): logged once for each new reason.
void claim_failed(SharedState::Registry& registry, const char (&error)[256]) {
    if (strcmp(error, registry.error) != 0)
        ereport(WARNING, (errmsg("snowflake: no worker id could be claimed from the registry %s: %s", registry_name(),
                                 error)));
    set_error(registry, error);
}

// Claims a worker id: the clocks are compared first (the registry's reading
// against the middle of the round trip), and a claim is not made when they
// differ by more than snowflake.registry_max_skew.
bool claim(SharedState& state) {
    SharedState::Registry& registry = state.registry;
    char error[256];
    // The registry's life, in a statement of its own: a new life it begins
    // commits whatever the claim's answer, so that its grace period begins
    // once and ends on time.
    const std::int64_t before = unix_now_ms();
    PGresult* life = registry_query("SELECT now_ms, grace_until_ms, life_change FROM snowflake_registry_life()", 0,
                                    nullptr, call_timeout_ms(), error);
    const std::int64_t after = unix_now_ms();
    if (life == nullptr) {
        claim_failed(registry, error);
        return false;
    }
    const std::int64_t registry_now = registry_value(life, 0);
    const std::int64_t grace_until = registry_value(life, 1);
    if (registry_now < grace_until) {
        snprintf(error, sizeof error,
                 "the registry grants no new window until %s, the end of its grace period (%s); claimed again then",
                 timestamptz_to_str(timestamptz_of_unix_ms(grace_until)), PQgetvalue(life, 0, 2));
        PQclear(life);
        claim_failed(registry, error);
        return false;
    }
    PQclear(life);
    registry.reached_ms.store(after);
    if (!compare_clocks(registry, before, after, registry_now, error)) {
        clock_out_of_bounds(registry, error, "No worker id is claimed until they agree.");
        return false;
    }
    clock_warned_ms = 0;
    char previous[16], max_worker[24], window[24], epoch[24], layout[kLayoutTextMax];
    const std::int64_t asked_ms = registry_window_setting;
    snprintf(previous, sizeof previous, "%u", registry.previous);
    snprintf(max_worker, sizeof max_worker, "%" PRIu64, state.layout.max_worker);
    snprintf(window, sizeof window, "%" PRId64, asked_ms);
    snprintf(epoch, sizeof epoch, "%" PRId64, state.epoch_unix_ms);
    format_node_layout(state.layout, layout);
    const char* values[] = {incarnation, holder_name(),
                            registry.previous == kNoWorker ? nullptr : previous,
                            max_worker, window, epoch, layout};
    const std::int64_t sent = unix_now_ms();
    PGresult* granted = registry_query(
        "SELECT c.worker_id, c.fencing_epoch, c.from_ms, c.until_ms, c.now_ms, l.registry_id, l.life, l.server, "
        "l.max_window_ms FROM snowflake_registry_life() l, snowflake_registry_claim($1, $2, $3, $4, $5, $6, $7) c",
        7, values, call_timeout_ms(), error);
    if (granted == nullptr) {
        claim_failed(registry, error);
        return false;
    }
    const std::int64_t worker_id = registry_value(granted, 0);
    const std::int64_t fencing_epoch = registry_value(granted, 1);
    const std::int64_t from_ms = registry_value(granted, 2);
    const std::int64_t until_ms = cap_window(registry_value(granted, 3), sent, asked_ms, registry_value(granted, 8));
    const std::int64_t registry_now_ms = registry_value(granted, 4);
    set_life(registry, PQgetvalue(granted, 0, 5), PQgetvalue(granted, 0, 6));
    registry.self_hosted.store(is_this_server(PQgetvalue(granted, 0, 7)));
    PQclear(granted);
    if (worker_id < 0 || static_cast<std::uint64_t>(worker_id) > state.layout.max_worker) {
        snprintf(error, sizeof error, "the registry granted worker id %" PRId64 ", outside snowflake.layout",
                 worker_id);
        set_error(registry, error);
        return false;
    }
    publish(state, static_cast<std::uint32_t>(worker_id), fencing_epoch, from_ms, until_ms, registry_now_ms);
    TimeText from_text, until_text;
    ereport(LOG, (errmsg("snowflake: worker id %" PRId64 " claimed from the registry %s, for ids from %s until %s",
                         worker_id, registry_name(), time_text(from_text, from_ms), time_text(until_text, until_ms)),
                  registry.pending.load()
                      ? errdetail("Its window starts %" PRId64 " ms ahead of this server's clock; ids are issued "
                                  "from when the clock is within \"snowflake.max_lead\" of it.",
                                  from_ms - unix_now_ms())
                      : 0));
    return true;
}

// Extends the window held (snowflake_registry_present). A registry in
// another life than the one that granted it (promoted, restored, created
// again, another one at the same address) is presented the window for
// reinstatement, and the node logs what changed. When the grant is gone (the
// registry gave the worker id to another server after the window and the
// quarantine ended, or it was released), claims another: ids of the old
// window stay valid until its end, no other grant overlapping it. When
// another grant overlaps it (two registries granted the worker id), no id is
// issued under it from now on.
bool renew(SharedState& state) {
    SharedState::Registry& registry = state.registry;
    char error[256], worker_id[16], fencing_epoch[24], window[24], from[24], until[24];
    char held_registry[40], held_life[40];
    const std::uint32_t held = registry.worker_id.load();
    get_life(registry, held_registry, held_life);
    snprintf(worker_id, sizeof worker_id, "%u", held);
    snprintf(fencing_epoch, sizeof fencing_epoch, "%" PRId64, registry.fencing_epoch.load());
    const std::int64_t asked_ms = registry_window_setting;
    snprintf(window, sizeof window, "%" PRId64, asked_ms);
    snprintf(from, sizeof from, "%" PRId64, registry.from_ms.load());
    snprintf(until, sizeof until, "%" PRId64, registry.until_ms.load());
    const char* values[] = {worker_id, fencing_epoch, incarnation, holder_name(), from, until, window,
                            held_registry, held_life};
    const std::int64_t sent = unix_now_ms();
    PGresult* renewed = registry_query(
        "SELECT outcome, granted_until_ms, reason, registry_id, life, life_change, server, now_ms, max_window_ms "
        "FROM snowflake_registry_present($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        9, values, call_timeout_ms(), error);
    const std::int64_t answered = unix_now_ms();
    if (renewed == nullptr) {
        set_error(registry, error);
        return false;
    }
    // R7 on every exchange: a clock out of bounds is named; the window stays
    // safe without it (R3, R4)
    char clock_error[256];
    const bool clocks_agree = compare_clocks(registry, sent, answered, registry_value(renewed, 7), clock_error);
    const char* outcome = PQgetvalue(renewed, 0, 0);
    const char* registry_id = PQgetvalue(renewed, 0, 3);
    const char* life = PQgetvalue(renewed, 0, 4);
    registry.self_hosted.store(is_this_server(PQgetvalue(renewed, 0, 6)));
    if (strcmp(life, held_life) != 0 || strcmp(registry_id, held_registry) != 0)
        ereport(LOG, (errmsg("snowflake: the registry %s began a new life (%s); worker id %u presented for reinstatement",
                             registry_name(),
                             strcmp(registry_id, held_registry) != 0 ? "another registry" : PQgetvalue(renewed, 0, 5),
                             held),
                      errdetail("Its window was granted by registry %s, life %s; the registry is %s, life %s.",
                                held_registry, held_life, registry_id, life)));
    if (strcmp(outcome, "renewed") == 0 || strcmp(outcome, "reinstated") == 0) {
        const std::int64_t until_ms = cap_window(registry_value(renewed, 1), sent, asked_ms, registry_value(renewed, 8));
        const std::int64_t registry_now_ms = registry_value(renewed, 7);
        if (strcmp(outcome, "reinstated") == 0) {
            set_life(registry, registry_id, life);
            TimeText until_text;
            ereport(LOG, (errmsg("snowflake: the window of worker id %u reinstated by the registry %s, until %s", held,
                                 registry_name(), time_text(until_text, until_ms))));
        }
        PQclear(renewed);
        publish(state, held, registry.fencing_epoch.load(), registry.from_ms.load(), until_ms, registry_now_ms);
        if (!clocks_agree)
            clock_out_of_bounds(registry, clock_error,
                                "The window is renewed; ids run to its end by this server's clock at the latest.");
        else
            clock_warned_ms = 0;
        return true;
    }
    const bool conflict = strcmp(outcome, "conflict") == 0;
    char reason[256];
    copy_name(reason, PQgetvalue(renewed, 0, 2));
    PQclear(renewed);
    if (conflict) {
        // the window ends now: the generator refuses ids from this time unit on
        registry.until_ms.store(unix_now_ms());
        apply_grant(state.generator, state.layout, held, 0, now_units(state), now_units(state));
        ereport(WARNING, (errmsg("snowflake: the registry %s refused to reinstate the window of worker id %u: %s",
                                 registry_name(), held, reason),
                          errdetail("Two registries granted windows of this worker id; no id is issued under it "
                                    "from now on."),
                          errhint("Run snowflake_registry_check on the fleet's ids, and make sure one registry "
                                  "serves the fleet.")));
    } else {
        ereport(LOG, (errmsg("snowflake: the registry no longer grants worker id %u to this server; claiming another",
                             held),
                      errdetail("Its window ended and another server was granted it, or it was released (%s). Ids "
                                "under it go on until the window's end.", reason)));
    }
    registry.worker_id.store(kNoWorker);
    registry.pending.store(false);
    return claim(state);
}

// A warning, at most every 10 s, while less than half the window is left.
void warn_if_window_low(const SharedState& state, std::int64_t& warned_ms) {
    const SharedState::Registry& registry = state.registry;
    const std::int64_t until = registry.until_ms.load();
    const std::int64_t now = unix_now_ms();
    if (registry.worker_id.load() == kNoWorker || until == 0 || until - now >= granted_window_ms(registry) / 2 ||
        now - warned_ms < 10000)
        return;
    warned_ms = now;
    char error[256];
    registry_error(registry, error);
    const std::int64_t reached = registry.reached_ms.load();
    TimeText reached_text;
    ereport(WARNING,
            (errmsg(until > now ? "snowflake: the window of worker id %u ends in %" PRId64 " ms"
                                : "snowflake: the window of worker id %u ended %" PRId64 " ms ago",
                    registry.worker_id.load(), std::abs(until - now)),
             errdetail("The registry %s was last reached at %s%s%s.", registry_name(),
                       reached == 0 ? "no time since start" : time_text(reached_text, reached),
                       error[0] != '\0' ? "; since then: " : "", error),
             errhint("Ids are refused from the window's end until the registry answers again.")));
}

void close_connection(int, Datum) { drop_registry_connection(); }

}  // namespace


void registry_error(const SharedState::Registry& registry, char (&text)[256]) {
    auto& lock = const_cast<slock_t&>(registry.lock);
    SpinLockAcquire(&lock);
    copy_name(text, registry.error);
    SpinLockRelease(&lock);
}


void register_registry_worker() {
    // from the start, standbys included: a promoted standby has its worker id already
    register_worker("snowflake_registry_worker_main", "snowflake registry worker", BgWorkerStart_PostmasterStart);
}

namespace {

// Makes the release left by the last shutdown, then claims a worker id,
// renews its window, claims again when it is lost.
void registry_worker_main(Datum) {
    pqsignal(SIGHUP, SignalHandlerForConfigReload);
    install_worker_sigterm();
    BackgroundWorkerUnblockSignals();
    // R8: a reload signalled before the handler was in place was discarded
    // (a background worker starts with SIGHUP ignored): read the files now
    ProcessConfigFile(PGC_SIGHUP);
    before_shmem_exit(SNOWFLAKE_CALLBACK(close_connection, FATAL), 0);
    SharedState& state = *shared_state();
    std::int64_t next_call = 0;  // monotonic ms
    std::int64_t warned_ms = 0;
    bool pending_release_made = false;
    while (!ShutdownRequestPending) {
        if (ConfigReloadPending) {
            ConfigReloadPending = false;
            ProcessConfigFile(PGC_SIGHUP);
        }
        if (monotonic_ms() >= next_call && state.blocked == Blocked::No) {
            if (!pending_release_made) {
                char error[256];
                pending_release_made = make_pending_release(call_timeout_ms(), error);
                if (!pending_release_made) set_error(state.registry, error);
            }
            const bool answered = pending_release_made && (state.registry.worker_id.load() == kNoWorker
                                                               ? claim(state)
                                                               : renew(state));
            // after a failure, again sooner: generation resumes within a renewal of the registry's return
            const std::int64_t interval = renew_interval_ms(state.registry);
            next_call = monotonic_ms() + (answered ? interval : std::clamp<std::int64_t>(interval / 2, 100, 5000));
        }
        std::int64_t wait_ms = next_call - monotonic_ms();
        if (state.registry.pending.load()) {  // a window ahead of the clock: applied once the clock nears it
            apply_pending(state);
            wait_ms = std::min<std::int64_t>(
                wait_ms, state.registry.from_ms.load() - max_lead_setting - unix_now_ms());
        }
        warn_if_window_low(state, warned_ms);
        (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
                        static_cast<long>(std::clamp<std::int64_t>(wait_ms, 10, 1000)), PG_WAIT_EXTENSION);
        ResetLatch(MyLatch);
    }
    exit_worker();
}

}  // namespace
}  // namespace snowflake::pg

void snowflake_registry_worker_main(Datum argument) {
    SNOWFLAKE_CALLBACK(snowflake::pg::registry_worker_main, FATAL)(argument);
}
