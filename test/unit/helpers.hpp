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
