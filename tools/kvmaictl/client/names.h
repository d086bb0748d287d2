// What the kvmai module calls things: its one rule for group, VM and unit
// names, its limits, and the names of the spec's enums
// (Documentation/netlink/specs/kvmai.yaml), in tables.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/names.h"

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
// Qualified: model/topology.h has a kvmaictl::Named of its own.
using EnumNames = std::vector<kvmai::Named<std::uint32_t>>;

const EnumNames& mode_names();
const EnumNames& state_names();
const EnumNames& path_type_names();
const EnumNames& feature_names();
const EnumNames& scope_names();

// The name of `value`, or its number when the spec has no such entry.
std::string enum_name(const EnumNames& names, std::uint32_t value);
// The value named `word` (a unique prefix will do); throws UsageError
// naming `what`.
std::uint32_t enum_value(const EnumNames& names, std::string_view word, std::string_view what);
// The names of the flags set in `value` (unknown bits as numbers).
std::vector<std::string> flag_names(const EnumNames& names, std::uint32_t value);

}  // namespace kvmai::kvmaictl
