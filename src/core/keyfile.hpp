// The public id key file (snowflake.public_key_file) and the key ids' bindings
// (pg_snowflake/public_keys): parsers, the binding check and the ownership
// and permission rule PostgreSQL applies to ssl_key_file. Pure C++, no
// PostgreSQL header; nothing here allocates or throws. No message quotes a key.
#pragma once

#include <cstddef>
#include <cstdint>

namespace snowflake {

inline constexpr unsigned kKeyIds = 4;              // a public id names key id 0..3
inline constexpr std::size_t kKeyFileMax = 8192;    // bytes: a key file is small
inline constexpr std::size_t kFingerprintBytes = 16;

struct PublicKey {
    unsigned id;  // 0..3
    std::size_t length;  // 16, 24 or 32 bytes: AES-128, -192, -256
    std::uint8_t bytes[32];
};

// The keys of a file, in its order: the first one encodes, every one decodes
// the public ids naming its key id.
struct PublicKeys {
    unsigned count;
    PublicKey keys[kKeyIds];
};

// The key file's text: a line is blank, a comment (# first), or a key id
// 0..3, spaces or tabs, and 32, 48 or 64 hexadecimal digits (either case),
// with spaces after it; at least one key, each key id once. nullptr, or the
// problem (never quoting the key) and its line (1 on).
const char* parse_public_keys(const char* text, std::size_t size, PublicKeys& keys, unsigned& line) noexcept;

// The key ids bound to a key, by its fingerprint: the first 16 bytes of
// SHA-256 over a fixed prefix and the key. Never the key.
struct Bindings {
    bool bound[kKeyIds];
    std::uint8_t fingerprint[kKeyIds][kFingerprintBytes];
};

bool fingerprint_of(const PublicKey& key, std::uint8_t (&out)[kFingerprintBytes]) noexcept;

// pg_snowflake/public_keys: "snowflake public key bindings 1", comment lines,
// "<key id> <32 hex digits>" a line, and "crc32c <8 hex digits>" of all before
// it. false when malformed, of another version, or its checksum differs.
bool parse_bindings(const char* text, std::size_t size, Bindings& bindings) noexcept;
// The text of the bindings into out (at least kBindingsTextMax bytes), NUL
// terminated; its length.
inline constexpr std::size_t kBindingsTextMax = 512;
std::size_t format_bindings(const Bindings& bindings, char* out) noexcept;

enum class Binding { Same, Unbound, Other };
// Each key of keys against the bindings: Other (and its key id) if one is
// bound to another key; else Unbound if one is not bound; else Same.
Binding check_bindings(const PublicKeys& keys, const Bindings& bindings, unsigned& key_id) noexcept;
// Binds every unbound key id of keys to its key; false if a fingerprint
// could not be made.
bool bind_keys(const PublicKeys& keys, Bindings& bindings) noexcept;

// PostgreSQL's rule for ssl_key_file (be-secure-common.c): a regular file,
// owned by the server's user with no group or world access (0600 or less), or
// by root with at most group read (0640 or less).
enum class KeyFileMode { Ok, NotRegular, Owner, Access };
KeyFileMode key_file_mode(unsigned owner, unsigned mode, unsigned server_user) noexcept;

}  // namespace snowflake
