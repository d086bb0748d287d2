#include "vm/merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <pugixml.hpp>
#include <set>
#include <sstream>
#include <vector>

#include "cli/errors.h"
#include "client/names.h"
#include "vm/libvirt.h"
#include "vm/platform.h"

namespace kvmai::kvmaictl {
namespace {

using pugi::xml_node;

constexpr unsigned kParse = pugi::parse_default | pugi::parse_comments;

// How refusals name the domain: by its <name>, which a tenant may have
// chosen, so only printable.
std::string who(const xml_node& domain) {
  const std::string n = domain.child("name").text().as_string();
  return n.empty() ? "the domain" : "domain '" + printable(n) + "'";
}

[[noreturn]] void refuse(const xml_node& domain, const std::string& what) {
  throw OpError("merge: " + who(domain) + " " + what);
}

// libvirt writes numbers in decimal or with 0x.
long number(const char* text) {
  return std::strtol(text, nullptr, 0);
}

std::vector<xml_node> children(const xml_node& parent, const char* name) {
  std::vector<xml_node> out;
  for (xml_node c = parent.child(name); !c.empty(); c = c.next_sibling(name)) {
    out.push_back(c);
  }
  return out;
}

xml_node child_or_new(xml_node parent, const char* name) {
  xml_node c = parent.child(name);
  return c.empty() ? parent.append_child(name) : c;
}

// The host address of a <hostdev type="pci">, as the plan writes it.
std::string source_bdf(const xml_node& hostdev) {
  const xml_node a = hostdev.child("source").child("address");
  if (a.empty()) {
    return "";
  }
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", number(a.attribute("domain").value()),
                     number(a.attribute("bus").value()), number(a.attribute("slot").value()),
                     number(a.attribute("function").value()));
}

bool is_pci_controller(const xml_node& c) {
  return std::string_view(c.attribute("type").value()) == "pci";
}

// ---- what would clash ----------------------------------------------------

void check_machine(const xml_node& domain) {
  const std::string_view type = domain.attribute("type").value();
  if (type != "kvm") {
    refuse(domain, "is of type '" + printable(type) + "': assigned devices need type=\"kvm\"");
  }
  const std::string_view machine = domain.child("os").child("type").attribute("machine").value();
  if (!machine.empty() && machine != "q35" && !machine.starts_with("pc-q35-")) {
    refuse(domain, "has machine '" + printable(machine) +
                       "': pcie-expander-bus and PCIe ports exist on q35 only");
  }
}

void check_devices(const xml_node& domain, const VmPlan& plan, const xml_node& planned) {
  const xml_node devices = domain.child("devices");
  for (const xml_node& h : children(devices, "hostdev")) {
    // A PCI hostdev by its address, an mdev one by its UUID.
    const bool mdev = std::string_view(h.attribute("type").value()) == "mdev";
    const std::string source =
        mdev ? h.child("source").child("address").attribute("uuid").value() : source_bdf(h);
    for (const auto& d : plan.devices) {
      if (mdev ? d.mdev == source : d.mdev.empty() && d.host_bdf == source) {
        refuse(domain, "assigns " + printable(source) +
                           " already (a <hostdev>), which the plan assigns as " + d.name);
      }
    }
  }
  std::set<std::string> aliases;
  for (const pugi::xpath_node& a : domain.select_nodes("//alias")) {
    aliases.insert(a.node().attribute("name").value());
  }
  // The plan's aliases: its hostdevs' and those of the ports it overrides.
  for (const pugi::xpath_node& a : planned.select_nodes("devices/*/alias")) {
    const std::string name = a.node().attribute("name").value();
    if (aliases.contains(name)) {
      const xml_node comment =
          a.parent().find_child([](const xml_node& n) { return n.type() == pugi::node_comment; });
      const std::string what = comment.empty() ? "" : comment.value();
      refuse(domain,
             "has an alias " + name + " already, the plan's for" + what.substr(0, what.find(':')));
    }
  }
  for (const xml_node& i : children(devices, "iommu")) {
    const std::string_view model = i.attribute("model").value();
    if (model != "intel") {
      refuse(domain, "has an IOMMU of model '" + printable(model) +
                         "': the plan's devices use the intel IOMMU's device-IOTLB");
    }
  }
  if (std::string_view(domain.child("features").child("ioapic").attribute("driver").value()) ==
      "kvm") {
    refuse(domain,
           "has <ioapic driver=\"kvm\">: the intel IOMMU's interrupt remapping needs the "
           "split irqchip (driver=\"qemu\")");
  }
}

// The domain's own buses below pcie-root are numbered first, from 1; the
// plan's expanders number theirs from their busNr.  The planned guest
// addresses hold only while the former stay below the latter.
void check_buses(const xml_node& domain, const VmPlan& plan) {
  int own = 0;
  for (const xml_node& c : children(domain.child("devices"), "controller")) {
    if (!is_pci_controller(c)) {
      continue;
    }
    const std::string_view model = c.attribute("model").value();
    if (model == "pcie-expander-bus" || model == "pci-expander-bus") {
      refuse(domain, "has a " + std::string(model) + " of its own (index " +
                         c.attribute("index").value() +
                         "): merge into a domain whose PCI controllers hang off pcie-root");
    }
    if (model != "pcie-root" && model != "pci-root") {
      ++own;
    }
  }
  int first = 256;
  for (const auto& b : plan.bridges) {
    if (b.model == "pxb-pcie") {
      first = std::min(first, b.bus_nr);
    }
  }
  if (own >= first) {
    refuse(domain, fmt::format("has {} PCI buses of its own below pcie-root, which reach the "
                               "plan's first expander bus 0x{:02x}",
                               own, first));
  }
}

void check_firmware(const xml_node& domain, const VmPlan& plan) {
  const xml_node os = domain.child("os");
  const std::string_view fw = os.attribute("firmware").value();
  if (plan.firmware == Firmware::uefi && fw == "bios") {
    refuse(domain,
           "boots firmware 'bios': the plan's 64-bit BARs want UEFI (or plan with "
           "firmware bios)");
  }
  if (plan.firmware == Firmware::bios && (fw == "efi" || !os.child("loader").empty())) {
    refuse(domain, "boots UEFI (<os firmware> or <loader>), not the plan's firmware bios");
  }
}

// Whether `e` declares kvm-ai's metadata namespace, under any prefix.
bool declares_kvmai(const xml_node& e) {
  for (const pugi::xml_attribute& a : e.attributes()) {
    if (std::string_view(a.name()).starts_with("xmlns") && a.value() == kKvmaiLibvirtNs) {
      return true;
    }
  }
  return false;
}

// ---- the plan's elements into the domain ----------------------------------

// Controller indexes and the buses of addresses on them, moved past the
// domain's own highest index.
void renumber(const xml_node& plan_devices, long offset) {
  auto shift = [offset](xml_node address) {
    if (address.empty()) {
      return;
    }
    const long bus = number(address.attribute("bus").value());
    if (bus != 0) {
      address.attribute("bus").set_value(fmt::format("0x{:02x}", bus + offset).c_str());
    }
  };
  for (xml_node c : children(plan_devices, "controller")) {
    c.attribute("index").set_value(number(c.attribute("index").value()) + offset);
    shift(c.child("address"));
  }
  for (const xml_node& h : children(plan_devices, "hostdev")) {
    shift(h.child("address"));
  }
}

// @from in place of the domain's elements of its name (the first of them),
// or before <devices> when it has none.
void replace(xml_node domain, const xml_node& from) {
  const auto old = children(domain, from.name());
  if (!old.empty()) {
    domain.insert_copy_before(from, old.front());
    for (const xml_node& o : old) {
      domain.remove_child(o);
    }
  } else if (const xml_node devices = domain.child("devices"); !devices.empty()) {
    domain.insert_copy_before(from, devices);
  } else {
    domain.append_copy(from);
  }
}

void merge_cputune(xml_node domain, const xml_node& plan_root) {
  const xml_node from = plan_root.child("cputune");
  xml_node cputune = domain.child("cputune");
  // The domain's pins name its old vCPUs; the plan's count replaces them.
  for (const char* name : {"vcpupin", "emulatorpin"}) {
    for (const xml_node& p : children(cputune, name)) {
      cputune.remove_child(p);
    }
  }
  if (from.empty()) {
    if (!cputune.empty() && cputune.first_child().empty()) {
      domain.remove_child(cputune);
    }
    return;
  }
  if (cputune.empty()) {
    replace(domain, from);
    return;
  }
  for (const xml_node& c : from.children()) {
    cputune.append_copy(c);
  }
}

void merge_hugepages(xml_node domain, const xml_node& plan_root) {
  const xml_node from = plan_root.child("memoryBacking");
  if (from.empty()) {
    return;  // the domain's own backing, if any, stays
  }
  xml_node backing = domain.child("memoryBacking");
  if (backing.empty()) {
    replace(domain, from);
    return;
  }
  backing.remove_child(backing.child("hugepages"));
  for (const xml_node& c : from.children()) {
    backing.prepend_copy(c);
  }
}

void merge_os_and_features(xml_node domain, const xml_node& plan_root, const VmPlan& plan) {
  xml_node os = child_or_new(domain, "os");
  xml_node type = child_or_new(os, "type");
  if (type.text().empty()) {
    type.text().set("hvm");
  }
  if (type.attribute("machine").empty()) {
    type.append_attribute("machine").set_value("q35");
  }
  if (plan.firmware == Firmware::uefi && os.attribute("firmware").empty() &&
      os.child("loader").empty()) {
    os.prepend_attribute("firmware").set_value("efi");
  }
  xml_node features = child_or_new(domain, "features");
  if (features.child("acpi").empty()) {
    features.prepend_child("acpi");
  }
  xml_node ioapic = child_or_new(features, "ioapic");
  if (ioapic.attribute("driver").empty()) {
    ioapic.append_attribute("driver");
  }
  ioapic.attribute("driver").set_value("qemu");

  const xml_node from = plan_root.child("sysinfo");
  if (from.empty()) {
    return;
  }
  for (xml_node s : children(domain, "sysinfo")) {
    if (std::string_view(s.attribute("type").value()) != "fwcfg") {
      continue;
    }
    for (const xml_node& e : children(s, "entry")) {
      if (std::string_view(e.attribute("name").value()) == kOvmfMmio64Key) {
        s.remove_child(e);
      }
    }
    for (const xml_node& c : from.children()) {
      s.append_copy(c);
    }
    return;
  }
  replace(domain, from);
}

void merge_devices(xml_node domain, const xml_node& plan_root) {
  xml_node devices = child_or_new(domain, "devices");
  const xml_node from = plan_root.child("devices");
  long highest = 0;
  for (const xml_node& c : children(devices, "controller")) {
    if (is_pci_controller(c)) {
      highest = std::max(highest, number(c.attribute("index").value()));
    }
  }
  renumber(from, highest);
  for (const xml_node& i : children(devices, "iommu")) {
    devices.remove_child(i);
  }
  for (const xml_node& c : from.children()) {
    devices.append_copy(c);
  }
}

// The plan's <qemu:override> under the prefix the domain declares for
// libvirt's QEMU namespace, or "qemu" declared on the domain.
void merge_override(xml_node domain, const xml_node& plan_root) {
  const xml_node from = plan_root.child("qemu:override");
  if (from.empty()) {
    return;
  }
  std::string prefix;
  for (const pugi::xml_attribute& a : domain.attributes()) {
    const std::string_view n = a.name();
    if (n.starts_with("xmlns:") && a.value() == kLibvirtQemuNs) {
      prefix = n.substr(6);
    }
  }
  if (prefix.empty()) {
    if (!domain.attribute("xmlns:qemu").empty()) {
      refuse(domain, "declares the prefix qemu for another namespace than libvirt's QEMU one");
    }
    domain.append_attribute("xmlns:qemu").set_value(std::string(kLibvirtQemuNs).c_str());
    prefix = "qemu";
  }
  const std::string override_name = prefix + ":override";
  xml_node to = domain.child(override_name.c_str());
  if (to.empty()) {
    to = domain.append_child(override_name.c_str());
  }
  for (const xml_node& c : from.children()) {
    xml_node copy = to.append_copy(c);
    // Rename qemu:X to PREFIX:X throughout the copy.
    for (const pugi::xpath_node& n : copy.select_nodes("descendant-or-self::*")) {
      const std::string name = n.node().name();
      if (name.starts_with("qemu:")) {
        n.node().set_name((prefix + name.substr(4)).c_str());
      }
    }
  }
}

void merge_metadata(xml_node domain, const xml_node& plan_root) {
  const xml_node from = plan_root.child("metadata");
  if (from.empty()) {
    return;
  }
  xml_node metadata = domain.child("metadata");
  if (metadata.empty()) {
    replace(domain, from);
    return;
  }
  for (const xml_node& c : metadata.children()) {
    if (declares_kvmai(c)) {
      refuse(domain, "has kvm-ai metadata (<" + printable(c.name()) +
                         ">) already: drop it or merge without group NAME");
    }
  }
  for (const xml_node& c : from.children()) {
    metadata.append_copy(c);
  }
}

}  // namespace

