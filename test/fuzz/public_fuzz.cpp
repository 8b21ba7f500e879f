// The public-id parser (from_public_text) on any bytes: it accepts exactly
// the texts of 13 Crockford characters (any case, I and L as 1, O as 0: every
// such text is some public id), and writes an accepted one back as itself in
// canonical form. And the FF1 id permutation on any 63-bit value, under a key
// from the input: decrypting the encryption gives the value back.
#include "fuzz.hpp"

#include "../../src/core/ff1.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const FuzzText text(data, size);
    char normalized[snowflake::kBase32Length + 1] = {};
    const std::size_t length = std::strlen(text.c_str());  // the text ends at its first NUL
    bool well_formed = length == snowflake::kBase32Length;
    for (std::size_t i = 0; well_formed && i < length; ++i) {
        char c = text.c_str()[i];
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
        c = c == 'I' || c == 'L' ? '1' : c == 'O' ? '0' : c;
        well_formed = c != '\0' && std::strchr("0123456789ABCDEFGHJKMNPQRSTVWXYZ", c) != nullptr;
        normalized[i] = c;
    }
    std::uint64_t value = 0;
    unsigned key_id = 9;
    const snowflake::ParseResult result = snowflake::from_public_text(text.c_str(), value, key_id);
    FUZZ_CHECK((result == snowflake::ParseResult::Ok) == well_formed);
    if (well_formed) {
        FUZZ_CHECK(key_id <= 3 && value <= snowflake::kMaxId);
        char again[snowflake::kBase32Length + 1];
        snowflake::to_public_text(value, key_id, again);
        FUZZ_CHECK(std::strcmp(again, normalized) == 0);
    }
    if (size >= 24) {
        static snowflake::Ff1Key key;  // the key of the last input, kept for the run
        if (key.ctx == nullptr || std::memcmp(key.bytes, data + 8, 16) != 0) {
            snowflake::ff1_key_free(key);
            FUZZ_CHECK(snowflake::ff1_key_init(key, data + 8, 16));
        }
        std::uint64_t id;
        std::memcpy(&id, data, 8);
        id &= snowflake::kMaxId;
        const std::uint64_t encrypted = snowflake::ff1_encrypt_id(key, id);
        FUZZ_CHECK(encrypted <= snowflake::kMaxId && snowflake::ff1_decrypt_id(key, encrypted) == id);
    }
    return 0;
}
