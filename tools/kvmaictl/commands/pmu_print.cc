#include "commands/pmu_print.h"

#include <linux/kvmai.h>

#include <cstring>
#include <utility>

#include "commands/group_print.h"

namespace kvmai::kvmaictl {
namespace {

void print_u32(Printer& out, std::string_view key, std::optional<std::uint32_t> value, Col col,
               Show show = Show::any) {
  out.print_opt_int(key, value ? std::optional<std::int64_t>(*value) : std::nullopt, col, "-",
                    show);
}

// A u64 as a JSON number, null when absent (JSON only; text prints such
// values in hex).
void print_u64_json(Printer& out, std::string_view key, std::optional<std::uint64_t> value) {
  if (value) {
    out.print_uint(key, *value, {}, Show::json_only);
  } else {
    out.print_opt_string(key, std::nullopt, {}, "", Show::json_only);
  }
}

// One msr-range nest: always in JSON, a line of its own in text when
// `verbose` ("msr 0xc0010231 count 1 read write mask 0x0000ffffffffffff").
void print_msr_range(Printer& out, const AttrSet& r, bool verbose) {
  const Show show = verbose ? Show::any : Show::json_only;
  const auto base = r.u32(KVMAI_A_MSR_RANGE_BASE);
  const bool read = r.has(KVMAI_A_MSR_RANGE_READ);
  const bool write = r.has(KVMAI_A_MSR_RANGE_WRITE);
  const auto mask = r.u64(KVMAI_A_MSR_RANGE_WRITE_MASK);
  out.open_object();
  print_u32(out, "base", base, {}, Show::json_only);
  if (verbose) {
    out.print_string("base", base ? to_hex(*base) : "?", {"\n        msr "}, Show::text_only);
  }
  print_u32(out, "count", r.u32(KVMAI_A_MSR_RANGE_COUNT), {" count "}, show);
  out.print_bool("read", read, {}, Show::json_only);
  out.print_bool("write", write, {}, Show::json_only);
  print_u64_json(out, "write_mask", mask);
  if (verbose) {
    out.text(std::string(read ? " read" : "") + (write ? " write" : ""));
    if (write || mask) {
      out.text(" mask " + (mask ? to_hex(*mask, 16) : std::string("?")));
    }
  }
  out.close_object();
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

// A multi-attr u32 array: as JSON, and as text ("0,1"; "" when empty).
std::pair<Json, std::string> u32_list(const AttrSet& set, std::uint16_t type) {
  Json json = Json::array();
  std::string text;
  for (const Attr* a : set.all(type)) {
    const auto n = attr_u32(*a);
    json.push_back(n ? Json(*n) : Json(nullptr));
    text += (text.empty() ? "" : ",") + (n ? std::to_string(*n) : std::string("?"));
  }
  return {json, text};
}

// What one instance of a unit counts for; assignments still cover whole
// packages. Unknown when the kernel does not say (a revoked unit).
std::optional<std::string> scope_name(std::optional<std::uint32_t> scope) {
  static const EnumNames names{
      {KVMAI_SCOPE_PACKAGE, "package"}, {KVMAI_SCOPE_DIE, "die"}, {KVMAI_SCOPE_LLC, "llc"}};
  if (!scope) {
    return std::nullopt;
  }
  return enum_name(names, *scope);
}

// Units of the host's list say which VM has them and carry no MSR
// ranges; a VM's own units need not name it (JSON has the key either way)
// and list the MSRs its guest may access.
enum class UnitsOf { host, vm };

void print_unit(Printer& out, const AttrSet& u, UnitsOf of, bool verbose) {
  out.open_object();
  out.print_opt_string("name", u.str(KVMAI_A_UNIT_NAME), {"\n    unit "}, "?");
  print_u32(out, "type", u.u32(KVMAI_A_UNIT_TYPE), {" type "});
  print_u32(out, "msr_ranges", u.u32(KVMAI_A_UNIT_MSR_RANGES), {" msr-ranges "});
  print_u32(out, "host_events", u.u32(KVMAI_A_UNIT_HOST_EVENTS), {" host-events "});
  out.print_opt_string("scope", scope_name(u.u32(KVMAI_A_UNIT_SCOPE)), {" scope "});
  // Such a unit goes only to a VM with every CPU of its packages.
  const bool core_select = u.has(KVMAI_A_UNIT_CORE_SELECT);
  out.print_bool("core_select", core_select, {}, Show::json_only);
  if (core_select) {
    out.text(" core-select");
  }
  out.print_opt_string("vm", u.str(KVMAI_A_UNIT_VM), {" vm "}, "-",
                       of == UnitsOf::host ? Show::any : Show::json_only);
  if (of == UnitsOf::vm) {
    // CPU hotplug took these packages away; text names them only then.
    const auto [offline, offline_text] = u32_list(u, KVMAI_A_UNIT_OFFLINE_PACKAGE);
    out.print_json("offline_package", offline);
    if (!offline_text.empty()) {
      out.text(" offline-packages " + offline_text);
    }
    const auto scrubs = u.u32(KVMAI_A_UNIT_HOTPLUG_SCRUBS);
    print_u32(out, "hotplug_scrubs", scrubs, {" hotplug-scrubs "},
              scrubs.value_or(0) != 0 ? Show::any : Show::json_only);
    out.open_array("msr");
    for (const Attr* a : u.all(KVMAI_A_UNIT_MSR)) {
      print_msr_range(out, AttrSet::parse(a->payload), verbose);
    }
    out.close_array();
  }
  out.close_object();
}

void print_units(Printer& out, const AttrSet& set, std::uint16_t type, UnitsOf of, bool verbose) {
  out.open_array("unit");
  for (const Attr* a : set.all(type)) {
    print_unit(out, AttrSet::parse(a->payload), of, verbose);
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
  print_u64_json(out, "config", config);
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

}  // namespace

std::vector<std::string> unit_names(const AttrSet& pmu) {
  std::vector<std::string> v;
  for (const Attr* a : pmu.all(KVMAI_A_PMU_UNIT)) {
    v.push_back(AttrSet::parse(a->payload).str(KVMAI_A_UNIT_NAME).value_or("?"));
  }
  return v;
}

void print_pmu(Printer& out, const AttrSet& pmu, bool verbose, std::string_view key) {
  out.open_object(key);
  out.print_opt_string("vm", pmu.str(KVMAI_A_PMU_VM), {"vm "}, "?");
  out.print_bool("core", pmu.has(KVMAI_A_PMU_CORE), {" core "});
  out.print_opt_string("cpus", pmu.str(KVMAI_A_PMU_CPUS), {" cpus "});
  out.print_bool("shared", pmu.has(KVMAI_A_PMU_SHARED), {" shared "});
  print_u32(out, "pid", pmu.u32(KVMAI_A_PMU_PID), {" pid "});
  out.print_bool("bind_socket", pmu.has(KVMAI_A_PMU_BIND_SOCKET), {" bind-socket "});
  const auto [packages, text] = u32_list(pmu, KVMAI_A_PMU_PACKAGE);
  out.print_json("package", packages);
  out.print_string("package", text.empty() ? "-" : text, {" packages "}, Show::text_only);
  print_units(out, pmu, KVMAI_A_PMU_UNIT, UnitsOf::vm, verbose);
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
  print_units(out, host, KVMAI_A_PMU_HOST_UNIT, UnitsOf::host, false);
  out.close_object();
  out.newline();
}

}  // namespace kvmai::kvmaictl
