// Short text forms: Crockford base32 and base62, both ways.
#include "../../src/core/codec.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace snowflake {
namespace {

std::string base32(std::uint64_t id) {
    char out[kBase32Length + 1];
    to_base32(id, out);
    return out;
}

std::string base62(std::uint64_t id) {
    char out[kBase62Length + 1];
    to_base62(id, out);
    return out;
}

struct Known {
    std::uint64_t id;
    const char* base32;
    const char* base62;
};

// 2^53 = 8 * 32^10; 2^63-1 = 7 then twelve 31s in base32.
constexpr Known kKnown[] = {
    {0, "0000000000000", "00000000000"},
    {1, "0000000000001", "00000000001"},
    {std::uint64_t{1} << 53, "0080000000000", "00fFgnDxSe8"},
    {kMaxId, "7ZZZZZZZZZZZZ", "AzL8n0Y58m7"},
};

TEST(Codec, KnownValuesBothWays) {
    for (const Known& k : kKnown) {
        EXPECT_EQ(base32(k.id), k.base32);
        EXPECT_EQ(base62(k.id), k.base62);
        std::uint64_t id = 99;
        EXPECT_EQ(from_base32(k.base32, id), ParseResult::Ok);
        EXPECT_EQ(id, k.id);
        id = 99;
        EXPECT_EQ(from_base62(k.base62, id), ParseResult::Ok);
        EXPECT_EQ(id, k.id);
    }
}

TEST(Codec, RandomRoundTripsKeepOrder) {
    std::mt19937_64 random(42);
    std::uint64_t previous = 0;
    std::string previous32 = base32(0), previous62 = base62(0);
    for (int i = 0; i < 100000; ++i) {
        const std::uint64_t id = random() >> (1 + random() % 63);  // every magnitude
        const std::string b32 = base32(id), b62 = base62(id);
        ASSERT_EQ(b32.size(), kBase32Length);
        ASSERT_EQ(b62.size(), kBase62Length);
        std::uint64_t back = 0;
        ASSERT_EQ(from_base32(b32.c_str(), back), ParseResult::Ok);
        ASSERT_EQ(back, id);
        ASSERT_EQ(from_base62(b62.c_str(), back), ParseResult::Ok);
        ASSERT_EQ(back, id);
        // byte-wise (C collation) order is numeric order
        ASSERT_EQ(id < previous, b32 < previous32) << id << ' ' << previous;
        ASSERT_EQ(id < previous, b62 < previous62) << id << ' ' << previous;
        previous = id;
        previous32 = b32;
        previous62 = b62;
    }
}

TEST(Codec, Base32ReadsCrockfordAliasesAndLowerCase) {
    std::uint64_t id = 0;
    EXPECT_EQ(from_base32("000000000000i", id), ParseResult::Ok);
    EXPECT_EQ(id, 1u);
    EXPECT_EQ(from_base32("000000000000L", id), ParseResult::Ok);
    EXPECT_EQ(id, 1u);
    EXPECT_EQ(from_base32("o00000000000l", id), ParseResult::Ok);
    EXPECT_EQ(id, 1u);
    EXPECT_EQ(from_base32("7zzzzzzzzzzzz", id), ParseResult::Ok);
    EXPECT_EQ(id, kMaxId);
    EXPECT_EQ(from_base32("00000000000ab", id), ParseResult::Ok);
    EXPECT_EQ(id, 10u * 32 + 11);
}

struct Bad {
    ParseResult (*decode)(const char*, std::uint64_t&) noexcept;
    const char* text;
    ParseResult result;
};

void PrintTo(const Bad& b, std::ostream* os) { *os << '"' << b.text << '"'; }

class Malformed : public testing::TestWithParam<Bad> {};
TEST_P(Malformed, Refused) {
    std::uint64_t id = 12345;
    EXPECT_EQ(GetParam().decode(GetParam().text, id), GetParam().result) << GetParam().text;
    EXPECT_EQ(id, 12345u);
}

constexpr ParseResult kSyntax = ParseResult::Syntax;
constexpr ParseResult kRange = ParseResult::OutOfRange;
INSTANTIATE_TEST_SUITE_P(
    Base32, Malformed,
    testing::Values(Bad{from_base32, "", kSyntax}, Bad{from_base32, "000000000000", kSyntax},
                    Bad{from_base32, "00000000000000", kSyntax},
                    Bad{from_base32, "000000-000001", kSyntax},  // hyphens are refused
                    Bad{from_base32, "0000-0000-0000-1", kSyntax},
                    Bad{from_base32, "000000000000U", kSyntax},  // U is not Crockford
                    Bad{from_base32, "000000000000u", kSyntax}, Bad{from_base32, " 000000000001", kSyntax},
                    Bad{from_base32, "000000000001 ", kSyntax}, Bad{from_base32, "-000000000001", kSyntax},
                    Bad{from_base32, "+000000000001", kSyntax}, Bad{from_base32, "00000000000*1", kSyntax},
                    Bad{from_base32, "00000000000\xc3\xa9", kSyntax},
                    Bad{from_base32, "8000000000000", kRange},  // 2^63
                    Bad{from_base32, "ZZZZZZZZZZZZZ", kRange}, Bad{from_base32, "zzzzzzzzzzzzz", kRange}));
INSTANTIATE_TEST_SUITE_P(
    Base62, Malformed,
    testing::Values(Bad{from_base62, "", kSyntax}, Bad{from_base62, "0000000001", kSyntax},
                    Bad{from_base62, "000000000001", kSyntax}, Bad{from_base62, "00000-00001", kSyntax},
                    Bad{from_base62, " 0000000001", kSyntax}, Bad{from_base62, "0000000001 ", kSyntax},
                    Bad{from_base62, "-0000000001", kSyntax}, Bad{from_base62, "000000000_1", kSyntax},
                    Bad{from_base62, "AzL8n0Y58m8", kRange},  // 2^63
                    Bad{from_base62, "zzzzzzzzzzz", kRange}));

}  // namespace
}  // namespace snowflake
