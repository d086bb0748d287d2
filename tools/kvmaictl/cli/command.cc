#include "cli/command.h"

namespace kvmai::kvmaictl {

void Context::warn(std::string_view text) const {
  if (!text.empty()) {
    err << "Warning: " << where << ": " << text << '\n';
  }
}

Kvmai Context::kvmai() const {
  return {connect, [this](std::string_view text) { warn(text); }};
}

}  // namespace kvmai::kvmaictl
