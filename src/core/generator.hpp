// The id generator: plain data in shared memory and the algorithm over it,
// driven by an injectable clock. Pure C++, no PostgreSQL header.
#pragma once
#include "layout.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <type_traits>

namespace snowflake {

// What a reservation, or anything else in the core, can end with. The
// PostgreSQL edge turns each failure into one ERROR (src/pg/errors.cpp).
enum class Status : std::uint8_t {
    Granted,          // ids [first, advance(first, count - 1)] are the caller's
    WaitForClock,     // the lead is used up: try again once the clock reads wait_until_ms
    NeedLease,        // extend the durable lease to cover lease_needed_ms, then retry
    ClockBeforeEpoch, // the system clock reads earlier than snowflake.epoch
    TimeExhausted,    // the 41-bit time field is used up for this epoch
};

// Shared by every backend. Standard layout, lock-free atomics only.
struct GeneratorState {
    std::atomic<std::uint64_t> last_id;     // highest id issued (or the restart floor)
    std::atomic<std::uint64_t> clock_high;  // highest clock reading seen, ms since epoch
    std::atomic<std::uint64_t> lease_ms;    // durable: ids up to this time may be issued
    std::atomic<std::uint32_t> in_regression;  // odd while the clock reads below clock_high
    std::atomic<std::uint64_t> regressions;    // clock-regression events seen
    std::atomic<std::uint64_t> borrowed_ms;    // ms taken ahead of the clock
    std::atomic<std::uint64_t> waits;          // calls that waited for the clock
    std::atomic<std::uint64_t> lease_extensions;
};
static_assert(std::is_standard_layout_v<GeneratorState>);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);

struct Config {
    std::int64_t epoch_unix_ms;   // the epoch, as ms since 1970-01-01 UTC
    std::uint32_t worker_id;      // 0..kMaxWorker
    std::uint64_t max_lead_ms;    // how far ids may run ahead of clock_high
    std::uint64_t lease_span_ms;  // how far a lease extension reaches past need
    std::uint64_t lease_idle_ms = 600000;  // the lease worker stops after this long unused
};

struct Reservation {
    Status status = Status::Granted;
    std::uint64_t first = 0;  // Granted: the first id
    std::uint64_t count = 0;  // Granted: how many ids, 1..requested
    std::uint64_t wait_until_ms = 0;    // WaitForClock: clock reading to wait for
    std::uint64_t lease_needed_ms = 0;  // NeedLease: time the lease must cover
    std::uint64_t regression_ms = 0;    // > 0: this call saw a new clock regression of that size
    bool lease_low = false;             // Granted: the lease should be extended soon
};

// Puts the state in its start-up shape. `floor_ms` is the persisted lease
// (every id issued before has a time <= floor_ms), or nothing on a new node.
inline void init_state(GeneratorState& state, bool has_floor, std::uint64_t floor_ms) noexcept {
    // The floor counts as a clock reading: after a restart with the clock set
    // back, ids continue from it without waiting for the clock to catch up.
    const std::uint64_t start = has_floor ? std::min(floor_ms + 1, kMaxTime) : 0;
    // Above every id of the floor's ms, of any worker; at kMaxTime that is kMaxId
    // (nothing left to issue), not an id of kMaxTime again.
    state.last_id.store(has_floor ? compose(std::min(floor_ms, kMaxTime), kMaxWorker, kMaxSequence)
                                  : 0);
    state.clock_high.store(start);
    state.lease_ms.store(has_floor ? floor_ms : 0);
    // Behind the floor after a crash is not a clock regression: the event is
    // open from the start (odd) and closes once the clock passes the floor.
    state.in_regression.store(has_floor ? 1 : 0);
    state.regressions.store(0);
    state.borrowed_ms.store(0);
    state.waits.store(0);
    state.lease_extensions.store(0);
}

// Raises the floor while running (a standby replaying its primary's lease):
// afterwards every id is above every id of time <= floor_ms. Only ever raises.
inline void raise_floor(GeneratorState& state, std::uint64_t floor_ms) noexcept {
    floor_ms = std::min(floor_ms, kMaxTime);
    const std::uint64_t last = compose(floor_ms, kMaxWorker, kMaxSequence);
    const std::uint64_t high = std::min(floor_ms + 1, kMaxTime);
    std::uint64_t seen = state.last_id.load();
    while (seen < last && !state.last_id.compare_exchange_weak(seen, last)) {
    }
    seen = state.clock_high.load();
    while (seen < high && !state.clock_high.compare_exchange_weak(seen, high)) {
    }
    seen = state.lease_ms.load();
    while (seen < floor_ms && !state.lease_ms.compare_exchange_weak(seen, floor_ms)) {
    }
    // As at start-up: being behind the floor is not a clock regression.
    std::uint32_t regression = state.in_regression.load();
    while (regression % 2 == 0 &&
           !state.in_regression.compare_exchange_weak(regression, regression + 1)) {
    }
}

// Where the lease should reach so that the next span of generation needs no disk.
inline std::uint64_t lease_target(const GeneratorState& state, const Config& config) noexcept {
    const std::uint64_t ahead = std::max(time_of(state.last_id.load(std::memory_order_relaxed)),
                                         state.clock_high.load(std::memory_order_relaxed));
    return std::min(ahead + config.max_lead_ms + config.lease_span_ms, kMaxTime);
}

