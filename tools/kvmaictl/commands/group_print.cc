#include "commands/group_print.h"

#include <linux/kvmai.h>

#include "cli/errors.h"
#include "cli/grammar.h"
#include "model/pci_config.h"

namespace kvmai::kvmaictl {
namespace {

std::string opt_enum(const EnumNames& names, std::optional<std::uint32_t> value) {
  return value ? enum_name(names, *value) : "unknown";
}

// ACS control words as bit names: "SV RR CR UF", or "none".
std::string acs_text(std::uint32_t reg) {
  std::string s;
  for (const auto& bit : acs_bit_names(static_cast<std::uint16_t>(reg))) {
    s += s.empty() ? "" : " ";
    s += bit;
  }
  return s.empty() ? "none" : s;
}

void print_u32(Printer& out, std::string_view key, std::optional<std::uint32_t> value, Col col,
               Show show = Show::any) {
  out.print_opt_int(key, value ? std::optional<std::int64_t>(*value) : std::nullopt, col, "-",
                    show);
}

// An ACS word as bit names (text only; JSON has the numbers).
void print_acs_bits(Printer& out, std::string_view key, std::optional<std::uint32_t> value,
                    Col col) {
  out.print_string(key, value ? acs_text(*value) : "unknown", col, Show::text_only);
}

void print_member(Printer& out, const AttrSet& m) {
  out.open_object();
  out.print_opt_string("pci_addr", m.str(KVMAI_A_MEMBER_PCI_ADDR), {"\n    member "});
  out.print_opt_string("driver", m.str(KVMAI_A_MEMBER_DRIVER), {" driver "});
  const auto ats = m.u8(KVMAI_A_MEMBER_ATS);
  if (ats) {
    out.print_bool("ats", *ats != 0, {" ats "});
  } else {
    out.print_opt_string("ats", std::nullopt, {" ats "}, "unknown");
  }
  out.open_array("bar");
  for (const Attr* a : m.all(KVMAI_A_MEMBER_BAR)) {
    const AttrSet bar = AttrSet::parse(a->payload);
    out.open_object();
    print_u32(out, "index", bar.u32(KVMAI_A_BAR_INDEX), {"\n        bar "});
    const auto addr = bar.u64(KVMAI_A_BAR_ADDR);
    const auto size = bar.u64(KVMAI_A_BAR_SIZE);
    // Hex in text, numbers in JSON.
    out.print_uint("addr", addr.value_or(0), {}, Show::json_only);
    out.print_uint("size", size.value_or(0), {}, Show::json_only);
    out.print_string("addr", addr ? to_hex(*addr) : "unknown", {" addr "}, Show::text_only);
    out.print_string("size", size ? to_hex(*size) : "unknown", {" size "}, Show::text_only);
    out.close_object();
  }
  out.close_array();
  out.close_object();
}

void print_port(Printer& out, const AttrSet& p, bool verbose) {
  const auto cap = p.u32(KVMAI_A_PORT_ACS_CAP);
  const auto saved = p.u32(KVMAI_A_PORT_ACS_SAVED);
  const auto target = p.u32(KVMAI_A_PORT_ACS_TARGET);
  const auto current = p.u32(KVMAI_A_PORT_ACS_CURRENT);
  out.open_object();
  out.print_opt_string("pci_addr", p.str(KVMAI_A_PORT_PCI_ADDR), {"\n    port "});
  print_u32(out, "acs_cap", cap, {}, Show::json_only);
  print_u32(out, "acs_saved", saved, {}, Show::json_only);
  print_u32(out, "acs_target", target, {}, Show::json_only);
  print_u32(out, "acs_current", current, {}, Show::json_only);
  print_acs_bits(out, "acs_saved", saved, {" acs "});
  print_acs_bits(out, "acs_current", current, {" -> "});
  print_u32(out, "users", p.u32(KVMAI_A_PORT_USERS), {" users "});
  if (verbose) {
    print_acs_bits(out, "acs_target", target, {"\n        target "});
    print_acs_bits(out, "acs_cap", cap, {" cap "});
  }
  out.close_object();
}

void print_pair(Printer& out, const AttrSet& p) {
  out.open_object();
  out.print_opt_string("a", p.str(KVMAI_A_PAIR_A), {"\n    pair "});
  out.print_opt_string("b", p.str(KVMAI_A_PAIR_B), {" <-> "});
  out.print_string("type", opt_enum(path_type_names(), p.u32(KVMAI_A_PAIR_TYPE)), {": "});
  const auto via = p.str(KVMAI_A_PAIR_VIA);
  if (via && !via->empty()) {
    out.print_string("via", *via, {" via "});
  } else {
    out.print_opt_string("via", std::nullopt, {}, "", Show::json_only);
  }
  out.close_object();
}

// Calls `print` on each `type` nest of `group`, inside the JSON array `key`.
template <typename F>
void print_nests(Printer& out, const AttrSet& group, std::uint16_t type, std::string_view key,
                 F print) {
  out.open_array(key);
  for (const Attr* a : group.all(type)) {
    print(AttrSet::parse(a->payload));
  }
  out.close_array();
}

std::vector<std::string> member_addrs(const AttrSet& group) {
  std::vector<std::string> v;
  for (const Attr* a : group.all(KVMAI_A_GROUP_MEMBER)) {
    v.push_back(AttrSet::parse(a->payload).str(KVMAI_A_MEMBER_PCI_ADDR).value_or("?"));
  }
  return v;
}

}  // namespace

std::string name_problem(std::string_view name, std::size_t size) {
  if (name.empty()) {
    return "is empty";
  }
  if (name.size() >= size) {
    return "is longer than " + std::to_string(size - 1) + " characters";
  }
  for (std::size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (is_name_char(c)) {
      continue;
    }
    // The module's own words (kvmai_bad_name()).
    const std::string what = c > ' ' && c <= '~' ? "'" + std::string(1, static_cast<char>(c)) + "'"
                                                 : "byte " + to_hex(c, 2);
    return "has " + what + " at offset " + std::to_string(i) + ", which names may not hold (" +
           std::string(kNameCharsDoc) + ")";
  }
  return "";
}

std::string checked_name(std::string_view what, const std::string& name, std::size_t size) {
  if (const auto problem = name_problem(name, size); !problem.empty()) {
    throw UsageError(std::string(what) + " \"" + printable(name) + "\" " + problem);
  }
  return name;
}

std::string printable(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c < ' ' || c > '~') {
      c = '?';
    }
  }
  return out;
}

