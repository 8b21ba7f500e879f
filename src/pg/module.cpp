// Module start-up: settings, shared memory, the durable lease and the
// background worker that keeps the lease ahead of need.
#include "edge.hpp"

extern "C" {
#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

PG_MODULE_MAGIC;

void _PG_init(void);
PGDLLEXPORT void snowflake_lease_worker_main(Datum argument) pg_attribute_noreturn();
}

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace snowflake::pg {

int worker_id_setting = -1;
int max_lead_setting = 1000;
char* epoch_setting = nullptr;

namespace {

constexpr char kDefaultEpoch[] = "2024-01-01 00:00:00+00";
constexpr std::int64_t kDefaultEpochUnixMs = 1704067200000;
constexpr std::uint64_t kLeaseSpanMs = 10000;
constexpr char kLeaseDirectory[] = "pg_snowflake";
constexpr char kLeasePath[] = "pg_snowflake/lease";
constexpr char kLeaseTempPath[] = "pg_snowflake/lease.tmp";
constexpr char kTrancheName[] = "snowflake";

std::int64_t parsed_epoch_unix_ms = kDefaultEpochUnixMs;
SharedState* shared = nullptr;
shmem_startup_hook_type previous_shmem_startup_hook = nullptr;
#if PG_VERSION_NUM >= 150000
shmem_request_hook_type previous_shmem_request_hook = nullptr;
#endif

bool check_epoch(char** newval, void** extra, GucSource) {
    std::int64_t unix_ms;
    if (*newval == nullptr || !parse_timestamp(*newval, unix_ms)) {
        GUC_check_errmsg("invalid value for parameter \"snowflake.epoch\": \"%s\"",
                         *newval ? *newval : "");
        GUC_check_errdetail("The epoch is a UTC timestamp from 1970-01-01 to 9999-12-31, "
                            "such as '2024-01-01 00:00:00+00'.");
        return false;
    }
    auto* parsed = static_cast<std::int64_t*>(malloc(sizeof(std::int64_t)));
    if (parsed == nullptr) return false;
    *parsed = unix_ms;
    *extra = parsed;
    return true;
}

void assign_epoch(const char*, void* extra) {
    if (extra != nullptr) parsed_epoch_unix_ms = *static_cast<std::int64_t*>(extra);
}

// PostgreSQL applies a preloaded library's settings from the configuration
// file with only a WARNING when they are bad, then uses the default. A wrong
// epoch or worker id must not go unnoticed: at server start it is fatal.
void refuse_bad_setting_at_start(const char* name, const char* value) {
    if (value == nullptr || !process_shared_preload_libraries_in_progress) return;
    (void)set_config_option(name, value, PGC_POSTMASTER, PGC_S_FILE, GUC_ACTION_SET,
                            false /* only check */, FATAL, false);
}

// The value the configuration gave a setting before it was defined, if any.
char* configured_value(const char* name) {
    const char* value = GetConfigOption(name, true, false);
    return value != nullptr ? pstrdup(value) : nullptr;
}

void define_settings() {
    char* worker_id = configured_value("snowflake.worker_id");
    char* epoch = configured_value("snowflake.epoch");
    char* max_lead = configured_value("snowflake.max_lead");

    DefineCustomIntVariable(
        "snowflake.worker_id", "This node's worker id, 0..1023, distinct on every node.",
        "-1 means unset: snowflake_nextval() refuses until it is set.", &worker_id_setting, -1,
        -1, static_cast<int>(kMaxWorker), PGC_SIGHUP, 0, nullptr, nullptr, nullptr);
    DefineCustomStringVariable(
        "snowflake.epoch", "The instant ids count milliseconds from (UTC).",
        "Fixed for the life of the data: ids made under another epoch do not sort with these.",
        &epoch_setting, kDefaultEpoch,
        // A library loaded after start-up may not define postmaster settings;
        // without preloading there is no generator, only decoding.
        process_shared_preload_libraries_in_progress ? PGC_POSTMASTER : PGC_SIGHUP, 0,
        check_epoch, assign_epoch, nullptr);
    DefineCustomIntVariable(
        "snowflake.max_lead", "How far ids may run ahead of the clock when borrowing.",
        "Past it, snowflake_nextval() waits for the clock.", &max_lead_setting, 1000, 0, 3600000,
        PGC_SIGHUP, GUC_UNIT_MS, nullptr, nullptr, nullptr);
    refuse_bad_setting_at_start("snowflake.worker_id", worker_id);
    refuse_bad_setting_at_start("snowflake.epoch", epoch);
    refuse_bad_setting_at_start("snowflake.max_lead", max_lead);
#if PG_VERSION_NUM >= 150000
    MarkGUCPrefixReserved("snowflake");
#else
    EmitWarningsOnPlaceholders("snowflake");
#endif
}

LWLock* lease_lock() { return &GetNamedLWLockTranche(kTrancheName)->lock; }

// Reads the lease file. Returns false when there is none.
bool read_lease(Lease& lease, bool& readable) {
    readable = true;
    const int fd = open(kLeasePath, O_RDONLY | PG_BINARY, 0);
    if (fd < 0) {
        if (errno == ENOENT) return false;
        readable = false;
        return true;
    }
    char text[kLeaseTextMax];
    const ssize_t length = read(fd, text, sizeof text);
    close(fd);
    readable = length > 0 && parse_lease(text, static_cast<std::size_t>(length), lease);
    return true;
}

// Writes the lease durably: temp file, fsync, rename, fsync of the directory.
bool write_lease(const Lease& lease, int elevel) {
    char text[kLeaseTextMax];
    const std::size_t length = format_lease(lease, text);
    if (MakePGDirectory(kLeaseDirectory) < 0 && errno != EEXIST) {
        ereport(elevel, (errcode_for_file_access(),
                         errmsg("could not create directory \"%s\": %m", kLeaseDirectory)));
        return false;
    }
    const int fd = OpenTransientFile(kLeaseTempPath, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);
    if (fd < 0) {
        ereport(elevel, (errcode_for_file_access(),
                         errmsg("could not open file \"%s\": %m", kLeaseTempPath)));
        return false;
    }
    errno = 0;
    if (write(fd, text, length) != static_cast<ssize_t>(length)) {
        if (errno == 0) errno = ENOSPC;
        CloseTransientFile(fd);
        ereport(elevel, (errcode_for_file_access(),
                         errmsg("could not write file \"%s\": %m", kLeaseTempPath)));
        return false;
    }
    if (CloseTransientFile(fd) != 0) {
        ereport(elevel, (errcode_for_file_access(),
                         errmsg("could not close file \"%s\": %m", kLeaseTempPath)));
        return false;
    }
    // durable_rename fsyncs the file, renames it and fsyncs the directory.
    return durable_rename(kLeaseTempPath, kLeasePath, elevel) == 0;
}

// Extends the lease under the lock when it covers less than `needed_ms`.
bool extend_lease_to(SharedState& state, std::uint64_t needed_ms, std::uint64_t target_ms,
                     int elevel) {
    LWLockAcquire(lease_lock(), LW_EXCLUSIVE);
    bool ok = true;
    if (state.generator.lease_ms.load() < needed_ms) {
        target_ms = std::max(target_ms, needed_ms);
        ok = write_lease(Lease{state.epoch_unix_ms, target_ms}, elevel);
        if (ok) {
            // Published only once durable: no id beyond the file's mark is issued.
            state.generator.lease_ms.store(target_ms, std::memory_order_release);
            state.generator.lease_extensions.fetch_add(1, std::memory_order_relaxed);
        }
    }
    LWLockRelease(lease_lock());
    return ok;
}

// At a clean shutdown, when every backend is gone, the lease shrinks to the
// last id issued, so that a restart continues from there and not a span later.
void shutdown_lease(int code, Datum) {
    if (code != 0 || shared == nullptr || shared->blocked != Blocked::No) return;
    const std::uint64_t last = shared->generator.last_id.load();
    if (last == 0) return;
    write_lease(Lease{shared->epoch_unix_ms, time_of(last)}, LOG);
}

std::size_t shared_size() { return MAXALIGN(sizeof(SharedState)); }

void request_shared_memory() {
#if PG_VERSION_NUM >= 150000
    if (previous_shmem_request_hook) previous_shmem_request_hook();
#endif
    RequestAddinShmemSpace(shared_size());
    RequestNamedLWLockTranche(kTrancheName, 1);
}

void startup_shared_memory() {
    if (previous_shmem_startup_hook) previous_shmem_startup_hook();
    LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
    bool found;
    shared = static_cast<SharedState*>(ShmemInitStruct("snowflake", shared_size(), &found));
    if (!found) {
        shared->epoch_unix_ms = parsed_epoch_unix_ms;
        shared->lease_epoch_unix_ms = parsed_epoch_unix_ms;
        shared->blocked = Blocked::No;
        new (&shared->lease_worker_latch) std::atomic<Latch*>(nullptr);
        Lease lease{};
        bool readable;
        const bool exists = read_lease(lease, readable);
        if (exists && !readable) {
            shared->blocked = Blocked::LeaseUnreadable;
        } else if (exists && lease.epoch_unix_ms != parsed_epoch_unix_ms) {
            shared->blocked = Blocked::EpochChanged;
            shared->lease_epoch_unix_ms = lease.epoch_unix_ms;
        }
        init_state(shared->generator, exists && readable, lease.lease_ms);
        const std::int64_t ahead_ms =
            parsed_epoch_unix_ms + static_cast<std::int64_t>(lease.lease_ms) -
            GetCurrentTimestamp() / 1000 - kUnixToPostgresMs;
        if (exists && readable && ahead_ms > 0)
            ereport(LOG, (errmsg("snowflake: ids continue after the lease high-water mark, "
                                 "%lld ms ahead of the system clock",
                                 static_cast<long long>(ahead_ms)),
                          errdetail("After a crash, or a restart with the clock set back, ids "
                                    "run ahead of the clock until it catches up.")));
    }
    LWLockRelease(AddinShmemInitLock);
    if (!IsUnderPostmaster) on_shmem_exit(shutdown_lease, 0);
}

void register_lease_worker() {
    BackgroundWorker worker{};
    worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
    worker.bgw_start_time = BgWorkerStart_RecoveryFinished;  // never on a standby
    worker.bgw_restart_time = 1;
    strlcpy(worker.bgw_library_name, "snowflake", BGW_MAXLEN);
    strlcpy(worker.bgw_function_name, "snowflake_lease_worker_main", BGW_MAXLEN);
    strlcpy(worker.bgw_name, "snowflake lease worker", BGW_MAXLEN);
    strlcpy(worker.bgw_type, "snowflake lease worker", BGW_MAXLEN);
    RegisterBackgroundWorker(&worker);
}

}  // namespace

std::int64_t epoch_unix_ms() { return parsed_epoch_unix_ms; }

SharedState* shared_state() { return shared; }

Config generator_config(std::uint32_t worker_id) {
    return Config{shared->epoch_unix_ms, worker_id, static_cast<std::uint64_t>(max_lead_setting),
                  kLeaseSpanMs};
}

void extend_lease(SharedState& state, std::uint64_t needed_ms) {
    const Config config = generator_config(0);
    extend_lease_to(state, needed_ms, lease_target(state.generator, config), ERROR);
}

}  // namespace snowflake::pg

