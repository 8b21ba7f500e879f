// Text codecs: id input, the epoch setting, the lease file. Pure C++, no
// PostgreSQL header; nothing here allocates or throws.
#pragma once
#include "layout.hpp"

#include <cstddef>
#include <cstdint>

namespace snowflake {

enum class ParseResult : std::uint8_t { Ok, Syntax, OutOfRange };

// Decimal digits only, 0..2^63-1: no sign, no spaces, not empty.
ParseResult parse_id(const char* text, std::uint64_t& id) noexcept;

// 'YYYY-MM-DD[( |T)HH:MM[:SS[.fff]]][[ ](Z|UTC|+HH[:MM]|-HH[:MM])]', UTC unless an
// offset is given, years 1970..9999. Sets ms since 1970-01-01 00:00:00 UTC.
bool parse_timestamp(const char* text, std::int64_t& unix_ms) noexcept;

// The lease file: the epoch it was taken under, its high-water mark, the
// highest clock reading seen when it was written, and the worker id in effect.
struct Lease {
    std::int64_t epoch_unix_ms;
    std::uint64_t lease_ms;                // every id issued has a time <= lease_ms
    std::uint64_t clock_ms;                // ms since the epoch
    std::uint32_t worker_id = kNoWorker;   // kNoWorker: none (or a version 1/2 file)
    bool operator==(const Lease&) const = default;
};

// Room for the text of any Lease, in range or not (at most 134 characters and
// a NUL: a negative epoch, 20-digit marks, a 10-digit worker id).
inline constexpr std::size_t kLeaseTextMax = 160;

// Writes the lease as text into buf (kLeaseTextMax bytes); returns its length.
std::size_t format_lease(const Lease& lease, char* buf) noexcept;
// Strict: a file that is not exactly what format_lease writes (version 3), or
// wrote in versions 1 (no clock_ms: 0) and 2 (no worker_id), is rejected.
bool parse_lease(const char* text, std::size_t length, Lease& lease) noexcept;

}  // namespace snowflake
