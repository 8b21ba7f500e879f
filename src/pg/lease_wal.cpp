// The lease in the WAL (lease_wal.hpp).
#include "lease_wal.hpp"

#include "fence.hpp"
#include "identity.hpp"
#include "lease_file.hpp"

extern "C" {
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "access/xlogrecovery.h"
#include "access/xlog_internal.h"
}

namespace snowflake::pg {
namespace {

// The WAL record: the lease as the primary wrote it, as a LeaseRecord
// (src/core/text.hpp: versioned, no padding), under snowflake's own resource
// manager id (the PostgreSQL wiki's list of custom WAL resource managers:
// docs/development.md, Releasing). 1.0 wrote it under RM_EXPERIMENTAL_ID,
// which is still read unless snowflake.replay_1_0_wal is off.
constexpr RmgrId kRmgrId = 173;
constexpr RmgrId kRmgrId10 = RM_EXPERIMENTAL_ID;
// The record's kind, in the bits of xl_info PostgreSQL leaves to the
// resource manager. An adoption (snowflake_adopt_worker_id(), adopt.hpp) is
// a LeaseRecord of the lease as the adoption wrote it, its worker id the one
// adopted: its replay lifts the fence on that worker id, so that crash
// recovery and a standby of the adopting server keep the adoption. Added
// after 1.1, whose formats are frozen: the payload is 1.1's, the kind is new,
// and a 1.1 binary stops recovery at it (PANIC "snowflake: unknown WAL record
// 16"), never replaying it as a lease, which would fence what it lifts.
constexpr std::uint8_t kLeaseRecord = 0x00;
constexpr std::uint8_t kAdoptRecord = 0x10;

std::uint8_t kind_of(XLogReaderState* record) {
    return XLogRecGetInfo(record) & ~XLR_INFO_MASK;
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
// In a restore the lease is its source's: fenced (fence.hpp).
void lease_redo(XLogReaderState* record) {
    const std::uint8_t kind = kind_of(record);
    if (kind != kLeaseRecord && kind != kAdoptRecord)
        ereport(PANIC, (errmsg("snowflake: unknown WAL record %u", static_cast<unsigned>(kind)),
                        errhint("The WAL was written by a later version of snowflake: install it to replay it.")));
    const Lease lease = record_lease(record);
    SharedState* state = shared_state();
    if (state == nullptr) return;
    // A damaged lease file: the records still bound the ids issued, for
    // snowflake_repair_lease() (the file is not written: the repair does).
    if ((state->blocked == Blocked::LeaseCorrupt || state->blocked == Blocked::LeaseUnreadable) &&
        lease.epoch_unix_ms == state->epoch_unix_ms && lease.layout == state->layout) {
        const std::uint64_t units = units_of(*state, lease.lease_ms);
        if (units > state->generator.lease_units.load()) state->generator.lease_units.store(units);
        return;
    }
    if (state->blocked != Blocked::No) return;
    if (lease_changed(*state, lease)) return;
    GeneratorState& generator = state->generator;
    const std::uint64_t lease_units = units_of(*state, lease.lease_ms);
    raise_floor(generator, state->layout, lease_units, units_of(*state, lease.clock_ms));
    // In a restore an adoption is its source's: its worker id refused, as a lease's.
    if (state->restore) {
        fence_replayed(*state, lease);
        return;
    }
    // A standby's primary's adoption (its promotion continues it), or this
    // server's own in crash recovery: the fence on that worker id lifted. Own
    // means the fence decided at this start (the lease files', a copy's, a
    // move's) did not hold it (the adoption wrote the files, or a standby's
    // replay of it did): a copy or a block clone under another host name, or
    // a copy restarted before its first replay ended, whose fence holds its
    // source's worker id, never takes its source's adoption for its own.
    bool lifted = false;
    const std::uint32_t adopted = lease.worker_id;
    if (kind == kAdoptRecord && !registry_mode() && adopted <= kMaxAnyWorker && is_fenced(generator, adopted) &&
        (StandbyMode || (state->loaded_fence[adopted / 64] >> (adopted % 64) & 1) == 0)) {
        fence(generator, adopted, false);
        std::uint32_t moved = adopted;
        state->moved_worker.compare_exchange_strong(moved, kNoWorker);  // adopted: the move ends
        lifted = true;
    }
    // The primary's fence is this node's once promoted (under a registry, a
    // standby holds a worker id of its own and no fence applies). A fence in
    // force here is kept: the file is written with the fence held in memory
    // (crash recovery of a copy restarted after its first start replays its
    // source's records, which hold no fence).
    bool grew = false;
    for (std::uint32_t i = 0; !registry_mode() && i < std::min<std::uint32_t>(lease.fenced_count, kMaxFenced); ++i) {
        grew = grew || !is_fenced(generator, lease.fenced[i]);
        fence(generator, lease.fenced[i], true);
    }
    // The primary's pending worker id (F15) is written into this node's lease,
    // so that a copy of it refuses it too, also when it is all that changed.
    const bool pending_changed = state->pending_worker.exchange(lease.pending_worker) != lease.pending_worker;
    const std::uint64_t mark = std::max(lease_units, generator.lease_units.load());
    if (mark == generator.lease_units.load() && !grew && !lifted && !pending_changed) return;
    Lease kept = lease_of(*state, mark, units_of(*state, lease.clock_ms));
    // The record's worker id, or a move's of this start (fence.hpp, F13), so
    // that the move goes on: its files keep the lease's identity (as_written).
    const std::uint32_t moved = state->moved_worker.load();
    kept.worker_id = moved != kNoWorker ? moved : lease.worker_id;
    kept.pending_worker = lease.pending_worker != kept.worker_id ? lease.pending_worker : kNoWorker;
    if ((!(grew || lifted) || write_fence_copy(kept, LOG)) && write_lease(kept, LOG)) generator.lease_units.store(mark);
}

void lease_desc(StringInfo buffer, XLogReaderState* record) {
    Lease lease{};
    if (!lease_of_record(XLogRecGetData(record), XLogRecGetDataLen(record), lease)) {
        appendStringInfo(buffer, "unreadable (%u bytes)", static_cast<unsigned>(XLogRecGetDataLen(record)));
        return;
    }
    char layout[kLayoutTextMax];
    format_node_layout(lease.layout, layout);
    if (kind_of(record) == kAdoptRecord) appendStringInfo(buffer, "adopted %u; ", lease.worker_id);
    appendStringInfo(buffer, "epoch_unix_ms %lld lease_ms %llu clock_ms %llu worker_id ",
                     static_cast<long long>(lease.epoch_unix_ms),
                     static_cast<unsigned long long>(lease.lease_ms),
                     static_cast<unsigned long long>(lease.clock_ms));
    if (lease.worker_id == kNoWorker)
        appendStringInfoString(buffer, "none");
    else
        appendStringInfo(buffer, "%u", lease.worker_id);
    appendStringInfo(buffer, " fenced %u layout %s", lease.fenced_count, layout);
    if (lease.pending_worker != kNoWorker) appendStringInfo(buffer, " pending %u", lease.pending_worker);
}

const char* lease_identify(uint8 info) {
    switch (info & ~XLR_INFO_MASK) {
        case kLeaseRecord: return "LEASE";
        case kAdoptRecord: return "ADOPT";
        default: return nullptr;
    }
}

// Flushed so that it streams at once; a commit of any id issued under this
// lease comes later in the WAL, so a synchronous standby has it first.
void insert_flushed(const Lease& lease, std::uint8_t kind) {
    LeaseRecord record = lease_record(as_written(lease));
    XLogBeginInsert();
    XLogRegisterData(reinterpret_cast<char*>(&record), static_cast<int>(record_size(record)));
    // A lease is not activity: an idle node's checkpoints are still skipped
    // and archive_timeout does not switch segments for it. An adoption is.
    if (kind == kLeaseRecord) XLogSetRecordFlags(XLOG_MARK_UNIMPORTANT);
    XLogFlush(XLogInsert(kRmgrId, kind));
}

}  // namespace

void log_lease(const Lease& lease) {
    insert_flushed(lease, kLeaseRecord);
}

void log_adoption(const Lease& adopting) {
    insert_flushed(adopting, kAdoptRecord);
}

void register_lease_wal() {
    static RmgrData rmgr = {
        .rm_name = "snowflake",
        .rm_redo = SNOWFLAKE_CALLBACK(lease_redo, PANIC),
        .rm_desc = SNOWFLAKE_CALLBACK(lease_desc, ERROR),
        .rm_identify = SNOWFLAKE_CALLBACK(lease_identify, ERROR),
    };
    // 1.0's records: the same, under the id PostgreSQL lends (a name of its own:
    // names are unique too). Another library on that id would take them for
    // its own and drop them, and a standby would then issue ids below its
    // primary's: refused unless the operator says no such WAL is to be replayed.
    static RmgrData rmgr10 = rmgr;
    rmgr10.rm_name = "snowflake 1.0";
    RegisterCustomRmgr(kRmgrId, &rmgr);
    if (!replay_1_0_wal_setting) return;
    if (RmgrIdExists(kRmgrId10))
        ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                        errmsg("snowflake cannot register the resource manager of its version 1.0's WAL"),
                        errdetail("Version 1.0 logged its lease under RM_EXPERIMENTAL_ID (%d), the id PostgreSQL lends "
                                  "to extensions in development, which \"%s\" holds; later versions log it under "
                                  "id %d.",
                                  static_cast<int>(kRmgrId10), GetRmgr(kRmgrId10).rm_name, static_cast<int>(kRmgrId)),
                        errhint("Once no server replays WAL written before the upgrade from 1.0 (standbys, backups "
                                "and archives restored), set \"snowflake.replay_1_0_wal\" to off.")));
    RegisterCustomRmgr(kRmgrId10, &rmgr10);
}

}  // namespace snowflake::pg
