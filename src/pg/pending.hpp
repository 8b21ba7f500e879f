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
// The lease writer's poll: reads the settings' files and records the worker
// id they name.
void poll_pending_worker(SharedState& state);
// At a clean shutdown, a rename (F13R): snowflake.host_name given in the
// settings' files while the server ran under the name its lease records
// (its own lease, not a move's, the name the files' and not the command
// line's) set as the name the last lease is stamped with (renaming_to);
// true if so (logged once both files are written: shrink_lease_at_shutdown).
bool rename_at_shutdown(SharedState& state);
// The host name the settings' files give this server from its next start
// (snowflake.host_name's, or the kernel's when they give none), into `name`
// (kHostNameMax + 1 bytes); false when they cannot be read or give a name no
// lease can record.
bool name_in_files(char* name);

}  // namespace snowflake::pg
