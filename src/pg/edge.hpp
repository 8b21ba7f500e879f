// The PostgreSQL edge: what the files under src/pg share. C++ bodies stay
// free of objects with destructors, so PostgreSQL's longjmp (ereport) never
// skips one; SNOWFLAKE_FUNCTION is the one place exceptions are stopped.
#pragma once

#include "../core/clock.hpp"
#include "../core/generator.hpp"
#include "../core/layouts.hpp"
#include "../core/text.hpp"
#include "compat.hpp"

extern "C" {
#include "postgres.h"

#include "fmgr.h"
#include "postmaster/bgworker.h"
#include "utils/guc.h"
#include "storage/condition_variable.h"
#include "storage/latch.h"
#include "storage/spin.h"
#include "utils/timestamp.h"
}

#include <atomic>
#include <cstring>
#include <exception>

namespace snowflake::pg {

// Settings (GUC variables); see module.cpp. The worker id in effect is the
// shared one (GeneratorState::worker_id), which the lease writer applies.
extern int worker_id_setting;  // -1: unset
extern int max_lead_setting;   // ms
extern int lease_span_setting;  // ms
extern char* epoch_setting;
extern char* layout_setting;
extern char* registry_setting;       // libpq conninfo; empty: none (registry.cpp)
extern int registry_window_setting;  // ms
extern int registry_renew_setting;   // ms
extern int registry_max_skew_setting;  // ms
bool registry_mode();  // snowflake.registry is set: the worker id is claimed from it
std::int64_t epoch_unix_ms();  // snowflake.epoch, parsed
const Layout& node_layout();   // snowflake.layout, parsed

// Why generation is refused on this server, decided at start-up.
enum class Blocked : std::uint32_t { No, EpochChanged, LayoutChanged, LeaseUnreadable, LeaseCorrupt };

struct SharedState {
    GeneratorState generator;
    std::int64_t epoch_unix_ms;        // the epoch in force since start-up
    std::int64_t lease_epoch_unix_ms;  // the epoch the lease file was taken under
    Layout layout;                     // the layout in force since start-up
    Layout lease_layout;               // the layout the lease file was taken under
    std::atomic<Blocked> blocked;       // set at start-up, or by replay on a standby
    std::atomic<bool> lease_elsewhere;  // the lease file was written by another data directory
    std::atomic<Latch*> lease_writer_latch;  // wakes the lease writer; null while none runs
    std::atomic<std::uint32_t> writer_busy;    // 1 while a process writes the lease
    std::atomic<std::uint64_t> lease_failures;  // lease writes that failed
    ConditionVariable lease_written;            // broadcast after every write attempt
    std::atomic<std::int64_t> writer_alive_ms;  // the lease writer's last turn (it turns at least once a second)
    std::atomic<std::int32_t> writer_pid;
    // Faults that repeat are logged at most once a second, with a count of the rest.
    struct Throttle {
        std::atomic<std::int64_t> reported_ms;
        std::atomic<std::uint64_t> unreported;
    };
    Throttle write_failures, call_failures, writer_stalls;
    // The registry's grant (snowflake.registry), as its background worker has it.
    struct Registry {
        std::uint32_t previous;                   // the worker id in the lease file at start, or kNoWorker
        std::atomic<std::uint32_t> worker_id;     // held, or kNoWorker
        std::atomic<std::int64_t> fencing_epoch;  // of the grant held
        std::atomic<std::int64_t> until_ms;       // its window's end (ms since 1970); 0: none
        std::atomic<std::int64_t> reached_ms;     // the last answer from the registry (ms since 1970)
        slock_t lock;                             // guards error
        char error[256];                          // why the last call failed; "" after a success
    } registry;
};
static_assert(std::is_standard_layout_v<SharedState>);

SharedState* shared_state();  // null unless loaded by shared_preload_libraries
// A background worker of this library with shared memory, restarted after 1 s (module.cpp).
void register_worker(const char* function, const char* name, BgWorkerStartTime start);
// snowflake.epoch or snowflake.layout changed on a node that has issued ids:
// an ERROR saying so, with the way out for generation or for decoding (generate.cpp).
[[noreturn]] void refuse_changed_lease(const SharedState& state, bool decoding);
Config generator_config();

// snowflake.public_key, the key of public ids (public.cpp); from _PG_init.
void define_public_key_setting();

// The durable lease and the lease writer (lease.cpp).
void load_lease(SharedState& shared);  // at shared memory start-up
void shrink_lease_at_shutdown(int code, Datum);
void register_lease_wal();
void register_lease_worker();
// Whether a repeated fault is reported now (at most once a second); when it
// is, `unreported` is how many were not since the last report.
bool report_now(SharedState::Throttle& throttle, std::uint64_t& unreported);
// How long the lease writer has not turned, in ms (0: it turns, or none runs).
std::int64_t writer_stalled_ms(const SharedState& state);
// The error of a call the lease could not be extended for; its server log
// lines are throttled like the faults (install_log_throttle, from _PG_init).
#define SNOWFLAKE_LEASE_NOT_EXTENDED "could not extend the snowflake lease"
void install_log_throttle();
// Waits (interruptibly) until the durable lease covers `needed_ms`.
void extend_lease(SharedState& shared, std::uint64_t needed_ms);
// Lifts the fence on the worker id in effect; returns it, or kNoWorker.
std::uint32_t adopt_worker_id(SharedState& shared);

// Worker ids claimed from a registry (registry.cpp).
void define_registry_settings(GucContext postmaster);  // before snowflake.worker_id
void make_incarnation();  // in the postmaster, from _PG_init
void register_registry_worker();
// At a clean shutdown: gives the worker id back, every id being below `used_until_ms`.
void release_registry_grant(SharedState& shared, std::int64_t used_until_ms);
// NoWorker or WindowEnded under a registry: an ERROR naming the registry and when it answered last.
[[noreturn]] void refuse_without_grant(const SharedState& shared, Status status);
// Why the last call to the registry failed ("" after a success).
void registry_error(const SharedState::Registry& registry, char (&text)[256]);
// The registry's conninfo without secrets (host, port, dbname, user).
const char* registry_name();

// Row estimates on snowflake columns as for bigint (estimate.cpp); from _PG_init.
void install_estimate_hook();

inline constexpr std::int64_t kUnixToPostgresMs = 946684800000;  // 1970 -> 2000 epoch

inline TimestampTz timestamptz_of_unix_ms(std::int64_t unix_ms) {
    return (unix_ms - kUnixToPostgresMs) * 1000;
}

// Copies a NUL-terminated name into a fixed buffer, truncating.
template <std::size_t N>
void copy_name(char (&to)[N], const char* from) noexcept {
    std::size_t length = std::strlen(from);
    if (length >= N) length = N - 1;
    std::memcpy(to, from, length);
    to[length] = '\0';
}

// Ids and decoded fields (type.cpp).
std::uint64_t id_or_refuse(std::int64_t id);  // ERROR (22003) for a negative id
// A snowflake_fields row (ts, worker_id, sequence) as the function's result.
Datum fields_datum(FunctionCallInfo fcinfo, TimestampTz ts, std::uint32_t worker_id,
                   std::uint32_t sequence);

// The one error boundary for failures the core reports.
[[noreturn]] void refuse_call(Status status);

// Declares an SQL-callable function whose body is C++. An exception never
// reaches PostgreSQL's C frames: its message is copied, the catch is left,
// and only then is the ERROR raised.
[[noreturn]] void raise_exception(const char* what);

#define SNOWFLAKE_FUNCTION(name)                                             \
    static Datum name##_body(FunctionCallInfo fcinfo);                       \
    extern "C" {                                                             \
    PG_FUNCTION_INFO_V1(name);                                               \
    Datum name(PG_FUNCTION_ARGS) {                                           \
        char message[256];                                                   \
        try {                                                                \
            return name##_body(fcinfo);                                      \
        } catch (const std::exception& e) {                                  \
            ::snowflake::pg::copy_name(message, e.what());                   \
        } catch (...) {                                                      \
            ::snowflake::pg::copy_name(message, "unknown C++ exception");    \
        }                                                                    \
        ::snowflake::pg::raise_exception(message);                           \
    }                                                                        \
    }                                                                        \
    static Datum name##_body(FunctionCallInfo fcinfo)

}  // namespace snowflake::pg
