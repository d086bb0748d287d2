// `kvmaictl version`: the tool's version, then the module's (status-get).
#include <linux/kvmai.h>

#include "commands/commands.h"
#include "commands/group_print.h"

namespace kvmai::kvmaictl {

void version_show(const Words& /*words*/, Context& ctx) {
  Printer& out = ctx.out;
  out.open_object("kvmaictl");
  out.print_string("version", KVMAICTL_VERSION, {"kvmaictl "});
  out.close_object();
  out.newline();

  const auto transport = ctx.connect(KVMAI_FAMILY_NAME);
  const auto reply = transport->request(KVMAI_CMD_STATUS_GET, {});
  const AttrSet& a = reply.attrs;
  out.open_object("module");
  out.print_opt_string("version", a.str(KVMAI_A_STATUS_VERSION), {"kvmai module "}, "unknown");
  const auto api = a.u32(KVMAI_A_STATUS_API_VERSION);
  out.print_opt_int("api_version", api ? std::optional<std::int64_t>(*api) : std::nullopt,
                    {" (api "}, "unknown");
  out.text(")");
  out.print_opt_string("kernel", a.str(KVMAI_A_STATUS_KERNEL), {" on kernel "}, "unknown");
  out.newline();
  // Older modules do not say: null in JSON.
  if (const auto features = a.u32(KVMAI_A_STATUS_FEATURES)) {
    const auto names = flag_names(feature_names(), *features);
    out.print_json("features", names);
    std::string text;
    for (const auto& n : names) {
      text += ' ' + n;
    }
    out.text("features:" + (text.empty() ? std::string(" none") : text));
  } else {
    out.print_opt_string("features", std::nullopt, {"features: "}, "unknown");
  }
  // Ports whose saved ACS word kvmai could not put back yet: a line only
  // when there are some, the count always in JSON (older modules: absent).
  if (const auto pending = a.u32(KVMAI_A_STATUS_RESTORE_PENDING)) {
    out.print_uint("restore_pending", *pending, {}, Show::json_only);
    if (*pending) {
      out.newline();
      out.text("ACS restores pending: " + std::to_string(*pending) +
               " port(s), retried by kvmai (see the kernel log)");
    }
  }
  out.close_object();
  out.newline();
}

}  // namespace kvmai::kvmaictl
