// The one definition of the id layout a node generates (snowflake.layout).
// Pure C++: no PostgreSQL header may be included before or by this file.
#pragma once
#ifdef PG_VERSION_NUM
static_assert(false, "src/core must not see PostgreSQL headers");
#endif

#include <cstdint>

namespace snowflake {

// | 63 sign (0) | time, in units since the epoch | worker and sequence, in
// either order | — fields from the highest bits down, at most 63 bits in
// all (fewer keep every id below 2^bits, as js53 does below 2^53). Derived
// shifts and maxima are computed once (make_layout), so the hot path reads
// them as plain numbers.
// Generation takes the bounds below (parse_node_layout); decoding other
// systems' ids (layout_names.hpp) takes any layout of at most 64 bits.
struct Layout {
    std::int64_t unit_ms;        // one step of the time field, 1..1000 ms
    int time_bits;               // 20 or more, spanning at most 2^52 ms
    int worker_bits;             // 1..16
    int sequence_bits;           // 1..22
    bool sequence_above_worker;  // time | sequence | worker (Sonyflake-style)
    int time_shift;
    int worker_shift;
    int sequence_shift;
    std::uint64_t max_time;
    std::uint64_t max_worker;
    std::uint64_t max_sequence;
    std::uint64_t ids_per_unit;  // of one worker
    bool operator==(const Layout&) const = default;
};

// Generation's bounds on a layout (parse_node_layout checks them).
inline constexpr int kMinTimeBits = 20;
inline constexpr int kMaxWorkerBits = 16;
inline constexpr int kMaxSequenceBits = 22;
inline constexpr std::int64_t kMaxUnitMs = 1000;
inline constexpr std::uint64_t kMaxAnyWorker = (std::uint64_t{1} << kMaxWorkerBits) - 1;

constexpr Layout make_layout(std::int64_t unit_ms, int time_bits, int worker_bits, int sequence_bits,
                             bool sequence_above_worker) noexcept {
    Layout l{unit_ms, time_bits, worker_bits, sequence_bits, sequence_above_worker, 0, 0, 0, 0, 0, 0, 0};
    l.time_shift = worker_bits + sequence_bits;
    l.worker_shift = sequence_above_worker ? 0 : sequence_bits;
    l.sequence_shift = sequence_above_worker ? worker_bits : 0;
    l.max_time = time_bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << time_bits) - 1;
    l.max_worker = (std::uint64_t{1} << worker_bits) - 1;
    l.max_sequence = (std::uint64_t{1} << sequence_bits) - 1;
    l.ids_per_unit = l.max_sequence + 1;
    return l;
}

// The default: 41 bits of ms (about 69 years), 10-bit worker, 12-bit sequence.
inline constexpr Layout kDefaultLayout = make_layout(1, 41, 10, 12, false);
static_assert(kDefaultLayout.time_shift + kDefaultLayout.time_bits == 63, "the default fills 63 bits");

// The default layout's numbers, for what is fixed to it (tests, the epoch forms).
inline constexpr int kTimeShift = kDefaultLayout.time_shift;
inline constexpr std::uint64_t kMaxSequence = kDefaultLayout.max_sequence;
inline constexpr std::uint64_t kMaxWorker = kDefaultLayout.max_worker;
inline constexpr std::uint64_t kMaxTime = kDefaultLayout.max_time;
inline constexpr std::uint64_t kIdsPerMs = kDefaultLayout.ids_per_unit;
inline constexpr std::uint64_t kMaxId = (std::uint64_t{1} << 63) - 1;
inline constexpr std::uint32_t kNoWorker = UINT32_MAX;  // no worker id (unset)

struct Fields {
    std::uint64_t time_ms;   // time units since the epoch (ms in the default layout)
    std::uint32_t worker_id;
    std::uint32_t sequence;
    bool operator==(const Fields&) const = default;
};

// Callers guarantee each field is within its range.
constexpr std::uint64_t compose(std::uint64_t time, std::uint64_t worker_id, std::uint64_t sequence,
                                const Layout& l) noexcept {
    return (time << l.time_shift) | (worker_id << l.worker_shift) | (sequence << l.sequence_shift);
}

constexpr Fields decompose(std::uint64_t id, const Layout& l) noexcept {
    return Fields{(id >> l.time_shift) & l.max_time,
                  static_cast<std::uint32_t>((id >> l.worker_shift) & l.max_worker),
                  static_cast<std::uint32_t>((id >> l.sequence_shift) & l.max_sequence)};
}

constexpr std::uint64_t time_of(std::uint64_t id, const Layout& l) noexcept {
    return id >> l.time_shift;
}

// The id that is `steps` positions after `id` in the id stream of id's worker:
// the sequence counts on and carries into the next time units.
constexpr std::uint64_t advance(std::uint64_t id, std::uint64_t steps,
                                const Layout& l) noexcept {
    const Fields f = decompose(id, l);
    const std::uint64_t position = f.sequence + steps;  // ids_per_unit is 2^sequence_bits: no division
    return compose(f.time_ms + (position >> l.sequence_bits), f.worker_id, position & l.max_sequence, l);
}

// Number of ids of one worker from `first` through the end of time unit `last`.
constexpr std::uint64_t ids_until_end_of(std::uint64_t first, std::uint64_t last,
                                         const Layout& l) noexcept {
    const Fields f = decompose(first, l);
    if (last < f.time_ms) return 0;
    return ((last - f.time_ms + 1) << l.sequence_bits) - f.sequence;
}

// The smallest id of worker `worker_id` that is greater than `last`.
constexpr std::uint64_t successor(std::uint64_t last, std::uint32_t worker_id,
                                  const Layout& l) noexcept {
    const Fields f = decompose(last, l);
    if (l.sequence_above_worker) {  // | time | sequence | worker |
        if (worker_id > f.worker_id) return compose(f.time_ms, worker_id, f.sequence, l);
        if (f.sequence < l.max_sequence) return compose(f.time_ms, worker_id, f.sequence + 1, l);
        return compose(f.time_ms + 1, worker_id, 0, l);
    }
    if (worker_id == f.worker_id && f.sequence < l.max_sequence) return last + 1;
    if (worker_id > f.worker_id) return compose(f.time_ms, worker_id, 0, l);
    return compose(f.time_ms + 1, worker_id, 0, l);
}

}  // namespace snowflake
