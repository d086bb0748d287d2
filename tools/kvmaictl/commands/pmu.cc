// `kvmaictl pmu`: which VM owns which PMU resources (pmu-host-get, pmu-get,
// pmu-assign, pmu-release), and the launcher that hands a VM's
// reservations to its VMM (pmu_exec.h). Keywords are the spec's attribute
// names.
#include <linux/kvmai.h>

#include <algorithm>
#include <charconv>

#include "cli/cli.h"
#include "commands/bind_watch.h"
#include "commands/group_print.h"
#include "commands/pmu_exec.h"
#include "commands/pmu_print.h"
#include "model/perf_pmus.h"
#include "tree_options.h"

namespace kvmai::kvmaictl {
namespace {

// The word for the core PMU; every other resource word names a unit.
constexpr std::string_view kCore = "core";

std::string checked_vm(const std::string& vm) {
  return checked_name("VM", vm, KVMAI_VM_LEN);
}

std::string checked_unit(const std::string& name) {
  return checked_name("unit name", name, KVMAI_UNIT_LEN);
}

std::uint32_t checked_pid(const std::string& word) {
  std::uint32_t pid = 0;
  const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), pid);
  if (error != std::errc() || end != word.data() + word.size() || pid == 0) {
    throw UsageError("bad PID \"" + word + "\"");
  }
  return pid;
}

// `VM { core | UNIT }... { KEYWORD [ VALUE ] }...` with resources and
// keywords in any order after VM. A word that is a keyword or a unique
// prefix of one is that keyword, as everywhere in this tool, so a unit
// cannot be named by a prefix of "cpus", "shared", "pid" or "bind-socket".
// No uncore PMU is; the core PMU's perf name "cpu" is, but the core PMU is
// `core` here. Keywords may also be written --KEYWORD [VALUE] or
// --KEYWORD=VALUE, as in the issue that asked for this command.
struct Resources {
  KeywordArgs kw;  // operands: the VM
  bool core = false;
  std::vector<std::string> units;
  std::optional<std::string> sysfs_root;
};

// The keyword `word` names, nullptr when none; throws UsageError when it
// is the prefix of several.
const Keyword* find_keyword(std::string_view word, const std::vector<Keyword>& keywords) {
  std::vector<std::string_view> names;
  std::size_t prefixed = 0;
  for (const auto& k : keywords) {
    if (k.name == word) {
      return &k;
    }
    names.push_back(k.name);
    if (!word.empty() && k.name.starts_with(word)) {
      ++prefixed;
    }
  }
  if (prefixed == 0) {
    return nullptr;
  }
  return &keywords[match_word(word, names, "keyword")];
}

Resources parse_resources(const Args& args, const std::vector<Keyword>& keywords,
                          bool with_sysfs_root) {
  Resources r;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    // A keyword's value: what follows "=", else the next word, verbatim
    // (it may look like an option).
    const auto take = [&](const Keyword& k, const std::optional<std::string>& inline_value) {
      if (r.kw.has(k.name)) {
        throw UsageError("\"" + std::string(k.name) + "\" given twice");
      }
      std::string value;
      if (k.value_name.empty()) {
        if (inline_value) {
          throw UsageError("\"" + std::string(k.name) + "\" takes no value");
        }
      } else if (inline_value) {
        value = *inline_value;
      } else if (++i < args.size()) {
        value = args[i];
      } else {
        throw UsageError("missing " + std::string(k.value_name) + " after \"" +
                         std::string(k.name) + '"');
      }
      r.kw.given.emplace_back(k.name, std::move(value));
    };

    if (word.starts_with("--")) {
      const auto eq = word.find('=');
      const std::string name = word.substr(2, eq == std::string::npos ? eq : eq - 2);
      const auto inline_value =
          eq == std::string::npos ? std::nullopt : std::optional(word.substr(eq + 1));
      if (with_sysfs_root && name == "sysfs-root") {
        if (r.sysfs_root) {
          throw UsageError("\"--sysfs-root\" given twice");
        }
        if (!inline_value && i + 1 == args.size()) {
          throw UsageError("missing DIR after \"--sysfs-root\"");
        }
        r.sysfs_root = inline_value ? *inline_value : args[++i];
        continue;
      }
      const Keyword* k = name.empty() ? nullptr : find_keyword(name, keywords);
      if (k == nullptr) {
        throw UsageError("unrecognised option '" + word + "'");
      }
      take(*k, inline_value);
    } else if (word.starts_with('-')) {
      throw UsageError("unrecognised option '" + word + "'");
    } else if (r.kw.operands.empty()) {
      r.kw.operands.push_back(checked_vm(word));
    } else if (word == kCore) {
      if (r.core) {
        throw UsageError("\"core\" given twice");
      }
      r.core = true;
    } else if (const Keyword* k = find_keyword(word, keywords)) {
      take(*k, std::nullopt);
    } else {
      if (std::find(r.units.begin(), r.units.end(), word) != r.units.end()) {
        throw UsageError("unit \"" + word + "\" given twice");
      }
      r.units.push_back(checked_unit(word));
    }
  }
  if (r.kw.operands.empty()) {
    throw UsageError("missing VM");
  }
  return r;
}

