// The clone fence (fence.hpp).
#include "fence.hpp"

#include "lease_file.hpp"

extern "C" {
#include "access/xlogdefs.h"
#include "catalog/pg_control.h"
#include "common/controldata_utils.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/guc.h"
}

#include <sys/stat.h>

namespace snowflake::pg {
namespace {

bool is_set(const char* name) {
    const char* value = GetConfigOption(name, true, false);
    return value != nullptr && value[0] != '\0';
}

// Whether this server runs in standby mode: standby.signal and no recovery
// target. A standby restoring to a target (point-in-time recovery in standby
// mode, promoting itself when it gets there) is a restore (F4).
bool standby_mode() {
    struct stat st;
    if (stat("standby.signal", &st) != 0) return false;
    for (const char* target : {"recovery_target", "recovery_target_lsn", "recovery_target_name",
                               "recovery_target_time", "recovery_target_xid"})
        if (is_set(target)) return false;
    return true;
}

// A standby that follows its source: a server or an archive to stream from.
bool standby_following() {
    return standby_mode() && (is_set("primary_conninfo") || is_set("restore_command"));
}

// Whether this server runs as a standby whose promotion is failover: one that
// follows its source, or, with nothing to follow, one with a lease of its own
// (or its own under another host name: F13 decides then): the same server
// restarted read-only, as an HA manager starts a crashed leader when no leader
// is known. A copy with nothing to follow, which replays nothing but the WAL
// it was copied with, or a directory without a lease, is a restore (F14).
bool streaming_standby(const SharedState& state, bool lease_exists) {
    return standby_following() ||
           (standby_mode() && lease_exists && (!state.lease_elsewhere || state.moved_from.directory_host != 0));
}

// Whether this server restores: recovery from a base backup (backup_label,
// or pg_control still waiting for the backup's end once the startup process
// has renamed the label), archive recovery or recovery to a target, as other
// than a streaming standby. Asked in the postmaster, before the startup
// process renames backup_label and, at the end of recovery, removes the
// signal files.
bool restores(const SharedState& state, bool lease_exists) {
    if (streaming_standby(state, lease_exists)) return false;
    struct stat st;
    for (const char* file : {"backup_label", "recovery.signal", "standby.signal"})
        if (stat(file, &st) == 0) return true;
    bool crc_ok = false;
    ControlFileData* control = get_controlfile(DataDir, &crc_ok);
    const bool from_backup = crc_ok && (control->backupStartPoint != InvalidXLogRecPtr || control->backupEndRequired);
    pfree(control);
    return from_backup;
}

// Logs the worker ids the fence holds and why.
void log_fence(const SharedState& state, bool restore) {
    StringInfoData ids;
    initStringInfo(&ids);
    for (std::uint32_t w = 0; w <= state.layout.max_worker; ++w)
        if (is_fenced(state.generator, w)) appendStringInfo(&ids, "%s%u", ids.len > 0 ? ", " : "", w);
    ereport(LOG, (errmsg("snowflake: this data directory is a copy of another server's; ids under "
                         "worker id %s are refused",
                         ids.data),
                  restore ? errdetail("This server recovers from a base backup, from the WAL archive or to a "
                                      "recovery target, or is a standby with nothing to stream from "
                                      "(neither primary_conninfo nor restore_command is set): the lease it "
                                      "replays from the WAL is its source's.")
                          : errdetail("The lease file was written by another data directory (a base backup, "
                                      "a restore, a copy of a stopped server, a copy of a copy, or a clone "
                                      "of its volume given a new UUID; also this directory after its own "
                                      "volume was given one), and this server is not a streaming standby."),
                  errhint("Set \"snowflake.worker_id\" to a number no other node uses, or, if the "
                          "server it was copied from is gone for good, run SELECT "
                          "snowflake_adopt_worker_id().")));
}

// Kept in this directory's lease file at once, so that the fence outlives
// restarts: the lease, the fence, and the source's worker id (refused here
// whatever this server is configured with when it starts again).
// Its copy is kept beside it (kFencePath), so that the fence outlives a
// lease file that is removed or damaged.
bool keep_fence(SharedState& state, std::uint64_t lease_units, std::uint64_t clock_units, std::uint32_t source,
                bool fence_grew) {
    Lease kept = lease_of(state, lease_units, clock_units);
    kept.worker_id = source;
    if ((fence_grew && !write_fence_copy(kept, LOG)) || !write_lease(kept, LOG)) return false;
    state.lease_elsewhere = false;
    return true;
}

// The fence of a data directory that holds another directory's lease, or
// restores: every worker id the source used or refused, and the one it takes
// at its next reload (F15).
void fence_copy(SharedState& state, const Lease& copied, std::uint32_t configured) {
    GeneratorState& generator = state.generator;
    // Without a worker id in the lease (none ever issued an id, or no lease:
    // a backup taken before the first id), the one configured came with the
    // copy's settings.
    const std::uint32_t source = copied.worker_id != kNoWorker ? copied.worker_id : configured;
    if (source != kNoWorker) fence(generator, source, true);
    for (std::uint32_t i = 0; i < copied.fenced_count; ++i) fence(generator, copied.fenced[i], true);
    fence(generator, copied.pending_worker, true);  // (kNoWorker: nothing)
    if (source == kNoWorker && copied.fenced_count == 0 && copied.pending_worker == kNoWorker) return;
    log_fence(state, state.restore);
    (void)keep_fence(state, units_of(state, copied.lease_ms), units_of(state, copied.clock_ms), source, true);
}

// A lease written by this volume, directory and birth time under another
// host name (F13): the same directory moved (a container recreated, a pod
// rescheduled, a disk failed over) or a block clone of its volume on a host of
// another name. The worker id it names is refused at this start, the fence
// kept out of the files, which keep the lease's identity while that worker id
// is in effect (stamp): set to the name the lease records, snowflake.host_name
// lifts it; a worker id of its own, or an adoption, ends the move.
// A worker id the lease records as pending (F15) that this start takes is
// the one refused: the directory's next, or a clone's source's.
void fence_moved(SharedState& state, const Lease& lease, std::uint32_t configured) {
    const std::uint32_t source = lease.pending_worker != kNoWorker && lease.pending_worker == configured ? configured
                                 : lease.worker_id != kNoWorker                                         ? lease.worker_id
                                                                                                        : configured;
    if (source == kNoWorker) return;
    state.moved_fence = !is_fenced(state.generator, source);
    fence(state.generator, source, true);
    state.moved_worker = source;
    // A worker id of its own configured: a clone told apart by the operator
    // (or the directory renumbered): no advice to take its source's name.
    if (configured != kNoWorker && configured != source)
        ereport(LOG, (errmsg("snowflake: the host name changed from %s to %s; ids under worker id %u, which "
                             "its lease names, are refused, and this server uses worker id %u",
                             moved_from_name(state), moved_to_name(), source, configured),
                      errdetail("%s", kMovedDetail)));
    else
        ereport(LOG, (errmsg("snowflake: the host name changed from %s to %s; ids under worker id %u are "
                             "refused until the server is told which it is",
                             moved_from_name(state), moved_to_name(), source),
                      errdetail("%s", kMovedDetail), errhint(kMovedHint, source, moved_from_name(state))));
}

}  // namespace

const char* moved_from_name(const SharedState& state) {
    static char quoted[kHostNameMax + 3];
    if (state.moved_from.host_name[0] == '\0') return "a name its lease file does not record (written by 1.0)";
    snprintf(quoted, sizeof quoted, "\"%s\"", state.moved_from.host_name.data());
    return quoted;
}

const char* moved_to_name() {
    static char named[2 * kHostNameMax + 64];
    if (host_name_setting == nullptr || host_name_setting[0] == '\0')
        snprintf(named, sizeof named, "\"%s\" (this host's name)", kernel_host_name());
    else
        snprintf(named, sizeof named, "\"%s\" (snowflake.host_name, on a host named \"%s\")", host_name_setting,
                 kernel_host_name());
    return named;
}

void fence_if_copy(SharedState& state, const Lease& lease, bool exists) {
    if (registry_mode()) return;  // a registry's grants are never copied
    state.restore = restores(state, exists);
    if (state.blocked != Blocked::No) return;
    if (!state.restore && exists && state.lease_elsewhere && !standby_following() &&
        state.moved_from.directory_host != 0) {
        fence_moved(state, lease, configured_worker_id());
        return;
    }
    if (!state.restore && !(exists && state.lease_elsewhere && !standby_following())) return;
    fence_copy(state, exists ? lease : Lease{}, configured_worker_id());
    // A copy's crash recovery replays its source's lease records (a copy of a
    // running server whose lease file is older than its WAL): its source's.
    state.restore = true;
}

void fence_replayed(SharedState& state, const Lease& replayed) {
    GeneratorState& generator = state.generator;
    bool grew = false;
    const auto refuse = [&state, &generator, &grew](std::uint32_t worker_id) {
        if (worker_id > state.layout.max_worker || is_fenced(generator, worker_id)) return;
        fence(generator, worker_id, true);
        grew = true;
    };
    refuse(replayed.worker_id);
    refuse(replayed.pending_worker);  // (kNoWorker: nothing)
    for (std::uint32_t i = 0; i < std::min<std::uint32_t>(replayed.fenced_count, kMaxFenced); ++i)
        refuse(replayed.fenced[i]);
    const std::uint64_t lease_units = std::max(units_of(state, replayed.lease_ms), generator.lease_units.load());
    if (!grew && lease_units == generator.lease_units.load()) return;
    if (grew) log_fence(state, true);
    if (keep_fence(state, lease_units, units_of(state, replayed.clock_ms), replayed.worker_id, grew))
        generator.lease_units.store(lease_units);
}

}  // namespace snowflake::pg
