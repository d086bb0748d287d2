// `kvmaictl vm plan ... format libvirt`: the plan as libvirt domain XML.
//
// A <domain type="kvm"> holding what the plan decides and nothing else: the
// vCPUs and their pinning, the guest NUMA cells bound to their host nodes
// (on huge pages when asked), the q35 machine with ACPI, its firmware and
// 64-bit MMIO window (vm/platform.h), host-passthrough CPU with the host's
// physical address bits, the split irqchip and the intel IOMMU, the PCI
// controllers that mirror the host's tree, and the hostdevs on them.  A
// user adds <name> (and disks, NICs, consoles...) or merges the elements
// into a domain of their own.
//
// Controller indexes: libvirt matches a device's <address bus="N"> with the
// PCI controller of index N; the guest's bus numbers come from the firmware
// and the expanders' busNr, not from the indexes (libvirt's
// docs/pci-addresses.rst).  libvirt also adds a pcie-root-port on pcie-root
// for every index missing below the highest one (qemuDomainPCIAddressSetCreate;
// formatdomain.rst: "Leaving gaps in the PCI controller indexes might lead
// to an invalid configuration").  So the controllers are numbered 1..N
// without gaps, depth first from each expander in busNr order and children
// in slot order: the order in which the guest numbers their buses, so a
// parent's index is always below its children's and the index order is
// the guest bus order (VmPlan's `secondary`).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "vm/plan.h"
#include "xml/xml.h"

namespace kvmai::kvmaictl {

// libvirt's namespace for QEMU-only elements (<qemu:override>).
inline constexpr std::string_view kLibvirtQemuNs = "http://libvirt.org/schemas/domain/qemu/1.0";

// kvm-ai's namespace for its own <metadata> element, <kvmai:vm>, which
// `kvmaictl hook qemu` reads (hook/metadata.h; the schema is
// Documentation/admin-guide/kvmai/kvmai-libvirt.rng).
inline constexpr std::string_view kKvmaiLibvirtNs = "https://kvm-ai.dev/xmlns/libvirt/1";

// The libvirt controller index of each plan bridge, by bridge id.
std::map<std::string, int> libvirt_controller_indexes(const VmPlan& plan);

// The user alias (<alias name="ua-...">) of a planned device: libvirt only
// keeps aliases that start with "ua-" and hold [A-Za-z0-9_.-].
std::string libvirt_alias(const GuestDevice& d);

// With `kvmai_group`, the domain's <metadata> asks `kvmaictl hook qemu`
// for a translated P2P group of that name holding every hostdev.
xml::Doc libvirt_domain(const VmPlan& plan, std::string_view kvmai_group = {});

// libvirt_domain() indented, without an XML declaration (as virsh dumpxml
// prints a domain), ending in a newline.
std::string libvirt_xml(const VmPlan& plan, std::string_view kvmai_group = {});

}  // namespace kvmai::kvmaictl
