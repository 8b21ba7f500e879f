// The data directory's identity: where a lease file was written (the host
// name, the volume's id and the directory's birth time, its inode), stamped on
// every lease this server writes and compared at start-up (startup.cpp, the
// fence's evidence: fence.hpp).
#pragma once
#include "edge.hpp"

namespace snowflake::pg {

// Whether a lease file was written by this data directory, by it under
// another host name (moved, or a block clone on a host of another name), or
// elsewhere (a copy).
enum class Writer { Here, OtherHostName, Elsewhere };
Writer writer_of(const Lease& lease);

// The lease as it is written (the file, the fence's copy, the WAL record):
// stamped with this data directory, or, moved, with its lease's identity and
// without the fence of this start (fence.hpp, F13).
Lease as_written(const Lease& lease);

}  // namespace snowflake::pg
