// Adopting a fenced worker id (adopt.hpp).
#include "adopt.hpp"

#include "lease_file.hpp"
#include "lease_wal.hpp"
#include "lease_write.hpp"

#include <algorithm>

namespace snowflake::pg {

// Lifts the fence on the worker id in effect: the operator says the server it
// belonged to is gone. Holding the writer's place, the lease (its mark after
// `after_unix_ms`, the worker id no longer in its fence) is written first and
// the floor raised, and only then is the worker id let through: no id is
// issued under it below the mark, and no other write of the lease can land
// between with a lower one. The adoption is logged once the files are
// written (lease_wal.hpp), so that crash recovery before the next checkpoint,
// and a standby of this server once promoted, keep it.
std::uint32_t adopt_worker_id(SharedState& state, std::int64_t after_unix_ms) {
    GeneratorState& generator = state.generator;
    const std::uint32_t adopted = worker_in_effect(generator);
    if (adopted == kNoWorker || !is_fenced(generator, adopted)) return kNoWorker;
    const std::uint64_t now = now_units(state), seen = generator.clock_high.load();
    if (after_unix_ms == 0 && now < seen) {
        const std::int64_t seen_unix_ms = state.epoch_unix_ms + static_cast<std::int64_t>(ms_of(state, seen));
        ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                        errmsg("worker id %u is not adopted", adopted),
                        errdetail("This server's clock is %lld ms behind the latest clock reading its lease "
                                  "records (%s). Ids its source issued after this data directory was copied may "
                                  "be ahead of this clock: adopted, they would be issued again.",
                                  static_cast<long long>(ms_of(state, seen - now)),
                                  timestamptz_to_str(timestamptz_of_unix_ms(seen_unix_ms))),
                        errhint("Set the clock right, or give the time after which the source issued no id (its "
                                "server stopped for good): SELECT snowflake_adopt_worker_id(after => '...').")));
    }
    if (!hold_writer(state))
        ereport(ERROR, (errcode(ERRCODE_ADMIN_SHUTDOWN), errmsg("worker id %u is not adopted", adopted),
                        errdetail("The server is shutting down.")));
    const std::uint32_t moved = state.moved_worker.load();
    volatile bool written = false;
    PG_TRY();
    {
        std::uint64_t mark = generator.lease_units.load();
        // (the source's ids ran at most snowflake.max_lead ahead of its clock)
        if (after_unix_ms != 0) mark = std::max(mark, units_from(state, after_unix_ms + max_lead_setting));
        state.moved_worker.store(kNoWorker);  // adopted under this host name: the move ends
        Lease adopting = lease_of(state, mark, std::max(now, seen));
        const auto end = std::remove(adopting.fenced.begin(), adopting.fenced.begin() + adopting.fenced_count, adopted);
        adopting.fenced_count = static_cast<std::uint32_t>(end - adopting.fenced.begin());
        std::fill(end, adopting.fenced.end(), 0u);
        written = write_lease(adopting, WARNING) && write_fence_copy(adopting, WARNING);
        if (written) {
            log_adoption(adopting);
            // ids continue after the time given, once it is on disk
            if (mark > generator.lease_units.load()) {
                raise_floor(generator, state.layout, mark, now);
                generator.lease_units.store(mark);
            }
            fence(generator, adopted, false);
        } else {
            state.moved_worker.store(moved);
        }
    }
    PG_FINALLY();
    {
        release_writer(state);
    }
    PG_END_TRY();
    if (!written) ereport(ERROR, (errcode(ERRCODE_IO_ERROR), errmsg("could not write the snowflake lease file")));
    ereport(LOG, (errmsg("snowflake: worker id %u adopted: this copy now issues ids under it", adopted),
                  errdetail("The server this data directory was copied from must never issue "
                            "ids under worker id %u again.",
                            adopted)));
    return adopted;
}

}  // namespace snowflake::pg
