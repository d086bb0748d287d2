#include "hook/entitlement.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "client/names.h"
#include "model/pci_tree.h"

namespace kvmai::kvmaictl::hook {
namespace {

// The type names of Intel's uncore units that sit on a PCIe (or CXL)
// stack, from arch/x86/events/intel/uncore_snbep.c and the discovery
// table's types in uncore_discovery.c: "iio" and "iio_free_running",
// "irp", "m2pcie", "r2pcie", "pcie3"/"pcie4", "cxlcm", "cxldp", "b2cxl".
// AMD offers no stack unit (arch/x86/events/amd/uncore.c: DF, L3, UMC).
constexpr std::array<std::string_view, 7> kStackTypes = {"iio",  "irp", "m2pcie", "r2pcie",
                                                         "pcie", "cxl", "b2cxl"};

// The host's CPUs by number, each with its package and its die's logical
// index: the kernel numbers dies in the order their first CPU comes up,
// which is the order of CPU numbers on the hosts kvm-ai runs on.
struct HostCpus {
  std::map<unsigned, unsigned> package;
  std::map<unsigned, unsigned> die;
};

HostCpus host_cpus(const TreeReader& sys) {
  std::vector<unsigned> ids;
  for (const std::string& e : sys.list("devices/system/cpu")) {
    if (e.size() > 3 && e.starts_with("cpu") &&
        std::all_of(e.begin() + 3, e.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      ids.push_back(static_cast<unsigned>(std::stoul(e.substr(3))));
    }
  }
  std::sort(ids.begin(), ids.end());
  HostCpus h;
  std::map<std::pair<long long, long long>, unsigned> dies;
  for (const unsigned cpu : ids) {
    const std::string topo = "devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    const auto pkg = read_int(sys, topo + "physical_package_id");
    if (!pkg || *pkg < 0) {
      continue;  // offline: its topology is not shown
    }
    const auto die = read_int(sys, topo + "die_id").value_or(0);
    const auto [it, fresh] = dies.emplace(std::pair(*pkg, die), dies.size());
    h.package.emplace(cpu, static_cast<unsigned>(*pkg));
    h.die.emplace(cpu, it->second);
  }
  return h;
}

// The packages (or dies) of `cpus`; throws naming a CPU the host does not show.
std::set<unsigned> of(const std::map<unsigned, unsigned>& where, const std::set<unsigned>& cpus) {
  std::set<unsigned> out;
  for (const unsigned cpu : cpus) {
    const auto it = where.find(cpu);
    if (it == where.end()) {
      throw HookError("pmu: host CPU " + std::to_string(cpu) +
                      " is not online: its package cannot be told");
    }
    out.insert(it->second);
  }
  return out;
}

// Why `b` (<memory> or <memnode cellid=N>) does not bind memory strictly to
// `allowed` nodes; "" when it does.
std::string binding_problem(const std::string& element, const MemoryBinding& b,
                            const std::set<unsigned>& allowed) {
  if (b.mode != "strict") {
    return element + " has mode " + in_quotes(b.mode);
  }
  if (b.placement == "auto" || !b.nodeset) {
    return element + " leaves the nodes to numad";
  }
  const auto nodes = parse_cpuset(*b.nodeset);
  if (!nodes || nodes->empty()) {
    return element + " has nodeset " + in_quotes(*b.nodeset) + ", not a node list";
  }
  for (const unsigned n : *nodes) {
    if (!allowed.contains(n)) {
      return element + " has nodeset " + in_quotes(*b.nodeset) + ", which holds node " +
             std::to_string(n);
    }
  }
  return "";
}

// Memory, fabric and cache units: the domain's memory strictly on nodes of
// its vCPUs' packages.
void check_memory(const std::string& vm, const std::string& unit, const std::set<unsigned>& pkgs,
                  const HostCpus& cpus, const DomainXml& xml, const TreeReader& sys,
                  const HostConfig& host) {
  std::set<unsigned> allowed;
  for (const std::string& e : sys.list("devices/system/node")) {
    if (!e.starts_with("node") || e.size() == 4) {
      continue;
    }
    const auto id = parse_cpuset(e.substr(4));
    const auto node_cpus =
        parse_cpuset(read_line(sys, "devices/system/node/" + e + "/cpulist").value_or(""));
    if (!id || id->size() != 1 || !node_cpus) {
      continue;
    }
    // A node of one of the packages: memory-only nodes (CXL, HBM) have no CPU.
    if (std::any_of(node_cpus->begin(), node_cpus->end(), [&](unsigned c) {
          const auto p = cpus.package.find(c);
          return p != cpus.package.end() && pkgs.contains(p->second);
        })) {
      allowed.insert(*id->begin());
    }
  }
  std::string problem;
  if (!xml.numatune.memory) {
    problem = "it has no <numatune><memory>";
  } else {
    problem = binding_problem("<numatune><memory>", *xml.numatune.memory, allowed);
  }
  for (const auto& [cell, b] : xml.numatune.memnodes) {
    if (problem.empty()) {
      problem = binding_problem("<memnode cellid='" + std::to_string(cell) + "'>", b, allowed);
    }
  }
  if (!problem.empty()) {
    throw HookError(cat(
        {"pmu: unit ", unit, " counts the memory traffic of package ", cpu_list(pkgs),
         ", so domain ", printable(vm), " must have its memory strictly on node ",
         allowed.empty() ? "(none found)" : cpu_list(allowed),
         " (<numatune><memory mode='strict' nodeset='", cpu_list(allowed), "'/>), but ", problem,
         "; or the host shares its packages ([pmu] shared in ", printable(host.path), ")"}));
  }
}

// PCIe-stack units: every endpoint below the stack of each of the domain's
// dies is one of its hostdevs.
void check_stack(const std::string& vm, const std::string& unit, const std::set<unsigned>& dies,
                 const DomainXml& xml, const TreeReader& sys, const PciTree& pci) {
  const std::string dir = "bus/event_source/devices/" + unit + "/";
  for (const unsigned die : dies) {
    const auto stack = read_line(sys, dir + "die" + std::to_string(die));
    if (!stack || stack->size() != 7 || (*stack)[4] != ':') {
      throw HookError(
          cat({"pmu: unit ", unit, " counts a PCIe stack, but the kernel does not say ",
               "which on die ", std::to_string(die), " (", dir, "die", std::to_string(die),
               "): domain ", printable(vm), " cannot be shown to own every device below it"}));
    }
    for (const PciDevice& d : pci.devices()) {
      // Ports and bridges forward traffic; the endpoints make it.
      if (d.root != "pci" + *stack || d.is_bridge()) {
        continue;
      }
      if (std::find(xml.pci_devices.begin(), xml.pci_devices.end(), d.bdf) ==
          xml.pci_devices.end()) {
        throw HookError(
            cat({"pmu: unit ", unit, " counts PCIe stack ", printable(*stack), ", where ",
                 printable(d.bdf), " is not a PCI hostdev of domain ", printable(vm),
                 ": the unit is the domain's only with every device "
                 "below the stack"}));
      }
    }
  }
}

}  // namespace

UnitCounts unit_counts(std::string_view unit) {
  // "uncore_iio_free_running_3" -> "iio_free_running"; "amd_umc_2" -> "umc".
  if (const auto u = unit.rfind('_');
      u != std::string_view::npos && u + 1 < unit.size() &&
      std::all_of(unit.begin() + static_cast<long>(u) + 1, unit.end(),
                  [](char c) { return c >= '0' && c <= '9'; })) {
    unit = unit.substr(0, u);
  }
  if (const auto p = unit.find("uncore_"); p != std::string_view::npos) {
    unit = unit.substr(p + 7);
  } else if (unit.starts_with("amd_")) {
    unit = unit.substr(4);
  }
  const bool stack = std::any_of(kStackTypes.begin(), kStackTypes.end(),
                                 [&](std::string_view t) { return unit.starts_with(t); });
  return stack ? UnitCounts::pcie_stack : UnitCounts::memory;
}

void check_entitlement(const std::string& vm, const PmuPlan& pmu, const DomainXml& xml,
                       const TreeReader& sys, const HostConfig& host) {
  if (pmu.units.empty()) {
    return;
  }
  const auto vcpus = parse_cpuset(pmu.cpus).value_or(std::set<unsigned>{});
  const HostCpus cpus = host_cpus(sys);
  const std::set<unsigned> dies = of(cpus.die, vcpus);
  const std::set<unsigned> pkgs = of(cpus.package, vcpus);
  std::optional<PciTree> pci;   // read for the first stack unit
  bool memory_checked = false;  // the rule is the domain's, not the unit's
  for (const std::string& unit : pmu.units) {
    if (unit_counts(unit) == UnitCounts::pcie_stack) {
      if (!pci) {
        pci = PciTree::read(sys);
      }
      check_stack(vm, unit, dies, xml, sys, *pci);
    } else if (!memory_checked) {
      check_memory(vm, unit, pkgs, cpus, xml, sys, host);
      memory_checked = true;
    }
  }
}

}  // namespace kvmai::kvmaictl::hook
