// P2P groups as the kvmai module reports them (the spec's `group`
// attribute set), shared by the group, dev and monitor objects: the names
// of the spec's enums, and one way of printing a group.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/print.h"
#include "client/genl.h"

namespace kvmai::kvmaictl {

// Members a group can hold, and needs to be enabled (p2p-groups.rst,
// "Members"): the module's own limits, which the spec does not carry.
inline constexpr std::size_t kMinGroupMembers = 2;
inline constexpr std::size_t kMaxGroupMembers = 16;

// The characters of group, VM and unit names, the same rule as the
// module's (kvmai_bad_name()): names reach terminals, shell completion,
// the kernel log and libvirt's errors, and a tenant may choose them (a
// domain's name), so they hold nothing a terminal or a shell acts on.
constexpr bool is_name_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("._:@+-").find(static_cast<char>(c)) != std::string_view::npos;
}
inline constexpr std::string_view kNameCharsDoc = "letters, digits and ._:@+- only";

// Why the module would refuse `name` as a group, VM or unit name, or ""
// when it would take it: names are 1 to `size - 1` (`size` counts the
// NUL, as the spec's *-len constants do) is_name_char() characters.
std::string name_problem(std::string_view name, std::size_t size);

// `name`, or a UsageError: `what` "NAME" and name_problem()'s words.
std::string checked_name(std::string_view what, const std::string& name, std::size_t size);

// `s` with every byte that is not printable ASCII shown as '?': safe to
// quote in a one-line message, whatever an XML attribute held.
std::string printable(std::string_view s);

// An enum of the spec: value and name, in spec order.
using EnumNames = std::vector<std::pair<std::uint32_t, std::string_view>>;

const EnumNames& mode_names();
const EnumNames& state_names();
const EnumNames& path_type_names();
const EnumNames& feature_names();

// The name of `value`, or its number when the spec has no such entry.
std::string enum_name(const EnumNames& names, std::uint32_t value);
// The value named `word` (a unique prefix will do); throws UsageError
// naming `what`.
std::uint32_t enum_value(const EnumNames& names, std::string_view word, std::string_view what);
// The names of the flags set in `value` (unknown bits as numbers).
std::vector<std::string> flag_names(const EnumNames& names, std::uint32_t value);

// One group: a block of lines in text, an object under `key` in JSON (an
// array element when `key` is empty). -v adds ports' ACS target and
// capability to the text.
void print_group(Printer& out, const AttrSet& group, bool verbose, std::string_view key = {});

// The group's name, state, mode, VM and members on one line (text only).
void print_group_summary(Printer& out, const AttrSet& group);

// A group-get dump with every group whole again: the module splits a group
// whose lists do not fit one message, and each further part (flagged
// `continued`, same id) adds its members, ports and pairs to the first.
std::vector<GenlMessage> join_group_parts(const std::vector<GenlMessage>& parts);

}  // namespace kvmai::kvmaictl
