// The start-up decision: in the postmaster, at shared memory start-up, before
// any other process runs, what this data directory is and may issue (the
// lease, a copy or a restore, pg_upgrade's marks).
#pragma once
#include "edge.hpp"

namespace snowflake::pg {

// Reads the lease, puts the generator in its start-up shape, and decides the
// fence (fence.hpp) and pg_upgrade's marks (upgrade.hpp), logging what it found.
void decide_at_start(SharedState& state);

}  // namespace snowflake::pg
