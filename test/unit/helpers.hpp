// Shared bits of the core unit tests.
#pragma once
#include "../../src/core/generator.hpp"

#include <cstdint>
#include <ostream>

namespace snowflake {

// Readable gtest failure messages for Status and Fields.
inline const char* status_name(Status s) {
    switch (s) {
        case Status::Granted: return "Granted";
        case Status::WaitForClock: return "WaitForClock";
        case Status::NeedLease: return "NeedLease";
        case Status::ClockBeforeEpoch: return "ClockBeforeEpoch";
        case Status::TimeExhausted: return "TimeExhausted";
        case Status::NoWorker: return "NoWorker";
        case Status::Fenced: return "Fenced";
        case Status::WindowEnded: return "WindowEnded";
    }
    return "?";
}
inline void PrintTo(Status s, std::ostream* os) { *os << status_name(s); }
inline void PrintTo(const Fields& f, std::ostream* os) {
    *os << "{time_ms=" << f.time_ms << ", worker=" << f.worker_id << ", seq=" << f.sequence << "}";
}

}  // namespace snowflake

namespace snowflake::test {

// 2024-01-01 00:00:00 UTC, the default snowflake.epoch.
inline constexpr std::int64_t kDefaultEpoch = 1704067200000;

}  // namespace snowflake::test

namespace snowflake {

// The layout functions in the default layout, as most tests use them; the
// extension's code always names the layout.
constexpr std::uint64_t compose(std::uint64_t time, std::uint64_t worker_id, std::uint64_t sequence) noexcept {
    return compose(time, worker_id, sequence, kDefaultLayout);
}
constexpr Fields decompose(std::uint64_t id) noexcept { return decompose(id, kDefaultLayout); }
constexpr std::uint64_t time_of(std::uint64_t id) noexcept { return time_of(id, kDefaultLayout); }
constexpr std::uint64_t advance(std::uint64_t id, std::uint64_t steps) noexcept {
    return advance(id, steps, kDefaultLayout);
}
constexpr std::uint64_t ids_until_end_of(std::uint64_t first, std::uint64_t last) noexcept {
    return ids_until_end_of(first, last, kDefaultLayout);
}
constexpr std::uint64_t successor(std::uint64_t last, std::uint32_t worker_id) noexcept {
    return successor(last, worker_id, kDefaultLayout);
}

// No worker id in effect (as before a registry's first grant).
inline void withdraw_grant(GeneratorState& state) noexcept { state.grant.store(pack_grant(kNoWorker, 0)); }

}  // namespace snowflake
