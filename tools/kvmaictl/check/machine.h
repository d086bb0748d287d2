// What kind of machine kvmaictl runs on: a host that gives GPUs and NICs
// to VMs, or a VM (a tenant's guest) that got them. check judges the two
// differently: a tenant cannot turn on VT-d or load kvmai, and a host does
// not need an NCCL topology file.
#pragma once

#include <string>

#include "common/sysfs.h"

namespace kvmai::kvmaictl {

enum class Place { host, guest };
std::string place_name(Place p);

enum class CpuVendor { intel, amd, other, unknown };

struct Machine {
  Place place = Place::host;
  CpuVendor vendor = CpuVendor::unknown;
  bool hypervisor = false;       // the CPU says it runs under one
  std::string virtual_platform;  // DMI's, when it names a hypervisor ("QEMU")
  std::string why;               // one line: what the place was told by
};

// From procfs (cpuinfo: vendor_id, the "hypervisor" flag; nullptr when not
// recorded) and sysfs (DMI, loaded modules). A machine is a guest when it
// runs under a hypervisor and hosts no VMs itself (no kvm module): the
// emulated host and other nested hosts load kvm and stay hosts.
Machine detect_machine(const TreeReader& sys, const TreeReader* proc);

}  // namespace kvmai::kvmaictl
