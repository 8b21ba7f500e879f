#include "layouts.hpp"

#include <cstring>

namespace snowflake {
namespace {

struct Preset {
    const char* name;
    IdLayout layout;
};

// Sources and published ids for each: sql/layouts.sql and the README.
constexpr Preset kPresets[] = {
    {"twitter", {1288834974657, 1, 41, 10, 12, false}},    // 5-bit datacenter, 5-bit worker
    {"discord", {1420070400000, 1, 42, 10, 12, false}},    // 5-bit worker, 5-bit process
    {"instagram", {1314220021721, 1, 41, 13, 10, false}},  // 13-bit shard
    {"sonyflake", {1409529600000, 10, 39, 16, 8, true}},   // 16-bit machine in the low bits
    {"pgedge", {1672531200000, 1, 41, 10, 12, true}},      // 10-bit node in the low bits
    {"mastodon", {0, 1, 48, 0, 16, false}},                // 16 low bits: hashed sequence
};

constexpr std::int64_t kLastEpochMs = 253402300799999;  // 9999-12-31 23:59:59.999 UTC
constexpr std::int64_t kMaxUnitMs = 86400000;            // one day

constexpr std::uint64_t mask(int bits) noexcept {
    return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
}

int low_bits(const IdLayout& layout) noexcept { return layout.worker_bits + layout.sequence_bits; }

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
    return small_number(text, kMaxUnitMs, unit_ms) && unit_ms > 0;
}

bool parse_custom(const char* text, IdLayout& layout, const char*& problem) noexcept {
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
    if (!seen[Epoch] || !seen[Time] || !seen[Worker] || !seen[Sequence]) {
        problem = "a custom layout needs epoch, time, worker and sequence";
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
    layout = IdLayout{values[Epoch],
                      values[Unit],
                      static_cast<int>(values[Time]),
                      static_cast<int>(values[Worker]),
                      static_cast<int>(values[Sequence]),
                      order[Sequence] < order[Worker]};
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
    return parse_custom(text, layout, problem);
}

bool layout_holds(const IdLayout& layout, std::uint64_t id) noexcept {
    const int bits = layout.time_bits + low_bits(layout);
    return bits >= 63 || (id >> bits) == 0;
}

LayoutFields layout_decompose(const IdLayout& layout, std::uint64_t id) noexcept {
    const int worker_shift = layout.sequence_above_worker ? 0 : layout.sequence_bits;
    const int sequence_shift = layout.sequence_above_worker ? layout.worker_bits : 0;
    return LayoutFields{(id >> low_bits(layout)) & mask(layout.time_bits),
                        static_cast<std::uint32_t>((id >> worker_shift) & mask(layout.worker_bits)),
                        static_cast<std::uint32_t>((id >> sequence_shift) & mask(layout.sequence_bits))};
}

std::uint64_t layout_max_time(const IdLayout& layout) noexcept {
    const std::uint64_t by_sign = kMaxId >> low_bits(layout);
    const std::uint64_t by_width = mask(layout.time_bits);
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
    id = time << low_bits(layout);
    return BoundResult::Ok;
}

}  // namespace snowflake
