// The host as the commands that read it see it: the sysfs and procfs trees
// the global options name (--sysfs-root, --procfs-root).
#pragma once

#include <memory>

#include "cli/grammar.h"
#include "common/sysfs.h"
#include "model/pci_tree.h"

namespace kvmai::kvmaictl {

// The sysfs tree; throws OpError when it has no PCI devices directory (not
// a sysfs tree).
std::unique_ptr<TreeReader> open_sysfs(const GlobalOptions& opts);
// The procfs tree; throws OpError when it has no cmdline (not a procfs
// tree).
std::unique_ptr<TreeReader> open_procfs(const GlobalOptions& opts);

// How the PCI tree is read, as the options say.
PciTree::Options tree_options(const GlobalOptions& opts);

}  // namespace kvmai::kvmaictl
