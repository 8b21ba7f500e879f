// The start-up decision (startup.hpp): what the lease files, pg_upgrade's
// marks and the recovery settings say this data directory is, decided once in
// the postmaster before any other process runs.
#include "startup.hpp"

#include "fence.hpp"
#include "identity.hpp"
#include "lease_file.hpp"
#include "pending.hpp"
#include "upgrade.hpp"

namespace snowflake::pg {
namespace {

// Whether the host name this server runs under is the one its settings'
// files give (not the command line's), decided at the postmaster's first
// start and kept across re-initialisations: only then is a change of the
// files, given while it runs, a rename at its clean shutdown (F13R).
void decide_names_from_files(SharedState& state) {
    static int from_files = -1;  // (the postmaster's: kept across re-initialisations)
    char files[kHostNameMax + 1];
    if (from_files < 0) from_files = name_in_files(files) && std::strcmp(files, server_host_name()) == 0;
    state.names_from_files = from_files == 1;
}

// Reads the lease file (or the fence's copy standing in for it) and puts the
// generator in its start-up shape; true, with `lease`, when there is a
// readable one.
bool load_lease(SharedState& state, Lease& lease) {
    LeaseFile file = read_lease(kLeasePath, lease);
    // The fence's copy: its fence is kept whatever became of the lease file,
    // and it stands in for a lease file that was removed.
    Lease kept{};
    const LeaseFile fence_file = read_lease(kFencePath, kept);
    const char* damaged = file == LeaseFile::Unreadable || file == LeaseFile::Corrupt ? kLeasePath : kFencePath;
    if (file == LeaseFile::Missing && fence_file == LeaseFile::Ok) {
        lease = kept;
        file = LeaseFile::Ok;
        ereport(LOG, (errmsg("snowflake: the lease file \"%s\" is missing; the copy kept with the fence, "
                             "\"%s\", stands in for it", kLeasePath, kFencePath)));
    } else if (fence_file == LeaseFile::Unreadable || fence_file == LeaseFile::Corrupt) {
        if (file == LeaseFile::Missing) file = fence_file;  // the fence is in neither
        else ereport(LOG, (errmsg("snowflake: the fence's copy \"%s\" is damaged and ignored; the lease file "
                                  "holds the fence", kFencePath)));
    }
    const bool exists = file == LeaseFile::Ok;
    if (file == LeaseFile::Unreadable) state.blocked = Blocked::LeaseUnreadable;
    if (file == LeaseFile::Corrupt) state.blocked = Blocked::LeaseCorrupt;
    if (exists) (void)lease_changed(state, lease);
    if (state.blocked == Blocked::LeaseUnreadable || state.blocked == Blocked::LeaseCorrupt)
        ereport(LOG, (errmsg("snowflake: the lease file \"%s\" %s; no id is issued", damaged,
                             file == LeaseFile::Corrupt ? "is corrupt (its checksum does not match)"
                                                        : "could not be read"),
                      errhint("Run SELECT snowflake_repair_lease().")));
    init_state(state.generator, state.layout, configured_worker_id(), exists, units_of(state, lease.lease_ms),
               units_of(state, lease.clock_ms));
    // Under a registry the worker id is granted, never copied: no fence.
    for (std::uint32_t i = 0; exists && !registry_mode() && i < lease.fenced_count; ++i)
        fence(state.generator, lease.fenced[i], true);
    for (std::uint32_t i = 0; fence_file == LeaseFile::Ok && !registry_mode() && i < kept.fenced_count; ++i)
        fence(state.generator, kept.fenced[i], true);
    decide_names_from_files(state);
    const Writer writer = exists ? writer_of(lease) : Writer::Here;
    state.lease_elsewhere = writer != Writer::Here;
    state.moved_worker = kNoWorker;
    if (writer == Writer::OtherHostName) state.moved_from = lease;  // fence_if_copy decides
    if (exists) state.lease_worker_id = lease.worker_id;
    check_upgrade_marks(state, lease, exists);
    const std::int64_t ahead_ms =
        state.epoch_unix_ms + static_cast<std::int64_t>(lease.lease_ms) - unix_now_ms();
    if (exists && ahead_ms > 0)
        ereport(LOG, (errmsg("snowflake: ids continue after the lease high-water mark, "
                             "%lld ms ahead of the system clock",
                             static_cast<long long>(ahead_ms)),
                      errdetail("After a crash, or a restart with the clock set back, ids run "
                                "ahead of the clock until it catches up.")));
    return exists;
}

}  // namespace

void decide_at_start(SharedState& state) {
    Lease lease{};
    const bool exists = load_lease(state, lease);
    fence_if_copy(state, lease, exists);
    for (std::size_t i = 0; i < std::size(state.loaded_fence); ++i)
        state.loaded_fence[i] = state.generator.fenced[i].load();
    // under a registry, the worker id last held is the one to ask for again
    if (exists && registry_mode()) state.registry.previous = lease.worker_id;
}

}  // namespace snowflake::pg
