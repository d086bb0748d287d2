// SIGINT and SIGTERM, held back while the tool runs and taken while it
// sleeps, so that an interrupted run ends with exit 0 between samples
// instead of dying of the signal.
#pragma once

#include <csignal>
#include <cstdint>

namespace kvmaistat {

class StopSignals {
 public:
  // Blocks SIGINT and SIGTERM in the calling thread.
  StopSignals();
  // Drops what arrived meanwhile (unblocked, it would kill us) and restores
  // the previous mask.
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  StopSignals(StopSignals&&) = delete;
  StopSignals& operator=(StopSignals&&) = delete;

  // Sleeps until CLOCK_MONOTONIC reaches `deadline_ns`; false if SIGINT or
  // SIGTERM came first (or had come since the last call).
  bool sleep_until(std::int64_t deadline_ns) const;

 private:
  sigset_t stop_{};
  sigset_t old_{};
};

// CLOCK_MONOTONIC in nanoseconds.
std::int64_t monotonic_ns();

}  // namespace kvmaistat
