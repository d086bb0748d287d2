// `kvmaictl monitor`: the kvmai module's notifications (multicast group
// "monitor"), one line each, until interrupted.
#include <linux/kvmai.h>

#include "commands/commands.h"
#include "commands/group_print.h"
#include "commands/pmu_print.h"
#include "common/stop_signals.h"

namespace kvmai::kvmaictl {
namespace {

// What a notification is about and what happened to it.
struct Event {
  std::string_view object;  // "group", "pmu"; empty: not a notification this tool knows
  std::string_view name;
};

Event event_of(const GenlMessage& m) {
  switch (m.cmd) {
    case KVMAI_CMD_GROUP_CREATE_NTF:
      return {"group", "create"};
    case KVMAI_CMD_GROUP_CHANGE_NTF:
      return {"group", "change"};
    case KVMAI_CMD_GROUP_DELETE_NTF:
      return {"group", "delete"};
    case KVMAI_CMD_PMU_CHANGE_NTF:
      // The module sends one kind of PMU notification; a record owning
      // nothing is the VM letting go of its last resource.
      return {"pmu", pmu_released(m.attrs) ? "release" : "change"};
    default:
      return {};
  }
}

// Text: "[group change] NAME state ..." or "[pmu change] VM core ...";
// JSON: {"object": ..., "event": ..., OBJECT: {...}}.
void print_event(Context& ctx, const GenlMessage& m, const Event& event) {
  Printer& out = ctx.out;
  out.print_string("object", event.object, {"["});
  out.print_string("event", event.name, {" "});
  out.text("]");
  if (event.object == "pmu") {
    if (event.name == "release") {
      out.print_opt_string("vm", m.attrs.str(KVMAI_A_PMU_VM), {" "}, "?", Show::text_only);
    } else {
      print_pmu_summary(out, m.attrs);
    }
    // The whole record in JSON, as `pmu show` prints it.
    if (out.json()) {
      print_pmu(out, m.attrs, false, "pmu");
    }
  } else {
    if (m.cmd == KVMAI_CMD_GROUP_DELETE_NTF) {
      out.print_opt_string("name", m.attrs.str(KVMAI_A_GROUP_NAME), {" "}, "?", Show::text_only);
    } else {
      print_group_summary(out, m.attrs);
    }
    // The whole group in JSON, as `group show` prints it.
    if (out.json()) {
      print_group(out, m.attrs, false, "group");
    }
  }
  out.newline();
  out.emit();
}

}  // namespace

void monitor_all(const Words& words, Context& ctx) {
  // Stop after N notifications; until interrupted without.
  const std::uint64_t count = words.has("count") ? number_of("--count", *words.value("count")) : 0;

  const auto t = ctx.connect(KVMAI_FAMILY_NAME);
  const StopSignals stop;
  t->subscribe(KVMAI_MCGRP_MONITOR);
  std::uint64_t seen = 0;
  t->receive(
      [&](const GenlMessage& m) {
        const Event event = event_of(m);
        if (event.object.empty()) {
          return true;  // not a notification this tool knows
        }
        print_event(ctx, m, event);
        return count == 0 || ++seen < count;
      },
      stop.fd());
}

}  // namespace kvmai::kvmaictl
