#include "check.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "cli.h"
#include "perf_pmus.h"
#include "tree_options.h"

namespace kvmaictl {
namespace {

constexpr int kRecommendedMrrs = 4096;

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const auto& x : v) {
    s += (s.empty() ? "" : sep) + x;
  }
  return s;
}

// "a, b, c and 4 more" for long device lists.
std::string list_some(const std::vector<std::string>& v, std::size_t most = 4) {
  if (v.size() <= most) {
    return join(v, ", ");
  }
  const std::vector<std::string> head(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(most));
  return join(head, ", ") + " and " + std::to_string(v.size() - most) + " more";
}

// setpci takes hex without "0x".
std::string hex4(unsigned v) {
  return to_hex(v, 4).substr(2);
}

// GPUs and NICs: what the checks below look at.
std::vector<const Named*> members(const Topology& t) {
  std::vector<const Named*> v;
  for (const auto& n : t.gpus()) {
    v.push_back(&n);
  }
  for (const auto& n : t.nics()) {
    v.push_back(&n);
  }
  return v;
}

struct Host {
  const TreeReader& sys;
  const TreeReader& proc;
  const Topology& topo;
};

CheckResult check_iommu(const Host& h) {
  const auto units = h.sys.list("class/iommu");
  if (units.empty()) {
    return {"iommu", Status::fail, "no IOMMU in /sys/class/iommu",
            "enable VT-d/AMD-Vi in firmware and boot with intel_iommu=on (or amd_iommu=on)"};
  }
  std::set<std::string> modes;
  for (const auto& g : h.sys.list("kernel/iommu_groups")) {
    if (const auto t = read_line(h.sys, "kernel/iommu_groups/" + g + "/type")) {
      modes.insert(*t);
    }
  }
  const std::vector<std::string> mode_list(modes.begin(), modes.end());
  return {"iommu", Status::pass,
          join(units, ", ") + " active, default domain " +
              (mode_list.empty() ? "unknown" : join(mode_list, "/")),
          ""};
}

CheckResult check_acs(const Host& h) {
  std::vector<std::string> redirected;
  std::vector<std::string> open;
  std::vector<std::string> unknown;
  std::map<std::string, std::uint16_t> fix_ports;  // port -> ctl with DT
  int below_switch = 0;
  for (const auto& p : h.topo.pairs()) {
    const auto c = p.path.path_class;
    if (c != PathClass::PIX && c != PathClass::PXB) {
      continue;
    }
    ++below_switch;
    const std::string name = p.gpu->name + "-" + p.nic->name;
    switch (p.path.verdict) {
      case Verdict::root_complex:
        redirected.push_back(name);
        for (const PciDevice* port : p.path.ports) {
          if (port->config.acs) {
            fix_ports[port->bdf] = port->config.acs->ctl | kAcsDT;
          }
        }
        break;
      case Verdict::unknown:
        unknown.push_back(name);
        break;
      case Verdict::direct:
        if (!p.path.ports_without_acs.empty()) {
          open.push_back(name);
        }
        break;
      default:
        break;
    }
  }
  if (below_switch == 0) {
    return {"acs", Status::pass, "no GPU/NIC pair shares a switch", ""};
  }
  if (!redirected.empty()) {
    std::vector<std::string> cmds;
    cmds.reserve(fix_ports.size());
    for (const auto& [port, ctl] : fix_ports) {
      cmds.push_back("setpci -s " + port + " ECAP_ACS+6.w=" + hex4(ctl));
    }
    return {
        "acs", Status::warn,
        std::to_string(redirected.size()) + " of " + std::to_string(below_switch) +
            " same-switch GPU/NIC pairs redirected to the root complex: " + list_some(redirected),
        "set ACS DT for translated P2P (lost on reset): " + list_some(cmds, 2)};
  }
  if (!unknown.empty()) {
    return {"acs", Status::warn, "ACS unreadable on the paths of " + list_some(unknown),
            "run kvmaictl as root"};
  }
  if (!open.empty()) {
    return {"acs", Status::warn, "P2P direct but ports lack ACS (no isolation): " + list_some(open),
            "give these devices to one VM only, or use ACS-capable switches"};
  }
  return {"acs", Status::pass,
          std::to_string(below_switch) + " same-switch GPU/NIC pairs route P2P below the switch",
          ""};
}

