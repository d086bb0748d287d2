// `kvmaictl dev`: devices in P2P groups (dev-add, dev-del): PCI functions,
// and mdevs of PCI parents by UUID.
#include <fmt/format.h>
#include <linux/kvmai.h>

#include "client/names.h"
#include "commands/commands.h"
#include "common/format.h"
#include "model/pci_tree.h"
#include "partition/layout.h"

namespace kvmai::kvmaictl {
namespace {

// "DDDD:BB:DD.F", or "BB:DD.F" in domain 0, as DDDD:BB:DD.F in lower case;
// or an mdev's UUID, in lower case as sysfs names it.
GroupDevice group_device(std::string_view s) {
  if (auto bdf = parse_bdf(s)) {
    return {.pci_addr = std::move(*bdf), .mdev = ""};
  }
  if (partition::is_uuid(s)) {
    return {.pci_addr = "", .mdev = to_lower(std::string(s))};
  }
  throw UsageError(fmt::format(
      "bad device \"{}\" (want a PCI address [DDDD:]BB:DD.F or an mdev UUID)", printable(s)));
}

}  // namespace

void dev_add(const Words& words, Context& ctx) {
  ctx.kvmai().dev_add(group_operand(words), group_device(words.operand(1)));
}

void dev_del(const Words& words, Context& ctx) {
  ctx.kvmai().dev_del(group_operand(words), group_device(words.operand(1)));
}

}  // namespace kvmai::kvmaictl
