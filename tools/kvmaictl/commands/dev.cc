// `kvmaictl dev`: devices in P2P groups (dev-add, dev-del).
#include <linux/kvmai.h>

#include "cli/cli.h"
#include "commands/group_print.h"
#include "model/pci_tree.h"

namespace kvmai::kvmaictl {
namespace {

// "DDDD:BB:DD.F", or "BB:DD.F" in domain 0, as DDDD:BB:DD.F in lower case.
std::string pci_addr(std::string_view s) {
  if (auto bdf = parse_bdf(s)) {
    return std::move(*bdf);
  }
  throw UsageError("bad PCI address \"" + printable(s) + "\" (want [DDDD:]BB:DD.F)");
}

void change(const Args& args, Context& ctx, std::uint8_t cmd) {
  const auto kw = parse_keywords(args, {"NAME", "PCI_ADDR"}, {});
  AttrSet req;
  req.put_string(KVMAI_A_GROUP_NAME, checked_name("group name", kw.operands[0], KVMAI_NAME_LEN))
      .put_string(KVMAI_A_GROUP_PCI_ADDR, pci_addr(kw.operands[1]));
  ctx.warn(ctx.connect(KVMAI_FAMILY_NAME)->request(cmd, req).warning);
}

const ObjectRegistrar kRegistrar({
    .name = "dev",
    .summary = "devices of P2P groups (kvmai module)",
    .commands = {{.name = "add",
                  .usage = "NAME PCI_ADDR",
                  .summary = "add a device bound to vfio-pci to a disabled group",
                  .run = [](const Args& a, Context& c) { change(a, c, KVMAI_CMD_DEV_ADD); }},
                 {.name = "del",
                  .usage = "NAME PCI_ADDR",
                  .summary = "remove a device from a disabled group",
                  .run = [](const Args& a, Context& c) { change(a, c, KVMAI_CMD_DEV_DEL); }}},
    .default_command = "",
});

}  // namespace
}  // namespace kvmai::kvmaictl