using namespace snowflake;
using namespace snowflake::pg;

void _PG_init(void) {
    define_settings();
    if (!process_shared_preload_libraries_in_progress) return;
#if PG_VERSION_NUM >= 150000
    previous_shmem_request_hook = shmem_request_hook;
    shmem_request_hook = request_shared_memory;
#else
    request_shared_memory();
#endif
    previous_shmem_startup_hook = shmem_startup_hook;
    shmem_startup_hook = startup_shared_memory;
    register_lease_worker();
}

// Sleeps until asked (by a backend whose lease runs low) or for a second,
// then extends the lease when it covers less than half a span past the lead.
void snowflake_lease_worker_main(Datum) {
    pqsignal(SIGHUP, SignalHandlerForConfigReload);
    pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
    BackgroundWorkerUnblockSignals();
    SharedState& state = *shared;
    state.lease_worker_latch.store(MyLatch);
    while (!ShutdownRequestPending) {
        if (ConfigReloadPending) {
            ConfigReloadPending = false;
            ProcessConfigFile(PGC_SIGHUP);
        }
        const std::uint64_t last = state.generator.last_id.load();
        const Config config = generator_config(0);
        if (state.blocked == Blocked::No && last != 0 &&
            lease_is_low(time_of(last), state.generator.lease_ms.load(), config)) {
            const std::uint64_t target = lease_target(state.generator, config);
            extend_lease_to(state, target, target, LOG);
        }
        (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 1000,
                        PG_WAIT_EXTENSION);
        ResetLatch(MyLatch);
    }
    state.lease_worker_latch.store(nullptr);
    proc_exit(0);
}
