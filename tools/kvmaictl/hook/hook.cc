#include "hook/hook.h"

#include <linux/kvmai.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <ranges>
#include <utility>
#include <vector>

#include "client/kvmai.h"
#include "client/names.h"
#include "commands/commands.h"
#include "common/escape.h"
#include "common/format.h"
#include "common/sysfs.h"
#include "hook/metadata.h"
#include "hook/partitions.h"

namespace kvmai::kvmaictl::hook {
namespace {

enum class Op { none, prepare, started, stop, reconnect };

Op op_of(const Call& c) {
  const bool begin = c.suboperation == "begin";
  const bool end = c.suboperation == "end";
  if (c.operation == "prepare" && begin) {
    return Op::prepare;
  }
  if (c.operation == "started" && begin) {
    return Op::started;
  }
  if ((c.operation == "stopped" || c.operation == "release") && end) {
    return Op::stop;
  }
  // attach: libvirt took over a QEMU started by someone else, which runs
  // already, as after a daemon restart.
  if ((c.operation == "reconnect" || c.operation == "attach") && begin) {
    return Op::reconnect;
  }
  return Op::none;
}

bool is_errno(const GenlError& e, int error) {
  return e.kind() == GenlError::Kind::kernel && e.error() == error;
}

// ---- the module, as the hook sees it ----------------------------------------

// A group as the hook compares it with the metadata.
struct LiveGroup {
  std::string name;
  std::string vm;
  std::uint32_t mode = 0;
  std::uint32_t state = 0;
  std::vector<std::string> members;  // sorted
};

std::vector<LiveGroup> live_groups(Kvmai& k) {
  std::vector<LiveGroup> out;
  for (const Group& g : k.groups()) {
    LiveGroup l{.name = g.name.value_or(""),
                .vm = g.vm.value_or(""),
                .mode = g.mode.value_or(0),
                .state = g.state.value_or(0),
                .members = g.member_addrs()};
    std::sort(l.members.begin(), l.members.end());
    out.push_back(std::move(l));
  }
  return out;
}

void new_group(Kvmai& k, const GroupPlan& g, const std::string& vm) {
  k.group_new({.name = g.name, .vm = vm, .mode = g.mode, .bind_socket = false});
}

void set_state(Kvmai& k, const std::string& name, std::uint32_t state) {
  k.group_set(name, std::nullopt, state);
}

void assign_pmu(Kvmai& k, const std::string& vm, bool core, const std::vector<std::string>& units,
                const PmuPlan& plan, std::uint32_t pid) {
  // QEMU, not this short-lived hook, attaches the VM to the units.
  k.pmu_assign({.resources = {.vm = vm, .core = core, .units = units},
                .cpus = plan.cpus.empty() ? std::nullopt : std::optional(plan.cpus),
                .shared = plan.shared,
                .pid = pid,
                .bind_socket = false});
}

// Neither core nor units: everything the VM owns.
void release_pmu(Kvmai& k, const std::string& vm, bool core = false,
                 const std::vector<std::string>& units = {}) {
  k.pmu_release({.vm = vm, .core = core, .units = units});
}

// Runs `f`; a module error becomes a HookError saying what was being done.
template <typename F>
auto step(const std::string& what, F f) {
  try {
    return f();
  } catch (const GenlError& e) {
    throw HookError(what + ": " + e.what());
  }
}

// What a start did, to take back, last first, if a later step fails.
class Undo {
 public:
  void push(std::string what, std::function<void()> f) {
    steps_.emplace_back(std::move(what), std::move(f));
  }

  // Takes everything back, last first; returns what could not be, "" when
  // all went.
  std::string run() {
    std::string failed;
    for (std::size_t i = steps_.size(); i-- > 0;) {
      const auto& [what, take_back] = steps_[i];
      try {
        take_back();
      } catch (const std::exception& e) {
        failed += cat({failed.empty() ? "" : "; ", what, ": ", e.what()});
      }
    }
    steps_.clear();
    return failed;
  }

