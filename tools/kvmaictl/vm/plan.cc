#include "vm/plan.h"

#include <algorithm>
#include <map>
#include <set>

#include "cli.h"

namespace kvmaictl {
namespace {

// Expanders take root bus numbers 0x20, 0x40, ..., leaving each room for
// the buses behind its bridges; seven fit below 0x100.
constexpr int kFirstBusNr = 0x20;
constexpr int kBusNrStride = 0x20;
constexpr int kMaxExpanders = 7;
constexpr unsigned kNvidiaVendor = 0x10de;

const PciDevice& resolve(const Topology& topo, const std::string& word) {
  if (const Named* n = topo.named(word)) {
    return *n->dev;
  }
  const std::string bdf = word.size() == 7 ? "0000:" + word : word;
  if (const PciDevice* d = topo.tree().find(bdf)) {
    return *d;
  }
  throw OpError("no device \"" + word + "\" (gpuN, nicN or a PCI address)");
}

// vfio-pci itself, or a vfio-pci variant driver (mlx5_vfio_pci, ...).
bool bound_to_vfio(const PciDevice& d) {
  return d.driver == "vfio-pci" || d.driver.ends_with("_vfio_pci") ||
         d.driver.ends_with("-vfio-pci");
}

std::string bridge_model(Role role) {
  switch (role) {
    case Role::root_port:
      return "pcie-root-port";
    case Role::upstream_port:
      return "x3130-upstream";
    case Role::downstream_port:
      return "xio3130-downstream";
    default:
      return "";
  }
}

}  // namespace

VmPlan plan_vm(const Topology& topo, const TreeReader& sys, const PlanRequest& req) {
  if (req.devices.empty()) {
    throw UsageError("no devices to plan for");
  }
  std::vector<const PciDevice*> devs;
  for (const auto& word : req.devices) {
    const PciDevice& d = resolve(topo, word);
    if (std::find(devs.begin(), devs.end(), &d) != devs.end()) {
      throw OpError(word + " (" + d.bdf + ") is named twice");
    }
    if (d.is_bridge()) {
      throw OpError(word + " (" + d.bdf + ") is a bridge, not a device to assign");
    }
    if (!bound_to_vfio(d)) {
      throw OpError(word + " (" + d.bdf + ") is bound to " +
                    (d.driver.empty() ? "no driver" : d.driver) + ", not vfio-pci");
    }
    devs.push_back(&d);
  }
  // VFIO assigns whole IOMMU groups: every endpoint of a group goes, or none.
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
  // Guest NUMA nodes: one per host node the devices sit on, in host order.
  std::map<int, int> guest_node;  // host node -> guest node
  for (const PciDevice* d : devs) {
    guest_node.emplace(d->numa_node.value_or(0), 0);
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
  for (const PciDevice* d : devs) {
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
      guest_of[key] = b.id;
      parent = b.id;
      plan.bridges.push_back(b);
    }
    const std::string name = topo.name_of(*d);
    plan.devices.push_back({.name = name.empty() ? d->bdf : name,
                            .host_bdf = d->bdf,
                            .bus = parent,
                            .guest_node = node,
                            .clique = std::nullopt});
  }

  // NVIDIA GPUs of one VM reach each other directly: one GPUDirect clique.
  const auto nvidia = std::count_if(devs.begin(), devs.end(), [](const PciDevice* d) {
    return d->vendor == kNvidiaVendor && d->is_gpu();
  });
  for (std::size_t i = 0; nvidia > 1 && i < devs.size(); ++i) {
    if (devs[i]->vendor == kNvidiaVendor && devs[i]->is_gpu()) {
      plan.devices[i].clique = 0;
    }
  }
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
    a.insert(a.end(), {"-object",
                       "memory-backend-ram,id=" + mem + ",size=" + std::to_string(n.memory_mib) +
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
    } else if (b.chassis != 0) {
      dev += ",chassis=" + std::to_string(b.chassis) + ",slot=" + std::to_string(b.chassis);
    }
    a.insert(a.end(), {"-device", dev});
  }
  for (const auto& d : plan.devices) {
    std::string dev = "vfio-pci,host=" + d.host_bdf + ",bus=" + d.bus;
    if (d.clique) {
      dev += ",x-nv-gpudirect-clique=" + std::to_string(*d.clique);
    }
    a.insert(a.end(), {"-device", dev});
  }
  return a;
}

}  // namespace kvmaictl
