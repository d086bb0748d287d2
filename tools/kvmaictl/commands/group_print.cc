#include "commands/group_print.h"

#include "common/format.h"
#include "model/pci_config.h"

namespace kvmai::kvmaictl {
namespace {

std::string opt_enum(const EnumNames& names, std::optional<std::uint32_t> value) {
  return value ? enum_name(names, *value) : "unknown";
}

// ACS control words as bit names: "SV RR CR UF", or "none".
std::string acs_text(std::uint32_t reg) {
  const auto bits = acs_bit_names(static_cast<std::uint16_t>(reg));
  return bits.empty() ? "none" : join(bits, " ");
}

// An ACS word as bit names (text only; JSON has the numbers).
void print_acs_bits(Printer& out, std::string_view key, std::optional<std::uint32_t> value,
                    Col col) {
  out.print_string(key, value ? acs_text(*value) : "unknown", col, Show::text_only);
}

void print_member(Printer& out, const Member& m) {
  out.open_object();
  out.print_opt_string("pci_addr", m.pci_addr, {"\n    member "});
  if (m.mdev) {
    out.print_string("mdev", *m.mdev, {" mdev "});
  }
  out.print_opt_string("driver", m.driver, {" driver "});
  if (m.ats) {
    out.print_bool("ats", *m.ats, {" ats "});
  } else {
    out.print_opt_string("ats", std::nullopt, {" ats "}, "unknown");
  }
  out.open_array("bar");
  for (const MemberBar& bar : m.bars) {
    out.open_object();
    out.print_opt_int("index", bar.index, {"\n        bar "});
    // Hex in text, numbers in JSON.
    out.print_uint("addr", bar.addr.value_or(0), {}, Show::json_only);
    out.print_uint("size", bar.size.value_or(0), {}, Show::json_only);
    out.print_string("addr", bar.addr ? to_hex(*bar.addr) : "unknown", {" addr "}, Show::text_only);
    out.print_string("size", bar.size ? to_hex(*bar.size) : "unknown", {" size "}, Show::text_only);
    out.close_object();
  }
  out.close_array();
  out.close_object();
}

void print_port(Printer& out, const Port& p, bool verbose) {
  out.open_object();
  out.print_opt_string("pci_addr", p.pci_addr, {"\n    port "});
  out.print_opt_int("acs_cap", p.acs_cap, {}, "-", Show::json_only);
  out.print_opt_int("acs_saved", p.acs_saved, {}, "-", Show::json_only);
  out.print_opt_int("acs_target", p.acs_target, {}, "-", Show::json_only);
  out.print_opt_int("acs_current", p.acs_current, {}, "-", Show::json_only);
  print_acs_bits(out, "acs_saved", p.acs_saved, {" acs "});
  print_acs_bits(out, "acs_current", p.acs_current, {" -> "});
  out.print_opt_int("users", p.users, {" users "});
  if (verbose) {
    print_acs_bits(out, "acs_target", p.acs_target, {"\n        target "});
    print_acs_bits(out, "acs_cap", p.acs_cap, {" cap "});
  }
  out.close_object();
}

void print_pair(Printer& out, const MemberPair& p) {
  out.open_object();
  out.print_opt_string("a", p.a, {"\n    pair "});
  out.print_opt_string("b", p.b, {" <-> "});
  out.print_string("type", opt_enum(path_type_names(), p.type), {": "});
  if (p.via && !p.via->empty()) {
    out.print_string("via", *p.via, {" via "});
  } else {
    out.print_opt_string("via", std::nullopt, {}, "", Show::json_only);
  }
  out.close_object();
}

// Calls `print` on each of `items`, inside the JSON array `key`.
template <typename T, typename F>
void print_each(Printer& out, const std::vector<T>& items, std::string_view key, F print) {
  out.open_array(key);
  for (const T& item : items) {
    print(item);
  }
  out.close_array();
}

}  // namespace

void print_group(Printer& out, const Group& group, bool verbose, std::string_view key) {
  out.open_object(key);
  out.print_opt_string("name", group.name, {"group "});
  out.print_opt_int("id", group.id, {" id "});
  out.print_opt_string("vm", group.vm, {" vm "});
  out.print_string("mode", opt_enum(mode_names(), group.mode), {" mode "});
  out.print_string("state", opt_enum(state_names(), group.state), {" state "});
  out.print_bool("bind_socket", group.bind_socket, {" bind-socket "});
  print_each(out, group.members, "member", [&](const Member& m) { print_member(out, m); });
  print_each(out, group.ports, "port", [&](const Port& p) { print_port(out, p, verbose); });
  print_each(out, group.pairs, "pair", [&](const MemberPair& p) { print_pair(out, p); });
  out.close_object();
  out.newline();
}

void print_group_summary(Printer& out, const Group& group) {
  const Show show = Show::text_only;
  out.print_opt_string("name", group.name, {" "}, "?", show);
  out.print_string("state", opt_enum(state_names(), group.state), {" state "}, show);
  out.print_string("mode", opt_enum(mode_names(), group.mode), {" mode "}, show);
  out.print_opt_string("vm", group.vm, {" vm "}, "?", show);
  out.print_string_list("members", group.member_addrs(), {" members "}, show);
}

}  // namespace kvmai::kvmaictl
