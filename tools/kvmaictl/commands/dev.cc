// `kvmaictl dev`: devices in P2P groups (dev-add, dev-del).
#include <fmt/format.h>
#include <linux/kvmai.h>

#include "client/names.h"
#include "commands/commands.h"
#include "model/pci_tree.h"

namespace kvmai::kvmaictl {
namespace {

// "DDDD:BB:DD.F", or "BB:DD.F" in domain 0, as DDDD:BB:DD.F in lower case.
std::string pci_addr(std::string_view s) {
  if (auto bdf = parse_bdf(s)) {
    return std::move(*bdf);
  }
  throw UsageError(fmt::format("bad PCI address \"{}\" (want [DDDD:]BB:DD.F)", printable(s)));
}

}  // namespace

void dev_add(const Words& words, Context& ctx) {
  ctx.kvmai().dev_add(group_operand(words), pci_addr(words.operand(1)));
}

void dev_del(const Words& words, Context& ctx) {
  ctx.kvmai().dev_del(group_operand(words), pci_addr(words.operand(1)));
}

}  // namespace kvmai::kvmaictl
