// SIGINT and SIGTERM as a readable descriptor, for commands that run
// until interrupted (monitor, group add bind-socket) and must then exit 0
// rather than die of the signal.
#pragma once

#include <csignal>

namespace kvmaictl {

class StopSignals {
 public:
  // Blocks SIGINT and SIGTERM in this thread and opens a signalfd for them.
  StopSignals();
  // Consumes what arrived and restores the previous signal mask.
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  StopSignals(StopSignals&&) = delete;
  StopSignals& operator=(StopSignals&&) = delete;

  // Readable once SIGINT or SIGTERM is pending.
  int fd() const { return fd_; }

 private:
  sigset_t old_mask_{};
  int fd_ = -1;
};

}  // namespace kvmaictl
