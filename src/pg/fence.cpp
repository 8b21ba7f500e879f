// The clone fence (fence.hpp).
#include "fence.hpp"

#include "lease_file.hpp"

extern "C" {
#include "lib/stringinfo.h"
#include "utils/guc.h"
}

#include <sys/stat.h>

namespace snowflake::pg {
namespace {

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
                  errhint("Set \"snowflake.worker_id\" to a number no other node uses, or, if the "
                          "server it was copied from is gone for good, run SELECT "
                          "snowflake_adopt_worker_id().")));
    // Kept at once (this directory's lease from now on): the fence outlives restarts.
    if (write_lease(lease_of(state, units_of(state, copied.lease_ms), units_of(state, copied.clock_ms)), LOG))
        state.lease_elsewhere = false;
}

}  // namespace

void fence_if_copy(SharedState& state, const Lease& lease) {
    if (state.blocked != Blocked::No || registry_mode() || !state.lease_elsewhere || streaming_standby()) return;
    fence_copy(state, lease, worker_id_setting < 0 ? kNoWorker : static_cast<std::uint32_t>(worker_id_setting));
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

}  // namespace snowflake::pg
