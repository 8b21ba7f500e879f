// The durable lease: a high-water mark in $PGDATA/pg_snowflake/lease that no
// issued id passes, kept ahead of need by a background worker (the lease
// writer), and written to the WAL so that a standby knows its primary's mark
// when it is promoted. The writer also applies snowflake.worker_id changes.
//
// One process writes at a time (writer_busy). Backends that need the lease
// ask the writer and wait on a condition variable, so that a stalled disk
// never holds them where cancel and statement_timeout cannot reach; only when
// no writer process runs does a backend write the lease itself.
#include "edge.hpp"

extern "C" {
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "access/xlog_internal.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

PGDLLEXPORT void snowflake_lease_worker_main(Datum argument);
}

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace snowflake::pg {
namespace {

constexpr char kLeaseDirectory[] = "pg_snowflake";
constexpr char kLeasePath[] = "pg_snowflake/lease";

enum class LeaseFile { Missing, Ok, Unreadable, Corrupt };

// Reads a lease file.
LeaseFile read_lease(const char* path, Lease& lease) {
    const int fd = open(path, O_RDONLY | PG_BINARY, 0);
    if (fd < 0) return errno == ENOENT ? LeaseFile::Missing : LeaseFile::Unreadable;
    char text[kLeaseTextMax];
    const ssize_t length = read(fd, text, sizeof text);
    close(fd);
    if (length <= 0) return LeaseFile::Unreadable;
    // The text, without the NULs that pad it to a block (see write_lease).
    switch (parse_lease(text, strnlen(text, static_cast<std::size_t>(length)), lease)) {
        case LeaseText::Ok:
            return LeaseFile::Ok;
        case LeaseText::BadChecksum:
            return LeaseFile::Corrupt;
        case LeaseText::Malformed:
            break;
    }
    return LeaseFile::Unreadable;
}

// Where this data directory is (the server runs in it): a hash of the host
// name and the directory's inode number. A copy made by any means (base
// backup, a copy of a stopped server, a copy of a copy) is another directory,
// on this host or another; the same directory keeps them across restarts,
// reboots and remounts.
void own_directory(std::uint64_t& host, std::uint64_t& inode) {
    char name[256] = {};
    (void)gethostname(name, sizeof name - 1);
    struct stat st;
    host = crc32c(name, strlen(name));
    inode = stat(".", &st) == 0 ? static_cast<std::uint64_t>(st.st_ino) : 0;
}

// The lease file is one block of kLeaseBlock bytes, the text then NULs, so
// that extending the lease overwrites it in place: one write inside one
// 512-byte sector, which PostgreSQL assumes atomic for pg_control, and one
// fdatasync. Replacing it by rename costs three fsyncs and two journal
// commits, which compete with the WAL flushes of concurrent commits (the
// README's Performance section has the pgbench pairs).
constexpr std::size_t kLeaseBlock = 512;
static_assert(kLeaseTextMax <= kLeaseBlock);

// Overwrites a lease file that is already a block; false, with nothing
// reported, when it is not (missing, or written by an earlier version), or
// when the write or its fdatasync fails: the caller then replaces the file.
bool overwrite_lease(const char* path, const char (&block)[kLeaseBlock]) {
    const int fd = OpenTransientFile(path, O_WRONLY | PG_BINARY);
    if (fd < 0) return false;
    struct stat st;
    const bool done = fstat(fd, &st) == 0 && st.st_size == static_cast<off_t>(kLeaseBlock) &&
                      pwrite(fd, block, kLeaseBlock, 0) == static_cast<ssize_t>(kLeaseBlock) &&
                      pg_fdatasync(fd) == 0;
    CloseTransientFile(fd);
    return done;
}

// Writes the lease durably: in place when the file is a block already,
// otherwise (or when that fails) a new file: temp file, fsync, rename, fsync
// of the directory (and of the data directory when pg_snowflake is new). A
// failure leaves the old file in place and is reported at `elevel`; the
// caller then publishes nothing, so no id is ever issued beyond a mark that
// is not on disk. A failed in-place write is never retried on that file: its
// fsync state is unknown, so a fresh temp file replaces it.
bool write_lease(const Lease& lease, int elevel, const char* path = kLeasePath) {
    char block[kLeaseBlock] = {};
    Lease stamped = lease;  // written by this data directory
    own_directory(stamped.directory_host, stamped.directory_inode);
    (void)format_lease(stamped, block);
    if (overwrite_lease(path, block)) return true;
    char temp_path[MAXPGPATH];
    snprintf(temp_path, sizeof temp_path, "%s.tmp", path);
    if (MakePGDirectory(kLeaseDirectory) == 0) {
        if (fsync_fname_ext(".", true, false, elevel) != 0) return false;
    } else if (errno != EEXIST) {
        ereport(elevel, (errcode_for_file_access(),
                         errmsg("could not create directory \"%s\": %m", kLeaseDirectory)));
        return false;
    }
    const int fd = OpenTransientFile(temp_path, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);
    if (fd < 0) {
        ereport(elevel, (errcode_for_file_access(),
                         errmsg("could not open file \"%s\": %m", temp_path)));
        return false;
    }
    errno = 0;
    if (write(fd, block, kLeaseBlock) != static_cast<ssize_t>(kLeaseBlock)) {
        if (errno == 0) errno = ENOSPC;
        CloseTransientFile(fd);
        ereport(elevel, (errcode_for_file_access(),
                         errmsg("could not write file \"%s\": %m", temp_path)));
        return false;
    }
    if (CloseTransientFile(fd) != 0) {
        ereport(elevel, (errcode_for_file_access(),
                         errmsg("could not close file \"%s\": %m", temp_path)));
        return false;
    }
    // durable_rename fsyncs the file, renames it and fsyncs the directory.
    return durable_rename(temp_path, path, elevel) == 0;
}

// The WAL record: the lease as the primary wrote it, as a LeaseRecord
// (src/core/text.hpp: versioned, no padding). RM_EXPERIMENTAL_ID until an
// id is reserved on the PostgreSQL wiki.
constexpr RmgrId kRmgrId = RM_EXPERIMENTAL_ID;
constexpr std::uint8_t kLeaseRecord = 0x00;

void log_lease(const Lease& lease) {
    LeaseRecord record = lease_record(lease);
    XLogBeginInsert();
    XLogRegisterData(reinterpret_cast<char*>(&record), sizeof record);
    // Not activity: an idle node's checkpoints are still skipped and
    // archive_timeout does not switch segments for it.
    XLogSetRecordFlags(XLOG_MARK_UNIMPORTANT);
    // Flushed so that it streams at once; a commit of any id issued under this
    // lease comes later in the WAL, so a synchronous standby has it first.
    XLogFlush(XLogInsert(kRmgrId, kLeaseRecord));
}

// The lease file and record count ms since the epoch; the generator, the
// layout's units (the same in 1 ms layouts).
std::uint64_t ms_of(const SharedState& state, std::uint64_t units) {
    return units * static_cast<std::uint64_t>(state.layout.unit_ms);
}
std::uint64_t units_of(const SharedState& state, std::uint64_t ms) {
    return ms / static_cast<std::uint64_t>(state.layout.unit_ms);
}

// A lease taken under another epoch or layout blocks generation (and the
// decoding forms that read the settings): true if so.
bool lease_changed(SharedState& state, const Lease& lease) {
    if (lease.epoch_unix_ms != state.epoch_unix_ms) {
        state.lease_epoch_unix_ms = lease.epoch_unix_ms;
        state.blocked = Blocked::EpochChanged;
    } else if (lease.layout != state.layout) {
        state.lease_layout = lease.layout;
        state.blocked = Blocked::LayoutChanged;
    }
    return state.blocked == Blocked::EpochChanged || state.blocked == Blocked::LayoutChanged;
}

// A record this version cannot read stops recovery: replaying past it could
// issue ids below the primary's.
Lease record_lease(XLogReaderState* record) {
    Lease lease{};
    if (!lease_of_record(XLogRecGetData(record), XLogRecGetDataLen(record), lease))
        elog(PANIC, "snowflake: a lease WAL record of %u bytes that this version cannot read",
             static_cast<unsigned>(XLogRecGetDataLen(record)));
    return lease;
}

// Replay (a standby, or crash recovery): raise this node's floor to the
// primary's lease, so that after promotion every id is greater than every id
// the primary issued under it. Only a mark written to this node's own file
// counts as its durable lease; without it the node extends its own before
// issuing anything above the floor. No other process writes during recovery.
void lease_redo(XLogReaderState* record) {
    if ((XLogRecGetInfo(record) & ~XLR_INFO_MASK) != kLeaseRecord)
        elog(PANIC, "snowflake: unknown WAL record %u", XLogRecGetInfo(record));
    const Lease lease = record_lease(record);
    SharedState* state = shared_state();
    if (state == nullptr || state->blocked != Blocked::No) return;
    if (lease_changed(*state, lease)) return;
    GeneratorState& generator = state->generator;
    const std::uint64_t lease_units = units_of(*state, lease.lease_ms);
    raise_floor(generator, state->layout, lease_units, units_of(*state, lease.clock_ms));
    // The primary's fence is this node's once promoted (under a registry, a
    // standby holds a worker id of its own and no fence applies).
    for (std::uint32_t i = 0; !registry_mode() && i < std::min<std::uint32_t>(lease.fenced_count, kMaxFenced); ++i)
        fence(generator, lease.fenced[i], true);
    if (lease_units > generator.lease_ms.load() && write_lease(lease, LOG))
        generator.lease_ms.store(lease_units);
}

void lease_desc(StringInfo buffer, XLogReaderState* record) {
    Lease lease{};
    if (!lease_of_record(XLogRecGetData(record), XLogRecGetDataLen(record), lease)) {
        appendStringInfo(buffer, "unreadable (%u bytes)", static_cast<unsigned>(XLogRecGetDataLen(record)));
        return;
    }
    char layout[kLayoutTextMax];
    format_node_layout(lease.layout, layout);
    appendStringInfo(buffer, "epoch_unix_ms %lld lease_ms %llu clock_ms %llu worker_id ",
                     static_cast<long long>(lease.epoch_unix_ms),
                     static_cast<unsigned long long>(lease.lease_ms),
                     static_cast<unsigned long long>(lease.clock_ms));
    if (lease.worker_id == kNoWorker)
        appendStringInfoString(buffer, "none");
    else
        appendStringInfo(buffer, "%u", lease.worker_id);
    appendStringInfo(buffer, " fenced %u layout %s", lease.fenced_count, layout);
}

const char* lease_identify(uint8 info) {
    return (info & ~XLR_INFO_MASK) == kLeaseRecord ? "LEASE" : nullptr;
}

// The lease to write: the mark, the clock reading, the worker id in effect
// and the fence (the worker ids this node may not use, so that it outlives
// restarts).
// The generator's times (lease, clock) are in the layout's units; the file's in ms.
Lease lease_of(const SharedState& state, std::uint64_t lease_units, std::uint64_t clock_units) {
    Lease lease{state.epoch_unix_ms, ms_of(state, lease_units), ms_of(state, clock_units),
                worker_in_effect(state.generator)};
    lease.layout = state.layout;
    for (std::uint32_t w = 0; w <= state.layout.max_worker && lease.fenced_count < kMaxFenced; ++w)
        if (is_fenced(state.generator, w)) lease.fenced[lease.fenced_count++] = w;
    return lease;
}

// The clock, in the layout's units since the epoch.
std::uint64_t now_units(const SharedState& state) {
    const std::int64_t ms = unix_now_ms() - state.epoch_unix_ms;
    return ms > 0 ? static_cast<std::uint64_t>(ms / state.layout.unit_ms) : 0;
}

// Extends the lease to `target_ms` unless another process is writing or it
// already reaches that far; wakes every waiter afterwards. A failed write is
// counted, so that the backends waiting for it give up with an error.
void write_lease_once(SharedState& state, std::uint64_t target) {
    std::uint32_t idle = 0;
    if (!state.writer_busy.compare_exchange_strong(idle, 1)) return;
    PG_TRY();
    {
        GeneratorState& generator = state.generator;
        if (generator.lease_ms.load() < target) {
            const Lease lease = lease_of(state, target, generator.clock_high.load());
            // A disk that fails fails every call: its reason is logged once a second.
            std::uint64_t unreported = 0;
            const std::int64_t now = unix_now_ms();
            const bool report = now - state.write_failures.reported_ms.load() >= 1000;
            if (write_lease(lease, report ? LOG : DEBUG1)) {
                state.lease_elsewhere.store(false);  // this directory's lease now
                log_lease(lease);
                // Published only once durable: no id beyond the file's mark is issued.
                generator.lease_ms.store(target, std::memory_order_release);
                generator.lease_extensions.fetch_add(1, std::memory_order_relaxed);
            } else {
                state.lease_failures.fetch_add(1);
                if (!report || !report_now(state.write_failures, unreported))
                    state.write_failures.unreported.fetch_add(1);
                else if (unreported > 0)
                    ereport(LOG, (errmsg("snowflake: %llu more failed lease writes were not logged",
                                         static_cast<unsigned long long>(unreported))));
            }
        }
    }
    PG_FINALLY();
    {
        state.writer_busy.store(0);
        ConditionVariableBroadcast(&state.lease_written);
    }
    PG_END_TRY();
}

// Applies the configured snowflake.worker_id to the whole node at once and
// logs the hand-over. One id is issued under the new worker id right away: a
// call still working with the old one then fails its compare-and-swap and
// starts over, so the id replaced is the last one ever issued under the old id.
void apply_worker_id(SharedState& state) {
    const std::uint32_t configured =
        worker_id_setting < 0 ? kNoWorker : static_cast<std::uint32_t>(worker_id_setting);
    GeneratorState& generator = state.generator;
    if (registry_mode() || worker_in_effect(generator) == configured) return;
    const std::uint32_t old = hand_over(generator, configured);
    if (old == kNoWorker) {
        ereport(LOG, (errmsg("snowflake: worker id %u in effect", configured)));
        return;
    }
    std::uint64_t last_old = generator.last_id.load();
    bool exact = false;
    if (configured != kNoWorker && state.blocked == Blocked::No && !RecoveryInProgress()) {
        const Config config = generator_config();
        for (int attempt = 0; attempt < 1000 && !exact; ++attempt) {
            const Reservation r = reserve(generator, config, 1, unix_now_ms);
            if (r.status == Status::NeedLease)
                write_lease_once(state, lease_target(generator, config, r.lease_needed_ms,
                                                     now_units(state)));
            else if (r.status != Status::Granted && r.status != Status::WaitForClock)
                break;
            // Granted: the first id under the new worker id has been issued,
            // by this call or another, and records what it replaced at once.
            exact = r.status == Status::Granted ? handed_over_last(generator, last_old) : false;
            if (!exact) pg_usleep(1000);
        }
    }
    // Every id under the old worker id is at or below this one; another node's
    // ids under it are above all of them once that node's clock is past its time.
    const std::uint64_t bound = std::max(last_old, generator.floor_id.load());
    const TimestampTz free_after = timestamptz_of_unix_ms(
        state.epoch_unix_ms + static_cast<std::int64_t>(ms_of(state, time_of(bound, state.layout))));
    ereport(LOG,
            (errmsg("snowflake: worker id changed from %u to %s for the whole node", old,
                    configured == kNoWorker ? "unset" : psprintf("%u", configured)),
             last_old == 0
                 ? errdetail("No id was issued under worker id %u since the server started.", old)
             : exact ? errdetail("The last id issued under worker id %u is %llu.", old,
                                 static_cast<unsigned long long>(last_old))
                     : errdetail("The last id issued under worker id %u is at most %llu.", old,
                                 static_cast<unsigned long long>(last_old)),
             errhint("Another node may take worker id %u once its clock reads later than %s.",
                     old, timestamptz_to_str(free_after))));
}

void forget_writer_latch(int, Datum) {
    SharedState* state = shared_state();
    Latch* mine = MyLatch;
    state->lease_writer_latch.compare_exchange_strong(mine, nullptr);
}

// Whether this server runs as a streaming standby, whose promotion is
// failover: standby.signal, and no recovery target. A standby restoring to a
// target (point-in-time recovery in standby mode, promoting itself when it
// gets there) is a restore.
bool streaming_standby() {
    struct stat st;
    if (stat("standby.signal", &st) != 0) return false;
    for (const char* target : {"recovery_target", "recovery_target_lsn", "recovery_target_name",
                               "recovery_target_time", "recovery_target_xid"}) {
        const char* value = GetConfigOption(target, true, false);
        if (value != nullptr && value[0] != '\0') return false;
    }
    return true;
}

// A lease file written before it recorded its directory: a base backup or a
// restore for point-in-time recovery started as a primary is a copy.
bool restored_copy_of_old_lease() {
    struct stat st;
    return stat("standby.signal", &st) != 0 &&
           (stat("backup_label", &st) == 0 || stat("recovery.signal", &st) == 0);
}

// The fence of a data directory that holds another directory's lease: every
// worker id that directory used or refused. Logged; kept by the next write.
void fence_copy(SharedState& state, const Lease& copied, std::uint32_t configured) {
    GeneratorState& generator = state.generator;
    // Without a worker id in the lease (none ever issued an id), the one
    // configured came with the copy's settings.
    const std::uint32_t source = copied.worker_id != kNoWorker ? copied.worker_id : configured;
    fence(generator, source, true);
    for (std::uint32_t i = 0; i < copied.fenced_count; ++i) fence(generator, copied.fenced[i], true);
    StringInfoData ids;
    initStringInfo(&ids);
    for (std::uint32_t w = 0; w <= state.layout.max_worker; ++w)
        if (is_fenced(generator, w)) appendStringInfo(&ids, "%s%u", ids.len > 0 ? ", " : "", w);
    if (ids.len == 0) return;
    ereport(LOG, (errmsg("snowflake: this data directory is a copy of another server's; ids under "
                         "worker id %s are refused",
                         ids.data),
                  errdetail("The lease file was written by another data directory (a base backup, "
                            "a restore, a copy of a stopped server, or a copy of a copy), and this "
                            "server is not a streaming standby."),
                  errhint("Set snowflake.worker_id to a number no other node uses, or, if the "
                          "server it was copied from is gone for good, run SELECT "
                          "snowflake_adopt_worker_id().")));
    // Kept at once (this directory's lease from now on): the fence outlives restarts.
    if (write_lease(lease_of(state, units_of(state, copied.lease_ms), units_of(state, copied.clock_ms)), LOG))
        state.lease_elsewhere = false;
}

}  // namespace

namespace {

emit_log_hook_type previous_emit_log_hook = nullptr;

// A failing disk fails every call that needs the lease, each with an ERROR
// to its client: the server log keeps one a second, with a count of the rest.
void throttle_call_errors(ErrorData* edata) {
    SharedState* state = shared_state();
    if (state != nullptr && edata->elevel == ERROR && edata->output_to_server &&
        edata->message_id != nullptr && strcmp(edata->message_id, SNOWFLAKE_LEASE_NOT_EXTENDED) == 0) {
        std::uint64_t unreported = 0;
        if (!report_now(state->call_failures, unreported)) {
            state->call_failures.unreported.fetch_add(1);
            edata->output_to_server = false;
        } else if (unreported > 0) {
            edata->detail_log = psprintf("%llu more calls failed the same way since the last one logged.",
                                         static_cast<unsigned long long>(unreported));
        }
    }
    if (previous_emit_log_hook != nullptr) previous_emit_log_hook(edata);
}

}  // namespace

void install_log_throttle() {
    previous_emit_log_hook = emit_log_hook;
    emit_log_hook = throttle_call_errors;
}

bool report_now(SharedState::Throttle& throttle, std::uint64_t& unreported) {
    const std::int64_t now = unix_now_ms();
    std::int64_t last = throttle.reported_ms.load();
    if (now - last < 1000 || !throttle.reported_ms.compare_exchange_strong(last, now)) return false;
    unreported = throttle.unreported.exchange(0);
    return true;
}

std::int64_t writer_stalled_ms(const SharedState& state) {
    const std::int64_t alive = state.writer_alive_ms.load();
    if (state.lease_writer_latch.load() == nullptr || alive == 0) return 0;
    const std::int64_t since = unix_now_ms() - alive;
    return since > 2000 ? since : 0;  // it turns at least once a second
}

void load_lease(SharedState& state) {
    Lease lease{};
    const LeaseFile file = read_lease(kLeasePath, lease);
    const bool exists = file == LeaseFile::Ok;
    if (file == LeaseFile::Unreadable) state.blocked = Blocked::LeaseUnreadable;
    if (file == LeaseFile::Corrupt) state.blocked = Blocked::LeaseCorrupt;
    if (exists) (void)lease_changed(state, lease);
    if (state.blocked == Blocked::LeaseUnreadable || state.blocked == Blocked::LeaseCorrupt)
        ereport(LOG, (errmsg("snowflake: the lease file \"%s\" %s; no id is issued", kLeasePath,
                             file == LeaseFile::Corrupt ? "is corrupt (its checksum does not match)"
                                                        : "could not be read")));
    const std::uint32_t worker_id =
        worker_id_setting < 0 ? kNoWorker : static_cast<std::uint32_t>(worker_id_setting);
    init_state(state.generator, state.layout, worker_id, exists, units_of(state, lease.lease_ms),
               units_of(state, lease.clock_ms));
    // Under a registry the worker id is granted, never copied: no fence, and
    // the worker id last held is the one to ask for again.
    if (exists && registry_mode()) state.registry.previous = lease.worker_id;
    for (std::uint32_t i = 0; exists && !registry_mode() && i < lease.fenced_count; ++i)
        fence(state.generator, lease.fenced[i], true);
    std::uint64_t host, inode;
    own_directory(host, inode);
    const bool recorded = lease.directory_host != 0 || lease.directory_inode != 0;
    state.lease_elsewhere = exists && recorded && (lease.directory_host != host || lease.directory_inode != inode);
    if (exists && state.blocked == Blocked::No && !registry_mode() &&
        (state.lease_elsewhere ? !streaming_standby() : !recorded && restored_copy_of_old_lease()))
        fence_copy(state, lease, worker_id);
    const std::int64_t ahead_ms =
        state.epoch_unix_ms + static_cast<std::int64_t>(lease.lease_ms) - unix_now_ms();
    if (exists && ahead_ms > 0)
        ereport(LOG, (errmsg("snowflake: ids continue after the lease high-water mark, "
                             "%lld ms ahead of the system clock",
                             static_cast<long long>(ahead_ms)),
                      errdetail("After a crash, or a restart with the clock set back, ids run "
                                "ahead of the clock until it catches up.")));
}

// Lifts the fence on the worker id in effect: the operator says the server it
// belonged to is gone. Kept in the lease file at once.
std::uint32_t adopt_worker_id(SharedState& state) {
    GeneratorState& generator = state.generator;
    const std::uint32_t adopted = worker_in_effect(generator);
    if (adopted == kNoWorker || !is_fenced(generator, adopted)) return kNoWorker;
    fence(generator, adopted, false);
    if (!write_lease(lease_of(state, generator.lease_ms.load(), generator.clock_high.load()), WARNING)) {
        fence(generator, adopted, true);
        ereport(ERROR, (errcode(ERRCODE_IO_ERROR), errmsg("could not write the snowflake lease file")));
    }
    ereport(LOG, (errmsg("snowflake: worker id %u adopted: this copy now issues ids under it", adopted),
                  errdetail("The server this data directory was copied from must never issue "
                            "ids under worker id %u again.",
                            adopted)));
    return adopted;
}

// At a clean shutdown, when every backend is gone, the lease shrinks to the
// last id issued, so that a restart continues from there and not a span later.
void shrink_lease_at_shutdown(int code, Datum) {
    SharedState* state = shared_state();
    if (code != 0 || state == nullptr || state->blocked != Blocked::No) return;
    const GeneratorState& generator = state->generator;
    const std::uint64_t last = generator.last_id.load();
    const std::uint64_t mark = std::max(last, generator.floor_id.load());
    // nothing issued since start: the lease stays the floor (but it records
    // the worker id a registry granted, the one asked for at the next start)
    if (last != 0 || state->registry.worker_id.load() != kNoWorker)
        write_lease(lease_of(*state, time_of(mark, state->layout), generator.clock_high.load()), LOG);
    // every id issued by this node is below the time unit after the mark's
    release_registry_grant(*state, mark == 0 ? 0
                                             : state->epoch_unix_ms +
                                                   static_cast<std::int64_t>(ms_of(*state, time_of(mark, state->layout) + 1)));
}

void register_lease_wal() {
    static RmgrData rmgr = {
        .rm_name = "snowflake",
        .rm_redo = lease_redo,
        .rm_desc = lease_desc,
        .rm_identify = lease_identify,
    };
    // Another extension on the same experimental id: say which, and what to do
    // (PostgreSQL's own error would not say the latter).
    if (RmgrIdExists(kRmgrId))
        ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                        errmsg("snowflake cannot register its WAL resource manager: id %d is taken by \"%s\"",
                               static_cast<int>(kRmgrId), GetRmgr(kRmgrId).rm_name),
                        errdetail("Both use RM_EXPERIMENTAL_ID, the id PostgreSQL lends to extensions "
                                  "whose own id is not registered yet."),
                        errhint("Load only one of them in shared_preload_libraries on this server "
                                "until one has a registered id.")));
    RegisterCustomRmgr(kRmgrId, &rmgr);
}

