// The registry's settings (registry_settings.cpp): snowflake.registry, its
// window, renewal and clock bounds.
#pragma once
#include "edge.hpp"

namespace snowflake::pg {

// snowflake.registry and its times, from _PG_init before snowflake.worker_id.
void define_registry_settings(GucContext postmaster);
// The registry's conninfo without secrets (host, port, dbname, user).
const char* registry_name();

}  // namespace snowflake::pg