CheckResult check_ats(const Host& h) {
  std::vector<std::string> off;
  std::vector<std::string> absent;
  std::vector<std::string> unknown;
  for (const auto& n : h.topo.nics()) {
    const auto s = ats_state(*n.dev);
    if (s == "disabled") {
      off.push_back(n.name);
    } else if (s == "absent") {
      absent.push_back(n.name);
    } else if (s == "unknown") {
      unknown.push_back(n.name);
    }
  }
  if (h.topo.nics().empty()) {
    return {"ats", Status::warn, "no NICs found", ""};
  }
  if (!off.empty()) {
    return {"ats", Status::warn, "ATS capable but not enabled on " + list_some(off),
            "enable ATS in NIC firmware (mlxconfig -d <bdf> set ATS_ENABLED=true) and use an IOMMU "
            "with device-IOTLB"};
  }
  if (!unknown.empty()) {
    return {"ats", Status::warn, "ATS unreadable on " + list_some(unknown), "run kvmaictl as root"};
  }
  if (!absent.empty()) {
    return {"ats", Status::warn, "no ATS capability on " + list_some(absent),
            "use NICs with ATS for translated P2P"};
  }
  return {"ats", Status::pass, "ATS enabled on every NIC", ""};
}

CheckResult check_sriov(const Host& h) {
  std::vector<std::string> capable;
  std::vector<std::string> without;
  for (const auto& n : h.topo.nics()) {
    if (n.dev->sriov_totalvfs && *n.dev->sriov_totalvfs > 0) {
      capable.push_back(n.name + " (" + std::to_string(n.dev->sriov_numvfs.value_or(0)) + "/" +
                        std::to_string(*n.dev->sriov_totalvfs) + " VFs)");
    } else {
      without.push_back(n.name);
    }
  }
  if (capable.empty()) {
    return {"sriov", Status::warn, "no SR-IOV capable NIC",
            "enable SR-IOV in firmware (BIOS and NIC: mlxconfig -d <bdf> set SRIOV_EN=1)"};
  }
  if (!without.empty()) {
    return {"sriov", Status::warn,
            "SR-IOV on " + list_some(capable) + "; none on " + list_some(without),
            "enable SR-IOV in firmware for " + list_some(without)};
  }
  return {"sriov", Status::pass, "SR-IOV on " + list_some(capable),
          ""};  // VF count is a deployment choice
}

CheckResult check_mrrs(const Host& h) {
  std::vector<std::string> low;
  std::vector<std::string> cmds;
  std::vector<std::string> unknown;
  for (const auto* n : members(h.topo)) {
    const auto& pcie = n->dev->config.pcie;
    if (!pcie) {
      unknown.push_back(n->name);
      continue;
    }
    if (pcie->max_read_request < kRecommendedMrrs) {
      low.push_back(n->name + " " + std::to_string(pcie->max_read_request));
      const unsigned devctl = (pcie->devctl & ~0x7000U) | (5U << 12U);
      cmds.push_back("setpci -s " + n->dev->bdf + " CAP_EXP+8.w=" + hex4(devctl));
    }
  }
  if (!low.empty()) {
    return {"mrrs", Status::warn, "MaxReadReq below 4096: " + list_some(low),
            list_some(cmds, 2) + " (lost on reset; or set it in firmware)"};
  }
  if (!unknown.empty()) {
    return {"mrrs", Status::warn, "PCIe capability unreadable on " + list_some(unknown),
            "run kvmaictl as root"};
  }
  return {"mrrs", Status::pass, "MaxReadReq 4096 on every GPU and NIC", ""};
}

