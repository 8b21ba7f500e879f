// from_base32 (Crockford, 13 characters; case-insensitive, I and L read as 1, O as 0).
#include "fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const FuzzText text(data, size);
    check_text_form(
        text.c_str(), snowflake::kBase32Length,
        [](char c) -> char {
            if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
            if (c == 'I' || c == 'L') return '1';
            if (c == 'O') return '0';
            return c != '\0' && std::strchr("0123456789ABCDEFGHJKMNPQRSTVWXYZ", c) ? c : 0;
        },
        snowflake::to_base32, snowflake::from_base32);
    return 0;
}
