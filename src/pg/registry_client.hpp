// The registry's libpq client: one connection a process, kept between calls,
// each call bounded in time and never blocking a shutdown, and the
// incarnation it presents as this server's (the claims and renewals of
// registry.cpp and the releases of registry_release.cpp run over it).
#pragma once
#include "edge.hpp"

extern "C" {
#include "libpq-fe.h"
}

namespace snowflake::pg {

// This server's incarnation, the holder of its grants: 32 random hex digits
// made in the postmaster when it starts (from _PG_init), inherited by its
// children, kept in memory only: a copy of the data directory holds nothing
// that renews a grant; a crash restart of the same postmaster keeps it.
extern char incarnation[33];
void make_incarnation();

std::int64_t monotonic_ms();
// Runs one query with text parameters, within `timeout_ms`; its one row, or
// null with `error` set. The hosts of a multi-host snowflake.registry are
// tried one at a time, from the last that answered, each within an equal
// share of the time left: a host that is frozen or hangs a query costs the
// call its share, then the next host is tried (and tried first by the next
// call). A time-out or a broken connection drops the connection (the next
// call connects again): a call is never canceled, so a commit the registry
// waits to replicate synchronously is never acknowledged without it.
PGresult* registry_query(const char* sql, int count, const char* const* values, std::int64_t timeout_ms,
                         char (&error)[256]);
// A column of a query's one row, as an integer.
std::int64_t registry_value(const PGresult* result, int column);
void drop_registry_connection();

}  // namespace snowflake::pg
