// pg_upgrade's marks: pg_snowflake/upgraded in the new data directory (its
// lease must be carried over from the old one before any id) and
// pg_snowflake/upgraded_away in the old one (it issues no id).
#pragma once
#include "edge.hpp"

namespace snowflake::pg {

inline constexpr char kCarryLeaseHint[] =
    "Stop the server, copy the file \"pg_snowflake/lease\" of the old data directory into "
    "this data directory's \"pg_snowflake\" directory, and start the server again. If the old "
    "data directory has no such file, it never issued an id: remove \"pg_snowflake/upgraded\" "
    "instead.";
inline constexpr char kUpgradedAwayHint[] =
    "Issue ids in the upgraded cluster. If the upgrade was abandoned and the upgraded cluster "
    "never issued an id, remove the file \"pg_snowflake/upgraded_away\" in this data directory "
    "and restart the server.";

// In pg_upgrade's new data directory (the library is loaded there while it
// runs: preloaded, or by its check of loadable libraries): marks it as
// upgraded, durably; FATAL when that fails. In its old one, when preloaded:
// marks it as upgraded away once pg_upgrade dumps its schema.
void mark_if_upgrading();
// At start-up, the lease read (`exists`): a data directory pg_upgrade made
// takes the old one's lease as its own, or issues nothing without it; the old
// data directory issues nothing.
void check_upgrade_marks(SharedState& state, const Lease& lease, bool exists);

}  // namespace snowflake::pg
