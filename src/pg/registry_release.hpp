// The release of this server's worker id to the registry: at a clean
// shutdown (the postmaster), or, when the registry could not take it then (it
// is on this server, which no longer accepts connections, or it did not
// answer), left in pg_snowflake/registry_release and made at the next start,
// before the claim (the registry worker), so that the worker id comes back. A
// copy of the stopped data directory carries the file too; the registry takes
// the release once, and the worker id's next window starts at or after
// `used_until_ms` either way.
#pragma once
#include "edge.hpp"

namespace snowflake::pg {

// At a clean shutdown: gives the worker id back, every id being below `used_until_ms`.
void release_registry_grant(SharedState& shared, std::int64_t used_until_ms);
// The release left by the last shutdown, if any: true once the registry
// answered it, or the file is damaged (it is then removed: the worker id's
// window ends on its own); false, with `error` set, when the registry did not answer.
bool make_pending_release(std::int64_t timeout_ms, char (&error)[256]);

}  // namespace snowflake::pg
