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
    WaitForClock,     // the lead is used up: try again once the clock reads wait_until_units
    NeedLease,        // extend the durable lease to cover lease_needed_units, then retry
    ClockBeforeEpoch, // the system clock reads earlier than snowflake.epoch
    TimeExhausted,    // the layout's time field is used up for this epoch
    NoWorker,         // no worker id is in effect
    Fenced,           // the worker id is a copied data directory's source's (see fence)
    WindowEnded,      // the id would be at or past the end of the worker id's window (a registry's grant)
};

inline constexpr std::uint64_t kHandover = std::uint64_t{1} << 63;  // above every id

// The worker id in effect and the end of the window of id times it may be
// used in (a registry's grant; none for a worker id set by hand), kept in one
// word so that no attempt pairs a worker id with another grant's window.
struct Grant {
    std::uint32_t worker_id = kNoWorker;
    std::uint64_t until = 0;  // ids of this worker id have times below it (time units)
};
inline constexpr int kGrantWorkerBits = 17;  // the worker ids and kNoWorker
inline constexpr std::uint64_t kGrantNoWorker = (std::uint64_t{1} << kGrantWorkerBits) - 1;
inline constexpr std::uint64_t kGrantNoEnd = (std::uint64_t{1} << (64 - kGrantWorkerBits)) - 1;
inline constexpr std::uint64_t kForever = ~std::uint64_t{0};  // Grant::until of a hand-set worker id
static_assert(kMaxAnyWorker < kGrantNoWorker);

// A window end past kGrantNoEnd - 1 (4,000 years of ms) is no end.
constexpr std::uint64_t pack_grant(std::uint32_t worker_id, std::uint64_t until) noexcept {
    const std::uint64_t worker = worker_id > kMaxAnyWorker ? kGrantNoWorker : worker_id;
    return std::min(until, kGrantNoEnd) << kGrantWorkerBits | worker;
}
constexpr Grant unpack_grant(std::uint64_t word) noexcept {
    const std::uint64_t worker = word & kGrantNoWorker;
    const std::uint64_t until = word >> kGrantWorkerBits;
    return Grant{worker == kGrantNoWorker ? kNoWorker : static_cast<std::uint32_t>(worker),
                 until == kGrantNoEnd ? kForever : until};
}

// Shared by every backend. Standard layout, lock-free atomics only.
struct GeneratorState {
    std::atomic<std::uint64_t> last_id;        // highest id issued since start; 0: none yet
    std::atomic<std::uint64_t> grant;          // pack_grant: the worker id in effect and its window's end
    std::atomic<std::uint64_t> floor_id;       // ids issued before start (or by the primary) are <= it
    std::atomic<std::uint64_t> floor_lead_units;  // how far the floor put ids ahead of clock_high
    std::atomic<std::uint64_t> clock_high;     // highest clock reading seen, also before a restart
    std::atomic<std::uint64_t> lease_units;       // durable: ids up to this time may be issued
    std::atomic<std::uint64_t> lease_wanted_units;  // the highest lease a caller has asked for
    std::atomic<std::uint64_t> handover_last;  // kHandover | the id the first id under a new worker id replaced
    std::atomic<std::uint32_t> in_regression;  // odd while the clock reads below clock_high
    std::atomic<std::uint64_t> regressions;    // clock-regression events seen
    std::atomic<std::uint64_t> borrowed_units;  // time units taken ahead of the clock
    std::atomic<std::uint64_t> waits;          // calls that waited for the clock
    std::atomic<std::uint64_t> lease_extensions;
    // last: 8 KB, apart from the fields every call reads
    std::atomic<std::uint64_t> fenced[(kMaxAnyWorker + 1) / 64];  // refused worker ids: a copy's sources'
};
static_assert(std::is_standard_layout_v<GeneratorState>);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);

inline Grant grant_of(const GeneratorState& state) noexcept {
    return unpack_grant(state.grant.load(std::memory_order_acquire));
}
inline std::uint32_t worker_in_effect(const GeneratorState& state) noexcept { return grant_of(state).worker_id; }

// The fence: worker ids a copy of another node's data directory refuses. A
// bit is cleared (adoption) only after the floor and the lease are raised, and
// read with acquire: a caller that sees it cleared sees them raised.
inline bool is_fenced(const GeneratorState& state, std::uint32_t worker_id) noexcept {
    return worker_id <= kMaxAnyWorker &&
           (state.fenced[worker_id / 64].load(std::memory_order_acquire) >> (worker_id % 64) & 1) != 0;
}
inline void fence(GeneratorState& state, std::uint32_t worker_id, bool fenced) noexcept {
    if (worker_id > kMaxAnyWorker) return;
    const std::uint64_t bit = std::uint64_t{1} << (worker_id % 64);
    if (fenced)
        state.fenced[worker_id / 64].fetch_or(bit);
    else
        state.fenced[worker_id / 64].fetch_and(~bit);
}

