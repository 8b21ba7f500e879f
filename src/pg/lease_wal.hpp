// The lease in the WAL: each extension of the lease is logged (a LeaseRecord,
// src/core/text.hpp), so that a standby knows its primary's mark when it is
// promoted, under a resource manager of its own.
#pragma once
#include "edge.hpp"

namespace snowflake::pg {

// Logs the lease and flushes it (a commit of any id under it comes later).
void log_lease(const Lease& lease);
// Logs an adoption and flushes it: `adopting` is the lease as the adoption
// wrote it, its worker id the one adopted, no longer in its fence. Its replay
// lifts that fence in crash recovery and on a standby; a restore refuses it.
void log_adoption(const Lease& adopting);
// From _PG_init: registers the resource manager, and 1.0's unless snowflake.replay_1_0_wal is off
// (ERROR when another library holds its id).
void register_lease_wal();

}  // namespace snowflake::pg
