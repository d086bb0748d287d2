// The checks inside a VM: what NCCL and GPUDirect need from the guest's
// view of its GPUs and NICs. The tenant can fix some (MaxReadReq, huge
// pages, the NCCL configuration); the rest follow from how the host laid the
// VM out, and the advice names the host operator's tool for it.
#include <algorithm>
#include <regex>
#include <sstream>

#include "check/checks.h"
#include "common/format.h"

namespace kvmai::kvmaictl {
namespace {

using check_util::list_some;
using check_util::members;

// PCIe Device Control, Enable Relaxed Ordering (bit 4).
constexpr unsigned kDevctlRelaxedOrdering = 1U << 4U;
constexpr const char* kPlanFix =
    "lay the VM out with kvmaictl vm plan: it mirrors the host's switches, NUMA nodes and links";

// Whether NCCL has a P2P path to choose: two GPUs, or a GPU and an RDMA NIC.
bool has_p2p(const CheckInput& in) {
  const auto& nics = in.topo.nics();
  const bool rdma =
      std::any_of(nics.begin(), nics.end(), [](const Named& n) { return n.dev->is_rdma_nic(); });
  return in.topo.gpus().size() >= 2 || (!in.topo.gpus().empty() && rdma);
}

CheckResult guest_devices(const CheckInput& in) {
  std::vector<std::string> what;
  for (const auto* n : members(in.topo)) {
    std::string kind = n->dev->is_nic() ? (n->dev->is_rdma_nic() ? "RDMA" : "not RDMA") : "";
    what.push_back(fmt::format("{} {:04x}:{:04x}{}", n->name, n->dev->vendor, n->dev->device,
                               kind.empty() ? "" : " (" + kind + ")"));
  }
  if (in.topo.gpus().empty()) {
    return {"devices", Status::warn,
            what.empty() ? "no GPU or NIC in this VM" : "no GPU: " + list_some(what),
            "pass the GPUs through with vfio-pci", FixBy::host};
  }
  return {"devices", Status::pass, list_some(what, 6), ""};
}

CheckResult guest_numa(const CheckInput& in) {
  const auto [unknown, nodes] = check_util::scan_numa(in.topo);
  if (!unknown.empty()) {
    return {"numa", Status::warn,
            "NUMA node unknown for " + list_some(unknown) +
                ": NCCL reads numaid -1 and cannot pair GPUs with their socket's NICs and memory",
            kPlanFix, FixBy::host};
  }
  return {"numa", Status::pass,
          fmt::format("every GPU and NIC has a NUMA node ({} nodes)", nodes.size()), ""};
}

CheckResult guest_switches(const CheckInput& in) {
  std::vector<std::string> flat;
  for (const auto* n : members(in.topo)) {
    if (n->dev->parents.empty()) {
      flat.push_back(n->name);
    }
  }
  if (flat.empty()) {
    return {"switches", Status::pass,
            fmt::format("GPUs and NICs behind PCIe ports ({} switches)", in.topo.switches().size()),
            ""};
  }
  if (!has_p2p(in)) {
    return {"switches", Status::pass,
            list_some(flat) + " on the root bus; one GPU and no RDMA NIC: no P2P path to lay out",
            ""};
  }
  return {"switches", Status::warn,
          list_some(flat) +
              " on the root bus: NCCL sees no PCIe switch between GPUs and NICs and keeps "
              "GPUDirect RDMA off by default",
          kPlanFix, FixBy::host};
}

CheckResult guest_link(const CheckInput& in) {
  std::vector<std::string> hidden;
  std::vector<std::string> degraded;
  for (const auto* n : members(in.topo)) {
    const PciDevice& d = *n->dev;
    if (!d.config.pcie) {
      continue;  // not PCIe, or unreadable: mrrs says which
    }
    const bool no_width = !d.current_link_width || *d.current_link_width == 0;
    const bool no_speed =
        d.current_link_speed.empty() || d.current_link_speed.starts_with("Unknown");
    if (no_width || no_speed) {
      hidden.push_back(fmt::format("{} ({}, x{})", n->name,
                                   d.current_link_speed.empty() ? "-" : d.current_link_speed,
                                   d.current_link_width.value_or(0)));
    } else if (d.current_link_speed != d.max_link_speed ||
               (d.max_link_width && *d.current_link_width < *d.max_link_width)) {
      degraded.push_back(fmt::format("{} {} x{} of {} x{}", n->name, d.current_link_speed,
                                     *d.current_link_width, d.max_link_speed,
                                     d.max_link_width.value_or(0)));
    }
  }
  if (!hidden.empty()) {
    return {"link", Status::warn,
            "link speed/width not visible for " + list_some(hidden) +
                ": NCCL reads link_width 0 (a root-bus integrated endpoint has no link)",
            kPlanFix, FixBy::host};
  }
  if (!degraded.empty()) {
    return {"link", Status::warn, "degraded: " + list_some(degraded),
            "check the physical link on the host (kvmaictl check link)", FixBy::host};
  }
  return {"link", Status::pass, "every PCIe GPU and NIC link visible at full speed and width", ""};
}

CheckResult guest_mrrs(const CheckInput& in) {
  return check_util::mrrs_result(
      check_util::scan_mrrs(in.topo),
      "the guest owns its devices' Device Control: set Max_Read_Request_Size to 4096 at boot, "
      "and again after a device reset");
}

CheckResult guest_relaxed_ordering(const CheckInput& in) {
  std::vector<std::string> off;
  std::size_t pcie_nics = 0;
  for (const auto& n : in.topo.nics()) {
    const auto& pcie = n.dev->config.pcie;
    if (!pcie || !n.dev->is_rdma_nic()) {
      continue;
    }
    ++pcie_nics;
    if ((pcie->devctl & kDevctlRelaxedOrdering) == 0) {
      off.push_back(n.name);
    }
  }
  if (pcie_nics == 0) {
    return {"relaxed-ordering", Status::pass, "no RDMA NIC", ""};
  }
  if (!off.empty()) {
    return {"relaxed-ordering", Status::warn,
            "Relaxed Ordering off on " + list_some(off) +
                ": an RDMA NIC's writes to GPU memory lose bandwidth without it",
            "enable it in Device Control from the guest (the NIC driver uses it where the "
            "device allows)"};
  }
  return {"relaxed-ordering", Status::pass, "Relaxed Ordering enabled on every RDMA NIC", ""};
}

CheckResult guest_hugepages(const CheckInput& in) {
  const auto have = check_util::reserved_hugepages(in.sys).reserved;
  if (have.empty()) {
    return {"hugepages", Status::warn,
            "no huge pages reserved: RDMA-registered buffers pin 4K pages, one IOTLB entry each",
            "reserve them: sysctl vm.nr_hugepages=N, or boot with hugepagesz=1G hugepages=N"};
  }
  return {"hugepages", Status::pass, join(have, ", ") + " reserved", ""};
}

CheckResult guest_viommu(const CheckInput& in) {
  const auto units = in.sys.list("class/iommu");
  if (units.empty()) {
    return {"viommu", Status::pass,
            "no vIOMMU: devices reach guest memory by its physical addresses (no ATS in use)", ""};
  }
  std::vector<std::string> off;
  for (const auto* n : members(in.topo)) {
    if (ats_state(*n->dev) == "disabled") {
      off.push_back(n->name);
    }
  }
  if (!off.empty()) {
    return {"viommu", Status::warn,
            fmt::format("vIOMMU {}, but ATS off on {}: no device-IOTLB, so no translated P2P",
                        join(units, ", "), list_some(off)),
            "give the vIOMMU device-iotlb=on (kvmaictl vm plan does)", FixBy::host};
  }
  return {"viommu", Status::pass,
          fmt::format("vIOMMU {}; ATS on wherever a device offers it", join(units, ", ")), ""};
}

// NCCL_TOPO_FILE as /etc/nccl.conf sets it, or "".
std::string nccl_topo_file(const TreeReader& root) {
  const auto text = root.read("etc/nccl.conf");
  if (!text) {
    return "";
  }
  std::istringstream lines(*text);
  std::string file;
  for (std::string line; std::getline(lines, line);) {
    const auto eq = line.find('=');
    if (eq != std::string::npos && line.substr(0, eq) == "NCCL_TOPO_FILE") {
      file = line.substr(eq + 1);
    }
  }
  return file;
}

CheckResult guest_nccl_topo(const CheckInput& in) {
  if (in.root == nullptr) {
    return {"nccl-topo", Status::skip, "the machine's files not given (--root)", ""};
  }
  const std::string file = nccl_topo_file(*in.root);
  if (file.empty()) {
    const bool flat = std::any_of(in.topo.gpus().begin(), in.topo.gpus().end(),
                                  [](const Named& n) { return n.dev->parents.empty(); });
    if (flat && has_p2p(in)) {
      return {"nccl-topo", Status::warn,
              "no NCCL_TOPO_FILE in /etc/nccl.conf, and NCCL would read this VM's flat bus",
              "write the file with kvmaictl vm nccl-topo from this VM's plan, and name it in the "
              "guest's /etc/nccl.conf (NCCL_TOPO_FILE=)",
              FixBy::host};
    }
    return {"nccl-topo", Status::pass,
            "no NCCL_TOPO_FILE in /etc/nccl.conf: NCCL reads this VM's own PCI topology", ""};
  }
  const auto xml = in.root->read(file.starts_with('/') ? file.substr(1) : file);
  if (!xml) {
    return {"nccl-topo", Status::fail, "NCCL_TOPO_FILE " + file + " unreadable",
            "write it, or drop NCCL_TOPO_FILE from /etc/nccl.conf"};
  }
  static const std::regex kBusid(R"(busid="([^"]*)\")");
  std::vector<std::string> missing;
  std::size_t count = 0;
  for (auto it = std::sregex_iterator(xml->begin(), xml->end(), kBusid);
       it != std::sregex_iterator(); ++it) {
    std::string bdf = (*it)[1];
    std::transform(bdf.begin(), bdf.end(), bdf.begin(), ::tolower);
    // vm nccl-topo's synthetic bridges (a host root bus that is a
    // switch) are no function of any guest, by design.
    if (bdf.starts_with("ffff:")) {
      continue;
    }
    ++count;
    if (in.topo.tree().find(bdf) == nullptr) {
      missing.push_back(bdf);
    }
  }
  if (!missing.empty()) {
    return {"nccl-topo", Status::fail,
            fmt::format("{} names {} of {} PCI functions this VM does not have: {}", file,
                        missing.size(), count, list_some(missing)),
            "the file must come from this VM's own plan (kvmaictl vm nccl-topo), with the bus "
            "numbers this VM's firmware gave (kvmaictl vm nccl-map PLAN FILE here); NCCL would "
            "route by functions that do not exist",
            FixBy::host};
  }
  return {"nccl-topo", Status::pass,
          fmt::format("{} names {} PCI functions, all present", file, count), ""};
}

}  // namespace

const CheckTable& guest_checks() {
  static const CheckTable t{
      {"devices", guest_devices},     {"numa", guest_numa},
      {"switches", guest_switches},   {"link", guest_link},
      {"mrrs", guest_mrrs},           {"relaxed-ordering", guest_relaxed_ordering},
      {"hugepages", guest_hugepages}, {"viommu", guest_viommu},
      {"nccl-topo", guest_nccl_topo},
  };
  return t;
}

}  // namespace kvmai::kvmaictl
