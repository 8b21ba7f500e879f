// The core's failure statuses become ERRORs here, each saying what to do.
#include "edge.hpp"
#include "fence.hpp"
#include "registry.hpp"
#include "registry_settings.hpp"

extern "C" {
#include "utils/elog.h"
}

namespace snowflake::pg {
namespace {

// NoWorker or WindowEnded under a registry: an ERROR naming the registry and
// when it answered last.
[[noreturn]] void refuse_without_grant(const SharedState& state, Status status) {
    const SharedState::Registry& registry = state.registry;
    char error[256];
    registry_error(registry, error);
    const std::int64_t reached = registry.reached_ms.load();
    const char* when = reached == 0 ? "never since this server started"
                                    : psprintf("at %s", timestamptz_to_str(timestamptz_of_unix_ms(reached)));
    const char* detail = psprintf("The registry %s was last reached %s%s%s.", registry_name(), when,
                                  error[0] != '\0' ? "; since then: " : "", error);
    if (status == Status::WindowEnded)
        ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                        errmsg("the registry's window for snowflake worker id %u ended at %s",
                               worker_in_effect(state.generator),
                               timestamptz_to_str(timestamptz_of_unix_ms(registry.until_ms.load()))),
                        errdetail_internal("%s", detail),
                        errhint("Ids are issued again as soon as the registry renews the window; "
                                "snowflake_status shows registry_error.")));
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("snowflake has no worker id"),
                    errdetail("The registry has not granted a worker id to this server. %s", detail),
                    errhint("Ids are issued as soon as the registry grants a worker id; "
                            "snowflake_status shows registry_error.")));
}

}  // namespace

void refuse_call(Status status) {
    switch (status) {
        case Status::ClockBeforeEpoch:
            ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                            errmsg("the system clock reads earlier than \"snowflake.epoch\" (%s)",
                                   epoch_setting),
                            errhint("Check the system clock, or set \"snowflake.epoch\" to an earlier "
                                    "instant before any id is issued.")));
            break;
        case Status::TimeExhausted:
            ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                            errmsg("snowflake ids are exhausted"),
                            errdetail("The clock is past the end of the %d-bit time field of snowflake.layout "
                                      "\"%s\" from snowflake.epoch \"%s\".",
                                      node_layout().time_bits, layout_setting, epoch_setting)));
            break;
        case Status::NoWorker:
        case Status::WindowEnded:
            if (registry_mode()) refuse_without_grant(*shared_state(), status);
            if (status == Status::WindowEnded) break;  // only a registry's grant has a window
            ereport(ERROR,
                    (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                     errmsg("parameter \"snowflake.worker_id\" is not set"),
                     errhint("Add this line to postgresql.conf, with a number 0..%llu that no "
                             "other node uses, then run SELECT pg_reload_conf():\n"
                             "snowflake.worker_id = 1",
                             static_cast<unsigned long long>(node_layout().max_worker))));
            break;
        case Status::Fenced: {
            const SharedState& state = *shared_state();
            const std::uint32_t worker_id = worker_in_effect(state.generator);
            if (state.moved_worker.load() == worker_id)
                ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                                errmsg("this server's host name changed from %s to %s", moved_from_name(state),
                                       moved_to_name()),
                                errdetail("Ids under worker id %u are refused until this server is told which "
                                          "server it is. %s",
                                          worker_id, kMovedDetail),
                                errhint(kMovedHint, worker_id, moved_from_name(state))));
            ereport(ERROR,
                    (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                     errmsg("this server is a copy of another server and may not issue ids under "
                            "its worker id %u",
                            worker_id),
                     errdetail("The data directory was copied from a server that may still issue "
                               "ids under worker id %u (a base backup, a restore, a copy of a "
                               "stopped server or of a copy, started as other than a streaming "
                               "standby).",
                               worker_id),
                     errhint("Set \"snowflake.worker_id\" to a number no other node uses and run "
                             "SELECT pg_reload_conf(); or, if the server it was copied from is "
                             "gone for good, run SELECT snowflake_adopt_worker_id().")));
            break;
        }
        default:
            break;
    }
    elog(ERROR, "snowflake: unexpected generator status %d", static_cast<int>(status));
    pg_unreachable();
}

}  // namespace snowflake::pg
