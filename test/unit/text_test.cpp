// Text codecs: id input, the epoch setting, the lease file, the registry's release file.
#include "../../src/core/text.hpp"
#include "helpers.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

namespace snowflake {

void PrintTo(const Lease& l, std::ostream* os) {
    *os << '{' << l.epoch_unix_ms << ", " << l.lease_ms << ", " << l.clock_ms << ", " << l.worker_id << '}';
}

namespace {

using test::kDefaultEpoch;

// ---- parse_id ----

struct IdCase {
    const char* text;
    ParseResult result;
    std::uint64_t id = 0;  // when Ok
};

void PrintTo(const IdCase& c, std::ostream* os) { *os << '"' << c.text << '"'; }

class ParseId : public testing::TestWithParam<IdCase> {};

TEST_P(ParseId, Case) {
    const IdCase& c = GetParam();
    std::uint64_t id = 12345;
    EXPECT_EQ(parse_id(c.text, id), c.result) << '"' << c.text << '"';
    if (c.result == ParseResult::Ok) {
        EXPECT_EQ(id, c.id);
    }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseId,
    testing::Values(IdCase{"0", ParseResult::Ok, 0}, IdCase{"1", ParseResult::Ok, 1},
                    IdCase{"7167350074945572864", ParseResult::Ok, 7167350074945572864u},
                    IdCase{"9223372036854775807", ParseResult::Ok, kMaxId},
                    IdCase{"9223372036854775806", ParseResult::Ok, kMaxId - 1},
                    IdCase{"", ParseResult::Syntax}, IdCase{"-1", ParseResult::Syntax},
                    IdCase{"+1", ParseResult::Syntax}, IdCase{" 1", ParseResult::Syntax},
                    IdCase{"1 ", ParseResult::Syntax}, IdCase{"1 2", ParseResult::Syntax},
                    IdCase{"1a", ParseResult::Syntax}, IdCase{"a1", ParseResult::Syntax},
                    IdCase{"0x10", ParseResult::Syntax}, IdCase{"1.0", ParseResult::Syntax},
                    IdCase{"1e3", ParseResult::Syntax}, IdCase{"-0", ParseResult::Syntax},
                    IdCase{"9223372036854775808", ParseResult::OutOfRange},
                    IdCase{"18446744073709551615", ParseResult::OutOfRange},
                    IdCase{"18446744073709551616", ParseResult::OutOfRange},
                    IdCase{"99999999999999999999999", ParseResult::OutOfRange},
                    // Junk after an overflowing number is a syntax error.
                    IdCase{"99999999999999999999999x", ParseResult::Syntax}));

TEST(ParseIdRoundTrip, EveryPowerOfTwoAndNeighbours) {
    for (int bit = 0; bit < 63; ++bit) {
        for (const std::uint64_t v : {(std::uint64_t{1} << bit) - 1, std::uint64_t{1} << bit,
                                      (std::uint64_t{1} << bit) + 1}) {
            std::uint64_t id = 0;
            ASSERT_EQ(parse_id(std::to_string(v).c_str(), id), ParseResult::Ok) << v;
            ASSERT_EQ(id, v);
        }
    }
}

// ---- parse_snowflake: the type's text form, every int8 ----

struct SnowflakeCase {
    const char* text;
    ParseResult result;
    std::int64_t value = 0;  // when Ok
};

void PrintTo(const SnowflakeCase& c, std::ostream* os) { *os << '"' << c.text << '"'; }

class ParseSnowflake : public testing::TestWithParam<SnowflakeCase> {};

TEST_P(ParseSnowflake, Case) {
    const SnowflakeCase& c = GetParam();
    std::int64_t value = 12345;
    EXPECT_EQ(parse_snowflake(c.text, value), c.result) << '"' << c.text << '"';
    if (c.result == ParseResult::Ok) {
        EXPECT_EQ(value, c.value);
    }
}

constexpr std::int64_t kMinInt8 = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMaxInt8 = std::numeric_limits<std::int64_t>::max();

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseSnowflake,
    testing::Values(SnowflakeCase{"0", ParseResult::Ok, 0}, SnowflakeCase{"-0", ParseResult::Ok, 0},
                    SnowflakeCase{"-1", ParseResult::Ok, -1}, SnowflakeCase{"-001", ParseResult::Ok, -1},
                    SnowflakeCase{"7167350074945572864", ParseResult::Ok, 7167350074945572864},
                    SnowflakeCase{"9223372036854775807", ParseResult::Ok, kMaxInt8},
                    SnowflakeCase{"-9223372036854775807", ParseResult::Ok, -kMaxInt8},
                    SnowflakeCase{"-9223372036854775808", ParseResult::Ok, kMinInt8},
                    SnowflakeCase{"9223372036854775808", ParseResult::OutOfRange},
                    SnowflakeCase{"-9223372036854775809", ParseResult::OutOfRange},
                    SnowflakeCase{"-18446744073709551616", ParseResult::OutOfRange},
                    SnowflakeCase{"", ParseResult::Syntax}, SnowflakeCase{"-", ParseResult::Syntax},
                    SnowflakeCase{"--1", ParseResult::Syntax}, SnowflakeCase{"+1", ParseResult::Syntax},
                    SnowflakeCase{"- 1", ParseResult::Syntax}, SnowflakeCase{" -1", ParseResult::Syntax},
                    SnowflakeCase{"-1 ", ParseResult::Syntax}, SnowflakeCase{"1-", ParseResult::Syntax},
                    SnowflakeCase{"-1-", ParseResult::Syntax}, SnowflakeCase{"-0x1", ParseResult::Syntax},
                    SnowflakeCase{"-1.0", ParseResult::Syntax}, SnowflakeCase{"-a", ParseResult::Syntax},
                    SnowflakeCase{"-99999999999999999999999x", ParseResult::Syntax}));

TEST(ParseSnowflakeRoundTrip, EveryPowerOfTwoNeighboursAndTheirNegatives) {
    for (int bit = 0; bit < 63; ++bit) {
        for (const std::int64_t v : {(std::int64_t{1} << bit) - 1, std::int64_t{1} << bit,
                                     (std::int64_t{1} << bit) + 1}) {
            for (const std::int64_t signed_value : {v, -v, -v - 1}) {
                std::int64_t value = 0;
                ASSERT_EQ(parse_snowflake(std::to_string(signed_value).c_str(), value), ParseResult::Ok)
                    << signed_value;
                ASSERT_EQ(value, signed_value);
            }
        }
    }
}

// ---- parse_timestamp ----

struct TimestampCase {
    const char* text;
    bool ok;
    std::int64_t unix_ms;  // when ok
};

void PrintTo(const TimestampCase& c, std::ostream* os) { *os << '"' << c.text << '"'; }

class ParseTimestamp : public testing::TestWithParam<TimestampCase> {};

TEST_P(ParseTimestamp, Case) {
    const TimestampCase& c = GetParam();
    std::int64_t unix_ms = -12345;
    EXPECT_EQ(parse_timestamp(c.text, unix_ms), c.ok) << '"' << c.text << '"';
    if (c.ok) {
        EXPECT_EQ(unix_ms, c.unix_ms) << '"' << c.text << '"';
    }
}

TimestampCase accepted(const char* text, std::int64_t unix_ms) { return {text, true, unix_ms}; }
TimestampCase rejected(const char* text) { return {text, false, 0}; }

INSTANTIATE_TEST_SUITE_P(
    Accepted, ParseTimestamp,
    testing::Values(
        accepted("2024-01-01 00:00:00+00", kDefaultEpoch),  // the default
        accepted("2024-01-01T00:00:00Z", kDefaultEpoch),
        accepted("2024-01-01 00:00:00Z", kDefaultEpoch),
        accepted("2024-01-01 00:00:00UTC", kDefaultEpoch),
        accepted("2024-01-01 00:00:00 UTC", kDefaultEpoch),
        accepted("2024-01-01 00:00:00 +00", kDefaultEpoch),
        accepted("2024-01-01 00:00:00", kDefaultEpoch),  // UTC when no offset
        accepted("2024-01-01 00:00", kDefaultEpoch),
        accepted("2024-01-01", kDefaultEpoch),
        accepted("2024-01-01Z", kDefaultEpoch),
        accepted("2024-01-01 00:00:00+00:00", kDefaultEpoch),
        accepted("2024-01-01 00:00:00-00", kDefaultEpoch),
        accepted("2024-01-01 02:00:00+02", kDefaultEpoch),
        accepted("2024-01-01 02:00+02:00", kDefaultEpoch),
        accepted("2023-12-31 18:30:00-05:30", kDefaultEpoch),
        accepted("2024-01-01 00:00:00+01", kDefaultEpoch - 3'600'000),
        accepted("2024-01-01 00:00:00-15:59", kDefaultEpoch + (15 * 60 + 59) * 60'000),
        accepted("2024-01-01 00:00:00.5", kDefaultEpoch + 500),
        accepted("2024-01-01 00:00:00.05", kDefaultEpoch + 50),
        accepted("2024-01-01 00:00:00.123", kDefaultEpoch + 123),
        accepted("2024-01-01 00:00:00.123+00", kDefaultEpoch + 123),
        accepted("2024-01-01T00:00:00.999Z", kDefaultEpoch + 999),
        accepted("1970-01-01 00:00:00+00", 0),
        accepted("1970-01-01 00:00:00.001", 1),
        accepted("1970-01-01 01:00:00+01", 0),
        accepted("2024-02-29", 1709164800000),    // leap year
        accepted("2000-02-29 12:34:56", 951827696000),  // divisible by 400
        accepted("9999-12-31 23:59:59", 253402300799000),
        accepted("9999-12-31 23:59:59.999", 253402300799999)));

INSTANTIATE_TEST_SUITE_P(
    Rejected, ParseTimestamp,
    testing::Values(rejected(""), rejected("2024"), rejected("2024-01"), rejected("2024-1-1"),
                    rejected("24-01-01"), rejected("2024/01/01"), rejected("2024-01-01x"),
                    rejected("2023-02-29"), rejected("2100-02-29"), rejected("2024-13-01"),
                    rejected("2024-00-10"), rejected("2024-01-00"), rejected("2024-01-32"),
                    rejected("2024-04-31"), rejected("2024-01-01 24:00"),
                    rejected("2024-01-01 23:60"), rejected("2024-01-01 23:59:60"),
                    rejected("2024-01-01 1:00"), rejected("2024-01-01 10"),
                    rejected("2024-01-01 10:00:0"), rejected("2024-01-01 00:00:00."),
                    rejected("2024-01-01 "), rejected("2024-01-01T"),
                    rejected("2024-01-01 00:00:00 "), rejected("2024-01-01 00:00:00  UTC"),
                    rejected("2024-01-01 00:00:00+00 junk"), rejected("2024-01-01 00:00:00Zx"),
                    rejected("2024-01-01 00:00:00UTCx"), rejected("2024-01-01 00:00:00+2"),
                    rejected("2024-01-01 00:00:00+0530"), rejected("2024-01-01 00:00:00+05:3"),
                    rejected("2024-01-01 00:00:00+16"), rejected("2024-01-01 00:00:00+05:60"),
                    rejected("2024-01-01 00:00:00+"), rejected(" 2024-01-01"),
                    rejected("1969-12-31 23:59:59"), rejected("1900-01-01"),
                    rejected("0000-01-01"), rejected("1970-01-01 00:00:00+01"),
                    rejected("10000-01-01")));

// ---- the lease file ----

std::string formatted(const Lease& lease) {
    char buf[kLeaseTextMax];
    const std::size_t n = format_lease(lease, buf);
    EXPECT_GT(n, 0u);
    EXPECT_LT(n, kLeaseTextMax);
    return std::string(buf, n);
}

// A lease text's body and its checksum line.
std::string checksummed(const std::string& body) {
    char crc[32];
    std::snprintf(crc, sizeof crc, "crc32c %08x\n", crc32c(body.data(), body.size()));
    return body + crc;
}

bool parses(const std::string& text, Lease* out = nullptr) {
    Lease lease{-1, 1, 2};
    const bool ok = parse_lease(text.data(), text.size(), lease) == LeaseText::Ok;
    if (out) *out = lease;
    return ok;
}

// The check value of CRC-32C (RFC 3720), and of nothing.
TEST(Crc32c, CheckValue) {
    EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
    EXPECT_EQ(crc32c("", 0), 0u);
}

TEST(LeaseText, ExactFormat) {
    const std::string body =
        "snowflake lease 5\nepoch_unix_ms 1704067200000\nlease_ms 42\nclock_ms 40\nworker_id 61\n"
        "fenced 7 41\ndirectory 2049 131077\nlayout time=41 worker=10 sequence=12\n";
    EXPECT_EQ(formatted(Lease{kDefaultEpoch, 42, 40, 61, 2049, 131077, 2, {7, 41}}), checksummed(body));
    Lease sonyflake{kDefaultEpoch, 42, 40};
    sonyflake.layout = make_layout(10, 39, 16, 8, true);
    EXPECT_EQ(formatted(sonyflake).substr(0, 164),
              "snowflake lease 5\nepoch_unix_ms 1704067200000\nlease_ms 42\nclock_ms 40\nworker_id none\n"
              "fenced none\ndirectory 0 0\nlayout unit=10ms time=39 sequence=8 worker=16\ncrc32c ");
}

// Every single flipped bit of a lease file is refused, and one inside the
// text before the checksum line is reported as a checksum mismatch (regression:
// a flipped bit in lease_ms was accepted and the node jumped 92 days ahead).
TEST(LeaseText, EveryFlippedBitIsRefused) {
    const std::string text = formatted(Lease{kDefaultEpoch, 1234567, 1200000, 61, 2049, 131077});
    const std::size_t checksum_line = text.rfind("crc32c ");
    for (std::size_t i = 0; i < text.size(); ++i) {
        for (int bit = 0; bit < 8; ++bit) {
            std::string flipped = text;
            flipped[i] = static_cast<char>(flipped[i] ^ (1 << bit));
            Lease lease{};
            const LeaseText result = parse_lease(flipped.data(), flipped.size(), lease);
            EXPECT_NE(result, LeaseText::Ok) << "byte " << i << " bit " << bit;
            if (i >= 18 && i < checksum_line) {  // past the version line, before the checksum line
                EXPECT_EQ(result, LeaseText::BadChecksum) << "byte " << i << " bit " << bit;
            }
        }
    }
}

// Versions 1 to 4 were never released: refused, as are later ones.
TEST(LeaseText, ReadsOnlyTheReleasedVersion) {
    EXPECT_FALSE(parses("snowflake lease 3\nepoch_unix_ms 1704067200000\nlease_ms 1234\nclock_ms 1200\n"
                        "worker_id 7\n"));
    EXPECT_FALSE(parses("snowflake lease 1\nepoch_unix_ms 1704067200000\nlease_ms 1234\n"));
    const std::string good = formatted(Lease{kDefaultEpoch, 5, 4, 3, 2049, 1});
    for (const char version : {'4', '6', '7'}) {  // (6: without its host name line)
        std::string other = good.substr(0, good.find("crc32c"));
        other[16] = version;
        char crc[32];
        std::snprintf(crc, sizeof crc, "crc32c %08x\n", crc32c(other.data(), other.size()));
        EXPECT_FALSE(parses(other + crc)) << version;  // a valid checksum, another version
    }
}

// Version 6 (1.1) records the host name after the layout; 5 (1.0) has none,
// and is written so when no name is known.
Lease named(const char* host_name, Lease lease = Lease{kDefaultEpoch, 42, 40, 61, 2049, 131077, 2, {7, 41}}) {
    std::snprintf(lease.host_name.data(), lease.host_name.size(), "%s", host_name);
    return lease;
}

TEST(LeaseText, Version6RecordsTheHostName) {
    const std::string body =
        "snowflake lease 6\nepoch_unix_ms 1704067200000\nlease_ms 42\nclock_ms 40\nworker_id 61\n"
        "fenced 7 41\ndirectory 2049 131077\nlayout time=41 worker=10 sequence=12\nhost_name db-0.example\n";
    EXPECT_EQ(formatted(named("db-0.example")), checksummed(body));
    const std::string longest(kHostNameMax, 'h');
    Lease parsed{};
    ASSERT_TRUE(parses(formatted(named(longest.c_str())), &parsed));
    EXPECT_EQ(parsed, named(longest.c_str()));
    // the longest text of all fits
    Lease widest = named(longest.c_str(), Lease{-1, UINT64_MAX, UINT64_MAX, UINT32_MAX - 1, UINT64_MAX, UINT64_MAX});
    widest.fenced_count = kMaxFenced;
    widest.fenced.fill(UINT32_MAX - 1);
    char buf[kLeaseTextMax];
    EXPECT_GT(format_lease(widest, buf), 0u);
}

TEST(LeaseText, Version6RefusesAHostNameItCannotHold) {
    const std::string good = formatted(named("db-0"));
    const std::string body = good.substr(0, good.find("host_name "));
    for (const std::string& name : {std::string(""), std::string("db 0"), std::string(kHostNameMax + 1, 'h'),
                                    std::string("db\x7f"), std::string("d\xc3\xa9")}) {
        EXPECT_FALSE(parses(checksummed(body + "host_name " + name + "\n"))) << name;
    }
    EXPECT_TRUE(recordable_host_name("db-0"));
    EXPECT_FALSE(recordable_host_name(""));
    EXPECT_FALSE(recordable_host_name("a b"));
}

class LeaseRoundTrip : public testing::TestWithParam<Lease> {};

TEST_P(LeaseRoundTrip, ParsesWhatItWrites) {
    Lease parsed{};
    ASSERT_TRUE(parses(formatted(GetParam()), &parsed)) << formatted(GetParam());
    EXPECT_EQ(parsed, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Values, LeaseRoundTrip,
                         testing::Values(Lease{kDefaultEpoch, 0, 0}, Lease{kDefaultEpoch, 1, 0},
                                         Lease{kDefaultEpoch, 123456789, 123446789, 0},
                                         Lease{kDefaultEpoch, 123456789, 123446789, 1023},
                                         Lease{kDefaultEpoch, 5, 4, 3, UINT64_MAX, UINT64_MAX},
                                         Lease{kDefaultEpoch, 5, 4, 3, 2049, 1},
                                         Lease{kDefaultEpoch, 5, 4, 3, 2049, 1, 1, {0}},
                                         Lease{kDefaultEpoch, 5, 4, 3, 2049, 1, 8, {0, 1, 2, 41, 42, 500, 1022, 1023}},
                                         Lease{kDefaultEpoch, kMaxTime, kMaxTime}, Lease{0, 0, 0},
                                         Lease{253402300799999, kMaxTime, 1},
                                         Lease{static_cast<std::int64_t>(kMaxId), 7, 5},
                                         Lease{kDefaultEpoch, 5, 4, 65535, 2049, 1, 2, {255, 65535}, make_layout(1, 41, 8, 14, false)},
                                         Lease{kDefaultEpoch, 5, 4, 63, 2049, 1, 0, {}, make_layout(1, 41, 6, 6, false)},
                                         Lease{kDefaultEpoch, 50, 40, 7, 2049, 1, 0, {}, make_layout(10, 39, 16, 8, true)}));

// Found by test/fuzz/lease_fuzz: with a 128-byte buffer, the text of a lease
// with out-of-range fields (134 characters, 368 with the fenced ids, the directory, the layout and the
// checksum) was cut short and its length returned past the end of the buffer.
TEST(LeaseText, AnyLeaseFitsTheBuffer) {
    Lease widest{INT64_MIN, UINT64_MAX, UINT64_MAX, kNoWorker - 1, UINT64_MAX, UINT64_MAX, 1000, {}};
    widest.fenced.fill(UINT32_MAX);
    widest.pending_worker = kNoWorker - 1;
    widest.layout = Layout{INT64_MIN, INT32_MIN, INT32_MIN, INT32_MIN, false, 0, 0, 0, 0, 0, 0, 0};
    char buf[kLeaseTextMax];
    const std::size_t n = format_lease(widest, buf);
    EXPECT_EQ(n, 387u);
    EXPECT_LT(n, kLeaseTextMax);
    EXPECT_EQ(std::strlen(buf), n);
    EXPECT_FALSE(parses(std::string(buf, n)));  // out of range: refused
}

TEST(LeaseText, RejectsEveryTruncation) {
    const std::string text = formatted(Lease{kDefaultEpoch, 1234, 1200, 61});
    for (std::size_t n = 0; n < text.size(); ++n)
        EXPECT_FALSE(parses(text.substr(0, n))) << n;
}

TEST(LeaseText, RejectsEveryGarbledByte) {
    const std::string text = formatted(Lease{kDefaultEpoch, 1234, 1200, 61});
    for (std::size_t i = 0; i < text.size(); ++i) {
        for (const char c : {'x', ' ', '\0', '-'}) {
            if (text[i] == c) continue;
            std::string garbled = text;
            garbled[i] = c;
            EXPECT_FALSE(parses(garbled)) << "byte " << i << " set to " << int{c};
        }
    }
}

TEST(LeaseText, RejectsExtraOrDifferentText) {
    const std::string text = formatted(Lease{kDefaultEpoch, 1234, 1200, 61});
    for (const std::string& extra : {std::string("\n"), std::string(" "), std::string("0"),
                                     std::string("x"), std::string("\0", 1),
                                     std::string("\0junk", 5), std::string(200, '\n')}) {
        EXPECT_FALSE(parses(text + extra)) << "appended " << extra.size() << " bytes";
        EXPECT_FALSE(parses(extra + text)) << "prepended " << extra.size() << " bytes";
    }
    const char* const others[] = {
        "snowflake lease 4\nepoch_unix_ms 1704067200000\nlease_ms 1234\nclock_ms 1\nworker_id 1\n",
        "snowflake lease 5\nepoch_unix_ms 1704067200000\nlease_ms 1234\nclock_ms 1\nworker_id 1\n",
        "snowflake lease 6\nepoch_unix_ms 1704067200000\nlease_ms 1234\nclock_ms 1\nworker_id 1\n",
        "snowflake lease 0\nepoch_unix_ms 1704067200000\nlease_ms 1234\n",
        "snowflake lease 3\nepoch_unix_ms 1704067200000\nlease_ms 1234\nclock_ms 1\n",  // no worker
        "snowflake lease 3\nepoch_unix_ms 1704067200000\nlease_ms 1234\nclock_ms 1\nworker_id 65536\n",
        "snowflake lease 3\nepoch_unix_ms 1704067200000\nlease_ms 1234\nclock_ms 1\nworker_id -1\n",
        "snowflake lease 3\nepoch_unix_ms 1704067200000\nlease_ms 1234\nclock_ms 1\nworker_id 01\n",
        "snowflake lease 3\nepoch_unix_ms 1704067200000\nlease_ms 1234\nclock_ms 1\nworker_id none\nx",
        "snowflake lease 2\nepoch_unix_ms 1704067200000\nlease_ms 1234\nclock_ms 1\nworker_id 1\n",
        "snowflake lease 2\nepoch_unix_ms 1704067200000\nlease_ms 1234\n",  // no clock
        "snowflake lease 2\nepoch_unix_ms 1704067200000\nlease_ms 1234\nclock_ms 01\n",
        "snowflake lease 2\nepoch_unix_ms 1704067200000\nlease_ms 1234\nclock_ms 9223372036854775808\n",
        "snowflake lease 2\nepoch_unix_ms 1704067200000\nclock_ms 1\nlease_ms 1234\n",
        "snowflake lease 1\nepoch_unix_ms 1704067200000\nlease_ms 1234",    // no newline
        "snowflake lease 1\r\nepoch_unix_ms 1704067200000\r\nlease_ms 1234\r\n",
        "snowflake lease 1\nepoch_unix_ms -1704067200000\nlease_ms 1234\n",
        "snowflake lease 1\nepoch_unix_ms 1704067200000\nlease_ms -1\n",
        "snowflake lease 1\nepoch_unix_ms 1704067200000\nlease_ms +1234\n",
        "snowflake lease 1\nepoch_unix_ms 1704067200000\nlease_ms 01234\n",  // not as written
        "snowflake lease 1\nepoch_unix_ms 01704067200000\nlease_ms 1234\n",
        "snowflake lease 1\nepoch_unix_ms 1704067200000\nlease_ms \n",
        "snowflake lease 1\nepoch_unix_ms \nlease_ms 1234\n",
        "snowflake lease 1\nlease_ms 1234\nepoch_unix_ms 1704067200000\n",
        "snowflake lease 1\nepoch_unix_ms 1704067200000\nlease_ms 9223372036854775808\n",  // > kMaxId
        "snowflake lease 1\nepoch_unix_ms 9223372036854775808\nlease_ms 1234\n",
    };
    for (const char* other : others) EXPECT_FALSE(parses(other)) << other;
}

// The fenced list: ascending, distinct, each a worker id, at most kMaxFenced.
TEST(LeaseText, RejectsABadFencedList) {
    const std::string good = formatted(Lease{kDefaultEpoch, 5, 4, 3, 2049, 1, 2, {7, 41}});
    ASSERT_TRUE(parses(good));
    for (const char* fenced : {"fenced 41 7", "fenced 7 7", "fenced 65536", "fenced", "fenced ", "fenced 7  41",
                               "fenced 07", "fenced none 7", "fenced 0 1 2 3 4 5 6 7 8", "fenced -1"}) {
        std::string body = good.substr(0, good.find("fenced")) + fenced + good.substr(good.find("\ndirectory"));
        body = body.substr(0, body.rfind("crc32c "));
        char crc[32];
        std::snprintf(crc, sizeof crc, "crc32c %08x\n", crc32c(body.data(), body.size()));
        EXPECT_FALSE(parses(body + crc)) << fenced;  // a valid checksum, a bad list
    }
}

// The layout line: snowflake.layout's grammar, as format_node_layout writes
// it, within generation's bounds.
TEST(LeaseText, RejectsABadLayout) {
    const std::string good = formatted(Lease{kDefaultEpoch, 5, 4, 3, 2049, 1});
    ASSERT_TRUE(parses(good));
    for (const char* layout : {"layout", "layout ", "layout js53", "layout time=41 worker=10", "layout time=41 worker=10 sequence=12 ",
                               "layout unit=1ms time=41 worker=10 sequence=12", "layout time=41 worker=17 sequence=5",
                               "layout time=42 worker=10 sequence=12", "layout epoch=0 time=41 worker=10 sequence=12"}) {
        std::string body = good.substr(0, good.find("layout")) + layout + "\n";
        char crc[32];
        std::snprintf(crc, sizeof crc, "crc32c %08x\n", crc32c(body.data(), body.size()));
        EXPECT_FALSE(parses(body + crc)) << layout;  // a valid checksum, a bad layout
    }
}

TEST(LeaseText, FailedParseLeavesTheLeaseAlone) {
    Lease lease{5, 6, 7};
    const std::string text = "snowflake lease 5\nepoch_unix_ms 1\nlease_ms 2\nclock_ms x\n";
    EXPECT_EQ(parse_lease(text.data(), text.size(), lease), LeaseText::Malformed);
    EXPECT_EQ(lease, (Lease{5, 6, 7}));
}

}  // namespace
}  // namespace snowflake

namespace snowflake {
namespace {

// The WAL record: its own fixed, versioned struct, every byte set.
// ---- the release file (pg_snowflake/registry_release) ----

PendingRelease sample_release() {
    PendingRelease release;
    release.worker_id = 1023;
    release.fencing_epoch = 77;
    std::memcpy(release.holder, "0123456789abcdef0123456789abcdef", 33);
    release.used_until_ms = 1764000000123;
    return release;
}

std::string formatted_release(const PendingRelease& release) {
    char text[kReleaseTextMax];
    return std::string(text, format_release(release, text));
}

TEST(ReleaseText, ExactFormatRoundTrips) {
    const std::string body =
        "snowflake registry release 1\nworker_id 1023\nfencing_epoch 77\n"
        "holder 0123456789abcdef0123456789abcdef\nused_until_ms 1764000000123\n";
    char crc[32];
    std::snprintf(crc, sizeof crc, "crc32c %08x\n", crc32c(body.data(), body.size()));
    const std::string text = formatted_release(sample_release());
    EXPECT_EQ(text, body + crc);
    PendingRelease parsed;
    ASSERT_TRUE(parse_release(text.data(), text.size(), parsed));
    EXPECT_TRUE(parsed == sample_release());
    // the longest release fits
    PendingRelease longest = sample_release();
    longest.worker_id = kMaxAnyWorker;
    longest.fencing_epoch = longest.used_until_ms = std::numeric_limits<std::int64_t>::max();
    EXPECT_LT(formatted_release(longest).size(), kReleaseTextMax);
}

TEST(ReleaseText, RefusesWhatItCannotWrite) {
    PendingRelease release = sample_release();
    release.worker_id = kMaxAnyWorker + 1;
    EXPECT_EQ(formatted_release(release), "");
    release = sample_release();
    release.used_until_ms = -1;
    EXPECT_EQ(formatted_release(release), "");
    release = sample_release();
    release.holder[5] = 'G';
    EXPECT_EQ(formatted_release(release), "");
    release = sample_release();
    release.holder[31] = '\0';
    EXPECT_EQ(formatted_release(release), "");
}

// Every flipped bit, every truncation and anything appended is refused, and
// leaves the release as it was.
TEST(ReleaseText, RefusesEveryDamage) {
    const std::string text = formatted_release(sample_release());
    PendingRelease parsed;
    for (std::size_t i = 0; i < text.size(); ++i) {
        for (int bit = 0; bit < 8; ++bit) {
            std::string flipped = text;
            flipped[i] = static_cast<char>(flipped[i] ^ (1 << bit));
            EXPECT_FALSE(parse_release(flipped.data(), flipped.size(), parsed)) << "byte " << i << " bit " << bit;
        }
        EXPECT_FALSE(parse_release(text.data(), i, parsed)) << "cut at " << i;
    }
    const std::string longer = text + "x";
    EXPECT_FALSE(parse_release(longer.data(), longer.size(), parsed));
    EXPECT_EQ(parsed.worker_id, 0u);
}

TEST(LeaseRecordTest, RoundTripsEveryField) {
    Lease lease{kDefaultEpoch, 123456789, 123446789, 255, 2049, 131077, 2, {7, 300}};
    lease.layout = make_layout(10, 39, 16, 8, true);
    const LeaseRecord record = lease_record(lease);
    EXPECT_EQ(record.version, 1u);  // without a pending worker id: as 1.0 writes it
    EXPECT_EQ(record_size(record), kLeaseRecordV1Size);
    Lease back{};
    ASSERT_TRUE(lease_of_record(&record, record_size(record), back));
    lease.directory_host = lease.directory_inode = 0;  // the directory is each node's own, not in the WAL
    EXPECT_EQ(back, lease);
    Lease none{kDefaultEpoch, 5, 4};
    const LeaseRecord r2 = lease_record(none);
    ASSERT_TRUE(lease_of_record(&r2, record_size(r2), back));
    EXPECT_EQ(back.worker_id, kNoWorker);
    EXPECT_EQ(back.layout, kDefaultLayout);
}

// A worker id the settings' files name while another is in effect (F15): in
// the file as a line of its own, in the record as version 2's field.
TEST(LeaseText, RoundTripsAPendingWorkerId) {
    Lease lease{kDefaultEpoch, 1234, 1200, 61, 2049, 7, 1, {3}};
    std::strcpy(lease.host_name.data(), "db-0");
    lease.pending_worker = 62;
    const std::string text = formatted(lease);
    EXPECT_NE(text.find("host_name db-0\npending 62\ncrc32c "), std::string::npos) << text;
    Lease back;
    ASSERT_TRUE(parses(text, &back));
    EXPECT_EQ(back, lease);
    lease.pending_worker = kNoWorker;
    EXPECT_EQ(formatted(lease).find("pending"), std::string::npos);
    const std::string body = text.substr(0, text.size() - kChecksumLine);
    for (const char* bad : {"pending 062\n", "pending -1\n", "pending none\n", "pending 1048576\n", "pending 62\npending 63\n"}) {
        const std::string changed = body.substr(0, body.find("pending")) + bad;
        EXPECT_FALSE(parses(checksummed(changed))) << bad;
    }
}

TEST(LeaseRecordTest, CarriesAPendingWorkerIdAndReadsVersion1) {
    Lease lease{kDefaultEpoch, 5, 4, 3};
    lease.pending_worker = 4;
    const LeaseRecord record = lease_record(lease);
    EXPECT_EQ(record.version, kLeaseRecordVersion);
    EXPECT_EQ(record_size(record), sizeof record);
    Lease back{};
    ASSERT_TRUE(lease_of_record(&record, sizeof record, back));
    EXPECT_EQ(back.pending_worker, 4u);
    // version 1, as 1.0 and earlier 1.1 builds wrote it: its 80 bytes
    LeaseRecord v1 = record;
    v1.version = 1;
    back = Lease{};
    ASSERT_TRUE(lease_of_record(&v1, kLeaseRecordV1Size, back));
    EXPECT_EQ(back.worker_id, 3u);
    EXPECT_EQ(back.pending_worker, kNoWorker);
    EXPECT_FALSE(lease_of_record(&v1, sizeof v1, back));            // version 1 of version 2's size
    EXPECT_FALSE(lease_of_record(&record, kLeaseRecordV1Size, back));  // version 2 cut to version 1's
    LeaseRecord bad = record;
    bad.zero = 1;
    EXPECT_FALSE(lease_of_record(&bad, sizeof bad, back));
    bad = record;
    bad.pending_worker = kMaxAnyWorker + 1;
    EXPECT_FALSE(lease_of_record(&bad, sizeof bad, back));
}

TEST(LeaseRecordTest, RefusesWhatItCannotRead) {
    const LeaseRecord good = lease_record(Lease{kDefaultEpoch, 5, 4, 3});
    Lease back{};
    EXPECT_FALSE(lease_of_record(&good, kLeaseRecordV1Size - 1, back));
    EXPECT_FALSE(lease_of_record(&good, 0, back));
    LeaseRecord bad = good;
    bad.version = 3;
    EXPECT_FALSE(lease_of_record(&bad, record_size(bad), back));
    bad = good;
    bad.worker_bits = 17;
    EXPECT_FALSE(lease_of_record(&bad, record_size(bad), back));
    bad = good;
    bad.fenced_count = kMaxFenced + 1;
    EXPECT_FALSE(lease_of_record(&bad, record_size(bad), back));
    bad = good;
    bad.sequence_above_worker = 2;
    EXPECT_FALSE(lease_of_record(&bad, record_size(bad), back));
}

}  // namespace
}  // namespace snowflake
