// Readiness checks for near-bare-metal GPU/NIC passthrough: each a
// pass/warn/fail with its evidence and what fixes it. On a host they judge
// the host; in a guest, what the tenant's workload (NCCL, GPUDirect) needs
// and whether the tenant or only the host operator can fix it.
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "check/machine.h"
#include "common/sysfs.h"
#include "model/topology.h"

namespace kvmai::kvmaictl {

// skip: the input the check needs was not given (a snapshot without
// procfs); never counted as a pass.
enum class Status { pass, warn, fail, skip };
std::string status_name(Status s);

// Who can act on a finding.
enum class FixBy { here, host };
std::string fix_by_name(FixBy f);

struct CheckResult {
  std::string id;  // "iommu", "acs", ...
  Status status = Status::pass;
  std::string evidence;
  std::string fix;  // empty when nothing to do
  // host: only the host operator can (a guest's finding about how the VM
  // was laid out); here: whoever runs kvmaictl.
  FixBy fix_by = FixBy::here;
};

struct CheckInput {
  const TreeReader& sys;
  const TreeReader* proc = nullptr;  // nullptr: not given (a sysfs snapshot)
  // The machine's own files (/, or --root DIR), for /etc/nccl.conf and
  // the NCCL topology file it names; nullptr: not given.
  const TreeReader* root = nullptr;
  const Topology& topo;
  Machine machine;
  // The devices (BDFs) of each enabled kvmai P2P group: ports relaxed
  // between them were relaxed for one VM, on purpose.
  std::vector<std::set<std::string>> p2p_groups;
};

// Every check of the input's place, in a fixed order.
std::vector<CheckResult> run_checks(const CheckInput& in);
// The same on a host, from the trees alone.
std::vector<CheckResult> run_checks(const TreeReader& sys, const TreeReader& proc,
                                    const Topology& topo);

// The ids run_checks reports at `place`, in order.
const std::vector<std::string>& check_ids(Place place);

// The checks of one place, in order: the host's (checks.cc), the
// guest's (guest_checks.cc).
using CheckFn = CheckResult (*)(const CheckInput&);
using CheckTable = std::vector<std::pair<std::string, CheckFn>>;
const CheckTable& host_checks();
const CheckTable& guest_checks();

// Shared by the host and guest checks.
namespace check_util {
// "a, b, c and 4 more" for long lists.
std::string list_some(const std::vector<std::string>& v, std::size_t most = 4);
// GPUs and NICs: what the checks look at.
std::vector<const Named*> members(const Topology& t);
// Why a function's PCIe capability is missing: "not PCIe" (absent) or
// "config space unreadable" (with "run kvmaictl as root" only when the
// config file was cut to the 64 bytes sysfs gives other users).
bool pcie_absent(const PciDevice& d);
bool config_cut_for_user(const PciDevice& d);
// "run kvmaictl as root" when a config space was cut for a user, else "".
std::string unreadable_fix(const std::vector<const PciDevice*>& devs);

// MaxReadReq of every GPU and NIC, the same finding on hosts and guests;
// only the advice differs.
struct MrrsScan {
  std::vector<std::string> low;     // "gpu0 512"
  std::vector<std::string> absent;  // no PCIe capability
  std::vector<const PciDevice*> unknown;
  std::vector<std::string> unknown_names;
};
MrrsScan scan_mrrs(const Topology& t);
// Reserved huge pages, "512 x 2048kB" per size with any, and whether 1G
// pages are among them.
struct HugePages {
  std::vector<std::string> reserved;
  bool one_g = false;
};
HugePages reserved_hugepages(const TreeReader& sys);
// GPUs and NICs whose NUMA node the kernel does not know, and the nodes of
// the others.
struct NumaScan {
  std::vector<std::string> unknown;
  std::set<int> nodes;
};
NumaScan scan_numa(const Topology& t);
// A MaxReadReq check result: `low_fix` for devices below 4096.
CheckResult mrrs_result(const MrrsScan& s, const std::string& low_fix);
}  // namespace check_util

}  // namespace kvmai::kvmaictl
