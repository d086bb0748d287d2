// `kvmaictl monitor`: the kvmai module's notifications (multicast group
// "monitor"), one line each, until interrupted.
#include <linux/kvmai.h>

#include "cli.h"
#include "kvmai_group.h"
#include "stop_signals.h"

namespace po = boost::program_options;

namespace kvmaictl {
namespace {

// The event word of each notification.
std::string_view event_name(std::uint8_t cmd) {
  switch (cmd) {
    case KVMAI_CMD_GROUP_CREATE_NTF:
      return "create";
    case KVMAI_CMD_GROUP_CHANGE_NTF:
      return "change";
    case KVMAI_CMD_GROUP_DELETE_NTF:
      return "delete";
    default:
      return {};
  }
}

// Text: "[group change] NAME state ..."; JSON: {"event": ..., "group": {...}}.
void print_event(Context& ctx, const GenlMessage& m) {
  Printer& out = ctx.out;
  const auto event = event_name(m.cmd);
  out.print_string("event", event, {"[group "});
  out.text("]");
  if (m.cmd == KVMAI_CMD_GROUP_DELETE_NTF) {
    out.print_opt_string("name", m.attrs.str(KVMAI_A_GROUP_NAME), {" "}, "?", Show::text_only);
  } else {
    print_group_summary(out, m.attrs);
  }
  // The whole group in JSON, as `group show` prints it.
  if (out.json()) {
    print_group(out, m.attrs, false, "group");
  }
  out.newline();
  out.emit();
}

void listen(const Args& args, Context& ctx) {
  std::uint64_t count = 0;
  po::options_description opts;
  opts.add_options()("count", po::value(&count)->value_name("N"),
                     "stop after N notifications (default: until interrupted)");
  parse_args(args, opts);

  const auto t = ctx.connect(KVMAI_FAMILY_NAME);
  const StopSignals stop;
  t->subscribe(KVMAI_MCGRP_MONITOR);
  std::uint64_t seen = 0;
  t->receive(
      [&](const GenlMessage& m) {
        if (event_name(m.cmd).empty()) {
          return true;  // not a notification this tool knows
        }
        print_event(ctx, m);
        return count == 0 || ++seen < count;
      },
      stop.fd());
}

const ObjectRegistrar kRegistrar({
    .name = "monitor",
    .summary = "print the module's notifications until interrupted",
    .commands = {{.name = "all",
                  .usage = "[ --count N ]",
                  .summary = "group create, change and delete events, one line each",
                  .run = listen}},
    .default_command = "all",
});

}  // namespace
}  // namespace kvmaictl
