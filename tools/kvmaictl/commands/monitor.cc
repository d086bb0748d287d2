// `kvmaictl monitor`: the kvmai module's notifications (multicast group
// "monitor"), one line each, until interrupted.
#include "commands/commands.h"
#include "commands/group_print.h"
#include "commands/pmu_print.h"
#include "common/names.h"
#include "common/stop_signals.h"

namespace kvmai::kvmaictl {
namespace {

// What each notification is called: the object it is about and what
// happened to it.
struct EventName {
  std::string_view object;
  std::string_view name;
};

constexpr Named<Event::Kind> kEventNames[] = {
    {Event::Kind::group_create, "create"},
    {Event::Kind::group_change, "change"},
    {Event::Kind::group_delete, "delete"},
    {Event::Kind::pmu_change, "change"},
};

EventName event_name(const Event& e) {
  if (e.kind != Event::Kind::pmu_change) {
    return {"group", name_of(kEventNames, e.kind)};
  }
  // The module sends one kind of PMU notification; a record owning
  // nothing is the VM letting go of its last resource.
  return {"pmu", e.pmu.released() ? "release" : "change"};
}

// Text: "[group change] NAME state ..." or "[pmu change] VM core ...";
// JSON: {"object": ..., "event": ..., OBJECT: {...}}.
void print_event(Context& ctx, const Event& e) {
  Printer& out = ctx.out;
  const EventName event = event_name(e);
  out.print_string("object", event.object, {"["});
  out.print_string("event", event.name, {" "});
  out.text("]");
  if (e.kind == Event::Kind::pmu_change) {
    if (e.pmu.released()) {
      out.print_opt_string("vm", e.pmu.vm, {" "}, "?", Show::text_only);
    } else {
      print_pmu_summary(out, e.pmu);
    }
    // The whole record in JSON, as `pmu show` prints it.
    if (out.json()) {
      print_pmu(out, e.pmu, false, "pmu");
    }
  } else {
    if (e.kind == Event::Kind::group_delete) {
      out.print_opt_string("name", e.group.name, {" "}, "?", Show::text_only);
    } else {
      print_group_summary(out, e.group);
    }
    // The whole group in JSON, as `group show` prints it.
    if (out.json()) {
      print_group(out, e.group, false, "group");
    }
  }
  out.newline();
  out.emit();
}

}  // namespace

void monitor_all(const Words& words, Context& ctx) {
  // Stop after N notifications; until interrupted without.
  const std::uint64_t count = words.has("count") ? number_of("--count", *words.value("count")) : 0;
  Kvmai kvmai = ctx.kvmai();
  const StopSignals stop;
  kvmai.subscribe();
  std::uint64_t seen = 0;
  kvmai.watch(
      [&](const Event& e) {
        print_event(ctx, e);
        return count == 0 || ++seen < count;
      },
      stop.fd());
}

}  // namespace kvmai::kvmaictl
