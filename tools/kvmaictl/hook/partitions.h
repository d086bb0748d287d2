// The partitions a domain's metadata asks for (<kvmai:partition>): made at
// `prepare begin` when they are not there, removed at `release end` when
// the element says remove="yes".
//
//   <kvmai:partition parent="mtty" type="mtty-2"
//                    uuid="6b3c2c8e-1f0a-4d6e-9a51-3e2f00c0ffee" remove="yes"/>
//   <kvmai:partition parent="0000:17:00.0" vfs="4" vf="2"
//                    vgpu-type="NVIDIA H100-10C"/>
//
// The metadata may be the tenant's: the hook touches only parents the
// host's hook.conf lists under [partition], and only partitions the
// domain is given by the operator's part of its XML (an mdev is one of
// its <hostdev type="mdev"> UUIDs, a VF the address of one of its PCI
// hostdevs). Nothing in use is destroyed, as for `kvmaictl partition`.
//
// libvirt's node-device API cannot serve here: a hook must not call back
// into libvirtd, which waits for it. The domain XML itself is the only
// record: no store of the hook's own.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "client/kvmai.h"
#include "hook/host_config.h"
#include "hook/metadata.h"
#include "partition/layout.h"

namespace kvmai::kvmaictl::hook {

struct PartitionPlan {
  std::string parent;
  // An mdev (type, uuid), or VF `vf` of a PF with `vfs` VFs.
  bool mdev = false;
  std::string type;
  std::string uuid;
  int vfs = 0;
  int vf = 0;
  std::string vf_address;  // where the VF will be: DDDD:BB:DD.F
  std::string vgpu_type;   // "" leaves it
  bool remove = false;
};

// Checks the specs against the host's configuration, the domain's devices
// and sysfs; throws HookError naming what is wrong.
std::vector<PartitionPlan> plan_partitions(const DomainXml& xml, const HostConfig& host,
                                           const TreeReader& sys);

// Makes what `plans` want that is not there. Returns the layout before,
// for undo_partitions() when a later step of `prepare` fails. Throws
// HookError when a change is refused or fails (rolled back).
partition::Layout make_partitions(const std::vector<PartitionPlan>& plans,
                                  const std::string& sysfs_root, Kvmai& k);

// Puts the parents of `plans` back as `before` had them.
void undo_partitions(const std::vector<PartitionPlan>& plans, const partition::Layout& before,
                     const std::string& sysfs_root);

// Removes the partitions of `plans` marked remove="yes"; what cannot go
// (in use, the kernel refused) is a warning.
void remove_partitions(const std::vector<PartitionPlan>& plans, const std::string& sysfs_root,
                       Kvmai& k, std::vector<std::string>& warnings);

}  // namespace kvmai::kvmaictl::hook
