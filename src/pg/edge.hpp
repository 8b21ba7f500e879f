// The PostgreSQL edge: what the files under src/pg share. C++ bodies stay
// free of objects with destructors, so PostgreSQL's longjmp (ereport) never
// skips one; SNOWFLAKE_FUNCTION is the one place exceptions are stopped.
#pragma once

#include "../core/clock.hpp"
#include "../core/generator.hpp"
#include "../core/layout_names.hpp"
#include "../core/text.hpp"
#include "compat.hpp"

extern "C" {
#include "postgres.h"

#include "fmgr.h"
#include "postmaster/bgworker.h"
#include "utils/guc.h"
#include "storage/condition_variable.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/spin.h"
#include "utils/timestamp.h"
}

#include <atomic>
#include <cstring>
#include <exception>
#include <type_traits>

namespace snowflake::pg {

// Settings (GUC variables; settings.cpp). The worker id in effect is the
// shared one (GeneratorState::worker_id), which the lease writer applies.
extern int worker_id_setting;  // -1: unset
extern int max_lead_setting;   // ms
extern int lease_span_setting;  // ms
extern char* epoch_setting;
extern char* layout_setting;
extern char* host_name_setting;  // empty: the kernel's host name
extern bool replay_1_0_wal_setting;  // 1.0's lease records (RM_EXPERIMENTAL_ID) replayed (lease_wal.cpp)
// The name of this server's host in the data directory's identity and the
// registry's holder name: snowflake.host_name, or the kernel's host name.
const char* server_host_name();
// The kernel's host name, as a lease can record it.
const char* kernel_host_name();
extern char* registry_setting;       // libpq conninfo; empty: none
extern int registry_window_setting;  // ms
extern int registry_renew_setting;   // ms
extern int registry_max_skew_setting;  // ms
// Where the worker id comes from, decided here only: claimed from a registry
// (snowflake.registry set), or snowflake.worker_id (kNoWorker: unset; always
// under a registry, the two being exclusive).
bool registry_mode();
std::uint32_t configured_worker_id();
std::int64_t epoch_unix_ms();  // snowflake.epoch, parsed
const Layout& node_layout();   // snowflake.layout, parsed

// Why generation is refused on this server, decided at start-up.
enum class Blocked : std::uint32_t {
    No, EpochChanged, LayoutChanged, LeaseUnreadable, LeaseCorrupt, LeaseNotCarried, UpgradedAway
};

// Shared memory: who writes each field of SharedState, and under what rule.
// "Start-up" is the postmaster's shared memory start-up (module.cpp,
// startup.cpp, fence_if_copy), before any other process attaches; those fields
// are read-only afterwards unless a line says otherwise. "The writer" is the
// process holding writer_busy (lease_write.cpp): the lease writer, or a
// backend when none runs. "Redo" is the startup process replaying lease records
// (lease_wal.cpp), the only writer of the lease while the server is in recovery.
//   generator.last_id, clock_high, floor_id, borrowed_units, counters
//                                         backends (reserve: CAS and atomic max,
//                                         src/core/generator.hpp); redo and adopt raise the floor
//   generator.grant                       one word (worker id and window's end): the lease
//                                         writer (a worker id applied) or the registry worker
//   generator.fenced                      start-up, redo, repair_lease, adopt (atomic bits)
//   generator.lease_units                the writer (a write published once durable, never
//                                         lowered; adopt_worker_id and repair_lease hold the
//                                         writer's place too), redo
//   epoch_unix_ms, layout, lease_worker_id, moved_fence, moved_from,
//   loaded_fence, registry.previous       start-up only
//   lease_epoch_unix_ms, lease_layout     start-up; redo (a record under another epoch or
//                                         layout); repair_lease (holding the writer's place). Plain fields:
//                                         read only once `blocked` says they changed
//   blocked                               start-up; redo (EpochChanged, LayoutChanged);
//                                         repair_lease (back to No). Atomic stores
//   lease_elsewhere                       start-up (the lease read, or carried over by
//                                         pg_upgrade); the writer and keep_fence, false once
//                                         this directory wrote the lease. Atomic stores
//   restore                               start-up (fence_if_copy)
//   moved_worker                          start-up (fence_moved); as_written (the writer, redo)
//                                         and adopt_worker_id end a move: kNoWorker
//   renaming_to                           the postmaster at its clean shutdown, every other
//                                         process gone (rename_at_shutdown); names_from_files
//                                         start-up only
//   pending_worker                        the ALTER SYSTEM hook and the lease writer's poll,
//                                         holding settings_busy and the writer's place
//                                         (pending.cpp); redo (exchange)
//   settings_busy                         CAS from 0 to the pid of the process recording a change
//                                         of the settings' files (pending.cpp); back to 0 by it, or
//                                         at its exit (before_shmem_exit)
//   writer_busy                           CAS from 0 to the writer's pid; back to 0 by it, or
//                                         at its exit (before_shmem_exit)
//   lease_failures                        the writer (fetch_add); backends compare it
//   lease_writer_latch, writer_alive_ms, writer_pid   the lease writer only
//   write_failures, call_failures, writer_stalls      any process (report_now: CAS)
//   registry.worker_id, fencing_epoch, until_ms, reached_ms, from_ms, window_ms,
//   pending, self_hosted, clock_skew_ms   the registry worker (atomic stores; apply_pending
//                                         publishes a grant: floor first, then worker id and
//                                         window's end in one word of the generator)
//   registry.error, registry_id, life     the registry worker, holding registry.lock
//                                         (a spinlock); readers copy them under it
struct SharedState {
    GeneratorState generator;
    std::int64_t epoch_unix_ms;        // the epoch in force since start-up
    std::int64_t lease_epoch_unix_ms;  // the epoch the lease file was taken under
    Layout layout;                     // the layout in force since start-up
    Layout lease_layout;               // the layout the lease file was taken under
    std::atomic<Blocked> blocked;       // set at start-up, or by replay on a standby
    std::atomic<bool> lease_elsewhere;  // the lease file was written by another data directory
    std::atomic<bool> restore;          // a restore (fence.hpp): the lease replayed from WAL is its source's
    std::uint32_t lease_worker_id;      // the worker id the lease file named at start-up, or kNoWorker
    // A lease file written by this volume, directory and birth time under
    // another host name (fence.hpp, F13): the worker id it named, refused at
    // this start only while `moved_fence` (the fence is not kept in the files,
    // which keep the lease's identity while that worker id is in effect), or
    // kNoWorker once a lease is written under another worker id, or adopted.
    std::atomic<std::uint32_t> moved_worker;
    bool moved_fence;
    // The worker id the settings' files name while another is in effect (a
    // reload pending: pending.hpp, F15), written into every lease; kNoWorker:
    // none. Set holding settings_busy and the writer's place, then the lease rewritten.
    std::atomic<std::uint32_t> pending_worker;
    // The pid of the process recording a change of the settings' files (an
    // ALTER SYSTEM from its record to postgresql.auto.conf written, or the
    // lease writer's poll); 0: none. Not an LWLock: an ALTER SYSTEM waits for
    // the lease to be written, which a stalled disk may hold for long, and
    // cancel and statement_timeout end that wait.
    std::atomic<std::int32_t> settings_busy;
    ConditionVariable settings_free;  // broadcast when settings_busy goes back to 0
    Lease moved_from;  // the lease's identity: directory_host, directory_inode, host_name
    // A rename (F13R): the host name the settings' files give this server
    // from its next start, when it is not the one it ran under; "": none.
    // Set at the clean shutdown (rename_at_shutdown), the last lease stamped
    // with it (as_written).
    char renaming_to[kHostNameMax + 1];
    // Whether the host name this server runs under is the one its settings'
    // files give (not the command line's): only then is a change of the files
    // a rename. Start-up only.
    bool names_from_files;
    // The fence decided at start-up (bits, as generator.fenced: the lease
    // files', and a copy's or a move's): crash recovery replays an adoption
    // only where it did not fence (lease_wal.cpp).
    std::uint64_t loaded_fence[(kMaxAnyWorker + 1) / 64];
    std::atomic<Latch*> lease_writer_latch;  // wakes the lease writer; null while none runs
    std::atomic<std::int32_t> writer_busy;     // the pid of the process writing the lease; 0: none
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
        slock_t lock;                             // guards error, registry_id and life
        char error[256];                          // why the last call failed; "" after a success
        // The registry's life that granted or last renewed the window held: a
        // window is presented for reinstatement to any other.
        char registry_id[40];
        char life[40];
        std::atomic<std::int64_t> from_ms;    // the window's start
        std::atomic<std::int64_t> window_ms;  // the window's length, as the registry granted it
        std::atomic<bool> pending;            // granted, not yet applied: its start is ahead of the clock
        std::atomic<bool> self_hosted;        // the registry is on this server
        std::atomic<std::int64_t> clock_skew_ms;  // the registry's clock minus this server's, at the last exchange
    } registry;
};
static_assert(std::is_standard_layout_v<SharedState>);
// Shared memory holds no lock behind an atomic (test/house: every atomic type
// of SharedState and GeneratorState is asserted here or in generator.hpp).
static_assert(std::atomic<Blocked>::is_always_lock_free && std::atomic<bool>::is_always_lock_free &&
              std::atomic<std::int32_t>::is_always_lock_free && std::atomic<std::int64_t>::is_always_lock_free &&
              std::atomic<Latch*>::is_always_lock_free);

