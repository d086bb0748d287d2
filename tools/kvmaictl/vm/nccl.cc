#include "vm/nccl.h"

#include <cstdlib>
#include <map>
#include <optional>
#include <vector>

#include "cli/print.h"
#include "xml/xml.h"

namespace kvmai::kvmaictl {
namespace {

constexpr std::uint32_t kBridgeClass = 0x060400;

// A link as sysfs spells it ("16.0 GT/s PCIe", which NCCL matches by
// prefix) and its width.
struct Link {
  std::string speed;
  std::optional<int> width;
};

double gts(const std::string& speed) {
  return std::strtod(speed.c_str(), nullptr);
}

// What NCCL reads for a device on the host: the lower of its own and its
// port's maximum speed and width.
Link link_of(const PciTree& host, const PciDevice& d) {
  Link l{d.max_link_speed, d.max_link_width};
  const PciDevice* port = d.parents.empty() ? nullptr : host.find(d.parents.back());
  if (port != nullptr) {
    if (!port->max_link_speed.empty() &&
        (l.speed.empty() || gts(port->max_link_speed) < gts(l.speed))) {
      l.speed = port->max_link_speed;
    }
    if (port->max_link_width && (!l.width || *port->max_link_width < *l.width)) {
      l.width = port->max_link_width;
    }
  }
  return l;
}

// The host switch port's ids, where sysfs had them.  NCCL reads a <pci>
// element's ids from its attributes before the guest's sysfs, and tells
// the levels of a Broadcom PEX switch by them (ncclTopoFlattenBcmSwitches,
// on vendor, device and subsystem ids together): QEMU's own ports would
// hide the host's switch model from it.
void set_ids(const xml::Element& e, const PciDevice& d) {
  if (d.vendor == 0) {
    return;
  }
  e.attr("vendor", to_hex(d.vendor, 4)).attr("device", to_hex(d.device, 4));
  if (d.subsystem_vendor != 0) {
    e.attr("subsystem_vendor", to_hex(d.subsystem_vendor, 4))
        .attr("subsystem_device", to_hex(d.subsystem_device, 4));
  }
}

// Left out when the host does not say, so that NCCL reads the guest.
void set_link(const xml::Element& e, const Link& l) {
  if (!l.speed.empty()) {
    e.attr("link_speed", l.speed);
  }
  if (l.width) {
    e.attr("link_width", *l.width);
  }
}

// The faster of two links, for a synthetic switch: as fast as its fastest
// port.
Link faster(const Link& a, const Link& b) {
  Link l = a;
  if (l.speed.empty() || (!b.speed.empty() && gts(b.speed) > gts(l.speed))) {
    l.speed = b.speed;
  }
  if (!l.width || (b.width && *b.width > *l.width)) {
    l.width = b.width;
  }
  return l;
}

}  // namespace

bool nccl_uses(const PciDevice& d) {
  const auto base = d.class_code >> 16U;
  return base == 0x02 || base == 0x03;
}

std::string nccl_topology_xml(const VmPlan& plan, const PciTree& host) {
  std::map<std::string, const GuestBridge*> bridge;
  for (const auto& b : plan.bridges) {
    bridge[b.id] = &b;
  }

  // Each device's NCCL parents, device side first: every second bridge up
  // its guest path, until the expander's root bus.
  struct Member {
    const GuestDevice* dev;
    const PciDevice* host;
    std::vector<const GuestBridge*> up;  // device side first
    const GuestBridge* pxb = nullptr;
  };
  std::vector<Member> members;
  for (const auto& d : plan.devices) {
    const PciDevice* h = host.find(d.host_bdf);
    if (h == nullptr || !nccl_uses(*h)) {
      continue;
    }
    Member m{&d, h, {}, nullptr};
    std::vector<const GuestBridge*> path;  // d.bus first
    for (const GuestBridge* b = bridge.at(d.bus);; b = bridge.at(b->bus)) {
      if (b->model == "pxb-pcie") {
        m.pxb = b;
        break;
      }
      path.push_back(b);
    }
    for (std::size_t i = 1; i < path.size(); i += 2) {
      m.up.push_back(path[i]);
    }
    members.push_back(m);
  }

  xml::Doc doc("system");
  const xml::Element system = doc.root();
  system.attr("version", 1);
  std::map<int, xml::Element> cpu;
  for (const auto& n : plan.nodes) {
    cpu.emplace(n.id, system.child("cpu")).first->second.attr("numaid", n.id);
  }
  // Synthetic switches for expanders, with the links of their fastest port.
  std::map<const GuestBridge*, Link> synthetic;
  for (const auto& m : members) {
    const PciRoot* root = host.root(m.pxb->host);
    if (root != nullptr && root->as_switch) {
      synthetic[m.pxb] = faster(synthetic[m.pxb], link_of(host, *m.host));
    }
  }
  std::map<const GuestBridge*, xml::Element> made;
  int nsynthetic = 0;
  for (const auto& b : plan.bridges) {
    if (const auto it = synthetic.find(&b); it != synthetic.end()) {
      const xml::Element e = cpu.at(b.numa_node).child("pci");
      e.attr("busid", format_bdf(0xffff, 0xff, nsynthetic++, 0))
          .attr("class", to_hex(kBridgeClass, 6));
      set_link(e, it->second);
      made.emplace(&b, e);
    }
  }
  auto element_of = [&](const GuestBridge* b, const Member& m) -> xml::Element {
    if (b != nullptr) {
      return made.at(b);
    }
    const auto it = made.find(m.pxb);
    return it != made.end() ? it->second : cpu.at(m.pxb->numa_node);
  };
  // Switches, outermost first; then the devices.
  for (const auto& m : members) {
    for (std::size_t i = m.up.size(); i-- > 0;) {
      const GuestBridge* b = m.up[i];
      if (made.contains(b)) {
        continue;
      }
      const xml::Element e =
          element_of(i + 1 < m.up.size() ? m.up[i + 1] : nullptr, m).child("pci");
      e.attr("busid", b->guest_bdf).attr("class", to_hex(kBridgeClass, 6));
      if (const PciDevice* hb = host.find(b->host)) {
        set_ids(e, *hb);
        set_link(e, link_of(host, *hb));
      }
      made.emplace(b, e);
    }
  }
  for (const auto& m : members) {
    const xml::Element e = element_of(m.up.empty() ? nullptr : m.up.front(), m).child("pci");
    e.attr("busid", m.dev->guest_bdf)
        .attr("class", to_hex(m.host->class_code, 6))
        .attr("vendor", to_hex(m.host->vendor, 4))
        .attr("device", to_hex(m.host->device, 4));
    set_link(e, link_of(host, *m.host));
  }
  // No <?xml ...?>: NCCL's own parser (src/graph/xml.cc) stops at the "?".
  // pugixml ends an empty element with " />"; NCCL reads that space as one
  // more attribute, with an empty name.  Every element here has attributes,
  // so each empty one ends in a quote, and a quote inside a value is
  // written as &quot;: `" />` occurs at element ends only.
  std::string text = doc.str(false);
  for (std::size_t i = text.find("\" />"); i != std::string::npos; i = text.find("\" />", i)) {
    text.erase(i + 1, 1);
  }
  return text;
}

}  // namespace kvmai::kvmaictl
