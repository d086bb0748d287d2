#include "common/format.h"

#include <algorithm>

namespace kvmai {

std::string to_hex(std::uint64_t value, int digits) {
  return fmt::format("0x{:0{}x}", value, digits);
}

std::string to_lower(std::string s) {
  std::ranges::transform(s, s.begin(), [](unsigned char c) {
    return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  });
  return s;
}

}  // namespace kvmai
