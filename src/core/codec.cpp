#include "codec.hpp"

#include <cstring>

namespace snowflake {
namespace {

constexpr char kBase32Digits[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
constexpr char kBase62Digits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

// Digits from the last character back: fixed width, leading zeros.
void encode(std::uint64_t id, const char* digits, std::uint64_t base, std::size_t length,
            char* out) noexcept {
    for (std::size_t i = length; i-- > 0; id /= base) out[i] = digits[id % base];
    out[length] = '\0';
}

// The value of a Crockford character, or -1.
int base32_value(char c) noexcept {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (c == 'I' || c == 'L') return 1;
    if (c == 'O') return 0;
    const char* at = c == '\0' ? nullptr : std::strchr(kBase32Digits, c);
    return at == nullptr ? -1 : static_cast<int>(at - kBase32Digits);
}

int base62_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
    if (c >= 'a' && c <= 'z') return c - 'a' + 36;
    return -1;
}

// Reads exactly `length` characters of the form, then the end of the text;
// refuses values above kMaxId.
ParseResult decode(const char* text, std::uint64_t base, std::size_t length, int (*value_of)(char),
                   std::uint64_t& id) noexcept {
    if (std::strlen(text) != length) return ParseResult::Syntax;
    std::uint64_t value = 0;
    bool overflow = false;
    for (std::size_t i = 0; i < length; ++i) {
        const int digit = value_of(text[i]);
        if (digit < 0) return ParseResult::Syntax;
        const auto d = static_cast<std::uint64_t>(digit);
        if (value > (kMaxId - d) / base) overflow = true;
        if (!overflow) value = value * base + d;
    }
    if (overflow) return ParseResult::OutOfRange;
    id = value;
    return ParseResult::Ok;
}

}  // namespace

void to_base32(std::uint64_t id, char* out) noexcept {
    encode(id, kBase32Digits, 32, kBase32Length, out);
}

void to_base62(std::uint64_t id, char* out) noexcept {
    encode(id, kBase62Digits, 62, kBase62Length, out);
}

ParseResult from_base32(const char* text, std::uint64_t& id) noexcept {
    return decode(text, 32, kBase32Length, base32_value, id);
}

ParseResult from_base62(const char* text, std::uint64_t& id) noexcept {
    return decode(text, 62, kBase62Length, base62_value, id);
}

void to_public_text(std::uint64_t value, unsigned key_id, char* out) noexcept {
    to_base32(value & kMaxId, out);
    char key[kBase32Length + 1];
    to_base32((key_id & 3) << 3 | (value & kMaxId) >> 60, key);  // the first character's 5 bits
    out[0] = key[kBase32Length - 1];
}

ParseResult from_public_text(const char* text, std::uint64_t& value, unsigned& key_id) noexcept {
    if (std::strlen(text) != kBase32Length) return ParseResult::Syntax;
    char first[kBase32Length + 1] = "000000000000X";
    first[kBase32Length - 1] = text[0];
    std::uint64_t bits;
    if (from_base32(first, bits) != ParseResult::Ok) return ParseResult::Syntax;
    char rest[kBase32Length + 1];
    std::memcpy(rest, text, kBase32Length + 1);
    rest[0] = static_cast<char>('0' + (bits & 7));
    if (from_base32(rest, value) != ParseResult::Ok) return ParseResult::Syntax;
    key_id = static_cast<unsigned>(bits >> 3);
    return ParseResult::Ok;
}

}  // namespace snowflake
