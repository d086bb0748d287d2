// `kvmaictl check`: the readiness checks (check/checks.h), one line each,
// for the host or the guest kvmaictl runs on.
#include <linux/kvmai.h>

#include <algorithm>
#include <map>

#include "check/checks.h"
#include "check/record.h"
#include "commands/commands.h"
#include "commands/host.h"

namespace kvmai::kvmaictl {
namespace {

// The devices of each enabled kvmai group, when kvmai runs here: the ports
// it relaxed for one VM are not a finding. A recorded machine has none.
std::vector<std::set<std::string>> enabled_groups(const TreeReader& sys, Context& ctx) {
  std::vector<std::set<std::string>> groups;
  if (ctx.opts.sysfs_root != kSysfsRoot || !sys.exists("module/kvmai")) {
    return groups;
  }
  try {
    for (const Group& g : ctx.kvmai().groups()) {
      if (g.state == KVMAI_STATE_ENABLED) {
        const auto addrs = g.member_addrs();
        groups.emplace_back(addrs.begin(), addrs.end());
      }
    }
  } catch (const OpError& e) {
    ctx.warn(std::string("cannot list kvmai groups, judging every relaxed port: ") + e.what());
  }
  return groups;
}

}  // namespace

void check_show(const Words& words, Context& ctx) {
  const auto sys = open_sysfs(ctx.opts);
  const auto proc = open_procfs_if_given(ctx.opts);
  const auto root = open_machine_root(ctx.opts);
  const Topology topo(PciTree::read(*sys, tree_options(ctx.opts)));
  CheckInput in{.sys = *sys,
                .proc = proc.get(),
                .root = root.get(),
                .topo = topo,
                .machine = detect_machine(*sys, proc.get()),
                .p2p_groups = {}};
  if (const auto as = words.value("as")) {
    const std::vector<std::string_view> places{"host", "guest"};
    in.machine.place = match_word(*as, places, "place") == 0 ? Place::host : Place::guest;
    in.machine.why = "as asked";
  }
  if (in.machine.place == Place::host) {
    in.p2p_groups = enabled_groups(*sys, ctx);
  }

  std::string only = words.operand(0);
  const auto& known = check_ids(in.machine.place);
  std::vector<std::string_view> ids(known.begin(), known.end());
  if (!only.empty()) {
    only = std::string(ids[match_word(only, ids, place_name(in.machine.place) + " check")]);
  }

  Printer& out = ctx.out;
  out.print_string("place", place_name(in.machine.place), {"checking a ", 0});
  out.print_string("place_evidence", in.machine.why, {" ("});
  out.text(")\n");
  std::map<Status, int> count;
  out.open_array("checks");
  for (const auto& r : run_checks(in)) {
    if (!only.empty() && r.id != only) {
      continue;
    }
    ++count[r.status];
    std::string label = status_name(r.status);
    std::transform(label.begin(), label.end(), label.begin(), ::toupper);
    out.open_object();
    out.print_string("id", r.id, {label + "  ", 18});
    out.print_string("status", status_name(r.status), {}, Show::json_only);
    out.print_string("evidence", r.evidence, {});
    const bool host = r.fix_by == FixBy::host && in.machine.place == Place::guest;
    out.print_opt_string("fix", r.fix.empty() ? std::nullopt : std::optional(r.fix),
                         {host ? "\n      fix (host operator): " : "\n      fix: "}, "",
                         r.fix.empty() ? Show::json_only : Show::any);
    out.print_string("fix_by", fix_by_name(r.fix_by), {}, Show::json_only);
    out.close_object();
    out.newline();
  }
  out.close_array();
  out.open_object("summary");
  out.print_int("pass", count[Status::pass], {"\n", 0});
  out.print_int("warn", count[Status::warn], {" pass, "});
  out.print_int("fail", count[Status::fail], {" warn, "});
  out.print_int("skip", count[Status::skip], {" fail, "});
  out.text(" skipped\n");
  out.close_object();
  if (count[Status::fail] > 0) {
    throw OpError(std::to_string(count[Status::fail]) + " check(s) failed");
  }
}

void check_record(const Words& words, Context& ctx) {
  const std::string dir = words.operand(0);
  const auto sys = open_sysfs(ctx.opts);
  const auto proc = open_procfs_if_given(ctx.opts);
  const auto root = open_machine_root(ctx.opts);
  RecordCount n;
  try {
    n = record_machine(*sys, proc.get(), root.get(), dir);
  } catch (const std::exception& e) {
    throw OpError(e.what());
  }
  Printer& out = ctx.out;
  out.print_string("dir", dir, {"recorded in "});
  out.print_uint("files", n.files, {": "});
  out.print_uint("links", n.links, {" files, "});
  out.text(" links; read it with kvmaictl --root " + dir + "\n");
}

}  // namespace kvmai::kvmaictl
