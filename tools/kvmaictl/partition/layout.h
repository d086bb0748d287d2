// How a host's partitionable devices are split now: the SR-IOV VFs of
// every PF that has the capability, the vGPU type of each VF where the
// driver offers types (NVIDIA vGPU 17+), and the mediated devices of every
// mdev parent (class/mdev_bus). Read from sysfs only.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/sysfs.h"
#include "model/pci_tree.h"

namespace kvmai::kvmaictl::partition {

struct Vf {
  int index = 0;       // virtfnN of its PF
  std::string bdf;     // "0000:17:00.4"
  std::string driver;  // "" when unbound
  // The vGPU type the VF has (0: none yet); nullopt when the VF offers
  // none (no nvidia/ directory).
  std::optional<int> vgpu_type;
};

struct Mdev {
  std::string uuid;  // lower case, as sysfs names it
  std::string type;  // "mtty-2", "nvidia-222"
};

// A device that can be partitioned: an SR-IOV PF, an mdev parent, or both.
struct Parent {
  // A PCI address, or the name of a non-PCI mdev parent under
  // class/mdev_bus ("mtty").
  std::string name;
  bool pci = false;
  std::string driver;
  // SR-IOV: nullopt for a parent without the capability.
  std::optional<int> total_vfs;
  int num_vfs = 0;
  // sriov_drivers_autoprobe: whether new VFs are probed by host drivers.
  std::optional<bool> autoprobe;
  std::vector<Vf> vfs;  // by index
  // What the VFs can become (from the first VF that lists types).
  std::vector<VgpuType> vgpu_types;
  // mdev: the types the parent offers and the instances that exist.
  std::vector<MdevType> mdev_types;
  std::vector<Mdev> mdevs;  // sorted by UUID

  bool sriov() const { return total_vfs.has_value(); }
  bool mdev_parent() const { return !mdev_types.empty(); }
  const Vf* vf(int index) const;
  const MdevType* mdev_type(const std::string& id) const;
  // A type of `vgpu_types` by its id or its name; nullptr if none.
  const VgpuType* vgpu(const std::string& id_or_name) const;
};

struct Layout {
  std::vector<Parent> parents;  // sorted by name

  static Layout read(const TreeReader& sys);
  const Parent* find(const std::string& name) const;
};

// Whether `s` is a UUID as sysfs names mdevs: 8-4-4-4-12 hex digits.
bool is_uuid(std::string_view s);

// The name of mdev `uuid`'s parent device: the mdev core puts an mdev below
// it (bus/mdev/devices/UUID -> devices/.../PARENT/UUID).  nullopt when
// there is no such mdev.
std::optional<std::string> mdev_parent(const TreeReader& sys, const std::string& uuid);

// An mdev parent's or PF's name as the user wrote it: a PCI address in any
// accepted spelling, or a class/mdev_bus name. nullopt when neither.
std::optional<std::string> parent_name(const std::string& word);

}  // namespace kvmai::kvmaictl::partition
