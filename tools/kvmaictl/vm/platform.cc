#include "vm/platform.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "cli/errors.h"
#include "hook/metadata.h"

namespace kvmai::kvmaictl {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20U;
// A bridge's prefetchable window is set in 1 MiB units.
constexpr std::uint64_t kWindowGranule = kMiB;

std::uint64_t align_up(std::uint64_t v, std::uint64_t align) {
  return (v + align - 1) / align * align;
}

// A range to place: its length and the alignment it needs.
struct Span {
  std::uint64_t length = 0;
  std::uint64_t align = 1;
};

// @parts packed into one window, largest alignment first.
Span pack(std::vector<Span> parts) {
  std::stable_sort(parts.begin(), parts.end(),
                   [](const Span& a, const Span& b) { return a.align > b.align; });
  Span w{0, kWindowGranule};
  for (const Span& p : parts) {
    w.length = align_up(w.length, p.align) + p.length;
    w.align = std::max(w.align, p.align);
  }
  w.length = align_up(w.length, kWindowGranule);
  return w;
}

// The window below guest bridge @id: its devices' BARs and its bridges'
// windows.
Span window_below(const VmPlan& plan, const PciTree& host, const std::string& id) {
  std::vector<Span> parts;
  for (const auto& b : plan.bridges) {
    if (b.bus == id) {
      if (const Span w = window_below(plan, host, b.id); w.length != 0) {
        parts.push_back(w);
      }
    }
  }
  for (const auto& d : plan.devices) {
    // An mdev's BARs are its vendor driver's, not its parent's.
    const PciDevice* h = d.bus == id && d.mdev.empty() ? host.find(d.host_bdf) : nullptr;
    if (h == nullptr) {
      continue;
    }
    for (const Bar& bar : h->bars) {
      if (!bar.io && bar.mem64 && bar.prefetchable && bar.size != 0) {
        parts.push_back({bar.size, bar.size});
      }
    }
  }
  return parts.empty() ? Span{} : pack(parts);
}

}  // namespace

std::uint64_t mmio64_need(const VmPlan& plan, const PciTree& host) {
  std::vector<Span> roots;
  for (const auto& b : plan.bridges) {
    if (b.bus == "pcie.0") {
      if (const Span w = window_below(plan, host, b.id); w.length != 0) {
        roots.push_back(w);
      }
    }
  }
  return roots.empty() ? 0 : pack(roots).length;
}

std::uint64_t mmio64_window(std::uint64_t need) {
  return std::max(kOvmfDefaultMmio64, std::bit_ceil(need));
}

std::optional<int> host_phys_bits(const TreeReader& proc) {
  const auto text = proc.read("cpuinfo");
  if (!text) {
    return std::nullopt;
  }
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    // "address sizes\t: 46 bits physical, 57 bits virtual"
    if (!line.starts_with("address sizes")) {
      continue;
    }
    const auto colon = line.find(':');
    int bits = 0;
    if (colon == std::string::npos) {
      return std::nullopt;
    }
    const char* p = line.data() + colon + 1;
    while (*p == ' ') {
      ++p;
    }
    const auto [end, ec] = std::from_chars(p, line.data() + line.size(), bits);
    if (ec != std::errc() || std::string_view(end).find("bits physical") != 1) {
      return std::nullopt;
    }
    return bits;
  }
  return std::nullopt;
}

