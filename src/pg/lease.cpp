// The durable lease: a high-water mark in $PGDATA/pg_snowflake/lease that no
// issued id passes, kept ahead of need by a background worker, and written to
// the WAL so that a standby knows its primary's mark when it is promoted.
#include "edge.hpp"

extern "C" {
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#if PG_VERSION_NUM >= 150000
#include "access/xlog_internal.h"
#endif
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

PGDLLEXPORT void snowflake_lease_worker_main(Datum argument) pg_attribute_noreturn();
}

#include <fcntl.h>
#include <unistd.h>

namespace snowflake::pg {
namespace {

constexpr char kLeaseDirectory[] = "pg_snowflake";
constexpr char kLeasePath[] = "pg_snowflake/lease";
constexpr char kLeaseTempPath[] = "pg_snowflake/lease.tmp";

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

// The WAL record: the lease as the primary wrote it. PostgreSQL 15+ only;
// older servers keep the file alone (a promoted standby then relies on the
// clock for ordering with its old primary's ids).
#if PG_VERSION_NUM >= 150000
// RM_EXPERIMENTAL_ID until an id is reserved on the PostgreSQL wiki.
constexpr RmgrId kRmgrId = RM_EXPERIMENTAL_ID;
constexpr std::uint8_t kLeaseRecord = 0x00;

void log_lease(const Lease& lease) {
    XLogBeginInsert();
    XLogRegisterData(reinterpret_cast<char*>(const_cast<Lease*>(&lease)), sizeof lease);
    // Flushed so that it streams at once; a commit of any id issued under this
    // lease comes later in the WAL, so a synchronous standby has it first.
    XLogFlush(XLogInsert(kRmgrId, kLeaseRecord));
}

Lease record_lease(XLogReaderState* record) {
    Lease lease;
    memcpy(&lease, XLogRecGetData(record), sizeof lease);
    return lease;
}

// Replay (a standby, or crash recovery): raise this node's lease to the
// primary's, in memory and on disk, so that after promotion every id is
// greater than every id the primary issued under that lease.
void lease_redo(XLogReaderState* record) {
    if ((XLogRecGetInfo(record) & ~XLR_INFO_MASK) != kLeaseRecord)
        elog(PANIC, "snowflake: unknown WAL record %u", XLogRecGetInfo(record));
    const Lease lease = record_lease(record);
    SharedState* state = shared_state();
    if (state == nullptr || state->blocked != Blocked::No) return;
    if (lease.epoch_unix_ms != state->epoch_unix_ms) {
        state->blocked = Blocked::EpochChanged;
        state->lease_epoch_unix_ms = lease.epoch_unix_ms;
        return;
    }
    LWLockAcquire(lease_lock(), LW_EXCLUSIVE);
    if (lease.lease_ms > state->generator.lease_ms.load()) {
        write_lease(lease, LOG);
        raise_floor(state->generator, lease.lease_ms);
    }
    LWLockRelease(lease_lock());
}

void lease_desc(StringInfo buffer, XLogReaderState* record) {
    const Lease lease = record_lease(record);
    appendStringInfo(buffer, "epoch_unix_ms %lld lease_ms %llu",
                     static_cast<long long>(lease.epoch_unix_ms),
                     static_cast<unsigned long long>(lease.lease_ms));
}

const char* lease_identify(uint8 info) {
    return (info & ~XLR_INFO_MASK) == kLeaseRecord ? "LEASE" : nullptr;
}
#endif

// Extends the lease under the lock when it covers less than `needed_ms`.
bool extend_lease_to(SharedState& state, std::uint64_t needed_ms, std::uint64_t target_ms,
                     int elevel) {
    LWLockAcquire(lease_lock(), LW_EXCLUSIVE);
    bool ok = true;
    if (state.generator.lease_ms.load() < needed_ms) {
        const Lease lease{state.epoch_unix_ms, std::max(target_ms, needed_ms)};
        ok = write_lease(lease, elevel);
        if (ok) {
#if PG_VERSION_NUM >= 150000
            log_lease(lease);
#endif
            // Published only once durable: no id beyond the file's mark is issued.
            state.generator.lease_ms.store(lease.lease_ms, std::memory_order_release);
            state.generator.lease_extensions.fetch_add(1, std::memory_order_relaxed);
        }
    }
    LWLockRelease(lease_lock());
    return ok;
}

}  // namespace

void load_lease(SharedState& state) {
    Lease lease{};
    bool readable;
    const bool exists = read_lease(lease, readable);
    if (exists && !readable) {
        state.blocked = Blocked::LeaseUnreadable;
    } else if (exists && lease.epoch_unix_ms != state.epoch_unix_ms) {
        state.blocked = Blocked::EpochChanged;
        state.lease_epoch_unix_ms = lease.epoch_unix_ms;
    }
    init_state(state.generator, exists && readable, lease.lease_ms);
    const std::int64_t ahead_ms = state.epoch_unix_ms + static_cast<std::int64_t>(lease.lease_ms) -
                                  GetCurrentTimestamp() / 1000 - kUnixToPostgresMs;
    if (exists && readable && ahead_ms > 0)
        ereport(LOG, (errmsg("snowflake: ids continue after the lease high-water mark, "
                             "%lld ms ahead of the system clock",
                             static_cast<long long>(ahead_ms)),
                      errdetail("After a crash, or a restart with the clock set back, ids run "
                                "ahead of the clock until it catches up.")));
}

// At a clean shutdown, when every backend is gone, the lease shrinks to the
// last id issued, so that a restart continues from there and not a span later.
void shrink_lease_at_shutdown(int code, Datum) {
    SharedState* state = shared_state();
    if (code != 0 || state == nullptr || state->blocked != Blocked::No) return;
    const std::uint64_t last = state->generator.last_id.load();
    if (last == 0) return;
    write_lease(Lease{state->epoch_unix_ms, time_of(last)}, LOG);
}

void register_lease_wal() {
#if PG_VERSION_NUM >= 150000
    static RmgrData rmgr = {
        .rm_name = "snowflake",
        .rm_redo = lease_redo,
        .rm_desc = lease_desc,
        .rm_identify = lease_identify,
    };
    RegisterCustomRmgr(kRmgrId, &rmgr);
#endif
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

void extend_lease(SharedState& state, std::uint64_t needed_ms) {
    const Config config = generator_config(0);
    extend_lease_to(state, needed_ms, lease_target(state.generator, config), ERROR);
}

}  // namespace snowflake::pg

using namespace snowflake;
using namespace snowflake::pg;

// Sleeps until asked (by a backend whose lease runs low) or for a second,
// then extends the lease when lease_worker_target says so.
void snowflake_lease_worker_main(Datum) {
    pqsignal(SIGHUP, SignalHandlerForConfigReload);
    pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
    BackgroundWorkerUnblockSignals();
    SharedState& state = *shared_state();
    state.lease_worker_latch.store(MyLatch);
    while (!ShutdownRequestPending) {
        if (ConfigReloadPending) {
            ConfigReloadPending = false;
            ProcessConfigFile(PGC_SIGHUP);
        }
        const Config config = generator_config(0);
        const std::int64_t now_ms =
            GetCurrentTimestamp() / 1000 + kUnixToPostgresMs - config.epoch_unix_ms;
        const std::uint64_t target =
            state.blocked == Blocked::No && now_ms >= 0
                ? lease_worker_target(state.generator, config, static_cast<std::uint64_t>(now_ms))
                : 0;
        if (target != 0) extend_lease_to(state, target, target, LOG);
        (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 1000,
                        PG_WAIT_EXTENSION);
        ResetLatch(MyLatch);
    }
    state.lease_worker_latch.store(nullptr);
    proc_exit(0);
}
