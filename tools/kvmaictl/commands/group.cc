// `kvmaictl group`: P2P groups of the kvmai module (group-new, group-del,
// group-get, group-set). Keywords are the spec's attribute names.
#include <linux/kvmai.h>

#include "commands/bind_watch.h"
#include "commands/commands.h"
#include "commands/group_print.h"

namespace kvmai::kvmaictl {
namespace {

void print_groups(Context& ctx, const std::vector<GenlMessage>& groups) {
  ctx.out.open_array("groups");
  for (const auto& g : groups) {
    if (&g != &groups.front()) {
      ctx.out.newline();
    }
    print_group(ctx.out, g.attrs, ctx.opts.verbose);
  }
  ctx.out.close_array();
}

// The group ended some other way: deleted by someone else.
bool group_still_there(const GenlMessage& m, const std::string& name) {
  return m.cmd != KVMAI_CMD_GROUP_DELETE_NTF ||
         m.attrs.str(KVMAI_A_GROUP_NAME).value_or("") != name;
}

// group-set with whatever of mode and state is given.
void set_group(Context& ctx, const std::string& name, std::optional<std::uint32_t> mode,
               std::optional<std::uint32_t> state) {
  AttrSet req;
  req.put_string(KVMAI_A_GROUP_NAME, checked_name("group name", name, KVMAI_NAME_LEN));
  if (mode) {
    req.put_u32(KVMAI_A_GROUP_MODE, *mode);
  }
  if (state) {
    req.put_u32(KVMAI_A_GROUP_STATE, *state);
  }
  ctx.warn(ctx.connect(KVMAI_FAMILY_NAME)->request(KVMAI_CMD_GROUP_SET, req).warning);
}

}  // namespace

void group_show(const Words& words, Context& ctx) {
  const auto t = ctx.connect(KVMAI_FAMILY_NAME);
  if (words.operands().empty()) {
    print_groups(ctx, join_group_parts(t->dump(KVMAI_CMD_GROUP_GET, {})));
    return;
  }
  AttrSet req;
  req.put_string(KVMAI_A_GROUP_NAME, checked_name("group name", words.operand(0), KVMAI_NAME_LEN));
  const auto reply = t->request(KVMAI_CMD_GROUP_GET, req);
  ctx.warn(reply.warning);
  print_groups(ctx, {reply});
}

void group_add(const Words& words, Context& ctx) {
  const std::string name = checked_name("group name", words.operand(0), KVMAI_NAME_LEN);
  const auto vm = words.value("vm");
  if (!vm) {
    throw UsageError("missing \"vm VMID\"");
  }
  checked_name("VMID", *vm, KVMAI_VM_LEN);
  AttrSet req;
  req.put_string(KVMAI_A_GROUP_NAME, name).put_string(KVMAI_A_GROUP_VM, *vm);
  if (const auto mode = words.value("mode")) {
    req.put_u32(KVMAI_A_GROUP_MODE, enum_value(mode_names(), *mode, "mode"));
  }
  const bool bind = words.has("bind-socket");
  if (bind) {
    req.put_flag(KVMAI_A_GROUP_BIND_SOCKET);
  }

  // The group lives as long as `t` when bound.
  const auto t = ctx.connect(KVMAI_FAMILY_NAME);
  BindWatch watch(ctx, bind);
  const auto reply = t->request(KVMAI_CMD_GROUP_NEW, req);
  ctx.warn(reply.warning);
  print_groups(ctx, {reply});
  if (bind) {
    watch.hold(ctx, [&](const GenlMessage& m) { return group_still_there(m, name); });
  }
}

void group_del(const Words& words, Context& ctx) {
  AttrSet req;
  req.put_string(KVMAI_A_GROUP_NAME, checked_name("group name", words.operand(0), KVMAI_NAME_LEN));
  ctx.warn(ctx.connect(KVMAI_FAMILY_NAME)->request(KVMAI_CMD_GROUP_DEL, req).warning);
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