void register_lease_worker() {
    // never on a standby
    register_worker("snowflake_lease_worker_main", "snowflake lease worker", BgWorkerStart_RecoveryFinished);
}

void extend_lease(SharedState& state, std::uint64_t needed_ms) {
    GeneratorState& generator = state.generator;
    request_lease(generator, needed_ms);
    const std::uint64_t failures = state.lease_failures.load();
    ConditionVariablePrepareToSleep(&state.lease_written);
    while (generator.lease_ms.load(std::memory_order_acquire) < needed_ms) {
        if (state.lease_failures.load() != failures) {
            ConditionVariableCancelSleep();
            ereport(ERROR, (errcode(ERRCODE_IO_ERROR),
                            errmsg(SNOWFLAKE_LEASE_NOT_EXTENDED),
                            errdetail("Writing the file pg_snowflake/lease in the data directory "
                                      "failed; the server log says why."),
                            errhint("No id is issued beyond the lease on disk. Fix the cause "
                                    "and call again.")));
        }
        if (Latch* writer = state.lease_writer_latch.load()) {
            SetLatch(writer);
            std::uint64_t unreported = 0;
            if (const std::int64_t stalled = writer_stalled_ms(state);
                stalled > 0 && report_now(state.writer_stalls, unreported))
                ereport(WARNING,
                        (errmsg("snowflake: the lease writer (pid %d) has not answered for %lld ms",
                                state.writer_pid.load(), static_cast<long long>(stalled)),
                         errdetail("Calls that need the lease wait for it (cancel and "
                                   "statement_timeout end the wait); %llu such warnings were not "
                                   "logged since the last.",
                                   static_cast<unsigned long long>(unreported)),
                         errhint("A stopped (SIGSTOP) or stuck process, or a disk that does not "
                                 "answer: snowflake_status shows writer_stalled_ms.")));
        }
        else  // no lease writer runs (it is restarting): write it here
            write_lease_once(state, lease_target(generator, generator_config(), needed_ms,
                                                 now_units(state)));
        // Interruptible: cancel and statement_timeout end the wait.
        (void)ConditionVariableTimedSleep(&state.lease_written, 100, PG_WAIT_EXTENSION);
    }
    ConditionVariableCancelSleep();
}

}  // namespace snowflake::pg

