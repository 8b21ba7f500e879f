// The generator's core without a server (Google Benchmark; `make bench-core`,
// also the first part of `make bench`): ns per id of reserve() at 1 and 2
// threads with no cap in the way, at the cap (4096 ids per ms in the default
// layout, waiting for the clock), and what one wait for the next millisecond
// costs in CPU; the first two also in the layouts 41/8/14 (16,384 ids per ms)
// and js53 (64 per ms), each against its own cap.
#include "../../src/core/clock.hpp"
#include "../../src/core/codec.hpp"
#include "../../src/core/ff1.hpp"
#include "../../src/core/generator.hpp"
#include "../../src/core/layout_names.hpp"

#include <benchmark/benchmark.h>

#include <cstdlib>


namespace snowflake {
namespace {

constexpr std::int64_t kEpoch = 1288834974657;  // any epoch in the past

// One generator shared by the benchmark's threads, as backends share it.
GeneratorState shared_state;

// The layouts measured, by the benchmark's argument.
constexpr const char* kLayouts[] = {"default", "time=41 worker=8 sequence=14", "js53"};
Layout layout_of(const benchmark::State& state) {
    Layout layout{};
    const char* problem;
    if (!parse_node_layout(kLayouts[state.range(0)], layout, problem)) std::abort();
    return layout;
}

void fresh(GeneratorState& state, const Layout& layout) {
    init_state(state, layout, 1, false, 0, 0);
    state.lease_units.store(layout.max_time);  // a lease that never runs out: no lease writes here
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
        sleep_until_us((config.epoch_unix_ms + static_cast<std::int64_t>(r.wait_until_units)) * 1000);
    }
}

// No cap in the way (a lead of an hour): the cost of the lock-free path, and
// of the compare-and-swap contention between 2 threads.
void BM_reserve(benchmark::State& state) {
    const Layout layout = layout_of(state);
    if (state.thread_index() == 0) fresh(shared_state, layout);
    const Config config{kEpoch, 3600 * 1000, 0, layout};
    for (auto _ : state) take_one(shared_state, config);
    state.SetItemsProcessed(state.iterations());
    state.SetLabel(kLayouts[state.range(0)]);
}
BENCHMARK(BM_reserve)->DenseRange(0, 2)->Threads(1)->Threads(2)->UseRealTime();

// At the cap: no lead, so every ids_per_unit ids (4096 in the default
// layout) wait for the next millisecond. of_cap: items per second against
// the layout's cap; waits as a counter.
void BM_reserve_at_cap(benchmark::State& state) {
    const Layout layout = layout_of(state);
    fresh(shared_state, layout);
    const Config config{kEpoch, 0, 0, layout};
    std::int64_t waits = 0;
    const std::int64_t start_us = unix_now_us();
    for (auto _ : state) waits += take_one(shared_state, config);
    const double seconds = static_cast<double>(unix_now_us() - start_us) / 1e6;
    state.SetItemsProcessed(state.iterations());
    state.counters["of_cap"] =
        static_cast<double>(state.iterations()) / seconds / (static_cast<double>(layout.ids_per_unit) * 1000.0);
    state.counters["waits"] = static_cast<double>(waits);
    state.SetLabel(kLayouts[state.range(0)]);
}
// about 5 s, 2.5 s and 5 s at each layout's cap
BENCHMARK(BM_reserve_at_cap)->Arg(0)->Iterations(20'000'000)->UseRealTime();
BENCHMARK(BM_reserve_at_cap)->Arg(1)->Iterations(40'000'000)->UseRealTime();
BENCHMARK(BM_reserve_at_cap)->Arg(2)->Iterations(320'000)->UseRealTime();

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

// Public ids: FF1 with AES-128 over 63 bits and the 13-character
// text, each way, per call (target: under 1 µs).
Ff1Key public_key() {
    static const std::uint8_t bytes[16] = {0x2B, 0x7E, 0x15, 0x16, 0x28, 0xAE, 0xD2, 0xA6,
                                           0xAB, 0xF7, 0x15, 0x88, 0x09, 0xCF, 0x4F, 0x3C};
    Ff1Key key;
    if (!ff1_key_init(key, bytes, sizeof bytes)) std::abort();
    return key;
}

void BM_to_public(benchmark::State& state) {
    Ff1Key key = public_key();
    std::uint64_t id = 382741621101301760;
    char text[kBase32Length + 1];
    for (auto _ : state) {
        to_public_text(ff1_encrypt_id(key, id++), 0, text);
        benchmark::DoNotOptimize(text);
    }
    ff1_key_free(key);
}
BENCHMARK(BM_to_public);

void BM_from_public(benchmark::State& state) {
    Ff1Key key = public_key();
    char text[kBase32Length + 1];
    to_public_text(ff1_encrypt_id(key, 382741621101301760), 0, text);
    for (auto _ : state) {
        std::uint64_t value;
        unsigned key_id;
        (void)from_public_text(text, value, key_id);
        benchmark::DoNotOptimize(ff1_decrypt_id(key, value));
    }
    ff1_key_free(key);
}
BENCHMARK(BM_from_public);

}  // namespace
}  // namespace snowflake

BENCHMARK_MAIN();