const EnumNames& mode_names() {
  static const EnumNames names{{KVMAI_MODE_TRANSLATED, "translated"},
                               {KVMAI_MODE_DIRECT, "direct"}};
  return names;
}

const EnumNames& state_names() {
  static const EnumNames names{{KVMAI_STATE_DISABLED, "disabled"},
                               {KVMAI_STATE_ENABLED, "enabled"}};
  return names;
}

const EnumNames& path_type_names() {
  static const EnumNames names{{KVMAI_PATH_TYPE_SWITCH, "switch"},
                               {KVMAI_PATH_TYPE_HOST_BRIDGE, "host-bridge"},
                               {KVMAI_PATH_TYPE_DEVICE, "device"},
                               {KVMAI_PATH_TYPE_NONE, "none"}};
  return names;
}

const EnumNames& feature_names() {
  static const EnumNames names{{KVMAI_FEATURE_ACS_OVERRIDE, "acs-override"},
                               {KVMAI_FEATURE_VFIO_NOTIFY, "vfio-notify"},
                               {KVMAI_FEATURE_CORE_FENCE, "core-fence"},
                               {KVMAI_FEATURE_UNCORE_RESERVE, "uncore-reserve"}};
  return names;
}

std::string enum_name(const EnumNames& names, std::uint32_t value) {
  for (const auto& [v, name] : names) {
    if (v == value) {
      return std::string(name);
    }
  }
  return std::to_string(value);
}

std::uint32_t enum_value(const EnumNames& names, std::string_view word, std::string_view what) {
  std::vector<std::string_view> words;
  words.reserve(names.size());
  for (const auto& entry : names) {
    words.push_back(entry.second);
  }
  return names[match_word(word, words, what)].first;
}

std::vector<std::string> flag_names(const EnumNames& names, std::uint32_t value) {
  std::vector<std::string> out;
  for (const auto& [bit, name] : names) {
    if ((value & bit) != 0) {
      out.emplace_back(name);
      value &= ~bit;
    }
  }
  if (value != 0) {
    out.push_back(to_hex(value));
  }
  return out;
}

void print_group(Printer& out, const AttrSet& group, bool verbose, std::string_view key) {
  out.open_object(key);
  out.print_opt_string("name", group.str(KVMAI_A_GROUP_NAME), {"group "});
  print_u32(out, "id", group.u32(KVMAI_A_GROUP_ID), {" id "});
  out.print_opt_string("vm", group.str(KVMAI_A_GROUP_VM), {" vm "});
  out.print_string("mode", opt_enum(mode_names(), group.u32(KVMAI_A_GROUP_MODE)), {" mode "});
  out.print_string("state", opt_enum(state_names(), group.u32(KVMAI_A_GROUP_STATE)), {" state "});
  out.print_bool("bind_socket", group.has(KVMAI_A_GROUP_BIND_SOCKET), {" bind-socket "});
  print_nests(out, group, KVMAI_A_GROUP_MEMBER, "member",
              [&](const AttrSet& m) { print_member(out, m); });
  print_nests(out, group, KVMAI_A_GROUP_PORT, "port",
              [&](const AttrSet& p) { print_port(out, p, verbose); });
  print_nests(out, group, KVMAI_A_GROUP_PAIR, "pair",
              [&](const AttrSet& p) { print_pair(out, p); });
  out.close_object();
  out.newline();
}

void print_group_summary(Printer& out, const AttrSet& group) {
  const Show show = Show::text_only;
  out.print_opt_string("name", group.str(KVMAI_A_GROUP_NAME), {" "}, "?", show);
  out.print_string("state", opt_enum(state_names(), group.u32(KVMAI_A_GROUP_STATE)), {" state "},
                   show);
  out.print_string("mode", opt_enum(mode_names(), group.u32(KVMAI_A_GROUP_MODE)), {" mode "}, show);
  out.print_opt_string("vm", group.str(KVMAI_A_GROUP_VM), {" vm "}, "?", show);
  out.print_string_list("members", member_addrs(group), {" members "}, show);
}

std::vector<GenlMessage> join_group_parts(const std::vector<GenlMessage>& parts) {
  std::vector<GenlMessage> groups;
  for (const auto& part : parts) {
    if (!part.attrs.has(KVMAI_A_GROUP_CONTINUED) || groups.empty() ||
        groups.back().attrs.u32(KVMAI_A_GROUP_ID) != part.attrs.u32(KVMAI_A_GROUP_ID)) {
      groups.push_back(part);
      continue;
    }
    for (const auto& a : part.attrs.attrs()) {
      if (a.type == KVMAI_A_GROUP_MEMBER || a.type == KVMAI_A_GROUP_PORT ||
          a.type == KVMAI_A_GROUP_PAIR) {
        groups.back().attrs.add(a);
      }
    }
  }
  return groups;
}

}  // namespace kvmai::kvmaictl