using namespace snowflake;
using namespace snowflake::pg;

// Serves lease requests, keeps the lease ahead of the clock while the node is
// in use, and applies worker id changes; it exits with 1 on SIGTERM so that
// PostgreSQL starts it again (it does not at shutdown).
void snowflake_lease_worker_main(Datum) {
    pqsignal(SIGHUP, SignalHandlerForConfigReload);
    pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
    BackgroundWorkerUnblockSignals();
    SharedState& state = *shared_state();
    before_shmem_exit(forget_writer_latch, 0);
    state.writer_pid.store(MyProcPid);
    state.writer_alive_ms.store(unix_now_ms());
    state.lease_writer_latch.store(MyLatch);
    apply_worker_id(state);  // a change made while no writer ran
    while (!ShutdownRequestPending) {
        state.writer_alive_ms.store(unix_now_ms());
        // A promoted streaming standby whose lease file is still its source's:
        // it becomes this directory's, so that a restart is not taken for a copy.
        if (state.lease_elsewhere.load() && state.blocked == Blocked::No)
            write_lease_once(state, state.generator.lease_ms.load() + 1);
        if (ConfigReloadPending) {
            ConfigReloadPending = false;
            ProcessConfigFile(PGC_SIGHUP);
            apply_worker_id(state);
        }
        const Config config = generator_config();
        if (state.blocked == Blocked::No) {
            const std::uint64_t target =
                lease_writer_target(state.generator, config, now_units(state));
            if (target != 0) write_lease_once(state, target);
        }
        (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
                        static_cast<long>(std::clamp(lease_span_setting / 4, 10, 1000)),
                        PG_WAIT_EXTENSION);
        ResetLatch(MyLatch);
    }
    proc_exit(1);
}
