#include "vm/libvirt.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "cli/print.h"
#include "model/pci_tree.h"
#include "vm/platform.h"

namespace kvmai::kvmaictl {
namespace {

// libvirt's names for the QEMU devices the plan uses.  Without a <model
// name=...> child libvirt picks exactly these devices for these models on
// any QEMU with pcie-root-port (2.9 and later), and formatdomain.rst asks
// users not to set that child by hand.
std::string controller_model(const std::string& plan_model) {
  if (plan_model == "pxb-pcie") {
    return "pcie-expander-bus";
  }
  if (plan_model == "pcie-root-port") {
    return "pcie-root-port";
  }
  if (plan_model == "x3130-upstream") {
    return "pcie-switch-upstream-port";
  }
  if (plan_model == "xio3130-downstream") {
    return "pcie-switch-downstream-port";
  }
  throw std::logic_error("no libvirt controller for " + plan_model);
}

std::string hex(int v, int digits) {
  return to_hex(static_cast<std::uint64_t>(v), digits);
}

// libvirt writes bus/slot with two digits and function with one.
void pci_address(const xml::Element& parent, int bus, int slot, int function, bool multi) {
  const xml::Element a = parent.child("address");
  a.attr("type", "pci")
      .attr("domain", "0x0000")
      .attr("bus", hex(bus, 2))
      .attr("slot", hex(slot, 2))
      .attr("function", hex(function, 1));
  if (multi) {
    a.attr("multifunction", "on");
  }
}

// A host address "DDDD:BB:DD.F" as <source><address .../>.
void host_address(const xml::Element& source, const std::string& bdf) {
  if (!looks_like_bdf(bdf)) {
    throw std::logic_error("not a PCI address: " + bdf);
  }
  source.child("address")
      .attr("domain", "0x" + bdf.substr(0, 4))
      .attr("bus", "0x" + bdf.substr(5, 2))
      .attr("slot", "0x" + bdf.substr(8, 2))
      .attr("function", "0x" + bdf.substr(11, 1));
}

// XML comments may not hold "--" nor end in "-": the writer puts the text
// as it is, and the document would not parse.
std::string comment_text(std::string s) {
  for (std::size_t i = s.find("--"); i != std::string::npos; i = s.find("--", i)) {
    s.replace(i, 2, "- -");
  }
  return " " + s + " ";
}

// A controller's user alias, for <qemu:override>.
std::string bridge_alias(const GuestBridge& b) {
  return "ua-" + b.id;
}

bool shows_link(const GuestBridge& b) {
  return !b.x_speed.empty() || b.x_width != 0;
}

void vcpus_and_numa(const xml::Element& domain, const VmPlan& plan) {
  int vcpus = 0;
  int memory = 0;
  for (const auto& n : plan.nodes) {
    vcpus += n.vcpus;
    memory += n.memory_mib;
  }
  domain.text_child("memory", std::to_string(memory)).attr("unit", "MiB");
  domain.text_child("vcpu", std::to_string(vcpus));

  // Guest vCPUs are numbered node by node, as in the <numa> cells below.
  if (!plan.vcpu_pins.empty()) {
    const xml::Element cputune = domain.child("cputune");
    for (const auto& pin : plan.vcpu_pins) {
      cputune.child("vcpupin").attr("vcpu", pin.vcpu).attr("cpuset", pin.cpus);
    }
    if (!plan.emulator_cpus.empty()) {
      // QEMU's main loop and I/O threads: on the nodes' CPUs, off the
      // vCPUs' own when those are pinned 1:1.
      cputune.child("emulatorpin").attr("cpuset", plan.emulator_cpus);
    }
  } else if (plan.pin != Pinning::none) {
    // A partial pinning would leave some vCPUs free to run anywhere while
    // their node's memory stays bound: no pinning rather than half of one.
    domain.comment(
        comment_text("no <cputune>: the host CPUs of a node are unknown (no cpulist "
                     "in sysfs); pin each cell's vCPUs to its host node by hand"));
  }

  const xml::Element numatune = domain.child("numatune");
  std::string all;
  for (const auto& n : plan.nodes) {
    all += (all.empty() ? "" : ",") + std::to_string(n.host_node);
  }
  numatune.child("memory").attr("mode", "strict").attr("nodeset", all);
  for (const auto& n : plan.nodes) {
    numatune.child("memnode")
        .attr("cellid", n.id)
        .attr("mode", "strict")
        .attr("nodeset", std::to_string(n.host_node));
  }

  // Huge pages cut the IOMMU's page-table walks for the devices' DMA; they
  // must be reserved on each host node first (kvmaictl check hugepages).
  // libvirt picks the hugetlbfs mount of the page size itself.
  if (!plan.hugepages.empty()) {
    const xml::Element backing = domain.child("memoryBacking");
    backing.comment(comment_text("pages of " + plan.hugepages +
                                 ", reserved on each host node in <numatune> before the "
                                 "domain starts"));
    backing.child("hugepages")
        .child("page")
        .attr("size", static_cast<long>(plan.hugepage_kib))
        .attr("unit", "KiB");
  }

  // q35: pcie-expander-bus and the PCIe ports exist on it only.
  const xml::Element os = domain.child("os");
  if (plan.firmware == Firmware::uefi) {
    // libvirt picks an OVMF build through the firmware descriptors.
    os.attr("firmware", "efi");
  }
  os.text_child("type", "hvm").attr("arch", "x86_64").attr("machine", "q35");
  const xml::Element features = domain.child("features");
  // Without <acpi/> libvirt starts q35 with ACPI off: no SRAT (NUMA), no
  // DMAR (the vIOMMU), no MCFG, no description of the expanders' root
  // buses, whose devices the guest would then not find.
  features.child("acpi");
  // The split irqchip: the intel IOMMU's interrupt remapping needs it.
  features.child("ioapic").attr("driver", "qemu");
  if (plan.firmware == Firmware::uefi) {
    // OVMF's 64-bit MMIO window, in MiB, through fw_cfg (libvirt 6.5+).
    const xml::Element sysinfo = domain.child("sysinfo");
    sysinfo.attr("type", "fwcfg");
    sysinfo.comment(comment_text("the devices' 64-bit BARs take " + size_text(plan.mmio64_need) +
                                 "; the window is " + size_text(plan.mmio64)));
    sysinfo.text_child("entry", std::to_string(plan.mmio64 >> 20U))
        .attr("name", std::string(kOvmfMmio64Key));
  }

  const xml::Element cpu_el = domain.child("cpu");
  cpu_el.attr("mode", "host-passthrough");
  const auto nnodes = static_cast<int>(plan.nodes.size());
  cpu_el.child("topology")
      .attr("sockets", nnodes)
      .attr("cores", nnodes != 0 ? vcpus / nnodes : 0)
      .attr("threads", 1);
  // host-phys-bits=on: the guest can place the devices' large BARs.
  cpu_el.child("maxphysaddr").attr("mode", "passthrough");
  const xml::Element numa = cpu_el.child("numa");
  int first = 0;
  for (const auto& n : plan.nodes) {
    numa.child("cell")
        .attr("id", n.id)
        .attr("cpus", std::to_string(first) + "-" + std::to_string(first + n.vcpus - 1))
        .attr("memory", n.memory_mib)
        .attr("unit", "MiB");
    first += n.vcpus;
  }
}

void controllers(const xml::Element& devices, const VmPlan& plan,
                 const std::map<std::string, int>& index) {
  std::vector<const GuestBridge*> order;
  for (const auto& b : plan.bridges) {
    order.push_back(&b);
  }
  std::sort(order.begin(), order.end(), [&](const GuestBridge* a, const GuestBridge* b) {
    return index.at(a->id) < index.at(b->id);
  });
  for (const GuestBridge* b : order) {
    const xml::Element c = devices.child("controller");
    c.attr("type", "pci").attr("index", index.at(b->id)).attr("model", controller_model(b->model));
    c.comment(comment_text(b->id + ": host " + b->host + ", guest bus " + hex(b->secondary, 2)));
    if (b->model == "pxb-pcie") {
      const xml::Element target = c.child("target");
      target.attr("busNr", b->bus_nr);
      target.text_child("node", std::to_string(b->numa_node));
    }
    // No chassis for the ports: libvirt numbers each after its own index,
    // unique among all the domain's controllers (those libvirt adds itself
    // included); the plan's chassis numbers are unique among its ports only.
    // An expander's slot on pcie-root is left to libvirt, as the plan
    // leaves it to QEMU: nothing in the guest depends on it.
    if (shows_link(*b)) {
      c.child("alias").attr("name", bridge_alias(*b));
    }
    if (b->slot >= 0) {
      pci_address(c, b->bus == "pcie.0" ? 0 : index.at(b->bus), b->slot, 0, false);
    }
  }
}

void hostdevs(const xml::Element& devices, const VmPlan& plan,
              const std::map<std::string, int>& index) {
  devices.comment(
      comment_text("managed=\"no\": kvmaictl plans only devices bound to vfio-pci already, "
                   "and libvirt must not rebind them"));
  devices.comment(comment_text("VFIO backend " + plan.vfio_backend +
                               " (no iommufd): QEMU's iommufd backend does not map peer BARs, "
                               "so the devices could not reach each other"));
  for (const auto& d : plan.devices) {
    const xml::Element h = devices.child("hostdev");
    h.attr("mode", "subsystem").attr("type", d.mdev.empty() ? "pci" : "mdev");
    h.comment(comment_text(d.name + ": guest " + d.guest_bdf + ", guest node " +
                           std::to_string(d.guest_node) +
                           (d.mdev.empty() ? "" : ", on " + d.host_bdf + "'s path")));
    if (d.mdev.empty()) {
      h.attr("managed", "no");
      h.child("driver").attr("name", "vfio");
      host_address(h.child("source"), d.host_bdf);
    } else {
      // A mediated device by its UUID: libvirt opens it through VFIO
      // (model vfio-pci) and neither binds nor creates it.
      h.attr("model", "vfio-pci");
      h.child("source").child("address").attr("uuid", d.mdev);
    }
    h.child("alias").attr("name", libvirt_alias(d));
    pci_address(h, index.at(d.bus), d.slot, d.function, d.multifunction);
  }
}

// libvirt has no element for the GPUDirect clique nor for a root port's
// link; <qemu:override> sets the QEMU properties on the device of that
// alias (libvirt 8.2+): the clique as a number (QEMU reads an 8-bit
// integer), x-speed and x-width as the enum names QEMU takes.
void overrides(const xml::Element& domain, const VmPlan& plan) {
  const bool cliques = std::any_of(plan.devices.begin(), plan.devices.end(),
                                   [](const GuestDevice& d) { return d.clique.has_value(); });
  const bool links = std::any_of(plan.bridges.begin(), plan.bridges.end(), shows_link);
  if (!cliques && !links) {
    return;
  }
  domain.declare_ns("qemu", kLibvirtQemuNs);
  domain.comment(comment_text(
      std::string(cliques ? "the NVIDIA GPUDirect clique (x-nv-gpudirect-clique)" : "") +
      (cliques && links ? " and " : "") +
      (links ? "the root ports' host links (x-speed, x-width)" : "") +
      " through qemu:override: libvirt marks the domain tainted (custom-device)"));
  const xml::Element override_el = domain.ns_child("qemu", "override");
  auto property = [](const xml::Element& device, std::string_view name, std::string_view type,
                     const std::string& value) {
    device.ns_child("qemu", "property").attr("name", name).attr("type", type).attr("value", value);
  };
  for (const auto& b : plan.bridges) {
    if (!shows_link(b)) {
      continue;
    }
    const xml::Element frontend = override_el.ns_child("qemu", "device")
                                      .attr("alias", bridge_alias(b))
                                      .ns_child("qemu", "frontend");
    if (!b.x_speed.empty()) {
      property(frontend, "x-speed", "string", b.x_speed);
    }
    if (b.x_width != 0) {
      property(frontend, "x-width", "string", std::to_string(b.x_width));
    }
  }
  for (const auto& d : plan.devices) {
    if (d.clique) {
      property(override_el.ns_child("qemu", "device")
                   .attr("alias", libvirt_alias(d))
                   .ns_child("qemu", "frontend"),
               "x-nv-gpudirect-clique", "unsigned", std::to_string(*d.clique));
    }
  }
}

// <metadata> for `kvmaictl hook qemu`: one translated group of every
// hostdev, created when the domain starts and deleted when it stops.
void kvmai_metadata(const xml::Element& domain, std::string_view group) {
  const xml::Element vm = domain.child("metadata").child("kvmai:vm");
  vm.declare_ns("kvmai", kKvmaiLibvirtNs);
  vm.ns_child("kvmai", "group")
      .attr("name", group)
      .attr("mode", "translated")
      .attr("from", "hostdevs");
}

// Depth first from @bus, children in slot order.
void number(const VmPlan& plan, const std::string& bus, std::map<std::string, int>& index) {
  std::vector<const GuestBridge*> kids;
  for (const auto& b : plan.bridges) {
    if (b.bus == bus) {
      kids.push_back(&b);
    }
  }
  std::stable_sort(kids.begin(), kids.end(),
                   [](const GuestBridge* a, const GuestBridge* b) { return a->slot < b->slot; });
  for (const GuestBridge* b : kids) {
    const int next = static_cast<int>(index.size()) + 1;
    index[b->id] = next;
    number(plan, b->id, index);
  }
}

}  // namespace

std::map<std::string, int> libvirt_controller_indexes(const VmPlan& plan) {
  std::vector<const GuestBridge*> expanders;
  for (const auto& b : plan.bridges) {
    if (b.bus == "pcie.0") {
      expanders.push_back(&b);
    }
  }
  std::stable_sort(
      expanders.begin(), expanders.end(),
      [](const GuestBridge* a, const GuestBridge* b) { return a->bus_nr < b->bus_nr; });
  std::map<std::string, int> index;
  for (const GuestBridge* e : expanders) {
    index[e->id] = static_cast<int>(index.size()) + 1;
    number(plan, e->id, index);
  }
  if (index.size() != plan.bridges.size()) {
    throw std::logic_error("a planned bridge hangs off no expander");
  }
  return index;
}

std::string libvirt_alias(const GuestDevice& d) {
  std::string a = "ua-" + d.name;
  for (char& c : a) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    c = ok ? c : '-';
  }
  return a;
}

