// Worker ids claimed from a registry (snowflake.registry): a table on a
// PostgreSQL server grants each node a worker id with a window of id times
// that never overlaps another grant of it (registry.cpp).
#pragma once
#include "edge.hpp"

namespace snowflake::pg {

void register_registry_worker();
// Why the last call to the registry failed ("" after a success).
void registry_error(const SharedState::Registry& registry, char (&text)[256]);

}  // namespace snowflake::pg
