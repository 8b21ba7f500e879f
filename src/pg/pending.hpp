// A worker-id change waiting for its reload (rule F15 of test/model/fence):
// the worker id the settings' files name while another is in effect is
// recorded in the lease, its fence's copy and its WAL record, so that a copy
// of this data directory taken before the reload refuses it, as it refuses
// the worker id in effect. ALTER SYSTEM records it before it writes
// postgresql.auto.conf; an edit of the files by hand or by configuration
// management is recorded at the lease writer's next poll of the files (once a
// second, and at every reload).
#pragma once
#include "edge.hpp"

namespace snowflake::pg {

// From _PG_init, when preloaded: the ALTER SYSTEM hook.
void install_pending_hook();
// The lease writer's poll: reads the settings' files and records what they name.
void poll_pending_worker(SharedState& state);

}  // namespace snowflake::pg
