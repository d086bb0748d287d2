#include "cli/command.h"

namespace kvmai::kvmaictl {

void Context::warn(std::string_view text) const {
  if (!text.empty()) {
    err << "Warning: " << where << ": " << text << '\n';
  }
}

}  // namespace kvmai::kvmaictl
