// snowflake_repair_lease(): a new lease in place of a damaged one, or of one
// taken under another epoch or layout; the fence is kept (fence.hpp).
#pragma once
#include "edge.hpp"

namespace snowflake::pg {

// A new lease where the lease file is damaged, or snowflake.epoch or
// snowflake.layout was changed on purpose: ids continue after the clock plus
// the lease span and max_lead, or after `above_unix_ms` if later; the fence is
// kept, the old file moved aside (kDamagedLeasePath). Holds the writer's
// place, waiting (interruptibly) for a write or another repair in progress.
// Returns the new mark (ms since 1970); ERROR when nothing is to repair.
std::int64_t repair_lease(SharedState& state, std::int64_t above_unix_ms);

}  // namespace snowflake::pg
