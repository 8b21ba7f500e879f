// Other systems' layouts: presets, custom layouts, decoding and range bounds.
// The published ids of each preset are checked in sql/layouts.sql, with sources.
#include "../../src/core/layout_names.hpp"

#include <gtest/gtest.h>

#include <utility>

namespace snowflake {
namespace {

IdLayout parsed(const char* text) {
    IdLayout layout{};
    const char* problem = nullptr;
    EXPECT_TRUE(parse_layout(text, layout, problem)) << text << ": " << (problem ? problem : "");
    return layout;
}

const char* refused(const char* text) {
    IdLayout layout{};
    const char* problem = nullptr;
    EXPECT_FALSE(parse_layout(text, layout, problem)) << text;
    return problem == nullptr ? "" : problem;
}

bool same(const IdLayout& a, const IdLayout& b) {
    return a.epoch_unix_ms == b.epoch_unix_ms && a.unit_ms == b.unit_ms && a.time_bits == b.time_bits &&
           a.worker_bits == b.worker_bits && a.sequence_bits == b.sequence_bits &&
           a.sequence_above_worker == b.sequence_above_worker;
}

TEST(Layouts, PresetsEqualTheirCustomSpelling) {
    EXPECT_TRUE(same(parsed("twitter"), parsed("epoch=1288834974657 time=41 worker=10 sequence=12")));
    EXPECT_TRUE(same(parsed("discord"), parsed("epoch=2015-01-01T00:00:00Z time=42 worker=10 sequence=12")));
    EXPECT_TRUE(same(parsed("instagram"), parsed("epoch=1314220021721 time=41 worker=13 sequence=10")));
    EXPECT_TRUE(same(parsed("sonyflake"),
                     parsed("epoch=2014-09-01 unit=10ms time=39 sequence=8 worker=16")));
    EXPECT_TRUE(same(parsed("pgedge"), parsed("epoch=2023-01-01 time=41 sequence=12 worker=10")));
    EXPECT_TRUE(same(parsed("mastodon"), parsed("epoch=0 unit=1ms time=48 worker=0 sequence=16")));
}

TEST(Layouts, FieldOrderDecidesPlacement) {
    // worker above sequence
    const IdLayout twitter = parsed("twitter");
    const std::uint64_t id = (std::uint64_t{5} << 22) | (std::uint64_t{378} << 12) | 7;
    LayoutFields f = layout_decompose(twitter, id);
    EXPECT_EQ(f.time, 5u);
    EXPECT_EQ(f.worker_id, 378u);
    EXPECT_EQ(f.sequence, 7u);
    // sequence above worker (Sonyflake: 8-bit sequence, then 16-bit machine)
    const IdLayout sonyflake = parsed("sonyflake");
    f = layout_decompose(sonyflake, (std::uint64_t{9} << 24) | (std::uint64_t{255} << 16) | 65535);
    EXPECT_EQ(f.time, 9u);
    EXPECT_EQ(f.sequence, 255u);
    EXPECT_EQ(f.worker_id, 65535u);
}

TEST(Layouts, TimeAndBounds) {
    const IdLayout sonyflake = parsed("sonyflake");
    std::int64_t unix_ms = 0;
    ASSERT_TRUE(layout_unix_ms(sonyflake, 3, unix_ms));
    EXPECT_EQ(unix_ms, 1409529600000 + 30);
    std::uint64_t id = 0;
    // 29 ms after the epoch lies in the third 10 ms unit (time 2)
    ASSERT_EQ(layout_first_id(sonyflake, 1409529600000 + 29, id), BoundResult::Ok);
    EXPECT_EQ(id, std::uint64_t{2} << 24);
    EXPECT_EQ(layout_first_id(sonyflake, 1409529600000 - 1, id), BoundResult::BeforeEpoch);
    EXPECT_EQ(layout_max_time(sonyflake), (std::uint64_t{1} << 39) - 1);
    // 64-bit layouts: the sign bit is the top time bit, so time ends one bit early
    const IdLayout discord = parsed("discord");
    EXPECT_EQ(layout_max_time(discord), (std::uint64_t{1} << 41) - 1);
    ASSERT_EQ(layout_first_id(discord, 1420070400000 + (std::int64_t{1} << 41) - 1, id), BoundResult::Ok);
    EXPECT_EQ(id, ((std::uint64_t{1} << 41) - 1) << 22);
    EXPECT_EQ(layout_first_id(discord, 1420070400000 + (std::int64_t{1} << 41), id), BoundResult::PastEnd);
    EXPECT_TRUE(layout_holds(discord, kMaxId));
}

TEST(Layouts, NarrowCustomLayoutHoldsOnlyItsBits) {
    const IdLayout narrow = parsed("epoch=0 time=20 worker=2 sequence=2");
    EXPECT_TRUE(layout_holds(narrow, (std::uint64_t{1} << 24) - 1));
    EXPECT_FALSE(layout_holds(narrow, std::uint64_t{1} << 24));
    EXPECT_EQ(layout_max_time(narrow), (std::uint64_t{1} << 20) - 1);
    // a wide unit overflowing 64-bit milliseconds is reported, not wrapped
    const IdLayout wide = parsed("epoch=9999-12-31 unit=86400000ms time=63 worker=0 sequence=0");
    std::int64_t unix_ms = 0;
    EXPECT_FALSE(layout_unix_ms(wide, layout_max_time(wide), unix_ms));
}

TEST(Layouts, BadLayoutsSayWhy) {
    constexpr const char* kEpoch =
        "epoch is unix milliseconds or a UTC timestamp (YYYY-MM-DDTHH:MM:SS.fff) from 1970 to 9999";
    constexpr const char* kNeeds = "a custom layout needs epoch, time, worker and sequence";
    constexpr const char* kUnit = "unit is 1ms to 86400000ms";
    const std::pair<const char*, const char*> cases[] = {
        {"Twitter", "unknown layout name"},
        {"", "unknown layout name"},
        {"snowflake", "unknown layout name"},
        {"epoch=0 time=41 worker=10", kNeeds},
        {"time=41 worker=10 sequence=12", kNeeds},
        {"epoch=0 worker=10 time=41 sequence=12", "time is the highest field: give it before worker and sequence"},
        {"epoch=0 time=41 worker=10 sequence=12 time=41", "a key is given twice"},
        {"epoch=0 time=41 worker=20 sequence=12", "the fields take more than 64 bits"},
        {"epoch=0 time=0 worker=10 sequence=12", "time is 1 to 63 bits"},
        {"epoch=0 time=64 worker=0 sequence=0", "time is 1 to 63 bits"},
        {"epoch=0 time=41 worker=32 sequence=0", "worker is 0 to 31 bits"},
        {"epoch=0 time=41 worker=10 sequence=-1", "sequence is 0 to 31 bits"},
        {"epoch=0 unit=0ms time=41 worker=10 sequence=12", kUnit},
        {"epoch=0 unit=10 time=41 worker=10 sequence=12", kUnit},
        {"epoch=0 unit=ms time=41 worker=10 sequence=12", kUnit},
        {"epoch=0 unit=86400001ms time=41 worker=10 sequence=12", kUnit},
        {"epoch=1969-12-31 time=41 worker=10 sequence=12", kEpoch},
        {"epoch=253402300800000 time=41 worker=10 sequence=12", kEpoch},
        {"epoch=x time=41 worker=10 sequence=12", kEpoch},
        {"epoch=0 time=41 node=10 sequence=12", "the keys are epoch, unit, time, worker and sequence"},
        {"epoch=0 time=41 worker=10 sequence", "every word of a custom layout is key=value"},
        {"epoch=0 time=41 worker=10 sequence=12 x=0000000000000000000000000000000000000000000000",
         "a word of the layout is too long"},
    };
    for (const auto& [text, problem] : cases) EXPECT_STREQ(refused(text), problem) << text;
}

}  // namespace
}  // namespace snowflake
