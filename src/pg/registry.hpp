// Worker ids claimed from a registry (snowflake.registry): a table on a
// PostgreSQL server grants each node a worker id with a window of id times
// that never overlaps another grant of it (registry.cpp).
#pragma once
#include "edge.hpp"

namespace snowflake::pg {

// snowflake.registry and its times, from _PG_init before snowflake.worker_id.
void define_registry_settings(GucContext postmaster);
void make_incarnation();  // in the postmaster, from _PG_init
void register_registry_worker();
// At a clean shutdown: gives the worker id back, every id being below `used_until_ms`.
void release_registry_grant(SharedState& shared, std::int64_t used_until_ms);
// NoWorker or WindowEnded under a registry: an ERROR naming the registry and when it answered last.
[[noreturn]] void refuse_without_grant(const SharedState& shared, Status status);
// Why the last call to the registry failed ("" after a success).
void registry_error(const SharedState::Registry& registry, char (&text)[256]);
// The registry's conninfo without secrets (host, port, dbname, user).
const char* registry_name();

}  // namespace snowflake::pg
