// The lease writer (lease_writer.hpp). One process writes at a time
// (writer_busy); only when no writer process runs does a backend write the
// lease itself.
#include "lease_writer.hpp"

#include "lease_file.hpp"
#include "lease_wal.hpp"

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

// Whether a repeated fault is reported now (at most once a second); when it
// is, `unreported` is how many were not since the last report.
bool report_now(SharedState::Throttle& throttle, std::uint64_t& unreported) {
    const std::int64_t now = unix_now_ms();
    std::int64_t last = throttle.reported_ms.load();
    if (now - last < 1000 || !throttle.reported_ms.compare_exchange_strong(last, now)) return false;
    unreported = throttle.unreported.exchange(0);
    return true;
}

// Extends the lease to `target` (layout units) unless another process is writing or it
// already reaches that far (`rewrite`: writes it also when it does, to record
// the worker id in effect); wakes every waiter afterwards. A failed write is
// counted, so that the backends waiting for it give up with an error.
void write_lease_once(SharedState& state, std::uint64_t target, bool rewrite = false) {
    std::uint32_t idle = 0;
    if (!state.writer_busy.compare_exchange_strong(idle, 1)) return;
    PG_TRY();
    {
        GeneratorState& generator = state.generator;
        if (generator.lease_units.load() < target || (rewrite && generator.lease_units.load() == target)) {
            const Lease lease = lease_of(state, target, generator.clock_high.load());
            // A disk that fails fails every call: its reason is logged once a second.
            std::uint64_t unreported = 0;
            const std::int64_t now = unix_now_ms();
            const bool report = now - state.write_failures.reported_ms.load() >= 1000;
            if (write_lease(lease, report ? LOG : DEBUG1)) {
                state.lease_elsewhere.store(false);  // this directory's lease now
                log_lease(lease);
                // Published only once durable: no id beyond the file's mark is issued.
                generator.lease_units.store(target, std::memory_order_release);
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

// Writes the worker id in effect into the lease file and the fence's copy at
// once (at start and when it changes), not at the first id: a copy of this
// directory made before its first id (a golden image, an early base backup),
// or whose lease file is then removed, carries a lease written elsewhere
// naming the worker id it must refuse.
void record_worker_id(SharedState& state) {
    GeneratorState& generator = state.generator;
    if (state.blocked != Blocked::No || worker_in_effect(generator) == kNoWorker || RecoveryInProgress()) return;
    write_lease_once(state, generator.lease_units.load(), true);
    (void)write_fence_copy(lease_of(state, generator.lease_units.load(), generator.clock_high.load()), LOG);
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
    emit_log_hook = SNOWFLAKE_CALLBACK(throttle_call_errors, FATAL);
}

std::int64_t writer_stalled_ms(const SharedState& state) {
    const std::int64_t alive = state.writer_alive_ms.load();
    if (state.lease_writer_latch.load() == nullptr || alive == 0) return 0;
    const std::int64_t since = unix_now_ms() - alive;
    return since > 2000 ? since : 0;  // it turns at least once a second
}

void register_lease_worker() {
    // never on a standby
    register_worker("snowflake_lease_worker_main", "snowflake lease worker", BgWorkerStart_RecoveryFinished);
}

void extend_lease(SharedState& state, std::uint64_t needed_units) {
    GeneratorState& generator = state.generator;
    request_lease(generator, needed_units);
    const std::uint64_t failures = state.lease_failures.load();
    ConditionVariablePrepareToSleep(&state.lease_written);
    while (generator.lease_units.load(std::memory_order_acquire) < needed_units) {
        if (state.lease_failures.load() != failures) {
            ConditionVariableCancelSleep();
            ereport(ERROR, (errcode(ERRCODE_IO_ERROR),
                            errmsg(SNOWFLAKE_LEASE_NOT_EXTENDED),
                            errdetail("Writing the file \"pg_snowflake/lease\" in the data directory "
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
            write_lease_once(state, lease_target(generator, generator_config(), needed_units,
                                                 now_units(state)));
        // Interruptible: cancel and statement_timeout end the wait.
        (void)ConditionVariableTimedSleep(&state.lease_written, 100, PG_WAIT_EXTENSION);
    }
    ConditionVariableCancelSleep();
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
    while (!ShutdownRequestPending) {
        state.writer_alive_ms.store(unix_now_ms());
        // A promoted streaming standby whose lease file is still its source's:
        // it becomes this directory's, so that a restart is not taken for a copy.
        if (state.lease_elsewhere.load() && state.blocked == Blocked::No)
            write_lease_once(state, state.generator.lease_units.load() + 1);
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
    exit_worker();
}

}  // namespace
}  // namespace snowflake::pg

void snowflake_lease_worker_main(Datum argument) {
    SNOWFLAKE_CALLBACK(snowflake::pg::lease_worker_main, FATAL)(argument);
}
