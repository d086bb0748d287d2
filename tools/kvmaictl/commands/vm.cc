// `kvmaictl vm plan`: the guest layout for a set of host devices, as QEMU
// arguments or JSON (see vm/plan.h for the layout rules), and
// `kvmaictl vm nccl-topo`: NCCL's topology file for that guest (vm/nccl.h).
#include <fmt/format.h>
#include <linux/kvmai.h>

#include <limits>

#include "client/names.h"
#include "commands/commands.h"
#include "commands/host.h"
#include "model/topology.h"
#include "vm/libvirt.h"
#include "vm/merge.h"
#include "vm/nccl.h"
#include "vm/nccl_map.h"
#include "vm/plan.h"
#include "vm/platform.h"

namespace kvmai::kvmaictl {
namespace {

// The words both commands take: devices, the guest's size and backing.
struct Request {
  PlanRequest plan{.devices = {}, .vcpus = 2, .memory_mib = 1024, .hugepages = {}};
  std::string format;
  std::string kvmai_group;  // vm plan's `group NAME`: libvirt metadata for the hook
  std::string merge;        // vm plan's `merge FILE`: the domain to merge into
};

Request request_of(const Words& words) {
  Request r;
  r.plan.devices = words.operands();
  if (const auto v = words.value("vcpus")) {
    r.plan.vcpus = static_cast<int>(number_of("vcpus", *v, 1, std::numeric_limits<int>::max()));
  }
  if (const auto v = words.value("memory")) {
    r.plan.memory_mib =
        static_cast<int>(number_of("memory", *v, 1, std::numeric_limits<int>::max()));
  }
  r.plan.hugepages = words.value("hugepages").value_or("");
  if (const auto v = words.value("firmware")) {
    if (*v != "uefi" && *v != "bios") {
      throw UsageError(fmt::format("firmware is uefi or bios, not \"{}\"", *v));
    }
    r.plan.firmware = *v == "uefi" ? Firmware::uefi : Firmware::bios;
  }
  if (const auto v = words.value("mmio64")) {
    r.plan.mmio64 = size_of("mmio64", *v);
  }
  if (const auto v = words.value("pin")) {
    if (*v != "node" && *v != "vcpu" && *v != "none") {
      throw UsageError(fmt::format("pin is node, vcpu or none, not \"{}\"", *v));
    }
    r.plan.pin = *v == "node" ? Pinning::node : *v == "vcpu" ? Pinning::vcpu : Pinning::none;
  }
  if (const auto v = words.value("format")) {
    if (*v != "qemu" && *v != "json" && *v != "libvirt") {
      throw UsageError(fmt::format("format is qemu, json or libvirt, not \"{}\"", *v));
    }
    r.format = *v;
  }
  if (const auto v = words.value("group")) {
    r.kvmai_group = checked_name("group name", *v, KVMAI_NAME_LEN);
  }
  r.merge = words.value("merge").value_or("");
  return r;
}

}  // namespace

void vm_nccl_topo(const Words& words, Context& ctx) {
  const Request r = request_of(words);
  const auto sys = open_sysfs(ctx.opts);
  const auto proc = open_procfs_if_given(ctx.opts);
  const Topology topo(PciTree::read(*sys, tree_options(ctx.opts)));
  // The same plan as `vm plan` with these words: the bus ids are its guest's.
  ctx.out.text(nccl_topology_xml(plan_vm(topo, *sys, r.plan, proc.get()), topo.tree()));
}

void vm_nccl_map(const Words& words, Context& ctx) {
  const auto files = words.operands();
  const std::string plan = read_input("PLAN", files.at(0));
  const std::string file = read_input("FILE", files.at(1));
  const auto sys = open_sysfs(ctx.opts);
  const PciTree guest = PciTree::read(*sys, tree_options(ctx.opts));
  ctx.out.text(nccl_map(plan, file, guest));
}

void vm_plan(const Words& words, Context& ctx) {
  const Request r = request_of(words);
  const std::string format = !r.format.empty() ? r.format : ctx.opts.json ? "json" : "qemu";
  if (!r.kvmai_group.empty() && format != "libvirt") {
    throw UsageError("group NAME goes with format libvirt (it is the domain's metadata)");
  }
  if (!r.merge.empty() && format != "libvirt") {
    throw UsageError("merge FILE goes with format libvirt (FILE is a libvirt domain)");
  }
  // Read before sysfs: a FILE that cannot be read is the first thing wrong.
  const std::string into = r.merge.empty() ? "" : read_input("merge", r.merge);
  const auto sys = open_sysfs(ctx.opts);
  const auto proc = open_procfs_if_given(ctx.opts);
  const Topology topo(PciTree::read(*sys, tree_options(ctx.opts)));
  const VmPlan p = plan_vm(topo, *sys, r.plan, proc.get());
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
  const auto domain_xml = [&] {
    return into.empty() ? libvirt_xml(p, r.kvmai_group) : libvirt_merge(p, into, r.kvmai_group);
  };
  if (format == "libvirt" && !out.json()) {
    out.text(domain_xml());
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
    if (b.model == "pcie-root-port") {
      j["x_speed"] = b.x_speed.empty() ? Json() : Json(b.x_speed);
      j["x_width"] = b.x_width == 0 ? Json() : Json(b.x_width);
    }
    j["secondary"] = b.secondary;
    bridges.push_back(j);
  }
  Json devices = Json::array();
  for (const auto& d : p.devices) {
    devices.push_back({{"name", d.name},
                       {"host_bdf", d.host_bdf},
                       {"mdev", d.mdev.empty() ? Json() : Json(d.mdev)},
                       {"bus", d.bus},
                       {"slot", d.slot},
                       {"function", d.function},
                       {"guest_bdf", d.guest_bdf},
                       {"guest_node", d.guest_node},
                       {"clique", d.clique ? Json(*d.clique) : Json()}});
  }
  Json pins = Json::array();
  for (const auto& v : p.vcpu_pins) {
    pins.push_back({{"vcpu", v.vcpu}, {"cpus", v.cpus}});
  }
  Json doc = {{"nodes", nodes},
              {"bridges", bridges},
              {"devices", devices},
              {"notes", p.notes},
              {"hugepages", p.hugepages.empty() ? Json() : Json(p.hugepages)},
              {"hugepage_kib", p.hugepages.empty() ? Json() : Json(p.hugepage_kib)},
              {"firmware", p.firmware == Firmware::uefi ? "uefi" : "bios"},
              {"mmio64", {{"need", p.mmio64_need}, {"size", p.mmio64}}},
              {"phys_bits", p.phys_bits ? Json(*p.phys_bits) : Json()},
              {"pin", p.pin == Pinning::node   ? "node"
                      : p.pin == Pinning::vcpu ? "vcpu"
                                               : "none"},
              {"vcpu_pins", pins},
              {"emulator_cpus", p.emulator_cpus.empty() ? Json() : Json(p.emulator_cpus)},
              {"vfio_backend", p.vfio_backend},
              {"qemu", qemu}};
  if (format == "libvirt") {
    // With -j the plan stays one JSON document; the domain XML is a string in it.
    doc["libvirt"] = domain_xml();
  }
  if (!out.json()) {
    out.text(json_text(doc) + "\n");  // format json without -j
    return;
  }
  for (const auto& [key, value] : doc.items()) {
    out.print_json(key, value);
  }
}

}  // namespace kvmai::kvmaictl
