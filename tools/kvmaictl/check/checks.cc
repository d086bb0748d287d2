#include "check/checks.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "common/format.h"
#include "common/names.h"
#include "model/perf_pmus.h"

namespace kvmai::kvmaictl {
namespace {

constexpr int kRecommendedMrrs = 4096;

using check_util::list_some;
using check_util::members;

using Host = CheckInput;

using check_util::unreadable_fix;

// "1 VF", "2 VFs".
std::string count_of(std::size_t n, const std::string& noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

// "2 KiB", "1 MiB", "16 GiB": sizes of BARs, which are powers of two.
std::string size_text(std::uint64_t bytes) {
  static constexpr std::array<std::pair<std::uint64_t, const char*>, 3> kUnits{
      {{1ULL << 30U, "GiB"}, {1ULL << 20U, "MiB"}, {1ULL << 10U, "KiB"}}};
  for (const auto& [scale, unit] : kUnits) {
    if (bytes >= scale && bytes % scale == 0) {
      return std::to_string(bytes / scale) + " " + unit;
    }
  }
  return std::to_string(bytes) + " B";
}

// A hex attribute as sysfs prints registers ("d2008c40660462", with or
// without 0x); read_int's signed range would cut off bit 63.
std::optional<std::uint64_t> read_hex(const TreeReader& r, const std::string& rel) {
  const auto line = read_line(r, rel);
  if (!line) {
    return std::nullopt;
  }
  std::string_view v = *line;
  if (v.starts_with("0x") || v.starts_with("0X")) {
    v.remove_prefix(2);
  }
  std::uint64_t x = 0;
  const auto* const end = v.data() + v.size();
  const auto [ptr, ec] = std::from_chars(v.data(), end, x, 16);
  if (v.empty() || ec != std::errc() || ptr != end) {
    return std::nullopt;
  }
  return x;
}

// The options of kernel parameter `name` on the command line
// ("intel_iommu=on,sp_off" gives on and sp_off), from every occurrence.
std::set<std::string> cmdline_options(const TreeReader* proc, const std::string& name) {
  std::set<std::string> options;
  if (proc == nullptr) {
    return options;
  }
  const auto line = read_line(*proc, "cmdline");
  if (!line) {
    return options;
  }
  std::istringstream words(*line);
  const std::string prefix = name + "=";
  for (std::string word; words >> word;) {
    if (word.starts_with(prefix)) {
      std::istringstream list(word.substr(prefix.size()));
      for (std::string option; std::getline(list, option, ',');) {
        options.insert(option);
      }
    }
  }
  return options;
}

CheckResult check_iommu(const Host& h) {
  const auto units = h.sys.list("class/iommu");
  if (units.empty()) {
    // Linux turns AMD-Vi on by itself when firmware describes it (IVRS);
    // VT-d needs intel_iommu=on unless the kernel was built with it on.
    const char* fix =
        h.machine.vendor == CpuVendor::amd
            ? "enable the IOMMU (AMD-Vi/IOMMU) in firmware; Linux uses it unless booted with "
              "amd_iommu=off"
        : h.machine.vendor == CpuVendor::intel
            ? "enable VT-d in firmware and boot with intel_iommu=on"
            : "enable the IOMMU in firmware (VT-d: also boot with intel_iommu=on)";
    return {"iommu", Status::fail, "no IOMMU in /sys/class/iommu", fix};
  }
  std::set<std::string> modes;
  for (const auto& g : h.sys.list("kernel/iommu_groups")) {
    if (const auto t = read_line(h.sys, "kernel/iommu_groups/" + g + "/type")) {
      modes.insert(*t);
    }
  }
  const std::vector<std::string> mode_list(modes.begin(), modes.end());
  return {"iommu", Status::pass,
          fmt::format("{} active, default domain {}", join(units, ", "),
                      mode_list.empty() ? "unknown" : join(mode_list, "/")),
          ""};
}

// VT-d registers as sysfs shows them (intel-iommu/cap, ecap; the kernel's
// decoding is in drivers/iommu/intel/iommu.h). Capability: SLLPS, bits
// 34-37, the second-stage large pages (cap_super_page_val: bit 34 2 MiB,
// bit 35 1 GiB); FL1GP, bit 56, 1 GiB first-stage pages
// (cap_fl1gp_support). Extended capability: SMTS, bit 43, scalable mode;
// FLTS, bit 47, first-stage translation (ecap_smts, ecap_flts).
constexpr unsigned kSllpsShift = 34;
constexpr std::uint64_t kCapSllps2M = 1ULL << kSllpsShift;
constexpr std::uint64_t kCapSllps1G = 1ULL << (kSllpsShift + 1);
constexpr std::uint64_t kCapFl1gp = 1ULL << 56U;
constexpr std::uint64_t kEcapSmts = 1ULL << 43U;
constexpr std::uint64_t kEcapFlts = 1ULL << 47U;

// The largest page an IOMMU unit maps for a VM's DMA.
enum class IoPage { small, two_m, one_g, unknown };

struct UnitPages {
  IoPage page = IoPage::unknown;
  std::string note;  // why, for anything short of 1G
};

UnitPages intel_unit_pages(const Host& h, const std::string& unit, bool sp_off) {
  const std::string dir = "class/iommu/" + unit + "/intel-iommu/";
  const auto cap = read_hex(h.sys, dir + "cap");
  if (!cap) {
    return {IoPage::unknown, "intel-iommu/cap unreadable"};
  }
  if (sp_off) {
    return {IoPage::small, "intel_iommu=sp_off"};
  }
  // In scalable mode the kernel prefers first-stage tables, which map 2M
  // always and 1G only with FL1GP; whether it runs in scalable mode depends
  // on its build and on sm_on/sm_off, which sysfs does not say. So 1G
  // counts only when every stage the unit offers has it.
  const auto ecap = read_hex(h.sys, dir + "ecap");
  const bool first_stage = ecap && (*ecap & kEcapSmts) != 0 && (*ecap & kEcapFlts) != 0;
  const bool second_1g = (*cap & kCapSllps1G) != 0;
  const std::string sllps = "SLLPS " + to_hex((*cap >> kSllpsShift) & 0xFU);
  if (second_1g && (!first_stage || (*cap & kCapFl1gp) != 0)) {
    return {IoPage::one_g, ""};
  }
  if ((*cap & kCapSllps2M) != 0) {
    return {IoPage::two_m, second_1g ? "no first-stage 1G, FL1GP" : sllps};
  }
  return {IoPage::small, sllps};
}

// AMD-Vi: the host (v1) page table can end a walk at any level, which the
// architecture gives every IOMMU, so no capability bit gates large pages
// and the unit's cap and features files are not read. The driver maps
// every power-of-two size from 4K but 512G (AMD_IOMMU_PGSIZES in
// drivers/iommu/amd/amd_iommu_types.h) unless amd_iommu=nohugepages cuts v1
// to 4K; the guest (v2) table that amd_iommu=pgtbl_v2 selects maps 2M and
// 1G (x86-64 format).
UnitPages amd_unit_pages(const std::set<std::string>& options) {
  if (options.contains("nohugepages") && !options.contains("pgtbl_v2")) {
    return {IoPage::small, "amd_iommu=nohugepages"};
  }
  return {IoPage::one_g, ""};
}

// Large I/O pages: a VM's memory is mapped for its devices' DMA in its
// IOMMU domain. With 4K entries, an IOTLB entry covers 512 times less than
// with 2M ones, so an RDMA NIC reaching across registered memory misses it
// and walks the page tables that much more often.
CheckResult check_iommu_pages(const Host& h) {
  const auto units = h.sys.list("class/iommu");
  if (units.empty()) {
    return {"iommu-pages", Status::fail, "no IOMMU in /sys/class/iommu", "see iommu"};
  }
  const auto intel = cmdline_options(h.proc, "intel_iommu");
  const auto amd = cmdline_options(h.proc, "amd_iommu");
  std::map<IoPage, std::vector<std::string>> by_page;
  bool fl1gp_only = false;  // a unit lacks 1G in the first stage only
  for (const auto& unit : units) {
    UnitPages p;
    if (h.sys.exists("class/iommu/" + unit + "/intel-iommu")) {
      p = intel_unit_pages(h, unit, intel.contains("sp_off"));
    } else if (h.sys.exists("class/iommu/" + unit + "/amd-iommu")) {
      p = amd_unit_pages(amd);
    } else {
      p = {IoPage::unknown, "neither VT-d nor AMD-Vi"};
    }
    fl1gp_only = fl1gp_only || p.note.ends_with("FL1GP");
    by_page[p.page].push_back(p.note.empty() ? unit : fmt::format("{} ({})", unit, p.note));
  }
  const auto& gig = by_page[IoPage::one_g];
  if (const auto& small = by_page[IoPage::small]; !small.empty()) {
    std::string fix = "none in software: use an IOMMU that maps 2M pages (VT-d SLLPS)";
    if (intel.contains("sp_off")) {
      fix = "boot without intel_iommu=sp_off";
    } else if (amd.contains("nohugepages")) {
      fix = "boot without amd_iommu=nohugepages";
    }
    return {"iommu-pages", Status::fail, "4K I/O pages only on " + list_some(small), fix};
  }
  if (const auto& two_m = by_page[IoPage::two_m]; !two_m.empty()) {
    return {"iommu-pages", Status::warn,
            "2M but no 1G I/O pages on " + list_some(two_m) +
                (gig.empty() ? "" : "; 1G on " + list_some(gig)),
            fl1gp_only ? "boot with intel_iommu=sm_off (second-stage tables map 1G)"
                       : "hardware limit: prefer devices behind units with 1G pages for VMs "
                         "that pin much memory"};
  }
  if (const auto& unknown = by_page[IoPage::unknown]; !unknown.empty()) {
    return {"iommu-pages", Status::warn, "I/O page sizes unknown on " + list_some(unknown), ""};
  }
  return {"iommu-pages", Status::pass, "2M and 1G I/O pages on " + list_some(gig), ""};
}

// Pairs whose devices one enabled kvmai group gives one VM.
bool in_one_group(const Host& h, const PciDevice& a, const PciDevice& b) {
  return std::any_of(h.p2p_groups.begin(), h.p2p_groups.end(),
                     [&](const auto& g) { return g.contains(a.bdf) && g.contains(b.bdf); });
}

// Every GPU/NIC and GPU/GPU pair: peer DMA between two GPUs of different
// owners is as much a breach as between a GPU and a NIC.
struct Peers {
  std::string name;  // "gpu4-nic6"
  const PciDevice* a = nullptr;
  const PciDevice* b = nullptr;
  P2pPath path;
};

std::vector<Peers> all_peers(const Topology& t) {
  std::vector<Peers> v;
  for (const auto& p : t.pairs()) {
    v.push_back({p.gpu->name + "-" + p.nic->name, p.gpu->dev, p.nic->dev, p.path});
  }
  const auto& gpus = t.gpus();
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    for (std::size_t j = i + 1; j < gpus.size(); ++j) {
      v.push_back({gpus[i].name + "-" + gpus[j].name, gpus[i].dev, gpus[j].dev,
                   classify(t.tree(), *gpus[i].dev, *gpus[j].dev)});
    }
  }
  return v;
}

// ACS as isolation first, then as performance. A port that lets requests
// between devices of different IOMMU groups through unchecked gives DMA
// from one owner's device to another's with no IOMMU in the way: a
// security failure, unless one kvmai group relaxed it for one VM. Redirect
// on is the safe idle state; a VM's P2P path is relaxed per VM by a kvmai
// group, and undone when the VM stops, never host-wide.
CheckResult check_acs(const Host& h) {
  std::vector<std::string> bypass;
  std::vector<std::string> translated;
  std::vector<std::string> relaxed;  // by a kvmai group, for one VM
  std::vector<std::string> redirected;
  std::vector<std::string> open;
  std::vector<std::string> unknown;
  std::vector<const PciDevice*> unknown_ports;
  std::set<std::string> bypass_ports;
  int below_switch = 0;
  bool no_iommu = false;
  for (const auto& p : all_peers(h.topo)) {
    const std::string& name = p.name;
    const bool grouped = in_one_group(h, *p.a, *p.b);
    switch (p.path.isolation) {
      case Isolation::bypass:
        (grouped ? relaxed : bypass).push_back(name);
        if (!grouped) {
          bypass_ports.insert(p.path.unchecked.begin(), p.path.unchecked.end());
        }
        break;
      case Isolation::translated:
        (grouped ? relaxed : translated).push_back(name);
        break;
      case Isolation::no_iommu:
        no_iommu = true;
        break;
      default:
        break;
    }
    const auto c = p.path.path_class;
    if (c != PathClass::PIX && c != PathClass::PXB) {
      continue;
    }
    ++below_switch;
    switch (p.path.verdict) {
      case Verdict::root_complex:
        redirected.push_back(name);
        break;
      case Verdict::unknown:
        unknown.push_back(name);
        for (const PciDevice* port : p.path.ports) {
          if (port->config.acs_presence == Presence::unknown) {
            unknown_ports.push_back(port);
          }
        }
        break;
      case Verdict::direct:
        if (!p.path.ports_without_acs.empty() && p.path.isolation != Isolation::bypass) {
          open.push_back(name);
        }
        break;
      default:
        break;
    }
  }
  const bool kvmai = h.sys.exists("module/kvmai");
  const std::string group_fix =
      kvmai ? "restore the ports' ACS (reboot, or rebind the port driver), then give each VM's "
              "GPUs and NICs a kvmai P2P group (kvmaictl group add, or the libvirt metadata)"
            : "restore the ports' ACS (reboot), then use kvmai P2P groups: they relax only one "
              "VM's ports, and undo it when the VM stops";
  if (!bypass.empty()) {
    return {"acs", Status::fail,
            fmt::format(
                "peer DMA between different IOMMU groups bypasses the IOMMU: {} ({})",
                list_some(bypass),
                list_some(std::vector<std::string>(bypass_ports.begin(), bypass_ports.end()), 2)),
            group_fix};
  }
  if (!translated.empty()) {
    return {"acs", Status::warn,
            "translated P2P (ACS DT) between different IOMMU groups, trusting the devices' ATS: " +
                list_some(translated),
            "give such devices to one VM only: a kvmai P2P group sets DT on one VM's ports and "
            "clears it when the VM stops"};
  }
  if (no_iommu) {
    return {"acs", Status::warn, "no IOMMU: nothing isolates GPUs and NICs from each other",
            "see iommu"};
  }
  const std::string mine =
      relaxed.empty() ? "" : fmt::format("; relaxed for one VM by kvmai: {}", list_some(relaxed));
  if (!unknown.empty()) {
    return {"acs", Status::warn, "ACS unreadable on the paths of " + list_some(unknown),
            unreadable_fix(unknown_ports)};
  }
  if (!open.empty()) {
    return {"acs", Status::warn,
            "P2P direct but ports lack ACS (one IOMMU group, no isolation): " + list_some(open),
            "give these devices to one VM only, or use ACS-capable switches"};
  }
  if (below_switch == 0) {
    return {"acs", Status::pass, "no GPU/NIC or GPU/GPU pair shares a switch" + mine, ""};
  }
  const std::string evidence = fmt::format(
      "{} same-switch GPU/NIC and GPU/GPU pairs, {} isolated with P2P through the root "
      "complex",
      below_switch, redirected.size());
  if (!redirected.empty() && !kvmai) {
    return {"acs", Status::warn, evidence + mine,
            "load kvmai and give each VM's GPUs and NICs a P2P group (kvmaictl group add, or "
            "the libvirt metadata): direct P2P for that VM only"};
  }
  return {"acs", Status::pass,
          evidence + (redirected.empty() ? "" : " until a kvmai group relaxes a VM's path") + mine,
          ""};
}

// VT-d's extended capability DT (bit 2): the unit serves device TLBs
// (ecap_dev_iotlb_support in drivers/iommu/intel/iommu.h).
constexpr std::uint64_t kEcapDeviceTlb = 1ULL << 2U;

// Why the IOMMU driver left a capable device's ATS off. Linux enables ATS
// itself, when it attaches a device to a translating domain of a unit that
// serves device TLBs (VT-d: not in identity domains); firmware settings
// only decide whether a device offers the capability at all.
std::string ats_off_cause(const Host& h, const PciDevice& d) {
  if (h.sys.list("class/iommu").empty()) {
    return "no IOMMU, which is what enables ATS";
  }
  for (const auto& unit : h.sys.list("class/iommu")) {
    const auto ecap = read_hex(h.sys, "class/iommu/" + unit + "/intel-iommu/ecap");
    if (ecap && (*ecap & kEcapDeviceTlb) == 0) {
      return unit + " has no Device-TLB support (ecap DT)";
    }
  }
  if (d.iommu_group_type == "identity" && h.sys.exists("class/iommu") &&
      h.machine.vendor != CpuVendor::amd) {
    return fmt::format("IOMMU group {} is an identity domain, where VT-d keeps ATS off",
                       d.iommu_group.value_or(-1));
  }
  return "";
}

CheckResult check_ats(const Host& h) {
  std::vector<std::string> off;
  std::set<std::string> causes;
  std::vector<std::string> absent;
  std::vector<std::string> unknown;
  std::vector<const PciDevice*> unknown_devs;
  bool cx_absent = false;
  for (const auto* n : members(h.topo)) {
    const auto s = ats_state(*n->dev);
    if (s == "disabled") {
      off.push_back(n->name);
      if (auto c = ats_off_cause(h, *n->dev); !c.empty()) {
        causes.insert(std::move(c));
      }
    } else if (s == "absent") {
      absent.push_back(n->name);
      cx_absent = cx_absent || (n->dev->is_nic() && n->dev->vendor == 0x15b3);
    } else if (s == "unknown") {
      unknown.push_back(n->name);
      unknown_devs.push_back(n->dev);
    }
  }
  if (members(h.topo).empty()) {
    return {"ats", Status::warn, "no GPUs or NICs found", ""};
  }
  if (!off.empty()) {
    const std::vector<std::string> why(causes.begin(), causes.end());
    return {"ats", Status::warn,
            "ATS capable but not enabled on " + list_some(off) +
                ": translated P2P groups with them are refused",
            why.empty() ? "the IOMMU driver enables ATS when it attaches a device to a translating "
                          "domain; see the kernel log for ATS errors, and whether the device sits "
                          "behind an external-facing (untrusted) port"
                        : join(why, "; ")};
  }
  if (!unknown.empty()) {
    return {"ats", Status::warn, "ATS unreadable on " + list_some(unknown),
            unreadable_fix(unknown_devs)};
  }
  if (!absent.empty()) {
    return {"ats", Status::warn, "no ATS capability on " + list_some(absent),
            cx_absent ? "ConnectX offers ATS only with ATS_ENABLED=true in its firmware "
                        "(mlxconfig); other devices: use ones with ATS for translated P2P"
                      : "use devices with ATS for translated P2P"};
  }
  return {"ats", Status::pass, "ATS enabled on every GPU and NIC", ""};
}

CheckResult check_sriov(const Host& h) {
  std::vector<std::string> capable;
  std::vector<std::string> without;
  for (const auto& n : h.topo.nics()) {
    if (n.dev->sriov_totalvfs && *n.dev->sriov_totalvfs > 0) {
      capable.push_back(fmt::format("{} ({}/{} VFs)", n.name, n.dev->sriov_numvfs.value_or(0),
                                    *n.dev->sriov_totalvfs));
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
            fmt::format("SR-IOV on {}; none on {}", list_some(capable), list_some(without)),
            "enable SR-IOV in firmware for " + list_some(without)};
  }
  return {"sriov", Status::pass, "SR-IOV on " + list_some(capable),
          ""};  // VF count is a deployment choice
}

constexpr std::uint64_t kPage = 4096;
// IORESOURCE_MEM in the flags of a sysfs `resource` line
// (include/linux/ioport.h).
constexpr std::uint64_t kIoresourceMem = 0x200;
// `resource` lines 0-5 are BARs 0-5; after them come the ROM, a PF's VF
// BAR regions (each VF lists its own slice, so they are no BARs of the
// PF's) and a bridge's windows.
constexpr int kBarLines = 6;

struct Bar {
  const PciDevice* dev = nullptr;
  int index = 0;
  std::uint64_t start = 0;
  std::uint64_t end = 0;  // inclusive, as sysfs prints it

