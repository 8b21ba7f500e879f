// An SQL function declared by hand, outside SNOWFLAKE_FUNCTION: an exception
// in its body would unwind through the executor.
#include "edge.hpp"

extern "C" {
PG_FUNCTION_INFO_V1(snowflake_id_span);
Datum snowflake_id_span(PG_FUNCTION_ARGS) {
    return Int64GetDatum(PG_GETARG_INT64(0) << 22);
}
}
