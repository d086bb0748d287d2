#include "stop_signals.h"

#include <cerrno>
#include <ctime>
#include <system_error>

namespace kvmaistat {
namespace {

constexpr std::int64_t kNsPerS = 1'000'000'000;

}  // namespace

StopSignals::StopSignals() {
  sigemptyset(&stop_);
  sigaddset(&stop_, SIGINT);
  sigaddset(&stop_, SIGTERM);
  if (const int rc = pthread_sigmask(SIG_BLOCK, &stop_, &old_); rc != 0) {
    throw std::system_error(rc, std::generic_category(), "blocking SIGINT and SIGTERM");
  }
}

StopSignals::~StopSignals() {
  const struct timespec zero {};
  while (sigtimedwait(&stop_, nullptr, &zero) > 0) {
  }
  pthread_sigmask(SIG_SETMASK, &old_, nullptr);
}

bool StopSignals::sleep_until(std::int64_t deadline_ns) const {
  for (;;) {
    const std::int64_t left = deadline_ns - monotonic_ns();
    // Even past the deadline, look once: a signal already pending wins.
    const struct timespec wait {
      .tv_sec = left > 0 ? left / kNsPerS : 0, .tv_nsec = left > 0 ? left % kNsPerS : 0
    };
    if (sigtimedwait(&stop_, nullptr, &wait) > 0) {
      return false;
    }
    if (errno != EAGAIN && errno != EINTR) {
      throw std::system_error(errno, std::generic_category(), "sigtimedwait");
    }
    if (left <= 0) {
      return true;
    }
  }
}

std::int64_t monotonic_ns() {
  struct timespec ts {};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * kNsPerS + ts.tv_nsec;
}

}  // namespace kvmaistat
