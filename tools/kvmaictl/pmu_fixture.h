// kvmai replies for the pmu and monitor tests.
#pragma once

#include <linux/kvmai.h>

#include <string>

#include "group_fixture.h"

namespace kvmaictl::testing {

inline AttrSet unit(const std::string& name, std::uint32_t type, std::uint32_t host_events,
                    const std::string& vm = "") {
  AttrSet u;
  u.put_string(KVMAI_A_UNIT_NAME, name)
      .put_u32(KVMAI_A_UNIT_TYPE, type)
      .put_u32(KVMAI_A_UNIT_MSR_RANGES, 2)
      .put_u32(KVMAI_A_UNIT_HOST_EVENTS, host_events);
  if (!vm.empty()) {
    u.put_string(KVMAI_A_UNIT_VM, vm);
  }
  return u;
}

// pmu-host-get: capable, the NMI watchdog's event and a perf user in the
// way, three units of which two are taken.
inline AttrSet sample_pmu_host() {
  AttrSet watchdog;
  watchdog.put_string(KVMAI_A_CONFLICT_PMU, "cpu")
      .put_u32(KVMAI_A_CONFLICT_CPU, 0)
      .put_u32(KVMAI_A_CONFLICT_PID, 0)
      .put_u64(KVMAI_A_CONFLICT_CONFIG, 0x3c);
  AttrSet perf;
  perf.put_string(KVMAI_A_CONFLICT_PMU, "cpu")
      .put_u32(KVMAI_A_CONFLICT_CPU, 3)
      .put_u32(KVMAI_A_CONFLICT_PID, 4242)
      .put_string(KVMAI_A_CONFLICT_COMM, "perf")
      .put_u64(KVMAI_A_CONFLICT_CONFIG, 0xc0);
  AttrSet h;
  h.put_flag(KVMAI_A_PMU_HOST_CORE_CAPABLE)
      .put_u32(KVMAI_A_PMU_HOST_CORE_FENCES, 1)
      .put_u32(KVMAI_A_PMU_HOST_CORE_INCLUDE_GUEST_EVENTS, 2)
      .put_nested(KVMAI_A_PMU_HOST_CONFLICT, watchdog)
      .put_nested(KVMAI_A_PMU_HOST_CONFLICT, perf)
      .put_nested(KVMAI_A_PMU_HOST_UNIT, unit("uncore_cha_0", 12, 0, "vm2"))
      .put_nested(KVMAI_A_PMU_HOST_UNIT, unit("uncore_imc_0", 14, 0, "vm1"))
      .put_nested(KVMAI_A_PMU_HOST_UNIT, unit("uncore_imc_1", 15, 3));
  return h;
}

// vm1: the core PMU and a memory controller on package 0.
inline AttrSet sample_pmu_vm1() {
  AttrSet p;
  p.put_string(KVMAI_A_PMU_VM, "vm1")
      .put_flag(KVMAI_A_PMU_CORE)
      .put_nested(KVMAI_A_PMU_UNIT, unit("uncore_imc_0", 14, 0))
      .put_string(KVMAI_A_PMU_CPUS, "0-31")
      .put_u32(KVMAI_A_PMU_PID, 4242)
      .put_u32(KVMAI_A_PMU_PACKAGE, 0);
  return p;
}

// vm2: a CHA box on two packages it shares, bound to its VMM's socket.
inline AttrSet sample_pmu_vm2() {
  AttrSet p;
  p.put_string(KVMAI_A_PMU_VM, "vm2")
      .put_nested(KVMAI_A_PMU_UNIT, unit("uncore_cha_0", 12, 0))
      .put_string(KVMAI_A_PMU_CPUS, "16-47")
      .put_flag(KVMAI_A_PMU_SHARED)
      .put_u32(KVMAI_A_PMU_PID, 4300)
      .put_flag(KVMAI_A_PMU_BIND_SOCKET)
      .put_u32(KVMAI_A_PMU_PACKAGE, 0)
      .put_u32(KVMAI_A_PMU_PACKAGE, 1);
  return p;
}

// What pmu-change-ntf says once `vm` owns nothing.
inline AttrSet released_pmu(const std::string& vm) {
  AttrSet p;
  p.put_string(KVMAI_A_PMU_VM, vm);
  return p;
}

}  // namespace kvmaictl::testing
