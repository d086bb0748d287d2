// A recording of a machine for support and bug reports: the files topo,
// check and vm read of sysfs, procfs and /etc, laid out as they are, so
// that `kvmaictl --root DIR` reads the recording as it read the machine.
// Nothing that identifies the machine or its owner is copied: no serial
// numbers, UUIDs, VPD, MAC addresses, host names or environment.
#pragma once

#include <cstddef>
#include <filesystem>

#include "common/sysfs.h"

namespace kvmai::kvmaictl {

struct RecordCount {
  std::size_t files = 0;
  std::size_t links = 0;
};

// Writes DIR/sys from `sys`, DIR/proc from `proc` and DIR/etc (and the NCCL
// topology file /etc/nccl.conf names) from `root`; the last two may be
// nullptr. DIR must not exist yet or be empty; throws std::runtime_error.
RecordCount record_machine(const TreeReader& sys, const TreeReader* proc, const TreeReader* root,
                           const std::filesystem::path& dir);

}  // namespace kvmai::kvmaictl