xml::Doc libvirt_domain(const VmPlan& plan, std::string_view kvmai_group) {
  xml::Doc doc("domain");
  const xml::Element domain = doc.root();
  domain.attr("type", "kvm");
  domain.comment(
      comment_text("kvmaictl vm plan, format libvirt: add <name>, or put the plan into a "
                   "domain of your own with merge FILE"));
  for (const auto& note : plan.notes) {
    domain.comment(comment_text("note: " + note));
  }
  if (!kvmai_group.empty()) {
    kvmai_metadata(domain, kvmai_group);
  }
  vcpus_and_numa(domain, plan);

  const auto index = libvirt_controller_indexes(plan);
  const xml::Element devices = domain.child("devices");
  // Device-IOTLB: the guest's own IOMMU lets the devices use ATS.
  devices.child("iommu")
      .attr("model", "intel")
      .child("driver")
      .attr("intremap", "on")
      .attr("caching_mode", "on")
      .attr("iotlb", "on");
  controllers(devices, plan, index);
  hostdevs(devices, plan, index);
  overrides(domain, plan);
  return doc;
}

std::string libvirt_xml(const VmPlan& plan, std::string_view kvmai_group) {
  return libvirt_domain(plan, kvmai_group).str(false);
}

}  // namespace kvmai::kvmaictl