// Every time below — clock readings, id times, the lease, the floor — is in
// the layout's time units since the epoch (ms in the default layout).
struct Config {
    std::int64_t epoch_unix_ms;   // the epoch, as ms since 1970-01-01 UTC
    std::uint64_t max_lead_units;    // how far ids may run ahead of clock_high (units)
    std::uint64_t lease_span_units;  // how far the lease reaches past the ids or the clock (units)
    Layout layout = kDefaultLayout;
};

// A clock reading (ms since 1970) as time units since the epoch; false before the epoch.
inline bool units_since_epoch(const Config& config, std::int64_t unix_ms, std::uint64_t& units) noexcept {
    if (unix_ms < config.epoch_unix_ms) return false;
    units = static_cast<std::uint64_t>(unix_ms - config.epoch_unix_ms);
    // a division costs more than the rest of a call: none in 1 ms layouts (as
    // a select, the compiler would divide on every call)
    if (config.layout.unit_ms != 1) [[unlikely]]
        units /= static_cast<std::uint64_t>(config.layout.unit_ms);
    return true;
}

struct Reservation {
    Status status = Status::Granted;
    std::uint64_t first = 0;  // Granted: the first id
    std::uint64_t count = 0;  // Granted: how many ids, 1..requested
    std::uint64_t wait_until_units = 0;    // WaitForClock: clock reading to wait for
    std::uint64_t lease_needed_units = 0;  // NeedLease: time the lease must cover
    std::uint64_t regression_units = 0;    // > 0: this call saw a new clock regression of that size
    bool lease_low = false;             // Granted: the lease should be extended soon
};

namespace detail {
inline void raise_to(std::atomic<std::uint64_t>& value, std::uint64_t to) noexcept {
    std::uint64_t seen = value.load();
    while (seen < to && !value.compare_exchange_weak(seen, to)) {
    }
}
}  // namespace detail

// Raises the floor: afterwards every id is above every id of time <= floor_units.
// `clock_units` is the highest clock reading the floor was taken at (a restart
// reads it from the lease file, a standby from its primary's lease record):
// it counts as a reading seen, so a clock behind it is a regression. Ids that
// the floor puts ahead of that reading may keep that lead (floor_lead_units)
// without waiting, until they come back within max_lead of the clock. Only
// ever raises.
inline void raise_floor(GeneratorState& state, const Layout& layout, std::uint64_t floor_units,
                        std::uint64_t clock_units) noexcept {
    floor_units = std::min(floor_units, layout.max_time);
    detail::raise_to(state.floor_id, compose(floor_units, layout.max_worker, layout.max_sequence, layout));
    detail::raise_to(state.clock_high, std::min(clock_units, layout.max_time));
    const std::uint64_t high = state.clock_high.load();
    if (floor_units + 1 > high) detail::raise_to(state.floor_lead_units, floor_units + 1 - high);
}

// Puts the state in its start-up shape: no id issued, the given worker id,
// and, when a lease was persisted, its mark as the floor.
inline void init_state(GeneratorState& state, const Layout& layout, std::uint32_t worker_id,
                       bool has_lease, std::uint64_t lease_units, std::uint64_t clock_units) noexcept {
    state.last_id.store(0);
    state.grant.store(pack_grant(worker_id, kForever));
    for (auto& word : state.fenced) word.store(0);
    state.floor_id.store(0);
    state.floor_lead_units.store(0);
    state.clock_high.store(0);
    state.lease_units.store(has_lease ? lease_units : 0);
    state.lease_wanted_units.store(0);
    state.handover_last.store(0);
    state.in_regression.store(0);
    state.regressions.store(0);
    state.borrowed_units.store(0);
    state.waits.store(0);
    state.lease_extensions.store(0);
    if (has_lease) raise_floor(state, layout, lease_units, clock_units);
}

// The highest id issued, before or since start: new ids go above it.
inline std::uint64_t id_floor(const GeneratorState& state) noexcept {
    return std::max(state.last_id.load(std::memory_order_acquire),
                    state.floor_id.load(std::memory_order_acquire));
}

// How far ids at `ms` stand ahead by borrowing: `ms`, or 0 when it is at most
// the first millisecond above the floor, where a restart puts the ids without
// any borrowing (the floor is the old lease, itself ahead of the clock).
inline std::uint64_t borrowed_to(const GeneratorState& state, const Layout& layout,
                                 std::uint64_t ms) noexcept {
    const std::uint64_t floor = state.floor_id.load(std::memory_order_relaxed);
    return floor != 0 && ms <= time_of(floor, layout) + 1 ? 0 : ms;
}

