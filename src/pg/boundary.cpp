// The one boundary between PostgreSQL and C++ (SNOWFLAKE_CALLBACK, edge.hpp):
// an exception's message, reported once its catch is left. Needs no other
// file of src/pg.
#include "edge.hpp"

namespace snowflake::pg {

void raise_exception(int level, const char* what) {
    ereport(level, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("snowflake: %s", what)));
    pg_unreachable();
}

void log_exception(const char* what) {
    ereport(LOG, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("snowflake: %s", what)));
}

}  // namespace snowflake::pg
