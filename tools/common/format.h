// Formatting shared by the tools: the one hex formatter, the one join and
// the one lower-casing.  Everything else is fmt::format.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace kvmai {

// "0x" and `value` in lower-case hex, zero-padded to `digits` digits.
std::string to_hex(std::uint64_t value, int digits = 0);

// `s` in lower case, ASCII letters only (PCI addresses, UUIDs).
std::string to_lower(std::string s);

// The elements of `range` (anything fmt formats) with `sep` between them.
template <typename Range>
std::string join(const Range& range, std::string_view sep) {
  return fmt::format("{}", fmt::join(range, sep));
}

}  // namespace kvmai
