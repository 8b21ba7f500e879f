// The one definition of the id layout. Pure C++: no PostgreSQL header may be
// included before or by this file.
#pragma once
#ifdef PG_VERSION_NUM
static_assert(false, "src/core must not see PostgreSQL headers");
#endif

#include <cstdint>

namespace snowflake {

// | 63 sign (0) | 62..22 time, ms since epoch | 21..12 worker | 11..0 sequence |
inline constexpr int kSequenceBits = 12;
inline constexpr int kWorkerBits = 10;
inline constexpr int kTimeBits = 41;
inline constexpr int kWorkerShift = kSequenceBits;
inline constexpr int kTimeShift = kSequenceBits + kWorkerBits;

inline constexpr std::uint64_t kMaxSequence = (std::uint64_t{1} << kSequenceBits) - 1;
inline constexpr std::uint64_t kMaxWorker = (std::uint64_t{1} << kWorkerBits) - 1;
inline constexpr std::uint64_t kMaxTime = (std::uint64_t{1} << kTimeBits) - 1;
inline constexpr std::uint64_t kMaxId = (std::uint64_t{1} << 63) - 1;
inline constexpr std::uint64_t kIdsPerMs = kMaxSequence + 1;
inline constexpr std::uint32_t kNoWorker = UINT32_MAX;  // no worker id (unset)

static_assert(kTimeShift + kTimeBits == 63, "the layout fills 63 bits");

struct Fields {
    std::uint64_t time_ms;   // ms since the epoch
    std::uint32_t worker_id;
    std::uint32_t sequence;
    bool operator==(const Fields&) const = default;
};

// Callers guarantee each field is within its range.
constexpr std::uint64_t compose(std::uint64_t time_ms, std::uint64_t worker_id,
                                std::uint64_t sequence) noexcept {
    return (time_ms << kTimeShift) | (worker_id << kWorkerShift) | sequence;
}

constexpr Fields decompose(std::uint64_t id) noexcept {
    return Fields{(id >> kTimeShift) & kMaxTime,
                  static_cast<std::uint32_t>((id >> kWorkerShift) & kMaxWorker),
                  static_cast<std::uint32_t>(id & kMaxSequence)};
}

constexpr std::uint64_t time_of(std::uint64_t id) noexcept { return id >> kTimeShift; }

// The id that is `steps` positions after `id` in the id stream of id's worker:
// the sequence counts on and carries into the next milliseconds.
constexpr std::uint64_t advance(std::uint64_t id, std::uint64_t steps) noexcept {
    const Fields f = decompose(id);
    const std::uint64_t position = f.sequence + steps;
    return compose(f.time_ms + position / kIdsPerMs, f.worker_id, position % kIdsPerMs);
}

// Number of ids of one worker from `first` through the end of millisecond `last_ms`.
constexpr std::uint64_t ids_until_end_of(std::uint64_t first, std::uint64_t last_ms) noexcept {
    const Fields f = decompose(first);
    if (last_ms < f.time_ms) return 0;
    return (last_ms - f.time_ms + 1) * kIdsPerMs - f.sequence;
}

// The smallest id of worker `worker_id` that is greater than `last`.
constexpr std::uint64_t successor(std::uint64_t last, std::uint32_t worker_id) noexcept {
    const Fields f = decompose(last);
    if (worker_id == f.worker_id && f.sequence < kMaxSequence) return last + 1;
    if (worker_id > f.worker_id) return compose(f.time_ms, worker_id, 0);
    return compose(f.time_ms + 1, worker_id, 0);
}

}  // namespace snowflake
