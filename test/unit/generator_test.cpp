// The generator, single-threaded, driven by a fake clock.
#include "helpers.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace snowflake {
namespace {

using test::kDefaultEpoch;

constexpr std::uint64_t kT = 10'000'000;  // a "now": ms since the epoch
constexpr std::uint64_t kHour = 3'600'000;

class Generator : public testing::Test {
protected:
    GeneratorState state{};
    Config config{kDefaultEpoch, /*max_lead_units=*/10, /*lease_span_units=*/100};
    std::int64_t clock_unix_ms = kDefaultEpoch + static_cast<std::int64_t>(kT);
    std::uint64_t last_granted = 0;  // highest id handed out so far (or issued before a restart)

    void SetUp() override {
        init_state(state, kDefaultLayout, /*worker_id=*/5, false, 0, 0);
        state.lease_units.store(kMaxTime);  // tests of the lease set it themselves
    }

    void set_clock(std::uint64_t ms_since_epoch) {
        clock_unix_ms = kDefaultEpoch + static_cast<std::int64_t>(ms_since_epoch);
    }

    // One reserve() on the fake clock; a grant must be above everything granted before.
    Reservation call(std::uint64_t wanted = 1) {
        const std::uint64_t last_before = state.last_id.load();
        const Reservation r = reserve(state, config, wanted, [this] { return clock_unix_ms; });
        if (r.status == Status::Granted) {
            EXPECT_GE(r.count, 1u);
            EXPECT_LE(r.count, wanted);
            EXPECT_GT(r.first, last_granted) << "a smaller or duplicate id";
            EXPECT_EQ(decompose(r.first).worker_id, worker_in_effect(state));
            last_granted = advance(r.first, r.count - 1);
            EXPECT_EQ(state.last_id.load(), last_granted);
        } else {
            EXPECT_EQ(state.last_id.load(), last_before) << "a refusal issued ids";
        }
        return r;
    }

    // One id, which must be granted.
    Fields next() {
        const Reservation r = call();
        EXPECT_EQ(r.status, Status::Granted);
        return decompose(r.first);
    }

    // n single ids, each granted with no new regression reported; false on the first refusal.
    bool take(std::uint64_t n) {
        for (std::uint64_t i = 0; i < n; ++i) {
            const Reservation r = call();
            if (r.status != Status::Granted || r.regression_units != 0) {
                ADD_FAILURE() << "call " << i << " of " << n << ": " << status_name(r.status)
                              << ", regression_units " << r.regression_units;
                return false;
            }
        }
        return true;
    }

