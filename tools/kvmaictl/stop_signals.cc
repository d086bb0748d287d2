#include "stop_signals.h"

#include <sys/signalfd.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <system_error>

namespace kvmaictl {

StopSignals::StopSignals() {
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  if (const int rc = pthread_sigmask(SIG_BLOCK, &mask, &old_mask_); rc != 0) {
    throw std::system_error(rc, std::generic_category(), "block SIGINT/SIGTERM");
  }
  fd_ = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
  if (fd_ < 0) {
    const int error = errno;
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
    throw std::system_error(error, std::generic_category(), "signalfd");
  }
}

StopSignals::~StopSignals() {
  // A signal left pending would be delivered, and kill us, on unblocking.
  std::array<signalfd_siginfo, 4> info{};
  while (read(fd_, info.data(), sizeof info) > 0) {
  }
  close(fd_);
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

}  // namespace kvmaictl