// The resources of `r` as a request for the VM's record.
AttrSet resource_request(const Resources& r) {
  AttrSet req;
  req.put_string(KVMAI_A_PMU_VM, r.kw.operands.front());
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

void show(const Args& args, Context& ctx) {
  TreeRoots roots;
  const std::string vm = parse_tree_args(args, roots, true);
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
  const auto sys = open_sysfs(roots);
  const auto proc = open_procfs(roots);
  const auto t = ctx.connect(KVMAI_FAMILY_NAME);
  const auto host = pmu_module_call([&] { return t->request(KVMAI_CMD_PMU_HOST_GET, {}); });
  ctx.warn(host.warning);
  const auto records = pmu_module_call([&] { return t->dump(KVMAI_CMD_PMU_GET, {}); });
  print_pmu_host(ctx.out, host.attrs, read_mediated_pmu(*sys), read_nmi_watchdog(*proc), "host");
  print_records(ctx, records, true);
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

void assign(const Args& args, Context& ctx) {
  const auto r = parse_resources(
      args, {{"cpus", "LIST"}, {"shared", ""}, {"pid", "PID"}, {"bind-socket", ""}}, true);
  if (!r.core && r.units.empty()) {
    throw UsageError("missing core or UNIT");
  }
  const std::string& vm = r.kw.operands.front();
  AttrSet req = resource_request(r);
  if (const auto cpus = r.kw.value("cpus")) {
    if (cpus->empty() || cpus->size() >= KVMAI_CPUS_LEN) {
      throw UsageError("cpus LIST must be 1 to " + std::to_string(KVMAI_CPUS_LEN - 1) +
                       " characters");
    }
    req.put_string(KVMAI_A_PMU_CPUS, *cpus);
  }
  if (r.kw.has("shared")) {
    req.put_flag(KVMAI_A_PMU_SHARED);
  }
  if (const auto pid = r.kw.value("pid")) {
    req.put_u32(KVMAI_A_PMU_PID, checked_pid(*pid));
  }
  const bool bind = r.kw.has("bind-socket");
  if (bind) {
    req.put_flag(KVMAI_A_PMU_BIND_SOCKET);
  }
  const std::string kvm_problem =
      r.core ? mediated_pmu_problem(read_mediated_pmu(FsReader(r.sysfs_root.value_or("/sys"))))
             : "";

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

void release(const Args& args, Context& ctx) {
  const auto r = parse_resources(args, {}, false);
  const auto req = resource_request(r);
  const auto t = ctx.connect(KVMAI_FAMILY_NAME);
  ctx.warn(pmu_module_call([&] { return t->request(KVMAI_CMD_PMU_RELEASE, req); }).warning);
}

void exec(const Args& args, Context& ctx) {
  pmu_exec(args, ctx, [] { return open_kvmai_dev(); });
}

const ObjectRegistrar kRegistrar({
    .name = "pmu",
    .summary = "core and uncore PMUs owned by VMs (kvmai module)",
    .commands = {{.name = "show",
                  .usage = "[ VM ] [ --sysfs-root DIR ] [ --procfs-root DIR ]",
                  .summary = "the host's PMUs and every VM's, or one VM's",
                  .run = show},
                 {.name = "assign",
                  .usage =
                      "VM { core | UNIT }... [ cpus LIST ] [ shared ] [ pid PID ] [ bind-socket ]\n"
                      "                           [ --sysfs-root DIR ]",
                  .summary = "give a VM the core PMU and/or uncore units",
                  .run = assign},
                 {.name = "release",
                  .usage = "VM [ core | UNIT ]...",
                  .summary = "take back what is named, or everything the VM owns",
                  .run = release},
                 {.name = "exec",
                  .usage = "--user USER [ --group GROUP ] VM [ UNIT ]... -- COMMAND [ ARG ]...\n"
                           "                           (COMMAND inherits descriptors of the units, "
                           "all the VM's by\n"
                           "                           default, at 3, 4, ... and "
                           "KVMAI_UNCORE_FDS=3:4..., and runs as\n"
                           "                           USER without capabilities; "
                           "--user root keeps root; needs root)",
                  .summary = "run a VMM as USER holding descriptors of the VM's uncore units",
                  .run = exec,
                  .keeps_double_dash = true}},
    .default_command = "show",
});

}  // namespace
}  // namespace kvmai::kvmaictl
