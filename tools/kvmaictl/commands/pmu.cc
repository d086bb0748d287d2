// `kvmaictl pmu`: which VM owns which PMU resources (pmu-host-get, pmu-get,
// pmu-assign, pmu-release), and the launcher that hands a VM's
// reservations to its VMM (pmu_exec.h). Keywords are the spec's attribute
// names.
#include <fmt/format.h>
#include <linux/kvmai.h>

#include <algorithm>
#include <limits>

#include "client/names.h"
#include "commands/bind_watch.h"
#include "commands/commands.h"
#include "commands/host.h"
#include "commands/pmu_exec.h"
#include "commands/pmu_print.h"
#include "model/perf_pmus.h"

namespace kvmai::kvmaictl {
namespace {

std::string checked_vm(const std::string& vm) {
  return checked_name("VM", vm, KVMAI_VM_LEN);
}

// `VM { core | UNIT }...`: the VM, then `core` (a keyword) and the units
// (every other operand), with keywords in any order after VM. A word that
// is a keyword or a unique prefix of one is that keyword, as everywhere
// in this tool, so a unit cannot be named by a prefix of "core", "cpus",
// "shared", "pid" or "bind-socket"; no uncore PMU is.
PmuResources resources_of(const Words& words) {
  PmuResources r;
  const auto operands = words.operands();
  r.vm = checked_vm(operands.front());
  r.core = words.has("core");
  for (std::size_t i = 1; i < operands.size(); ++i) {
    const std::string& unit = operands[i];
    if (std::find(r.units.begin(), r.units.end(), unit) != r.units.end()) {
      throw UsageError(fmt::format("unit \"{}\" given twice", unit));
    }
    r.units.push_back(checked_name("unit name", unit, KVMAI_UNIT_LEN));
  }
  return r;
}

void print_records(Context& ctx, const std::vector<PmuRecord>& records, bool after_host) {
  ctx.out.open_array("vms");
  for (const auto& r : records) {
    if (after_host || &r != &records.front()) {
      ctx.out.newline();
    }
    print_pmu(ctx.out, r, ctx.opts.verbose);
  }
  ctx.out.close_array();
}

// Why the core PMU will not reach the guest yet, if KVM says so: the
// module hands the counters over, but only KVM's mediated vPMU gives them
// to the guest. Empty when it is enabled.
std::string mediated_pmu_problem(const MediatedPmu& m) {
  switch (m.state) {
    case MediatedPmu::State::enabled:
      return "";
    case MediatedPmu::State::disabled:
      return fmt::format(
          "{}.enable_mediated_pmu={}: guests still get the emulated vPMU (reload {} with "
          "enable_mediated_pmu=1)",
          m.module, m.value.value_or(""), m.module);
    case MediatedPmu::State::unsupported:
      return fmt::format(
          "{} has no enable_mediated_pmu: this kernel cannot give guests the core PMU", m.module);
    case MediatedPmu::State::kvm_not_loaded:
      return "kvm not loaded: load kvm_intel or kvm_amd with enable_mediated_pmu=1 before "
             "starting the VM";
  }
  return "";
}

}  // namespace

void pmu_show(const Words& words, Context& ctx) {
  const std::string vm = words.operand(0);
  if (!vm.empty()) {
    print_records(ctx, {ctx.kvmai().pmu_record(checked_vm(vm))}, false);
    return;
  }
  // The trees first: a wrong --sysfs-root is refused before any socket.
  const auto sys = open_sysfs(ctx.opts);
  const auto proc = open_procfs(ctx.opts);
  Kvmai kvmai = ctx.kvmai();
  const PmuHost host = kvmai.pmu_host();
  const auto records = kvmai.pmu_records();
  print_pmu_host(ctx.out, host, read_mediated_pmu(*sys), read_nmi_watchdog(*proc), "host");
  print_records(ctx, records, true);
}

void pmu_assign(const Words& words, Context& ctx) {
  PmuAssign a{.resources = resources_of(words),
              .cpus = words.value("cpus"),
              .shared = words.has("shared"),
              .pid = std::nullopt,
              .bind_socket = words.has("bind-socket")};
  const PmuResources& r = a.resources;
  if (!r.core && r.units.empty()) {
    throw UsageError("missing core or UNIT");
  }
  if (a.cpus && (a.cpus->empty() || a.cpus->size() >= KVMAI_CPUS_LEN)) {
    throw UsageError(fmt::format("cpus LIST must be 1 to {} characters", KVMAI_CPUS_LEN - 1));
  }
  if (const auto pid = words.value("pid")) {
    a.pid = static_cast<std::uint32_t>(
        number_of("pid", *pid, 1, std::numeric_limits<std::uint32_t>::max()));
  }
  const std::string kvm_problem =
      r.core ? mediated_pmu_problem(read_mediated_pmu(FsReader(ctx.opts.sysfs_root))) : "";

  // What the VM owns lives as long as `kvmai`'s socket when bound.
  Kvmai kvmai = ctx.kvmai();
  BindWatch watch(ctx, a.bind_socket);
  const PmuRecord record = kvmai.pmu_assign(a);
  ctx.warn(kvm_problem);
  print_records(ctx, {record}, false);
  if (!a.bind_socket) {
    return;
  }
  // A VM that already owned something keeps its bind-socket setting; if
  // that was "no", this socket holds nothing and waiting would mislead.
  if (!record.bind_socket) {
    ctx.warn(fmt::format(
        "{} already owned PMU resources without bind-socket: they stay after kvmaictl exits",
        r.vm));
    return;
  }
  // The record ended some other way: everything it owned was released.
  watch.hold(ctx, [&](const Event& e) {
    return e.kind != Event::Kind::pmu_change || e.pmu.vm.value_or("") != r.vm || !e.pmu.released();
  });
}

void pmu_release(const Words& words, Context& ctx) {
  ctx.kvmai().pmu_release(resources_of(words));
}

void pmu_exec(const Words& words, Context& ctx) {
  launch(exec_call(words), ctx, [] { return open_kvmai_dev(); });
}

}  // namespace kvmai::kvmaictl
