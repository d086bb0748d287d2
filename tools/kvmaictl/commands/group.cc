// `kvmaictl group`: P2P groups of the kvmai module (group-new, group-del,
// group-get, group-set). Keywords are the spec's attribute names.
#include <linux/kvmai.h>

#include "commands/bind_watch.h"
#include "commands/commands.h"
#include "commands/group_print.h"

namespace kvmai::kvmaictl {
namespace {

void print_groups(Context& ctx, const std::vector<Group>& groups) {
  ctx.out.open_array("groups");
  for (const auto& g : groups) {
    if (&g != &groups.front()) {
      ctx.out.newline();
    }
    print_group(ctx.out, g, ctx.opts.verbose);
  }
  ctx.out.close_array();
}

// group-set with whatever of mode and state is given.
void set_group(Context& ctx, const std::string& name, std::optional<std::uint32_t> mode,
               std::optional<std::uint32_t> state) {
  ctx.kvmai().group_set(checked_name("group name", name, KVMAI_NAME_LEN), mode, state);
}

}  // namespace

std::string group_operand(const Words& words) {
  return checked_name("group name", words.operand(0), KVMAI_NAME_LEN);
}

void group_show(const Words& words, Context& ctx) {
  if (words.operands().empty()) {
    print_groups(ctx, ctx.kvmai().groups());
    return;
  }
  print_groups(ctx, {ctx.kvmai().group(group_operand(words))});
}

void group_add(const Words& words, Context& ctx) {
  NewGroup g{.name = group_operand(words),
             .vm = words.value("vm").value_or(""),
             .mode = std::nullopt,
             .bind_socket = words.has("bind-socket")};
  if (!words.has("vm")) {
    throw UsageError("missing \"vm VMID\"");
  }
  checked_name("VMID", g.vm, KVMAI_VM_LEN);
  if (const auto mode = words.value("mode")) {
    g.mode = enum_value(mode_names(), *mode, "mode");
  }

  // The group lives as long as `kvmai`'s socket when bound.
  Kvmai kvmai = ctx.kvmai();
  BindWatch watch(ctx, g.bind_socket);
  print_groups(ctx, {kvmai.group_new(g)});
  if (g.bind_socket) {
    // It ended some other way: deleted by someone else.
    watch.hold(ctx, [&](const Event& e) {
      return e.kind != Event::Kind::group_delete || e.group.name.value_or("") != g.name;
    });
  }
}

void group_del(const Words& words, Context& ctx) {
  ctx.kvmai().group_del(group_operand(words));
}

void group_set(const Words& words, Context& ctx) {
  std::optional<std::uint32_t> mode;
  std::optional<std::uint32_t> state;
  if (const auto m = words.value("mode")) {
    mode = enum_value(mode_names(), *m, "mode");
  }
  if (const auto s = words.value("state")) {
    state = enum_value(state_names(), *s, "state");
  }
  if (!mode && !state) {
    throw UsageError("nothing to set (give mode or state)");
  }
  set_group(ctx, words.operand(0), mode, state);
}

void group_enable(const Words& words, Context& ctx) {
  set_group(ctx, words.operand(0), std::nullopt, KVMAI_STATE_ENABLED);
}

void group_disable(const Words& words, Context& ctx) {
  set_group(ctx, words.operand(0), std::nullopt, KVMAI_STATE_DISABLED);
}

}  // namespace kvmai::kvmaictl
