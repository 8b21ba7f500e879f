// The precise wait for the clock (src/core/clock.hpp).
#include "../../src/core/clock.hpp"

#include <gtest/gtest.h>

#include <csignal>
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
    EXPECT_LT(unix_now_us() - now, 1000);
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

}  // namespace
}  // namespace snowflake
