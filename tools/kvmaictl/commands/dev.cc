// `kvmaictl dev`: devices in P2P groups (dev-add, dev-del).
#include <fmt/format.h>
#include <linux/kvmai.h>

#include "commands/commands.h"
#include "commands/group_print.h"
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

void change(const Words& words, Context& ctx, std::uint8_t cmd) {
  AttrSet req;
  req.put_string(KVMAI_A_GROUP_NAME, checked_name("group name", words.operand(0), KVMAI_NAME_LEN))
      .put_string(KVMAI_A_GROUP_PCI_ADDR, pci_addr(words.operand(1)));
  ctx.warn(ctx.connect(KVMAI_FAMILY_NAME)->request(cmd, req).warning);
}

}  // namespace

void dev_add(const Words& words, Context& ctx) {
  change(words, ctx, KVMAI_CMD_DEV_ADD);
}

void dev_del(const Words& words, Context& ctx) {
  change(words, ctx, KVMAI_CMD_DEV_DEL);
}

}  // namespace kvmai::kvmaictl
