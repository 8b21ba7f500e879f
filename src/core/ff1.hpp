// FF1, the format-preserving encryption of NIST SP 800-38G, with AES
// (OpenSSL's, as pgcrypto uses): the keyed permutation behind public ids.
// Pure C++, no PostgreSQL header; nothing here throws or uses PostgreSQL's
// memory. A key holds an OpenSSL cipher context, made by ff1_key_init and
// released by ff1_key_free (the caller decides its lifetime: no destructor).
#pragma once

#include <cstddef>
#include <cstdint>

namespace snowflake {

struct Ff1Key {
    void* ctx = nullptr;  // EVP_CIPHER_CTX, AES-128/192/256 in ECB mode
    std::uint8_t bytes[32] = {};
    std::size_t length = 0;
};

// A key of 16, 24 or 32 bytes; false (and nothing held) on any other length
// or an OpenSSL failure.
bool ff1_key_init(Ff1Key& key, const std::uint8_t* bytes, std::size_t length) noexcept;
void ff1_key_free(Ff1Key& key) noexcept;

// FF1.Encrypt / FF1.Decrypt of n numerals (2 <= n <= 64) in radix 2..65536,
// with a tweak of t bytes (at most 64), as SP 800-38G defines them, for the
// sizes whose halves fit 64 bits (radix^ceil(n/2) < 2^64: every id, and
// NIST's samples). out may be in. False when the sizes are out of bounds or a
// numeral is not below the radix.
bool ff1_encrypt(const Ff1Key& key, std::uint32_t radix, const std::uint32_t* in, std::uint32_t* out, int n,
                 const std::uint8_t* tweak, std::size_t t) noexcept;
bool ff1_decrypt(const Ff1Key& key, std::uint32_t radix, const std::uint32_t* in, std::uint32_t* out, int n,
                 const std::uint8_t* tweak, std::size_t t) noexcept;

// The 63 bits of an id (0..2^63-1) as 63 numerals of radix 2, no tweak: a
// permutation of the ids.
std::uint64_t ff1_encrypt_id(const Ff1Key& key, std::uint64_t id) noexcept;
std::uint64_t ff1_decrypt_id(const Ff1Key& key, std::uint64_t id) noexcept;

}  // namespace snowflake