 private:
  std::vector<std::pair<std::string, std::function<void()>>> steps_;
};

const LiveGroup* find_group(const std::vector<LiveGroup>& live, const std::string& name) {
  const auto it =
      std::find_if(live.begin(), live.end(), [&](const LiveGroup& g) { return g.name == name; });
  return it == live.end() ? nullptr : &*it;
}

// The live group is the one the metadata asks for (its state aside).
bool same_group(const LiveGroup& live, const GroupPlan& g) {
  std::vector<std::string> wanted = g.devices;
  std::sort(wanted.begin(), wanted.end());
  return live.mode == g.mode && live.members == wanted;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

void create_group(Kvmai& k, Undo& undo, const std::string& vm, const GroupPlan& g) {
  const std::string where = "group " + g.name;
  step(where + ": create", [&] { new_group(k, g, vm); });
  // Deleting restores every port the group programmed, and drops its
  // members, whatever state it reached.
  undo.push(where + ": delete", [&k, name = g.name] { k.group_del(name); });
  for (const auto& dev : g.devices) {
    step(cat({where, ": add ", dev}), [&] { k.dev_add(g.name, GroupDevice::named(dev)); });
  }
  step(where + ": enable", [&] { set_state(k, g.name, KVMAI_STATE_ENABLED); });
}

// QEMU's pid, as libvirt recorded it when it started the process.
std::uint32_t read_pid(const Call& call) {
  // libvirt refuses "/" in QEMU domain names; a name with one would
  // point outside the run directory.
  if (call.domain.find('/') != std::string::npos) {
    throw HookError(cat({"pmu: domain name \"", printable(call.domain), R"(" holds "/")"}));
  }
  const std::string path = call.run_dir + "/" + call.domain + ".pid";
  std::ifstream f(path);
  std::string word;
  if (!(f >> word)) {
    throw HookError("pmu: cannot read QEMU's pid from " + printable(path));
  }
  std::uint32_t pid = 0;
  const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), pid);
  if (error != std::errc() || end != word.data() + word.size() || pid == 0) {
    throw HookError("pmu: " + printable(path) + " holds no pid");
  }
  return pid;
}

// ---- operations --------------------------------------------------------------

// Nothing changes; what would stop the start later is refused now, before
// QEMU runs: the plan's own problems, the module missing, and groups or
// devices that other VMs' groups hold.
void prepare(const DomainPlan& plan, Kvmai& k) {
  if (plan.groups.empty() && !plan.pmu) {
    return;
  }
  const auto live = step("list groups", [&] { return live_groups(k); });
  for (const GroupPlan& g : plan.groups) {
    if (const LiveGroup* l = find_group(live, g.name); l != nullptr && l->vm != plan.vm) {
      throw HookError("group " + g.name + " exists for vm " + printable(l->vm));
    }
    for (const auto& dev : g.devices) {
      for (const LiveGroup& l : live) {
        if (l.vm != plan.vm && contains(l.members, dev)) {
          throw HookError("group " + g.name + ": " + dev + " is in group " + printable(l.name) +
                          " of vm " + printable(l.vm));
        }
      }
    }
  }
}

void start_group(Kvmai& k, Undo& undo, const std::string& vm, const GroupPlan& g,
                 const LiveGroup* live) {
  const std::string where = "group " + g.name;
  if (live != nullptr && live->vm != vm) {
    throw HookError(where + " exists for vm " + printable(live->vm));
  }
  if (live != nullptr && same_group(*live, g)) {
    // A repeated start: what is there stays.
    if (live->state != KVMAI_STATE_ENABLED) {
      step(where + ": enable", [&] { set_state(k, g.name, KVMAI_STATE_ENABLED); });
      undo.push(where + ": disable",
                [&k, name = g.name] { set_state(k, name, KVMAI_STATE_DISABLED); });
    }
    return;
  }
  if (live != nullptr) {
    // Left by an earlier run of this domain with other settings (the
    // domain has just started, so nothing uses it): deleting it restores
    // its ports, and it is made again as the metadata says.
    step(where + ": delete the group an earlier run left", [&] { k.group_del(g.name); });
  }
  create_group(k, undo, vm, g);
}

void start_pmu(Kvmai& k, Undo& undo, const std::string& vm, const PmuPlan& p, std::uint32_t pid) {
  auto live = step("pmu: get", [&] { return k.find_pmu_record(vm); });
  if (live && live->pid && *live->pid != pid) {
    // Reserved for the QEMU of an earlier run, which is gone: this QEMU
    // could not attach to those units, and the record only stands in the
    // way.
    step("pmu: release the record of pid " + std::to_string(*live->pid),
         [&] { release_pmu(k, vm); });
    live.reset();
  }
  const bool core = p.core && !(live && live->core);
  std::vector<std::string> units;
  for (const auto& u : p.units) {
    if (!live || !contains(live->unit_names(), u)) {
      units.push_back(u);
    }
  }
  if (!core && units.empty()) {
    return;
  }
  step("pmu: assign", [&] { assign_pmu(k, vm, core, units, p, pid); });
  if (live) {
    undo.push("pmu: release", [&k, vm, core, units] { release_pmu(k, vm, core, units); });
  } else {
    undo.push("pmu: release", [&k, vm] { release_pmu(k, vm); });
  }
}

// All or nothing: libvirt stops the domain when this fails, and what this
// run made is taken back first.
void started(const Call& call, const DomainPlan& plan, Kvmai& k) {
  // Before any change, so that a missing pid file changes nothing.
  const std::uint32_t pid = plan.pmu ? read_pid(call) : 0;
  Undo undo;
  try {
    std::vector<LiveGroup> live;
    if (!plan.groups.empty()) {
      live = step("list groups", [&] { return live_groups(k); });
    }
    for (const GroupPlan& g : plan.groups) {
      start_group(k, undo, plan.vm, g, find_group(live, g.name));
    }
    if (plan.pmu) {
      start_pmu(k, undo, plan.vm, *plan.pmu, pid);
    }
  } catch (const HookError& e) {
    const std::string left = undo.run();
    throw HookError(std::string(e.what()) + (left.empty() ? "" : "; undoing failed: " + left));
  }
}

// Everything of the domain goes, whatever the metadata says now: groups
// are the domain's by their vm, the PMU record by its name.  Already gone
// (a second stop operation, module unloaded) is not a failure.
void stop(const Call& call, Kvmai& k) {
  std::vector<LiveGroup> live;
  try {
    live = live_groups(k);
  } catch (const GenlError& e) {
    if (e.kind() == GenlError::Kind::family_not_found) {
      return;  // unloading the module restored every port already
    }
    throw HookError(std::string("list groups: ") + e.what());
  }
  std::string failed;
  const auto note = [&](const std::string& what, const GenlError& e) {
    if (failed.empty()) {
      failed = what + ": " + e.what();
    }
  };
  for (const LiveGroup& g : live) {
    if (g.vm != call.domain) {
      continue;
    }
    try {
      k.group_del(g.name);
    } catch (const GenlError& e) {
      if (!is_errno(e, ENOENT)) {
        note("group " + g.name + ": delete", e);
      }
    }
  }
  // A name the module refuses owns nothing (kvm-ai metadata added while
  // the domain ran; prepare refuses such domains), and asking would fail.
  if (name_problem(call.domain, KVMAI_VM_LEN).empty()) {
    try {
      release_pmu(k, call.domain);
    } catch (const GenlError& e) {
      // ENOENT: the VM owns nothing; EOPNOTSUPP: a module without PMUs.
      if (!is_errno(e, ENOENT) && !is_errno(e, EOPNOTSUPP)) {
        note("pmu: release", e);
      }
    }
  }
  if (!failed.empty()) {
    throw HookError(failed);
  }
}

void reconnect_group(Kvmai& k, const std::string& vm, const GroupPlan& g,
                     const std::vector<LiveGroup>& live, std::vector<std::string>& warnings) {
  const std::string where = "group " + g.name;
  const LiveGroup* l = find_group(live, g.name);
  if (l != nullptr && l->vm != vm) {
    warnings.push_back(where + " belongs to vm " + printable(l->vm) + ": not put back");
    return;
  }
  if (l != nullptr && l->state == KVMAI_STATE_ENABLED) {
    return;
  }
  if (l != nullptr) {
    if (!same_group(*l, g)) {
      warnings.push_back(where + " differs from the metadata: left disabled");
      return;
    }
    try {
      set_state(k, g.name, KVMAI_STATE_ENABLED);
    } catch (const GenlError& e) {
      warnings.push_back(where + ": enable: " + e.what() + ": left disabled");
    }
    return;
  }
  // The module lost it (reloaded while the domain ran).
  Undo undo;
  try {
    create_group(k, undo, vm, g);
  } catch (const HookError& e) {
    const std::string left = undo.run();
    warnings.push_back(std::string(e.what()) + ": not put back" +
                       (left.empty() ? "" : "; undoing failed: " + left));
  }
}

void reconnect_pmu(const Call& call, Kvmai& k, const PmuPlan& p,
                   std::vector<std::string>& warnings) {
  try {
    const auto live = step("pmu: get", [&] { return k.find_pmu_record(call.domain); });
    const std::uint32_t pid = read_pid(call);
    if (live) {
      if (live->pid && *live->pid != pid) {
        warnings.push_back("pmu: the units are reserved for pid " + std::to_string(*live->pid) +
                           ", not QEMU's " + std::to_string(pid));
      }
      return;
    }
    step("pmu: assign", [&] { assign_pmu(k, call.domain, p.core, p.units, p, pid); });
  } catch (const HookError& e) {
    warnings.push_back(std::string(e.what()) + ": not put back");
  }
}

// The domain runs: it must not be stopped for what is merely missing, only
// for what is unsafe, an enabled group of this domain with a device that
// the domain is not given (libvirt kills the domain when this fails, and
// its stop operations delete the group).
void reconnect(const Call& call, const DomainXml& xml, const TreeReader& sys, Kvmai& k,
               std::vector<std::string>& warnings) {
  std::vector<LiveGroup> live;
  try {
    live = live_groups(k);
  } catch (const GenlError& e) {
    // No module, no relaxed port: nothing unsafe, and nothing to put back
    // into it either.
    warnings.push_back(std::string("list groups: ") + e.what() + ": nothing put back");
    return;
  }
  for (const LiveGroup& g : live) {
    if (g.vm != call.domain || g.state != KVMAI_STATE_ENABLED) {
      continue;
    }
    for (const auto& dev : g.members) {
      const bool mdev = std::any_of(xml.mdevs.begin(), xml.mdevs.end(),
                                    [&](const std::string& m) { return to_lower(m) == dev; });
      if (!contains(xml.pci_devices, dev) && !mdev) {
        throw HookError("group " + printable(g.name) + " is enabled with " + printable(dev) +
                        ", which is not a PCI or mdev hostdev of domain " + printable(call.domain));
      }
    }
  }
  DomainPlan plan;
  try {
    plan = plan_domain(call.domain, xml, sys,
                       xml.kvmai.pmu ? read_host_config(call.config) : HostConfig{});
  } catch (const HookError& e) {
    warnings.push_back(std::string(e.what()) + ": nothing put back");
    return;
  }
  for (const GroupPlan& g : plan.groups) {
    reconnect_group(k, plan.vm, g, live, warnings);
  }
  if (plan.pmu) {
    reconnect_pmu(call, k, *plan.pmu, warnings);
  }
}

void release_partitions(const Call& call, std::string_view domain_xml, Kvmai& k,
                        std::vector<std::string>& warnings) {
  try {
    const DomainXml xml = parse_domain_xml(domain_xml);
    if (std::none_of(xml.kvmai.partitions.begin(), xml.kvmai.partitions.end(),
                     [](const PartitionSpec& p) { return p.remove.value_or("") == "yes"; })) {
      return;
    }
    const FsReader sys(call.sysfs_root);
    remove_partitions(plan_partitions(xml, read_host_config(call.config), sys), call.sysfs_root, k,
                      warnings);
  } catch (const HookError& e) {
    warnings.push_back(std::string(e.what()) + ": no partition removed");
  }
}

void start_or_reconnect(const Call& call, Op op, const DomainXml& xml, Kvmai& k,
                        std::vector<std::string>& warnings) {
  const FsReader sys(call.sysfs_root);
  // Any domain's, kvm-ai's or not: it reads sysfs and opens no socket.
  // Not at reconnect, where the domain runs with the device already.
  if (op != Op::reconnect) {
    check_counters_devices(call.domain, xml, sys);
  }
  if (!xml.kvmai.present) {
    return;  // not a kvm-ai domain
  }
  // Only a <kvmai:pmu> and <kvmai:partition> have settings there.
  const auto host = [&] {
    return xml.kvmai.pmu || !xml.kvmai.partitions.empty() ? read_host_config(call.config)
                                                          : HostConfig{};
  };
  switch (op) {
    case Op::prepare: {
      const HostConfig config = host();
      // The partitions first: the groups may name them.
      const auto parts = plan_partitions(xml, config, sys);
      const auto before =
          parts.empty() ? partition::Layout{} : make_partitions(parts, call.sysfs_root, k);
      try {
        prepare(plan_domain(call.domain, xml, sys, config), k);
      } catch (const std::exception&) {
        if (!parts.empty()) {
          undo_partitions(parts, before, call.sysfs_root);
        }
        throw;
      }
      break;
    }
    case Op::started:
      started(call, plan_domain(call.domain, xml, sys, host()), k);
      break;
    case Op::reconnect:
      reconnect(call, xml, sys, k, warnings);
      break;
    case Op::stop:
    case Op::none:
      break;
  }
}

// libvirt puts the hook's standard error into its own one-line error,
// which `virsh start` prints on the operator's terminal.  Messages quote
// the kernel's extack, which names processes by their comm, and any local
// user chooses a comm: line breaks become spaces, and every other byte
// that is not printable ASCII is shown as \xHH (escape.h, as kvmaictl
// shows it everywhere), so no escape sequence gets through, whichever
// stream the line goes to.
std::string one_line(std::string s) {
  std::replace_if(
      s.begin(), s.end(), [](char c) { return c == '\n' || c == '\r' || c == '\t'; }, ' ');
  return escape_bytes(s);
}

}  // namespace

Call call_of(const Words& words, const GlobalOptions& opts) {
  Call c;
  c.run_dir = words.value("run-dir").value_or(c.run_dir);
  c.config = words.value("config").value_or(c.config);
  c.sysfs_root = opts.sysfs_root;
  const auto data = words.operands();
  c.domain = data[0];
  c.operation = data[1];
  c.suboperation = data[2];
  // Later libvirt versions may pass more: ignored, since refusing them
  // would stop every domain from starting.
  c.extra = data.size() > 3 ? data[3] : "-";
  return c;
}

Call parse_call(const Args& args) {
  GlobalOptions opts;
  return call_of(parse_words(table_command("hook", "qemu").syntax, args, opts), opts);
}

bool acts_on(const Call& call) {
  return op_of(call) != Op::none;
}

int run_qemu_hook(const Call& call, std::string_view domain_xml, std::ostream& err,
                  const TransportFactory& connect) {
  const Op op = op_of(call);
  if (op == Op::none) {
    return kExitOk;
  }
  // The module's warnings (extack on success) come first.
  std::vector<std::string> module_warnings;
  Kvmai k(connect, [&](std::string_view w) { module_warnings.emplace_back(w); });
  std::vector<std::string> warnings;
  try {
    if (op == Op::stop) {
      // By the domain's name, not by its XML: `virsh metadata --live
      // --remove` takes kvm-ai's element out of a running domain, and what
      // `started` made must go all the same.  A domain that never was
      // kvm-ai's costs a dump and a release that finds nothing.
      stop(call, k);
      // Partitions go by the XML's word, once libvirt let go of them.
      if (call.operation == "release") {
        release_partitions(call, domain_xml, k, warnings);
      }
    } else {
      start_or_reconnect(call, op, parse_domain_xml(domain_xml), k, warnings);
    }
  } catch (const std::exception& e) {
    err << "kvmai: " << one_line(e.what()) << '\n';
    return kExitFailed;
  }
  warnings.insert(warnings.begin(), module_warnings.begin(), module_warnings.end());
  for (const auto& w : warnings) {
    err << "kvmai: warning: " << one_line(w) << '\n';
  }
  return kExitOk;
}

}  // namespace kvmai::kvmaictl::hook
