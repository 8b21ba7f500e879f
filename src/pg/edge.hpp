// The PostgreSQL edge: what the files under src/pg share. C++ bodies stay
// free of objects with destructors, so PostgreSQL's longjmp (ereport) never
// skips one; SNOWFLAKE_FUNCTION is the one place exceptions are stopped.
#pragma once

#include "../core/generator.hpp"
#include "../core/text.hpp"

extern "C" {
#include "postgres.h"

#include "fmgr.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
}

#include <atomic>
#include <exception>

namespace snowflake::pg {

// Settings (GUC variables); see module.cpp.
extern int worker_id_setting;  // -1: unset
extern int max_lead_setting;   // ms
extern char* epoch_setting;
std::int64_t epoch_unix_ms();  // snowflake.epoch, parsed

// Why generation is refused on this server, decided at start-up.
enum class Blocked : std::uint32_t { No, EpochChanged, LeaseUnreadable };

struct SharedState {
    GeneratorState generator;
    std::int64_t epoch_unix_ms;        // the epoch in force since start-up
    std::int64_t lease_epoch_unix_ms;  // the epoch the lease file was taken under
    std::atomic<Blocked> blocked;       // set at start-up, or by replay on a standby
    std::atomic<Latch*> lease_worker_latch;  // wakes the lease worker; null until it runs
};
static_assert(std::is_standard_layout_v<SharedState>);

SharedState* shared_state();  // null unless loaded by shared_preload_libraries
Config generator_config(std::uint32_t worker_id);
LWLock* lease_lock();

// The durable lease (lease.cpp).
void load_lease(SharedState& shared);  // at shared memory start-up
void shrink_lease_at_shutdown(int code, Datum);
void register_lease_wal();
void register_lease_worker();
// Makes the durable lease cover `needed_ms` (and a span beyond); waits on disk.
void extend_lease(SharedState& shared, std::uint64_t needed_ms);

// Row estimates on snowflake columns as for bigint (estimate.cpp); from _PG_init.
void install_estimate_hook();

inline constexpr std::int64_t kUnixToPostgresMs = 946684800000;  // 1970 -> 2000 epoch

// The one error boundary for failures the core reports.
[[noreturn]] void raise(Status status);

// Declares an SQL-callable function whose body is C++. An exception never
// reaches PostgreSQL's C frames: its message is copied, the catch is left,
// and only then is the ERROR raised.
void raise_exception(const char* what) pg_attribute_noreturn();

#define SNOWFLAKE_FUNCTION(name)                                             \
    static Datum name##_body(FunctionCallInfo fcinfo);                       \
    extern "C" {                                                             \
    PG_FUNCTION_INFO_V1(name);                                               \
    Datum name(PG_FUNCTION_ARGS) {                                           \
        char message[256];                                                   \
        try {                                                                \
            return name##_body(fcinfo);                                      \
        } catch (const std::exception& e) {                                  \
            strlcpy(message, e.what(), sizeof message);                      \
        } catch (...) {                                                      \
            strlcpy(message, "unknown C++ exception", sizeof message);       \
        }                                                                    \
        ::snowflake::pg::raise_exception(message);                           \
    }                                                                        \
    }                                                                        \
    static Datum name##_body(FunctionCallInfo fcinfo)

}  // namespace snowflake::pg
