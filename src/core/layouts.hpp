// Other systems' id layouts (Twitter, Discord, ...; and custom ones), for
// decoding and range bounds only: this extension generates its own layout
// (layout.hpp). Pure C++, no PostgreSQL header; nothing here allocates or throws.
#pragma once
#include "text.hpp"

#include <cstdint>

namespace snowflake {

// | time (highest) | worker and sequence, in either order | in the low
// time_bits + worker_bits + sequence_bits bits (at most 64: bit 63, the
// sign, may be the top time bit, as with Discord and Instagram).
struct IdLayout {
    std::int64_t epoch_unix_ms;   // time 0
    std::int64_t unit_ms;         // one step of the time field
    int time_bits;                // 1..63
    int worker_bits;              // 0..31 (node, shard, machine, ...)
    int sequence_bits;            // 0..31
    bool sequence_above_worker;   // Sonyflake, pgEdge
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
