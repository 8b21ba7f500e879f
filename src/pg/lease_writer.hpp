// The lease writer: a background worker that keeps the lease ahead of need,
// serves the backends that need it (lease_write.hpp), and applies
// snowflake.worker_id changes to the whole node.
#pragma once
#include "edge.hpp"

namespace snowflake::pg {

// Throttles the server log lines of calls the lease could not be extended
// for (from _PG_init).
void install_log_throttle();
void register_lease_worker();

}  // namespace snowflake::pg
