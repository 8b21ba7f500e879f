// The generator in every kind of layout snowflake.layout takes:
// the default, 41/8/14, js53 and Sonyflake-style 10 ms units with the
// sequence above the worker. Each runs bursts above its cap, restarts above
// its lease and hands over to another worker id; every id must be unique,
// increasing, decode to the worker and time it was made at, and fit the layout.
#include "../../src/core/layout_names.hpp"
#include "helpers.hpp"

#include <gtest/gtest.h>

#include <string>

namespace snowflake {
namespace {

using test::kDefaultEpoch;

struct Case {
    const char* setting;
    std::uint32_t worker_id;  // the highest the layout holds
};

class GeneratorLayouts : public testing::TestWithParam<Case> {
protected:
    Layout layout{};
    GeneratorState state{};
    Config config{kDefaultEpoch, 5, 100};
    std::int64_t clock_unix_ms = kDefaultEpoch + 10'000'000;
    std::uint64_t last = 0;
    std::uint64_t issued = 0;

    void SetUp() override {
        const char* problem = nullptr;
        ASSERT_TRUE(parse_node_layout(GetParam().setting, layout, problem)) << problem;
        config.layout = layout;
        init_state(state, layout, GetParam().worker_id, false, 0, 0);
        state.lease_units.store(layout.max_time);
    }

    std::uint64_t now_units() const {
        return static_cast<std::uint64_t>((clock_unix_ms - kDefaultEpoch) / layout.unit_ms);
    }

