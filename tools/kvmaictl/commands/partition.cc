// `kvmaictl partition`: how GPUs and other devices are split for VMs (SR-IOV
// VFs, the vGPU type of each VF, mdevs), and changing it: by hand, or to a
// named profile of a file (partition/). Nothing in use is destroyed: a
// change that would remove a partition a VFIO user holds open, or a member
// of an enabled P2P group, is refused naming both; a change that fails part
// way is rolled back.
#include <fmt/format.h>
#include <linux/kvmai.h>

#include <algorithm>
#include <boost/uuid/random_generator.hpp>
#include <boost/uuid/uuid_io.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "client/names.h"
#include "commands/commands.h"
#include "commands/host.h"
#include "partition/apply.h"
#include "partition/layout.h"
#include "partition/plan.h"
#include "partition/profile.h"
#include "partition/users.h"

namespace kvmai::kvmaictl {
namespace {

using partition::Layout;
using partition::Parent;
using partition::Users;
using partition::Wanted;

// kvmai's own mdev parents carry counter pages, not partitions of a
// device: `kvmaictl counters` owns them.
bool counters_parent(const Parent& p) {
  return p.name.starts_with("kvmai-");
}

// Where the vGPU types each PF's VFs offered are remembered, one file per
// PF in the format of creatable_vgpu_types. A VF lists only the types it
// can take now: none once it has one, and none on any VF once the GPU is
// full. Without what the VFs listed earlier, a profile that names types
// could not tell whether a full GPU already has them.
constexpr std::string_view kVgpuTypesDir = "/run/kvmai/vgpu-types";

std::filesystem::path vgpu_types_file(const std::string& pf) {
  return std::filesystem::path(kVgpuTypesDir) / pf;
}

// What @pf's VFs listed before, with @types (what they list now) added;
// written back when that adds any.
std::vector<VgpuType> learn_vgpu_types(const std::string& pf, const std::vector<VgpuType>& types) {
  std::ifstream in(vgpu_types_file(pf));
  std::ostringstream text;
  text << in.rdbuf();
  std::vector<VgpuType> known = parse_vgpu_types(text.str());
  bool learnt = false;
  for (const auto& t : types) {
    if (std::none_of(known.begin(), known.end(), [&](const VgpuType& k) { return k.id == t.id; })) {
      known.push_back(t);
      learnt = true;
    }
  }
  if (learnt) {
    std::error_code ec;
    std::filesystem::create_directories(kVgpuTypesDir, ec);
    std::ofstream out(vgpu_types_file(pf));
    out << "ID    : vGPU Name\n";
    for (const auto& k : known) {
      out << k.id << " : " << k.name << "\n";
    }
  }
  return known;
}

void remember_vgpu_types(Layout& l, const Context& ctx) {
  if (ctx.opts.sysfs_root != kSysfsRoot) {
    return;
  }
  for (auto& p : l.parents) {
    if (!p.sriov()) {
      continue;
    }
    if (p.vfs.empty()) {
      // No VF, no vGPU: what a reloaded driver offers is read afresh.
      std::error_code ec;
      std::filesystem::remove(vgpu_types_file(p.name), ec);
      continue;
    }
    for (const auto& k : learn_vgpu_types(p.name, p.vgpu_types)) {
      if (p.vgpu(std::to_string(k.id)) == nullptr) {
        p.vgpu_types.push_back(k);
      }
    }
  }
}

Layout read_layout(const TreeReader& sys, const Context& ctx) {
  Layout l = Layout::read(sys);
  std::erase_if(l.parents, counters_parent);
  remember_vgpu_types(l, ctx);
  return l;
}

// Who uses what: VFIO users from procfs, members of enabled P2P groups from
// the kvmai module when it is loaded. A recorded tree has neither.
// `strict`: for a change, which must know every user. `show` only warns
// when the groups cannot be listed (an unprivileged caller).
Users read_users(const Layout& l, const TreeReader& sys, Context& ctx, bool strict) {
  Users users;
  if (ctx.opts.sysfs_root != kSysfsRoot) {
    return users;
  }
  std::vector<std::string> devices;
  for (const auto& p : l.parents) {
    const auto parts = partition::partitions_of(p);
    devices.insert(devices.end(), parts.begin(), parts.end());
  }
  const auto proc = open_procfs(ctx.opts);
  partition::add_vfio_users(users, devices, sys, *proc);
  if (!sys.exists("module/kvmai")) {
    return users;
  }
  std::vector<Group> groups;
  try {
    groups = ctx.kvmai().groups();
  } catch (const OpError& e) {
    // A destructive change must know the groups: a failure to list them
    // stops it, never lets it through.
    if (strict) {
      throw;
    }
    ctx.warn(std::string("cannot list kvmai groups, showing no group as a user: ") + e.what());
  }
  for (const Group& g : groups) {
    if (g.state != KVMAI_STATE_ENABLED) {
      continue;
    }
    for (const auto& addr : g.member_addrs()) {
      users.add(addr, "in enabled P2P group " + printable(g.name.value_or("?")));
    }
  }
  return users;
}

std::string parent_of(const std::string& word) {
  if (auto name = partition::parent_name(word)) {
    return *name;
  }
  throw UsageError(fmt::format("bad device \"{}\" (want a PCI address or an mdev parent name)",
                               printable(word)));
}

std::string new_uuid() {
  return boost::uuids::to_string(boost::uuids::random_generator()());
}

// A partition's users; in text only when it has some.
void print_users(Printer& out, const Users& users, const std::string& device) {
  const auto it = users.all().find(device);
  if (it == users.all().end()) {
    out.print_string_list("users", {}, {}, Show::json_only);
  } else {
    out.print_string_list("users", it->second, {.label = " used: ", .width = 0});
  }
}

void print_layout(const Layout& l, const Users& users, const std::string& only, Context& ctx) {
  auto& out = ctx.out;
  bool any = false;
  out.open_array("parents");
  for (const auto& p : l.parents) {
    if (!only.empty() && p.name != only) {
      continue;
    }
    any = true;
    out.open_object();
    out.print_string("parent", p.name, {.label = "", .width = 14});
    out.print_string("driver", p.driver.empty() ? "none" : p.driver,
                     {.label = " driver ", .width = 0});
    if (p.sriov()) {
      out.print_int("num_vfs", p.num_vfs, {.label = " vfs ", .width = 0});
      out.print_int("total_vfs", *p.total_vfs, {.label = "/", .width = 0});
      if (p.autoprobe) {
        out.print_bool("autoprobe", *p.autoprobe, {.label = " autoprobe ", .width = 0});
      }
    }
    out.newline();
    out.open_array("vfs");
    for (const auto& vf : p.vfs) {
      out.open_object();
      out.text("  ");
      out.print_int("index", vf.index, {.label = "vf ", .width = 3});
      out.print_string("pci_addr", vf.bdf, {.label = " ", .width = 13});
      out.print_string("driver", vf.driver.empty() ? "none" : vf.driver,
                       {.label = " driver ", .width = 0});
      if (vf.vgpu_type) {
        const auto* t = p.vgpu(std::to_string(*vf.vgpu_type));
        out.print_int("vgpu_type", *vf.vgpu_type, {.label = " vgpu-type ", .width = 0});
        if (t != nullptr) {
          out.print_string("vgpu_type_name", t->name, {.label = " ", .width = 0});
        }
      }
      print_users(out, users, vf.bdf);
      out.close_object();
      out.newline();
    }
    out.close_array();
    out.open_array("mdev_types");
    for (const auto& t : p.mdev_types) {
      out.open_object();
      out.text("  ");
      out.print_string("type", t.id, {.label = "mdev-type ", .width = 0});
      if (!t.name.empty()) {
        out.print_string("name", t.name, {.label = " name ", .width = 0});
      }
      out.print_opt_int("available", t.available_instances, {.label = " available ", .width = 0});
      out.close_object();
      out.newline();
    }
    out.close_array();
    out.open_array("mdevs");
    for (const auto& m : p.mdevs) {
      out.open_object();
      out.text("  ");
      out.print_string("uuid", m.uuid, {.label = "mdev ", .width = 0});
      out.print_string("type", m.type, {.label = " type ", .width = 0});
      print_users(out, users, m.uuid);
      out.close_object();
      out.newline();
    }
    out.close_array();
    out.close_object();
  }
  out.close_array();
  if (!only.empty() && !any) {
    throw OpError(only + ": no such partitionable device (an SR-IOV PF or mdev parent)");
  }
}

void print_plan(const partition::Plan& plan, Context& ctx) {
  ctx.out.open_array("steps");
  for (const auto& s : plan.steps) {
    ctx.out.print_string("", s.text());
    ctx.out.newline();
  }
  ctx.out.close_array();
}

// Plans `wanted`, prints the plan, and unless `dry_run` carries it out,
// rolling back on a failure. Prints "no change" for an empty plan.
void change(const std::vector<Wanted>& wanted, bool dry_run, Context& ctx) {
  const auto sys = open_sysfs(ctx.opts);
  const Layout before = read_layout(*sys, ctx);
  const Users users = read_users(before, *sys, ctx, true);
  partition::Plan plan;
  try {
    plan = partition::plan(before, wanted, users, new_uuid);
  } catch (const partition::Refusal& e) {
    throw OpError(e.what());
  }
  ctx.out.open_object("plan");
  ctx.out.print_bool("dry_run", dry_run, {}, Show::json_only);
  if (plan.empty()) {
    ctx.out.print_string("result", "no change");
    ctx.out.newline();
    ctx.out.close_object();
    return;
  }
  print_plan(plan, ctx);
  if (dry_run) {
    ctx.out.close_object();
    return;
  }
  const auto outcome = partition::apply_with_rollback(plan, before, ctx.opts.sysfs_root, nullptr);
  if (ctx.opts.sysfs_root == kSysfsRoot) {
    for (const auto& [pf, types] : outcome.seen) {
      learn_vgpu_types(pf, types);
    }
  }
  ctx.out.print_uint("steps_done", outcome.steps_done, {}, Show::json_only);
  ctx.out.close_object();
  if (outcome.failure.empty()) {
    return;
  }
  if (outcome.restored) {
    throw OpError(outcome.failure + "; rolled back to the previous layout");
  }
  throw OpError(outcome.failure + "; the rollback did not restore the previous layout" +
                (outcome.rollback_failure.empty() ? "" : ": " + outcome.rollback_failure) +
                " (see `kvmaictl partition show`)");
}

}  // namespace

void partition_show(const Words& words, Context& ctx) {
  const auto sys = open_sysfs(ctx.opts);
  const Layout l = read_layout(*sys, ctx);
  const std::string only = words.operands().empty() ? "" : parent_of(words.operand(0));
  print_layout(l, read_users(l, *sys, ctx, false), only, ctx);
}

void partition_set(const Words& words, Context& ctx) {
  Wanted w;
  w.parent = parent_of(words.operand(0));
  if (const auto n = words.value("vfs")) {
    w.vfs = static_cast<int>(number_of("vfs", *n, 0, 65535));
    w.drivers.assign(static_cast<std::size_t>(*w.vfs), words.value("driver").value_or("vfio-pci"));
  } else if (words.has("driver")) {
    throw UsageError("driver needs vfs: the VFs it binds are the ones vfs makes");
  }
  if (const auto t = words.value("vgpu-type")) {
    const auto sys = open_sysfs(ctx.opts);
    const Layout l = read_layout(*sys, ctx);
    const Parent* p = l.find(w.parent);
    const int count = w.vfs.value_or(p == nullptr ? 0 : p->num_vfs);
    if (const auto vf = words.value("vf")) {
      const auto i = number_of("vf", *vf, 0, 65535);
      w.vgpu_types.assign(static_cast<std::size_t>(i) + 1, "");
      w.vgpu_types.back() = *t;
    } else {
      w.vgpu_types.assign(static_cast<std::size_t>(count), *t);
    }
  } else if (words.has("vf")) {
    throw UsageError("vf names the VF of vgpu-type");
  }
  if (const auto a = words.value("autoprobe")) {
    w.autoprobe = match_word(*a, {"off", "on"}, "autoprobe") == 1;
  }
  if (!w.vfs && w.vgpu_types.empty() && !w.autoprobe) {
    throw UsageError("nothing to set (want vfs, vgpu-type or autoprobe)");
  }
  change({w}, words.has("dry-run"), ctx);
}

void partition_add(const Words& words, Context& ctx) {
  const auto sys = open_sysfs(ctx.opts);
  const Layout l = read_layout(*sys, ctx);
  const std::string parent = parent_of(words.operand(0));
  const Parent* p = l.find(parent);
  if (p == nullptr) {
    throw OpError(parent + ": no such mdev parent");
  }
  Wanted w;
  w.parent = parent;
  std::vector<partition::WantedMdev> m;
  for (const auto& e : p->mdevs) {
    m.push_back({.type = e.type, .uuid = e.uuid});
  }
  const auto type = words.value("type");
  if (!type) {
    throw UsageError("add needs `type TYPE`");
  }
  partition::WantedMdev add{.type = *type, .uuid = ""};
  if (const auto u = words.value("uuid")) {
    add.uuid = *u;
    for (const auto& e : p->mdevs) {
      if (e.uuid == *u) {
        throw OpError(fmt::format("{}: mdev {} exists", parent, printable(*u)));
      }
    }
  }
  m.push_back(add);
  w.mdevs = std::move(m);
  change({w}, words.has("dry-run"), ctx);
}

void partition_del(const Words& words, Context& ctx) {
  const auto sys = open_sysfs(ctx.opts);
  const Layout l = read_layout(*sys, ctx);
  const std::string uuid = words.operand(0);
  for (const auto& p : l.parents) {
    std::vector<partition::WantedMdev> m;
    bool found = false;
    for (const auto& e : p.mdevs) {
      if (e.uuid == uuid) {
        found = true;
      } else {
        m.push_back({.type = e.type, .uuid = e.uuid});
      }
    }
    if (found) {
      Wanted w;
      w.parent = p.name;
      w.mdevs = std::move(m);
      change({w}, words.has("dry-run"), ctx);
      return;
    }
  }
  throw OpError(fmt::format("no mdev {} (of a partitionable parent)", printable(uuid)));
}

void partition_apply(const Words& words, Context& ctx) {
  const std::string file = words.operand(0);
  std::vector<partition::Profile> profiles;
  try {
    profiles = partition::parse_profiles(read_input("FILE", file), file);
  } catch (const std::runtime_error& e) {
    throw OpError(e.what());
  }
  if (profiles.empty()) {
    throw OpError(fmt::format("{}: no profile ([profile.NAME.PARENT])", printable(file)));
  }
  const partition::Profile* chosen = nullptr;
  if (const auto name = words.value("profile")) {
    for (const auto& p : profiles) {
      if (p.name == *name) {
        chosen = &p;
      }
    }
    if (chosen == nullptr) {
      std::string names;
      for (const auto& p : profiles) {
        names += (names.empty() ? "" : ", ") + p.name;
      }
      throw OpError(fmt::format("{}: no profile \"{}\" (it has: {})", printable(file),
                                printable(*name), names));
    }
  } else if (profiles.size() == 1) {
    chosen = &profiles.front();
  } else {
    throw UsageError(
        fmt::format("{} has {} profiles: name one with `profile NAME`", file, profiles.size()));
  }
  change(chosen->parents, words.has("dry-run"), ctx);
}

}  // namespace kvmai::kvmaictl
