// SIGINT and SIGTERM, held back while a tool runs and taken while it
// waits, so that an interrupted run ends with exit 0 instead of dying of
// the signal: kvmaistat between samples, kvmaictl's monitor and
// bind-socket commands while they wait for the module.
#pragma once

#include <csignal>
#include <cstdint>

#include "common/unique_fd.h"

namespace kvmai {

class StopSignals {
 public:
  // Blocks SIGINT and SIGTERM in the calling thread and opens a signalfd
  // for them.
  StopSignals();
  // Drops what arrived meanwhile (unblocked, it would kill us) and restores
  // the previous mask.
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  StopSignals(StopSignals&&) = delete;
  StopSignals& operator=(StopSignals&&) = delete;

  // Readable once SIGINT or SIGTERM is pending: to wait for it beside
  // other descriptors.
  int fd() const { return fd_.get(); }

  // Sleeps until CLOCK_MONOTONIC reaches `deadline_ns`; false if SIGINT or
  // SIGTERM came first (or had come before).
  bool sleep_until(std::int64_t deadline_ns) const;

 private:
  sigset_t old_mask_{};
  UniqueFd fd_;
};

// CLOCK_MONOTONIC in nanoseconds.
std::int64_t monotonic_ns();

}  // namespace kvmai