SharedState* shared_state();  // null unless loaded by shared_preload_libraries
void set_shared_state(SharedState* state);  // module.cpp, at shared memory start-up
// Defines the settings but the registry's and the public key's (their files
// do), from _PG_init; a bad value is FATAL at server start.
void define_settings();
void refuse_bad_setting_at_start(const char* name, const char* value);
char* configured_value(const char* name);  // what the configuration gave it, if anything
// A background worker of this library with shared memory, restarted after 1 s.
void register_worker(const char* function, const char* name, BgWorkerStartTime start);
// A background worker's SIGTERM sets ShutdownRequestPending; exit_worker() then
// exits with 0 when it came from the postmaster (a shutdown: nothing to restart,
// not logged as a failure), with 1 otherwise (pg_terminate_backend: PostgreSQL
// starts the worker again).
void install_worker_sigterm();
[[noreturn]] void exit_worker();
// snowflake.epoch or snowflake.layout changed on a node that has issued ids:
// an ERROR saying so, with the way out for generation or for decoding (generate.cpp).
[[noreturn]] void refuse_changed_lease(const SharedState& state, bool decoding);
Config generator_config();

// Times: the lease file, its WAL record and the registry count ms (since the
// epoch, or since 1970); the generator, the layout's units (the same in 1 ms
// layouts).
inline std::uint64_t ms_of(const SharedState& state, std::uint64_t units) {
    return units * static_cast<std::uint64_t>(state.layout.unit_ms);
}
inline std::uint64_t units_of(const SharedState& state, std::uint64_t ms) {
    return ms / static_cast<std::uint64_t>(state.layout.unit_ms);
}
// The clock, in the layout's units since the epoch.
inline std::uint64_t now_units(const SharedState& state) {
    const std::int64_t ms = unix_now_ms() - state.epoch_unix_ms;
    return ms > 0 ? units_of(state, static_cast<std::uint64_t>(ms)) : 0;
}
// An id time (ms since 1970) as the first time unit at or after it: ids of
// the units below it decode to times below it (a registry's window ends).
inline std::uint64_t units_from(const SharedState& state, std::int64_t unix_ms) {
    const std::int64_t ms = unix_ms - state.epoch_unix_ms;
    return ms <= 0 ? 0 : units_of(state, static_cast<std::uint64_t>(ms) + state.layout.unit_ms - 1);
}

