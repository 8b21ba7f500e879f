// The generator's core without a server (Google Benchmark; `make bench-core`,
// also the first part of `make bench`): ns per id of reserve() at 1 and 2
// threads with no cap in the way, at the cap (4096 ids per ms, waiting for the
// clock), and what one wait for the next millisecond costs in CPU.
#include "../../src/core/clock.hpp"
#include "../../src/core/generator.hpp"

#include <benchmark/benchmark.h>


namespace snowflake {
namespace {

constexpr std::int64_t kEpoch = 1288834974657;  // any epoch in the past

// One generator shared by the benchmark's threads, as backends share it.
GeneratorState shared_state;

void fresh(GeneratorState& state) {
    init_state(state, 1, false, 0, 0);
    state.lease_ms.store(kMaxTime);  // a lease that never runs out: no lease writes here
}

// Takes one id, waiting for the clock as a backend does; returns whether it waited.
bool take_one(GeneratorState& state, const Config& config) {
    bool waited = false;
    for (;;) {
        const Reservation r = reserve(state, config, 1, unix_now_ms);
        if (r.status == Status::Granted) {
            benchmark::DoNotOptimize(r.first);
            return waited;
        }
        waited = true;
        sleep_until_us((config.epoch_unix_ms + static_cast<std::int64_t>(r.wait_until_ms)) * 1000);
    }
}

// No cap in the way (a lead of an hour): the cost of the lock-free path, and
// of the compare-and-swap contention between 2 threads.
void BM_reserve(benchmark::State& state) {
    if (state.thread_index() == 0) fresh(shared_state);
    const Config config{kEpoch, 3600 * 1000, 0};
    for (auto _ : state) take_one(shared_state, config);
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_reserve)->Threads(1)->Threads(2)->UseRealTime();

// At the cap: no lead, so every 4096 ids wait for the next millisecond.
// items_per_second against 4,096,000; waits and CPU per wait as counters.
void BM_reserve_at_cap(benchmark::State& state) {
    fresh(shared_state);
    const Config config{kEpoch, 0, 0};
    std::int64_t waits = 0;
    const std::int64_t start_us = unix_now_us();
    for (auto _ : state) waits += take_one(shared_state, config);
    const double seconds = static_cast<double>(unix_now_us() - start_us) / 1e6;
    state.SetItemsProcessed(state.iterations());
    state.counters["of_cap"] = static_cast<double>(state.iterations()) / seconds / 4096000.0;
    state.counters["waits"] = static_cast<double>(waits);
}
BENCHMARK(BM_reserve_at_cap)->Iterations(20'000'000)->UseRealTime();

// One wait for the next millisecond: wall time (up to 1 ms), CPU burned (the
// sleep's system calls and the last kSpinUs spun), and how late it returns.
void BM_wait_next_ms(benchmark::State& state) {
    double late_us = 0;
    for (auto _ : state) {
        const std::int64_t deadline = (unix_now_us() / 1000 + 1) * 1000;
        sleep_until_us(deadline);
        late_us += static_cast<double>(unix_now_us() - deadline);
    }
    state.counters["late_us"] = benchmark::Counter(late_us, benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_wait_next_ms)->Iterations(2000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace snowflake

BENCHMARK_MAIN();