// Where the ids stand for the lease, at clock reading `now_units`: the highest
// clock reading, or the time of the id needed or last issued if ids were
// borrowed that far, but never past the lead window of that clock reading.
inline std::uint64_t lease_base(const GeneratorState& state, const Config& config,
                                std::uint64_t needed_units, std::uint64_t now_units) noexcept {
    const std::uint64_t high = std::max(now_units, state.clock_high.load(std::memory_order_relaxed));
    const std::uint64_t last = state.last_id.load(std::memory_order_relaxed);
    const std::uint64_t ahead =
        borrowed_to(state, config.layout, std::max(needed_units, last == 0 ? 0 : time_of(last, config.layout)));
    return std::max(high, std::min(ahead, high + config.max_lead_units));
}

// The lease to write for a caller that needs `needed_units`, at clock reading
// `now_units`: a span past where the ids stand, and at least what is needed. Ids
// borrowed ahead of the clock move it within the lead window, and nothing else
// does, not the floor a restart starts from: with no id borrowed, the first id
// after any number of crashes in a row is at most lease_span (+1 ms) ahead of
// the clock, whatever max_lead.
inline std::uint64_t lease_target(const GeneratorState& state, const Config& config,
                                  std::uint64_t needed_units, std::uint64_t now_units = 0) noexcept {
    const std::uint64_t base = lease_base(state, config, needed_units, now_units);
    return std::min(std::max(needed_units, base + config.lease_span_units), config.layout.max_time);
}

// True when the lease covers less than half a span past `base_units` (see lease_base).
inline bool lease_is_low(std::uint64_t base_units, std::uint64_t lease_units, const Config& config) noexcept {
    return base_units + config.lease_span_units / 2 > lease_units;
}

// Asks for the lease to cover `needed_units` (the lease writer reads it).
inline void request_lease(GeneratorState& state, std::uint64_t needed_units) noexcept {
    detail::raise_to(state.lease_wanted_units, needed_units);
}

// The lease writer's decision at clock reading `now_units` (units since the epoch):
// where to extend the lease to, or 0 when it need not. It serves requests,
// and keeps the lease ahead of the clock while the node is in use: until one
// lease span after the time of the last id. An idle node, or one restarted
// without issuing an id, writes nothing.
inline std::uint64_t lease_writer_target(const GeneratorState& state, const Config& config,
                                         std::uint64_t now_units) noexcept {
    const std::uint64_t lease = state.lease_units.load();
    const std::uint64_t wanted = state.lease_wanted_units.load();
    if (wanted > lease) return lease_target(state, config, wanted, now_units);
    const std::uint64_t last = state.last_id.load(std::memory_order_relaxed);
    if (last == 0 || now_units > time_of(last, config.layout) + config.lease_span_units) return 0;
    if (!lease_is_low(lease_base(state, config, 0, now_units), lease, config)) return 0;
    return lease_target(state, config, 0, now_units);
}

// A change of the node's worker id. Every later attempt of reserve() uses the
// new one; an attempt that read the old one before fails its compare-and-swap
// once an id under the new one is issued. So the caller then issues one id
// (under the new worker id) and reads the last id under the old one from
// handed_over_last(): the one the first id under the new worker id replaced.
inline std::uint32_t hand_over(GeneratorState& state, std::uint32_t worker_id) noexcept {
    state.handover_last.store(0);
    return unpack_grant(state.grant.exchange(pack_grant(worker_id, kForever))).worker_id;
}

// A registry's grant of `worker_id` for the id times [from, until), at clock
// reading `now`: every later id is at `from` or above (the floor rises to it;
// when `from` is ahead of the clock, ids may stand that far ahead) and below `until`.
// The floor rises before the grant is published, so an attempt that reads the
// grant reads the floor too. Renewals (the same worker id, a later `until`)
// and a new worker id are published the same way: an attempt that read the
// previous grant still issues ids inside that grant's window only.
inline void apply_grant(GeneratorState& state, const Layout& layout, std::uint32_t worker_id,
                        std::uint64_t from, std::uint64_t until, std::uint64_t now) noexcept {
    if (from > 0) raise_floor(state, layout, from - 1, now);
    state.grant.store(pack_grant(worker_id, until), std::memory_order_release);
}


// After hand_over() and one id issued since: true and the last id issued under
// the old worker id (0: none since start) once the first id under the new one
// has recorded it.
inline bool handed_over_last(const GeneratorState& state, std::uint64_t& last) noexcept {
    const std::uint64_t recorded = state.handover_last.load(std::memory_order_acquire);
    last = recorded & ~kHandover;
    return recorded != 0;
}

