// The snowflake type's I/O and decoding: no shared memory needed.
#include "edge.hpp"

extern "C" {
#include "access/htup_details.h"
#include "funcapi.h"
#include "libpq/pqformat.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"
}

using namespace snowflake;
using namespace snowflake::pg;

std::uint64_t snowflake::pg::id_or_refuse(std::int64_t id) {
    if (id < 0)
        ereport(ERROR, (errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
                        errmsg("snowflake id must not be negative: %lld",
                               static_cast<long long>(id))));
    return static_cast<std::uint64_t>(id);
}

Datum snowflake::pg::fields_datum(FunctionCallInfo fcinfo, TimestampTz ts, std::uint32_t worker_id,
                                  std::uint32_t sequence) {
    TupleDesc descriptor;
    if (get_call_result_type(fcinfo, nullptr, &descriptor) != TYPEFUNC_COMPOSITE)
        elog(ERROR, "snowflake: return type must be a row type");
    descriptor = BlessTupleDesc(descriptor);
    Datum values[3] = {
        TimestampTzGetDatum(ts),
        Int32GetDatum(static_cast<std::int32_t>(worker_id)),
        Int32GetDatum(static_cast<std::int32_t>(sequence)),
    };
    bool nulls[3] = {};
    return HeapTupleGetDatum(heap_form_tuple(descriptor, values, nulls));
}

namespace {

// The type's text form (parse_snowflake: every int8, the type's domain).
std::int64_t value_of_text(const char* input) {
    std::int64_t value = 0;
    switch (parse_snowflake(input, value)) {
        case ParseResult::Ok:
            break;
        case ParseResult::Syntax:
            ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                            errmsg("invalid input syntax for type snowflake: \"%s\"", input),
                            errdetail("A snowflake is written as decimal digits, a negative one "
                                      "with a leading minus sign.")));
            break;
        case ParseResult::OutOfRange:
            ereport(ERROR, (errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
                            errmsg("value \"%s\" is out of range for type snowflake", input),
                            errdetail("A snowflake is from -9223372036854775808 to 9223372036854775807.")));
            break;
    }
    return value;
}

// The epoch a function is given, as ms since 1970: a finite whole millisecond
// from 1970-01-01 to 9999-12-31 UTC, as snowflake.epoch allows.
std::int64_t epoch_argument_unix_ms(TimestampTz epoch) {
    constexpr std::int64_t kFirst = -kUnixToPostgresMs;   // 1970-01-01, in ms since 2000
    constexpr std::int64_t kLast = 253402300799999 - kUnixToPostgresMs;  // 9999-12-31 23:59:59.999
    const char* why = nullptr;
    if (TIMESTAMP_NOT_FINITE(epoch))
        why = "An epoch is a finite timestamp.";
    else if (epoch % 1000 != 0)
        why = "The epoch is not a whole millisecond: ids count whole milliseconds from it.";
    else if (epoch / 1000 < kFirst || epoch / 1000 > kLast)
        why = "The epoch is out of range: it is from 1970-01-01 to 9999-12-31 UTC.";
    if (why != nullptr)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("invalid snowflake epoch: %s", timestamptz_to_str(epoch)), errdetail("%s", why)));
    return epoch / 1000 + kUnixToPostgresMs;
}

// The layout a function is given after the epoch: snowflake.layout's grammar
// (src/core/layouts), "sonyflake" with Sonyflake's epoch only.
Layout layout_argument(FunctionCallInfo fcinfo, int argument, std::int64_t epoch_ms) {
    const char* layout_text = text_to_cstring(PG_GETARG_TEXT_PP(argument));
    Layout layout = kDefaultLayout;
    const char* problem = "";
    if (!parse_node_layout(layout_text, epoch_ms, layout, problem))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("invalid snowflake layout \"%s\": %s", layout_text, problem),
                        errhint("A layout is written as for \"snowflake.layout\": default, js53, sonyflake_style, "
                                "or \"[unit=<n>ms] time=<bits> worker=<bits> sequence=<bits>\"; other systems' "
                                "ids decode with snowflake_decode_as.")));
    return layout;
}

// The forms given an epoch and no layout decode the default layout. On a node
// that generates another, they refuse rather than decode its ids wrongly.
const Layout& default_layout_or_refuse(const char* function, const char* first) {
    if (!(node_layout() == kDefaultLayout))
        ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                        errmsg("%s(%s, epoch) decodes the default layout, but \"snowflake.layout\" is \"%s\"",
                               function, first, layout_setting),
                        errdetail("This node's ids decoded in the default layout would give a wrong time, worker "
                                  "id and sequence."),
                        errhint("Name the layout after the epoch, as in %s(%s, epoch, '%s').", function, first,
                                layout_setting)));
    return kDefaultLayout;
}

