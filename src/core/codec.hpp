// Short text forms of an id: fixed width, so that sorting the text sorts the
// ids. Pure C++, no PostgreSQL header; nothing here allocates or throws.
#pragma once
#include "text.hpp"

#include <cstddef>
#include <cstdint>

namespace snowflake {

// Crockford base32, 13 characters, upper case: 0123456789ABCDEFGHJKMNPQRSTVWXYZ.
// Input is case-insensitive and reads I and L as 1, O as 0; hyphens, U and
// anything else are refused. 13 characters hold 65 bits: a first character
// above 7 is out of range (above 2^63-1).
inline constexpr std::size_t kBase32Length = 13;
// base62 in ASCII order (0-9, A-Z, a-z), 11 characters; case-sensitive.
inline constexpr std::size_t kBase62Length = 11;

// Write exactly the form's length of characters and a NUL; id <= kMaxId.
void to_base32(std::uint64_t id, char* out) noexcept;
void to_base62(std::uint64_t id, char* out) noexcept;

// Syntax: not exactly the form's length of the form's characters.
// OutOfRange: well formed, but above 2^63-1.
ParseResult from_base32(const char* text, std::uint64_t& id) noexcept;
ParseResult from_base62(const char* text, std::uint64_t& id) noexcept;

// A public id: 13 Crockford base32 characters of key_id << 63 | value, where
// value is the id encrypted (63 bits) and key_id (0..3) names the key: the
// first character is 0-7 for key 0, 8-F for 1, G-Q for 2, R-Z for 3. Input as
// for base32 (any case, aliases), every 13-character text is some public id.
void to_public_text(std::uint64_t value, unsigned key_id, char* out) noexcept;
ParseResult from_public_text(const char* text, std::uint64_t& value, unsigned& key_id) noexcept;

}  // namespace snowflake
