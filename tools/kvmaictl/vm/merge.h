// `kvmaictl vm plan ... format libvirt merge FILE`: the plan put into a
// domain the operator already has (virsh dumpxml), instead of a domain of
// its own.
//
// What the plan decides replaces the domain's: the guest's size (<memory>,
// <vcpu>, <currentMemory> dropped), its NUMA cells and their binding
// (<cpu>, <numatune>), the vCPU and emulator pinning in <cputune>, huge
// pages when the plan asks for them, ACPI, the split irqchip, UEFI and the
// 64-bit MMIO window, the intel IOMMU.  Everything else of the domain is
// kept: its name, disks, NICs, consoles, its own PCI controllers and the
// devices on them.  The plan's PCI controllers are renumbered after the
// domain's highest index (libvirt fills a gap in the indexes with root
// ports of its own), and its hostdevs' addresses follow.
//
// Refused, naming what clashes: a domain that is not KVM on q35; one that
// assigns a planned device already, or uses one of the plan's aliases; one
// with a pcie-expander-bus or kvm-ai metadata of its own; an IOMMU of
// another model; the in-kernel IOAPIC; a firmware other than the plan's;
// and more buses of its own below pcie-root than fit under the plan's first
// expander, whose bus numbers the guest addresses (and the NCCL file) use.
#pragma once

#include <string>
#include <string_view>

#include "vm/plan.h"

namespace kvmai::kvmaictl {

// The domain XML `domain_xml` with the plan merged in, indented, without an
// XML declaration.  Throws OpError (one line) for XML that is not a domain
// and for every clash above.
std::string libvirt_merge(const VmPlan& plan, std::string_view domain_xml,
                          std::string_view kvmai_group = {});

}  // namespace kvmai::kvmaictl