// An id of the layout: one with bits above it (js53: 2^53 and up) is refused.
// The layout's time span is at most 2^52 ms (parse_node_layout), so any time
// it holds is a timestamp PostgreSQL can show.
TimestampTz timestamp_of(std::uint64_t id, std::int64_t epoch_ms, const Layout& layout) {
    const int bits = layout.time_bits + layout.time_shift;
    if (bits < 63 && (id >> bits) != 0)
        ereport(ERROR, (errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
                        errmsg("snowflake id %llu has bits above the %d bits of \"snowflake.layout\"",
                               static_cast<unsigned long long>(id), bits)));
    const auto ms = static_cast<std::int64_t>(time_of(id, layout)) * layout.unit_ms;
    return (epoch_ms + ms - kUnixToPostgresMs) * 1000;
}

Datum fields_of(FunctionCallInfo fcinfo, std::uint64_t id, std::int64_t epoch_ms, const Layout& layout) {
    const TimestampTz ts = timestamp_of(id, epoch_ms, layout);
    const Fields fields = decompose(id, layout);
    return fields_datum(fcinfo, ts, fields.worker_id, fields.sequence);
}

// The smallest id of the timestamp's time unit; epoch_text names the epoch in errors.
std::int64_t first_id_of(TimestampTz ts, std::int64_t epoch_ms, const char* epoch_text, const Layout& layout) {
    if (TIMESTAMP_NOT_FINITE(ts))
        ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                        errmsg("an infinite timestamp has no snowflake id")));
    // Floor to the millisecond, also for instants before 2000.
    const std::int64_t postgres_ms = ts / 1000 - (ts % 1000 < 0 ? 1 : 0);
    const std::int64_t time_ms = postgres_ms + kUnixToPostgresMs - epoch_ms;
    if (time_ms < 0)
        ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                        errmsg("timestamp %s is before %s", timestamptz_to_str(ts), epoch_text)));
    const auto time = static_cast<std::uint64_t>(time_ms / layout.unit_ms);
    if (time > layout.max_time)
        ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                        errmsg("timestamp %s is past the last snowflake %s of %s", timestamptz_to_str(ts),
                               layout.unit_ms == 1 ? "millisecond" : "time unit", epoch_text)));
    return static_cast<std::int64_t>(compose(time, 0, 0, layout));
}

}  // namespace

// The type's domain is every int8: what any path stores (a cast, a sentinel
// such as COALESCE(id, -1), COPY, replication) prints and reads back through
// text, binary and JSON. No id is negative: generation never makes one, and
// decoding refuses one (id_or_refuse).
SNOWFLAKE_FUNCTION(snowflake_in) {
    PG_RETURN_INT64(value_of_text(PG_GETARG_CSTRING(0)));
}

SNOWFLAKE_FUNCTION(snowflake_out) {
    char* output = static_cast<char*>(palloc(MAXINT8LEN + 1));
    pg_lltoa(PG_GETARG_INT64(0), output);
    PG_RETURN_CSTRING(output);
}

SNOWFLAKE_FUNCTION(snowflake_recv) {
    StringInfo buffer = reinterpret_cast<StringInfo>(PG_GETARG_POINTER(0));
    PG_RETURN_INT64(pq_getmsgint64(buffer));
}

// bigint -> snowflake: every bigint is a snowflake, as every smallint and
// integer is (those widen with int8's own functions).
SNOWFLAKE_FUNCTION(snowflake_from_bigint) {
    PG_RETURN_INT64(PG_GETARG_INT64(0));
}

// jsonb -> snowflake: a JSON string of the text form (as to_json gives it) or
// a JSON integer, read by the type's own input rules.
SNOWFLAKE_FUNCTION(snowflake_from_jsonb) {
    Jsonb* json = PG_GETARG_JSONB_P(0);
    JsonbValue* scalar = JB_ROOT_IS_SCALAR(json) ? getIthJsonbValueFromContainer(&json->root, 0)
                                                  : nullptr;
    const char* text = nullptr;
    if (scalar != nullptr && scalar->type == jbvString)
        text = pnstrdup(scalar->val.string.val, scalar->val.string.len);
    else if (scalar != nullptr && scalar->type == jbvNumeric)
        text = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(scalar->val.numeric)));
    else
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("cannot cast jsonb %s to type snowflake",
                               scalar != nullptr          ? JsonbTypeName(scalar)
                               : JB_ROOT_IS_OBJECT(json) ? "object"
                                                         : "array"),
                        errdetail("A snowflake is a JSON integer, or a JSON string of its decimal digits.")));
    PG_RETURN_INT64(value_of_text(text));
}

