#include "common/stop_signals.h"

#include <poll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <ctime>
#include <system_error>

namespace kvmai {
namespace {

constexpr std::int64_t kNsPerS = 1'000'000'000;

}  // namespace

StopSignals::StopSignals() {
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  if (const int rc = pthread_sigmask(SIG_BLOCK, &mask, &old_mask_); rc != 0) {
    throw std::system_error(rc, std::generic_category(), "blocking SIGINT and SIGTERM");
  }
  fd_.reset(signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC));
  if (!fd_) {
    const int error = errno;
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
    throw std::system_error(error, std::generic_category(), "signalfd");
  }
}

StopSignals::~StopSignals() {
  std::array<signalfd_siginfo, 4> info{};
  while (read(fd_.get(), info.data(), sizeof info) > 0) {
  }
  fd_.reset();
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

bool StopSignals::sleep_until(std::int64_t deadline_ns) const {
  for (;;) {
    const std::int64_t left = deadline_ns - monotonic_ns();
    // Even past the deadline, look once: a signal already pending wins.
    const timespec wait{.tv_sec = left > 0 ? left / kNsPerS : 0,
                        .tv_nsec = left > 0 ? left % kNsPerS : 0};
    pollfd p{.fd = fd_.get(), .events = POLLIN, .revents = 0};
    const int n = ppoll(&p, 1, &wait, nullptr);
    if (n > 0) {
      return false;
    }
    if (n < 0 && errno != EINTR) {
      throw std::system_error(errno, std::generic_category(), "ppoll");
    }
    if (left <= 0) {
      return true;
    }
  }
}

std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * kNsPerS + ts.tv_nsec;
}

}  // namespace kvmai
