// `kvmaictl pmu`: which VM owns which PMU resources (pmu-host-get, pmu-get,
// pmu-assign, pmu-release), and the launcher that hands a VM's
// reservations to its VMM (pmu_exec.h). Keywords are the spec's attribute
// names.
#include <linux/kvmai.h>

#include <algorithm>
#include <limits>

#include "commands/bind_watch.h"
#include "commands/commands.h"
#include "commands/group_print.h"
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
struct Resources {
  std::string vm;
  bool core = false;
  std::vector<std::string> units;
};

Resources resources_of(const Words& words) {
  Resources r;
  const auto operands = words.operands();
  r.vm = checked_vm(operands.front());
  r.core = words.has("core");
  for (std::size_t i = 1; i < operands.size(); ++i) {
    const std::string& unit = operands[i];
    if (std::find(r.units.begin(), r.units.end(), unit) != r.units.end()) {
      throw UsageError("unit \"" + unit + "\" given twice");
    }
    r.units.push_back(checked_name("unit name", unit, KVMAI_UNIT_LEN));
  }
  return r;
}

// The resources of `r` as a request for the VM's record.
AttrSet resource_request(const Resources& r) {
  AttrSet req;
  req.put_string(KVMAI_A_PMU_VM, r.vm);
  if (r.core) {
    req.put_flag(KVMAI_A_PMU_CORE);
  }
  for (const auto& name : r.units) {
    AttrSet unit;
    unit.put_string(KVMAI_A_UNIT_NAME, name);
    req.put_nested(KVMAI_A_PMU_UNIT, unit);
  }
  return req;
}

void print_records(Context& ctx, const std::vector<GenlMessage>& records, bool after_host) {
  ctx.out.open_array("vms");
  for (const auto& r : records) {
    if (after_host || &r != &records.front()) {
      ctx.out.newline();
    }
    print_pmu(ctx.out, r.attrs, ctx.opts.verbose);
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
      return m.module + ".enable_mediated_pmu=" + m.value.value_or("") +
             ": guests still get the emulated vPMU (reload " + m.module +
             " with enable_mediated_pmu=1)";
    case MediatedPmu::State::unsupported:
      return m.module + " has no enable_mediated_pmu: this kernel cannot give guests the core PMU";
    case MediatedPmu::State::kvm_not_loaded:
      return "kvm not loaded: load kvm_intel or kvm_amd with enable_mediated_pmu=1 before "
             "starting the VM";
  }
  return "";
}

// The VM's record ended some other way: everything it owned was released.
bool record_still_there(const GenlMessage& m, const std::string& vm) {
  return m.cmd != KVMAI_CMD_PMU_CHANGE_NTF || m.attrs.str(KVMAI_A_PMU_VM).value_or("") != vm ||
         !pmu_released(m.attrs);
}

}  // namespace

void pmu_show(const Words& words, Context& ctx) {
  const std::string vm = words.operand(0);
  if (!vm.empty()) {
    AttrSet req;
    req.put_string(KVMAI_A_PMU_VM, checked_vm(vm));
    const auto t = ctx.connect(KVMAI_FAMILY_NAME);
    const auto reply = pmu_module_call([&] { return t->request(KVMAI_CMD_PMU_GET, req); });
    ctx.warn(reply.warning);
    print_records(ctx, {reply}, false);
    return;
  }
  // The trees first: a wrong --sysfs-root is refused before any socket.
  const auto sys = open_sysfs(ctx.opts);
  const auto proc = open_procfs(ctx.opts);
  const auto t = ctx.connect(KVMAI_FAMILY_NAME);
  const auto host = pmu_module_call([&] { return t->request(KVMAI_CMD_PMU_HOST_GET, {}); });
  ctx.warn(host.warning);
  const auto records = pmu_module_call([&] { return t->dump(KVMAI_CMD_PMU_GET, {}); });
  print_pmu_host(ctx.out, host.attrs, read_mediated_pmu(*sys), read_nmi_watchdog(*proc), "host");
  print_records(ctx, records, true);
}

void pmu_assign(const Words& words, Context& ctx) {
  const auto r = resources_of(words);
  if (!r.core && r.units.empty()) {
    throw UsageError("missing core or UNIT");
  }
  const std::string& vm = r.vm;
  AttrSet req = resource_request(r);
  if (const auto cpus = words.value("cpus")) {
    if (cpus->empty() || cpus->size() >= KVMAI_CPUS_LEN) {
      throw UsageError("cpus LIST must be 1 to " + std::to_string(KVMAI_CPUS_LEN - 1) +
                       " characters");
    }
    req.put_string(KVMAI_A_PMU_CPUS, *cpus);
  }
  if (words.has("shared")) {
    req.put_flag(KVMAI_A_PMU_SHARED);
  }
  if (const auto pid = words.value("pid")) {
    req.put_u32(KVMAI_A_PMU_PID, static_cast<std::uint32_t>(number_of(
                                     "pid", *pid, 1, std::numeric_limits<std::uint32_t>::max())));
  }
  const bool bind = words.has("bind-socket");
  if (bind) {
    req.put_flag(KVMAI_A_PMU_BIND_SOCKET);
  }
  const std::string kvm_problem =
      r.core ? mediated_pmu_problem(read_mediated_pmu(FsReader(ctx.opts.sysfs_root))) : "";

  // What the VM owns lives as long as `t` when bound.
  const auto t = ctx.connect(KVMAI_FAMILY_NAME);
  BindWatch watch(ctx, bind);
  const auto reply = pmu_module_call([&] { return t->request(KVMAI_CMD_PMU_ASSIGN, req); });
  ctx.warn(reply.warning);
  ctx.warn(kvm_problem);
  print_records(ctx, {reply}, false);
  if (!bind) {
    return;
  }
  // A VM that already owned something keeps its bind-socket setting; if
  // that was "no", this socket holds nothing and waiting would mislead.
  if (!reply.attrs.has(KVMAI_A_PMU_BIND_SOCKET)) {
    ctx.warn(vm +
             " already owned PMU resources without bind-socket: they stay after kvmaictl exits");
    return;
  }
  watch.hold(ctx, [&](const GenlMessage& m) { return record_still_there(m, vm); });
}

void pmu_release(const Words& words, Context& ctx) {
  const auto req = resource_request(resources_of(words));
  const auto t = ctx.connect(KVMAI_FAMILY_NAME);
  ctx.warn(pmu_module_call([&] { return t->request(KVMAI_CMD_PMU_RELEASE, req); }).warning);
}

void pmu_exec(const Words& words, Context& ctx) {
  launch(exec_call(words), ctx, [] { return open_kvmai_dev(); });
}

}  // namespace kvmai::kvmaictl
