// `kvmaictl vm plan`: the guest layout for a set of host devices, as QEMU
// arguments or JSON (see vm/plan.h for the layout rules), and
// `kvmaictl vm nccl-topo`: NCCL's topology file for that guest (vm/nccl.h).
#include <linux/kvmai.h>

#include <charconv>

#include "cli/cli.h"
#include "commands/group_print.h"
#include "model/topology.h"
#include "tree_options.h"
#include "vm/libvirt.h"
#include "vm/nccl.h"
#include "vm/plan.h"

namespace kvmai::kvmaictl {
namespace {

int positive(const std::string& word, const std::string& value) {
  int n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || end != value.data() + value.size() || n <= 0) {
    throw UsageError(word + " wants a positive number, not \"" + value + "\"");
  }
  return n;
}

// The words both commands take: devices, the guest's size, the tree to read.
struct Request {
  PlanRequest plan{.devices = {}, .vcpus = 2, .memory_mib = 1024, .hugepages = {}};
  TreeRoots roots;
  std::string format;
  std::string kvmai_group;  // vm plan's `group NAME`: libvirt metadata for the hook
};

Request parse(const Args& args, bool with_format) {
  Request r;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& w = args[i];
    const bool keyword = w == "vcpus" || w == "memory" || w == "hugepages" || w == "--sysfs-root" ||
                         (with_format && (w == "format" || w == "group"));
    if (!keyword) {
      r.plan.devices.push_back(w);
      continue;
    }
    if (i + 1 == args.size()) {
      throw UsageError(w + " wants a value");
    }
    const std::string& v = args[++i];
    if (w == "vcpus") {
      r.plan.vcpus = positive(w, v);
    } else if (w == "hugepages") {
      r.plan.hugepages = v;
    } else if (w == "memory") {
      r.plan.memory_mib = positive(w, v);
    } else if (w == "format") {
      if (v != "qemu" && v != "json" && v != "libvirt") {
        throw UsageError("format is qemu, json or libvirt, not \"" + v + "\"");
      }
      r.format = v;
    } else if (w == "group") {
      r.kvmai_group = checked_name("group name", v, KVMAI_NAME_LEN);
    } else {
      r.roots.sysfs = v;
    }
  }
  return r;
}

void nccl_topo(const Args& args, Context& ctx) {
  const Request r = parse(args, false);
  const auto sys = open_sysfs(r.roots);
  const Topology topo(PciTree::read(*sys));
  // The same plan as `vm plan` with these words: the bus ids are its guest's.
  ctx.out.text(nccl_topology_xml(plan_vm(topo, *sys, r.plan), topo.tree()));
}

void plan(const Args& args, Context& ctx) {
  const Request r = parse(args, true);
  const std::string format = !r.format.empty() ? r.format : ctx.opts.json ? "json" : "qemu";
  if (!r.kvmai_group.empty() && format != "libvirt") {
    throw UsageError("group NAME goes with format libvirt (it is the domain's metadata)");
  }
  const auto sys = open_sysfs(r.roots);
  const Topology topo(PciTree::read(*sys));
  const VmPlan p = plan_vm(topo, *sys, r.plan);
  // The hook would refuse the domain's start otherwise.
  if (!r.kvmai_group.empty() &&
      (p.devices.size() < kMinGroupMembers || p.devices.size() > kMaxGroupMembers)) {
    const std::size_t n = p.devices.size();
    throw OpError("group " + r.kvmai_group + ": " + std::to_string(n) +
                  (n == 1 ? " device" : " devices") + " planned (a group holds " +
                  std::to_string(kMinGroupMembers) + " to " + std::to_string(kMaxGroupMembers) +
                  ")");
  }
  const auto qemu = qemu_args(p);
  Printer& out = ctx.out;

  if (format == "qemu" && !out.json()) {
    // One option and its value per line: a shell's $(...) splits them.
    for (std::size_t i = 0; i + 1 < qemu.size(); i += 2) {
      out.text(qemu[i] + " " + qemu[i + 1] + "\n");
    }
    return;
  }
  if (format == "libvirt" && !out.json()) {
    out.text(libvirt_xml(p, r.kvmai_group));
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
    } else {
      j["slot"] = b.slot;
    }
    j["secondary"] = b.secondary;
    bridges.push_back(j);
  }
  Json devices = Json::array();
  for (const auto& d : p.devices) {
    devices.push_back({{"name", d.name},
                       {"host_bdf", d.host_bdf},
                       {"bus", d.bus},
                       {"slot", d.slot},
                       {"function", d.function},
                       {"guest_bdf", d.guest_bdf},
                       {"guest_node", d.guest_node},
                       {"clique", d.clique ? Json(*d.clique) : Json()}});
  }
  Json doc = {{"nodes", nodes},
              {"bridges", bridges},
              {"devices", devices},
              {"notes", p.notes},
              {"hugepages", p.hugepages.empty() ? Json() : Json(p.hugepages)},
              {"qemu", qemu}};
  if (format == "libvirt") {
    // With -j the plan stays one JSON document; the domain XML is a string in it.
    doc["libvirt"] = libvirt_xml(p, r.kvmai_group);
  }
  if (!out.json()) {
    out.text(json_text(doc) + "\n");  // format json without -j
    return;
  }
  for (const auto& [key, value] : doc.items()) {
    out.print_json(key, value);
  }
}

const ObjectRegistrar kRegistrar({
    .name = "vm",
    .summary = "the guest's layout for host devices (reads sysfs)",
    .commands = {{.name = "plan",
                  .usage = "DEV... [ vcpus N ] [ memory MIB ] [ hugepages DIR ] "
                           "[ format { qemu | json | libvirt } ] [ group NAME ] "
                           "[ --sysfs-root DIR ]",
                  .summary = "mirror the devices' PCIe tree and NUMA nodes into a guest layout",
                  .run = plan},
                 {.name = "nccl-topo",
                  .usage = "DEV... [ vcpus N ] [ memory MIB ] [ --sysfs-root DIR ]",
                  .summary = "NCCL's topology file (XML) for the guest vm plan lays out",
                  .run = nccl_topo}},
    .default_command = "plan",
});

}  // namespace
}  // namespace kvmai::kvmaictl
