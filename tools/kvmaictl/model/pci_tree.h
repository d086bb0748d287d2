// The PCI hierarchy as sysfs shows it: every function under
// bus/pci/devices, with its chain of upstream bridges taken from the
// resolved device path (devices/pciDDDD:BB/<bridge>/.../<device>).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/sysfs.h"
#include "model/pci_bars.h"
#include "model/pci_config.h"

namespace kvmai::kvmaictl {

enum class Role { endpoint, root_port, upstream_port, downstream_port, bridge };
std::string role_name(Role r);

// A root bus, "pciDDDD:BB" in sysfs: one host bridge.
struct PciRoot {
  std::string name;  // "pci0000:20"
  // Counted as a switch whose downstream ports are its root ports
  // (PciTree::Options::host_bridge_switches); topo calls it an expander.
  bool as_switch = false;
};

// A mediated device type a parent device offers (mdev_supported_types/<id>),
// e.g. a vGPU profile.
struct MdevType {
  std::string id;    // "nvidia-222"
  std::string name;  // "GRID T4-4Q", "" when the driver gives none
  std::optional<int> available_instances;
  std::string device_api;  // "vfio-pci"
};

// A vGPU type an SR-IOV VF of an NVIDIA GPU can take (vGPU 17 and later,
// on Ada, Hopper and newer GPUs: no mdev, but nvidia/creatable_vgpu_types
// and nvidia/current_vgpu_type below each VF).
struct VgpuType {
  int id = 0;        // 1414
  std::string name;  // "NVIDIA H200X-1-18C"
};

// A MIG GPU instance and its compute instances, as the NVIDIA driver lists
// them in /proc/driver/nvidia/capabilities/gpuN/mig (their profiles are
// only known to NVML).
struct MigInstance {
  int gpu_instance = 0;
  std::vector<int> compute_instances;
};

struct PciDevice {
  std::string bdf;                   // "0000:18:00.0"
  std::string root;                  // "pci0000:15"
  std::vector<std::string> parents;  // upstream bridges, top first
  std::string sysfs_path;            // "devices/pci0000:15/.../0000:18:00.0"
  std::uint32_t class_code = 0;      // 24 bits: class, subclass, prog-if
  std::uint16_t vendor = 0;
  std::uint16_t device = 0;
  // The board's ids: a Broadcom PEX switch's say which level of its
  // virtual hierarchy a port belongs to (NCCL flattens by them).
  std::uint16_t subsystem_vendor = 0;
  std::uint16_t subsystem_device = 0;
  std::optional<int> numa_node;  // nullopt when the kernel says -1
  std::optional<int> iommu_group;
  std::string iommu_group_type;  // "DMA", "DMA-FQ", "identity", ... or ""
  std::string driver;
  PciConfig config;
  std::string current_link_speed;
  std::string max_link_speed;
  std::optional<int> current_link_width;
  std::optional<int> max_link_width;
  std::optional<int> sriov_totalvfs;
  std::optional<int> sriov_numvfs;
  bool is_virtfn = false;       // an SR-IOV VF
  std::string physfn;           // a VF's PF ("0000:3f:00.0"), else ""
  std::optional<int> vf_index;  // a VF's number at its PF (virtfnN)
  std::vector<MdevType> mdev_types;
  // A VF's vGPU types: what it can become, and what it is (0: no vGPU
  // yet; nullopt: the VF has no nvidia/ directory).
  std::vector<VgpuType> vgpu_types;
  std::optional<int> vgpu_type;
  // MIG instances of a GPU bound to the nvidia driver (from procfs).
  std::vector<MigInstance> mig;
  bool boot_vga = false;
  Role role = Role::endpoint;
  // RDMA devices the function's driver registered (infiniband/<name>, as
  // mlx5_core, irdma and bnxt_re create): "mlx5_0". Empty for none, and
  // for any function bound to vfio-pci.
  std::vector<std::string> rdma_devices;
  std::string local_cpulist;  // "0-55,112-167"; "" when sysfs has none
  std::vector<Bar> bars;      // from `resource`; empty when unreadable

  std::uint16_t class_and_subclass() const { return static_cast<std::uint16_t>(class_code >> 8U); }
  bool is_bridge() const { return class_and_subclass() == 0x0604; }
  // GPUs: every display controller (class 0x03xx: 3D 0x0302 as NVIDIA's
  // datacenter GPUs, VGA 0x0300, "other" 0x0380 as AMD's Instinct MI200),
  // except the boot VGA device (a BMC's display) and SR-IOV VFs (vGPUs),
  // which topo lists as VFs.
  bool is_gpu() const;
  // NICs: Ethernet (0x0200) and InfiniBand (0x0207) physical functions.
  bool is_nic() const;
  // A NIC that carries GPU traffic: one with an RDMA device, or an
  // InfiniBand controller (0x0207), which is one whatever it is bound to
  // (vfio-pci hides the RDMA device). Other NICs are management NICs
  // (ixgbe, virtio) that neither nvidia-smi nor NCCL pair GPUs with.
  bool is_rdma_nic() const;
  // NVIDIA's NVSwitch: a bridge of class "other" (0x0680) from NVIDIA.
  bool is_nvswitch() const;
  bool is_pcie() const { return config.pcie.has_value(); }
  // Bound to vfio-pci or a vfio-pci variant driver (mlx5_vfio_pci, ...).
  bool bound_to_vfio() const {
    return driver == "vfio-pci" || driver.ends_with("_vfio_pci") || driver.ends_with("-vfio-pci");
  }
};

// `nvidia/creatable_vgpu_types`: "ID : NAME" lines (a header line, if
// any, is skipped).
std::vector<VgpuType> parse_vgpu_types(const std::string& text);

class PciTree {
 public:
  // What sysfs cannot say about the host.
  struct Options {
    // The root ports of each host bridge are one switch's downstream
    // ports: for a host whose ACS switches are emulated by host bridges
    // (a QEMU host's PCIe expander bridges, whose root ports have ACS
    // where QEMU's switch downstream ports have none). kvmaictl's
    // --host-bridge-switches.
    bool host_bridge_switches = false;
  };

  static PciTree read(const TreeReader& sys, const Options& options);
  static PciTree read(const TreeReader& sys) { return read(sys, Options{}); }
  // Adds what only procfs tells: MIG instances of NVIDIA GPUs.
  void read_procfs(const TreeReader& proc);

  // Sorted by BDF.
  const std::vector<PciDevice>& devices() const { return devices_; }
  const PciDevice* find(std::string_view bdf) const;
  const std::map<std::string, PciRoot>& roots() const { return roots_; }
  const PciRoot* root(const std::string& name) const;

 private:
  std::vector<PciDevice> devices_;
  std::map<std::string, PciRoot> roots_;
};

// "0000:18:00.0" shape check.
bool looks_like_bdf(std::string_view s);
// "DDDD:BB:DD.F", or "BB:DD.F" in domain 0, in either case: the address in
// the "DDDD:BB:DD.F" lower-case spelling; nullopt when it is not one.
std::optional<std::string> parse_bdf(std::string_view s);
// The "DDDD:BB:DD.F" spelling of an address.
std::string format_bdf(unsigned domain, unsigned bus, unsigned slot, unsigned function);

}  // namespace kvmai::kvmaictl
