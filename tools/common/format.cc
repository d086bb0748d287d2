#include "common/format.h"

namespace kvmai {

std::string to_hex(std::uint64_t value, int digits) {
  return fmt::format("0x{:0{}x}", value, digits);
}

}  // namespace kvmai
