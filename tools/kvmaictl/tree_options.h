// --sysfs-root / --procfs-root, shared by the commands that read the host
// from its pseudo file systems (topo, check).
#pragma once

#include <boost/program_options.hpp>
#include <memory>
#include <string>

#include "common/sysfs.h"

namespace kvmai::kvmaictl {

struct TreeRoots {
  std::string sysfs = "/sys";
  std::string procfs = "/proc";
};

// Parses `[OPERAND] --sysfs-root DIR [--procfs-root DIR]`; returns OPERAND
// or "".
std::string parse_tree_args(const std::vector<std::string>& args, TreeRoots& roots,
                            bool with_procfs);

// Opens the sysfs tree; throws OpError when it has no PCI devices directory.
std::unique_ptr<TreeReader> open_sysfs(const TreeRoots& roots);
std::unique_ptr<TreeReader> open_procfs(const TreeRoots& roots);

}  // namespace kvmai::kvmaictl
