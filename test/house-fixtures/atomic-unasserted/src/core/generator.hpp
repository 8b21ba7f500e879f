// The generator's shared state: one atomic type asserted, one not.
#pragma once
#include <atomic>
#include <cstdint>
struct GeneratorState {
    std::atomic<std::uint64_t> floor_id;
    std::atomic<std::uint16_t> small;
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