std::uint64_t hugetlbfs_page_kib(const TreeReader& proc, const std::string& dir) {
  const auto text = proc.read("mounts");
  if (!text) {
    throw OpError("hugepages " + dir + ": no mounts in the host's procfs to find its page size");
  }
  std::istringstream lines(*text);
  std::optional<std::string> options;  // the last mount there is the one in use
  std::string fstype_there;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream f(line);
    std::string source;
    std::string target;
    std::string fstype;
    std::string opts;
    if (f >> source >> target >> fstype >> opts && target == dir) {
      fstype_there = fstype;
      options = opts;
    }
  }
  if (!options) {
    throw OpError("hugepages " + dir + ": nothing is mounted there");
  }
  if (fstype_there != "hugetlbfs") {
    throw OpError("hugepages " + dir + ": a " + fstype_there + " mount, not hugetlbfs");
  }
  std::istringstream opts(*options);
  for (std::string o; std::getline(opts, o, ',');) {
    if (o.starts_with("pagesize=")) {
      return size_of("pagesize", o.substr(9)) >> 10U;
    }
  }
  throw OpError("hugepages " + dir + ": its mount options name no pagesize");
}

void pin_threads(VmPlan& plan) {
  plan.vcpu_pins.clear();
  plan.emulator_cpus.clear();
  const bool known = std::all_of(plan.nodes.begin(), plan.nodes.end(),
                                 [](const GuestNode& n) { return !n.host_cpus.empty(); });
  if (plan.pin == Pinning::none || !known) {
    return;
  }
  std::set<unsigned> all;
  std::set<unsigned> taken;
  int vcpu = 0;
  for (const auto& n : plan.nodes) {
    const auto cpus = hook::parse_cpuset(n.host_cpus);
    if (!cpus || cpus->empty()) {
      throw OpError("host node " + std::to_string(n.host_node) + ": its cpulist \"" + n.host_cpus +
                    "\" is not a CPU list");
    }
    all.insert(cpus->begin(), cpus->end());
    if (plan.pin == Pinning::node) {
      for (int i = 0; i < n.vcpus; ++i) {
        plan.vcpu_pins.push_back({.vcpu = vcpu++, .cpus = n.host_cpus});
      }
      continue;
    }
    if (cpus->size() <= static_cast<std::size_t>(n.vcpus)) {
      throw OpError("pin vcpu: host node " + std::to_string(n.host_node) + " has " +
                    std::to_string(cpus->size()) + " CPUs for " + std::to_string(n.vcpus) +
                    " vCPUs and QEMU's own threads");
    }
    auto it = cpus->begin();
    for (int i = 0; i < n.vcpus; ++i, ++it) {
      plan.vcpu_pins.push_back({.vcpu = vcpu++, .cpus = std::to_string(*it)});
      taken.insert(*it);
    }
  }
  std::set<unsigned> rest;
  std::set_difference(all.begin(), all.end(), taken.begin(), taken.end(),
                      std::inserter(rest, rest.end()));
  plan.emulator_cpus = hook::cpu_list(rest);
}

std::string size_text(std::uint64_t bytes) {
  static constexpr std::array<const char*, 5> kUnits{"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t u = 0;
  while (u + 1 < kUnits.size() && (bytes >> (10 * (u + 1))) != 0) {
    ++u;
  }
  const std::uint64_t unit = std::uint64_t{1} << (10 * u);
  if (bytes % unit == 0) {
    return std::to_string(bytes / unit) + " " + kUnits.at(u);
  }
  // One decimal, rounded up: a size the BARs need is never understated.
  const std::uint64_t tenths = (bytes * 10 + unit - 1) / unit;
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + " " + kUnits.at(u);
}

std::uint64_t size_of(std::string_view name, const std::string& value) {
  static const std::map<char, unsigned> kShift{{'K', 10}, {'M', 20}, {'G', 30}, {'T', 40}};
  std::uint64_t n = 0;
  const char* end = value.data() + value.size();
  const auto [p, ec] = std::from_chars(value.data(), end, n);
  const auto unit = p + 1 == end ? kShift.find(*p) : kShift.end();
  if (ec != std::errc() || n == 0 || unit == kShift.end() || n > (~std::uint64_t{0} >> 40U)) {
    throw UsageError(std::string(name) + " wants a size such as 512G or 2T, not \"" + value + "\"");
  }
  return n << unit->second;
}

}  // namespace kvmai::kvmaictl
