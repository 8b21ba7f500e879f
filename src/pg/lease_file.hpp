// The lease file: $PGDATA/pg_snowflake/lease, a high-water mark no issued id
// passes (the text of src/core/text.hpp in one 512-byte block), read at
// start-up and written durably before ids under it are issued.
#pragma once
#include "datadir.hpp"
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

// Writes the lease durably, stamped with this data directory; false, reported
// at `elevel`, when that fails (the old file stays in place).
bool write_lease(const Lease& lease, int elevel);

// The lease as it is written (the file, the fence's copy, the WAL record):
// stamped with this data directory, or, moved, with its lease's identity and
// without the fence of this start (fence.hpp, F13).
Lease as_written(const Lease& lease);

// Writes the lease as the fence's copy (kFencePath), durably; false, reported
// at `elevel`, when that fails.
bool write_fence_copy(const Lease& lease, int elevel);

// The lease to write: the mark and clock reading (units), the worker id in
// effect and the fence.
Lease lease_of(const SharedState& state, std::uint64_t lease_units, std::uint64_t clock_units);
// A lease taken under another epoch or layout blocks generation (and the
// decoding forms that read the settings): true if so.
bool lease_changed(SharedState& state, const Lease& lease);

// At shared memory start-up: reads the lease file and puts the generator in
// its start-up shape; true, with `lease`, when there is a readable one.
bool load_lease(SharedState& state, Lease& lease);
// In pg_upgrade's new data directory (the library is loaded there while it
// runs: preloaded, or by its check of loadable libraries): marks it as
// upgraded, durably; FATAL when that fails. In its old one, when preloaded:
// marks it as upgraded away once pg_upgrade dumps its schema.
void mark_if_upgrading();

// At the postmaster's exit (`code` 0: a clean shutdown), the lease shrinks to
// the last id issued; returns the time every id issued is below (ms since
// 1970; 0: none issued), or -1 when nothing is to be released.
std::int64_t shrink_lease_at_shutdown(int code);

}  // namespace snowflake::pg
