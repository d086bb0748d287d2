// The host's PMUs as sysfs and procfs show them, for check and the pmu
// object: the perf PMUs the kernel registered, whether KVM gives guests the
// mediated vPMU, and the NMI watchdog that stands in its way. No module
// needed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/sysfs.h"

namespace kvmai::kvmaictl {

// KVM's enable_mediated_pmu parameter (Linux 7.0+).
struct MediatedPmu {
  enum class State {
    enabled,        // Y: guests get the counters
    disabled,       // N: guests get the emulated vPMU
    unsupported,    // KVM loaded, but this kernel has no such parameter
    kvm_not_loaded  // neither kvm_intel nor kvm_amd
  };
  State state = State::kvm_not_loaded;
  std::string module;                // kvm_intel or kvm_amd; empty when neither is loaded
  std::optional<std::string> value;  // the parameter as read
};

// The first of kvm_intel, kvm_amd that is loaded, and its parameter.
MediatedPmu read_mediated_pmu(const TreeReader& sys);
// "enabled", "disabled", "unsupported", "kvm-not-loaded".
std::string mediated_state_name(MediatedPmu::State state);

// /proc/sys/kernel/nmi_watchdog: whether the hard lockup detector is on;
// nullopt when the kernel has none (or the file is unreadable).
std::optional<bool> read_nmi_watchdog(const TreeReader& proc);

// The hardware PMUs in /sys/bus/event_source/devices, sorted by name.
struct PerfPmus {
  std::vector<std::string> core;    // cpu; cpu_atom and cpu_core on hybrid Intel
  std::vector<std::string> uncore;  // uncore_* (Intel), amd_l3, amd_df, amd_umc_* (AMD)
  // caps/pmu_name of the core PMU ("sapphire_rapids"); Intel only.
  std::optional<std::string> core_model;
};

PerfPmus read_perf_pmus(const TreeReader& sys);

}  // namespace kvmai::kvmaictl
