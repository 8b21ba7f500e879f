// Shared memory: an atomic pointer asserted, an atomic struct not.
#pragma once
#include <atomic>
struct Wide { long a, b, c; };
struct SharedState {
    std::atomic<int*> latch;
    std::atomic<Wide> wide;
};
static_assert(std::atomic<int*>::is_always_lock_free);