// The epoch and layout of the one-argument (STABLE) forms: snowflake.epoch
// and snowflake.layout, unless this node's ids were made under others (the
// lease says so), when they refuse as generation does. Without preloading
// there is no lease to compare with. The forms given an epoch take the
// layout too, or decode the default one where the node generates it.
static const Layout& decoding_settings(std::int64_t& epoch_ms) {
    const SharedState* state = shared_state();
    if (state != nullptr && (state->blocked == Blocked::EpochChanged || state->blocked == Blocked::LayoutChanged))
        refuse_changed_lease(*state, true);
    epoch_ms = epoch_unix_ms();
    return node_layout();
}

SNOWFLAKE_FUNCTION(snowflake_decode) {
    std::int64_t epoch_ms;
    const Layout& layout = decoding_settings(epoch_ms);
    PG_RETURN_DATUM(fields_of(fcinfo, id_or_refuse(PG_GETARG_INT64(0)), epoch_ms, layout));
}

SNOWFLAKE_FUNCTION(snowflake_decode_at) {
    const std::uint64_t id = id_or_refuse(PG_GETARG_INT64(0));
    const std::int64_t epoch_ms = epoch_argument_unix_ms(PG_GETARG_TIMESTAMPTZ(1));
    PG_RETURN_DATUM(fields_of(fcinfo, id, epoch_ms, default_layout_or_refuse("snowflake_decode", "id")));
}

SNOWFLAKE_FUNCTION(snowflake_decode_in) {
    const std::uint64_t id = id_or_refuse(PG_GETARG_INT64(0));
    const std::int64_t epoch_ms = epoch_argument_unix_ms(PG_GETARG_TIMESTAMPTZ(1));
    PG_RETURN_DATUM(fields_of(fcinfo, id, epoch_ms, layout_argument(fcinfo, 2, epoch_ms)));
}

SNOWFLAKE_FUNCTION(snowflake_to_timestamp) {
    std::int64_t epoch_ms;
    const Layout& layout = decoding_settings(epoch_ms);
    PG_RETURN_TIMESTAMPTZ(timestamp_of(id_or_refuse(PG_GETARG_INT64(0)), epoch_ms, layout));
}

SNOWFLAKE_FUNCTION(snowflake_to_timestamp_at) {
    const std::uint64_t id = id_or_refuse(PG_GETARG_INT64(0));
    const std::int64_t epoch_ms = epoch_argument_unix_ms(PG_GETARG_TIMESTAMPTZ(1));
    PG_RETURN_TIMESTAMPTZ(timestamp_of(id, epoch_ms, default_layout_or_refuse("snowflake_to_timestamp", "id")));
}

SNOWFLAKE_FUNCTION(snowflake_to_timestamp_in) {
    const std::uint64_t id = id_or_refuse(PG_GETARG_INT64(0));
    const std::int64_t epoch_ms = epoch_argument_unix_ms(PG_GETARG_TIMESTAMPTZ(1));
    PG_RETURN_TIMESTAMPTZ(timestamp_of(id, epoch_ms, layout_argument(fcinfo, 2, epoch_ms)));
}

SNOWFLAKE_FUNCTION(snowflake_from_timestamp) {
    const char* epoch_text = psprintf("snowflake.epoch \"%s\"", epoch_setting);
    std::int64_t epoch_ms;
    const Layout& layout = decoding_settings(epoch_ms);
    PG_RETURN_INT64(first_id_of(PG_GETARG_TIMESTAMPTZ(0), epoch_ms, epoch_text, layout));
}

SNOWFLAKE_FUNCTION(snowflake_from_timestamp_at) {
    const TimestampTz epoch = PG_GETARG_TIMESTAMPTZ(1);
    const std::int64_t epoch_ms = epoch_argument_unix_ms(epoch);
    const char* epoch_text = psprintf("the epoch %s", timestamptz_to_str(epoch));
    const Layout& layout = default_layout_or_refuse("snowflake_from_timestamp", "ts");
    PG_RETURN_INT64(first_id_of(PG_GETARG_TIMESTAMPTZ(0), epoch_ms, epoch_text, layout));
}

SNOWFLAKE_FUNCTION(snowflake_from_timestamp_in) {
    const TimestampTz epoch = PG_GETARG_TIMESTAMPTZ(1);
    const std::int64_t epoch_ms = epoch_argument_unix_ms(epoch);
    const char* epoch_text = psprintf("the epoch %s", timestamptz_to_str(epoch));
    const Layout layout = layout_argument(fcinfo, 2, epoch_ms);
    PG_RETURN_INT64(first_id_of(PG_GETARG_TIMESTAMPTZ(0), epoch_ms, epoch_text, layout));
}
