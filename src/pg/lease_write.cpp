// Writing the lease (lease_write.hpp). One process writes at a time
// (writer_busy); only when no writer process runs does a backend write the
// lease itself.
#include "lease_write.hpp"

#include "lease_file.hpp"
#include "lease_wal.hpp"

extern "C" {
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
}

namespace snowflake::pg {
namespace {

// At this process's exit: a FATAL error or proc_exit() between taking the
// writer's place and releasing it (no PG_FINALLY runs for them) lets the next
// writer in all the same.
void release_writer_at_exit(int, Datum) {
    SharedState* state = shared_state();
    if (state != nullptr && state->writer_busy.load() == MyProcPid) release_writer(*state);
}

// Takes the writer's place if it is free.
bool take_writer(SharedState& state) {
    static bool registered = false;
    if (!registered) {
        before_shmem_exit(SNOWFLAKE_CALLBACK(release_writer_at_exit, FATAL), 0);
        registered = true;
    }
    std::int32_t idle = 0;
    return state.writer_busy.compare_exchange_strong(idle, MyProcPid);
}

// Holding writer_busy (taken by the caller): writes the lease with its mark
// at `target` (layout units), with `fence_copy` the
// fence's copy too, and its WAL record; releases writer_busy and wakes every
// waiter afterwards. True when written. A failed write is counted, so that the
// backends waiting for it give up with an error.
bool write_holding(SharedState& state, std::uint64_t target, bool fence_copy) {
    volatile bool written = false;
    PG_TRY();
    {
        GeneratorState& generator = state.generator;
        const Lease lease = lease_of(state, target, generator.clock_high.load());
        // A disk that fails fails every call: its reason is logged once a second.
        std::uint64_t unreported = 0;
        const std::int64_t now = unix_now_ms();
        const int elevel = now - state.write_failures.reported_ms.load() >= 1000 ? LOG : DEBUG1;
        const bool report = elevel == LOG;
        if (write_lease(lease, elevel) && (!fence_copy || write_fence_copy(lease, elevel))) {
            state.lease_elsewhere.store(false);  // this directory's lease now
            log_lease(lease);
            // Published only once durable: no id beyond the file's mark is
            // issued. (A rewrite at the mark never lowers one raised meanwhile.)
            if (generator.lease_units.load() < target) generator.lease_units.store(target, std::memory_order_release);
            generator.lease_extensions.fetch_add(1, std::memory_order_relaxed);
            written = true;
        } else {
            state.lease_failures.fetch_add(1);
            if (!report || !report_now(state.write_failures, unreported))
                state.write_failures.unreported.fetch_add(1);
            else if (unreported > 0)
                ereport(LOG, (errmsg("snowflake: %llu more failed lease writes were not logged",
                                     static_cast<unsigned long long>(unreported))));
        }
    }
    PG_FINALLY();
    {
        release_writer(state);
    }
    PG_END_TRY();
    return written;
}

}  // namespace

// Whether a repeated fault is reported now (at most once a second); when it
// is, `unreported` is how many were not since the last report.
bool report_now(SharedState::Throttle& throttle, std::uint64_t& unreported) {
    const std::int64_t now = unix_now_ms();
    std::int64_t last = throttle.reported_ms.load();
    if (now - last < 1000 || !throttle.reported_ms.compare_exchange_strong(last, now)) return false;
    unreported = throttle.unreported.exchange(0);
    return true;
}

// Extends the lease to `target` (layout units) unless another process is
// writing or it already reaches that far.
void write_lease_once(SharedState& state, std::uint64_t target) {
    if (!take_writer(state)) return;
    if (state.generator.lease_units.load() < target)
        (void)write_holding(state, target, false);
    else
        release_writer(state);
}

std::int64_t writer_stalled_ms(const SharedState& state) {
    const std::int64_t alive = state.writer_alive_ms.load();
    if (state.lease_writer_latch.load() == nullptr || alive == 0) return 0;
    const std::int64_t since = unix_now_ms() - alive;
    return since > 2000 ? since : 0;  // it turns at least once a second
}

void release_writer(SharedState& state) {
    state.writer_busy.store(0);
    ConditionVariableBroadcast(&state.lease_written);
}

bool hold_writer(SharedState& state) {
    ConditionVariablePrepareToSleep(&state.lease_written);
    while (!take_writer(state)) {
        if (ShutdownRequestPending) {
            ConditionVariableCancelSleep();
            return false;
        }
        (void)ConditionVariableTimedSleep(&state.lease_written, 100, PG_WAIT_EXTENSION);
    }
    ConditionVariableCancelSleep();
    return true;
}

bool rewrite_lease(SharedState& state) {
    return hold_writer(state) && write_holding(state, state.generator.lease_units.load(), true);
}

bool rewrite_lease_pending(SharedState& state, std::uint32_t pending) {
    if (!hold_writer(state)) return false;
    const std::uint32_t before = state.pending_worker.exchange(pending);
    if (write_holding(state, state.generator.lease_units.load(), true)) return true;
    state.pending_worker.store(before);
    return false;
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

}  // namespace snowflake::pg
