// What the registry's SQL functions need from C: the transaction that writes
// a row of its tables, and a clock no one sets. Every write of the settings
// row and of a worker id's row records its writer (written_xid), and
// snowflake_registry_life() compares it with the row's xmin: a row written by
// anything else (a data-only restore, COPY, pg_restore --clean) makes a new
// life (test/model/RULES.md, R1). A grace lasts its length by the monotonic
// clock too, whatever steps the wall clock takes (R2).
#include "edge.hpp"

extern "C" {
#include "access/xact.h"
}

#include <time.h>

namespace snowflake::pg {

// The current (sub)transaction's id, assigned if it has none: the xmin of a
// row this statement writes, also inside a savepoint.
SNOWFLAKE_FUNCTION(snowflake_registry_writer) {
    (void)fcinfo;
    return TransactionIdGetDatum(GetCurrentTransactionId());
}

// CLOCK_MONOTONIC in ms: the time since this machine started, never set.
SNOWFLAKE_FUNCTION(snowflake_registry_monotonic_ms) {
    (void)fcinfo;
    timespec now{};
    (void)clock_gettime(CLOCK_MONOTONIC, &now);
    return Int64GetDatum(static_cast<std::int64_t>(now.tv_sec) * 1000 + now.tv_nsec / 1000000);
}

}  // namespace snowflake::pg
