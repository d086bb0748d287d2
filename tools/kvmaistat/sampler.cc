#include "sampler.h"

#include <ctime>
#include <map>
#include <stdexcept>

namespace kvmai::kvmaistat {
namespace {

constexpr double kNsPerS = 1e9;
constexpr double kBytesPerGB = 1e9;

struct timespec now(clockid_t clock) {
  struct timespec ts {};
  clock_gettime(clock, &ts);
  return ts;
}

}  // namespace

Snapshot take_snapshot(const Layout& layout, const Mapping& bar0) {
  Snapshot s;
  s.values.reserve(layout.counters.size());
  for (const auto& c : layout.counters) {
    s.values.push_back(bar0.load64(c.offset) & width_mask(c.width));
  }
  const auto mono = now(CLOCK_MONOTONIC);
  const auto real = now(CLOCK_REALTIME);
  s.monotonic_ns = std::int64_t{mono.tv_sec} * 1'000'000'000 + mono.tv_nsec;
  s.realtime_s = static_cast<double>(real.tv_sec) + static_cast<double>(real.tv_nsec) / kNsPerS;
  return s;
}

std::uint64_t width_mask(unsigned width) {
  return width >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
}

std::uint64_t counter_delta(std::uint64_t before, std::uint64_t after, unsigned width) {
  return (after - before) & width_mask(width);
}

bool reads_all_ones(const Layout& layout, const Snapshot& snapshot) {
  if (layout.counters.empty() || snapshot.values.size() != layout.counters.size()) {
    return false;
  }
  for (std::size_t i = 0; i < layout.counters.size(); ++i) {
    if (snapshot.values[i] != width_mask(layout.counters[i].width)) {
      return false;
    }
  }
  return true;
}

Rates compute_rates(const Layout& layout, const Snapshot& before, const Snapshot& after) {
  const std::size_t n = layout.counters.size();
  if (before.values.size() != n || after.values.size() != n) {
    throw std::logic_error("snapshots of a different layout");
  }
  const auto delta = [&](std::size_t i) {
    return counter_delta(before.values[i], after.values[i], layout.counters[i].width);
  };

  Rates r;
  r.time = after.realtime_s;
  r.clock = ClockSource::monotonic;
  r.interval_s = static_cast<double>(after.monotonic_ns - before.monotonic_ns) / kNsPerS;
  for (std::size_t i = 0; i < n; ++i) {
    const Counter& c = layout.counters[i];
    // A clock that did not move cannot time anything: fall back to ours.
    if (c.kind == Kind::clock && delta(i) != 0) {
      r.clock = ClockSource::device;
      r.interval_s = static_cast<double>(delta(i)) / static_cast<double>(c.scale);
    }
  }

  std::map<std::uint16_t, PcieRate> pcie;
  std::map<std::uint16_t, MemRate> mem;
  for (std::size_t i = 0; i < n; ++i) {
    const Counter& c = layout.counters[i];
    const double gbps = r.interval_s > 0
                            ? static_cast<double>(delta(i)) * static_cast<double>(c.scale) /
                                  r.interval_s / kBytesPerGB
                            : 0.0;
    switch (c.kind) {
      case Kind::clock:
        break;
      case Kind::pcie_in:
        pcie[c.index].in_gbps = gbps;
        break;
      case Kind::pcie_out:
        pcie[c.index].out_gbps = gbps;
        break;
      case Kind::mem_read:
        mem[c.index].read_gbps = gbps;
        break;
      case Kind::mem_write:
        mem[c.index].write_gbps = gbps;
        break;
    }
  }
  for (auto& [stack, rate] : pcie) {
    rate.stack = stack;
    r.pcie.push_back(rate);
  }
  for (auto& [channel, rate] : mem) {
    rate.channel = channel;
    r.mem.push_back(rate);
  }
  return r;
}

}  // namespace kvmai::kvmaistat
