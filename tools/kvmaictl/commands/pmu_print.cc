#include "commands/pmu_print.h"

#include <fmt/format.h>

#include <utility>

#include "client/names.h"
#include "common/format.h"

namespace kvmai::kvmaictl {
namespace {

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
void print_msr_range(Printer& out, const MsrRange& r, bool verbose) {
  const Show show = verbose ? Show::any : Show::json_only;
  out.open_object();
  out.print_opt_int("base", r.base, {}, "-", Show::json_only);
  if (verbose) {
    out.print_string("base", r.base ? to_hex(*r.base) : "?", {"\n        msr "}, Show::text_only);
  }
  out.print_opt_int("count", r.count, {" count "}, "-", show);
  out.print_bool("read", r.read, {}, Show::json_only);
  out.print_bool("write", r.write, {}, Show::json_only);
  print_u64_json(out, "write_mask", r.write_mask);
  if (verbose) {
    out.text(fmt::format("{}{}", r.read ? " read" : "", r.write ? " write" : ""));
    if (r.write || r.write_mask) {
      out.text(fmt::format(" mask {}", r.write_mask ? to_hex(*r.write_mask, 16) : "?"));
    }
  }
  out.close_object();
}

// A multi-attr u32 array: as JSON, and as text ("0,1"; "" when empty).
std::pair<Json, std::string> u32_list(const std::vector<std::optional<std::uint32_t>>& values) {
  Json json = Json::array();
  std::vector<std::string> text;
  for (const auto& n : values) {
    json.push_back(n ? Json(*n) : Json(nullptr));
    text.push_back(n ? std::to_string(*n) : "?");
  }
  return {json, join(text, ",")};
}

// Units of the host's list say which VM has them and carry no MSR
// ranges; a VM's own units need not name it (JSON has the key either way)
// and list the MSRs its guest may access.
enum class UnitsOf { host, vm };

void print_unit(Printer& out, const Unit& u, UnitsOf of, bool verbose) {
  out.open_object();
  out.print_opt_string("name", u.name, {"\n    unit "}, "?");
  out.print_opt_int("type", u.type, {" type "});
  out.print_opt_int("msr_ranges", u.msr_ranges, {" msr-ranges "});
  out.print_opt_int("host_events", u.host_events, {" host-events "});
  // What one instance counts for; assignments still cover whole packages.
  // Unknown when the kernel does not say (a revoked unit).
  out.print_opt_string("scope",
                       u.scope ? std::optional(enum_name(scope_names(), *u.scope)) : std::nullopt,
                       {" scope "});
  // Such a unit goes only to a VM with every CPU of its packages.
  out.print_bool("core_select", u.core_select, {}, Show::json_only);
  if (u.core_select) {
    out.text(" core-select");
  }
  out.print_opt_string("vm", u.vm, {" vm "}, "-",
                       of == UnitsOf::host ? Show::any : Show::json_only);
  if (of == UnitsOf::vm) {
    // CPU hotplug took these packages away; text names them only then.
    const auto [offline, offline_text] = u32_list(u.offline_packages);
    out.print_json("offline_package", offline);
    if (!offline_text.empty()) {
      out.text(fmt::format(" offline-packages {}", offline_text));
    }
    out.print_opt_int("hotplug_scrubs", u.hotplug_scrubs, {" hotplug-scrubs "}, "-",
                      u.hotplug_scrubs.value_or(0) != 0 ? Show::any : Show::json_only);
    out.open_array("msr");
    for (const MsrRange& r : u.msrs) {
      print_msr_range(out, r, verbose);
    }
    out.close_array();
  }
  out.close_object();
}

void print_units(Printer& out, const std::vector<Unit>& units, UnitsOf of, bool verbose) {
  out.open_array("unit");
  for (const Unit& u : units) {
    print_unit(out, u, of, verbose);
  }
  out.close_array();
}

// "cpu 3 pmu cpu config 0xc0 held by pid 4242 (perf)"; the kernel's own
// events (pid 0) are most often the NMI watchdog.
void print_conflict(Printer& out, const Conflict& c) {
  out.open_object();
  out.print_opt_int("cpu", c.cpu, {"\n    conflict cpu "});
  out.print_opt_string("pmu", c.pmu, {" pmu "}, "?");
  // Hex in text, a number in JSON.
  print_u64_json(out, "config", c.config);
  out.print_string("config", c.config ? to_hex(*c.config) : "?", {" config "}, Show::text_only);
  out.print_opt_int("pid", c.pid, {}, "-", Show::json_only);
  out.print_opt_string("comm", c.comm, {}, "", Show::json_only);
  std::string owner = "an unknown owner";
  if (c.pid && *c.pid == 0) {
    owner = "the kernel";
  } else if (c.pid) {
    owner = c.comm ? fmt::format("pid {} ({})", *c.pid, *c.comm) : fmt::format("pid {}", *c.pid);
  }
  out.text(fmt::format(" held by {}", owner));
  out.close_object();
}

std::string kvm_text(const MediatedPmu& kvm) {
  switch (kvm.state) {
    case MediatedPmu::State::enabled:
    case MediatedPmu::State::disabled:
      return fmt::format("{}.enable_mediated_pmu={}", kvm.module, kvm.value.value_or(""));
    case MediatedPmu::State::unsupported:
      return fmt::format("{} (mediated vPMU not supported by this kernel)", kvm.module);
    case MediatedPmu::State::kvm_not_loaded:
      return "not loaded";
  }
  return "?";
}

}  // namespace

void print_pmu(Printer& out, const PmuRecord& pmu, bool verbose, std::string_view key) {
  out.open_object(key);
  out.print_opt_string("vm", pmu.vm, {"vm "}, "?");
  out.print_bool("core", pmu.core, {" core "});
  out.print_opt_string("cpus", pmu.cpus, {" cpus "});
  out.print_bool("shared", pmu.shared, {" shared "});
  out.print_opt_int("pid", pmu.pid, {" pid "});
  out.print_bool("bind_socket", pmu.bind_socket, {" bind-socket "});
  const auto [packages, text] = u32_list(pmu.packages);
  out.print_json("package", packages);
  out.print_string("package", text.empty() ? "-" : text, {" packages "}, Show::text_only);
  print_units(out, pmu.units, UnitsOf::vm, verbose);
  out.close_object();
  out.newline();
}

void print_pmu_summary(Printer& out, const PmuRecord& pmu) {
  const Show show = Show::text_only;
  out.print_opt_string("vm", pmu.vm, {" "}, "?", show);
  out.print_bool("core", pmu.core, {" core "}, show);
  out.print_string_list("unit", pmu.unit_names(), {" units "}, show);
  out.print_opt_string("cpus", pmu.cpus, {" cpus "}, "-", show);
}

void print_pmu_host(Printer& out, const PmuHost& host, const MediatedPmu& kvm,
                    std::optional<bool> nmi_watchdog, std::string_view key) {
  out.open_object(key);
  out.print_bool("core_capable", host.core_capable, {"host mediated-vpmu capable "});
  out.open_object("kvm");
  out.print_opt_string("module", kvm.module.empty() ? std::nullopt : std::optional(kvm.module), {},
                       "", Show::json_only);
  out.print_opt_string("enable_mediated_pmu", kvm.value, {}, "", Show::json_only);
  out.print_string("state", mediated_state_name(kvm.state), {}, Show::json_only);
  out.close_object();
  out.text(fmt::format(" kvm {}", kvm_text(kvm)));
  out.print_json("nmi_watchdog", nmi_watchdog ? Json(*nmi_watchdog) : Json(nullptr));
  out.text(fmt::format(" nmi-watchdog {}", !nmi_watchdog ? "-" : *nmi_watchdog ? "on" : "off"));
  out.print_opt_int("core_fences", host.core_fences, {"\n    core fences "});
  out.print_opt_int("core_include_guest_events", host.core_include_guest_events,
                    {" include-guest-events "});
  out.open_array("conflict");
  for (const Conflict& c : host.conflicts) {
    print_conflict(out, c);
  }
  out.close_array();
  print_units(out, host.units, UnitsOf::host, false);
  out.close_object();
  out.newline();
}

}  // namespace kvmai::kvmaictl
