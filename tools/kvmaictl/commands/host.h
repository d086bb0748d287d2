// The host as the commands that read it see it: the sysfs and procfs trees
// the global options name (--sysfs-root, --procfs-root).
#pragma once

#include <memory>
#include <string>

#include "cli/grammar.h"
#include "common/sysfs.h"
#include "model/pci_tree.h"

namespace kvmai::kvmaictl {

// The sysfs tree; throws OpError when it has no PCI devices directory (not
// a sysfs tree).
std::unique_ptr<TreeReader> open_sysfs(const GlobalOptions& opts);
// The procfs tree; throws OpError when it has no cmdline (not a procfs
// tree), or when a recorded sysfs tree was given without one.
std::unique_ptr<TreeReader> open_procfs(const GlobalOptions& opts);
// The same, or nullptr for a recorded sysfs tree given alone: its live
// /proc would describe another machine.
std::unique_ptr<TreeReader> open_procfs_if_given(const GlobalOptions& opts);
// The machine's own files (/, or --root DIR), or nullptr when only
// --sysfs-root/--procfs-root were given.
std::unique_ptr<TreeReader> open_machine_root(const GlobalOptions& opts);

// The text of file @path, which a command's @word names ("merge", "PLAN");
// "-" is standard input, as for `virsh dumpxml VM | kvmaictl vm plan ...
// merge -`.  Throws OpError naming both when it cannot be read.
std::string read_input(const std::string& word, const std::string& path);

// How the PCI tree is read, as the options say.
PciTree::Options tree_options(const GlobalOptions& opts);

}  // namespace kvmai::kvmaictl
