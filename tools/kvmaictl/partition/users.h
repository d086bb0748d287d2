// Who uses a partition, so that nothing in use is destroyed: a process
// that holds it open through VFIO (its group /dev/vfio/N or its device
// cdev /dev/vfio/devices/vfioN), and the P2P groups of the kvmai module it
// is a member of while they are enabled.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/sysfs.h"

namespace kvmai::kvmaictl::partition {

// Device (PCI address or mdev UUID) -> what uses it, one phrase each:
// "open by pid 812 (qemu-system-x86)", "in enabled P2P group g0".
class Users {
 public:
  void add(const std::string& device, std::string who) { users_[device].push_back(std::move(who)); }
  // The first user of `device`, "" when it has none.
  std::string of(const std::string& device) const;
  const std::map<std::string, std::vector<std::string>>& all() const { return users_; }

 private:
  std::map<std::string, std::vector<std::string>> users_;
};

// Adds every VFIO user of `devices` (PCI addresses or mdev UUIDs) found in
// procfs: a process with an fd open on the device's group or cdev.
// Processes that vanish while read are skipped.
void add_vfio_users(Users& users, const std::vector<std::string>& devices, const TreeReader& sys,
                    const TreeReader& proc);

}  // namespace kvmai::kvmaictl::partition
