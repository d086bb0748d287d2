// `kvmaictl group`: P2P groups of the kvmai module (group-new, group-del,
// group-get, group-set). Keywords are the spec's attribute names.
#include <linux/kvmai.h>

#include "cli/cli.h"
#include "commands/bind_watch.h"
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

void show(const Args& args, Context& ctx) {
  const auto name = args.empty() ? KeywordArgs{} : parse_keywords(args, {"NAME"}, {});
  const auto t = ctx.connect(KVMAI_FAMILY_NAME);
  if (args.empty()) {
    print_groups(ctx, join_group_parts(t->dump(KVMAI_CMD_GROUP_GET, {})));
    return;
  }
  AttrSet req;
  req.put_string(KVMAI_A_GROUP_NAME,
                 checked_name("group name", name.operands.front(), KVMAI_NAME_LEN));
  const auto reply = t->request(KVMAI_CMD_GROUP_GET, req);
  ctx.warn(reply.warning);
  print_groups(ctx, {reply});
}

// The group ended some other way: deleted by someone else.
bool group_still_there(const GenlMessage& m, const std::string& name) {
  return m.cmd != KVMAI_CMD_GROUP_DELETE_NTF ||
         m.attrs.str(KVMAI_A_GROUP_NAME).value_or("") != name;
}

void add(const Args& args, Context& ctx) {
  const auto kw =
      parse_keywords(args, {"NAME"}, {{"vm", "VMID"}, {"mode", "MODE"}, {"bind-socket", ""}});
  const std::string name = checked_name("group name", kw.operands.front(), KVMAI_NAME_LEN);
  const auto vm = kw.value("vm");
  if (!vm) {
    throw UsageError("missing \"vm VMID\"");
  }
  checked_name("VMID", *vm, KVMAI_VM_LEN);
  AttrSet req;
  req.put_string(KVMAI_A_GROUP_NAME, name).put_string(KVMAI_A_GROUP_VM, *vm);
  if (const auto mode = kw.value("mode")) {
    req.put_u32(KVMAI_A_GROUP_MODE, enum_value(mode_names(), *mode, "mode"));
  }
  const bool bind = kw.has("bind-socket");
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

void del(const Args& args, Context& ctx) {
  const auto kw = parse_keywords(args, {"NAME"}, {});
  AttrSet req;
  req.put_string(KVMAI_A_GROUP_NAME,
                 checked_name("group name", kw.operands.front(), KVMAI_NAME_LEN));
  ctx.warn(ctx.connect(KVMAI_FAMILY_NAME)->request(KVMAI_CMD_GROUP_DEL, req).warning);
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

void set(const Args& args, Context& ctx) {
  const auto kw = parse_keywords(args, {"NAME"}, {{"mode", "MODE"}, {"state", "STATE"}});
  std::optional<std::uint32_t> mode;
  std::optional<std::uint32_t> state;
  if (const auto m = kw.value("mode")) {
    mode = enum_value(mode_names(), *m, "mode");
  }
  if (const auto s = kw.value("state")) {
    state = enum_value(state_names(), *s, "state");
  }
  if (!mode && !state) {
    throw UsageError("nothing to set (give mode or state)");
  }
  set_group(ctx, kw.operands.front(), mode, state);
}

void enable(const Args& args, Context& ctx) {
  set_group(ctx, parse_keywords(args, {"NAME"}, {}).operands.front(), std::nullopt,
            KVMAI_STATE_ENABLED);
}

void disable(const Args& args, Context& ctx) {
  set_group(ctx, parse_keywords(args, {"NAME"}, {}).operands.front(), std::nullopt,
            KVMAI_STATE_DISABLED);
}

const ObjectRegistrar kRegistrar({
    .name = "group",
    .summary = "P2P groups of passthrough devices (kvmai module)",
    .commands =
        {{.name = "show",
          .usage = "[ NAME ]",
          .summary = "one group, or all: members, ports and pairs",
          .run = show},
         {.name = "add",
          .usage = "NAME vm VMID [ mode { translated | direct } ] [ bind-socket ]",
          .summary = "create a disabled, empty group",
          .run = add},
         {.name = "del",
          .usage = "NAME",
          .summary = "disable (restoring every port) and delete a group",
          .run = del},
         {.name = "set",
          .usage = "NAME [ mode { translated | direct } ] [ state { enabled | disabled } ]",
          .summary = "change mode (while disabled) or state",
          .run = set},
         {.name = "enable",
          .usage = "NAME",
          .summary = "program ACS on the ports between members",
          .run = enable},
         {.name = "disable", .usage = "NAME", .summary = "restore the ports' ACS", .run = disable}},
    .default_command = "show",
});

}  // namespace
}  // namespace kvmai::kvmaictl
