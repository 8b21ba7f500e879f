// The generator shared by many threads, as backends share it in shared memory.
#include "helpers.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace snowflake {
namespace {

using test::kDefaultEpoch;

std::int64_t system_unix_ms() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// A generator on the real clock with a lease that never runs out.
struct RealClockGenerator {
    GeneratorState state{};
    Config config{kDefaultEpoch, /*max_lead_units=*/60'000, /*lease_span_units=*/0};
    RealClockGenerator() {
        init_state(state, kDefaultLayout, 42, false, 0, 0);
        state.lease_units.store(kMaxTime);
    }

    // Reserves up to `wanted` ids, retrying while the clock has to catch up.
    // `clock_ms` gets the (epoch-relative) clock reading of the granting call.
    Reservation take(std::uint64_t wanted, std::uint64_t& clock_ms) {
        for (;;) {
            std::int64_t read = 0;
            const Reservation r =
                reserve(state, config, wanted, [&] { return read = system_unix_ms(); });
            clock_ms = static_cast<std::uint64_t>(read - config.epoch_unix_ms);
            if (r.status != Status::WaitForClock) return r;
            std::this_thread::yield();
        }
    }
};

void run_threads(int n, const std::function<void(int)>& body) {
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i) threads.emplace_back(body, i);
    for (auto& t : threads) t.join();
}

bool strictly_increasing(const std::vector<std::uint64_t>& ids) {
    return std::adjacent_find(ids.begin(), ids.end(), std::greater_equal<>()) == ids.end();
}

// Every id is new, each thread sees its ids rise, and a call returns an id
// above every id whose call had returned before it started (the order in
// which calls return, across threads).
TEST(GeneratorThreads, UniqueAndIncreasingInTheOrderCallsReturn) {
    constexpr int kThreads = 8;
    constexpr std::size_t kPerThread = 200'000;
    RealClockGenerator gen;
    std::atomic<std::uint64_t> highest_returned{0};
    std::vector<std::vector<std::uint64_t>> ids(kThreads);
    std::atomic<int> failures{0}, order_violations{0}, behind_clock{0};

    run_threads(kThreads, [&](int t) {
        auto& mine = ids[t];
        mine.reserve(kPerThread);
        while (mine.size() < kPerThread) {
            const std::uint64_t floor = highest_returned.load();
            std::uint64_t clock_ms;
            const Reservation r = gen.take(1, clock_ms);
            if (r.status != Status::Granted || r.count != 1) {
                ++failures;
                return;
            }
            if (r.first <= floor) ++order_violations;
            if (time_of(r.first) < clock_ms) ++behind_clock;
            mine.push_back(r.first);
            std::uint64_t high = highest_returned.load();
            while (high < r.first && !highest_returned.compare_exchange_weak(high, r.first)) {
            }
        }
    });

    ASSERT_EQ(failures.load(), 0);
    EXPECT_EQ(order_violations.load(), 0) << "an id below one returned before the call";
    EXPECT_EQ(behind_clock.load(), 0) << "an id older than the clock reading";
    std::vector<std::uint64_t> all;
    for (int t = 0; t < kThreads; ++t) {
        ASSERT_EQ(ids[t].size(), kPerThread);
        EXPECT_TRUE(strictly_increasing(ids[t])) << "thread " << t;
        all.insert(all.end(), ids[t].begin(), ids[t].end());
    }
    std::sort(all.begin(), all.end());
    EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "a duplicate id";
    EXPECT_EQ(all.back(), gen.state.last_id.load());
    EXPECT_EQ(decompose(all.front()).worker_id, 42u);
    EXPECT_EQ(decompose(all.back()).worker_id, 42u);
}

// Concurrent batches of mixed sizes: the ranges never overlap.
TEST(GeneratorThreads, ConcurrentBatchesAreDisjoint) {
    constexpr int kThreads = 6;
    constexpr int kBatches = 20'000;
    RealClockGenerator gen;
    struct Range {
        std::uint64_t first, last;
    };
    std::vector<std::vector<Range>> ranges(kThreads);
    std::atomic<int> failures{0};

    run_threads(kThreads, [&](int t) {
        for (int i = 0; i < kBatches; ++i) {
            const std::uint64_t wanted = 1 + (i * 7 + t) % 300;
            std::uint64_t clock_ms;
            const Reservation r = gen.take(wanted, clock_ms);
            if (r.status != Status::Granted || r.count != wanted) {
                ++failures;
                return;
            }
            ranges[t].push_back({r.first, advance(r.first, r.count - 1)});
        }
    });

    ASSERT_EQ(failures.load(), 0);
    std::vector<Range> all;
    for (int t = 0; t < kThreads; ++t) {
        for (std::size_t i = 1; i < ranges[t].size(); ++i)
            ASSERT_GT(ranges[t][i].first, ranges[t][i - 1].last) << "thread " << t;
        all.insert(all.end(), ranges[t].begin(), ranges[t].end());
    }
    std::sort(all.begin(), all.end(),
              [](const Range& a, const Range& b) { return a.first < b.first; });
    for (std::size_t i = 1; i < all.size(); ++i)
        ASSERT_GT(all[i].first, all[i - 1].last) << "overlapping batches";
}

// Calls serialized by a mutex, logged in the order they were handed out:
// the log is strictly increasing.
TEST(GeneratorThreads, StrictlyIncreasingInTheOrderHandedOut) {
    constexpr int kThreads = 4;
    constexpr int kPerThread = 50'000;
    RealClockGenerator gen;
    std::mutex mutex;
    std::vector<std::uint64_t> log;
    log.reserve(std::size_t{kThreads} * kPerThread);
    std::atomic<int> failures{0};

    run_threads(kThreads, [&](int) {
        for (int i = 0; i < kPerThread; ++i) {
            std::lock_guard<std::mutex> lock(mutex);
            std::uint64_t clock_ms;
            const Reservation r = gen.take(1, clock_ms);
            if (r.status != Status::Granted) {
                ++failures;
                return;
            }
            log.push_back(r.first);
        }
    });

    ASSERT_EQ(failures.load(), 0);
    ASSERT_EQ(log.size(), std::size_t{kThreads} * kPerThread);
    EXPECT_TRUE(strictly_increasing(log));
}

// The clock steps back twice while 8 threads generate: each event is counted
// and reported (regression_units) by exactly one call. The fake clock moves in
// phases; the next phase starts only once every thread has finished a call
// begun in the current one, so no call straddles two phases' readings.
TEST(GeneratorThreads, ClockStepBackIsReportedOncePerEvent) {
    constexpr int kThreads = 8;
    constexpr std::int64_t kNow = kDefaultEpoch + 1'000'000;
    GeneratorState state{};
    init_state(state, kDefaultLayout, 1, false, 0, 0);
    state.lease_units.store(kMaxTime);
    const Config config{kDefaultEpoch, /*max_lead_units=*/1'000'000, 0};
    std::atomic<std::int64_t> fake_clock{kNow};
    std::atomic<int> phase{0};
    std::atomic<bool> stop{false};
    std::vector<std::atomic<int>> done_phase(kThreads);
    std::mutex mutex;
    std::vector<std::uint64_t> reported;
    std::atomic<int> failures{0};

    std::thread main_thread([&] {
        auto step = [&](std::int64_t clock) {
            fake_clock.store(clock);
            const int p = phase.fetch_add(1) + 1;
            for (auto& done : done_phase)
                while (done.load() < p && failures.load() == 0) std::this_thread::yield();
        };
        step(kNow);
        step(kNow - 50);   // event 1
        step(kNow - 10);   // still behind: same event
        step(kNow + 100);  // caught up
        step(kNow + 40);   // event 2
        stop.store(true);
    });
    run_threads(kThreads, [&](int t) {
        std::uint64_t last = 0;
        while (!stop.load()) {
            const int p = phase.load();
            const Reservation r = reserve(state, config, 1, [&] { return fake_clock.load(); });
            if (r.status != Status::Granted || r.first <= last) {
                ++failures;
                return;
            }
            last = r.first;
            if (r.regression_units > 0) {
                std::lock_guard<std::mutex> lock(mutex);
                reported.push_back(r.regression_units);
            }
            done_phase[t].store(p);
        }
    });
    main_thread.join();

    ASSERT_EQ(failures.load(), 0);
    EXPECT_EQ(state.regressions.load(), 2u);
    EXPECT_EQ(reported, (std::vector<std::uint64_t>{50, 60}));
}

// Grants change while threads take ids: worker ids switch and windows are
// renewed or end, as a registry worker publishes them. No id is issued under
// a worker id at or past the end of a window that worker id was granted, and
// ids stay unique.
TEST(GeneratorThreads, NoIdOutsideAGrantedWindow) {
    RealClockGenerator g;
    withdraw_grant(g.state);  // nothing until the first grant
    const std::uint64_t start = static_cast<std::uint64_t>(system_unix_ms() - kDefaultEpoch);
    // worker id w may be used below until[w], which only ever rises
    std::atomic<std::uint64_t> until[4] = {};
    std::atomic<bool> done{false};
    std::vector<std::vector<std::uint64_t>> ids(4);
    std::thread registry([&] {
        for (std::uint64_t round = 0; !done.load(); ++round) {
            const std::uint32_t w = static_cast<std::uint32_t>(round % 4);
            const std::uint64_t now = static_cast<std::uint64_t>(system_unix_ms() - kDefaultEpoch);
            const std::uint64_t end = now + round % 3;  // 0..2 ms: windows end often
            if (until[w].load() < end) until[w].store(end);
            apply_grant(g.state, kDefaultLayout, w, start, until[w].load(), now);
            std::this_thread::yield();
        }
    });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    run_threads(4, [&](int t) {
        for (int i = 0; ids[t].size() < 20'000 && std::chrono::steady_clock::now() < deadline; ++i) {
            std::uint64_t clock_ms;
            const Reservation r = g.take(1 + i % 4, clock_ms);
            if (r.status == Status::WindowEnded || r.status == Status::NoWorker) continue;
            ASSERT_EQ(r.status, Status::Granted);
            for (std::uint64_t k = 0; k < r.count; ++k) ids[t].push_back(advance(r.first, k));
        }
    });
    done = true;
    registry.join();
    std::vector<std::uint64_t> all;
    for (const auto& v : ids) all.insert(all.end(), v.begin(), v.end());
    ASSERT_GE(all.size(), 80'000u);
    for (std::uint64_t id : all) {
        const Fields f = decompose(id);
        ASSERT_LT(f.worker_id, 4u);
        ASSERT_LT(f.time_ms, until[f.worker_id].load()) << "an id past every window of its worker id";
    }
    std::sort(all.begin(), all.end());
    EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "an id issued twice";
}

// Grants whose windows start ahead of the clock, one after another, each to
// another worker id, as a registry's grants after a floor or a release by
// hand: the floor rises to a window's start before the window is published,
// so an attempt that reads a grant issues ids at or above its start. Windows
// are consecutive, [start + r*D, start + (r+1)*D) for worker id r % N: an
// id's time names the one worker id that may issue it.
TEST(GeneratorThreads, NoIdBeforeTheStartOfItsWindow) {
    constexpr std::uint64_t kD = 3;
    constexpr std::uint32_t kN = 7;
    constexpr int kRounds = 5'000;
    RealClockGenerator g;
    withdraw_grant(g.state);
    const std::uint64_t start = static_cast<std::uint64_t>(system_unix_ms() - kDefaultEpoch) + 1'000;
    std::atomic<bool> done{false};
    std::atomic<std::uint64_t> issued{0};
    std::vector<std::vector<std::uint64_t>> ids(2);
    std::thread registry([&] {
        for (int r = 0; r < kRounds; ++r) {
            const std::uint64_t from = start + static_cast<std::uint64_t>(r) * kD;
            const std::uint64_t before = issued.load();
            apply_grant(g.state, kDefaultLayout, static_cast<std::uint32_t>(r) % kN, from, from + kD, start - 1'000);
            // the next grant once an id came under this one (or a while passed)
            for (int spin = 0; spin < 100'000 && issued.load() == before; ++spin) std::this_thread::yield();
        }
        done = true;
    });
    run_threads(2, [&](int t) {
        while (!done.load()) {
            // the clock far behind the windows: only the floor lets ids come
            const Reservation r =
                reserve(g.state, g.config, 1, [&] { return static_cast<std::int64_t>(start - 1'000) + kDefaultEpoch; });
            if (r.status == Status::Granted) {
                ids[t].push_back(r.first);
                issued.fetch_add(1);
            }
        }
    });
    registry.join();
    std::size_t checked = 0;
    for (const auto& v : ids)
        for (std::uint64_t id : v) {
            const Fields f = decompose(id);
            ASSERT_GE(f.time_ms, start) << "an id before the first window";
            const std::uint64_t round = (f.time_ms - start) / kD;
            ASSERT_EQ(f.worker_id, round % kN) << "an id of worker id " << f.worker_id << " at " << f.time_ms - start
                                               << " ms into the windows, in the window of worker id " << round % kN;
            ++checked;
        }
    EXPECT_GE(checked, static_cast<std::size_t>(kRounds));
}

}  // namespace
}  // namespace snowflake