std::string libvirt_merge(const VmPlan& plan, std::string_view domain_xml,
                          std::string_view kvmai_group) {
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed =
      doc.load_buffer(domain_xml.data(), domain_xml.size(), kParse);
  if (!parsed) {
    throw OpError(
        fmt::format("merge: not XML ({} at byte {})", parsed.description(), parsed.offset));
  }
  xml_node domain = doc.document_element();
  if (std::string_view(domain.name()) != "domain") {
    throw OpError("merge: not a libvirt domain (its root element is <" + printable(domain.name()) +
                  ">)");
  }
  pugi::xml_document planned;
  planned.load_string(libvirt_xml(plan, kvmai_group).c_str(), kParse);
  const xml_node from = planned.document_element();

  check_machine(domain);
  check_devices(domain, plan, from);
  check_buses(domain, plan);
  check_firmware(domain, plan);

  merge_metadata(domain, from);
  domain.remove_child("currentMemory");  // libvirt sets it to <memory>
  for (const char* name : {"memory", "vcpu", "numatune", "cpu"}) {
    if (const xml_node e = from.child(name); !e.empty()) {
      replace(domain, e);
    }
  }
  merge_cputune(domain, from);
  merge_hugepages(domain, from);
  merge_os_and_features(domain, from, plan);
  merge_devices(domain, from);
  merge_override(domain, from);

  xml_node last = domain.prepend_child(pugi::node_comment);
  last.set_value(
      " kvmaictl vm plan, format libvirt, merged: the guest's size, NUMA cells, pinning, "
      "firmware and PCI devices are the plan's; the rest is the domain's ");
  // The plan's notes, as libvirt_xml() wrote them (fit for a comment).
  for (const xml_node& c : from.children()) {
    if (c.type() == pugi::node_comment && std::string_view(c.value()).starts_with(" note: ")) {
      last = domain.insert_copy_after(c, last);
    }
  }

  std::ostringstream out;
  doc.save(out, "  ", pugi::format_indent | pugi::format_no_declaration, pugi::encoding_utf8);
  return out.str();
}

}  // namespace kvmai::kvmaictl