    // Reserves up to `wanted` ids, checks them one by one; the status.
    Status take(std::uint64_t wanted) {
        const Reservation r = reserve(state, config, wanted, [this] { return clock_unix_ms; });
        if (r.status != Status::Granted) return r.status;
        std::uint64_t id = r.first;
        for (std::uint64_t i = 0; i < r.count; ++i, id = advance(id, 1, layout)) {
            EXPECT_GT(id, last) << "not increasing";
            const int bits = layout.time_bits + layout.worker_bits + layout.sequence_bits;
            EXPECT_EQ(id >> bits, 0u) << "past the layout's " << bits << " bits";
            const Fields f = decompose(id, layout);
            EXPECT_EQ(f.worker_id, worker_in_effect(state));
            EXPECT_GE(f.time_ms, now_units());
            EXPECT_LE(f.time_ms, now_units() + config.max_lead_units);
            EXPECT_EQ(compose(f.time_ms, f.worker_id, f.sequence, layout), id);
            last = id;
        }
        EXPECT_EQ(state.last_id.load(), last);
        issued += r.count;
        return r.status;
    }
};

TEST_P(GeneratorLayouts, BurstsHitTheLayoutsCapAndWait) {
    // Within one clock reading: the lead window (now .. now + max_lead) holds
    // (max_lead + 1) units of ids_per_unit ids, then the caller must wait.
    while (take(1000) == Status::Granted) {
    }
    EXPECT_EQ(issued, (config.max_lead_units + 1) * layout.ids_per_unit);
    const Reservation r = reserve(state, config, 1, [this] { return clock_unix_ms; });
    EXPECT_EQ(r.status, Status::WaitForClock);
    // A unit later, exactly one unit's ids more.
    clock_unix_ms += layout.unit_ms;
    const std::uint64_t before = issued;
    while (take(7) == Status::Granted) {
    }
    EXPECT_EQ(issued - before, layout.ids_per_unit);
}

TEST_P(GeneratorLayouts, SingleIdsAcrossManyUnits) {
    for (int unit = 0; unit < 50; ++unit, clock_unix_ms += layout.unit_ms) {
        for (int i = 0; i < 3; ++i) ASSERT_EQ(take(1), Status::Granted);
        EXPECT_EQ(time_of(last, layout), now_units());  // no borrowing at 3 ids a unit
    }
}

TEST_P(GeneratorLayouts, RestartContinuesAboveTheLease) {
    ASSERT_EQ(take(10), Status::Granted);
    const std::uint64_t lease = time_of(last, layout) + 3;
    init_state(state, layout, GetParam().worker_id, true, lease, now_units());
    state.lease_units.store(layout.max_time);
    ASSERT_EQ(take(1), Status::Granted);
    EXPECT_GT(time_of(last, layout), lease);
}

TEST_P(GeneratorLayouts, HandOverToALowerWorkerStaysIncreasing) {
    ASSERT_EQ(take(100), Status::Granted);
    hand_over(state, 0);
    ASSERT_EQ(take(100), Status::Granted);  // checks worker 0 and increase
    std::uint64_t replaced = 0;
    ASSERT_TRUE(handed_over_last(state, replaced));
    EXPECT_EQ(decompose(replaced, layout).worker_id, GetParam().worker_id);
}

TEST_P(GeneratorLayouts, TheLastUnitIsTheEnd) {
    const std::int64_t end_ms = static_cast<std::int64_t>(layout.max_time) * layout.unit_ms;
    clock_unix_ms = kDefaultEpoch + end_ms;
    ASSERT_EQ(take(1), Status::Granted);
    EXPECT_EQ(time_of(last, layout), layout.max_time);
    clock_unix_ms = kDefaultEpoch + end_ms + layout.unit_ms;
    const Reservation r = reserve(state, config, 1, [this] { return clock_unix_ms; });
    EXPECT_EQ(r.status, Status::TimeExhausted);
}

INSTANTIATE_TEST_SUITE_P(Layouts, GeneratorLayouts,
                         testing::Values(Case{"default", 1023}, Case{"time=41 worker=8 sequence=14", 255},
                                         Case{"js53", 63}, Case{"sonyflake_style", 65535},
                                         Case{"unit=10ms time=39 worker=16 sequence=8", 65535}),
                         [](const testing::TestParamInfo<Case>& info) {
                             std::string name;
                             for (const char* c = info.param.setting; *c; ++c)
                                 name += std::isalnum(static_cast<unsigned char>(*c)) ? *c : '_';
                             return name;
                         });

// snowflake.layout's grammar and presets, and what it refuses.
TEST(NodeLayout, PresetsAndCustom) {
    Layout l{};
    const char* problem = nullptr;
    ASSERT_TRUE(parse_node_layout("default", l, problem));
    EXPECT_EQ(l, kDefaultLayout);
    ASSERT_TRUE(parse_node_layout("time=41 worker=10 sequence=12", l, problem));
    EXPECT_EQ(l, kDefaultLayout);
    ASSERT_TRUE(parse_node_layout("js53", l, problem));
    EXPECT_EQ(l, make_layout(1, 41, 6, 6, false));
    // js53: every id below 2^53, for at least 60 years
    EXPECT_EQ(l.time_bits + l.worker_bits + l.sequence_bits, 53);
    EXPECT_GE(static_cast<double>(l.max_time + 1) * static_cast<double>(l.unit_ms), 60 * 365.25 * 86400e3);
    ASSERT_TRUE(parse_node_layout("sonyflake_style", l, problem));
    EXPECT_EQ(l, make_layout(10, 39, 16, 8, true));
    // "sonyflake" means Sonyflake's layout, its epoch included: taken with that epoch only
    EXPECT_FALSE(parse_node_layout("sonyflake", l, problem));
    EXPECT_NE(std::string(problem).find("sonyflake_style"), std::string::npos) << problem;
    EXPECT_FALSE(parse_node_layout("sonyflake", 1704067200000, l, problem));
    l = kDefaultLayout;
    ASSERT_TRUE(parse_node_layout("sonyflake", kSonyflakeEpochUnixMs, l, problem));
    EXPECT_EQ(l, make_layout(10, 39, 16, 8, true));
    IdLayout sony{};
    ASSERT_TRUE(parse_layout("sonyflake", sony, problem));
    EXPECT_EQ(sony.epoch_unix_ms, kSonyflakeEpochUnixMs);
    EXPECT_EQ(static_cast<const Layout&>(sony), l);
    char text[kLayoutTextMax];
    format_node_layout(l, text);
    EXPECT_STREQ(text, "unit=10ms time=39 sequence=8 worker=16");
    format_node_layout(kDefaultLayout, text);
    EXPECT_STREQ(text, "time=41 worker=10 sequence=12");
    for (const char* bad : {"", "twitter", "time=41 worker=10", "time=42 worker=10 sequence=12",
                            "time=41 worker=17 sequence=5", "time=41 worker=0 sequence=22",
                            "time=19 worker=10 sequence=12", "time=41 worker=10 sequence=0",
                            "unit=0ms time=41 worker=10 sequence=12", "unit=1001ms time=41 worker=10 sequence=12",
                            "epoch=0 time=41 worker=10 sequence=12", "worker=10 time=41 sequence=12"}) {
        problem = nullptr;
        EXPECT_FALSE(parse_node_layout(bad, l, problem)) << bad;
        EXPECT_NE(problem, nullptr) << bad;
    }
}

}  // namespace
}  // namespace snowflake
