// kvmai replies for the pmu and monitor tests.
#pragma once

#include <linux/kvmai.h>

#include <cstdint>
#include <optional>
#include <string>

#include "testing/group_replies.h"

namespace kvmai::kvmaictl::testing {

// A unit as pmu-host-get lists it: two MSR ranges, no msr nests.
inline AttrSet unit(const std::string& name, std::uint32_t type, std::uint32_t host_events,
                    const std::string& vm = "", std::uint32_t scope = KVMAI_SCOPE_DIE) {
  AttrSet u;
  u.put_string(KVMAI_A_UNIT_NAME, name)
      .put_u32(KVMAI_A_UNIT_TYPE, type)
      .put_u32(KVMAI_A_UNIT_MSR_RANGES, 2)
      .put_u32(KVMAI_A_UNIT_HOST_EVENTS, host_events)
      .put_u32(KVMAI_A_UNIT_SCOPE, scope);
  if (!vm.empty()) {
    u.put_string(KVMAI_A_UNIT_VM, vm);
  }
  return u;
}

// An msr-range nest; writes are allowed (and checked) when `write_mask`
// is given.
inline AttrSet msr_range(std::uint32_t base, std::uint32_t count, bool read,
                         std::optional<std::uint64_t> write_mask) {
  AttrSet r;
  r.put_u32(KVMAI_A_MSR_RANGE_BASE, base).put_u32(KVMAI_A_MSR_RANGE_COUNT, count);
  if (read) {
    r.put_flag(KVMAI_A_MSR_RANGE_READ);
  }
  if (write_mask) {
    r.put_flag(KVMAI_A_MSR_RANGE_WRITE).put_u64(KVMAI_A_MSR_RANGE_WRITE_MASK, *write_mask);
  }
  return r;
}

// Write masks as the mock (after AMD's uncore driver) offers them:
// controls without interrupt enable, 48-bit counters.
inline constexpr std::uint64_t kCtlMask = 0x0000ff00004fffff;
inline constexpr std::uint64_t kCtrMask = 0x0000ffffffffffff;

// A unit in a VM's record (pmu-get, pmu-assign, pmu-change-ntf), in the
// module's order: controls written within a mask from `ctl` on, counters
// read directly from `ctr` on, `count` of each.
inline AttrSet owned_unit(const std::string& name, std::uint32_t type, std::uint32_t host_events,
                          std::uint32_t ctl, std::uint32_t ctr, std::uint32_t count,
                          std::uint32_t hotplug_scrubs = 0) {
  AttrSet u;
  u.put_string(KVMAI_A_UNIT_NAME, name)
      .put_u32(KVMAI_A_UNIT_TYPE, type)
      .put_u32(KVMAI_A_UNIT_HOST_EVENTS, host_events)
      .put_u32(KVMAI_A_UNIT_MSR_RANGES, 2)
      .put_u32(KVMAI_A_UNIT_SCOPE, KVMAI_SCOPE_DIE)
      .put_nested(KVMAI_A_UNIT_MSR, msr_range(ctl, count, false, kCtlMask))
      .put_nested(KVMAI_A_UNIT_MSR, msr_range(ctr, count, true, kCtrMask))
      .put_u32(KVMAI_A_UNIT_HOTPLUG_SCRUBS, hotplug_scrubs);
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
      .put_nested(KVMAI_A_PMU_HOST_UNIT, unit("uncore_imc_1", 15, 3))
      .put_nested(KVMAI_A_PMU_HOST_UNIT,
                  unit("amd_l3", 16, 0, "", KVMAI_SCOPE_LLC).put_flag(KVMAI_A_UNIT_CORE_SELECT));
  return h;
}

// vm1: the core PMU and a memory controller on package 0 (one control and
// one counter, at the addresses of AMD's L3 PMU).
inline AttrSet sample_pmu_vm1() {
  AttrSet p;
  p.put_string(KVMAI_A_PMU_VM, "vm1")
      .put_flag(KVMAI_A_PMU_CORE)
      .put_nested(KVMAI_A_PMU_UNIT, owned_unit("uncore_imc_0", 14, 0, 0xc0010230, 0xc0010231, 1))
      .put_string(KVMAI_A_PMU_CPUS, "0-31")
      .put_u32(KVMAI_A_PMU_PID, 4242)
      .put_u32(KVMAI_A_PMU_PACKAGE, 0);
  return p;
}

// vm2: a CHA box on two packages it shares, bound to its VMM's socket (four
// controls and four counters, as Ice Lake's CHA 0).  Package 1 has no
// online CPU, and a package came back twice.
inline AttrSet sample_pmu_vm2() {
  AttrSet cha = owned_unit("uncore_cha_0", 12, 0, 0xe01, 0xe08, 4, 2);
  cha.put_u32(KVMAI_A_UNIT_OFFLINE_PACKAGE, 1);
  AttrSet p;
  p.put_string(KVMAI_A_PMU_VM, "vm2")
      .put_nested(KVMAI_A_PMU_UNIT, cha)
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

}  // namespace kvmai::kvmaictl::testing
