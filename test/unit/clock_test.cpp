// The precise wait for the clock (src/core/clock.hpp).
#include "../../src/core/clock.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <functional>
#include <sys/time.h>

namespace snowflake {
namespace {

TEST(SleepUntil, ReturnsAtTheDeadlineNeverBefore) {
    for (int i = 0; i < 200; ++i) {
        const std::int64_t deadline = (unix_now_us() / 1000 + 1) * 1000;  // the next millisecond
        ASSERT_TRUE(sleep_until_us(deadline));
        ASSERT_GE(unix_now_us(), deadline);
    }
}

TEST(SleepUntil, APastDeadlineReturnsAtOnce) {
    const std::int64_t now = unix_now_us();
    EXPECT_TRUE(sleep_until_us(now - 1000000));
    EXPECT_LT(unix_now_us() - now, 100000);  // no sleep (generous: sanitizer builds, busy CI)
}

// A signal (a query cancel, in a backend) ends the sleep early, so that the
// caller can check its interrupts: no spin to a deadline far away.
TEST(SleepUntil, ASignalEndsTheSleepEarly) {
    struct sigaction action {}, previous{};
    action.sa_handler = [](int) {};
    action.sa_flags = SA_RESTART;  // as PostgreSQL installs its handlers: the sleep still ends
    ASSERT_EQ(sigaction(SIGALRM, &action, &previous), 0);
    itimerval timer{};
    timer.it_value.tv_usec = 20000;
    ASSERT_EQ(setitimer(ITIMER_REAL, &timer, nullptr), 0);
    const std::int64_t start = unix_now_us();
    EXPECT_FALSE(sleep_until_us(start + 5000000));
    const std::int64_t slept = unix_now_us() - start;
    EXPECT_GE(slept, 15000);
    EXPECT_LT(slept, 1000000);
    sigaction(SIGALRM, &previous, nullptr);
}

// A clock that reads `start`, then (from its second reading on) 1 s earlier
// for `stepped` readings, then 10 ms after `start`: an implementation that
// kept sleeping or spinning towards the deadline would return true, late.
struct SteppedBackClock {
    std::int64_t start;
    int stepped;
    int readings = 0;
    std::int64_t operator()() noexcept {
        ++readings;
        if (readings == 1) return start;
        return readings <= 1 + stepped ? start - 1000000 : start + 10000;
    }
};

// The system clock steps back 1 s while a 2 ms wait sleeps: the wait ends
// after the sleep, at once, not 1 s later.
TEST(SleepUntil, AStepBackWhileSleepingEndsTheWait) {
    const std::int64_t begin = monotonic_us();
    SteppedBackClock clock{unix_now_us(), 1000};
    EXPECT_FALSE(sleep_until_us(clock.start + 2000, std::ref(clock)));
    EXPECT_EQ(clock.readings, 2);
    EXPECT_LT(monotonic_us() - begin, 100000);
}

// The same while spinning the last microseconds: no spin towards a deadline
// now 1 s away.
TEST(SleepUntil, AStepBackWhileSpinningEndsTheSpin) {
    SteppedBackClock clock{unix_now_us(), 1000};
    EXPECT_FALSE(sleep_until_us(clock.start + kSpinUs / 2, std::ref(clock)));
    EXPECT_EQ(clock.readings, 2);
}

}  // namespace
}  // namespace snowflake