CheckResult check_mps(const Host& h) {
  std::vector<std::string> low;
  std::vector<std::string> values;
  for (const auto* n : members(h.topo)) {
    const auto& pcie = n->dev->config.pcie;
    if (!pcie) {
      continue;
    }
    // The usable MPS is the smallest supported along the path.
    int path_max = pcie->max_payload_supported;
    for (const auto& bdf : n->dev->parents) {
      const PciDevice* p = h.topo.tree().find(bdf);
      if (p != nullptr && p->config.pcie) {
        path_max = std::min(path_max, p->config.pcie->max_payload_supported);
      }
    }
    values.push_back(std::to_string(pcie->max_payload));
    if (pcie->max_payload < path_max) {
      low.push_back(n->name + " " + std::to_string(pcie->max_payload) + " of " +
                    std::to_string(path_max));
    }
  }
  if (values.empty()) {
    return {"mps", Status::warn, "PCIe capability unreadable", "run kvmaictl as root"};
  }
  if (!low.empty()) {
    return {"mps", Status::warn, "MaxPayload below what the path supports: " + list_some(low),
            "boot with pci=pcie_bus_perf"};
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return {"mps", Status::pass, "MaxPayload " + join(values, "/") + " (path maximum)", ""};
}

CheckResult check_link(const Host& h) {
  std::vector<std::string> degraded;
  for (const auto* n : members(h.topo)) {
    const PciDevice& d = *n->dev;
    std::vector<std::string> what;
    if (!d.current_link_speed.empty() && d.current_link_speed != d.max_link_speed) {
      what.push_back(d.current_link_speed + " of " + d.max_link_speed);
    }
    if (d.current_link_width && d.max_link_width && *d.current_link_width < *d.max_link_width) {
      what.push_back("x" + std::to_string(*d.current_link_width) + " of x" +
                     std::to_string(*d.max_link_width));
    }
    if (!what.empty()) {
      degraded.push_back(n->name + " " + join(what, ", "));
    }
  }
  if (!degraded.empty()) {
    return {"link", Status::warn,
            "degraded: " + list_some(degraded) + " (GPUs slow idle links; check under load)",
            "lspci -vv -s <bdf> | grep -E 'LnkCap|LnkSta'; reseat the card or fix slot "
            "bifurcation"};
  }
  return {"link", Status::pass, "every GPU and NIC link at full speed and width", ""};
}

CheckResult check_hugepages(const Host& h) {
  std::vector<std::string> have;
  bool gig = false;
  for (const auto& dir : h.sys.list("kernel/mm/hugepages")) {
    const auto n = read_int(h.sys, "kernel/mm/hugepages/" + dir + "/nr_hugepages", 10);
    if (n && *n > 0) {
      const std::string size = dir.substr(dir.find('-') + 1);
      have.push_back(std::to_string(*n) + " x " + size);
      gig = gig || size == "1048576kB";
    }
  }
  if (have.empty()) {
    return {"hugepages", Status::fail, "no huge pages reserved",
            "boot with default_hugepagesz=1G hugepagesz=1G hugepages=<N>"};
  }
  if (!gig) {
    return {"hugepages", Status::warn, join(have, ", ") + " reserved, no 1G pages",
            "boot with default_hugepagesz=1G hugepagesz=1G hugepages=<N>"};
  }
  return {"hugepages", Status::pass, join(have, ", ") + " reserved", ""};
}

CheckResult check_numa(const Host& h) {
  std::vector<std::string> unknown;
  std::set<int> nodes;
  for (const auto* n : members(h.topo)) {
    if (n->dev->numa_node) {
      nodes.insert(*n->dev->numa_node);
    } else {
      unknown.push_back(n->name);
    }
  }
  if (!unknown.empty()) {
    return {"numa", Status::warn, "NUMA node unknown for " + list_some(unknown),
            "enable NUMA (ACPI SRAT) in firmware; on a one-socket host this is harmless"};
  }
  return {"numa", Status::pass,
          "every GPU and NIC has a NUMA node (" + std::to_string(nodes.size()) + " nodes)", ""};
}

CheckResult check_vfio(const Host& h) {
  std::vector<std::string> missing;
  for (const auto* m : {"vfio_pci", "vfio_iommu_type1"}) {
    if (!h.sys.exists(std::string("module/") + m)) {
      missing.emplace_back(m);
    }
  }
  if (!missing.empty()) {
    return {"vfio", Status::fail, join(missing, ", ") + " not loaded", "modprobe vfio-pci"};
  }
  return {"vfio", Status::pass, "vfio_pci, vfio_iommu_type1 loaded", ""};
}

// A PMU the kernel drives: without one (a VM without vPMU, or TCG) there
// is nothing to give guests, mediated or not.
CheckResult check_core_pmu(const Host& h) {
  const auto pmus = read_perf_pmus(h.sys);
  if (pmus.core.empty()) {
    return {"core-pmu", Status::warn, "none (no PMU: emulated?)",
            "on a VM host, give the VM a vPMU (QEMU -cpu host,pmu=on); on bare metal, check that "
            "firmware does not hide the PMU"};
  }
  return {"core-pmu", Status::pass,
          join(pmus.core, ", ") + (pmus.core_model ? " (" + *pmus.core_model + ")" : ""), ""};
}

CheckResult check_pmu(const Host& h) {
  const auto m = read_mediated_pmu(h.sys);
  switch (m.state) {
    case MediatedPmu::State::kvm_not_loaded:
      return {"pmu", Status::fail, "neither kvm_intel nor kvm_amd loaded", "modprobe kvm_intel"};
    case MediatedPmu::State::unsupported:
      return {"pmu", Status::warn, m.module + " has no enable_mediated_pmu (kernel before 7.0)",
              "run a kernel with mediated vPMU (Linux 7.0+)"};
    case MediatedPmu::State::enabled:
      return {"pmu", Status::pass, m.module + ".enable_mediated_pmu=" + *m.value, ""};
    case MediatedPmu::State::disabled:
      break;
  }
  const std::string dash = m.module == "kvm_intel" ? "kvm-intel" : "kvm-amd";
  std::string fix = "modprobe -r " + m.module;
  fix += " && modprobe " + m.module + " enable_mediated_pmu=1 (or boot with ";
  fix += dash + ".enable_mediated_pmu=1)";
  return {"pmu", Status::warn, m.module + ".enable_mediated_pmu=" + *m.value + " (emulated vPMU)",
          fix};
}

CheckResult check_nmi_watchdog(const Host& h) {
  const auto v = read_line(h.proc, "sys/kernel/nmi_watchdog");
  if (!v) {
    return {"nmi-watchdog", Status::pass, "no NMI watchdog", ""};
  }
  if (*v != "0") {
    return {"nmi-watchdog", Status::warn,
            "nmi_watchdog=" + *v + ": its host-wide perf event makes mediated-PMU VMs fail (EBUSY)",
            "sysctl kernel.nmi_watchdog=0 (or boot with nmi_watchdog=0)"};
  }
  return {"nmi-watchdog", Status::pass, "nmi_watchdog=0", ""};
}

// Uncore units are what kvmai passes through; the kernel lists one PMU per
// box ("uncore_imc_0".."uncore_imc_7"), so the evidence counts them per kind.
CheckResult check_uncore_pmu(const Host& h) {
  const auto pmus = read_perf_pmus(h.sys);
  if (pmus.uncore.empty()) {
    if (pmus.core.empty()) {
      return {"uncore-pmu", Status::warn, "none (no PMU: emulated?)", "see core-pmu"};
    }
    std::string driver = "intel_uncore (or amd_uncore)";
    if (h.sys.exists("module/kvm_amd")) {
      driver = "amd_uncore";
    } else if (h.sys.exists("module/kvm_intel")) {
      driver = "intel_uncore";
    }
    return {"uncore-pmu", Status::warn, "no uncore PMUs: no uncore counters to give VMs",
            "modprobe " + driver};
  }
  std::map<std::string, int> kinds;
  for (const auto& name : pmus.uncore) {
    const auto cut = name.find_last_not_of("0123456789");
    const bool numbered = cut + 1 < name.size() && name[cut] == '_';
    ++kinds[numbered ? name.substr(0, cut) : name];
  }
  std::vector<std::string> parts;
  parts.reserve(kinds.size());
  for (const auto& [kind, n] : kinds) {
    parts.push_back(n > 1 ? kind + " x" + std::to_string(n) : kind);
  }
  return {"uncore-pmu", Status::pass,
          std::to_string(pmus.uncore.size()) + " uncore PMUs: " + list_some(parts, 6), ""};
}

CheckResult check_kvmai(const Host& h) {
  if (!h.sys.exists("module/kvmai")) {
    return {"kvmai", Status::fail, "kvmai module not loaded", "modprobe kvmai"};
  }
  const auto v = read_line(h.sys, "module/kvmai/version");
  return {"kvmai", Status::pass, "kvmai loaded" + (v ? " (" + *v + ")" : std::string()), ""};
}

using CheckFn = CheckResult (*)(const Host&);

const std::vector<std::pair<std::string, CheckFn>>& table() {
  static const std::vector<std::pair<std::string, CheckFn>> t{
      {"iommu", check_iommu},
      {"acs", check_acs},
      {"ats", check_ats},
      {"sriov", check_sriov},
      {"mrrs", check_mrrs},
      {"mps", check_mps},
      {"link", check_link},
      {"hugepages", check_hugepages},
      {"numa", check_numa},
      {"vfio", check_vfio},
      {"core-pmu", check_core_pmu},
      {"pmu", check_pmu},
      {"nmi-watchdog", check_nmi_watchdog},
      {"uncore-pmu", check_uncore_pmu},
      {"kvmai", check_kvmai},
  };
  return t;
}

void show(const Args& args, Context& ctx) {
  TreeRoots roots;
  std::string only = parse_tree_args(args, roots, true);
  std::vector<std::string_view> ids(check_ids().begin(), check_ids().end());
  if (!only.empty()) {
    only = std::string(ids[match_word(only, ids, "check")]);
  }

  const auto sys = open_sysfs(roots);
  const auto proc = open_procfs(roots);
  const Topology topo(PciTree::read(*sys));
  std::map<Status, int> count;
  Printer& out = ctx.out;
  out.open_array("checks");
  for (const auto& r : run_checks(*sys, *proc, topo)) {
    if (!only.empty() && r.id != only) {
      continue;
    }
    ++count[r.status];
    std::string label = status_name(r.status);
    std::transform(label.begin(), label.end(), label.begin(), ::toupper);
    out.open_object();
    out.print_string("id", r.id, {label + "  ", 14});
    out.print_string("status", status_name(r.status), {}, Show::json_only);
    out.print_string("evidence", r.evidence, {});
    out.print_opt_string("fix", r.fix.empty() ? std::nullopt : std::optional(r.fix),
                         {"\n      fix: "}, "", r.fix.empty() ? Show::json_only : Show::any);
    out.close_object();
    out.newline();
  }
  out.close_array();
  out.open_object("summary");
  out.print_int("pass", count[Status::pass], {"\n", 0});
  out.print_int("warn", count[Status::warn], {" pass, "});
  out.print_int("fail", count[Status::fail], {" warn, "});
  out.text(" fail\n");
  out.close_object();
  if (count[Status::fail] > 0) {
    throw OpError(std::to_string(count[Status::fail]) + " check(s) failed");
  }
}

const ObjectRegistrar kRegistrar({
    .name = "check",
    .summary = "host readiness for GPU/NIC passthrough (reads sysfs, procfs)",
    .commands = {{.name = "show",
                  .usage = "[ NAME ] [ --sysfs-root DIR ] [ --procfs-root DIR ]",
                  .summary = "run every check, or the one called NAME",
                  .run = show}},
    .default_command = "show",
});

}  // namespace

std::string status_name(Status s) {
  switch (s) {
    case Status::pass:
      return "pass";
    case Status::warn:
      return "warn";
    case Status::fail:
      return "fail";
  }
  return "?";
}

const std::vector<std::string>& check_ids() {
  static const std::vector<std::string> ids = [] {
    std::vector<std::string> v;
    for (const auto& [id, fn] : table()) {
      v.push_back(id);
    }
    return v;
  }();
  return ids;
}

std::vector<CheckResult> run_checks(const TreeReader& sys, const TreeReader& proc,
                                    const Topology& topo) {
  const Host h{sys, proc, topo};
  std::vector<CheckResult> results;
  for (const auto& [id, fn] : table()) {
    results.push_back(fn(h));
  }
  return results;
}

}  // namespace kvmaictl
