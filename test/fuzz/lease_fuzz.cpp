// parse_lease (the lease file) on the raw bytes: an accepted file has fields in
// range, and format_lease writes it back as text that parses to the same lease
// (byte for byte the file, for the current version 5). And format_lease of any
// lease (the first 28 bytes, a layout chosen by byte 27, then the fenced ids)
// fits its buffer, and round-trips when in range. parse_release (the
// registry's release file) likewise: what it accepts it writes back byte for byte.
#include "fuzz.hpp"

#include "../../src/core/layout_names.hpp"

#include <iterator>

using snowflake::Lease;

namespace {

// Layouts a lease may carry, and one it may not (17 worker bits).
const snowflake::Layout kLayouts[] = {
    snowflake::kDefaultLayout, snowflake::make_layout(1, 41, 8, 14, false), snowflake::make_layout(1, 41, 6, 6, false),
    snowflake::make_layout(10, 39, 16, 8, true), snowflake::make_layout(1, 41, 17, 5, false)};

bool layout_ok(const snowflake::Layout& layout) {
    char text[snowflake::kLayoutTextMax];
    snowflake::Layout parsed{};
    const char* problem;
    snowflake::format_node_layout(layout, text);
    return snowflake::parse_node_layout(text, parsed, problem) && parsed == layout;
}

bool in_range(const Lease& lease) {
    bool fenced_ok = lease.fenced_count <= snowflake::kMaxFenced;
    for (std::uint32_t i = 0; fenced_ok && i < lease.fenced_count; ++i)
        fenced_ok = lease.fenced[i] <= snowflake::kMaxAnyWorker && (i == 0 || lease.fenced[i] > lease.fenced[i - 1]);
    return lease.epoch_unix_ms >= 0 && lease.lease_ms <= snowflake::kMaxId && lease.clock_ms <= snowflake::kMaxId &&
           (lease.worker_id <= snowflake::kMaxAnyWorker || lease.worker_id == snowflake::kNoWorker) &&
           (lease.pending_worker <= snowflake::kMaxAnyWorker || lease.pending_worker == snowflake::kNoWorker) && fenced_ok &&
           layout_ok(lease.layout);
}

// format_lease, then parse_lease of what it wrote.
bool round_trip(const Lease& lease, Lease& again, std::size_t& length, char* text) {
    length = snowflake::format_lease(lease, text);
    FUZZ_CHECK(length < snowflake::kLeaseTextMax && std::strlen(text) == length);
    return snowflake::parse_lease(text, length, again) == snowflake::LeaseText::Ok;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    char text[snowflake::kLeaseTextMax];
    std::size_t length;
    Lease lease{}, again{};
    // libFuzzer's data is in a block of its size: ASan sees any read past it.
    if (snowflake::parse_lease(reinterpret_cast<const char*>(data), size, lease) == snowflake::LeaseText::Ok) {
        FUZZ_CHECK(in_range(lease));
        FUZZ_CHECK(round_trip(lease, again, length, text) && again == lease);
        if (data[16] == '5') FUZZ_CHECK(length == size && std::memcmp(text, data, size) == 0);
    }
    snowflake::PendingRelease release;
    if (snowflake::parse_release(reinterpret_cast<const char*>(data), size, release)) {
        char written[snowflake::kReleaseTextMax];
        FUZZ_CHECK(snowflake::format_release(release, written) == size && std::memcmp(written, data, size) == 0);
    }
    if (size >= 28) {
        std::memcpy(&lease.epoch_unix_ms, data, 8);
        std::memcpy(&lease.lease_ms, data + 8, 8);
        std::memcpy(&lease.clock_ms, data + 16, 8);
        std::memcpy(&lease.worker_id, data + 24, 4);
        lease.layout = kLayouts[data[27] % std::size(kLayouts)];
        // a pending worker id when byte 27's high bit is set: the worker id's field, shifted
        lease.pending_worker = (data[27] & 0x80) != 0 ? lease.worker_id >> 1 : snowflake::kNoWorker;
        lease.fenced_count = 0;
        for (std::size_t i = 28; i + 3 <= size && lease.fenced_count < snowflake::kMaxFenced; i += 3)
            lease.fenced[lease.fenced_count++] = data[i] | data[i + 1] << 8 | (data[i + 2] & 1) << 16;  // some past 65535
        const bool parsed = round_trip(lease, again, length, text);
        if (in_range(lease)) FUZZ_CHECK(parsed && again == lease);
    }
    return 0;
}
