// Snapshots of a device's counters and the rates between two of them.
// Everything but take_snapshot() is a pure function of its arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "device.h"
#include "mapping.h"

namespace kvmai::kvmaistat {

struct Snapshot {
  std::vector<std::uint64_t> values;  // one per Layout::counters, within its width
  std::int64_t monotonic_ns = 0;      // CLOCK_MONOTONIC, right after the loads
  double realtime_s = 0;              // CLOCK_REALTIME, likewise
};

enum class ClockSource { device, monotonic };

struct PcieRate {
  std::uint16_t stack = 0;
  std::optional<double> in_gbps;
  std::optional<double> out_gbps;
};

struct MemRate {
  std::uint16_t channel = 0;
  std::optional<double> read_gbps;
  std::optional<double> write_gbps;
};

struct Rates {
  double time = 0;        // CLOCK_REALTIME of the later snapshot
  double interval_s = 0;  // elapsed between the snapshots, by `clock`
  ClockSource clock = ClockSource::monotonic;
  std::vector<PcieRate> pcie;  // by stack
  std::vector<MemRate> mem;    // by channel
};

// Reads every counter of `layout` from the mapped BAR0.
Snapshot take_snapshot(const Layout& layout, const Mapping& bar0);

std::uint64_t width_mask(unsigned width);

// Counts between two readings of a counter that wraps at 2^width.
std::uint64_t counter_delta(std::uint64_t before, std::uint64_t after, unsigned width);

// Whether every counter reads all ones within its width, as a revoked
// unit's BAR0 (or a PCIe function that went away) does.
bool reads_all_ones(const Layout& layout, const Snapshot& snapshot);

// GB/s (1e9 bytes per second) per PCIe stack and memory channel.  The
// device's clock times the interval when it has one that moved; the
// guest's CLOCK_MONOTONIC otherwise.
Rates compute_rates(const Layout& layout, const Snapshot& before, const Snapshot& after);

}  // namespace kvmai::kvmaistat
