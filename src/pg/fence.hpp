// The clone fence: a data directory whose lease file another directory wrote
// (a base backup, a restore, a copy of a stopped server or of a copy), or
// that restores (recovery from a base backup, archive recovery, recovery to a
// target), started as other than a streaming standby, refuses every worker id
// its source used or refused, until it is given its own or adopts one.
#pragma once
#include "edge.hpp"

namespace snowflake::pg {

// At start-up in the postmaster, once the lease is read (`exists`: there is one):
// decides whether this server restores (SharedState::restore) and fences a
// copy (not under a registry, whose grants are never copied), logging it; the
// fence is kept in the lease file.
void fence_if_copy(SharedState& state, const Lease& lease, bool exists);
// Replay in a restore: the lease record is its source's. Its worker id and
// fence are refused, and kept in this directory's lease file with the mark.
void fence_replayed(SharedState& state, const Lease& replayed);
// What the refusal of a moved directory says (F13: fence_if_copy), and the
// host name its lease records, quoted (or what stands for it).
inline constexpr char kMovedDetail[] =
    "The volume, the data directory and its birth time are the ones the lease file was written in: this "
    "is the same data directory under a new host name (a container recreated, a pod rescheduled, a disk "
    "failed over to another host), or a block-level clone of its volume on a host of another name.";
inline constexpr char kMovedHint[] =
    "If it is a clone of the volume (a snapshot), set \"snowflake.worker_id\" to a number no other node "
    "uses. If it is the same data directory, and no other server issues ids under worker id %u (under %s or "
    "any other name: the server it was copied from may have been renamed since), either set "
    "\"snowflake.host_name\" to that name in postgresql.conf and restart, or keep the name it runs under "
    "and run SELECT snowflake_adopt_worker_id(), which records it: under a name that stays, new host names "
    "no longer stop it (docs/containers.md).";
const char* moved_from_name(const SharedState& state);
// The name it runs under now, quoted, and whose it is: the kernel's, or
// snowflake.host_name's, with the host's own name.
const char* moved_to_name();
}  // namespace snowflake::pg
