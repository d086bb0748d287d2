// `kvmaictl topo show`: GPUs and NICs, their links, BARs and CPUs, the
// switches and NVSwitches, and for every GPU/NIC pair the path class and
// whether P2P goes direct. Reads sysfs only.
#include <fmt/format.h>

#include <algorithm>

#include "commands/commands.h"
#include "commands/host.h"
#include "model/topology.h"

namespace kvmai::kvmaictl {
namespace {

std::optional<std::string> nonempty(const std::string& s) {
  return s.empty() ? std::nullopt : std::optional<std::string>(s);
}

// "32.0 GT/s" from sysfs's "32.0 GT/s PCIe".
std::string link_speed(std::string speed) {
  if (speed.ends_with(" PCIe")) {
    speed.resize(speed.size() - 5);
  }
  return speed;
}

// "32.0 GT/s x16", or "-" when sysfs has no link (not PCIe).
std::string link_text(const std::string& speed, std::optional<int> width) {
  if (speed.empty() && !width) {
    return "-";
  }
  return fmt::format("{} x{}", speed.empty() ? "?" : link_speed(speed),
                     width ? std::to_string(*width) : "?");
}

void print_link(Printer& out, const PciDevice& d, Show show) {
  out.open_object("link");
  out.print_opt_string("speed", nonempty(link_speed(d.current_link_speed)), {}, "-", show);
  out.print_opt_int("width", d.current_link_width, {}, "-", show);
  out.print_opt_string("max_speed", nonempty(link_speed(d.max_link_speed)), {}, "-", show);
  out.print_opt_int("max_width", d.max_link_width, {}, "-", show);
  out.close_object();
}

void print_bars(Printer& out, const PciDevice& d, Show show) {
  out.open_array("bars");
  for (const Bar& b : d.bars) {
    out.open_object();
    out.print_int("index", b.index, {}, show);
    out.print_uint("size", b.size, {}, show);
    out.print_string("type", b.io ? "io" : "mem", {}, show);
    out.print_bool("mem64", b.mem64, {}, show);
    out.print_bool("prefetchable", b.prefetchable, {}, show);
    out.close_object();
  }
  out.close_array();
}

// The text row of a device's link, CPUs and BARs (JSON has them in the
// device's object).
void print_resources_row(Printer& out, const Named& n) {
  const PciDevice& d = *n.dev;
  out.print_string("name", n.name, {"", 10}, Show::text_only);
  const std::string cur = link_text(d.current_link_speed, d.current_link_width);
  const std::string max = link_text(d.max_link_speed, d.max_link_width);
  out.print_string("link", cur, {"", 15}, Show::text_only);
  // The maximum only where the link trained below it.
  out.print_string("max_link", cur == max ? "" : max, {"", 15}, Show::text_only);
  out.print_opt_string("local_cpulist", nonempty(d.local_cpulist), {"", 16}, "-", Show::text_only);
  std::vector<std::string> bars;
  for (const Bar& b : d.bars) {
    bars.push_back(fmt::format("{}:{}", b.index, describe_bar(b)));
  }
  out.print_string("bars", bars.empty() ? "-" : fmt::format("{}", fmt::join(bars, ", ")), {},
                   Show::text_only);
  out.newline();
}

void print_acs(Printer& out, const PciConfig& c) {
  out.open_object("acs");
  switch (c.acs_presence) {
    case Presence::unknown:
      out.print_string("state", "unknown", {" acs "});
      break;
    case Presence::absent:
      out.print_string("state", "absent", {" acs "});
      break;
    case Presence::present:
      out.print_string("state", "present", {}, Show::json_only);
      out.print_string("cap", to_hex(c.acs->cap, 4), {}, Show::json_only);
      out.print_string("ctl", to_hex(c.acs->ctl, 4), {}, Show::json_only);
      out.print_string_list("cap_bits", acs_bit_names(c.acs->cap), {" acs cap "});
      out.print_string_list("ctl_bits", acs_bit_names(c.acs->ctl), {" ctl "});
      break;
  }
  out.close_object();
}

void print_device(Printer& out, const Topology& topo, const Named& n, bool verbose) {
  const PciDevice& d = *n.dev;
  out.open_object();
  out.print_string("name", n.name, {"", 8});
  const bool gpu = n.name.starts_with("gpu");
  out.print_string("kind", gpu ? "gpu" : "nic", {}, Show::json_only);
  const std::string nic = gpu ? "" : nic_kind(d);
  out.print_opt_string("nic_kind", nonempty(nic), {}, "-", Show::json_only);
  out.print_string("kind",
                   gpu             ? "gpu"
                   : nic == "rdma" ? "rdma-nic"
                                   : "mgmt-nic",
                   {"", 10}, Show::text_only);
  out.print_string("bdf", d.bdf, {"", 14});
  out.print_string("class", to_hex(d.class_code >> 8U, 4), {"", 8});
  out.print_string("vendor", to_hex(d.vendor, 4), {}, Show::json_only);
  out.print_string("device", to_hex(d.device, 4), {}, Show::json_only);
  out.text(to_hex(d.vendor, 4).substr(2) + ":" + to_hex(d.device, 4).substr(2) + "  ");
  out.print_opt_int("numa_node", d.numa_node, {"", 6});
  out.print_opt_int("iommu_group", d.iommu_group, {"", 7});
  out.print_opt_string("iommu_group_type", nonempty(d.iommu_group_type), {}, "-", Show::json_only);
  out.print_opt_string("driver", nonempty(d.driver), {"", 12});
  out.print_string("ats", ats_state(d), {"", 10});
  out.print_string_list("rdma_devices", d.rdma_devices, {"", 9});
  out.print_opt_string("switch", nonempty(topo.switch_of(d)), {});
  out.print_opt_string("local_cpulist", nonempty(d.local_cpulist), {}, "-", Show::json_only);
  print_link(out, d, Show::json_only);
  print_bars(out, d, Show::json_only);
  out.print_opt_int("sriov_totalvfs", d.sriov_totalvfs, {}, "-", Show::json_only);
  out.print_opt_int("sriov_numvfs", d.sriov_numvfs, {}, "-", Show::json_only);
  out.open_array("mdev_types");
  for (const auto& t : d.mdev_types) {
    out.open_object();
    out.print_string("id", t.id, {}, Show::json_only);
    out.print_opt_string("name", nonempty(t.name), {}, "-", Show::json_only);
    out.print_opt_int("available_instances", t.available_instances, {}, "-", Show::json_only);
    out.print_opt_string("device_api", nonempty(t.device_api), {}, "-", Show::json_only);
    out.close_object();
  }
  out.close_array();
  out.open_array("mig");
  for (const auto& m : d.mig) {
    out.open_object();
    out.print_int("gpu_instance", m.gpu_instance, {}, Show::json_only);
    out.open_array("compute_instances");
    for (const int ci : m.compute_instances) {
      out.print_int("", ci, {}, Show::json_only);
    }
    out.close_array();
    out.close_object();
  }
  out.close_array();
  out.open_array("upstream");
  for (const auto& bdf : d.parents) {
    const PciDevice* p = topo.tree().find(bdf);
    out.open_object();
    out.print_string("bdf", bdf, {"\n          "}, verbose ? Show::any : Show::json_only);
    out.print_string("role", p ? role_name(p->role) : "unknown", {" "},
                     verbose ? Show::any : Show::json_only);
    out.close_object();
  }
  out.close_array();
  out.close_object();
  out.newline();
}

// SR-IOV VFs: what operators pass to VMs in place of their PF.
void print_vf(Printer& out, const Topology& topo, const PciDevice& vf) {
  out.open_object();
  out.print_string("bdf", vf.bdf, {"", 14});
  out.print_string("pf", vf.physfn, {"", 14});
  const PciDevice* pf = topo.tree().find(vf.physfn);
  out.print_opt_string("pf_name", nonempty(pf != nullptr ? topo.name_of(*pf) : ""), {"", 9});
  out.print_opt_int("index", vf.vf_index, {"", 7});
  out.print_string("vendor", to_hex(vf.vendor, 4), {}, Show::json_only);
  out.print_string("device", to_hex(vf.device, 4), {}, Show::json_only);
  out.text(to_hex(vf.vendor, 4).substr(2) + ":" + to_hex(vf.device, 4).substr(2) + "  ");
  out.print_opt_int("numa_node", vf.numa_node, {"", 6});
  out.print_opt_int("iommu_group", vf.iommu_group, {"", 7});
  out.print_opt_string("driver", nonempty(vf.driver), {"", 12});
  // NVIDIA vGPU on SR-IOV: the type the VF has (0: none yet), and the
  // ones it can take.
  std::optional<std::string> vgpu;
  if (vf.vgpu_type) {
    vgpu = std::to_string(*vf.vgpu_type);
    for (const auto& t : vf.vgpu_types) {
      if (t.id == *vf.vgpu_type) {
        *vgpu += " (" + t.name + ")";
      }
    }
  }
  out.print_opt_int("vgpu_type", vf.vgpu_type, {}, "-", Show::json_only);
  out.print_opt_string("vgpu", vgpu, {}, "-", Show::text_only);
  out.open_array("vgpu_types");
  for (const auto& t : vf.vgpu_types) {
    out.open_object();
    out.print_int("id", t.id, {}, Show::json_only);
    out.print_string("name", t.name, {}, Show::json_only);
    out.close_object();
  }
  out.close_array();
  out.close_object();
  out.newline();
}

void print_mig(Printer& out, const Topology& topo, const PciDevice& d) {
  for (const auto& m : d.mig) {
    std::string cis;
    for (const int ci : m.compute_instances) {
      cis += (cis.empty() ? "" : ",") + std::to_string(ci);
    }
    out.print_string("gpu", topo.name_of(d), {"", 8}, Show::text_only);
    out.print_string("bdf", d.bdf, {"", 14}, Show::text_only);
    out.print_int("gpu_instance", m.gpu_instance, {"", 4}, Show::text_only);
    out.print_string("compute_instances", cis.empty() ? "-" : cis, {}, Show::text_only);
    out.newline();
  }
}

void print_mdev_types(Printer& out, const PciDevice& d) {
  for (const auto& t : d.mdev_types) {
    out.print_string("parent", d.bdf, {"", 14}, Show::text_only);
    out.print_string("id", t.id, {"", 14}, Show::text_only);
    out.print_opt_string("name", nonempty(t.name), {"", 14}, "-", Show::text_only);
    out.print_opt_int("available_instances", t.available_instances, {"", 11}, "-", Show::text_only);
    out.print_opt_string("device_api", nonempty(t.device_api), {}, "-", Show::text_only);
    out.newline();
  }
}

void print_switch(Printer& out, const Switch& s) {
  out.open_object();
  out.print_string("name", s.name, {"", 8});
  out.print_string("kind", s.kind, {"", 10});
  out.print_opt_string("upstream_port", nonempty(s.upstream_port), {"", 14});
  out.print_string("root", s.root, {"", 12});
  out.print_string_list("downstream_ports", s.downstream_ports, {});
  out.close_object();
  out.newline();
}

void print_nvswitch(Printer& out, const Named& n) {
  const PciDevice& d = *n.dev;
  out.open_object();
  out.print_string("name", n.name, {"", 11});
  out.print_string("bdf", d.bdf, {"", 14});
  out.print_string("vendor", to_hex(d.vendor, 4), {}, Show::json_only);
  out.print_string("device", to_hex(d.device, 4), {}, Show::json_only);
  out.text(to_hex(d.vendor, 4).substr(2) + ":" + to_hex(d.device, 4).substr(2) + "  ");
  out.print_opt_int("numa_node", d.numa_node, {"", 6});
  out.print_opt_int("iommu_group", d.iommu_group, {"", 7});
  out.print_opt_string("driver", nonempty(d.driver), {});
  out.close_object();
  out.newline();
}

void print_pair(Printer& out, const Topology& topo, const Pair& p, bool verbose) {
  const P2pPath& path = p.path;
  out.open_object();
  out.print_string("gpu", p.gpu->name, {"", 8});
  out.print_string("nic", p.nic->name, {"", 8});
  // After path: selftests match "gpu", "nic", "path" in that order.
  out.print_string("path", path_class_name(path.path_class), {"", 6});
  out.print_string("nic_kind", nic_kind(*p.nic->dev), {}, Show::json_only);
  std::vector<std::string> switches;
  switches.reserve(path.switches.size());
  for (const auto& key : path.switches) {
    switches.push_back(topo.switch_name(key));
  }
  out.print_string_list("switches", switches, {}, Show::json_only);
  out.print_string("verdict", verdict_name(path.verdict), {}, Show::json_only);
  out.print_string("reason", path.reason, {});
  // Text names only what breaks isolation; JSON says it for every pair.
  const bool loud = path.isolation == Isolation::bypass || path.isolation == Isolation::translated;
  out.print_bool("isolated", path.isolated(), {}, Show::json_only);
  out.print_string("isolation", isolation_name(path.isolation), {"; isolation: "},
                   loud ? Show::any : Show::json_only);
  out.print_string_list("unchecked", path.unchecked, {}, Show::json_only);
  if (loud) {
    out.print_string("", "(" + join(path.unchecked, "; ") + ")", {" "}, Show::text_only);
  }
  out.print_bool("ats_both", path.ats_both, {}, Show::json_only);
  out.open_array("redirects");
  for (const auto& r : path.redirects) {
    out.open_object();
    out.print_string("port", r.port, {}, Show::json_only);
    out.print_string("bit", r.bit, {}, Show::json_only);
    out.close_object();
  }
  out.close_array();
  const Show detail = verbose ? Show::any : Show::json_only;
  out.open_array("ports");
  for (const PciDevice* port : path.ports) {
    out.open_object();
    out.print_string("bdf", port->bdf, {"\n                      "}, detail);
    out.print_string("role", role_name(port->role), {" "}, detail);
    if (verbose || out.json()) {
      print_acs(out, port->config);
    }
    out.close_object();
  }
  out.close_array();
  out.close_object();
  out.newline();
}

// Whether `n` is the device the user asked for (name or BDF), or no filter.
bool wanted(const Named& n, const std::string& filter) {
  return filter.empty() || n.name == filter || n.dev->bdf == filter;
}

}  // namespace

void topo_show(const Words& words, Context& ctx) {
  const std::string filter = words.operand(0);
  const GlobalOptions& roots = ctx.opts;
  const auto sys = open_sysfs(roots);
  PciTree tree = PciTree::read(*sys, tree_options(ctx.opts));
  // MIG instances are in procfs; a recorded sysfs tree is not paired with
  // the live procfs unless asked (--procfs-root).
  if (const auto proc = open_procfs_if_given(roots)) {
    tree.read_procfs(*proc);
  }
  const Topology topo(std::move(tree));
  const bool verbose = ctx.opts.verbose;
  Printer& out = ctx.out;

  const auto matches = [&](const std::vector<Named>& v) {
    return std::any_of(v.begin(), v.end(), [&](const Named& n) { return wanted(n, filter); });
  };
  if (!filter.empty() && !matches(topo.gpus()) && !matches(topo.nics())) {
    throw OpError("no GPU or NIC \"" + filter + "\"");
  }

  out.text(
      "DEVICE  KIND      BDF           CLASS   VID:DID    NUMA  GROUP  DRIVER      ATS       "
      "RDMA     SWITCH\n");
  out.open_array("devices");
  std::vector<std::string> management;
  for (const auto* list : {&topo.gpus(), &topo.nics()}) {
    for (const auto& n : *list) {
      if (wanted(n, filter)) {
        print_device(out, topo, n, verbose);
        if (list == &topo.nics() && !n.dev->is_rdma_nic()) {
          management.push_back(n.name);
        }
      }
    }
  }
  out.close_array();
  // Which NICs the matrix and NCCL leave out, said where they are listed.
  if (!management.empty()) {
    out.text(fmt::format(
        "{}: management NIC{} (no RDMA device): not in `topo matrix`; nvidia-smi and NCCL do "
        "not pair GPUs with {}\n",
        fmt::join(management, ", "), management.size() > 1 ? "s" : "",
        management.size() > 1 ? "them" : "it"));
  }

  // Only in text: JSON carries them in each device's link, bars and
  // local_cpulist.
  out.text("\nDEVICE    LINK           MAX LINK       CPUS            BARS\n");
  for (const auto* list : {&topo.gpus(), &topo.nics()}) {
    for (const auto& n : *list) {
      if (wanted(n, filter)) {
        print_resources_row(out, n);
      }
    }
  }

  // Only in text: JSON carries them in each device's mdev_types.
  if (!out.json() && std::any_of(topo.tree().devices().begin(), topo.tree().devices().end(),
                                 [](const PciDevice& d) { return !d.mdev_types.empty(); })) {
    out.text("\nMDEV PARENT   TYPE          NAME          AVAILABLE  API\n");
    for (const auto* list : {&topo.gpus(), &topo.nics()}) {
      for (const auto& n : *list) {
        if (wanted(n, filter)) {
          print_mdev_types(out, *n.dev);
        }
      }
    }
  }

  // Only in text: JSON carries them in each GPU's mig.
  if (!out.json() && std::any_of(topo.gpus().begin(), topo.gpus().end(),
                                 [](const Named& n) { return !n.dev->mig.empty(); })) {
    out.text("\nMIG GPU  BDF           GI  CI\n");
    for (const auto& n : topo.gpus()) {
      if (wanted(n, filter)) {
        print_mig(out, topo, *n.dev);
      }
    }
  }

  // Sections below print no header when they have nothing to list.
  if (filter.empty()) {
    const auto& devices = topo.tree().devices();
    if (std::any_of(devices.begin(), devices.end(),
                    [](const PciDevice& d) { return d.is_virtfn; })) {
      out.text(
          "\nVF            PF            PF-NAME  INDEX  VID:DID    NUMA  GROUP  DRIVER      "
          "VGPU\n");
    }
    out.open_array("vfs");
    for (const auto& d : devices) {
      if (d.is_virtfn) {
        print_vf(out, topo, d);
      }
    }
    out.close_array();

    if (!topo.switches().empty()) {
      out.text("\nSWITCH  KIND      UPSTREAM      ROOT        DOWNSTREAM PORTS\n");
    }
    out.open_array("switches");
    for (const auto& s : topo.switches()) {
      print_switch(out, s);
    }
    out.close_array();

    if (!topo.nvswitches().empty()) {
      out.text("\nNVSWITCH   BDF           VID:DID    NUMA  GROUP  DRIVER\n");
    }
    out.open_array("nvswitches");
    for (const auto& n : topo.nvswitches()) {
      print_nvswitch(out, n);
    }
    out.close_array();
    if (!topo.nvswitches().empty()) {
      // NVLink between GPUs of a VM runs through these, not through PCIe:
      // a VM that gets the GPUs without them, or without the fabric set
      // up, has no NVLink (and CUDA waits for the fabric on such boards).
      out.text(
          "NVLink between GPUs in a VM needs these NVSwitches passed through with the GPUs and\n"
          "NVIDIA Fabric Manager running where they are (in the VM, or in a service VM that\n"
          "owns them); the matrix shows PCIe paths only.\n");
    }
  }

  if (!topo.pairs().empty()) {
    out.text("\nGPU     NIC     PATH  VERDICT\n");
  }
  out.open_array("pairs");
  for (const auto& p : topo.pairs()) {
    if (wanted(*p.gpu, filter) || wanted(*p.nic, filter)) {
      print_pair(out, topo, p, verbose);
    }
  }
  out.close_array();
}

}  // namespace kvmai::kvmaictl
