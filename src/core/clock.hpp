// The system clock, and a precise wait for the next millisecond. Pure C++
// (POSIX clocks), no PostgreSQL header.
#pragma once
#include <cstdint>
#include <ctime>
#ifdef __linux__
#include <sys/prctl.h>
#endif

namespace snowflake {

inline std::int64_t unix_now_us() noexcept {
    timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return std::int64_t{now.tv_sec} * 1000000 + now.tv_nsec / 1000;
}
inline std::int64_t unix_now_ms() noexcept { return unix_now_us() / 1000; }

// How long before a deadline the sleep ends and the spin begins: the kernel
// wakes a sleeper late, by the timer slack (50 us by default, cut to 1 us
// for each sleep here, then put back) and the scheduler's latency (measured on a 2-core
// VM: 41 us median, 61 us at p90, 92 us at p99); a relative sleep would add
// the time spent before it. Each wait at the lead limit burns about this much
// CPU: 10% of a core at the cap, where the backend is busy anyway.
inline constexpr std::int64_t kSpinUs = 100;

inline std::int64_t monotonic_us() noexcept {
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return std::int64_t{now.tv_sec} * 1000000 + now.tv_nsec / 1000;
}

// Waits until the clock (`now_us`, the system clock by default) reads
// `deadline_us` (us since 1970): sleeps to kSpinUs before it, then spins on
// the clock. The sleep's deadline is on the monotonic clock, so a step of the
// system clock never stretches it past the wait asked for. Returns false when
// the wait ends early: a signal (a query cancel, in a backend), or the system
// clock stepped back while sleeping or spinning; the caller then checks its
// interrupts and asks again (for a long wait, on its latch).
template <class Clock = std::int64_t (*)() noexcept>
bool sleep_until_us(std::int64_t deadline_us, Clock now_us = unix_now_us) noexcept {
    std::int64_t left = deadline_us - now_us();
    if (left > kSpinUs) {
#ifdef __linux__
        // the slack cut for this sleep only: the caller's is put back after it
        const int slack = prctl(PR_GET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);
        if (slack > 0) (void)prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
#endif
        const std::int64_t wake_us = monotonic_us() + left - kSpinUs;
        const timespec wake{static_cast<time_t>(wake_us / 1000000), static_cast<long>(wake_us % 1000000 * 1000)};
        const bool woken = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, nullptr) == 0;
#ifdef __linux__
        if (slack > 0) (void)prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(slack), 0UL, 0UL, 0UL);
#endif
        if (!woken) return false;
        left = deadline_us - now_us();
    }
    while (left > 0) {
        if (left > kSpinUs) return false;  // the clock stepped back: no long spin
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        left = deadline_us - now_us();
    }
    return true;
}

}  // namespace snowflake
