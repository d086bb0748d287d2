#include "common/stop_signals.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <csignal>

namespace kvmai {
namespace {

constexpr std::int64_t kMs = 1'000'000;

bool readable(int fd) {
  pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
  return ::poll(&p, 1, 0) == 1;
}

TEST(StopSignals, SleepsToTheDeadlineWithoutASignal) {
  const StopSignals stop;
  const std::int64_t start = monotonic_ns();
  EXPECT_TRUE(stop.sleep_until(start + 20 * kMs));
  EXPECT_GE(monotonic_ns() - start, 20 * kMs);
  EXPECT_FALSE(readable(stop.fd()));
}

// Held back, not delivered: the signal ends the wait and the run goes on
// to exit 0; it is dropped when the guard goes.
TEST(StopSignals, ASignalEndsTheWaitAndMakesTheDescriptorReadable) {
  for (const int sig : {SIGINT, SIGTERM}) {
    const StopSignals stop;
    ASSERT_EQ(::raise(sig), 0);
    EXPECT_TRUE(readable(stop.fd())) << sig;
    EXPECT_FALSE(stop.sleep_until(monotonic_ns() + 10'000 * kMs)) << sig;
    // Past the deadline already, the pending signal still wins.
    EXPECT_FALSE(stop.sleep_until(0)) << sig;
  }
}

}  // namespace
}  // namespace kvmai
