// PMU ownership as the pmu and monitor commands print it (the spec's pmu,
// unit, msr-range, pmu-host and conflict attribute sets, client/kvmai.h).
// JSON keys are the spec's attribute names with underscores (a VM unit's
// "msr" array holds its msr nests, beside the msr_ranges count); every key
// is printed, null when the module left the attribute out, so the schema
// does not depend on what a VM owns.
#pragma once

#include <optional>
#include <string_view>

#include "cli/print.h"
#include "client/kvmai.h"
#include "model/perf_pmus.h"

namespace kvmai::kvmaictl {

// One VM's record: a block of lines in text ("vm NAME core yes ..." and a
// line per unit, with `verbose` each unit's MSR ranges below it), an
// object under `key` in JSON (an array element when `key` is empty; the
// MSR ranges always).
void print_pmu(Printer& out, const PmuRecord& pmu, bool verbose, std::string_view key = {});

// The VM, what it owns and its CPUs on one line (text only).
void print_pmu_summary(Printer& out, const PmuRecord& pmu);

// What the host's PMUs allow (pmu-host-get), with what sysfs and procfs say
// about KVM's mediated vPMU and the NMI watchdog, under `key` in JSON.
void print_pmu_host(Printer& out, const PmuHost& host, const MediatedPmu& kvm,
                    std::optional<bool> nmi_watchdog, std::string_view key);

}  // namespace kvmai::kvmaictl
