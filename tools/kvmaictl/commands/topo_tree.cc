// `kvmaictl topo tree`: the PCI hierarchy below each host bridge, as
// `lspci -t` draws it, with what decides P2P at each function: ACS
// control on ports, ATS on endpoints, and the names topo gives. Reads sysfs.
#include <fmt/format.h>

#include <map>

#include "commands/commands.h"
#include "commands/host.h"
#include "model/topology.h"

namespace kvmai::kvmaictl {
namespace {

using Children = std::map<std::string, std::vector<const PciDevice*>>;

// What the tree shows of a function's ACS: the control bits set on a port
// that has the capability ("-" for none set), or why they are not known.
std::string acs_text(const PciConfig& c) {
  switch (c.acs_presence) {
    case Presence::present: {
      const auto bits = acs_bit_names(c.acs->ctl);
      return bits.empty() ? "-" : fmt::format("{}", fmt::join(bits, ","));
    }
    case Presence::absent:
      return "absent";
    case Presence::unknown:
      break;
  }
  return "unknown";
}

void print_node(Printer& out, const Topology& topo, const Children& children, const PciDevice& d,
                const std::string& prefix, bool last) {
  out.open_object();
  out.text(prefix + (last ? "`-- " : "|-- "));
  out.print_string("bdf", d.bdf, {"", 14});
  // Endpoints by topo's name where they have one, the rest by role.
  const std::string name = topo.name_of(d);
  out.print_opt_string("name", name.empty() ? std::nullopt : std::optional(name), {}, "-",
                       Show::json_only);
  out.print_string("role", role_name(d.role), {}, Show::json_only);
  out.text((name.empty() ? role_name(d.role) : name) + " ");
  out.print_string("vendor", to_hex(d.vendor, 4), {}, Show::json_only);
  out.print_string("device", to_hex(d.device, 4), {}, Show::json_only);
  out.text("[" + to_hex(d.vendor, 4).substr(2) + ":" + to_hex(d.device, 4).substr(2) + "]");
  if (d.role == Role::upstream_port) {
    out.print_string("switch", topo.switch_name(d.bdf), {" "});
  }
  // ACS matters on the ports P2P crosses; on an endpoint only when it has
  // the capability (multi-function devices).
  if (d.is_bridge() || d.config.acs_presence == Presence::present) {
    out.print_string("acs", acs_text(d.config), {" acs "});
  }
  if (d.config.ats_presence == Presence::present) {
    out.print_string("ats", ats_state(d), {" ats "});
  }
  out.newline();
  out.open_array("children");
  if (const auto it = children.find(d.bdf); it != children.end()) {
    const std::string below = prefix + (last ? "    " : "|   ");
    for (std::size_t i = 0; i < it->second.size(); ++i) {
      print_node(out, topo, children, *it->second[i], below, i + 1 == it->second.size());
    }
  }
  out.close_array();
  out.close_object();
}

}  // namespace

void topo_tree(const Words& /*words*/, Context& ctx) {
  const auto sys = open_sysfs(ctx.opts);
  const Topology topo(PciTree::read(*sys, tree_options(ctx.opts)));
  Printer& out = ctx.out;

  // Each function under its nearest bridge, or under its root bus.
  Children children;
  for (const auto& d : topo.tree().devices()) {
    children[d.parents.empty() ? d.root : d.parents.back()].push_back(&d);
  }
  out.open_array("roots");
  for (const auto& [name, root] : topo.tree().roots()) {
    const auto it = children.find(name);
    if (it == children.end()) {
      continue;
    }
    out.open_object();
    out.print_string("name", name, {});
    const std::optional<int> node = it->second.front()->numa_node;
    out.print_opt_int("numa_node", node ? std::optional<std::int64_t>(*node) : std::nullopt,
                      {" numa "});
    if (root.as_switch) {
      out.print_string("switch", topo.switch_name(name), {" "});
    }
    out.newline();
    out.open_array("children");
    for (std::size_t i = 0; i < it->second.size(); ++i) {
      print_node(out, topo, children, *it->second[i], "", i + 1 == it->second.size());
    }
    out.close_array();
    out.close_object();
  }
  out.close_array();
}

}  // namespace kvmai::kvmaictl
