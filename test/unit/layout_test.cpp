// The id layout: compose/decompose, advance, successor, ids_until_end_of.
#include "helpers.hpp"

#include <gtest/gtest.h>

#include <tuple>

namespace snowflake {
namespace {

constexpr std::uint64_t kSign = std::uint64_t{1} << 63;

TEST(Layout, Constants) {
    EXPECT_EQ(kMaxTime, 2199023255551u);  // 2^41 - 1
    EXPECT_EQ(kMaxWorker, 1023u);
    EXPECT_EQ(kMaxSequence, 4095u);
    EXPECT_EQ(kIdsPerMs, 4096u);
    EXPECT_EQ(kMaxId, 9223372036854775807u);
}

TEST(Layout, FieldsSitAtTheirBits) {
    EXPECT_EQ(compose(1, 0, 0), std::uint64_t{1} << 22);
    EXPECT_EQ(compose(0, 1, 0), std::uint64_t{1} << 12);
    EXPECT_EQ(compose(0, 0, 1), 1u);
    EXPECT_EQ(compose(kMaxTime, 0, 0), kMaxId & ~std::uint64_t{0x3FFFFF});
    EXPECT_EQ(compose(0, kMaxWorker, 0), std::uint64_t{0x3FF000});
    EXPECT_EQ(compose(0, 0, kMaxSequence), std::uint64_t{0xFFF});
    EXPECT_EQ(compose(kMaxTime, kMaxWorker, kMaxSequence), kMaxId);
    EXPECT_EQ(decompose(kMaxId), (Fields{kMaxTime, 1023, 4095}));
    EXPECT_EQ(decompose(0), (Fields{0, 0, 0}));
    EXPECT_EQ(compose(1, 2, 3), 4194304u + 8192u + 3u);
    EXPECT_EQ(decompose(7167350074945572864u), (Fields{1708829420792, 1, 0}));
}

// Every combination of each field's limits (and a value inside) round-trips.
class LayoutRoundTrip
    : public testing::TestWithParam<std::tuple<std::uint64_t, std::uint32_t, std::uint32_t>> {};

TEST_P(LayoutRoundTrip, ComposeDecompose) {
    const auto [time_ms, worker, sequence] = GetParam();
    const std::uint64_t id = compose(time_ms, worker, sequence);
    EXPECT_EQ(decompose(id), (Fields{time_ms, worker, sequence}));
    EXPECT_EQ(time_of(id), time_ms);
    EXPECT_EQ(id & kSign, 0u) << "ids are positive bigints";
    EXPECT_LE(id, kMaxId);
    EXPECT_EQ(compose(decompose(id).time_ms, decompose(id).worker_id, decompose(id).sequence), id);
}

INSTANTIATE_TEST_SUITE_P(Limits, LayoutRoundTrip,
                         testing::Combine(testing::Values(std::uint64_t{0}, std::uint64_t{1},
                                                          std::uint64_t{1708809431}, kMaxTime - 1,
                                                          kMaxTime),
                                          testing::Values(0u, 1u, 512u, 1022u, 1023u),
                                          testing::Values(0u, 1u, 2048u, 4094u, 4095u)));

TEST(Layout, OrderIsTimeThenWorkerThenSequence) {
    EXPECT_LT(compose(7, kMaxWorker, kMaxSequence), compose(8, 0, 0));
    EXPECT_LT(compose(7, 3, kMaxSequence), compose(7, 4, 0));
    EXPECT_LT(compose(7, 3, 9), compose(7, 3, 10));
}

struct AdvanceCase {
    Fields from;
    std::uint64_t steps;
    Fields to;
};

void PrintTo(const AdvanceCase& c, std::ostream* os) {
    PrintTo(c.from, os);
    *os << " + " << c.steps;
}

class LayoutAdvance : public testing::TestWithParam<AdvanceCase> {};

TEST_P(LayoutAdvance, CarriesSequenceIntoNextMs) {
    const AdvanceCase& c = GetParam();
    const std::uint64_t from = compose(c.from.time_ms, c.from.worker_id, c.from.sequence);
    EXPECT_EQ(decompose(advance(from, c.steps)), c.to);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LayoutAdvance,
    testing::Values(AdvanceCase{{100, 5, 7}, 0, {100, 5, 7}},
                    AdvanceCase{{100, 5, 7}, 1, {100, 5, 8}},
                    AdvanceCase{{100, 5, 4094}, 1, {100, 5, 4095}},
                    AdvanceCase{{100, 5, 4095}, 1, {101, 5, 0}},
                    AdvanceCase{{100, 5, 0}, 4096, {101, 5, 0}},
                    AdvanceCase{{100, 5, 10}, 3 * 4096 + 5, {103, 5, 15}},
                    AdvanceCase{{100, 1023, 4095}, 1, {101, 1023, 0}},
                    AdvanceCase{{0, 0, 0}, 4095, {0, 0, 4095}},
                    AdvanceCase{{kMaxTime - 1, 1023, 4000}, 96, {kMaxTime, 1023, 0}}));

TEST(Layout, AdvanceMatchesRepeatedSuccessor) {
    std::uint64_t id = compose(50, 9, 4090);
    const std::uint64_t start = id;
    for (std::uint64_t steps = 1; steps <= 5000; ++steps) {
        id = successor(id, 9);
        ASSERT_EQ(advance(start, steps), id) << steps;
    }
}

struct SuccessorCase {
    const char* name;
    Fields last;
    std::uint32_t worker;
    Fields expected;
};

void PrintTo(const SuccessorCase& c, std::ostream* os) { *os << c.name; }

class LayoutSuccessor : public testing::TestWithParam<SuccessorCase> {};

TEST_P(LayoutSuccessor, SmallestGreaterIdOfWorker) {
    const SuccessorCase& c = GetParam();
    const std::uint64_t last = compose(c.last.time_ms, c.last.worker_id, c.last.sequence);
    const std::uint64_t next = successor(last, c.worker);
    EXPECT_EQ(decompose(next), c.expected);
    EXPECT_GT(next, last);
    // Nothing of this worker lies strictly between: the id just before `next`
    // in this worker's stream is not greater than `last`.
    if (c.expected.sequence > 0) {
        EXPECT_LE(next - 1, last);
    } else if (c.expected.time_ms > 0) {
        EXPECT_LE(compose(c.expected.time_ms - 1, c.worker, kMaxSequence), last);
    }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LayoutSuccessor,
    testing::Values(SuccessorCase{"same_worker", {100, 5, 7}, 5, {100, 5, 8}},
                    SuccessorCase{"same_worker_seq0", {100, 5, 0}, 5, {100, 5, 1}},
                    SuccessorCase{"same_worker_last_seq", {100, 5, 4094}, 5, {100, 5, 4095}},
                    SuccessorCase{"sequence_exhausted", {100, 5, 4095}, 5, {101, 5, 0}},
                    SuccessorCase{"higher_worker", {100, 5, 7}, 6, {100, 6, 0}},
                    SuccessorCase{"higher_worker_seq_full", {100, 5, 4095}, 1023, {100, 1023, 0}},
                    SuccessorCase{"lower_worker", {100, 5, 0}, 4, {101, 4, 0}},
                    SuccessorCase{"lower_worker_zero", {100, 1023, 4095}, 0, {101, 0, 0}},
                    SuccessorCase{"worker_max_exhausted", {100, 1023, 4095}, 1023, {101, 1023, 0}},
                    SuccessorCase{"from_zero", {0, 0, 0}, 0, {0, 0, 1}}),
    [](const testing::TestParamInfo<SuccessorCase>& info) { return info.param.name; });

TEST(Layout, SuccessorOfTheLastIdLeavesTheLayout) {
    // The caller (reserve) detects this as TimeExhausted; it must not wrap to a small id.
    EXPECT_GT(time_of(successor(kMaxId, 1023)), kMaxTime);
    EXPECT_GT(time_of(successor(kMaxId, 0)), kMaxTime);
}

struct UntilEndCase {
    Fields first;
    std::uint64_t last_ms;
    std::uint64_t expected;
};

void PrintTo(const UntilEndCase& c, std::ostream* os) {
    PrintTo(c.first, os);
    *os << " through ms " << c.last_ms;
}

class LayoutIdsUntilEndOf : public testing::TestWithParam<UntilEndCase> {};

TEST_P(LayoutIdsUntilEndOf, CountsThroughLastMs) {
    const UntilEndCase& c = GetParam();
    const std::uint64_t first = compose(c.first.time_ms, c.first.worker_id, c.first.sequence);
    const std::uint64_t n = ids_until_end_of(first, c.last_ms);
    EXPECT_EQ(n, c.expected);
    if (n > 0) {
        // The n-th id is the last of last_ms; one more would be past it.
        EXPECT_EQ(decompose(advance(first, n - 1)),
                  (Fields{c.last_ms, c.first.worker_id, static_cast<std::uint32_t>(kMaxSequence)}));
        EXPECT_EQ(time_of(advance(first, n)), c.last_ms + 1);
    }
}

INSTANTIATE_TEST_SUITE_P(Cases, LayoutIdsUntilEndOf,
                         testing::Values(UntilEndCase{{100, 5, 0}, 100, 4096},
                                         UntilEndCase{{100, 5, 4095}, 100, 1},
                                         UntilEndCase{{100, 5, 10}, 100, 4086},
                                         UntilEndCase{{100, 5, 10}, 102, 3 * 4096 - 10},
                                         UntilEndCase{{100, 5, 10}, 99, 0},
                                         UntilEndCase{{100, 5, 10}, 0, 0},
                                         UntilEndCase{{0, 0, 0}, 0, 4096},
                                         UntilEndCase{{kMaxTime, 1023, 0}, kMaxTime, 4096}));

}  // namespace
}  // namespace snowflake
