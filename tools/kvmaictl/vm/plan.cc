#include "vm/plan.h"

#include <algorithm>
#include <array>
#include <bit>
#include <map>
#include <set>
#include <tuple>

#include "cli/errors.h"
#include "cli/print.h"
#include "common/names.h"
#include "partition/layout.h"
#include "vm/platform.h"

namespace kvmai::kvmaictl {
namespace {

// Expanders take root bus numbers 0x20, 0x40, ..., leaving each room for
// the buses behind its bridges; seven fit below 0x100.
constexpr int kFirstBusNr = 0x20;
constexpr int kBusNrStride = 0x20;
constexpr int kMaxExpanders = 7;
constexpr unsigned kNvidiaVendor = 0x10de;

// A device the request names: a PCI function, or a mediated device of a
// PCI parent (then `dev` is the parent).
struct Pick {
  const PciDevice* dev = nullptr;
  std::string mdev;  // UUID, "" for a PCI function
};

// The mdev core puts a mediated device below its parent's device
// (bus/mdev/devices/UUID -> devices/.../PARENT/UUID) and binds it to the
// parent driver's mdev driver, which registers it with VFIO.
Pick resolve_mdev(const Topology& topo, const TreeReader& sys, const std::string& uuid) {
  const std::string rel = "bus/mdev/devices/" + uuid;
  const auto parent = partition::mdev_parent(sys, uuid);
  if (!parent) {
    throw OpError("no mediated device " + uuid + " (bus/mdev/devices)");
  }
  const PciDevice* d = topo.tree().find(*parent);
  if (d == nullptr) {
    throw OpError("mdev " + uuid + ": its parent " + *parent +
                  " is not a PCI device, so it has no host path for the guest to mirror");
  }
  if (!link_name(sys, rel + "/driver")) {
    throw OpError("mdev " + uuid + " (parent " + d->bdf +
                  ") is bound to no driver: its parent's vendor driver must bind it to VFIO");
  }
  return {.dev = d, .mdev = uuid};
}

Pick resolve(const Topology& topo, const TreeReader& sys, const std::string& word) {
  if (const Named* n = topo.named(word)) {
    return {.dev = n->dev, .mdev = ""};
  }
  if (partition::is_uuid(word)) {
    return resolve_mdev(topo, sys, word);
  }
  const std::string bdf = word.size() == 7 ? "0000:" + word : word;
  if (const PciDevice* d = topo.tree().find(bdf)) {
    return {.dev = d, .mdev = ""};
  }
  throw OpError("no device \"" + word +
                "\" (gpuN, nicN, nvswitchN, a PCI address or an mdev's UUID)");
}

// The QEMU device standing for a host port of each role.
constexpr std::array<kvmai::Named<Role>, 3> kBridgeModels{{
    {Role::root_port, "pcie-root-port"},
    {Role::upstream_port, "x3130-upstream"},
    {Role::downstream_port, "xio3130-downstream"},
}};

std::string bridge_model(Role role) {
  return std::string(kvmai::name_of(kBridgeModels, role, ""));
}

// sysfs's "32.0 GT/s PCIe" as pcie-root-port's x-speed, "" when QEMU has
// no such speed (PCIELinkSpeed: 2_5, 5, 8, 16, 32, 64).
std::string qemu_link_speed(const std::string& sysfs) {
  static const std::array<std::pair<std::string_view, std::string_view>, 6> speeds{{
      {"2.5 GT/s", "2_5"},
      {"5.0 GT/s", "5"},
      {"8.0 GT/s", "8"},
      {"16.0 GT/s", "16"},
      {"32.0 GT/s", "32"},
      {"64.0 GT/s", "64"},
  }};
  for (const auto& [text, qemu] : speeds) {
    if (sysfs.starts_with(text)) {
      return std::string(qemu);
    }
  }
  return "";
}

// A width QEMU's PCIELinkWidth has, or 0.
int qemu_link_width(std::optional<int> w) {
  constexpr std::array<int, 7> widths{1, 2, 4, 8, 12, 16, 32};
  return w && std::find(widths.begin(), widths.end(), *w) != widths.end() ? *w : 0;
}

// The guest bus numbers below @bus, depth first in slot order as SeaBIOS
// assigns them; returns the last number used.
int number_buses(VmPlan& plan, const std::string& bus, int last) {
  std::vector<GuestBridge*> kids;
  for (auto& b : plan.bridges) {
    if (b.bus == bus) {
      kids.push_back(&b);
    }
  }
  std::sort(kids.begin(), kids.end(),
            [](const GuestBridge* a, const GuestBridge* b) { return a->slot < b->slot; });
  for (GuestBridge* b : kids) {
    b->secondary = ++last;
    last = number_buses(plan, b->id, last);
  }
  return last;
}

// Explicit slots, so that the guest's addresses are known before it boots:
// bridges take the next free slot of their parent's bus; the devices below
// one bridge share one slot as functions of one device, in host address
// order, so that a multifunction device keeps its function 0 first.
void address(VmPlan& plan) {
  std::map<std::string, int> next_slot;
  for (auto& b : plan.bridges) {
    if (b.model != "pxb-pcie") {
      b.slot = next_slot[b.bus]++;
    }
  }
  std::map<std::string, std::vector<GuestDevice*>> below;
  for (auto& d : plan.devices) {
    below[d.bus].push_back(&d);
  }
  for (auto& [bus, devs] : below) {
    if (devs.size() > 8) {
      throw OpError(std::to_string(devs.size()) + " devices below one port (" + devs[0]->host_bdf +
                    "...), more than the 8 functions of one guest slot");
    }
    std::sort(devs.begin(), devs.end(), [](const GuestDevice* a, const GuestDevice* b) {
      return std::tie(a->host_bdf, a->mdev) < std::tie(b->host_bdf, b->mdev);
    });
    const int slot = next_slot[bus]++;
    for (std::size_t f = 0; f < devs.size(); ++f) {
      devs[f]->slot = slot;
      devs[f]->function = static_cast<int>(f);
      devs[f]->multifunction = f == 0 && devs.size() > 1;
    }
  }
  for (auto& b : plan.bridges) {
    if (b.model != "pxb-pcie") {
      continue;
    }
    b.secondary = b.bus_nr;
    if (number_buses(plan, b.id, b.bus_nr) >= b.bus_nr + kBusNrStride) {
      throw OpError("the devices below " + b.host + " need more than " +
                    std::to_string(kBusNrStride) + " guest buses, more than the layout holds");
    }
  }
  std::map<std::string, int> secondary;
  for (const auto& b : plan.bridges) {
    secondary[b.id] = b.secondary;
  }
  for (auto& b : plan.bridges) {
    if (b.model != "pxb-pcie") {
      b.guest_bdf = format_bdf(0, static_cast<unsigned>(secondary.at(b.bus)),
                               static_cast<unsigned>(b.slot), 0);
    }
  }
  for (auto& d : plan.devices) {
    d.guest_bdf = format_bdf(0, static_cast<unsigned>(secondary.at(d.bus)),
                             static_cast<unsigned>(d.slot), static_cast<unsigned>(d.function));
  }
}

// NVLink between the GPUs of an HGX baseboard runs through its NVSwitches,
// which NVIDIA Fabric Manager sets up.  A VM given every GPU of the host
// needs them passed through too (full passthrough); a VM given some of the
// GPUs gets NVLink only under NVIDIA's shared NVSwitch model, where a
// service VM keeps the switches, which a plan cannot set up.
void nvswitches(const Topology& topo, const std::vector<const PciDevice*>& devs, VmPlan& plan) {
  if (topo.nvswitches().empty()) {
    return;
  }
  const auto nvidia_gpu = [](const PciDevice* d) {
    return d->vendor == kNvidiaVendor && d->is_gpu();
  };
  const auto planned = std::count_if(devs.begin(), devs.end(), nvidia_gpu);
  std::size_t all = 0;
  for (const auto& g : topo.gpus()) {
    all += nvidia_gpu(g.dev) ? 1 : 0;
  }
  std::string missing;
  for (const auto& n : topo.nvswitches()) {
    if (std::find(devs.begin(), devs.end(), n.dev) == devs.end()) {
      missing += (missing.empty() ? "" : " ") + n.name;
    }
  }
  if (planned < 2) {
    return;
  }
  if (static_cast<std::size_t>(planned) == all && !missing.empty()) {
    throw OpError("every NVIDIA GPU of the host is planned but not " + missing +
                  ": NVLink between them needs the baseboard's NVSwitches passed through "
                  "as well (and NVIDIA Fabric Manager in the guest)");
  }
  if (!missing.empty()) {
    plan.notes.push_back(
        "NVLink: " + std::to_string(planned) + " of the host's " + std::to_string(all) +
        " NVIDIA GPUs; their NVSwitches stay with the host, so the guest has NVLink only "
        "under NVIDIA's shared NVSwitch model (Fabric Manager in a service VM), which this "
        "plan does not set up: NCCL uses PCIe between them");
  } else {
    plan.notes.emplace_back(
        "NVLink: the baseboard's NVSwitches are planned; the guest must run NVIDIA Fabric "
        "Manager before NCCL can use NVLink");
  }
}

// Firmware, MMIO window, pinning and VFIO backend (vm/platform.h).
void platform(VmPlan& plan, const PciTree& host, const PlanRequest& req, const TreeReader* proc) {
  plan.firmware = req.firmware;
  plan.mmio64_need = mmio64_need(plan, host);
  plan.mmio64 = req.mmio64 != 0 ? req.mmio64 : mmio64_window(plan.mmio64_need);
  if (plan.mmio64 < plan.mmio64_need) {
    throw OpError("mmio64 " + size_text(plan.mmio64) + " is less than the " +
                  size_text(plan.mmio64_need) + " the devices' 64-bit BARs take");
  }
  if (plan.firmware == Firmware::bios && plan.mmio64_need > kOvmfDefaultMmio64) {
    throw OpError("firmware bios: the devices' 64-bit BARs take " + size_text(plan.mmio64_need) +
                  ", and SeaBIOS takes no window size from the plan; use firmware uefi");
  }
  if (proc != nullptr) {
    plan.phys_bits = host_phys_bits(*proc);
  }
  // OVMF puts the window above the guest's RAM, aligned to its size.
  int memory = 0;
  for (const auto& n : plan.nodes) {
    memory += n.memory_mib;
  }
  const std::uint64_t top =
      ((std::uint64_t{4} << 30U) + (std::uint64_t(memory) << 20U) + plan.mmio64 - 1) / plan.mmio64 *
          plan.mmio64 +
      plan.mmio64;
  if (plan.firmware == Firmware::uefi && plan.phys_bits && *plan.phys_bits < 64 &&
      top > (std::uint64_t{1} << static_cast<unsigned>(*plan.phys_bits))) {
    throw OpError("the " + size_text(plan.mmio64) + " MMIO window above " + std::to_string(memory) +
                  " MiB of memory ends at guest address 2^" +
                  std::to_string(std::bit_width(top - 1)) + ", past the host CPU's " +
                  std::to_string(*plan.phys_bits) + " physical address bits");
  }
  if (plan.firmware == Firmware::uefi && !plan.phys_bits) {
    plan.notes.emplace_back(
        "the host CPU's physical address bits are unknown (no procfs): the guest gets them "
        "(host-phys-bits) and must hold the MMIO window above its memory");
  }
  plan.pin = req.pin;
  pin_threads(plan);
  // QEMU's iommufd backend maps guest RAM only: a peer's BAR, which the
  // type1 container maps as well, is not in the IOMMU, and device-to-device
  // DMA in the guest faults.
  plan.vfio_backend = "container";
}

}  // namespace

VmPlan plan_vm(const Topology& topo, const TreeReader& sys, const PlanRequest& req,
               const TreeReader* proc) {
  if (req.devices.empty()) {
    throw UsageError("no devices to plan for");
  }
  std::vector<Pick> picks;
  std::vector<const PciDevice*> devs;  // the PCI functions among them
  for (const auto& word : req.devices) {
    Pick p = resolve(topo, sys, word);
    const PciDevice& d = *p.dev;
    const std::string what = p.mdev.empty() ? word + " (" + d.bdf + ")" : "mdev " + p.mdev;
    if (std::any_of(picks.begin(), picks.end(),
                    [&](const Pick& q) { return q.dev == p.dev && q.mdev == p.mdev; })) {
      throw OpError(what + " is named twice");
    }
    if (p.mdev.empty() && d.is_bridge()) {
      throw OpError(what + " is a bridge, not a device to assign");
    }
    if (p.mdev.empty() && !d.bound_to_vfio()) {
      throw OpError(what + " is bound to " + (d.driver.empty() ? "no driver" : d.driver) +
                    ", not vfio-pci");
    }
    if (p.mdev.empty()) {
      devs.push_back(&d);
    }
    picks.push_back(std::move(p));
  }
  // VFIO assigns whole IOMMU groups: every endpoint of a group goes, or
  // none.  An mdev's group is its own (the mdev core's emulated IOMMU).
  for (const PciDevice* d : devs) {
    for (const auto& other : topo.tree().devices()) {
      if (!d->iommu_group || other.iommu_group != d->iommu_group || other.is_bridge() ||
          std::find(devs.begin(), devs.end(), &other) != devs.end()) {
        continue;
      }
      throw OpError("IOMMU group " + std::to_string(*d->iommu_group) + " of " + d->bdf +
                    " also holds " + other.bdf + ", which is not assigned");
    }
  }

  VmPlan plan;
  nvswitches(topo, devs, plan);
  if (!req.hugepages.empty() && req.hugepages.front() != '/') {
    throw UsageError("hugepages wants the absolute path of a hugetlbfs mount, not \"" +
                     req.hugepages + "\"");
  }
  plan.hugepages = req.hugepages;
  if (!req.hugepages.empty()) {
    if (proc == nullptr) {
      throw OpError("hugepages " + req.hugepages +
                    ": its page size is in the host's /proc/mounts; give --procfs-root or --root "
                    "with a recorded tree");
    }
    plan.hugepage_kib = hugetlbfs_page_kib(*proc, req.hugepages);
  }
  // Guest NUMA nodes: one per host node the devices sit on, in host order.
  std::map<int, int> guest_node;  // host node -> guest node
  for (const Pick& p : picks) {
    guest_node.emplace(p.dev->numa_node.value_or(0), 0);
  }
  const int nnodes = static_cast<int>(guest_node.size());
  if (req.vcpus < nnodes || req.memory_mib < nnodes || req.vcpus % nnodes != 0) {
    throw UsageError("vcpus (" + std::to_string(req.vcpus) +
                     ") must be a multiple of, and memory (" + std::to_string(req.memory_mib) +
                     " MiB) at least, the " + std::to_string(nnodes) +
                     " NUMA node(s) the devices sit on");
  }
  int id = 0;
  for (auto& [host, guest] : guest_node) {
    guest = id++;
    plan.nodes.push_back(
        {.id = guest,
         .host_node = host,
         .vcpus = req.vcpus / nnodes,
         .memory_mib = req.memory_mib / nnodes,
         .host_cpus = read_line(sys, "devices/system/node/node" + std::to_string(host) + "/cpulist")
                          .value_or("")});
  }

  // One expander per host root bus, then the host's bridges below it.
  std::map<std::string, std::string> guest_of;  // host root bus or bridge -> guest id
  int nrp = 0;
  int nup = 0;
  int ndp = 0;
  int chassis = 0;
  for (const Pick& pick : picks) {
    const PciDevice* d = pick.dev;
    const int node = guest_node.at(d->numa_node.value_or(0));
    if (!guest_of.contains(d->root)) {
      const int k = static_cast<int>(
          std::count_if(plan.bridges.begin(), plan.bridges.end(),
                        [](const GuestBridge& b) { return b.model == "pxb-pcie"; }));
      if (k == kMaxExpanders) {
        throw OpError("the devices sit below more than " + std::to_string(kMaxExpanders) +
                      " host bridges, more than the guest layout holds");
      }
      const std::string pxb = "pxb" + std::to_string(k);
      plan.bridges.push_back({.id = pxb,
                              .model = "pxb-pcie",
                              .bus = "pcie.0",
                              .host = d->root,
                              .bus_nr = kFirstBusNr + k * kBusNrStride,
                              .numa_node = node});
      guest_of[d->root] = pxb;
    }
    std::string parent = guest_of.at(d->root);
    std::vector<std::string> chain = d->parents;
    if (chain.empty()) {
      chain.emplace_back();  // on the root bus itself: give it a root port of its own
    }
    for (const auto& host : chain) {
      const std::string key = host.empty() ? "rp-for-" + d->bdf : host;
      if (const auto it = guest_of.find(key); it != guest_of.end()) {
        parent = it->second;
        continue;
      }
      const PciDevice* hb = host.empty() ? nullptr : topo.tree().find(host);
      const Role role = hb != nullptr ? hb->role : Role::root_port;
      const std::string model = bridge_model(role);
      if (model.empty()) {
        throw OpError(d->bdf + " sits below " + host +
                      ", a conventional PCI bridge the guest layout cannot mirror");
      }
      GuestBridge b{.id = "", .model = model, .bus = parent, .host = host.empty() ? d->root : host};
      if (role == Role::upstream_port) {
        b.id = "up" + std::to_string(nup++);
      } else {
        b.id =
            (role == Role::root_port ? "rp" + std::to_string(nrp++) : "dp" + std::to_string(ndp++));
        b.chassis = ++chassis;
      }
      // Only QEMU's generic root port can show a link of its own;
      // xio3130 ports report theirs (2.5 GT/s x1) whatever the host's.
      if (model == "pcie-root-port" && hb != nullptr) {
        b.x_speed = qemu_link_speed(hb->max_link_speed);
        b.x_width = qemu_link_width(hb->max_link_width);
      }
      guest_of[key] = b.id;
      parent = b.id;
      plan.bridges.push_back(b);
    }
    const std::string name = pick.mdev.empty() ? topo.name_of(*d) : pick.mdev;
    plan.devices.push_back({.name = name.empty() ? d->bdf : name,
                            .host_bdf = d->bdf,
                            .mdev = pick.mdev,
                            .bus = parent,
                            .slot = 0,
                            .function = 0,
                            .multifunction = false,
                            .guest_bdf = "",
                            .guest_node = node,
                            .clique = std::nullopt});
  }

  // NVIDIA GPUs of one VM reach each other directly: one GPUDirect clique.
  // Not their vGPUs: NVIDIA gives vGPUs peer-to-peer over NVLink only.
  const auto nvidia = std::count_if(devs.begin(), devs.end(), [](const PciDevice* d) {
    return d->vendor == kNvidiaVendor && d->is_gpu();
  });
  for (std::size_t i = 0; nvidia > 1 && i < picks.size(); ++i) {
    if (picks[i].mdev.empty() && picks[i].dev->vendor == kNvidiaVendor && picks[i].dev->is_gpu()) {
      plan.devices[i].clique = 0;
    }
  }
  for (const Pick& p : picks) {
    if (!p.mdev.empty()) {
      plan.notes.push_back("mdev " + p.mdev + ": its BARs are what its vendor driver emulates, " +
                           "not its parent's; the 64-bit window counts none of them: give " +
                           "mmio64 if they need more than it leaves");
    }
  }
  address(plan);
  platform(plan, topo.tree(), req, proc);
  plan.notes.emplace_back(
      "direct-mode P2P groups need each peer BAR at the same guest and host physical address; "
      "QEMU places guest BARs itself, so this plan cannot promise that: use translated mode");
  return plan;
}

std::vector<std::string> qemu_args(const VmPlan& plan) {
  std::vector<std::string> a = {
      "-machine", "q35,kernel-irqchip=split", "-cpu", "host,host-phys-bits=on",
      // Device-IOTLB: the guest's own IOMMU lets the devices use ATS.
      "-device", "intel-iommu,intremap=on,caching-mode=on,device-iotlb=on"};
  if (plan.firmware == Firmware::uefi) {
    // OVMF as -bios: code and variables in one read-only image, which
    // keeps no variables across boots; and the window for the BARs.
    a.insert(a.end(), {"-bios", std::string(kOvmfImage), "-fw_cfg",
                       "name=" + std::string(kOvmfMmio64Key) +
                           ",string=" + std::to_string(plan.mmio64 >> 20U)});
  }
  int vcpus = 0;
  int memory = 0;
  for (const auto& n : plan.nodes) {
    vcpus += n.vcpus;
    memory += n.memory_mib;
  }
  const auto nnodes = plan.nodes.size();
  a.insert(a.end(), {"-smp",
                     std::to_string(vcpus) + ",sockets=" + std::to_string(nnodes) + ",cores=" +
                         std::to_string(vcpus / static_cast<int>(nnodes)) + ",threads=1",
                     "-m", std::to_string(memory) + "M"});
  int cpu = 0;
  for (const auto& n : plan.nodes) {
    const std::string mem = "mem" + std::to_string(n.id);
    // Huge pages: fewer IOMMU and EPT/NPT entries for the pinned guest
    // memory, preallocated so that VFIO pins them at start, not at first DMA.
    const std::string backend =
        plan.hugepages.empty()
            ? "memory-backend-ram,id=" + mem
            : "memory-backend-file,id=" + mem + ",mem-path=" + plan.hugepages + ",prealloc=on";
    a.insert(a.end(), {"-object",
                       backend + ",size=" + std::to_string(n.memory_mib) +
                           "M,host-nodes=" + std::to_string(n.host_node) + ",policy=bind",
                       "-numa",
                       "node,nodeid=" + std::to_string(n.id) + ",cpus=" + std::to_string(cpu) +
                           "-" + std::to_string(cpu + n.vcpus - 1) + ",memdev=" + mem});
    cpu += n.vcpus;
  }
  for (const auto& b : plan.bridges) {
    std::string dev = b.model + ",id=" + b.id + ",bus=" + b.bus;
    if (b.model == "pxb-pcie") {
      dev += ",bus_nr=" + std::to_string(b.bus_nr) + ",numa_node=" + std::to_string(b.numa_node);
    } else {
      dev += ",addr=" + to_hex(static_cast<unsigned>(b.slot), 2) + ".0";
      if (b.chassis != 0) {
        dev += ",chassis=" + std::to_string(b.chassis) + ",slot=" + std::to_string(b.chassis);
      }
      if (!b.x_speed.empty()) {
        dev += ",x-speed=" + b.x_speed;
      }
      if (b.x_width != 0) {
        dev += ",x-width=" + std::to_string(b.x_width);
      }
    }
    a.insert(a.end(), {"-device", dev});
  }
  for (const auto& d : plan.devices) {
    const std::string source =
        d.mdev.empty() ? "host=" + d.host_bdf : "sysfsdev=/sys/bus/mdev/devices/" + d.mdev;
    std::string dev = "vfio-pci," + source + ",bus=" + d.bus +
                      ",addr=" + to_hex(static_cast<unsigned>(d.slot), 2) + "." +
                      std::to_string(d.function);
    if (d.multifunction) {
      dev += ",multifunction=on";
    }
    if (d.clique) {
      dev += ",x-nv-gpudirect-clique=" + std::to_string(*d.clique);
    }
    a.insert(a.end(), {"-device", dev});
  }
  return a;
}

}  // namespace kvmai::kvmaictl
