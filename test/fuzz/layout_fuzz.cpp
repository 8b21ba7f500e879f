// parse_layout (preset names and custom layouts): an accepted layout has its
// fields within their documented bounds and reads back the same from its custom
// form; a refused one says why. The layout_* functions on ids and times derived
// from the input keep within the layout's bits and agree with each other.
#include "../../src/core/layout_names.hpp"
#include "fuzz.hpp"

using namespace snowflake;

namespace {

constexpr std::int64_t kLastEpochMs = 253402300799999;  // 9999-12-31 23:59:59.999 UTC

std::uint64_t mask(int bits) { return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1; }

void check_id(const IdLayout& layout, std::uint64_t id) {
    const int low = layout.worker_bits + layout.sequence_bits, bits = layout.time_bits + low;
    FUZZ_CHECK(layout_holds(layout, id) == (bits >= 63 || id >> bits == 0));
    const LayoutFields f = layout_decompose(layout, id);
    FUZZ_CHECK(f.time <= mask(layout.time_bits) && f.worker_id <= mask(layout.worker_bits) &&
               f.sequence <= mask(layout.sequence_bits));
    const int worker_shift = layout.sequence_above_worker ? 0 : layout.sequence_bits;
    const int sequence_shift = layout.sequence_above_worker ? layout.worker_bits : 0;
    const std::uint64_t composed = f.time << low | std::uint64_t{f.worker_id} << worker_shift |
                                   std::uint64_t{f.sequence} << sequence_shift;
    if (layout_holds(layout, id)) FUZZ_CHECK(composed == id);
    // The first id of the id's time unit: the id with its low fields zero.
    std::int64_t unix_ms;
    std::uint64_t first = ~std::uint64_t{0};
    if (f.time <= layout_max_time(layout) && layout_unix_ms(layout, f.time, unix_ms))
        FUZZ_CHECK(layout_first_id(layout, unix_ms, first) == BoundResult::Ok && first == f.time << low);
}

void check_time(const IdLayout& layout, std::int64_t unix_ms) {
    std::uint64_t id = ~std::uint64_t{0};
    const BoundResult result = layout_first_id(layout, unix_ms, id);
    if (unix_ms < layout.epoch_unix_ms || result == BoundResult::PastEnd) {
        FUZZ_CHECK(result == (unix_ms < layout.epoch_unix_ms ? BoundResult::BeforeEpoch : BoundResult::PastEnd));
        return;
    }
    FUZZ_CHECK(result == BoundResult::Ok && id <= kMaxId && layout_holds(layout, id));
    const LayoutFields f = layout_decompose(layout, id);
    FUZZ_CHECK(f.worker_id == 0 && f.sequence == 0);
    FUZZ_CHECK(f.time == static_cast<std::uint64_t>((unix_ms - layout.epoch_unix_ms) / layout.unit_ms));
    std::int64_t start;
    FUZZ_CHECK(layout_unix_ms(layout, f.time, start) && start <= unix_ms && unix_ms - start < layout.unit_ms);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const FuzzText text(data, size);
    IdLayout layout{};
    const char* problem = nullptr;
    if (!parse_layout(text.c_str(), layout, problem)) {
        FUZZ_CHECK(problem != nullptr && *problem != '\0');
        return 0;
    }
    FUZZ_CHECK(layout.epoch_unix_ms >= 0 && layout.epoch_unix_ms <= kLastEpochMs);
    FUZZ_CHECK(layout.unit_ms >= 1 && layout.unit_ms <= 86400000);
    FUZZ_CHECK(layout.time_bits >= 1 && layout.time_bits <= 63 && layout.worker_bits >= 0 && layout.worker_bits <= 31 &&
               layout.sequence_bits >= 0 && layout.sequence_bits <= 31 &&
               layout.time_bits + layout.worker_bits + layout.sequence_bits <= 64);

    char custom[160];
    const char* low_fields = layout.sequence_above_worker ? "sequence=%d worker=%d" : "worker=%d sequence=%d";
    char format[96];
    std::snprintf(format, sizeof format, "epoch=%%lld unit=%%lldms time=%%d %s", low_fields);
    const int first = layout.sequence_above_worker ? layout.sequence_bits : layout.worker_bits;
    const int second = layout.sequence_above_worker ? layout.worker_bits : layout.sequence_bits;
    std::snprintf(custom, sizeof custom, format, static_cast<long long>(layout.epoch_unix_ms),
                  static_cast<long long>(layout.unit_ms), layout.time_bits, first, second);
    IdLayout again{};
    FUZZ_CHECK(parse_layout(custom, again, problem));
    FUZZ_CHECK(again.epoch_unix_ms == layout.epoch_unix_ms && again.unit_ms == layout.unit_ms &&
               again.time_bits == layout.time_bits && again.worker_bits == layout.worker_bits &&
               again.sequence_bits == layout.sequence_bits &&
               again.sequence_above_worker == layout.sequence_above_worker);

    // Ids and times from the input (FNV-1a), and the edges.
    std::uint64_t hash = 14695981039346656037u;
    for (std::size_t i = 0; i < size; ++i) hash = (hash ^ data[i]) * 1099511628211u;
    const int low = layout.worker_bits + layout.sequence_bits;
    for (std::uint64_t id : {std::uint64_t{0}, kMaxId, hash & kMaxId, (hash >> (hash % 64)) & kMaxId, mask(low),
                             layout_max_time(layout) << low})
        check_id(layout, id);
    for (std::int64_t unix_ms : {std::int64_t{0}, layout.epoch_unix_ms - 1, layout.epoch_unix_ms,
                                 static_cast<std::int64_t>(hash >> 1), static_cast<std::int64_t>(hash >> 20),
                                 layout.epoch_unix_ms + static_cast<std::int64_t>(hash % 100000000000), INT64_MAX})
        check_time(layout, unix_ms);
    return 0;
}
