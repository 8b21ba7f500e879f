// The lease file: $PGDATA/pg_snowflake/lease, a high-water mark no issued id
// passes (the text of src/core/text.hpp in one 512-byte block), read at
// start-up and written durably before ids under it are issued.
#pragma once
#include "datadir.hpp"
#include "edge.hpp"

namespace snowflake::pg {

// A lease file as read: missing, readable, or not (its checksum wrong: corrupt).
enum class LeaseFile { Missing, Ok, Unreadable, Corrupt };
LeaseFile read_lease(const char* path, Lease& lease);

// Writes the lease durably, stamped with this data directory (as_written); false, reported
// at `elevel`, when that fails (the old file stays in place).
bool write_lease(const Lease& lease, int elevel);

// Writes the lease as the fence's copy (kFencePath), durably; false, reported
// at `elevel`, when that fails.
bool write_fence_copy(const Lease& lease, int elevel);

// The lease to write: the mark and clock reading (units), the worker id in
// effect and the fence.
Lease lease_of(const SharedState& state, std::uint64_t lease_units, std::uint64_t clock_units);
// A lease taken under another epoch or layout blocks generation (and the
// decoding forms that read the settings): true if so.
bool lease_changed(SharedState& state, const Lease& lease);

// At the postmaster's exit (`code` 0: a clean shutdown), the lease shrinks to
// the last id issued; returns the time every id issued is below (ms since
// 1970; 0: none issued), or -1 when nothing is to be released.
// `renamed`: the lease, and the fence's copy, are written at once stamped with
// the name a rename gives (rename_at_shutdown, F13R), whatever was issued.
std::int64_t shrink_lease_at_shutdown(int code, bool renamed);

}  // namespace snowflake::pg
