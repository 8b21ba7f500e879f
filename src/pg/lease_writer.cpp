// The lease writer (lease_writer.hpp): the background worker.
#include "lease_writer.hpp"

#include "lease_file.hpp"
#include "lease_write.hpp"
#include "pending.hpp"

extern "C" {
#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "utils/guc.h"

PGDLLEXPORT void snowflake_lease_worker_main(Datum argument);
}

namespace snowflake::pg {
namespace {

// Writes the worker id in effect into the lease file and the fence's copy at
// once (at start and when it changes), not at the first id: a copy of this
// directory made before its first id (a golden image, an early base backup),
// or whose lease file is then removed, carries a lease written elsewhere
// naming the worker id it must refuse.
void record_worker_id(SharedState& state) {
    if (state.blocked != Blocked::No || worker_in_effect(state.generator) == kNoWorker || RecoveryInProgress()) return;
    (void)rewrite_lease(state);
}

// Under a registry, the worker id granted is written into the lease file and
// the fence's copy as it takes effect, as a hand-set one is (record_worker_id):
// a copy made after the settings are switched to snowflake.worker_id (the source switch)
// reads it there, also from the fence's copy when its lease file is gone.
void record_grant(SharedState& state, std::uint32_t& recorded) {
    const std::uint32_t granted = worker_in_effect(state.generator);
    if (!registry_mode() || granted == kNoWorker || granted == recorded || state.blocked != Blocked::No ||
        RecoveryInProgress())
        return;
    if (rewrite_lease(state)) recorded = granted;
}

// Applies the configured snowflake.worker_id to the whole node at once and
// logs the hand-over. One id is issued under the new worker id right away: a
// call still working with the old one then fails its compare-and-swap and
// starts over, so the id replaced is the last one ever issued under the old id.
void apply_worker_id(SharedState& state) {
    const std::uint32_t configured = configured_worker_id();
    GeneratorState& generator = state.generator;
    if (registry_mode() || worker_in_effect(generator) == configured) return;
    const std::uint32_t old = hand_over(generator, configured);
    record_worker_id(state);
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
                write_lease_once(state, lease_target(generator, config, r.lease_needed_units,
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
    emit_log_hook = SNOWFLAKE_CALLBACK(throttle_call_errors, LOG);
}

void register_lease_worker() {
    // never on a standby
    register_worker("snowflake_lease_worker_main", "snowflake lease worker", BgWorkerStart_RecoveryFinished);
}

namespace {

// Serves lease requests, keeps the lease ahead of the clock while the node is
// in use, and applies worker id changes; at shutdown it exits with 0, on
// another process's SIGTERM with 1, so that PostgreSQL starts it again.
void lease_worker_main(Datum) {
    pqsignal(SIGHUP, SignalHandlerForConfigReload);
    install_worker_sigterm();
    BackgroundWorkerUnblockSignals();
    // a reload signalled before the handler was in place was discarded (a
    // background worker starts with SIGHUP ignored): read the files now
    ProcessConfigFile(PGC_SIGHUP);
    SharedState& state = *shared_state();
    before_shmem_exit(SNOWFLAKE_CALLBACK(forget_writer_latch, FATAL), 0);
    state.writer_pid.store(MyProcPid);
    state.writer_alive_ms.store(unix_now_ms());
    state.lease_writer_latch.store(MyLatch);
    apply_worker_id(state);  // a change made while no writer ran
    if (!registry_mode()) record_worker_id(state);
    std::int64_t polled_ms = 0;
    std::uint32_t grant_recorded = kNoWorker;
    while (!ShutdownRequestPending) {
        state.writer_alive_ms.store(unix_now_ms());
        record_grant(state, grant_recorded);
        // A promoted streaming standby whose lease file is still its source's:
        // it becomes this directory's, so that a restart is not taken for a copy.
        if (state.lease_elsewhere.load() && state.blocked == Blocked::No)
            write_lease_once(state, state.generator.lease_units.load() + 1);
        if (ConfigReloadPending) {
            ConfigReloadPending = false;
            ProcessConfigFile(PGC_SIGHUP);
            apply_worker_id(state);
            polled_ms = 0;
        }
        // a worker-id change waiting for a reload (pending.hpp)
        if (unix_now_ms() - polled_ms >= 1000) {
            poll_pending_worker(state);
            polled_ms = unix_now_ms();
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
    exit_worker();
}

}  // namespace
}  // namespace snowflake::pg

void snowflake_lease_worker_main(Datum argument) {
    SNOWFLAKE_CALLBACK(snowflake::pg::lease_worker_main, FATAL)(argument);
}
