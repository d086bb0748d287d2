// The guest layout for a set of host devices: `kvmaictl vm plan`.
//
// The guest mirrors the host's PCIe tree above the assigned devices, so that
// every pair keeps its path class (PIX/PXB/PHB/NODE/SYS) in the guest: one
// pxb-pcie expander per host root bus (on the guest NUMA node of that root
// bus's host node), and below it one emulated bridge per host bridge on the
// devices' paths (root port, switch upstream port, downstream port).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/sysfs.h"
#include "model/topology.h"

namespace kvmai::kvmaictl {

// The guest's firmware: OVMF (UEFI) places 64-bit BARs in the window the
// plan asks of it; SeaBIOS sizes its own.
enum class Firmware { uefi, bios };

// Where the guest's threads run: each vCPU on its node's host CPUs, each
// on one host CPU of its node (1:1), or wherever the host schedules them.
// QEMU's own threads run on the nodes' CPUs the vCPUs leave.
enum class Pinning { node, vcpu, none };

struct PlanRequest {
  // gpuN, nicN, BDFs (DDDD:BB:DD.F or BB:DD.F), mdev UUIDs
  std::vector<std::string> devices;
  int vcpus = 0;
  int memory_mib = 0;
  std::string hugepages;  // a hugetlbfs mount to back guest memory, "" for none
  Firmware firmware = Firmware::uefi;
  std::uint64_t mmio64 = 0;  // the 64-bit MMIO window in bytes; 0: sized from the BARs
  Pinning pin = Pinning::node;
};

struct GuestNode {
  int id = 0;         // guest NUMA node
  int host_node = 0;  // the host node whose devices, CPUs and memory it gets
  int vcpus = 0;
  int memory_mib = 0;
  std::string host_cpus;  // the host node's cpulist, "" if unknown
};

struct GuestBridge {
  std::string id;      // QEMU id: pxb0, rp0, up0, dp0
  std::string model;   // pxb-pcie, pcie-root-port, x3130-upstream, xio3130-downstream
  std::string bus;     // parent's id (pcie.0 for an expander)
  std::string host;    // the host bridge or root bus it stands for
  int bus_nr = 0;      // expanders only
  int numa_node = -1;  // expanders only
  int chassis = 0;     // root and downstream ports
  // pcie-root-port only: the host port's maximum link as QEMU's x-speed
  // ("2_5" ... "64") and x-width, so that the guest's sysfs shows it; ""
  // and 0 when the host's is unknown or not one QEMU can show.
  std::string x_speed{};
  int x_width = 0;
  int slot = -1;            // on the parent's bus; -1: QEMU picks (expanders on pcie.0)
  int secondary = 0;        // guest bus number of the bus it opens (see plan_vm)
  std::string guest_bdf{};  // its own guest address, "" for expanders (see plan_vm)
};

struct GuestDevice {
  std::string name;      // "gpu0", or the BDF (UUID of an mdev) for other devices
  std::string host_bdf;  // an mdev's parent's: the mdev shares its parent's path
  std::string mdev{};    // the mediated device's UUID, "" for a PCI function
  std::string bus;       // id of the guest bridge it sits below
  int slot = 0;          // on that bridge's bus
  int function = 0;
  bool multifunction = false;  // function 0 of a slot with more functions
  std::string guest_bdf;       // where the guest finds it (see plan_vm)
  int guest_node = 0;
  std::optional<int> clique;  // NVIDIA GPUDirect clique id
};

// One vCPU's host CPUs; QEMU's own threads' (emulator) host CPUs.
struct VcpuPin {
  int vcpu = 0;
  std::string cpus;  // a CPU list: "0-55,112-167", "3"
};

struct VmPlan {
  std::vector<GuestNode> nodes;
  std::vector<GuestBridge> bridges;
  std::vector<GuestDevice> devices;
  std::vector<std::string> notes;  // what the plan cannot do for the guest
  std::string hugepages;           // PlanRequest's
  std::uint64_t hugepage_kib = 0;  // the page size of that mount

  Firmware firmware = Firmware::uefi;
  // The devices' 64-bit prefetchable BARs laid out as guest firmware lays
  // them out (vm/platform.h), and the window the plan asks OVMF for: at
  // least that, a power of two, not below OVMF's own 32 GiB default.
  std::uint64_t mmio64_need = 0;
  std::uint64_t mmio64 = 0;
  std::optional<int> phys_bits;  // the host's, which the guest gets; nullopt: unknown

  Pinning pin = Pinning::node;
  std::vector<VcpuPin> vcpu_pins;  // empty: not pinned
  std::string emulator_cpus;       // "" : not pinned

  // How QEMU assigns the devices: "container" (the type1 VFIO container,
  // which maps peer BARs for P2P; see vm/platform.h).
  std::string vfio_backend;
};

// Guest addresses: every bridge and device gets an explicit slot, and the
// guest bus numbers follow from them the way SeaBIOS numbers buses (and
// Linux keeps them): depth first below each expander, children in slot
// order, starting at the expander's bus_nr.  A device's guest_bdf is what
// the guest's sysfs and NCCL's busid will show.
//
// A mediated device sits where its parent would, below the parent's host
// bridges and on its node: the guest sees the path its DMA takes.
//
// Throws OpError (one line, naming the device) for unknown devices, devices
// not bound to vfio-pci, mdevs bound to no driver or of a parent that is not
// a PCI device, IOMMU groups only partly assigned and layouts that do not
// fit; UsageError for sizes that cannot be split over the nodes.
// @proc (the host's procfs, nullptr when unknown) gives the host's
// physical address bits and the page size of a hugepages mount.
VmPlan plan_vm(const Topology& topo, const TreeReader& sys, const PlanRequest& req,
               const TreeReader* proc = nullptr);

// The plan as QEMU arguments, one option and its value per element pair.
std::vector<std::string> qemu_args(const VmPlan& plan);

}  // namespace kvmai::kvmaictl