// snowflake.public_key, the key of public ids (public.cpp); from _PG_init.
void define_public_key_setting();
// Row estimates on snowflake columns as for bigint (estimate.cpp); from _PG_init.
void install_estimate_hook();
// Binds our members of core's integer_ops again in pg_upgrade's restore (family.cpp); from _PG_init.
void install_family_hook();

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

// The one boundary between PostgreSQL's C frames and C++: every function
// PostgreSQL calls — SQL functions (SNOWFLAKE_FUNCTION), hooks, GUC check and
// assign hooks, exit callbacks, background workers' mains, WAL callbacks,
// _PG_init — is handed to it as SNOWFLAKE_CALLBACK(function, level). An
// exception never crosses into PostgreSQL: its message is copied, the catch is
// left, and only then is it reported at `level` (ERROR where a transaction can
// abort, FATAL in a background worker or at start, PANIC in WAL replay; LOG in
// a hook the postmaster runs too, where an ERROR would end it: the settings'
// hooks, emit_log_hook; it then returns false, refusing a setting's value, or
// nothing). test/house fails the build when a function reaches PostgreSQL
// another way, or a postmaster's hook is given a level above LOG.
[[noreturn]] void raise_exception(int level, const char* what);
void log_exception(const char* what);
// After an exception caught at the boundary: PostgreSQL's error stacks as they
// were on entry. An exception thrown inside a PG_TRY block leaves its
// sigjmp_buf, a dead frame's, on PG_exception_stack (its PG_CATCH never ran):
// reported with that, an ERROR would longjmp into it.
void restore_error_stacks(sigjmp_buf* exception_stack, ErrorContextCallback* context_stack);

template <auto Function, int Level>
struct Boundary;
template <class R, class... Args, R (*Function)(Args...), int Level>
struct Boundary<Function, Level> {
    static_assert(Level >= ERROR || (Level == LOG && (std::is_void_v<R> || std::is_same_v<R, bool>)),
                  "a reported exception returns into the callback only at LOG, with false or nothing");
    static R call(Args... args) {
        char message[256];
        sigjmp_buf* const exception_stack = PG_exception_stack;
        ErrorContextCallback* const context_stack = error_context_stack;
        try {
            return Function(args...);
        } catch (const std::exception& e) {
            copy_name(message, e.what());
        } catch (...) {
            copy_name(message, "unknown C++ exception");
        }
        restore_error_stacks(exception_stack, context_stack);
        if constexpr (Level == LOG) {
            log_exception(message);
            if constexpr (!std::is_void_v<R>) return false;
        } else {
            raise_exception(Level, message);
        }
    }
};
#define SNOWFLAKE_CALLBACK(function, level) (&::snowflake::pg::Boundary<&function, level>::call)

// Declares an SQL-callable function whose body is C++, inside the boundary.
#define SNOWFLAKE_FUNCTION(name)                                             \
    static Datum name##_body(FunctionCallInfo fcinfo);                       \
    extern "C" {                                                             \
    PG_FUNCTION_INFO_V1(name);                                               \
    Datum name(PG_FUNCTION_ARGS) { return SNOWFLAKE_CALLBACK(name##_body, ERROR)(fcinfo); } \
    }                                                                        \
    static Datum name##_body(FunctionCallInfo fcinfo)

}  // namespace snowflake::pg
