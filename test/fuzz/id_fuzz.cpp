// parse_id (decimal id text, 0..2^63-1): accepted exactly when the text is
// digits only, not empty, and in range; then its value prints as the text
// without leading zeros, which parses back to the same id.
#include "fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const FuzzText input(data, size);
    const char* text = input.c_str();
    const std::size_t length = std::strlen(text);
    const bool digits = length > 0 && std::strspn(text, "0123456789") == length;
    const char* significant = text + std::strspn(text, "0");
    if (digits && *significant == '\0') --significant;  // all zeros: "0"
    const std::size_t width = std::strlen(significant);
    const bool in_range = width < 19 || (width == 19 && std::strcmp(significant, "9223372036854775807") <= 0);

    std::uint64_t id = 0;
    const snowflake::ParseResult result = snowflake::parse_id(text, id);
    if (!digits) {
        FUZZ_CHECK(result == snowflake::ParseResult::Syntax);
    } else if (!in_range) {
        FUZZ_CHECK(result == snowflake::ParseResult::OutOfRange);
    } else {
        FUZZ_CHECK(result == snowflake::ParseResult::Ok && id <= snowflake::kMaxId);
        char canonical[24];
        std::snprintf(canonical, sizeof canonical, "%llu", static_cast<unsigned long long>(id));
        FUZZ_CHECK(std::strcmp(canonical, significant) == 0);
        std::uint64_t again = 0;
        FUZZ_CHECK(snowflake::parse_id(canonical, again) == snowflake::ParseResult::Ok && again == id);
    }
    return 0;
}
