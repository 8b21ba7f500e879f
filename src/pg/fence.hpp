// The clone fence: a data directory whose lease file another directory wrote
// (a base backup, a restore, a copy of a stopped server or of a copy), started
// as other than a streaming standby, refuses every worker id that directory
// used or refused, until it is given its own or adopts one.
#pragma once
#include "edge.hpp"

namespace snowflake::pg {

// At start-up, after load_lease: fences a copy (not under a registry, whose
// grants are never copied), logging it; the fence is kept in the lease file.
void fence_if_copy(SharedState& state, const Lease& lease);
// Lifts the fence on the worker id in effect; returns it, or kNoWorker.
std::uint32_t adopt_worker_id(SharedState& state);

}  // namespace snowflake::pg
