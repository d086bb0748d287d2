// Host readiness checks for near-bare-metal GPU/NIC passthrough: each a
// pass/warn/fail with its evidence and the command that fixes it.
#pragma once

#include <string>
#include <vector>

#include "common/sysfs.h"
#include "model/topology.h"

namespace kvmai::kvmaictl {

enum class Status { pass, warn, fail };
std::string status_name(Status s);

struct CheckResult {
  std::string id;  // "iommu", "acs", ...
  Status status = Status::pass;
  std::string evidence;
  std::string fix;  // empty when nothing to do
};

// Every check, in a fixed order. `sys` and `proc` are the sysfs and procfs
// trees; `topo` is built from `sys`.
std::vector<CheckResult> run_checks(const TreeReader& sys, const TreeReader& proc,
                                    const Topology& topo);

// The ids run_checks reports, in order.
const std::vector<std::string>& check_ids();

}  // namespace kvmai::kvmaictl
