#include "commands/host.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/errors.h"
#include "client/names.h"

namespace kvmai::kvmaictl {

std::unique_ptr<TreeReader> open_sysfs(const GlobalOptions& opts) {
  auto sys = std::make_unique<FsReader>(opts.sysfs_root);
  if (!sys->exists("bus/pci/devices")) {
    throw OpError(
        fmt::format("no bus/pci/devices under \"{}\" (not a sysfs tree)", opts.sysfs_root));
  }
  return sys;
}

std::unique_ptr<TreeReader> open_procfs_if_given(const GlobalOptions& opts) {
  if (opts.sysfs_root != kSysfsRoot && !opts.procfs_given) {
    return nullptr;
  }
  return open_procfs(opts);
}

std::unique_ptr<TreeReader> open_machine_root(const GlobalOptions& opts) {
  if (opts.machine_root.empty()) {
    return nullptr;
  }
  return std::make_unique<FsReader>(opts.machine_root);
}

std::unique_ptr<TreeReader> open_procfs(const GlobalOptions& opts) {
  if (opts.sysfs_root != kSysfsRoot && !opts.procfs_given) {
    throw OpError(fmt::format(
        "no procfs for the sysfs tree \"{}\": give --procfs-root DIR, or --root DIR for a "
        "recorded machine",
        opts.sysfs_root));
  }
  auto proc = std::make_unique<FsReader>(opts.procfs_root);
  if (!proc->exists("cmdline")) {
    throw OpError(fmt::format("no cmdline under \"{}\" (not a procfs tree)", opts.procfs_root));
  }
  return proc;
}

PciTree::Options tree_options(const GlobalOptions& opts) {
  return {.host_bridge_switches = opts.host_bridge_switches};
}

std::string read_input(const std::string& word, const std::string& path) {
  std::ostringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
    return text.str();
  }
  std::ifstream in(path);
  if (!in) {
    throw OpError(word + " " + printable(path) + ": " + std::strerror(errno));
  }
  text << in.rdbuf();
  return text.str();
}

}  // namespace kvmai::kvmaictl
