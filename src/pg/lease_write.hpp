// Writing the lease: one process at a time (writer_busy), the lease writer
// (lease_writer.hpp) or, while none runs, the backend that needs it; backends
// wait for it on a condition variable, so that a stalled disk never holds
// them where cancel and statement_timeout cannot reach.
#pragma once
#include "edge.hpp"

namespace snowflake::pg {

// The error of a call the lease could not be extended for; its server log
// lines are throttled like the faults (install_log_throttle, from _PG_init).
#define SNOWFLAKE_LEASE_NOT_EXTENDED "could not extend the snowflake lease"
// Whether a repeated fault is reported now (at most once a second); when it
// is, `unreported` is how many were not since the last report.
bool report_now(SharedState::Throttle& throttle, std::uint64_t& unreported);
// Extends the lease to `target` (layout units) unless another process is
// writing or it already reaches that far.
void write_lease_once(SharedState& state, std::uint64_t target);
// Takes the writer's place, waiting (interruptibly) for a write in progress;
// false when the process is asked to shut down. release_writer() gives it back
// and wakes every waiter; a process that exits holding it gives it back then.
bool hold_writer(SharedState& state);
void release_writer(SharedState& state);
// Writes the lease as it stands (its mark unchanged: the worker id in effect,
// the fence, the pending worker id), the fence's copy and its WAL record,
// waiting (interruptibly) for a write in progress; false when a write failed.
bool rewrite_lease(SharedState& state);
// rewrite_lease() with `pending` as the pending worker id, set once the
// writer's place is taken (a wait ended by cancel changes nothing); false,
// the pending worker id as it was, when the write failed.
bool rewrite_lease_pending(SharedState& state, std::uint32_t pending);
// Waits (interruptibly) until the durable lease covers `needed_units` (layout units).
void extend_lease(SharedState& shared, std::uint64_t needed_units);
// How long the lease writer has not turned, in ms (0: it turns, or none runs).
std::int64_t writer_stalled_ms(const SharedState& state);

}  // namespace snowflake::pg
