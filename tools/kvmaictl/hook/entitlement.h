// Whether a domain may hold its uncore units whole: an uncore unit counts
// everything that crosses its part of the package, not only what the
// owner's vCPUs do there, so owning every CPU of the package is not enough
// (Documentation/admin-guide/kvmai/pmu-ownership.rst, "Entitlement").
//
//  - A PCIe-stack unit (Intel's IIO, IRP, M2PCIe, CXL stacks) counts every
//    function below the stack's root bus: every endpoint there must be one
//    of the domain's PCI hostdevs.  The stack is the one the kernel's
//    driver maps the unit to on each die the domain's vCPUs run on
//    (event_source/devices/UNIT/dieN, "SSSS:BB").
//  - Every other unit (memory controllers, fabric, caches, which see the
//    package's DRAM traffic and DDIO writes) counts the package's memory
//    traffic: the domain's memory must be bound strictly to NUMA nodes of
//    the packages its vCPUs run on, by its own <numatune>.
//
// That no other tenant's memory or DMA reaches those nodes is the host
// operator's part; a domain the host's configuration shares packages for
// holds its units shared, without a counter page, and is not checked.
#pragma once

#include <string>
#include <string_view>

#include "common/sysfs.h"
#include "hook/host_config.h"
#include "hook/metadata.h"

namespace kvmai::kvmaictl::hook {

enum class UnitCounts { pcie_stack, memory };

// What uncore unit `unit` counts, by its driver's type name: the name
// without a vendor prefix ("uncore_", "amd_") or an instance number.
UnitCounts unit_counts(std::string_view unit);

// Throws HookError naming domain `vm` and the first unit of `pmu` that it
// may not hold whole, and why.
void check_entitlement(const std::string& vm, const PmuPlan& pmu, const DomainXml& xml,
                       const TreeReader& sys, const HostConfig& host);

}  // namespace kvmai::kvmaictl::hook