// Reserves up to `wanted` consecutive ids of the node's worker id. `read_clock`
// returns ms since 1970-01-01 UTC. Lock-free: one clock read and one
// compare-and-swap in the common path; safe for any number of concurrent callers.
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
    const Layout layout = config.layout;  // a local copy: not reloaded after each atomic operation
    std::uint64_t now;
    if (!units_since_epoch(config, read_clock(), now)) {
        r.status = Status::ClockBeforeEpoch;
        return r;
    }
    if (now > layout.max_time) {
        r.status = Status::TimeExhausted;
        return r;
    }
    if (now < seen) {
        // One log line and one count per event: the caller that opens it.
        std::uint32_t expected = regression;
        if (regression % 2 == 0 &&
            state.in_regression.compare_exchange_strong(expected, regression + 1)) {
            state.regressions.fetch_add(1, std::memory_order_relaxed);
            r.regression_units = seen - now;
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
    // The lead limit: max_lead past the clock (or the floor's lead, after a
    // restart, while ids keep it), and max_lead past the floor, which acts as a
    // clock reading for this alone: after a restart with the clock far behind,
    // a full lead of ids comes without waiting, as after a step back.
    const std::uint64_t clock = std::max(seen, now);
    const std::uint64_t floor_lead = state.floor_lead_units.load(std::memory_order_relaxed);
    const std::uint64_t lead = std::max(config.max_lead_units, floor_lead);
    const std::uint64_t floor_id = state.floor_id.load(std::memory_order_acquire);
    const std::uint64_t past_floor_units =
        floor_id == 0 ? 0 : time_of(floor_id, layout) + 1 + config.max_lead_units;
    const std::uint64_t limit_units = std::min(std::max(clock + lead, past_floor_units), layout.max_time);

    // The worker id is read after the last id, on every attempt: a hand-over
    // (hand_over) changes the worker id and then issues an id under the
    // new one, so an attempt still using the old worker id fails its CAS.
    std::uint64_t last = state.last_id.load(std::memory_order_acquire);
    for (;;) {
        const Grant grant = grant_of(state);
        const std::uint32_t worker_id = grant.worker_id;
        if (worker_id == kNoWorker || is_fenced(state, worker_id)) {
            r.status = worker_id == kNoWorker ? Status::NoWorker : Status::Fenced;
            return r;
        }
        const std::uint64_t above =
            std::max(last, state.floor_id.load(std::memory_order_acquire));
        const std::uint64_t first =
            std::max(above == 0 ? 0 : successor(above, worker_id, layout), compose(now, worker_id, 0, layout));
        const std::uint64_t first_units = time_of(first, layout);
        if (first_units > layout.max_time) {  // past the last unit: the id would not fit
            r.status = Status::TimeExhausted;
            return r;
        }
        if (first_units > limit_units) {
            r.status = Status::WaitForClock;
            r.wait_until_units = first_units - lead;
            return r;
        }
        if (first_units >= grant.until) {  // the one comparison a registry's window costs
            r.status = Status::WindowEnded;
            return r;
        }
        const std::uint64_t lease = state.lease_units.load(std::memory_order_acquire);
        if (first_units > lease) {
            r.status = Status::NeedLease;
            r.lease_needed_units = first_units;
            return r;
        }
        const std::uint64_t count = std::min(
            wanted, ids_until_end_of(first, std::min({limit_units, lease, grant.until - 1}), layout));
        const std::uint64_t last_new = advance(first, count - 1, layout);
        if (state.last_id.compare_exchange_weak(last, last_new, std::memory_order_acq_rel,
                                                std::memory_order_acquire)) {
            const std::uint64_t new_units = time_of(last_new, layout);
            const std::uint64_t before = std::max(now, time_of(above, layout));
            if (new_units > before)
                state.borrowed_units.fetch_add(new_units - before, std::memory_order_relaxed);
            // The first id under a new worker id records what it replaced: the
            // last id ever issued under the old one (see hand_over).
            if (last == 0 || decompose(last, layout).worker_id != worker_id)
                state.handover_last.store(kHandover | last, std::memory_order_release);
            // Back within max_lead of the clock: the floor's allowance has done its job.
            if (floor_lead != 0 && new_units <= clock + config.max_lead_units)
                state.floor_lead_units.store(0, std::memory_order_relaxed);
            r.first = first;
            r.count = count;
            r.lease_low = lease_is_low(
                std::max(clock, std::min(borrowed_to(state, layout, new_units), clock + config.max_lead_units)), lease,
                config);
            return r;
        }
    }
}

}  // namespace snowflake
