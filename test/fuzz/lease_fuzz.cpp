// parse_lease (the lease file) on the raw bytes: an accepted file has fields in
// range, and format_lease writes it back as text that parses to the same lease
// (byte for byte the file, for the current version 4). And format_lease of any
// lease (the first 28 bytes, then the directory and fenced ids) fits its
// buffer, and round-trips when in range.
#include "fuzz.hpp"

using snowflake::Lease;

namespace {

bool in_range(const Lease& lease) {
    bool fenced_ok = lease.fenced_count <= snowflake::kMaxFenced;
    for (std::uint32_t i = 0; fenced_ok && i < lease.fenced_count; ++i)
        fenced_ok = lease.fenced[i] <= snowflake::kMaxWorker && (i == 0 || lease.fenced[i] > lease.fenced[i - 1]);
    return lease.epoch_unix_ms >= 0 && lease.lease_ms <= snowflake::kMaxTime && lease.clock_ms <= snowflake::kMaxTime &&
           (lease.worker_id <= snowflake::kMaxWorker || lease.worker_id == snowflake::kNoWorker) && fenced_ok;
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
        if (data[16] == '4') FUZZ_CHECK(length == size && std::memcmp(text, data, size) == 0);
    }
    if (size >= 28) {
        std::memcpy(&lease.epoch_unix_ms, data, 8);
        std::memcpy(&lease.lease_ms, data + 8, 8);
        std::memcpy(&lease.clock_ms, data + 16, 8);
        std::memcpy(&lease.worker_id, data + 24, 4);
        lease.fenced_count = 0;
        for (std::size_t i = 28; i + 2 <= size && lease.fenced_count < snowflake::kMaxFenced; i += 2)
            lease.fenced[lease.fenced_count++] = data[i] | (data[i + 1] & 7) << 8;  // some past 1023
        const bool parsed = round_trip(lease, again, length, text);
        if (in_range(lease)) FUZZ_CHECK(parsed && again == lease);
    }
    return 0;
}
