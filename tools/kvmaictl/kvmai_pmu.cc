#include "kvmai_pmu.h"

#include <linux/kvmai.h>

#include <cstring>

namespace kvmaictl {
namespace {

void print_u32(Printer& out, std::string_view key, std::optional<std::uint32_t> value, Col col,
               Show show = Show::any) {
  out.print_opt_int(key, value ? std::optional<std::int64_t>(*value) : std::nullopt, col, "-",
                    show);
}

// `with_owner`: the host's list says which VM has the unit; a VM's own
// record need not (JSON has the key either way).
void print_unit(Printer& out, const AttrSet& u, bool with_owner) {
  out.open_object();
  out.print_opt_string("name", u.str(KVMAI_A_UNIT_NAME), {"\n    unit "}, "?");
  print_u32(out, "type", u.u32(KVMAI_A_UNIT_TYPE), {" type "});
  print_u32(out, "msr_ranges", u.u32(KVMAI_A_UNIT_MSR_RANGES), {" msr-ranges "});
  print_u32(out, "host_events", u.u32(KVMAI_A_UNIT_HOST_EVENTS), {" host-events "});
  out.print_opt_string("vm", u.str(KVMAI_A_UNIT_VM), {" vm "}, "-",
                       with_owner ? Show::any : Show::json_only);
  out.close_object();
}

void print_units(Printer& out, const AttrSet& set, std::uint16_t type, bool with_owner) {
  out.open_array("unit");
  for (const Attr* a : set.all(type)) {
    print_unit(out, AttrSet::parse(a->payload), with_owner);
  }
  out.close_array();
}

// "cpu 3 pmu cpu config 0xc0 held by pid 4242 (perf)"; the kernel's own
// events (pid 0) are most often the NMI watchdog.
void print_conflict(Printer& out, const AttrSet& c) {
  const auto pid = c.u32(KVMAI_A_CONFLICT_PID);
  const auto comm = c.str(KVMAI_A_CONFLICT_COMM);
  const auto config = c.u64(KVMAI_A_CONFLICT_CONFIG);
  out.open_object();
  print_u32(out, "cpu", c.u32(KVMAI_A_CONFLICT_CPU), {"\n    conflict cpu "});
  out.print_opt_string("pmu", c.str(KVMAI_A_CONFLICT_PMU), {" pmu "}, "?");
  // Hex in text, a number in JSON.
  if (config) {
    out.print_uint("config", *config, {}, Show::json_only);
  } else {
    out.print_opt_string("config", std::nullopt, {}, "", Show::json_only);
  }
  out.print_string("config", config ? to_hex(*config) : "?", {" config "}, Show::text_only);
  print_u32(out, "pid", pid, {}, Show::json_only);
  out.print_opt_string("comm", comm, {}, "", Show::json_only);
  std::string owner = "an unknown owner";
  if (pid && *pid == 0) {
    owner = "the kernel";
  } else if (pid) {
    owner = "pid " + std::to_string(*pid) + (comm ? " (" + *comm + ")" : "");
  }
  out.text(" held by " + owner);
  out.close_object();
}

std::string kvm_text(const MediatedPmu& kvm) {
  switch (kvm.state) {
    case MediatedPmu::State::enabled:
    case MediatedPmu::State::disabled:
      return kvm.module + ".enable_mediated_pmu=" + kvm.value.value_or("");
    case MediatedPmu::State::unsupported:
      return kvm.module + " (mediated vPMU not supported by this kernel)";
    case MediatedPmu::State::kvm_not_loaded:
      return "not loaded";
  }
  return "?";
}

// One element of a multi-attr u32 array (AttrSet::u32 finds the first only).
std::optional<std::uint32_t> attr_u32(const Attr& a) {
  std::uint32_t v = 0;
  if (a.payload.size() != sizeof v) {
    return std::nullopt;
  }
  std::memcpy(&v, a.payload.data(), sizeof v);
  return v;
}

std::vector<std::string> unit_names(const AttrSet& pmu) {
  std::vector<std::string> v;
  for (const Attr* a : pmu.all(KVMAI_A_PMU_UNIT)) {
    v.push_back(AttrSet::parse(a->payload).str(KVMAI_A_UNIT_NAME).value_or("?"));
  }
  return v;
}

}  // namespace

void print_pmu(Printer& out, const AttrSet& pmu, std::string_view key) {
  out.open_object(key);
  out.print_opt_string("vm", pmu.str(KVMAI_A_PMU_VM), {"vm "}, "?");
  out.print_bool("core", pmu.has(KVMAI_A_PMU_CORE), {" core "});
  out.print_opt_string("cpus", pmu.str(KVMAI_A_PMU_CPUS), {" cpus "});
  out.print_bool("shared", pmu.has(KVMAI_A_PMU_SHARED), {" shared "});
  print_u32(out, "pid", pmu.u32(KVMAI_A_PMU_PID), {" pid "});
  out.print_bool("bind_socket", pmu.has(KVMAI_A_PMU_BIND_SOCKET), {" bind-socket "});
  Json packages = Json::array();
  std::string text;
  for (const Attr* a : pmu.all(KVMAI_A_PMU_PACKAGE)) {
    const auto n = attr_u32(*a);
    packages.push_back(n ? Json(*n) : Json(nullptr));
    text += (text.empty() ? "" : ",") + (n ? std::to_string(*n) : std::string("?"));
  }
  out.print_json("package", packages);
  out.print_string("package", text.empty() ? "-" : text, {" packages "}, Show::text_only);
  print_units(out, pmu, KVMAI_A_PMU_UNIT, false);
  out.close_object();
  out.newline();
}

void print_pmu_summary(Printer& out, const AttrSet& pmu) {
  const Show show = Show::text_only;
  out.print_opt_string("vm", pmu.str(KVMAI_A_PMU_VM), {" "}, "?", show);
  out.print_bool("core", pmu.has(KVMAI_A_PMU_CORE), {" core "}, show);
  out.print_string_list("unit", unit_names(pmu), {" units "}, show);
  out.print_opt_string("cpus", pmu.str(KVMAI_A_PMU_CPUS), {" cpus "}, "-", show);
}

bool pmu_released(const AttrSet& pmu) {
  return !pmu.has(KVMAI_A_PMU_CORE) && !pmu.has(KVMAI_A_PMU_UNIT);
}

void print_pmu_host(Printer& out, const AttrSet& host, const MediatedPmu& kvm,
                    std::optional<bool> nmi_watchdog, std::string_view key) {
  out.open_object(key);
  out.print_bool("core_capable", host.has(KVMAI_A_PMU_HOST_CORE_CAPABLE),
                 {"host mediated-vpmu capable "});
  out.open_object("kvm");
  out.print_opt_string("module", kvm.module.empty() ? std::nullopt : std::optional(kvm.module), {},
                       "", Show::json_only);
  out.print_opt_string("enable_mediated_pmu", kvm.value, {}, "", Show::json_only);
  out.print_string("state", mediated_state_name(kvm.state), {}, Show::json_only);
  out.close_object();
  out.text(" kvm " + kvm_text(kvm));
  out.print_json("nmi_watchdog", nmi_watchdog ? Json(*nmi_watchdog) : Json(nullptr));
  out.text(std::string(" nmi-watchdog ") + (!nmi_watchdog ? "-" : *nmi_watchdog ? "on" : "off"));
  print_u32(out, "core_fences", host.u32(KVMAI_A_PMU_HOST_CORE_FENCES), {"\n    core fences "});
  print_u32(out, "core_include_guest_events", host.u32(KVMAI_A_PMU_HOST_CORE_INCLUDE_GUEST_EVENTS),
            {" include-guest-events "});
  out.open_array("conflict");
  for (const Attr* a : host.all(KVMAI_A_PMU_HOST_CONFLICT)) {
    print_conflict(out, AttrSet::parse(a->payload));
  }
  out.close_array();
  print_units(out, host, KVMAI_A_PMU_HOST_UNIT, true);
  out.close_object();
  out.newline();
}

}  // namespace kvmaictl
