// Ids beyond this extension's own: short text forms (base32, base62) and
// other systems' layouts. Thin wrappers over src/core/codec and layouts.
#include "../core/codec.hpp"
#include "../core/layout_names.hpp"
#include "edge.hpp"

extern "C" {
#include "utils/builtins.h"
}

using namespace snowflake;
using namespace snowflake::pg;

namespace {

struct TextForm {
    const char* name;
    std::size_t length;
    void (*encode)(std::uint64_t, char*) noexcept;
    ParseResult (*decode)(const char*, std::uint64_t&) noexcept;
    const char* syntax_detail;
    const char* range_detail;
};

constexpr TextForm kBase32{
    "base32", kBase32Length, to_base32, from_base32,
    "A base32 id is exactly 13 Crockford characters: 0-9 and A-Z without U, in any case; "
    "I and L read as 1, O as 0; no hyphens.",
    "A base32 id is at most 7ZZZZZZZZZZZZ (9223372036854775807)."};
constexpr TextForm kBase62{
    "base62", kBase62Length, to_base62, from_base62,
    "A base62 id is exactly 11 characters of 0-9, A-Z and a-z; case matters.",
    "A base62 id is at most AzL8n0Y58m7 (9223372036854775807)."};

Datum encode_id(FunctionCallInfo fcinfo, const TextForm& form) {
    char out[16];
    form.encode(id_or_refuse(PG_GETARG_INT64(0)), out);
    PG_RETURN_TEXT_P(cstring_to_text_with_len(out, static_cast<int>(form.length)));
}

Datum decode_id(FunctionCallInfo fcinfo, const TextForm& form) {
    const char* input = text_to_cstring(PG_GETARG_TEXT_PP(0));
    std::uint64_t id = 0;
    switch (form.decode(input, id)) {
        case ParseResult::Ok:
            break;
        case ParseResult::Syntax:
            ereport(ERROR, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
                            errmsg("invalid input syntax for a %s snowflake id: \"%s\"", form.name,
                                   input),
                            errdetail("%s", form.syntax_detail)));
            break;
        case ParseResult::OutOfRange:
            ereport(ERROR, (errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
                            errmsg("%s value \"%s\" is out of range for a snowflake id", form.name,
                                   input),
                            errdetail("%s", form.range_detail)));
            break;
    }
    PG_RETURN_INT64(static_cast<std::int64_t>(id));
}

IdLayout layout_argument(FunctionCallInfo fcinfo, int argument, const char*& name) {
    name = text_to_cstring(PG_GETARG_TEXT_PP(argument));
    IdLayout layout{};
    const char* problem = "";
    if (!parse_layout(name, layout, problem))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("invalid snowflake layout \"%s\": %s", name, problem),
                        errhint("Layouts are twitter, discord, instagram, sonyflake, pgedge, "
                                "mastodon, or custom, such as "
                                "'epoch=2024-01-01 unit=1ms time=41 worker=10 sequence=12'.")));
    return layout;
}

}  // namespace

SNOWFLAKE_FUNCTION(snowflake_to_base32) { return encode_id(fcinfo, kBase32); }
SNOWFLAKE_FUNCTION(snowflake_from_base32) { return decode_id(fcinfo, kBase32); }
SNOWFLAKE_FUNCTION(snowflake_to_base62) { return encode_id(fcinfo, kBase62); }
SNOWFLAKE_FUNCTION(snowflake_from_base62) { return decode_id(fcinfo, kBase62); }

SNOWFLAKE_FUNCTION(snowflake_decode_as) {
    const std::uint64_t id = id_or_refuse(PG_GETARG_INT64(0));
    const char* name;
    const IdLayout layout = layout_argument(fcinfo, 1, name);
    if (!layout_holds(layout, id))
        ereport(ERROR, (errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
                        errmsg("id %llu has bits above layout \"%s\"",
                               static_cast<unsigned long long>(id), name),
                        errdetail("The layout's fields take %d bits.",
                                  layout.time_bits + layout.worker_bits + layout.sequence_bits)));
    const LayoutFields fields = layout_decompose(layout, id);
    std::int64_t unix_ms = 0, postgres_us = 0;
    if (!layout_unix_ms(layout, fields.time, unix_ms) ||
        __builtin_mul_overflow(unix_ms - kUnixToPostgresMs, 1000, &postgres_us) ||
        !IS_VALID_TIMESTAMP(postgres_us))
        ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                        errmsg("the time of id %llu under layout \"%s\" is out of range for "
                               "type timestamp with time zone",
                               static_cast<unsigned long long>(id), name)));
    PG_RETURN_DATUM(fields_datum(fcinfo, postgres_us, fields.worker_id, fields.sequence));
}

SNOWFLAKE_FUNCTION(snowflake_from_timestamp_as) {
    const TimestampTz ts = PG_GETARG_TIMESTAMPTZ(0);
    const char* name;
    const IdLayout layout = layout_argument(fcinfo, 1, name);
    if (TIMESTAMP_NOT_FINITE(ts))
        ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                        errmsg("an infinite timestamp has no snowflake id")));
    // Floor to the millisecond, also for instants before 2000.
    const std::int64_t unix_ms = ts / 1000 - (ts % 1000 < 0 ? 1 : 0) + kUnixToPostgresMs;
    std::uint64_t id = 0;
    switch (layout_first_id(layout, unix_ms, id)) {
        case BoundResult::Ok:
            break;
        case BoundResult::BeforeEpoch:
            ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                            errmsg("timestamp %s is before the epoch of layout \"%s\"",
                                   timestamptz_to_str(ts), name)));
            break;
        case BoundResult::PastEnd:
            ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                            errmsg("timestamp %s is past the last id time of layout \"%s\"",
                                   timestamptz_to_str(ts), name)));
            break;
    }
    PG_RETURN_INT64(static_cast<std::int64_t>(id));
}
