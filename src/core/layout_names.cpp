#include "layout_names.hpp"

#include <cstdio>
#include <cstring>

namespace snowflake {
namespace {

struct Preset {
    const char* name;
    IdLayout layout;
};

constexpr IdLayout id_layout(std::int64_t epoch_unix_ms, Layout layout) noexcept {
    IdLayout l{};
    static_cast<Layout&>(l) = layout;
    l.epoch_unix_ms = epoch_unix_ms;
    return l;
}

// Sources and published ids for each: sql/layouts.sql and the README.
constexpr Preset kPresets[] = {
    {"twitter", id_layout(1288834974657, make_layout(1, 41, 10, 12, false))},    // 5-bit datacenter, 5-bit worker
    {"discord", id_layout(1420070400000, make_layout(1, 42, 10, 12, false))},    // 5-bit worker, 5-bit process
    {"instagram", id_layout(1314220021721, make_layout(1, 41, 13, 10, false))},  // 13-bit shard
    {"sonyflake", id_layout(kSonyflakeEpochUnixMs, make_layout(10, 39, 16, 8, true))},  // 16-bit machine in the low bits
    {"pgedge", id_layout(1672531200000, make_layout(1, 41, 10, 12, true))},      // 10-bit node in the low bits
    {"mastodon", id_layout(0, make_layout(1, 48, 0, 16, false))},                // 16 low bits: hashed sequence
};

// snowflake.layout's presets (the epoch is snowflake.epoch). js53: every id
// below 2^53 (a JSON number holds it exactly) for 2^41 ms, about 69.7 years:
// 64 worker ids, 64 ids a millisecond each. sonyflake_style: Sonyflake's
// fields under any epoch ("sonyflake" is Sonyflake's, epoch included).
constexpr struct {
    const char* name;
    Layout layout;
} kNodePresets[] = {
    {"default", kDefaultLayout},
    {"js53", make_layout(1, 41, 6, 6, false)},
    {"sonyflake_style", make_layout(10, 39, 16, 8, true)},
};

constexpr std::int64_t kLastEpochMs = 253402300799999;  // 9999-12-31 23:59:59.999 UTC
constexpr std::int64_t kMaxIdUnitMs = 86400000;          // one day

// Small decimal, 0..max; the whole text.
bool small_number(const char* text, std::int64_t max, std::int64_t& value) noexcept {
    std::uint64_t parsed = 0;
    if (parse_id(text, parsed) != ParseResult::Ok || parsed > static_cast<std::uint64_t>(max))
        return false;
    value = static_cast<std::int64_t>(parsed);
    return true;
}

bool parse_epoch(const char* text, std::int64_t& unix_ms) noexcept {
    if (std::strchr(text, '-') == nullptr) return small_number(text, kLastEpochMs, unix_ms);
    return parse_timestamp(text, unix_ms) && unix_ms <= kLastEpochMs;
}

bool parse_unit(char* text, std::int64_t& unit_ms) noexcept {
    const std::size_t length = std::strlen(text);
    if (length < 3 || std::strcmp(text + length - 2, "ms") != 0) return false;
    text[length - 2] = '\0';
    return small_number(text, kMaxIdUnitMs, unit_ms) && unit_ms > 0;
}

// with_epoch: an id layout (epoch required); without: a node's (no epoch).
bool parse_custom(const char* text, IdLayout& layout, bool with_epoch, const char*& problem) noexcept {
    enum Key { Epoch, Unit, Time, Worker, Sequence, kKeys };
    static constexpr const char* kNames[kKeys] = {"epoch", "unit", "time", "worker", "sequence"};
    bool seen[kKeys] = {};
    int order[kKeys] = {};  // position of each key among the words
    std::int64_t values[kKeys] = {0, 1, 0, 0, 0};
    int position = 0;
    for (const char* p = text;;) {
        p += std::strspn(p, " \t\n\r");
        if (*p == '\0') break;
        const std::size_t length = std::strcspn(p, " \t\n\r");
        char word[48];
        if (length >= sizeof word) {
            problem = "a word of the layout is too long";
            return false;
        }
        std::memcpy(word, p, length);
        word[length] = '\0';
        p += length;
        char* value = std::strchr(word, '=');
        if (value == nullptr) {
            problem = "every word of a custom layout is key=value";
            return false;
        }
        *value++ = '\0';
        int key = 0;
        while (key < kKeys && std::strcmp(word, kNames[key]) != 0) ++key;
        if (key == kKeys) {
            problem = "the keys are epoch, unit, time, worker and sequence";
            return false;
        }
        if (key == Epoch && !with_epoch) {
            problem = "the epoch is snowflake.epoch, not part of the layout";
            return false;
        }
        if (seen[key]) {
            problem = "a key is given twice";
            return false;
        }
        seen[key] = true;
        order[key] = position++;
        bool ok;
        switch (key) {
            case Epoch: ok = parse_epoch(value, values[Epoch]); break;
            case Unit: ok = parse_unit(value, values[Unit]); break;
            case Time: ok = small_number(value, 63, values[Time]) && values[Time] > 0; break;
            default: ok = small_number(value, 31, values[key]); break;
        }
        if (!ok) {
            static constexpr const char* kRanges[kKeys] = {
                "epoch is unix milliseconds or a UTC timestamp (YYYY-MM-DDTHH:MM:SS.fff) from "
                "1970 to 9999",
                "unit is 1ms to 86400000ms",
                "time is 1 to 63 bits",
                "worker is 0 to 31 bits",
                "sequence is 0 to 31 bits",
            };
            problem = kRanges[key];
            return false;
        }
    }
    if ((with_epoch && !seen[Epoch]) || !seen[Time] || !seen[Worker] || !seen[Sequence]) {
        problem = with_epoch ? "a custom layout needs epoch, time, worker and sequence"
                             : "a layout needs time, worker and sequence";
        return false;
    }
    if (order[Time] > order[Worker] || order[Time] > order[Sequence]) {
        problem = "time is the highest field: give it before worker and sequence";
        return false;
    }
    if (values[Time] + values[Worker] + values[Sequence] > 64) {
        problem = "the fields take more than 64 bits";
        return false;
    }
    layout = id_layout(values[Epoch], make_layout(values[Unit], static_cast<int>(values[Time]),
                                                  static_cast<int>(values[Worker]),
                                                  static_cast<int>(values[Sequence]),
                                                  order[Sequence] < order[Worker]));
    return true;
}

}  // namespace

bool parse_layout(const char* text, IdLayout& layout, const char*& problem) noexcept {
    for (const Preset& preset : kPresets) {
        if (std::strcmp(text, preset.name) == 0) {
            layout = preset.layout;
            return true;
        }
    }
    if (std::strchr(text, '=') == nullptr) {
        problem = "unknown layout name";
        return false;
    }
    return parse_custom(text, layout, true, problem);
}

bool parse_node_layout(const char* text, Layout& layout, const char*& problem) noexcept {
    for (const auto& preset : kNodePresets) {
        if (std::strcmp(text, preset.name) == 0) {
            layout = preset.layout;
            return true;
        }
    }
    IdLayout parsed{};
    if (std::strcmp(text, "sonyflake") == 0) {
        problem = "\"sonyflake\" is Sonyflake's layout with its epoch, 2014-09-01; its fields under another "
                  "epoch are sonyflake_style";
        return false;
    }
    if (std::strchr(text, '=') == nullptr) {
        problem = "unknown layout name (the presets are default, js53 and sonyflake_style)";
        return false;
    }
    if (!parse_custom(text, parsed, false, problem)) return false;
    if (parsed.unit_ms > kMaxUnitMs) problem = "unit is 1ms to 1000ms";
    else if (parsed.time_bits < kMinTimeBits) problem = "time is 20 bits or more";
    else if (parsed.worker_bits < 1 || parsed.worker_bits > kMaxWorkerBits) problem = "worker is 1 to 16 bits";
    else if (parsed.sequence_bits < 1 || parsed.sequence_bits > kMaxSequenceBits) problem = "sequence is 1 to 22 bits";
    else if (parsed.time_bits + parsed.worker_bits + parsed.sequence_bits > 63)
        problem = "the fields take more than 63 bits (bit 63 is the sign)";
    else if (static_cast<double>(parsed.max_time + 1) * static_cast<double>(parsed.unit_ms) > 0x1p52)
        problem = "the time field spans more than 2^52 ms (142,000 years)";
    else {
        layout = parsed;
        return true;
    }
    return false;
}

bool parse_node_layout(const char* text, std::int64_t epoch_unix_ms, Layout& layout,
                       const char*& problem) noexcept {
    if (std::strcmp(text, "sonyflake") == 0 && epoch_unix_ms == kSonyflakeEpochUnixMs) {
        for (const Preset& preset : kPresets) {
            if (std::strcmp(preset.name, "sonyflake") == 0) layout = preset.layout;
        }
        return true;
    }
    return parse_node_layout(text, layout, problem);
}

void format_node_layout(const Layout& layout, char* buf) noexcept {
    char unit[24] = "";
    if (layout.unit_ms != 1) std::snprintf(unit, sizeof unit, "unit=%lldms ", static_cast<long long>(layout.unit_ms));
    if (layout.sequence_above_worker)
        std::snprintf(buf, kLayoutTextMax, "%stime=%d sequence=%d worker=%d", unit, layout.time_bits,
                      layout.sequence_bits, layout.worker_bits);
    else
        std::snprintf(buf, kLayoutTextMax, "%stime=%d worker=%d sequence=%d", unit, layout.time_bits,
                      layout.worker_bits, layout.sequence_bits);
}

bool layout_holds(const IdLayout& layout, std::uint64_t id) noexcept {
    const int bits = layout.time_bits + layout.time_shift;
    return bits >= 63 || (id >> bits) == 0;
}

LayoutFields layout_decompose(const IdLayout& layout, std::uint64_t id) noexcept {
    const Fields f = decompose(id, layout);
    return LayoutFields{f.time_ms, f.worker_id, f.sequence};
}

std::uint64_t layout_max_time(const IdLayout& layout) noexcept {
    const std::uint64_t by_sign = kMaxId >> layout.time_shift;
    const std::uint64_t by_width = layout.max_time;
    return by_sign < by_width ? by_sign : by_width;
}

bool layout_unix_ms(const IdLayout& layout, std::uint64_t time, std::int64_t& unix_ms) noexcept {
    std::int64_t elapsed;
    return time <= static_cast<std::uint64_t>(INT64_MAX) &&
           !__builtin_mul_overflow(static_cast<std::int64_t>(time), layout.unit_ms, &elapsed) &&
           !__builtin_add_overflow(layout.epoch_unix_ms, elapsed, &unix_ms);
}

BoundResult layout_first_id(const IdLayout& layout, std::int64_t unix_ms, std::uint64_t& id) noexcept {
    if (unix_ms < layout.epoch_unix_ms) return BoundResult::BeforeEpoch;
    // unix_ms >= epoch >= 0: no overflow.
    const auto time = static_cast<std::uint64_t>((unix_ms - layout.epoch_unix_ms) / layout.unit_ms);
    if (time > layout_max_time(layout)) return BoundResult::PastEnd;
    id = time << layout.time_shift;
    return BoundResult::Ok;
}

}  // namespace snowflake
