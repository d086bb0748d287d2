// The real GenlTransport, over libnl-genl-3.
#pragma once

#include <memory>
#include <string_view>

#include "client/genl.h"

namespace kvmai::kvmaictl {

// Connects a generic netlink socket and resolves `family`. Throws
// GenlError::family_not_found when the kernel does not know the family
// (for kvmai: the module is not loaded).
std::unique_ptr<GenlTransport> connect_libnl(std::string_view family);

}  // namespace kvmai::kvmaictl
