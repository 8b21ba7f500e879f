// The lease writer: a background worker that keeps the lease ahead of need,
// serves the backends that need it (they wait on a condition variable, so a
// stalled disk never holds them where cancel and statement_timeout cannot
// reach), and applies snowflake.worker_id changes to the whole node.
#pragma once
#include "edge.hpp"

namespace snowflake::pg {

// The error of a call the lease could not be extended for; its server log
// lines are throttled like the faults (install_log_throttle, from _PG_init).
#define SNOWFLAKE_LEASE_NOT_EXTENDED "could not extend the snowflake lease"
void install_log_throttle();
// Waits (interruptibly) until the durable lease covers `needed_units` (layout units).
void extend_lease(SharedState& shared, std::uint64_t needed_units);
// How long the lease writer has not turned, in ms (0: it turns, or none runs).
std::int64_t writer_stalled_ms(const SharedState& state);
void register_lease_worker();

}  // namespace snowflake::pg
