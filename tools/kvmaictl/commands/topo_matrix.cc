// `kvmaictl topo matrix`: the path class between every two GPUs and RDMA
// NICs, in the terms of `nvidia-smi topo -m`, with each device's CPU and
// NUMA affinity, a legend, and the RDMA device of each NIC. Reads sysfs.
#include "model/topo_matrix.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "commands/commands.h"
#include "commands/host.h"

namespace kvmai::kvmaictl {
namespace {

struct LegendEntry {
  std::string_view term;
  std::string_view meaning;
};

// Written for kvmaictl; the classes are NVML's topology levels
// (nvmlGpuTopologyLevel_t), which nvidia-smi and NCCL use too.
constexpr std::array<LegendEntry, 6> kLegend{{
    {"X", "the device itself"},
    {"PIX", "below one PCIe switch at most, never up to a host bridge"},
    {"PXB", "across more than one PCIe switch, never up to a host bridge"},
    {"PHB", "up to a PCIe host bridge and down again (two root ports of one root complex)"},
    {"NODE", "between two host bridges of one NUMA node"},
    {"SYS", "between NUMA nodes, over the socket interconnect (UPI, Infinity Fabric)"},
}};

}  // namespace

void topo_matrix(const Words& /*words*/, Context& ctx) {
  const auto sys = open_sysfs(ctx.opts);
  const Topology topo(PciTree::read(*sys, tree_options(ctx.opts)));
  const TopoMatrix m = build_matrix(topo);
  Printer& out = ctx.out;

  int cell = 6;
  std::size_t cpus = 12;
  for (const Named* n : m.devices) {
    cell = std::max(cell, static_cast<int>(n->name.size()) + 2);
    cpus = std::max(cpus, n->dev->local_cpulist.size());
  }
  const int cpu_width = static_cast<int>(cpus) + 2;

  if (!m.devices.empty()) {
    out.text(fmt::format("{:{}}", "", cell));
    for (const Named* n : m.devices) {
      out.text(fmt::format("{:{}}", n->name, cell));
    }
    out.text(fmt::format("{:{}}NUMA\n", "CPUS", cpu_width));
  }
  out.open_array("devices");
  for (std::size_t i = 0; i < m.devices.size(); ++i) {
    const Named& n = *m.devices[i];
    out.open_object();
    out.print_string("name", n.name, {"", cell});
    out.print_string("kind", n.name.starts_with("gpu") ? "gpu" : "nic", {}, Show::json_only);
    out.print_string("bdf", n.dev->bdf, {}, Show::json_only);
    out.print_string_list("rdma_devices", n.dev->rdma_devices, {}, Show::json_only);
    out.open_object("paths");
    for (std::size_t j = 0; j < m.devices.size(); ++j) {
      const auto& c = m.cells[i][j];
      out.print_string(m.devices[j]->name, c ? path_class_name(*c) : "X", {"", cell});
    }
    out.close_object();
    out.print_opt_string(
        "cpu_affinity",
        n.dev->local_cpulist.empty() ? std::nullopt : std::optional(n.dev->local_cpulist),
        {"", cpu_width});
    out.print_opt_int("numa_affinity", n.dev->numa_node, {});
    out.close_object();
    out.newline();
  }
  out.close_array();

  if (m.devices.empty()) {
    out.text("no GPU or RDMA NIC\n");
  } else {
    out.text("\nLegend:\n");
    for (const auto& e : kLegend) {
      out.text(fmt::format("  {:<5} {}\n", e.term, e.meaning));
    }
    out.text("  NVLink is not shown: these are PCIe paths (see NVSWITCH in `topo show`).\n");
  }
  out.open_object("legend");
  for (const auto& e : kLegend) {
    out.print_string(e.term, e.meaning, {}, Show::json_only);
  }
  out.close_object();

  const bool any_nic = std::any_of(m.devices.begin(), m.devices.end(),
                                   [](const Named* n) { return !n->name.starts_with("gpu"); });
  if (any_nic) {
    out.text("\nRDMA NICs:\n");
    for (const Named* n : m.devices) {
      if (!n->name.starts_with("gpu")) {
        out.text(fmt::format("  {:<7} {:<14} {}\n", n->name, n->dev->bdf,
                             n->dev->rdma_devices.empty()
                                 ? "no RDMA device on the host (driver " +
                                       (n->dev->driver.empty() ? "none" : n->dev->driver) + ")"
                                 : fmt::format("{}", fmt::join(n->dev->rdma_devices, ","))));
      }
    }
  }
  std::vector<std::string> management;
  for (const auto& n : topo.nics()) {
    if (!n.dev->is_rdma_nic()) {
      management.push_back(n.name);
    }
  }
  if (!management.empty()) {
    out.text(
        fmt::format("\nManagement NICs, not in the matrix: {}\n", fmt::join(management, ", ")));
  }
  out.print_string_list("management_nics", management, {}, Show::json_only);
}

}  // namespace kvmai::kvmaictl
