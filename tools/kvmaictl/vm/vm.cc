// `kvmaictl vm plan`: the guest layout for a set of host devices, as QEMU
// arguments or JSON (see vm/plan.h for the layout rules).
#include <charconv>

#include "cli.h"
#include "topology.h"
#include "tree_options.h"
#include "vm/plan.h"

namespace kvmaictl {
namespace {

int positive(const std::string& word, const std::string& value) {
  int n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || end != value.data() + value.size() || n <= 0) {
    throw UsageError(word + " wants a positive number, not \"" + value + "\"");
  }
  return n;
}

void plan(const Args& args, Context& ctx) {
  PlanRequest req{.devices = {}, .vcpus = 2, .memory_mib = 1024};
  TreeRoots roots;
  std::string format = ctx.opts.json ? "json" : "qemu";
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& w = args[i];
    const bool keyword = w == "vcpus" || w == "memory" || w == "format" || w == "--sysfs-root";
    if (!keyword) {
      req.devices.push_back(w);
      continue;
    }
    if (i + 1 == args.size()) {
      throw UsageError(w + " wants a value");
    }
    const std::string& v = args[++i];
    if (w == "vcpus") {
      req.vcpus = positive(w, v);
    } else if (w == "memory") {
      req.memory_mib = positive(w, v);
    } else if (w == "format") {
      if (v != "qemu" && v != "json") {
        throw UsageError("format is qemu or json, not \"" + v + "\"");
      }
      format = v;
    } else {
      roots.sysfs = v;
    }
  }

  const auto sys = open_sysfs(roots);
  const Topology topo(PciTree::read(*sys));
  const VmPlan p = plan_vm(topo, *sys, req);
  const auto qemu = qemu_args(p);
  Printer& out = ctx.out;

  if (format == "qemu" && !out.json()) {
    // One option and its value per line: a shell's $(...) splits them.
    for (std::size_t i = 0; i + 1 < qemu.size(); i += 2) {
      out.text(qemu[i] + " " + qemu[i + 1] + "\n");
    }
    return;
  }
  Json nodes = Json::array();
  for (const auto& n : p.nodes) {
    nodes.push_back({{"id", n.id},
                     {"host_node", n.host_node},
                     {"vcpus", n.vcpus},
                     {"memory_mib", n.memory_mib},
                     {"host_cpus", n.host_cpus.empty() ? Json() : Json(n.host_cpus)}});
  }
  Json bridges = Json::array();
  for (const auto& b : p.bridges) {
    Json j = {{"id", b.id}, {"model", b.model}, {"bus", b.bus}, {"host", b.host}};
    if (b.model == "pxb-pcie") {
      j["bus_nr"] = b.bus_nr;
      j["numa_node"] = b.numa_node;
    }
    bridges.push_back(j);
  }
  Json devices = Json::array();
  for (const auto& d : p.devices) {
    devices.push_back({{"name", d.name},
                       {"host_bdf", d.host_bdf},
                       {"bus", d.bus},
                       {"guest_node", d.guest_node},
                       {"clique", d.clique ? Json(*d.clique) : Json()}});
  }
  out.print_json("nodes", nodes);
  out.print_json("bridges", bridges);
  out.print_json("devices", devices);
  out.print_json("notes", p.notes);
  out.print_json("qemu", qemu);
}

const ObjectRegistrar kRegistrar({
    .name = "vm",
    .summary = "the guest's layout for host devices (reads sysfs)",
    .commands = {{.name = "plan",
                  .usage = "DEV... [ vcpus N ] [ memory MIB ] [ format { qemu | json } ] "
                           "[ --sysfs-root DIR ]",
                  .summary = "mirror the devices' PCIe tree and NUMA nodes into a guest layout",
                  .run = plan}},
    .default_command = "plan",
});

}  // namespace
}  // namespace kvmaictl
