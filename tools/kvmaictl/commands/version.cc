// `kvmaictl version`: the tool's version, then the module's (status-get).
#include <fmt/format.h>

#include "client/names.h"
#include "commands/commands.h"
#include "common/format.h"

namespace kvmai::kvmaictl {

void version_show(const Words& /*words*/, Context& ctx) {
  Printer& out = ctx.out;
  out.open_object("kvmaictl");
  out.print_string("version", KVMAICTL_VERSION, {"kvmaictl "});
  out.close_object();
  out.newline();

  const ModuleStatus status = ctx.kvmai().status();
  out.open_object("module");
  out.print_opt_string("version", status.version, {"kvmai module "}, "unknown");
  const auto api = status.api_version;
  out.print_opt_int("api_version", api ? std::optional<std::int64_t>(*api) : std::nullopt,
                    {" (api "}, "unknown");
  out.text(")");
  out.print_opt_string("kernel", status.kernel, {" on kernel "}, "unknown");
  out.newline();
  // Older modules do not say: null in JSON.
  if (status.features) {
    const auto names = flag_names(feature_names(), *status.features);
    out.print_json("features", names);
    out.text(fmt::format("features: {}", names.empty() ? "none" : join(names, " ")));
  } else {
    out.print_opt_string("features", std::nullopt, {"features: "}, "unknown");
  }
  // Ports whose saved ACS word kvmai could not put back yet: a line only
  // when there are some, the count always in JSON (older modules: absent).
  if (const auto pending = status.restore_pending) {
    out.print_uint("restore_pending", *pending, {}, Show::json_only);
    if (*pending != 0) {
      out.newline();
      out.text(fmt::format(
          "ACS restores pending: {} port(s), retried by kvmai (see the kernel log)", *pending));
    }
  }
  out.close_object();
  out.newline();
}

}  // namespace kvmai::kvmaictl