  std::uint64_t size() const { return end - start + 1; }
  bool shares_page_with(const Bar& o) const {
    return start / kPage <= o.end / kPage && o.start / kPage <= end / kPage;
  }
  std::string name() const { return dev->bdf + " BAR " + std::to_string(index); }
};

// A function's assigned memory BARs from its `resource` file, "start end
// flags" in hex per line; nullopt when unreadable. I/O BARs, unassigned
// ones and the upper halves of 64-bit BARs (zero lines) are left out.
std::optional<std::vector<Bar>> memory_bars(const TreeReader& sys, const PciDevice& d) {
  const auto text = sys.read(d.sysfs_path + "/resource");
  if (!text) {
    return std::nullopt;
  }
  std::istringstream lines(*text);
  std::vector<Bar> bars;
  std::string line;
  for (int i = 0; i < kBarLines && std::getline(lines, line); ++i) {
    std::istringstream fields(line);
    std::uint64_t start = 0;
    std::uint64_t end = 0;
    std::uint64_t flags = 0;
    if (!(fields >> std::hex >> start >> end >> flags)) {
      return std::nullopt;
    }
    if ((flags & kIoresourceMem) != 0 && start != 0 && end > start) {
      bars.push_back({&d, i, start, end});
    }
  }
  return bars;
}

// The BARs of functions meant for a guest (every SR-IOV VF, and NICs bound
// to vfio-pci) must each be whole pages of their own: vfio-pci lets QEMU
// map a BAR into the guest, so the guest rings doorbells (an RDMA NIC's
// UAR pages) without a VM exit, only when the BAR starts on a page; it
// maps a BAR below a page only by reserving the rest of that page, which
// fails when another BAR sits there (vfio_pci_probe_mmaps). Every other
// access traps to QEMU.
CheckResult check_vf_bars(const Host& h) {
  std::vector<Bar> all;  // every function's, to find shared pages
  std::set<const PciDevice*> guest;
  std::vector<std::string> unreadable;
  std::size_t vfs = 0;
  for (const auto& d : h.topo.tree().devices()) {
    const bool for_guest = d.is_virtfn || (d.is_nic() && d.bound_to_vfio());
    const auto bars = memory_bars(h.sys, d);
    if (for_guest) {
      vfs += d.is_virtfn ? 1 : 0;
      if (!bars) {
        unreadable.push_back(d.bdf);
        continue;
      }
      guest.insert(&d);
    }
    if (bars) {
      all.insert(all.end(), bars->begin(), bars->end());
    }
  }
  const std::size_t nics = guest.size() + unreadable.size() - vfs;
  if (vfs + nics == 0) {
    return {"vf-bars", Status::pass, "no VFs or vfio NICs", ""};
  }

  std::vector<std::string> bad;
  std::vector<std::string> small;
  std::set<std::string> realign;  // non-VFs with a bad or small BAR
  bool vf_fix = false;
  std::size_t checked = 0;
  for (const Bar& b : all) {
    if (!guest.contains(b.dev)) {
      continue;
    }
    ++checked;
    std::vector<std::string> why;
    if (b.start % kPage != 0) {
      why.emplace_back("not page-aligned");
    }
    std::vector<std::string> sharers;
    for (const Bar& o : all) {
      if (&o != &b && b.shares_page_with(o)) {
        sharers.push_back(o.name());
      }
    }
    if (!sharers.empty()) {
      why.push_back("shares a page with " + list_some(sharers, 2));
    }
    const std::string what =
        fmt::format("{} ({} at {})", b.name(), size_text(b.size()), to_hex(b.start));
    if (why.empty() && b.size() >= kPage) {
      continue;
    }
    if (why.empty()) {
      small.push_back(what);
    } else {
      bad.push_back(what + ": " + join(why, ", "));
    }
    if (b.dev->is_virtfn) {
      vf_fix = true;
    } else {
      realign.insert(b.dev->bdf);
    }
  }

  // pci=resource_alignment without an order aligns to a page and grows
  // smaller BARs to one, so no other BAR can share it. VF BARs are slices
  // of the PF's SR-IOV BAR, which the device sizes.
  std::vector<std::string> fixes;
  if (!realign.empty()) {
    fixes.push_back("boot with pci=resource_alignment=" +
                    join(std::vector<std::string>(realign.begin(), realign.end()), ";") +
                    " (each BAR a page of its own)");
  }
  if (vf_fix) {
    fixes.emplace_back("VF BARs are slices of the PF's SR-IOV BAR: update the NIC firmware");
  }
  if (!bad.empty()) {
    return {"vf-bars", Status::fail, list_some(bad, 3), join(fixes, "; ")};
  }
  if (!small.empty()) {
    return {
        "vf-bars", Status::warn,
        "below a page (mapped only while the rest of the page stays free): " + list_some(small, 3),
        join(fixes, "; ")};
  }
  if (!unreadable.empty()) {
    return {"vf-bars", Status::warn, "no readable sysfs resource file for " + list_some(unreadable),
            ""};
  }
  std::vector<std::string> whose;
  if (vfs > 0) {
    whose.push_back(count_of(vfs, "VF"));
  }
  if (nics > 0) {
    whose.push_back(count_of(nics, "vfio NIC"));
  }
  return {"vf-bars", Status::pass,
          fmt::format("{} of {}: page-aligned, whole pages, none sharing a page",
                      count_of(checked, "memory BAR"), join(whose, " and ")),
          ""};
}

// The kernel and drivers own Device Control: a write behind them is lost
// at the next reset, and pci=pcie_bus_perf lowers MRRS to MPS.
CheckResult check_mrrs(const Host& h) {
  return check_util::mrrs_result(check_util::scan_mrrs(h.topo),
                                 "set PCIe Max Read Request 4096 in firmware setup (and boot "
                                 "without pci=pcie_bus_perf)");
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
      low.push_back(fmt::format("{} {} of {}", n->name, pcie->max_payload, path_max));
    }
  }
  if (values.empty()) {
    std::vector<const PciDevice*> devs;
    for (const auto* n : members(h.topo)) {
      devs.push_back(n->dev);
    }
    if (std::all_of(devs.begin(), devs.end(),
                    [](const PciDevice* d) { return check_util::pcie_absent(*d); })) {
      return {"mps", Status::pass, "no PCIe GPU or NIC", ""};
    }
    return {"mps", Status::warn, "PCIe capability unreadable", unreadable_fix(devs)};
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
      what.push_back(fmt::format("x{} of x{}", *d.current_link_width, *d.max_link_width));
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

// 1G pages on each NUMA node that holds a GPU or NIC. A VM's memory is
// bound to its devices' nodes (vm plan's numatune), and pages reserved on
// another node do not back it. Nodes without per-node sysfs files (a
// kernel without NUMA) are left out.
struct NodePages {
  std::vector<std::string> free;   // "node0 512 of 768"
  std::vector<std::string> empty;  // "node1 (gpu4, nic6; 0 of 768)"
  std::vector<int> nodes;          // every device node read
};

NodePages device_node_pages(const Host& h) {
  std::map<int, std::vector<std::string>> devices;
  for (const auto* n : members(h.topo)) {
    if (n->dev->numa_node) {
      devices[*n->dev->numa_node].push_back(n->name);
    }
  }
  NodePages p;
  for (const auto& [node, names] : devices) {
    const std::string dir =
        "devices/system/node/node" + std::to_string(node) + "/hugepages/hugepages-1048576kB/";
    const auto free = read_int(h.sys, dir + "free_hugepages", 10);
    const auto nr = read_int(h.sys, dir + "nr_hugepages", 10);
    if (!free || !nr) {
      continue;
    }
    p.nodes.push_back(node);
    std::string entry = "node" + std::to_string(node);
    const std::string counts = std::to_string(*free) + " of " + std::to_string(*nr);
    if (*free > 0) {
      entry += " " + counts;
      p.free.push_back(entry);
    } else {
      entry += " (" + list_some(names, 3) + "; " + counts + ")";
      p.empty.push_back(entry);
    }
  }
  return p;
}

CheckResult check_hugepages(const Host& h) {
  const auto [have, gig] = check_util::reserved_hugepages(h.sys);
  if (have.empty()) {
    return {"hugepages", Status::fail, "no huge pages reserved",
            "boot with default_hugepagesz=1G hugepagesz=1G hugepages=<N>"};
  }
  if (!gig) {
    return {"hugepages", Status::warn, join(have, ", ") + " reserved, no 1G pages",
            "boot with default_hugepagesz=1G hugepagesz=1G hugepages=<N>"};
  }
  const NodePages nodes = device_node_pages(h);
  if (!nodes.empty.empty()) {
    std::string per_node;
    for (const int n : nodes.nodes) {
      per_node += (per_node.empty() ? "" : ",") + std::to_string(n) + ":<N>";
    }
    const std::string first = nodes.empty.front().substr(0, nodes.empty.front().find(' '));
    return {"hugepages", Status::warn,
            fmt::format("{} reserved, but no 1G page free on {}{}", join(have, ", "),
                        list_some(nodes.empty, 2),
                        nodes.free.empty() ? "" : fmt::format("; {} free", list_some(nodes.free))),
            fmt::format("echo <N> > /sys/devices/system/node/{}/hugepages/hugepages-1048576kB/"
                        "nr_hugepages (or boot with hugepagesz=1G hugepages={})",
                        first, per_node)};
  }
  return {"hugepages", Status::pass,
          join(have, ", ") + " reserved" +
              (nodes.free.empty() ? "" : "; 1G free: " + list_some(nodes.free)),
          ""};
}

CheckResult check_numa(const Host& h) {
  const auto [unknown, nodes] = check_util::scan_numa(h.topo);
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
          fmt::format("{}{}", join(pmus.core, ", "),
                      pmus.core_model ? fmt::format(" ({})", *pmus.core_model) : ""),
          ""};
}

CheckResult check_pmu(const Host& h) {
  const auto m = read_mediated_pmu(h.sys);
  switch (m.state) {
    case MediatedPmu::State::kvm_not_loaded:
      return {"pmu", Status::fail, "neither kvm_intel nor kvm_amd loaded",
              h.machine.vendor == CpuVendor::amd     ? "modprobe kvm_amd"
              : h.machine.vendor == CpuVendor::intel ? "modprobe kvm_intel"
                                                     : "modprobe kvm_intel (or kvm_amd)"};
    case MediatedPmu::State::unsupported:
      return {"pmu", Status::warn, m.module + " has no enable_mediated_pmu (kernel before 7.0)",
              "run a kernel with mediated vPMU (Linux 7.0+)"};
    case MediatedPmu::State::enabled:
      return {"pmu", Status::pass, m.module + ".enable_mediated_pmu=" + *m.value, ""};
    case MediatedPmu::State::disabled:
      break;
  }
  const std::string dash = m.module == "kvm_intel" ? "kvm-intel" : "kvm-amd";
  return {"pmu", Status::warn,
          fmt::format("{}.enable_mediated_pmu={} (emulated vPMU)", m.module, *m.value),
          fmt::format("modprobe -r {0} && modprobe {0} enable_mediated_pmu=1 (or boot with "
                      "{1}.enable_mediated_pmu=1)",
                      m.module, dash)};
}

CheckResult check_nmi_watchdog(const Host& h) {
  if (h.proc == nullptr) {
    return {"nmi-watchdog", Status::skip, "procfs not given", ""};
  }
  const auto v = read_line(*h.proc, "sys/kernel/nmi_watchdog");
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
    if (h.machine.vendor == CpuVendor::amd || h.sys.exists("module/kvm_amd")) {
      driver = "amd_uncore";
    } else if (h.machine.vendor == CpuVendor::intel || h.sys.exists("module/kvm_intel")) {
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
  return {"kvmai", Status::pass, fmt::format("kvmai loaded{}", v ? fmt::format(" ({})", *v) : ""),
          ""};
}

}  // namespace

const CheckTable& host_checks() {
  static const CheckTable t{
      {"iommu", check_iommu},
      {"iommu-pages", check_iommu_pages},
      {"acs", check_acs},
      {"ats", check_ats},
      {"sriov", check_sriov},
      {"vf-bars", check_vf_bars},
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

constexpr std::array<kvmai::Named<Status>, 4> kStatusNames{{
    {Status::pass, "pass"},
    {Status::warn, "warn"},
    {Status::fail, "fail"},
    {Status::skip, "skip"},
}};

std::string status_name(Status s) {
  return std::string(kvmai::name_of(kStatusNames, s));
}

std::string fix_by_name(FixBy f) {
  return f == FixBy::host ? "host" : "here";
}

const std::vector<std::string>& check_ids(Place place) {
  static const auto ids_of = [](const CheckTable& t) {
    std::vector<std::string> v;
    for (const auto& [id, fn] : t) {
      v.push_back(id);
    }
    return v;
  };
  static const std::vector<std::string> host = ids_of(host_checks());
  static const std::vector<std::string> guest = ids_of(guest_checks());
  return place == Place::guest ? guest : host;
}

std::vector<CheckResult> run_checks(const CheckInput& in) {
  std::vector<CheckResult> results;
  for (const auto& [id, fn] : in.machine.place == Place::guest ? guest_checks() : host_checks()) {
    results.push_back(fn(in));
  }
  return results;
}

std::vector<CheckResult> run_checks(const TreeReader& sys, const TreeReader& proc,
                                    const Topology& topo) {
  CheckInput in{.sys = sys,
                .proc = &proc,
                .topo = topo,
                .machine = detect_machine(sys, &proc),
                .p2p_groups = {}};
  in.machine.place = Place::host;
  return run_checks(in);
}

namespace check_util {

std::string list_some(const std::vector<std::string>& v, std::size_t most) {
  if (v.size() <= most) {
    return join(v, ", ");
  }
  const std::vector<std::string> head(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(most));
  return fmt::format("{} and {} more", join(head, ", "), v.size() - most);
}

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

std::string unreadable_fix(const std::vector<const PciDevice*>& devs) {
  // Root reads the whole config space, so "run as root" only when cut.
  const bool cut = std::any_of(devs.begin(), devs.end(),
                               [](const PciDevice* d) { return config_cut_for_user(*d); });
  return cut ? "run kvmaictl as root" : "";
}

HugePages reserved_hugepages(const TreeReader& sys) {
  HugePages p;
  for (const auto& dir : sys.list("kernel/mm/hugepages")) {
    const auto n = read_int(sys, "kernel/mm/hugepages/" + dir + "/nr_hugepages", 10);
    if (n && *n > 0) {
      const std::string size = dir.substr(dir.find('-') + 1);
      p.reserved.push_back(std::to_string(*n) + " x " + size);
      p.one_g = p.one_g || size == "1048576kB";
    }
  }
  return p;
}

NumaScan scan_numa(const Topology& t) {
  NumaScan s;
  for (const auto* n : members(t)) {
    if (n->dev->numa_node) {
      s.nodes.insert(*n->dev->numa_node);
    } else {
      s.unknown.push_back(n->name);
    }
  }
  return s;
}

MrrsScan scan_mrrs(const Topology& t) {
  MrrsScan s;
  for (const auto* n : members(t)) {
    const auto& pcie = n->dev->config.pcie;
    if (!pcie) {
      if (pcie_absent(*n->dev)) {
        s.absent.push_back(n->name);
      } else {
        s.unknown.push_back(n->dev);
        s.unknown_names.push_back(n->name);
      }
    } else if (pcie->max_read_request < kRecommendedMrrs) {
      s.low.push_back(n->name + " " + std::to_string(pcie->max_read_request));
    }
  }
  return s;
}

CheckResult mrrs_result(const MrrsScan& s, const std::string& low_fix) {
  const std::string not_pcie =
      s.absent.empty() ? "" : fmt::format(" ({} not PCIe)", list_some(s.absent));
  if (!s.low.empty()) {
    return {"mrrs", Status::warn, "MaxReadReq below 4096: " + list_some(s.low) + not_pcie, low_fix};
  }
  if (!s.unknown.empty()) {
    return {"mrrs", Status::warn, "PCIe capability unreadable on " + list_some(s.unknown_names),
            unreadable_fix(s.unknown)};
  }
  return {"mrrs", Status::pass, "MaxReadReq 4096 on every PCIe GPU and NIC" + not_pcie, ""};
}

bool pcie_absent(const PciDevice& d) {
  return d.config.caps_known && !d.config.pcie;
}

// sysfs gives users other than root the first 64 bytes of config space.
bool config_cut_for_user(const PciDevice& d) {
  constexpr std::size_t kUserConfigBytes = 64;
  return d.config.size <= kUserConfigBytes;
}

}  // namespace check_util

}  // namespace kvmai::kvmaictl
