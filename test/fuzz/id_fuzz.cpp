// parse_snowflake (the type's text form, every int8): accepted exactly when
// the text is decimal digits, not empty, after an optional '-', and in
// -2^63..2^63-1; then its value prints as the text without leading zeros (and
// without the sign of -0), which parses back to the same value. parse_id
// accepts exactly the texts without '-' that parse_snowflake does, with the
// same value.
#include "fuzz.hpp"

#include <cinttypes>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const FuzzText input(data, size);
    const char* text = input.c_str();
    const bool negative = text[0] == '-';
    const char* unsigned_part = negative ? text + 1 : text;
    const std::size_t length = std::strlen(unsigned_part);
    const bool digits = length > 0 && std::strspn(unsigned_part, "0123456789") == length;
    const char* significant = unsigned_part + std::strspn(unsigned_part, "0");
    if (digits && *significant == '\0') --significant;  // all zeros: "0"
    const std::size_t width = std::strlen(significant);
    const char* limit = negative ? "9223372036854775808" : "9223372036854775807";
    const bool in_range = width < 19 || (width == 19 && std::strcmp(significant, limit) <= 0);

    std::int64_t value = 0;
    const snowflake::ParseResult result = snowflake::parse_snowflake(text, value);
    if (!digits) {
        FUZZ_CHECK(result == snowflake::ParseResult::Syntax);
    } else if (!in_range) {
        FUZZ_CHECK(result == snowflake::ParseResult::OutOfRange);
    } else {
        FUZZ_CHECK(result == snowflake::ParseResult::Ok);
        FUZZ_CHECK(negative ? value <= 0 : value >= 0);
        char canonical[24];
        std::snprintf(canonical, sizeof canonical, "%" PRId64, value);
        const bool zero = std::strcmp(significant, "0") == 0;
        FUZZ_CHECK(std::strcmp(canonical + (negative && !zero ? 1 : 0), significant) == 0);
        std::int64_t again = 0;
        FUZZ_CHECK(snowflake::parse_snowflake(canonical, again) == snowflake::ParseResult::Ok && again == value);
    }

    std::uint64_t id = 0;
    const snowflake::ParseResult id_result = snowflake::parse_id(text, id);
    if (negative) {
        FUZZ_CHECK(id_result == snowflake::ParseResult::Syntax);
    } else {
        FUZZ_CHECK(id_result == result);
        if (result == snowflake::ParseResult::Ok)
            FUZZ_CHECK(id <= snowflake::kMaxId && id == static_cast<std::uint64_t>(value));
    }
    return 0;
}
