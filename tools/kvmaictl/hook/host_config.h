// The hook's host-side settings, /etc/kvmai/hook.conf: what only the host
// operator may decide for a domain, since a domain's metadata may come
// from its tenant (libvirt.rst, "Threat model").  An INI file, read with
// Boost.Program_options' config-file parser:
//
//   # Domains whose uncore units may be reserved on packages that they
//   # share with other tenants (kvmaictl pmu assign ... shared): their
//   # counters then see the others' traffic, so each is a host's choice.
//   [pmu]
//   shared = vm1
//   shared = vm7
//
//   # Parents whose partitions domains may ask for in their metadata
//   # (<kvmai:partition>): the hook creates them at prepare, and removes
//   # them at release when asked.  Their other partitions may be
//   # destroyed on the way (a VF count changes through 0), so each is a
//   # host's choice.
//   [partition]
//   parent = 0000:17:00.0
//   parent = mtty
//
// No file is the defaults: nothing shared, no parent partitioned.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kvmai::kvmaictl::hook {

inline constexpr std::string_view kHostConfigPath = "/etc/kvmai/hook.conf";

struct HostConfig {
  std::string path{kHostConfigPath};           // where it was read from, for messages
  std::vector<std::string> pmu_shared;         // [pmu] shared
  std::vector<std::string> partition_parents;  // [partition] parent

  bool shares_packages(std::string_view vm) const;
  bool partitions(std::string_view parent) const;
};

// Reads `path`; a file that does not exist gives the defaults.  Throws
// HookError naming the file: unreadable, writable by anyone but its owner
// or owned by anyone but root (or the caller, for tests), or holding
// anything but the settings above.
HostConfig read_host_config(const std::string& path);

}  // namespace kvmai::kvmaictl::hook