    Fields last() const { return decompose(last_granted); }
};

TEST_F(Generator, IdCarriesTheCurrentMs) {
    EXPECT_EQ(next(), (Fields{kT, 5, 0}));
    EXPECT_EQ(next(), (Fields{kT, 5, 1}));
    set_clock(kT + 7);
    EXPECT_EQ(next(), (Fields{kT + 7, 5, 0}));
    EXPECT_EQ(state.clock_high.load(), kT + 7);
    EXPECT_EQ(state.borrowed_units.load(), 0u);
    EXPECT_EQ(state.regressions.load(), 0u);
}

TEST_F(Generator, IdsStrictlyIncreaseAndFollowTheClock) {
    // 3000 ids per ms fit in the sequence: every id carries exactly the clock's ms.
    for (std::uint64_t i = 0; i < 60'000; ++i) {
        const std::uint64_t now = kT + i / 3000;
        set_clock(now);
        const Reservation r = call();
        ASSERT_EQ(r.status, Status::Granted);
        ASSERT_EQ(time_of(r.first), now) << i;
    }
    EXPECT_EQ(state.borrowed_units.load(), 0u);
}

TEST_F(Generator, BorrowsNextMsThenWaitsForTheClockAtMaxLead) {
    config.max_lead_units = 3;
    ASSERT_TRUE(take(kIdsPerMs));
    EXPECT_EQ(last(), (Fields{kT, 5, 4095}));
    EXPECT_EQ(state.borrowed_units.load(), 0u);

    EXPECT_EQ(next(), (Fields{kT + 1, 5, 0})) << "4097th id of a ms borrows the next";
    EXPECT_EQ(state.borrowed_units.load(), 1u);

    // Through the end of kT + max_lead, then the lead is used up.
    ASSERT_TRUE(take(3 * kIdsPerMs - 1));
    EXPECT_EQ(last(), (Fields{kT + 3, 5, 4095}));
    EXPECT_EQ(state.borrowed_units.load(), 3u);
    Reservation r = call();
    ASSERT_EQ(r.status, Status::WaitForClock);
    EXPECT_EQ(r.wait_until_units, kT + 1);
    EXPECT_EQ(call(1000).status, Status::WaitForClock) << "a batch waits too";

    // Once the clock reads wait_until_units, generation goes on.
    set_clock(r.wait_until_units);
    EXPECT_EQ(next(), (Fields{kT + 4, 5, 0}));
    EXPECT_EQ(state.borrowed_units.load(), 4u);
    ASSERT_TRUE(take(kIdsPerMs - 1));
    r = call();
    ASSERT_EQ(r.status, Status::WaitForClock);
    EXPECT_EQ(r.wait_until_units, kT + 2);
}

TEST_F(Generator, ZeroLeadWaitsForEveryNextMs) {
    config.max_lead_units = 0;
    ASSERT_TRUE(take(kIdsPerMs));
    const Reservation r = call();
    ASSERT_EQ(r.status, Status::WaitForClock);
    EXPECT_EQ(r.wait_until_units, kT + 1);
    set_clock(kT + 1);
    EXPECT_EQ(next(), (Fields{kT + 1, 5, 0}));
    EXPECT_EQ(state.borrowed_units.load(), 0u);
}

// The clock steps back by GetParam() ms while running.
class GeneratorClockBack : public Generator, public testing::WithParamInterface<std::uint64_t> {};

TEST_P(GeneratorClockBack, KeepsTheLastTimeAndCountsOncePerEvent) {
    const std::uint64_t step = GetParam();
    ASSERT_TRUE(take(10));

    set_clock(kT - step);
    Reservation r = call();
    ASSERT_EQ(r.status, Status::Granted) << "no waiting because the clock went back";
    EXPECT_EQ(decompose(r.first), (Fields{kT, 5, 10})) << "ids keep the last time";
    EXPECT_EQ(r.regression_units, step);
    EXPECT_EQ(state.regressions.load(), 1u);
    EXPECT_EQ(state.clock_high.load(), kT) << "the highest reading stays";

    // Still behind, even moving forward: same event, counting on through the
    // sequence into borrowed ms (take() fails on any regression_units > 0).
    ASSERT_TRUE(take(5000));
    set_clock(kT - step + 1);
    ASSERT_TRUE(take(5000));
    EXPECT_EQ(last(), (Fields{kT + 2, 5, 10 + 1 + 10'000 - 2 * 4096 - 1}));
    EXPECT_EQ(state.regressions.load(), 1u);

    // Behind the clock the lead still counts from the highest reading.
    r = call(std::numeric_limits<std::uint64_t>::max());
    ASSERT_EQ(r.status, Status::Granted);
    EXPECT_EQ(last(), (Fields{kT + config.max_lead_units, 5, 4095}));
    r = call();
    ASSERT_EQ(r.status, Status::WaitForClock);
    EXPECT_EQ(r.wait_until_units, kT + 1);
    EXPECT_EQ(r.regression_units, 0u);

    // The clock catches up: ids follow it again, nothing counted.
    set_clock(kT + 20);
    EXPECT_EQ(next(), (Fields{kT + 20, 5, 0}));
    EXPECT_EQ(state.regressions.load(), 1u);

    // A second step back is a new event.
    set_clock(kT + 20 - step);
    r = call();
    ASSERT_EQ(r.status, Status::Granted);
    EXPECT_EQ(decompose(r.first), (Fields{kT + 20, 5, 1}));
    EXPECT_EQ(r.regression_units, step);
    EXPECT_EQ(state.regressions.load(), 2u);
    ASSERT_TRUE(take(100));
}

INSTANTIATE_TEST_SUITE_P(Steps, GeneratorClockBack,
                         testing::Values(std::uint64_t{2}, std::uint64_t{5}, std::uint64_t{999},
                                         kHour),
                         [](const testing::TestParamInfo<std::uint64_t>& info) {
                             return std::to_string(info.param) + "ms";
                         });

TEST_F(Generator, ClockBackAfterCatchingUpExactlyIsANewEvent) {
    ASSERT_TRUE(take(3));
    set_clock(kT - 5);
    EXPECT_EQ(call().regression_units, 5u);
    set_clock(kT);  // reads the highest value again: caught up
    ASSERT_TRUE(take(3));
    set_clock(kT - 3);
    EXPECT_EQ(call().regression_units, 3u);
    EXPECT_EQ(state.regressions.load(), 2u);
}

// Interleavings of two callers, made deterministic: the clock callable of the
// outer reserve() runs other callers' reserve() between the outer caller's
// load of the state and its use of the reading, as a preempted backend would.
TEST_F(Generator, ReadingTakenBeforeAStepBackDoesNotEndTheEvent) {
    ASSERT_TRUE(take(1));  // clock_high = kT
    std::vector<std::uint64_t> reported;
    auto behind = [&] {   // another caller, on the clock stepped back 50 ms
        const Reservation r = reserve(state, config, 1, [&] { return clock_unix_ms; });
        EXPECT_EQ(r.status, Status::Granted);
        if (r.regression_units) reported.push_back(r.regression_units);
    };
    // The outer caller read kT + 1 just before the step; meanwhile another saw the step.
    const Reservation r = reserve(state, config, 1, [&] {
        set_clock(kT - 50);
        behind();
        return kDefaultEpoch + static_cast<std::int64_t>(kT) + 1;
    });
    ASSERT_EQ(r.status, Status::Granted);
    behind();  // still the same step back
    behind();
    EXPECT_EQ(reported, (std::vector<std::uint64_t>{50}));
    EXPECT_EQ(state.regressions.load(), 1u);
}

TEST_F(Generator, ReadingTakenDuringAStepBackReportedByAnotherIsNotANewEvent) {
    ASSERT_TRUE(take(1));
    std::uint64_t reports = 0;
    auto other = [&](std::uint64_t clock_ms) {
        set_clock(clock_ms);
        const Reservation r = reserve(state, config, 1, [&] { return clock_unix_ms; });
        EXPECT_EQ(r.status, Status::Granted);
        reports += r.regression_units != 0;
    };
    // The outer caller read kT - 50 and was delayed while another caller
    // reported that step and a third saw the clock catch up.
    const Reservation r = reserve(state, config, 1, [&] {
        other(kT - 50);
        other(kT + 5);
        return kDefaultEpoch + static_cast<std::int64_t>(kT) - 50;
    });
    ASSERT_EQ(r.status, Status::Granted);
    EXPECT_EQ(r.regression_units, 0u) << "reported twice";
    EXPECT_EQ(reports, 1u);
    EXPECT_EQ(state.regressions.load(), 1u);
    other(kT - 10);  // a real second step back is still seen
    EXPECT_EQ(reports, 2u);
    EXPECT_EQ(state.regressions.load(), 2u);
}

TEST_F(Generator, NeedLeaseUntilTheLeaseCoversTheId) {
    state.lease_units.store(kT - 1);
    Reservation r = call();
    ASSERT_EQ(r.status, Status::NeedLease);
    EXPECT_EQ(r.lease_needed_units, kT);

    // A lease reaching exactly kT allows kT's ids, not more.
    state.lease_units.store(kT);
    r = call(10'000);
    ASSERT_EQ(r.status, Status::Granted);
    EXPECT_EQ(r.count, kIdsPerMs) << "a batch stops at the lease";
    EXPECT_TRUE(r.lease_low);
    r = call();
    ASSERT_EQ(r.status, Status::NeedLease);
    EXPECT_EQ(r.lease_needed_units, kT + 1);

    // lease_target: a span past the id needed.
    EXPECT_EQ(lease_target(state, config, kT + 1), kT + 1 + 100);
    state.lease_units.store(lease_target(state, config, kT + 1));
    r = call();
    ASSERT_EQ(r.status, Status::Granted);
    EXPECT_EQ(decompose(r.first), (Fields{kT + 1, 5, 0}));
    EXPECT_FALSE(r.lease_low);
    ASSERT_TRUE(take(kIdsPerMs * 3));  // borrowing: the last id is ahead of the clock
    EXPECT_EQ(time_of(last_granted), kT + 4);
    EXPECT_EQ(lease_target(state, config, 0), kT + 4 + 100) << "a span past the ids borrowed";
    ASSERT_TRUE(take(kIdsPerMs * 6));  // up to the lead limit, max_lead past the clock
    EXPECT_EQ(time_of(last_granted), kT + 10);
    EXPECT_EQ(lease_target(state, config, kT + 30), kT + 10 + 100) << "never past the lead window";
    set_clock(kT + 50);
    ASSERT_TRUE(take(1));
    EXPECT_EQ(lease_target(state, config, 0), kT + 50 + 100) << "a span past the clock";
    EXPECT_EQ(lease_target(state, config, kT + 1000), kT + 1000) << "a need beyond it is met";
}

TEST_F(Generator, LeaseLowTurnsOnInsideHalfASpanPastTheIds) {
    // Low when base + span / 2 > lease_ms (here: base + 50).
    EXPECT_FALSE(lease_is_low(kT, kT + 50, config));
    EXPECT_TRUE(lease_is_low(kT, kT + 49, config));
    EXPECT_FALSE(lease_is_low(0, 50, config));
    EXPECT_TRUE(lease_is_low(kT, 0, config));

    state.lease_units.store(kT + 50);
    EXPECT_FALSE(call().lease_low);
    set_clock(kT + 1);
    EXPECT_TRUE(call().lease_low) << "the clock moved on";
    state.lease_units.store(kT + 3 + 50);
    EXPECT_FALSE(call(2 * kIdsPerMs).lease_low);  // the rest of kT + 1, kT + 2, one of kT + 3
    EXPECT_EQ(time_of(last_granted), kT + 3);
    EXPECT_TRUE(call(kIdsPerMs).lease_low) << "the ids moved on, ahead of the clock";
}

TEST_F(Generator, LeaseWriterServesRequestsAndKeepsAheadOnlyWhileInUse) {
    EXPECT_EQ(lease_writer_target(state, config, kT), 0u) << "no id issued yet: nothing to do";
    state.lease_units.store(kT - 1);
    ASSERT_EQ(call().status, Status::NeedLease);
    request_lease(state, kT);
    EXPECT_EQ(lease_writer_target(state, config, kT), kT + 100) << "a request is served";
    state.lease_units.store(kT + 100);
    ASSERT_TRUE(take(1));
    EXPECT_EQ(lease_writer_target(state, config, kT), 0u) << "the lease is not low";
    // A pause: the lease follows the clock for one span after the last id ...
    EXPECT_EQ(lease_writer_target(state, config, kT + 51), kT + 51 + 100);
    EXPECT_EQ(lease_writer_target(state, config, kT + 100), kT + 100 + 100);
    // ... then the node is idle and nothing is written.
    EXPECT_EQ(lease_writer_target(state, config, kT + 101), 0u);
    EXPECT_EQ(lease_writer_target(state, config, kT + 100'000), 0u);
    // Ids borrowed ahead of the clock take the lease along.
    state.lease_units.store(kMaxTime);
    ASSERT_TRUE(take(5 * kIdsPerMs));
    EXPECT_EQ(time_of(last_granted), kT + 5);
    state.lease_units.store(kT + 10);
    EXPECT_EQ(lease_writer_target(state, config, kT), kT + 5 + 100);
}

// However large max_lead, a node whose ids follow the clock keeps its lease a
// span past the clock, so a crash costs at most a span (regression: with max_lead
// = 10 min one crash put the next id 644 s ahead).
TEST_F(Generator, WithNothingBorrowedACrashCostsAtMostASpanWhateverTheLead) {
    config.max_lead_units = 600'000;
    state.lease_units.store(0);
    request_lease(state, kT);
    state.lease_units.store(lease_writer_target(state, config, kT));
    for (std::uint64_t ms = 0; ms < 1000; ms += 7) {
        set_clock(kT + ms);
        ASSERT_TRUE(take(10)) << ms;
        if (const std::uint64_t target = lease_writer_target(state, config, kT + ms))
            state.lease_units.store(target);
        ASSERT_LE(state.lease_units.load(), kT + ms + 100) << ms;
    }
    const std::uint64_t lease = state.lease_units.load();
    init_state(state, kDefaultLayout, 5, true, lease, kT + 994);  // a crash
    set_clock(kT + 1000);
    const Reservation r = call();
    ASSERT_EQ(r.status, Status::NeedLease);
    EXPECT_LE(r.lease_needed_units, kT + 1000 + 100);
}

// A restored copy of another node's data directory may not issue ids under
// that node's worker id; any other worker id, or lifting the fence, may.
TEST_F(Generator, AFencedWorkerIdIssuesNothing) {
    fence(state, 5, true);
    fence(state, 1023, true);
    EXPECT_TRUE(is_fenced(state, 5) && is_fenced(state, 1023) && !is_fenced(state, 6) && !is_fenced(state, 4));
    EXPECT_EQ(call().status, Status::Fenced);
    EXPECT_EQ(call(100).status, Status::Fenced);
    hand_over(state, 6);
    EXPECT_EQ(next(), (Fields{kT, 6, 0}));
    hand_over(state, 5);
    EXPECT_EQ(call().status, Status::Fenced) << "back to the fenced id";
    fence(state, 5, false);  // adopted
    EXPECT_TRUE(is_fenced(state, 1023));
    EXPECT_EQ(next(), (Fields{kT + 1, 5, 0})) << "above the id under 6";
}

TEST_F(Generator, LeaseTargetStopsAtTheEndOfTime) {
    set_clock(kMaxTime - 5);
    ASSERT_TRUE(take(1));
    EXPECT_EQ(lease_target(state, config, 0), kMaxTime);
    EXPECT_EQ(lease_target(state, config, kMaxTime), kMaxTime);
}

class GeneratorRestart : public Generator, public testing::WithParamInterface<std::uint32_t> {
protected:
    static constexpr std::uint64_t kFloor = kT;  // every id issued before has time <= kFloor

    // A restart from a lease of kFloor written at clock reading `clock_ms`.
    void restart(std::uint64_t clock_ms) {
        init_state(state, kDefaultLayout, GetParam(), true, kFloor, clock_ms);
        last_granted = compose(kFloor, kMaxWorker, kMaxSequence);  // above any id issued before
    }
    void SetUp() override { restart(kFloor - 10 - 100); }
};

TEST_P(GeneratorRestart, StartsAboveTheFloorWithNoIdIssued) {
    EXPECT_EQ(state.lease_units.load(), kFloor);
    EXPECT_EQ(state.last_id.load(), 0u) << "the floor is no issued id";
    EXPECT_EQ(state.floor_id.load(), compose(kFloor, kMaxWorker, kMaxSequence));
    EXPECT_EQ(state.clock_high.load(), kFloor - 110) << "the lease's clock reading was seen";
    EXPECT_EQ(lease_writer_target(state, config, kFloor - 100), 0u)
        << "no id asked for: the lease stays where it is";
}

// After a crash the floor is up to max_lead + span ahead of the clock: ids
// start above it and keep pace with the clock from there, without waiting.
TEST_P(GeneratorRestart, AfterACrashIdsKeepTheFloorsLeadWithoutWaiting) {
    set_clock(kFloor - 100);  // restarted 10 ms after the lease was written
    Reservation r = call();
    ASSERT_EQ(r.status, Status::NeedLease);
    EXPECT_EQ(r.lease_needed_units, kFloor + 1);
    state.lease_units.store(lease_target(state, config, r.lease_needed_units));
    EXPECT_EQ(state.lease_units.load(), kFloor + 1)
        << "the id needed: the floor's first millisecond is not borrowing, a span past the clock is less";
    EXPECT_EQ(next(), (Fields{kFloor + 1, GetParam(), 0}));
    EXPECT_EQ(state.regressions.load(), 0u);
    // At the cap rate the ids keep their lead as the clock moves on.
    for (std::uint64_t ms = 1; ms <= 20; ++ms) {
        set_clock(kFloor - 100 + ms);
        // the lease a backend asks for: up to the next millisecond of ids
        state.lease_units.store(lease_target(state, config, time_of(last_granted) + 1));
        ASSERT_TRUE(take(kIdsPerMs)) << ms;
    }
    EXPECT_EQ(state.waits.load(), 0u);
    EXPECT_LE(time_of(last_granted), kFloor - 80 + 10 + 100 + 1);
    // Below the cap rate the clock catches up, and the floor's allowance ends.
    set_clock(kFloor + 200);
    state.lease_units.store(kMaxTime);
    EXPECT_EQ(next(), (Fields{kFloor + 200, GetParam(), 0}));
    EXPECT_EQ(state.floor_lead_units.load(), 0u);
}

// Crash after crash, with one id between, the lease kept by the lease writer:
// the first id after each restart is at most a span (+1 ms) past the clock,
// whatever max_lead (regression: it grew by a span per crash, up to span + lead).
TEST_P(GeneratorRestart, RepeatedCrashesDoNotPushIdsAhead) {
    for (const std::uint64_t max_lead : {std::uint64_t{10}, std::uint64_t{600'000}}) {
        config.max_lead_units = max_lead;
        restart(kFloor - 100);  // the lease a span past the clock, as the lease writer keeps it
        std::uint64_t clock = kFloor - 100;
        for (int crash = 0; crash < 50; ++crash) {
            clock += 3;  // a crash and a restart take some time
            set_clock(clock);
            Reservation r = call();
            ASSERT_EQ(r.status, Status::NeedLease) << crash;
            request_lease(state, r.lease_needed_units);
            state.lease_units.store(lease_writer_target(state, config, clock));
            const Fields first = next();
            EXPECT_LE(first.time_ms, clock + 100 + 1) << max_lead << " " << crash;
            // the lease writer keeps the lease ahead while the node is in use
            if (const std::uint64_t target = lease_writer_target(state, config, clock))
                state.lease_units.store(target);
            const std::uint64_t lease = state.lease_units.load();
            EXPECT_LE(lease, clock + 100 + 1) << max_lead << " " << crash;
            init_state(state, kDefaultLayout, GetParam(), true, lease, state.clock_high.load());
            last_granted = compose(lease, kMaxWorker, kMaxSequence);
        }
    }
}

TEST_P(GeneratorRestart, ClockSetBackAcrossARestartIsARegression) {
    restart(kFloor);  // a clean shutdown: the lease is the last id, at the clock
    set_clock(kFloor - kHour);
    state.lease_units.store(lease_target(state, config, 0));
    Reservation r = call();
    ASSERT_EQ(r.status, Status::Granted);
    EXPECT_EQ(r.regression_units, kHour) << "behind the reading before the restart";
    EXPECT_EQ(decompose(r.first), (Fields{kFloor + 1, GetParam(), 0}));
    // A full lead past the floor without waiting, then wait as for any lead.
    ASSERT_TRUE(take((config.max_lead_units + 1) * kIdsPerMs - 1));
    EXPECT_EQ(last(), (Fields{kFloor + 1 + config.max_lead_units, GetParam(), 4095}));
    r = call();
    ASSERT_EQ(r.status, Status::WaitForClock);
    EXPECT_EQ(r.wait_until_units, kFloor + 2);
    EXPECT_EQ(state.regressions.load(), 1u);
}

TEST_P(GeneratorRestart, FollowsTheClockWhenItIsPastTheFloor) {
    state.lease_units.store(kMaxTime);
    set_clock(kFloor + 500);
    EXPECT_EQ(next(), (Fields{kFloor + 500, GetParam(), 0}));
    EXPECT_EQ(state.regressions.load(), 0u);
}

TEST_P(GeneratorRestart, ARaisedFloorIsPassedWithoutWaiting) {
    state.lease_units.store(kMaxTime);
    set_clock(kFloor + 10);
    ASSERT_TRUE(take(3));
    raise_floor(state, kDefaultLayout, kFloor + kHour, kFloor + 10);  // a standby replays its primary's lease
    last_granted = compose(kFloor + kHour, kMaxWorker, kMaxSequence);
    EXPECT_EQ(next(), (Fields{kFloor + kHour + 1, GetParam(), 0}));
    EXPECT_EQ(state.regressions.load(), 0u);

    raise_floor(state, kDefaultLayout, kFloor, 0);  // never lowers
    EXPECT_EQ(next(), (Fields{kFloor + kHour + 1, GetParam(), 1}));
    EXPECT_EQ(state.lease_units.load(), kMaxTime);
}

TEST_P(GeneratorRestart, APrimaryClockAheadOfThisOneIsARegression) {
    state.lease_units.store(kMaxTime);
    set_clock(kFloor + 10);
    ASSERT_TRUE(take(1));
    raise_floor(state, kDefaultLayout, kFloor + 5000, kFloor + 4000);  // the primary's clock read kFloor + 4000
    const Reservation r = call();
    ASSERT_EQ(r.status, Status::Granted);
    EXPECT_EQ(r.regression_units, 3990u);
    EXPECT_EQ(state.regressions.load(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Workers, GeneratorRestart, testing::Values(0u, 5u, 1023u));

TEST_F(Generator, AHandOverRecordsTheLastIdUnderTheOldWorker) {
    ASSERT_TRUE(take(10));
    const std::uint64_t last_under_5 = last_granted;
    std::uint64_t recorded = 0;
    EXPECT_EQ(hand_over(state, 9), 5u);
    EXPECT_FALSE(handed_over_last(state, recorded)) << "no id under 9 yet";
    // Another caller issues the first id under 9 before the hand-over's own id.
    EXPECT_EQ(next().worker_id, 9u);
    const Reservation fence = call();
    ASSERT_EQ(fence.status, Status::Granted);
    ASSERT_TRUE(handed_over_last(state, recorded));
    EXPECT_EQ(recorded, last_under_5);

    EXPECT_EQ(hand_over(state, kNoWorker), 9u);
    EXPECT_EQ(call().status, Status::NoWorker);
}

TEST_F(Generator, AHandOverBeforeAnyIdRecordsNone) {
    std::uint64_t recorded = 1;
    hand_over(state, 7);
    ASSERT_TRUE(take(1));
    ASSERT_TRUE(handed_over_last(state, recorded));
    EXPECT_EQ(recorded, 0u);
}

TEST_F(Generator, WantingNothingReservesNothing) {
    ASSERT_TRUE(take(3));
    const std::uint64_t before = state.last_id.load();
    const Reservation r = reserve(state, config, 0, [this] { return clock_unix_ms; });
    EXPECT_EQ(r.status, Status::Granted);
    EXPECT_EQ(r.count, 0u);
    EXPECT_EQ(state.last_id.load(), before);
}

TEST_F(Generator, InitStateResetsEverything) {
    ASSERT_TRUE(take(kIdsPerMs + 1));
    set_clock(kT - 3);
    ASSERT_EQ(call().status, Status::Granted);
    state.waits.store(4);
    state.lease_extensions.store(9);
    request_lease(state, 99);

    init_state(state, kDefaultLayout, 8, false, 0, 0);
    EXPECT_EQ(state.last_id.load(), 0u);
    EXPECT_EQ(worker_in_effect(state), 8u);
    EXPECT_EQ(state.floor_id.load(), 0u);
    EXPECT_EQ(state.floor_lead_units.load(), 0u);
    EXPECT_EQ(state.clock_high.load(), 0u);
    EXPECT_EQ(state.lease_units.load(), 0u);
    EXPECT_EQ(state.lease_wanted_units.load(), 0u);
    EXPECT_EQ(state.in_regression.load(), 0u);
    EXPECT_EQ(state.regressions.load(), 0u);
    EXPECT_EQ(state.borrowed_units.load(), 0u);
    EXPECT_EQ(state.waits.load(), 0u);
    EXPECT_EQ(state.lease_extensions.load(), 0u);

    init_state(state, kDefaultLayout, kNoWorker, true, 77, 70);
    EXPECT_EQ(state.last_id.load(), 0u);
    EXPECT_EQ(state.floor_id.load(), compose(77, kMaxWorker, kMaxSequence));
    EXPECT_EQ(state.clock_high.load(), 70u);
    EXPECT_EQ(state.floor_lead_units.load(), 8u);
    EXPECT_EQ(state.lease_units.load(), 77u);
}

TEST_F(Generator, FreshNodeNeedsALeaseThenStartsAtTheClock) {
    init_state(state, kDefaultLayout, 5, false, 0, 0);
    set_clock(kT);
    const Reservation r = call();
    ASSERT_EQ(r.status, Status::NeedLease);
    EXPECT_EQ(r.lease_needed_units, kT);
    state.lease_units.store(lease_target(state, config, r.lease_needed_units));
    EXPECT_EQ(state.lease_units.load(), kT + 100) << "a span past the clock";
    EXPECT_EQ(next(), (Fields{kT, 5, 0}));
    EXPECT_EQ(state.regressions.load(), 0u);
    EXPECT_EQ(state.borrowed_units.load(), 0u);
}

TEST_F(Generator, ClockBeforeEpoch) {
    for (const std::int64_t unix_ms : {kDefaultEpoch - 1, std::int64_t{0}, std::int64_t{-1},
                                       std::numeric_limits<std::int64_t>::min()}) {
        clock_unix_ms = unix_ms;
        EXPECT_EQ(call().status, Status::ClockBeforeEpoch) << unix_ms;
    }
    EXPECT_EQ(state.clock_high.load(), 0u);
    clock_unix_ms = kDefaultEpoch;
    EXPECT_EQ(next(), (Fields{0, 5, 0})) << "the epoch's own ms is fine";
}

TEST_F(Generator, TimeExhausted) {
    for (const std::int64_t unix_ms :
         {kDefaultEpoch + static_cast<std::int64_t>(kMaxTime) + 1,
          std::numeric_limits<std::int64_t>::max()}) {
        clock_unix_ms = unix_ms;
        EXPECT_EQ(call().status, Status::TimeExhausted) << unix_ms;
    }
    // The last ms of the layout is usable, then time is up: no wrap, no wait.
    set_clock(kMaxTime);
    const Reservation r = call(10'000);
    ASSERT_EQ(r.status, Status::Granted);
    EXPECT_EQ(r.count, kIdsPerMs) << "the lead ends at kMaxTime";
    EXPECT_EQ(last_granted, compose(kMaxTime, 5, kMaxSequence));
    EXPECT_EQ(call().status, Status::TimeExhausted);
    state.grant.store(pack_grant(1023, kForever));
    EXPECT_EQ(next(), (Fields{kMaxTime, 1023, 0})) << "a higher worker still fits";
    ASSERT_TRUE(take(kMaxSequence));
    EXPECT_EQ(last_granted, kMaxId);
    EXPECT_EQ(call().status, Status::TimeExhausted);
}

TEST_F(Generator, RestartAtTheEndOfTimeIsExhausted) {
    // Ids up to kMaxTime may have been issued: none is left to give.
    init_state(state, kDefaultLayout, 5, true, kMaxTime, kT);
    set_clock(kT);
    EXPECT_EQ(call().status, Status::TimeExhausted);
    set_clock(kMaxTime);
    EXPECT_EQ(call().status, Status::TimeExhausted);
}

struct BatchCase {
    const char* name;
    std::uint64_t max_lead_units;
    std::uint64_t lease_ms;  // relative to kT, or kMaxTime
    std::uint64_t wanted;
    std::uint64_t expected;  // after 100 ids already taken in kT
};

void PrintTo(const BatchCase& c, std::ostream* os) { *os << c.name; }

class GeneratorBatch : public Generator, public testing::WithParamInterface<BatchCase> {};

TEST_P(GeneratorBatch, CountIsCappedAndIdsFollowEveryEarlierOne) {
    const BatchCase& c = GetParam();
    config.max_lead_units = c.max_lead_units;
    state.lease_units.store(c.lease_ms == kMaxTime ? kMaxTime : kT + c.lease_ms);
    ASSERT_TRUE(take(100));
    const std::uint64_t before = last_granted;

    const Reservation r = call(c.wanted);
    ASSERT_EQ(r.status, Status::Granted);
    EXPECT_EQ(r.count, c.expected);
    EXPECT_EQ(r.first, before + 1);
    std::uint64_t previous = before;
    for (std::uint64_t i = 0; i < r.count; ++i) {
        const std::uint64_t id = advance(r.first, i);
        ASSERT_GT(id, previous) << i;
        ASSERT_EQ(decompose(id).worker_id, 5u);
        previous = id;
    }
    EXPECT_EQ(state.borrowed_units.load(), time_of(previous) - kT);
    const Reservation after = call();
    if (r.count < c.wanted)
        EXPECT_NE(after.status, Status::Granted) << "the batch was capped for a reason";
    else
        EXPECT_EQ(after.first, advance(r.first, r.count));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, GeneratorBatch,
    testing::Values(BatchCase{"uncapped", 10, kMaxTime, 10'000, 10'000},
                    BatchCase{"one", 10, kMaxTime, 1, 1},
                    BatchCase{"lead_1", 1, kMaxTime, 10'000, 2 * 4096 - 100},
                    BatchCase{"lead_0", 0, kMaxTime, 10'000, 4096 - 100},
                    BatchCase{"lease_now", 10, 0, 10'000, 4096 - 100},
                    BatchCase{"lease_next", 10, 1, 10'000, 2 * 4096 - 100},
                    BatchCase{"lease_before_lead", 1000, 2, 1'000'000, 3 * 4096 - 100},
                    BatchCase{"huge", 1000, kMaxTime, 1'000'000'000, 1001 * 4096 - 100}),
    [](const testing::TestParamInfo<BatchCase>& info) { return info.param.name; });

TEST_F(Generator, WorkerChangeKeepsIdsIncreasing) {
    ASSERT_TRUE(take(10));
    state.grant.store(pack_grant(7, kForever));  // higher: same ms
    EXPECT_EQ(next(), (Fields{kT, 7, 0}));
    state.grant.store(pack_grant(3, kForever));  // lower: the next ms
    EXPECT_EQ(next(), (Fields{kT + 1, 3, 0}));
    EXPECT_EQ(next(), (Fields{kT + 1, 3, 1}));
    state.grant.store(pack_grant(1023, kForever));
    EXPECT_EQ(next(), (Fields{kT + 1, 1023, 0}));
    state.grant.store(pack_grant(0, kForever));
    EXPECT_EQ(next(), (Fields{kT + 2, 0, 0}));

    // Many changes, both ways, while the clock moves (call() checks the order).
    config.max_lead_units = 100'000;
    for (std::uint32_t i = 0; i < 20'000; ++i) {
        state.grant.store(pack_grant((i * 37) % 1024, kForever));
        set_clock(kT + i / 50);
        ASSERT_EQ(call(1 + i % 3).status, Status::Granted) << i;
    }
}

// A registry's window [from, until): ids at `until` or later are refused, not
// before; a batch stops below it; a renewal lets ids go on.
TEST_F(Generator, WindowEndsAtUntilNotBefore) {
    apply_grant(state, kDefaultLayout, 9, kT - 100, kT + 3, kT);
    EXPECT_EQ(next(), (Fields{kT, 9, 0}));
    set_clock(kT + 2);
    EXPECT_EQ(next(), (Fields{kT + 2, 9, 0}));
    const Reservation batch = call(100'000);
    ASSERT_EQ(batch.status, Status::Granted);
    EXPECT_EQ(time_of(last_granted), kT + 2) << "a batch stops at the last time unit of the window";
    EXPECT_EQ(call().status, Status::WindowEnded) << "the ms at until is outside the window";
    set_clock(kT + 3);
    EXPECT_EQ(call().status, Status::WindowEnded);
    apply_grant(state, kDefaultLayout, 9, kT - 100, kT + 1000, kT + 3);  // renewed
    EXPECT_EQ(next(), (Fields{kT + 3, 9, 0}));
}

// A window that starts ahead of the clock (the worker id's previous holder
// reached that far): ids start at `from` at once, without waiting for the clock.
TEST_F(Generator, GrantAheadOfTheClockStartsIdsAtFrom) {
    apply_grant(state, kDefaultLayout, 9, kT + 5000, kT + 9000, kT);
    EXPECT_EQ(next(), (Fields{kT + 5000, 9, 0}));
    EXPECT_EQ(next(), (Fields{kT + 5000, 9, 1}));
    // A new grant of another worker id, from below the ids: they keep rising.
    apply_grant(state, kDefaultLayout, 2, kT + 100, kT + 9000, kT);
    EXPECT_EQ(next(), (Fields{kT + 5001, 2, 0}));
}

TEST_F(Generator, WithdrawnGrantRefusesAsNoWorker) {
    apply_grant(state, kDefaultLayout, 9, 0, kT + 1000, kT);
    ASSERT_TRUE(take(3));
    withdraw_grant(state);
    EXPECT_EQ(call().status, Status::NoWorker);
}

TEST(Grant, PacksEveryWorkerIdAndWindowEnd) {
    for (std::uint32_t w : {0u, 1u, 1023u, static_cast<std::uint32_t>(kMaxAnyWorker), kNoWorker})
        for (std::uint64_t until : {std::uint64_t{0}, std::uint64_t{1}, kMaxTime, kGrantNoEnd - 1}) {
            const Grant g = unpack_grant(pack_grant(w, until));
            EXPECT_EQ(g.worker_id, w);
            EXPECT_EQ(g.until, until);
        }
    EXPECT_EQ(unpack_grant(pack_grant(3, kForever)).until, kForever);
    EXPECT_EQ(unpack_grant(pack_grant(3, kGrantNoEnd)).until, kForever);
}

}  // namespace
}  // namespace snowflake
