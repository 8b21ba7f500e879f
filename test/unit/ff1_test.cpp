// FF1 (NIST SP 800-38G) against NIST's published samples (FF1samples.pdf:
// samples 1-9, AES-128/192/256, radix 10 and 36, with and without a tweak),
// and the 63-bit id permutation built on it.
#include "../../src/core/ff1.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace snowflake {
namespace {

std::vector<std::uint8_t> hex(const std::string& text) {
    std::vector<std::uint8_t> bytes;
    for (std::size_t i = 0; i + 1 < text.size(); i += 2) bytes.push_back(static_cast<std::uint8_t>(std::stoi(text.substr(i, 2), nullptr, 16)));
    return bytes;
}

std::vector<std::uint32_t> numerals(const std::string& text) {
    std::vector<std::uint32_t> out;
    for (const char c : text) out.push_back(c <= '9' ? static_cast<std::uint32_t>(c - '0') : static_cast<std::uint32_t>(c - 'a' + 10));
    return out;
}

struct Sample {
    int number;
    const char* key;
    std::uint32_t radix;
    const char* tweak;
    const char* plain;
    const char* cipher;
};

constexpr const char* kKey128 = "2B7E151628AED2A6ABF7158809CF4F3C";
constexpr const char* kKey192 = "2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F";
constexpr const char* kKey256 = "2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F7F036D6F04FC6A94";

class Ff1Samples : public testing::TestWithParam<Sample> {};

TEST_P(Ff1Samples, EncryptAndDecrypt) {
    const Sample& s = GetParam();
    const std::vector<std::uint8_t> key_bytes = hex(s.key), tweak = hex(s.tweak);
    Ff1Key key;
    ASSERT_TRUE(ff1_key_init(key, key_bytes.data(), key_bytes.size()));
    const std::vector<std::uint32_t> plain = numerals(s.plain), expected = numerals(s.cipher);
    std::vector<std::uint32_t> out(plain.size()), back(plain.size());
    const int n = static_cast<int>(plain.size());
    ASSERT_TRUE(ff1_encrypt(key, s.radix, plain.data(), out.data(), n, tweak.data(), tweak.size()));
    EXPECT_EQ(out, expected) << "sample " << s.number;
    ASSERT_TRUE(ff1_decrypt(key, s.radix, out.data(), back.data(), n, tweak.data(), tweak.size()));
    EXPECT_EQ(back, plain) << "sample " << s.number;
    ff1_key_free(key);
}

INSTANTIATE_TEST_SUITE_P(
    Nist, Ff1Samples,
    testing::Values(Sample{1, kKey128, 10, "", "0123456789", "2433477484"},
                    Sample{2, kKey128, 10, "39383736353433323130", "0123456789", "6124200773"},
                    Sample{3, kKey128, 36, "3737373770717273373737", "0123456789abcdefghi", "a9tv40mll9kdu509eum"},
                    Sample{4, kKey192, 10, "", "0123456789", "2830668132"},
                    Sample{5, kKey192, 10, "39383736353433323130", "0123456789", "2496655549"},
                    Sample{6, kKey192, 36, "3737373770717273373737", "0123456789abcdefghi", "xbj3kv35jrawxv32ysr"},
                    Sample{7, kKey256, 10, "", "0123456789", "6657667009"},
                    Sample{8, kKey256, 10, "39383736353433323130", "0123456789", "1001623463"},
                    Sample{9, kKey256, 36, "3737373770717273373737", "0123456789abcdefghi", "xs8a0azh2avyalyzuwd"}),
    [](const testing::TestParamInfo<Sample>& info) { return "Sample" + std::to_string(info.param.number); });

class Ff1Id : public testing::Test {
protected:
    Ff1Key key;
    void SetUp() override {
        const std::vector<std::uint8_t> bytes = hex(kKey128);
        ASSERT_TRUE(ff1_key_init(key, bytes.data(), bytes.size()));
    }
    void TearDown() override { ff1_key_free(key); }
};

// The id form is FF1 of the id's 63 bits, highest first, radix 2.
TEST_F(Ff1Id, IsFf1OfTheBits) {
    for (const std::uint64_t id : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{382741621101301760}, (std::uint64_t{1} << 63) - 1}) {
        std::vector<std::uint32_t> bits(63), out(63);
        for (int k = 0; k < 63; ++k) bits[static_cast<std::size_t>(k)] = static_cast<std::uint32_t>(id >> (62 - k) & 1);
        ASSERT_TRUE(ff1_encrypt(key, 2, bits.data(), out.data(), 63, nullptr, 0));
        std::uint64_t value = 0;
        for (const std::uint32_t bit : out) value = value << 1 | bit;
        EXPECT_EQ(ff1_encrypt_id(key, id), value) << id;
    }
}

TEST_F(Ff1Id, RoundTripsAndStaysIn63Bits) {
    std::mt19937_64 random(42);
    std::vector<std::uint64_t> ids = {0, 1, 2, (std::uint64_t{1} << 63) - 1, (std::uint64_t{1} << 62)};
    for (int i = 0; i < 20000; ++i) ids.push_back(random() >> 1);
    for (const std::uint64_t id : ids) {
        const std::uint64_t public_id = ff1_encrypt_id(key, id);
        EXPECT_LT(public_id, std::uint64_t{1} << 63);
        EXPECT_EQ(ff1_decrypt_id(key, public_id), id);
    }
}

TEST_F(Ff1Id, ConsecutiveIdsDoNotCollide) {
    std::vector<std::uint64_t> seen;
    for (std::uint64_t id = 382741621101301760; id < 382741621101301760 + 50000; ++id) seen.push_back(ff1_encrypt_id(key, id));
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(std::adjacent_find(seen.begin(), seen.end()), seen.end());
}

TEST(Ff1Key, RefusesOtherLengths) {
    const std::uint8_t bytes[33] = {};
    Ff1Key key;
    for (const std::size_t length : {0, 8, 15, 17, 31, 33}) EXPECT_FALSE(ff1_key_init(key, bytes, length)) << length;
    EXPECT_EQ(key.ctx, nullptr);
}

TEST(Ff1Bounds, RefusesWhatItCannotDo) {
    const std::vector<std::uint8_t> bytes = hex(kKey128);
    Ff1Key key;
    ASSERT_TRUE(ff1_key_init(key, bytes.data(), bytes.size()));
    std::uint32_t in[65] = {}, out[65];
    EXPECT_FALSE(ff1_encrypt(key, 10, in, out, 1, nullptr, 0));   // n < 2
    EXPECT_FALSE(ff1_encrypt(key, 10, in, out, 65, nullptr, 0));  // n > 64
    EXPECT_FALSE(ff1_encrypt(key, 1, in, out, 10, nullptr, 0));   // radix < 2
    EXPECT_FALSE(ff1_encrypt(key, 10, in, out, 60, nullptr, 0));  // 10^30 does not fit
    in[3] = 10;
    EXPECT_FALSE(ff1_encrypt(key, 10, in, out, 10, nullptr, 0));  // a numeral past the radix
    ff1_key_free(key);
}

}  // namespace
}  // namespace snowflake
