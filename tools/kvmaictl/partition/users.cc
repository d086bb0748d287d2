#include "partition/users.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "partition/layout.h"

namespace kvmai::kvmaictl::partition {
namespace {

// Where sysfs has a device: PCI functions under bus/pci, mdevs under
// bus/mdev.
std::string device_dir(const std::string& device) {
  return (is_uuid(device) ? "bus/mdev/devices/" : "bus/pci/devices/") + device;
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

}  // namespace

std::string Users::of(const std::string& device) const {
  const auto it = users_.find(device);
  return it == users_.end() || it->second.empty() ? "" : it->second.front();
}

void add_vfio_users(Users& users, const std::vector<std::string>& devices, const TreeReader& sys,
                    const TreeReader& proc) {
  // The character devices that reach each device: its group's node and,
  // with iommufd, its own cdev.
  std::map<std::string, std::vector<std::string>> nodes;  // "/dev/vfio/12" -> devices
  for (const auto& d : devices) {
    const std::string dir = device_dir(d);
    if (const auto g = link_name(sys, dir + "/iommu_group")) {
      nodes["/dev/vfio/" + *g].push_back(d);
      // An mdev's (or a no-IOMMU device's) group node has a prefix.
      nodes["/dev/vfio/noiommu-" + *g].push_back(d);
    }
    for (const auto& cdev : sys.list(dir + "/vfio-dev")) {
      nodes["/dev/vfio/devices/" + cdev].push_back(d);
    }
  }
  if (nodes.empty()) {
    return;
  }
  for (const auto& pid : proc.list("")) {
    if (!all_digits(pid)) {
      continue;
    }
    for (const auto& fd : proc.list(pid + "/fd")) {
      const auto target = proc.link_target(pid + "/fd/" + fd);
      if (!target) {
        continue;
      }
      const auto it = nodes.find(*target);
      if (it == nodes.end()) {
        continue;
      }
      const auto comm = read_line(proc, pid + "/comm").value_or("?");
      for (const auto& d : it->second) {
        const auto who = fmt::format("open by pid {} ({})", pid, comm);
        const auto& have = users.all();
        const auto known = have.find(d);
        if (known == have.end() ||
            std::find(known->second.begin(), known->second.end(), who) == known->second.end()) {
          users.add(d, who);
        }
      }
    }
  }
}

}  // namespace kvmai::kvmaictl::partition
