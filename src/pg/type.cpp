// The snowflake type's I/O and decoding: no shared memory needed.
#include "edge.hpp"

extern "C" {
#include "access/htup_details.h"
#include "funcapi.h"
#include "libpq/pqformat.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
}

using namespace snowflake;
using namespace snowflake::pg;

namespace {

std::uint64_t id_or_refuse(std::int64_t id) {
    if (id < 0)
        ereport(ERROR, (errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
                        errmsg("snowflake id must not be negative: %lld",
                               static_cast<long long>(id))));
    return static_cast<std::uint64_t>(id);
}

TimestampTz timestamp_of(std::uint64_t id) {
    return (epoch_unix_ms() + static_cast<std::int64_t>(time_of(id)) - kUnixToPostgresMs) * 1000;
}

}  // namespace

SNOWFLAKE_FUNCTION(snowflake_in) {
    const char* input = PG_GETARG_CSTRING(0);
    std::uint64_t id;
    switch (parse_id(input, id)) {
        case ParseResult::Ok:
            break;
        case ParseResult::Syntax:
            ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                            errmsg("invalid input syntax for type snowflake: \"%s\"", input),
                            errdetail("A snowflake is written as decimal digits only.")));
            break;
        case ParseResult::OutOfRange:
            ereport(ERROR, (errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
                            errmsg("value \"%s\" is out of range for type snowflake", input),
                            errdetail("A snowflake is at most 9223372036854775807.")));
            break;
    }
    PG_RETURN_INT64(static_cast<std::int64_t>(id));
}

SNOWFLAKE_FUNCTION(snowflake_out) {
    char* output = static_cast<char*>(palloc(MAXINT8LEN + 1));
    pg_lltoa(PG_GETARG_INT64(0), output);
    PG_RETURN_CSTRING(output);
}

SNOWFLAKE_FUNCTION(snowflake_recv) {
    StringInfo buffer = reinterpret_cast<StringInfo>(PG_GETARG_POINTER(0));
    PG_RETURN_INT64(static_cast<std::int64_t>(id_or_refuse(pq_getmsgint64(buffer))));
}

// bigint -> snowflake: every non-negative bigint is a snowflake.
SNOWFLAKE_FUNCTION(snowflake_from_bigint) {
    PG_RETURN_INT64(static_cast<std::int64_t>(id_or_refuse(PG_GETARG_INT64(0))));
}

SNOWFLAKE_FUNCTION(snowflake_from_integer) {
    PG_RETURN_INT64(static_cast<std::int64_t>(id_or_refuse(PG_GETARG_INT32(0))));
}

SNOWFLAKE_FUNCTION(snowflake_decode) {
    const Fields fields = decompose(id_or_refuse(PG_GETARG_INT64(0)));
    TupleDesc descriptor;
    if (get_call_result_type(fcinfo, nullptr, &descriptor) != TYPEFUNC_COMPOSITE)
        elog(ERROR, "snowflake_decode: return type must be a row type");
    descriptor = BlessTupleDesc(descriptor);
    Datum values[3] = {
        TimestampTzGetDatum(timestamp_of(PG_GETARG_INT64(0))),
        Int32GetDatum(static_cast<std::int32_t>(fields.worker_id)),
        Int32GetDatum(static_cast<std::int32_t>(fields.sequence)),
    };
    bool nulls[3] = {};
    PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(descriptor, values, nulls)));
}

SNOWFLAKE_FUNCTION(snowflake_to_timestamp) {
    PG_RETURN_TIMESTAMPTZ(timestamp_of(id_or_refuse(PG_GETARG_INT64(0))));
}

// The smallest id of the timestamp's millisecond.
SNOWFLAKE_FUNCTION(snowflake_from_timestamp) {
    const TimestampTz ts = PG_GETARG_TIMESTAMPTZ(0);
    if (TIMESTAMP_NOT_FINITE(ts))
        ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                        errmsg("an infinite timestamp has no snowflake id")));
    // Floor to the millisecond, also for instants before 2000.
    const std::int64_t postgres_ms = ts / 1000 - (ts % 1000 < 0 ? 1 : 0);
    const std::int64_t time_ms = postgres_ms + kUnixToPostgresMs - epoch_unix_ms();
    if (time_ms < 0)
        ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                        errmsg("timestamp %s is before snowflake.epoch \"%s\"",
                               timestamptz_to_str(ts), epoch_setting)));
    if (static_cast<std::uint64_t>(time_ms) > kMaxTime)
        ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                        errmsg("timestamp %s is past the last snowflake millisecond of "
                               "snowflake.epoch \"%s\"",
                               timestamptz_to_str(ts), epoch_setting)));
    PG_RETURN_INT64(static_cast<std::int64_t>(compose(static_cast<std::uint64_t>(time_ms), 0, 0)));
}
