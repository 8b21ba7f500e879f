// from_base62 (0-9, A-Z, a-z, 11 characters; case-sensitive: the text is the form).
#include "fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const FuzzText text(data, size);
    check_text_form(
        text.c_str(), snowflake::kBase62Length,
        [](char c) -> char {
            return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ? c : 0;
        },
        snowflake::to_base62, snowflake::from_base62);
    return 0;
}
