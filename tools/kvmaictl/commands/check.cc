// `kvmaictl check`: the readiness checks (check/checks.h), one line each.
#include <algorithm>
#include <map>

#include "check/checks.h"
#include "commands/commands.h"
#include "commands/host.h"

namespace kvmai::kvmaictl {

void check_show(const Words& words, Context& ctx) {
  std::string only = words.operand(0);
  std::vector<std::string_view> ids(check_ids().begin(), check_ids().end());
  if (!only.empty()) {
    only = std::string(ids[match_word(only, ids, "check")]);
  }

  const auto sys = open_sysfs(ctx.opts);
  const auto proc = open_procfs(ctx.opts);
  const Topology topo(PciTree::read(*sys, tree_options(ctx.opts)));
  std::map<Status, int> count;
  Printer& out = ctx.out;
  out.open_array("checks");
  for (const auto& r : run_checks(*sys, *proc, topo)) {
    if (!only.empty() && r.id != only) {
      continue;
    }
    ++count[r.status];
    std::string label = status_name(r.status);
    std::transform(label.begin(), label.end(), label.begin(), ::toupper);
    out.open_object();
    out.print_string("id", r.id, {label + "  ", 14});
    out.print_string("status", status_name(r.status), {}, Show::json_only);
    out.print_string("evidence", r.evidence, {});
    out.print_opt_string("fix", r.fix.empty() ? std::nullopt : std::optional(r.fix),
                         {"\n      fix: "}, "", r.fix.empty() ? Show::json_only : Show::any);
    out.close_object();
    out.newline();
  }
  out.close_array();
  out.open_object("summary");
  out.print_int("pass", count[Status::pass], {"\n", 0});
  out.print_int("warn", count[Status::warn], {" pass, "});
  out.print_int("fail", count[Status::fail], {" warn, "});
  out.text(" fail\n");
  out.close_object();
  if (count[Status::fail] > 0) {
    throw OpError(std::to_string(count[Status::fail]) + " check(s) failed");
  }
}

}  // namespace kvmai::kvmaictl
