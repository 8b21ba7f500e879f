#include "ff1.hpp"

#include <openssl/evp.h>

#include <cstring>

namespace snowflake {
namespace {

using u128 = unsigned __int128;

// Everything FF1 derives from radix, n and t (SP 800-38G, 5.1 steps 1-5).
struct Params {
    std::uint32_t radix;
    int u, v;                   // the lengths of A and B
    std::uint64_t pow_u, pow_v;  // radix^u, radix^v
    int b, d;                   // bytes of NUM_radix(B), bytes of S
    std::uint8_t p[16];         // the block P
};

bool power(std::uint32_t radix, int e, std::uint64_t& out) noexcept {
    out = 1;
    for (int i = 0; i < e; ++i)
        if (__builtin_mul_overflow(out, std::uint64_t{radix}, &out)) return false;
    return true;
}

bool params(std::uint32_t radix, int n, std::size_t t, Params& p) noexcept {
    if (radix < 2 || radix > 65536 || n < 2 || n > 64 || t > 64) return false;
    p.radix = radix;
    p.u = n / 2;
    p.v = n - p.u;
    if (!power(radix, p.u, p.pow_u) || !power(radix, p.v, p.pow_v)) return false;
    // b = ceil(ceil(v * log2(radix)) / 8): the bytes of radix^v - 1
    int bits = 0;
    for (std::uint64_t x = p.pow_v - 1; x != 0; x >>= 1) ++bits;
    p.b = (bits + 7) / 8;
    p.d = 4 * ((p.b + 3) / 4) + 4;
    const std::uint8_t block[16] = {1,
                                    2,
                                    1,
                                    static_cast<std::uint8_t>(radix >> 16),
                                    static_cast<std::uint8_t>(radix >> 8),
                                    static_cast<std::uint8_t>(radix),
                                    10,
                                    static_cast<std::uint8_t>(p.u % 256),
                                    0,
                                    0,
                                    0,
                                    static_cast<std::uint8_t>(n),
                                    static_cast<std::uint8_t>(t >> 24),
                                    static_cast<std::uint8_t>(t >> 16),
                                    static_cast<std::uint8_t>(t >> 8),
                                    static_cast<std::uint8_t>(t)};
    std::memcpy(p.p, block, 16);
    return true;
}

// CIPH_K of one block.
bool cipher(const Ff1Key& key, const std::uint8_t in[16], std::uint8_t out[16]) noexcept {
    int length = 0;
    return EVP_EncryptUpdate(static_cast<EVP_CIPHER_CTX*>(key.ctx), out, &length, in, 16) == 1 && length == 16;
}

// y of round i (steps 6.i-6.iv): PRF(P || Q) with Q = T || 0^((-t-b-1) mod 16)
// || [i] || [x]^b, S its first d bytes (d <= 12 here, so one block), y = NUM(S).
// cipher_p is CIPH(P), the CBC-MAC's first block, the same in every round.
bool round_y(const Ff1Key& key, const Params& p, const std::uint8_t cipher_p[16], const std::uint8_t* tweak,
             std::size_t t, int i, std::uint64_t x, u128& y) noexcept {
    std::uint8_t q[96] = {};
    const std::size_t zeros = (16 - (t + static_cast<std::size_t>(p.b) + 1) % 16) % 16;
    const std::size_t length = t + zeros + 1 + static_cast<std::size_t>(p.b);
    if (t > 0) std::memcpy(q, tweak, t);
    q[t + zeros] = static_cast<std::uint8_t>(i);
    for (int k = 0; k < p.b; ++k) q[length - 1 - static_cast<std::size_t>(k)] = static_cast<std::uint8_t>(x >> (8 * k));
    std::uint8_t r[16];
    std::memcpy(r, cipher_p, 16);  // the CBC-MAC of P || Q, IV 0
    for (std::size_t block = 0; block < length; block += 16) {
        for (int k = 0; k < 16; ++k) r[k] ^= q[block + static_cast<std::size_t>(k)];
        if (!cipher(key, r, r)) return false;
    }
    y = 0;
    for (int k = 0; k < p.d; ++k) y = y << 8 | r[k];
    return true;
}

// The Feistel rounds on NUM_radix(A) and NUM_radix(B).
bool rounds(const Ff1Key& key, const Params& p, const std::uint8_t* tweak, std::size_t t, bool encrypt,
            std::uint64_t& a, std::uint64_t& b) noexcept {
    std::uint8_t cipher_p[16];
    if (!cipher(key, p.p, cipher_p)) return false;
    for (int step = 0; step < 10; ++step) {
        const int i = encrypt ? step : 9 - step;
        const std::uint64_t modulus = i % 2 == 0 ? p.pow_u : p.pow_v;
        u128 y;
        if (!round_y(key, p, cipher_p, tweak, t, i, encrypt ? b : a, y)) return false;
        const auto y_mod = static_cast<std::uint64_t>(y % modulus);
        if (encrypt) {
            const auto c = static_cast<std::uint64_t>((u128{a} + y_mod) % modulus);
            a = b;
            b = c;
        } else {
            const auto c = static_cast<std::uint64_t>((u128{b} + modulus - y_mod) % modulus);
            b = a;
            a = c;
        }
    }
    return true;
}

bool numerals(bool encrypt, const Ff1Key& key, std::uint32_t radix, const std::uint32_t* in, std::uint32_t* out,
              int n, const std::uint8_t* tweak, std::size_t t) noexcept {
    Params p;
    if (key.ctx == nullptr || !params(radix, n, t, p)) return false;
    std::uint64_t a = 0, b = 0;
    for (int k = 0; k < n; ++k) {
        if (in[k] >= radix) return false;
        std::uint64_t& half = k < p.u ? a : b;
        half = half * radix + in[k];
    }
    if (!rounds(key, p, tweak, t, encrypt, a, b)) return false;
    for (int k = n - 1; k >= 0; --k) {
        std::uint64_t& half = k < p.u ? a : b;
        out[k] = static_cast<std::uint32_t>(half % radix);
        half /= radix;
    }
    return true;
}

}  // namespace

bool ff1_key_init(Ff1Key& key, const std::uint8_t* bytes, std::size_t length) noexcept {
    key = Ff1Key{};
    const EVP_CIPHER* aes = length == 16   ? EVP_aes_128_ecb()
                            : length == 24 ? EVP_aes_192_ecb()
                            : length == 32 ? EVP_aes_256_ecb()
                                           : nullptr;
    if (aes == nullptr) return false;
    EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
    if (ctx == nullptr) return false;
    if (EVP_EncryptInit_ex(ctx, aes, nullptr, bytes, nullptr) != 1 || EVP_CIPHER_CTX_set_padding(ctx, 0) != 1) {
        EVP_CIPHER_CTX_free(ctx);
        return false;
    }
    key.ctx = ctx;
    std::memcpy(key.bytes, bytes, length);
    key.length = length;
    return true;
}

void ff1_key_free(Ff1Key& key) noexcept {
    EVP_CIPHER_CTX_free(static_cast<EVP_CIPHER_CTX*>(key.ctx));
    key = Ff1Key{};
}

bool ff1_encrypt(const Ff1Key& key, std::uint32_t radix, const std::uint32_t* in, std::uint32_t* out, int n,
                 const std::uint8_t* tweak, std::size_t t) noexcept {
    return numerals(true, key, radix, in, out, n, tweak, t);
}

bool ff1_decrypt(const Ff1Key& key, std::uint32_t radix, const std::uint32_t* in, std::uint32_t* out, int n,
                 const std::uint8_t* tweak, std::size_t t) noexcept {
    return numerals(false, key, radix, in, out, n, tweak, t);
}

// 63 numerals of radix 2: A is the top 31 bits, B the low 32; NUM_radix of a
// bit string is its value. UINT64_MAX if OpenSSL fails.
namespace {
std::uint64_t id_rounds(const Ff1Key& key, std::uint64_t id, bool encrypt) noexcept {
    Params p;
    (void)params(2, 63, 0, p);
    std::uint64_t a = id >> 32 & 0x7FFFFFFF, b = id & 0xFFFFFFFF;
    if (!rounds(key, p, nullptr, 0, encrypt, a, b)) return UINT64_MAX;
    return a << 32 | b;
}
}  // namespace

std::uint64_t ff1_encrypt_id(const Ff1Key& key, std::uint64_t id) noexcept { return id_rounds(key, id, true); }
std::uint64_t ff1_decrypt_id(const Ff1Key& key, std::uint64_t id) noexcept { return id_rounds(key, id, false); }

}  // namespace snowflake
