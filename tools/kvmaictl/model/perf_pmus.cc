#include "model/perf_pmus.h"

#include <array>

#include "common/names.h"

namespace kvmai::kvmaictl {
namespace {

constexpr const char* kEventSources = "bus/event_source/devices";

bool is_core_pmu(const std::string& name) {
  return name == "cpu" || name == "cpu_core" || name == "cpu_atom";
}

// The uncore PMUs kvmai can reserve for guests; the rest of event_source
// (software, tracepoint, msr, power, cstate_*, ibs_*) is not uncore.
bool is_uncore_pmu(const std::string& name) {
  return name.starts_with("uncore_") || name == "amd_l3" || name == "amd_df" ||
         name.starts_with("amd_umc_");
}

}  // namespace

MediatedPmu read_mediated_pmu(const TreeReader& sys) {
  MediatedPmu m;
  for (const auto* mod : {"kvm_intel", "kvm_amd"}) {
    const std::string dir = std::string("module/") + mod;
    if (!sys.exists(dir)) {
      continue;
    }
    m.module = mod;
    m.value = read_line(sys, dir + "/parameters/enable_mediated_pmu");
    if (!m.value) {
      m.state = MediatedPmu::State::unsupported;
    } else if (*m.value == "Y" || *m.value == "1") {
      m.state = MediatedPmu::State::enabled;
    } else {
      m.state = MediatedPmu::State::disabled;
    }
    break;
  }
  return m;
}

constexpr std::array<kvmai::Named<MediatedPmu::State>, 4> kMediatedStateNames{{
    {MediatedPmu::State::enabled, "enabled"},
    {MediatedPmu::State::disabled, "disabled"},
    {MediatedPmu::State::unsupported, "unsupported"},
    {MediatedPmu::State::kvm_not_loaded, "kvm-not-loaded"},
}};

std::string mediated_state_name(MediatedPmu::State state) {
  return std::string(kvmai::name_of(kMediatedStateNames, state));
}

std::optional<bool> read_nmi_watchdog(const TreeReader& proc) {
  const auto v = read_line(proc, "sys/kernel/nmi_watchdog");
  if (!v || v->empty()) {
    return std::nullopt;
  }
  return *v != "0";
}

PerfPmus read_perf_pmus(const TreeReader& sys) {
  PerfPmus p;
  for (const auto& name : sys.list(kEventSources)) {
    if (is_core_pmu(name)) {
      p.core.push_back(name);
    } else if (is_uncore_pmu(name)) {
      p.uncore.push_back(name);
    }
  }
  for (const auto& name : p.core) {
    if (auto model = read_line(sys, std::string(kEventSources) + "/" + name + "/caps/pmu_name")) {
      p.core_model = std::move(model);
      break;
    }
  }
  return p;
}

}  // namespace kvmai::kvmaictl
