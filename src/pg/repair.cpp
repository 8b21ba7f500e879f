// Repairing the lease (repair.hpp).
#include "repair.hpp"

#include "lease_file.hpp"
#include "lease_write.hpp"

extern "C" {
#include "catalog/pg_control.h"
#include "common/controldata_utils.h"
#include "miscadmin.h"
#include "utils/builtins.h"
}

#include <algorithm>

namespace snowflake::pg {
namespace {

// Holding the writer's place: the state checked and the lease replaced, so
// that a second repair, begun beside this one, finds nothing to repair instead
// of moving this one's new lease over the damaged file kept aside and writing
// a lower mark over it.
std::int64_t repair_holding(SharedState& state, std::int64_t above_unix_ms) {
    const Blocked blocked = state.blocked.load();
    if (blocked != Blocked::LeaseCorrupt && blocked != Blocked::LeaseUnreadable && blocked != Blocked::EpochChanged &&
        blocked != Blocked::LayoutChanged)
        ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                        errmsg("the snowflake lease needs no repair"),
                        errdetail("snowflake_repair_lease() repairs a damaged lease file, or starts a new id space "
                                  "after \"snowflake.epoch\" or \"snowflake.layout\" was changed on purpose.")));
    GeneratorState& generator = state.generator;
    // A lease that cannot be read cannot say which directory wrote it: this
    // one may be a copy. The worker id in effect is refused until the
    // operator gives another or adopts it (snowflake_adopt_worker_id()).
    const bool unknown = blocked == Blocked::LeaseCorrupt || blocked == Blocked::LeaseUnreadable ||
                         state.lease_elsewhere.load() || state.restore.load();
    if (unknown && worker_in_effect(generator) != kNoWorker) fence(generator, worker_in_effect(generator), true);
    if (state.lease_worker_id != kNoWorker && (state.lease_elsewhere.load() || state.restore.load()))
        fence(generator, state.lease_worker_id, true);
    const std::uint64_t clock = now_units(state);
    // ids continue above the clock, the last checkpoint's time and the lease
    // records replayed, each plus the most a lease ran ahead of its clock
    const std::uint64_t ahead = units_of(state, static_cast<std::uint64_t>(lease_span_setting + max_lead_setting));
    bool crc_ok = false;
    ControlFileData* control = get_controlfile(DataDir, &crc_ok);
    const std::int64_t checkpoint_ms = crc_ok ? static_cast<std::int64_t>(control->checkPointCopy.time) * 1000 : 0;
    pfree(control);
    std::uint64_t mark = std::max({clock, units_from(state, checkpoint_ms), generator.lease_units.load()}) + ahead;
    if (above_unix_ms > state.epoch_unix_ms) mark = std::max(mark, units_from(state, above_unix_ms));
    // the old file kept for a post-mortem, then the new lease and its fence's copy
    if (!rename_durably(kLeasePath, kDamagedLeasePath) && errno != ENOENT)
        ereport(ERROR, (errcode_for_file_access(),
                        errmsg("could not rename file \"%s\" to \"%s\": %m", kLeasePath, kDamagedLeasePath)));
    const Lease repaired = lease_of(state, mark, clock);
    if ((repaired.fenced_count > 0 && !write_fence_copy(repaired, WARNING)) || !write_lease(repaired, WARNING))
        ereport(ERROR, (errcode(ERRCODE_IO_ERROR), errmsg("could not write the snowflake lease file")));
    raise_floor(generator, state.layout, mark, clock);
    generator.lease_units.store(mark);
    state.lease_epoch_unix_ms = state.epoch_unix_ms;
    state.lease_layout = state.layout;
    state.blocked.store(Blocked::No);
    const std::int64_t from_unix_ms = state.epoch_unix_ms + static_cast<std::int64_t>(ms_of(state, mark));
    ereport(LOG, (errmsg("snowflake: the lease was repaired by snowflake_repair_lease(); ids continue after %s",
                         timestamptz_to_str(timestamptz_of_unix_ms(from_unix_ms))),
                  errdetail("The old lease file is kept as \"%s\"; the fence (%u worker ids) is kept.",
                            kDamagedLeasePath, repaired.fenced_count)));
    if (unknown && worker_in_effect(generator) != kNoWorker)
        ereport(NOTICE, (errmsg("worker id %u is refused", worker_in_effect(generator)),
                         errdetail("The damaged lease cannot tell whether this data directory is a copy."),
                         errhint("Set \"snowflake.worker_id\" to a number no other node uses, or, if this is the "
                                 "server that issued ids under it and no copy of it runs, run SELECT "
                                 "snowflake_adopt_worker_id().")));
    return from_unix_ms;
}

}  // namespace

std::int64_t repair_lease(SharedState& state, std::int64_t above_unix_ms) {
    if (!hold_writer(state))
        ereport(ERROR, (errcode(ERRCODE_ADMIN_SHUTDOWN), errmsg("the snowflake lease is not repaired"),
                        errdetail("The server is shutting down.")));
    volatile std::int64_t from_unix_ms = 0;
    PG_TRY();
    {
        from_unix_ms = repair_holding(state, above_unix_ms);
    }
    PG_FINALLY();
    {
        release_writer(state);
    }
    PG_END_TRY();
    return from_unix_ms;
}

}  // namespace snowflake::pg