// True when the lease covers less than half a span past the lead window.
inline bool lease_is_low(std::uint64_t last_ms, std::uint64_t lease_ms, const Config& config) noexcept {
    return last_ms + config.max_lead_ms + config.lease_span_ms / 2 > lease_ms;
}

// The lease worker's decision at clock reading `now_ms` (ms since the epoch):
// where to extend the lease to, or 0 when it need not. While the node is in
// use (an id issued within lease_idle_ms) the lease stays ahead of the clock,
// so that a call after a pause does not wait on disk; on an idle node it
// lapses, and the next call extends it itself.
inline std::uint64_t lease_worker_target(const GeneratorState& state, const Config& config,
                                         std::uint64_t now_ms) noexcept {
    const std::uint64_t last = state.last_id.load(std::memory_order_relaxed);
    if (last == 0) return 0;
    const std::uint64_t last_ms = time_of(last);
    if (now_ms > last_ms + config.lease_idle_ms) return 0;
    const std::uint64_t ahead = std::max(last_ms, now_ms);
    if (!lease_is_low(ahead, state.lease_ms.load(std::memory_order_relaxed), config)) return 0;
    return std::max(lease_target(state, config),
                    std::min(ahead + config.max_lead_ms + config.lease_span_ms, kMaxTime));
}

// Reserves up to `wanted` consecutive ids of this worker. `read_clock` returns
// ms since 1970-01-01 UTC. Lock-free: one clock read and one compare-and-swap
// in the common path; safe for any number of concurrent callers.
template <class Clock>
Reservation reserve(GeneratorState& state, const Config& config, std::uint64_t wanted,
                    Clock&& read_clock) noexcept {
    Reservation r;
    if (wanted == 0) return r;  // Granted, count 0: nothing reserved
    // clock_high is read before the clock, so a reading below it proves the
    // clock went back (and is not another caller's later reading racing ours).
    // in_regression too: it only changes by a CAS from the value read before
    // the clock, so a reading that another caller's report or catch-up has
    // overtaken (a caller preempted around a step) changes nothing.
    const std::uint32_t regression = state.in_regression.load(std::memory_order_acquire);
    const std::uint64_t seen = state.clock_high.load(std::memory_order_acquire);
    const std::int64_t unix_ms = read_clock();
    if (unix_ms < config.epoch_unix_ms) {
        r.status = Status::ClockBeforeEpoch;
        return r;
    }
    const std::uint64_t now = static_cast<std::uint64_t>(unix_ms - config.epoch_unix_ms);
    if (now > kMaxTime) {
        r.status = Status::TimeExhausted;
        return r;
    }
    if (now < seen) {
        // One log line and one count per event: the caller that opens it.
        std::uint32_t expected = regression;
        if (regression % 2 == 0 &&
            state.in_regression.compare_exchange_strong(expected, regression + 1)) {
            state.regressions.fetch_add(1, std::memory_order_relaxed);
            r.regression_ms = seen - now;
        }
    } else {
        // Caught up (reading clock_high again counts): a later step back is a new event.
        std::uint64_t high = seen;
        while (high < now && !state.clock_high.compare_exchange_weak(high, now)) {
        }
        std::uint32_t expected = regression;
        if (regression % 2 != 0)
            state.in_regression.compare_exchange_strong(expected, regression + 1);
    }
    const std::uint64_t limit_ms = std::min(std::max(seen, now) + config.max_lead_ms, kMaxTime);

    std::uint64_t last = state.last_id.load(std::memory_order_acquire);
    for (;;) {
        const std::uint64_t first =
            std::max(successor(last, config.worker_id), compose(now, config.worker_id, 0));
        const std::uint64_t first_ms = time_of(first);
        if (first_ms > kMaxTime) {  // past the last ms: the id would need bit 63
            r.status = Status::TimeExhausted;
            return r;
        }
        if (first_ms > limit_ms) {
            r.status = Status::WaitForClock;
            r.wait_until_ms = first_ms - config.max_lead_ms;
            return r;
        }
        const std::uint64_t lease = state.lease_ms.load(std::memory_order_acquire);
        if (first_ms > lease) {
            r.status = Status::NeedLease;
            r.lease_needed_ms = first_ms;
            return r;
        }
        const std::uint64_t count =
            std::min(wanted, ids_until_end_of(first, std::min(limit_ms, lease)));
        const std::uint64_t last_new = advance(first, count - 1);
        if (state.last_id.compare_exchange_weak(last, last_new, std::memory_order_acq_rel,
                                                std::memory_order_acquire)) {
            const std::uint64_t new_ms = time_of(last_new);
            const std::uint64_t before = std::max(now, time_of(last));
            if (new_ms > before)
                state.borrowed_ms.fetch_add(new_ms - before, std::memory_order_relaxed);
            r.first = first;
            r.count = count;
            r.lease_low = lease_is_low(new_ms, lease, config);
            return r;
        }
    }
}

}  // namespace snowflake
