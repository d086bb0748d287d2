// `kvmaictl dev`: devices in P2P groups (dev-add, dev-del).
#include <linux/kvmai.h>

#include <charconv>

#include "cli.h"
#include "pci_tree.h"

namespace kvmaictl {
namespace {

// Whether `s` is 1 to `most` hex digits; stores their value.
bool hex_field(std::string_view s, std::size_t most, unsigned& value) {
  if (s.empty() || s.size() > most) {
    return false;
  }
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), value, 16);
  return error == std::errc() && end == s.data() + s.size();
}

// "DDDD:BB:DD.F", or "BB:DD.F" in domain 0, as DDDD:BB:DD.F in lower case.
std::string pci_addr(std::string_view s) {
  const auto bad = [&] {
    return UsageError("bad PCI address \"" + std::string(s) + "\" (want [DDDD:]BB:DD.F)");
  };
  unsigned domain = 0;
  unsigned bus = 0;
  unsigned slot = 0;
  unsigned fn = 0;
  std::string_view rest = s;
  if (const auto colon = rest.find(':');
      colon != std::string_view::npos && rest.find(':', colon + 1) != std::string_view::npos) {
    if (!hex_field(rest.substr(0, colon), 4, domain)) {
      throw bad();
    }
    rest.remove_prefix(colon + 1);
  }
  const auto colon = rest.find(':');
  const auto dot = rest.find('.');
  if (colon == std::string_view::npos || dot == std::string_view::npos || dot < colon ||
      !hex_field(rest.substr(0, colon), 2, bus) ||
      !hex_field(rest.substr(colon + 1, dot - colon - 1), 2, slot) ||
      !hex_field(rest.substr(dot + 1), 1, fn) || slot > 0x1f || fn > 7) {
    throw bad();
  }
  return format_bdf(domain, bus, slot, fn);
}

void change(const Args& args, Context& ctx, std::uint8_t cmd) {
  const auto kw = parse_keywords(args, {"NAME", "PCI_ADDR"}, {});
  AttrSet req;
  req.put_string(KVMAI_A_GROUP_NAME, kw.operands[0])
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
}  // namespace kvmaictl
