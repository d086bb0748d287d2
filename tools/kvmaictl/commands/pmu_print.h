// PMU ownership as the kvmai module reports it (the spec's pmu, unit,
// msr-range, pmu-host and conflict attribute sets), shared by the pmu and
// monitor objects. JSON keys are the spec's attribute names with
// underscores (a VM unit's "msr" array holds its msr nests, beside the
// msr_ranges count); every key is printed, null when the module left the
// attribute out, so the schema does not depend on what a VM owns.
#pragma once

#include <cerrno>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "cli/print.h"
#include "client/genl.h"
#include "model/perf_pmus.h"

namespace kvmai::kvmaictl {

// One VM's record: a block of lines in text ("vm NAME core yes ..." and a
// line per unit, with `verbose` each unit's MSR ranges below it), an
// object under `key` in JSON (an array element when `key` is empty; the
// MSR ranges always).
void print_pmu(Printer& out, const AttrSet& pmu, bool verbose, std::string_view key = {});

// The VM, what it owns and its CPUs on one line (text only).
void print_pmu_summary(Printer& out, const AttrSet& pmu);

// The names of the units a VM's record holds, in the module's order ("?"
// for a unit without one).
std::vector<std::string> unit_names(const AttrSet& pmu);

// A record that owns neither the core PMU nor a unit: what pmu-change-ntf
// sends once a VM's resources are all released.
bool pmu_released(const AttrSet& pmu);

// What the host's PMUs allow (pmu-host-get), with what sysfs and procfs say
// about KVM's mediated vPMU and the NMI watchdog, under `key` in JSON.
void print_pmu_host(Printer& out, const AttrSet& host, const MediatedPmu& kvm,
                    std::optional<bool> nmi_watchdog, std::string_view key);

// Runs `call`, a request of a PMU command. Generic netlink answers a
// command the family does not have with EOPNOTSUPP and no extack: a module
// older than PMU ownership. Say so, since "Operation not supported" alone
// reads like a refusal.
template <typename F>
auto pmu_module_call(F call) {
  try {
    return call();
  } catch (const GenlError& e) {
    if (e.kind() == GenlError::Kind::kernel && e.error() == EOPNOTSUPP && e.extack().empty()) {
      throw OpError(std::string(e.what()) + " (a kvmai module without PMU operations?)");
    }
    throw;
  }
}

}  // namespace kvmai::kvmaictl
