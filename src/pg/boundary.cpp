// The one boundary between PostgreSQL and C++ (SNOWFLAKE_CALLBACK, edge.hpp):
// an exception's message, reported once its catch is left. Needs no other
// file of src/pg.
#include "edge.hpp"

namespace snowflake::pg {

void raise_exception(int level, const char* what) {
    ereport(level, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("snowflake: %s", what)));
    pg_unreachable();
}

void restore_error_stacks(sigjmp_buf* exception_stack, ErrorContextCallback* context_stack) {
    if (PG_exception_stack == exception_stack && error_context_stack == context_stack) return;
    PG_exception_stack = exception_stack;
    error_context_stack = context_stack;
    ereport(LOG, (errcode(ERRCODE_INTERNAL_ERROR),
                  errmsg("snowflake: a C++ exception left a PostgreSQL error block (PG_TRY) without its PG_CATCH"),
                  errdetail("The error stacks are restored as they were when PostgreSQL called snowflake.")));
}

void log_exception(const char* what) {
    ereport(LOG, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("snowflake: %s", what)));
}

}  // namespace snowflake::pg
