// Layouts by name or by their fields: other systems' (Twitter, Discord, ...;
// and custom ones) for decoding and range bounds, and the one a node
// generates (snowflake.layout). Pure C++, no PostgreSQL header; nothing here
// allocates or throws.
#pragma once
#include "text.hpp"

#include <cstdint>

namespace snowflake {

// A layout (layout.hpp: time highest, then worker and sequence in either
// order, in the low time_bits + worker_bits + sequence_bits bits; for other
// systems at most 64: bit 63, the sign, may be the top time bit, as with
// Discord and Instagram) and its epoch.
struct IdLayout : Layout {
    std::int64_t epoch_unix_ms = 0;  // time 0
};

struct LayoutFields {
    std::uint64_t time;  // in units since the epoch
    std::uint32_t worker_id;
    std::uint32_t sequence;
};

// A preset name (twitter, discord, instagram, sonyflake, pgedge, mastodon) or
// a custom layout: whitespace-separated key=value words,
//   epoch=<unix ms | YYYY-MM-DD[THH:MM[:SS[.fff]]][Z|+HH[:MM]]>  (required)
//   unit=<1..86400000>ms                                         (default 1ms)
//   time=<bits> then worker=<bits> and sequence=<bits>, highest field first.
// On failure `problem` says what is wrong (a static string).
bool parse_layout(const char* text, IdLayout& layout, const char*& problem) noexcept;

// snowflake.layout: a preset (default, js53, sonyflake_style) or the custom
// grammar without an epoch (snowflake.epoch is the node's), within
// generation's bounds (layout.hpp): 1..1000 ms units, 20 time bits or more
// spanning at most 2^52 ms, 1..16 worker bits, 1..22 sequence bits, at most
// 63 bits in all.
bool parse_node_layout(const char* text, Layout& layout, const char*& problem) noexcept;
// The same, for ids counted from epoch_unix_ms: "sonyflake" (as in
// parse_layout: Sonyflake's fields and epoch) is taken with Sonyflake's own
// epoch only, so that the name means one layout everywhere.
inline constexpr std::int64_t kSonyflakeEpochUnixMs = 1409529600000;  // 2014-09-01 UTC
bool parse_node_layout(const char* text, std::int64_t epoch_unix_ms, Layout& layout, const char*& problem) noexcept;
// The layout in that grammar ("time=41 worker=10 sequence=12", "unit=10ms
// time=39 sequence=8 worker=16"), into buf of kLayoutTextMax bytes.
inline constexpr std::size_t kLayoutTextMax = 64;
void format_node_layout(const Layout& layout, char* buf) noexcept;

// Whether an id (0..2^63-1) fits in the layout's bits.
bool layout_holds(const IdLayout& layout, std::uint64_t id) noexcept;
LayoutFields layout_decompose(const IdLayout& layout, std::uint64_t id) noexcept;
// The largest time value of a non-negative id.
std::uint64_t layout_max_time(const IdLayout& layout) noexcept;
// The first millisecond of a time value, since 1970; false on overflow.
bool layout_unix_ms(const IdLayout& layout, std::uint64_t time, std::int64_t& unix_ms) noexcept;

enum class BoundResult : std::uint8_t { Ok, BeforeEpoch, PastEnd };
// The smallest id of the time unit holding `unix_ms`.
BoundResult layout_first_id(const IdLayout& layout, std::int64_t unix_ms, std::uint64_t& id) noexcept;

}  // namespace snowflake
