// NCCL's topology file for a planned guest: `kvmaictl vm nccl-topo`.
//
// NCCL (src/graph/xml.cc, topo.cc) reads NCCL_TOPO_FILE before it looks at
// sysfs, and a value in the file wins over what sysfs says.  The file here
// holds what NCCL would build from the guest's sysfs, with two corrections:
//
// - NCCL's tree: a device hangs off the <pci> of the bridge two levels up
//   in its sysfs path (a switch's upstream port, when it sits below a
//   downstream port), or off the <cpu> of its NUMA node when that is a root
//   bus.  Devices and switches are named by their guest bus ids (VmPlan's
//   guest_bdf and the bridges' slots and bus numbers).
// - Host switches the guest cannot show: a host root bus kvmaictl counts as
//   a switch (PciRoot::as_switch, see pci_tree.h) becomes a pxb-pcie in the guest,
//   whose root ports NCCL would put straight on the CPU (PHB).  A synthetic
//   bridge (bus id ffff:ff:NN.0, which no guest device has) groups them as
//   on the host.
// - Link speeds and widths are the host's: QEMU's switch ports claim
//   2.5 GT/s x1, which would make NCCL rank every path through them slow.
#pragma once

#include <string>

#include "model/pci_tree.h"
#include "vm/plan.h"

namespace kvmai::kvmaictl {

// NCCL's classes for the devices it uses: GPUs (0x03....) and NICs (0x02....).
// Other assigned devices are left out of the file (NCCL would take an
// unknown class for a switch).
bool nccl_uses(const PciDevice& d);

// The document, indented, with its XML declaration.
std::string nccl_topology_xml(const VmPlan& plan, const PciTree& host);

}  // namespace kvmai::kvmaictl
