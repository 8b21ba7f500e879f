// A C++ function that throws inside a PG_TRY block, through snowflake's
// boundary (SNOWFLAKE_FUNCTION, src/pg/edge.hpp): its PG_CATCH never runs, so
// PG_exception_stack is left pointing into its dead frame until the boundary
// restores it (test/t/099_boundary.pl). Built against this server's headers
// with snowflake's src/pg/boundary.cpp.
#include "edge.hpp"

#include <stdexcept>

extern "C" {
PG_MODULE_MAGIC;
}

SNOWFLAKE_FUNCTION(boundary_probe_throw_in_try) {
    const bool throws = PG_GETARG_BOOL(0);
    PG_TRY();
    {
        if (throws) throw std::runtime_error("thrown inside PG_TRY");
    }
    PG_CATCH();
    {
        PG_RE_THROW();
    }
    PG_END_TRY();
    PG_RETURN_BOOL(true);
}
