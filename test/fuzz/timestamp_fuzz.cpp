// parse_timestamp (the snowflake.epoch setting): an accepted text is a time from
// 1970 to 9999 (its offset may move it up to 15:59 past the end of 9999), and the
// time written back in UTC, in each spelling of UTC, parses to the same value.
#include "fuzz.hpp"

namespace {

constexpr std::int64_t kEndOf9999Ms = 253402300800000;  // 10000-01-01 00:00:00 UTC
constexpr std::int64_t kMaxOffsetMs = (15 * 60 + 59) * 60000;

// ms since 1970 (>= 0) as 'YYYY-MM-DD<separator>HH:MM:SS.fff<zone>' (H. Hinnant's civil_from_days).
void format_utc(std::int64_t unix_ms, const char* separator, const char* zone, char* out, std::size_t size) {
    const std::int64_t z = unix_ms / 86400000 + 719468, ms = unix_ms % 86400000;
    const std::int64_t era = z / 146097, doe = z - era * 146097;
    const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
    const std::int64_t day = doy - (153 * mp + 2) / 5 + 1, month = mp < 10 ? mp + 3 : mp - 9;
    const std::int64_t year = yoe + era * 400 + (month <= 2);
    std::snprintf(out, size, "%04lld-%02lld-%02lld%s%02lld:%02lld:%02lld.%03lld%s", static_cast<long long>(year),
                  static_cast<long long>(month), static_cast<long long>(day), separator,
                  static_cast<long long>(ms / 3600000), static_cast<long long>(ms / 60000 % 60),
                  static_cast<long long>(ms / 1000 % 60), static_cast<long long>(ms % 1000), zone);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const FuzzText text(data, size);
    std::int64_t unix_ms = -1;
    if (!snowflake::parse_timestamp(text.c_str(), unix_ms)) return 0;
    FUZZ_CHECK(unix_ms >= 0 && unix_ms < kEndOf9999Ms + kMaxOffsetMs);
    if (unix_ms >= kEndOf9999Ms) return 0;  // not writable as a year of 9999 in UTC
    static constexpr const char* kSpellings[][2] = {{"T", "Z"}, {" ", ""}, {" ", " UTC"}, {"T", "+00:00"}, {"T", "-00"}};
    for (const auto& spelling : kSpellings) {
        char utc[48];
        format_utc(unix_ms, spelling[0], spelling[1], utc, sizeof utc);
        std::int64_t again = -1;
        FUZZ_CHECK(snowflake::parse_timestamp(utc, again) && again == unix_ms);
    }
    return 0;
}
