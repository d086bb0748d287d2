#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/kvmai.h>

#include <nlohmann/json.hpp>

#include "testing/fake_transport.h"
#include "testing/run.h"

namespace kvmai::kvmaictl {
namespace {

using testing::FakeTransport;
using testing::run_cli;

// A module reporting `features` (or no features attribute at all) and, if
// given, how many ACS restores it owes.
TransportFactory fake_module(const std::shared_ptr<FakeTransport::Log>& log,
                             std::optional<std::uint32_t> features = KVMAI_FEATURE_ACS_OVERRIDE |
                                                                     KVMAI_FEATURE_VFIO_NOTIFY,
                             std::optional<std::uint32_t> pending = std::nullopt) {
  return [log, features, pending](std::string_view family) -> std::unique_ptr<GenlTransport> {
    EXPECT_EQ(family, "kvmai");
    auto t = std::make_unique<FakeTransport>(log);
    GenlMessage m;
    m.cmd = KVMAI_CMD_STATUS_GET;
    m.attrs.put_string(KVMAI_A_STATUS_VERSION, "0.1.0")
        .put_u32(KVMAI_A_STATUS_API_VERSION, 1)
        .put_string(KVMAI_A_STATUS_KERNEL, "6.12.9-amd64");
    if (features) {
      m.attrs.put_u32(KVMAI_A_STATUS_FEATURES, *features);
    }
    if (pending) {
      m.attrs.put_u32(KVMAI_A_STATUS_RESTORE_PENDING, *pending);
    }
    t->replies[KVMAI_CMD_STATUS_GET] = {m};
    return t;
  };
}

TEST(Version, RestorePendingIsReported) {
  auto log = std::make_shared<FakeTransport::Log>();
  const auto r = run_cli({"version"}, fake_module(log, 0, 2));
  EXPECT_EQ(r.rc, kExitOk);
  EXPECT_THAT(r.out, ::testing::EndsWith(
                         "\nfeatures: none\nACS restores pending: 2 port(s), retried by kvmai "
                         "(see the kernel log)\n"));
  const auto j = run_cli({"-j", "version"}, fake_module(log, 0, 2));
  EXPECT_EQ(nlohmann::json::parse(j.out)["module"]["restore_pending"], 2);
  // None pending: no line, but the count in JSON.
  EXPECT_THAT(run_cli({"version"}, fake_module(log, 0, 0)).out,
              ::testing::EndsWith("\nfeatures: none\n"));
  EXPECT_EQ(
      nlohmann::json::parse(
          run_cli({"-j", "version"}, fake_module(log, 0, 0)).out)["module"]["restore_pending"],
      0);
}

TransportFactory no_module() {
  return [](std::string_view family) -> std::unique_ptr<GenlTransport> {
    throw GenlError::family_not_found(family);
  };
}

TEST(Version, TextShowsToolThenModule) {
  auto log = std::make_shared<FakeTransport::Log>();
  const auto r = run_cli({"version"}, fake_module(log));
  EXPECT_EQ(r.rc, kExitOk);
  EXPECT_EQ(r.out, "kvmaictl " KVMAICTL_VERSION
                   "\nkvmai module 0.1.0 (api 1) on kernel 6.12.9-amd64\n"
                   "features: acs-override vfio-notify\n");
  EXPECT_EQ(log->commands, std::vector<std::uint8_t>{KVMAI_CMD_STATUS_GET});
}

TEST(Version, NoFeaturesSaysNone) {
  auto log = std::make_shared<FakeTransport::Log>();
  const auto r = run_cli({"version"}, fake_module(log, 0));
  EXPECT_EQ(r.rc, kExitOk);
  EXPECT_THAT(r.out, ::testing::EndsWith("\nfeatures: none\n"));
  const auto j = run_cli({"-j", "version"}, fake_module(log, 0));
  EXPECT_EQ(nlohmann::json::parse(j.out)["module"]["features"], nlohmann::json::array());
}

TEST(Version, OlderModuleWithoutFeatures) {
  auto log = std::make_shared<FakeTransport::Log>();
  const auto r = run_cli({"version"}, fake_module(log, std::nullopt));
  EXPECT_EQ(r.rc, kExitOk);
  EXPECT_THAT(r.out, ::testing::EndsWith("\nfeatures: unknown\n"));
  const auto j = run_cli({"-j", "version"}, fake_module(log, std::nullopt));
  EXPECT_TRUE(nlohmann::json::parse(j.out)["module"]["features"].is_null());
}

TEST(Version, PmuFeatures) {
  auto log = std::make_shared<FakeTransport::Log>();
  const auto r = run_cli(
      {"version"}, fake_module(log, KVMAI_FEATURE_ACS_OVERRIDE | KVMAI_FEATURE_VFIO_NOTIFY |
                                        KVMAI_FEATURE_CORE_FENCE | KVMAI_FEATURE_UNCORE_RESERVE));
  EXPECT_THAT(r.out, ::testing::EndsWith(
                         "\nfeatures: acs-override vfio-notify core-fence uncore-reserve\n"));
  const auto j = run_cli({"-j", "version"}, fake_module(log, KVMAI_FEATURE_UNCORE_RESERVE));
  EXPECT_EQ(nlohmann::json::parse(j.out)["module"]["features"],
            nlohmann::json::parse(R"(["uncore-reserve"])"));
}

TEST(Version, UnknownFeatureBitsAreShownAsNumbers) {
  auto log = std::make_shared<FakeTransport::Log>();
  const auto r = run_cli({"version"}, fake_module(log, KVMAI_FEATURE_VFIO_NOTIFY | 0x100U));
  EXPECT_THAT(r.out, ::testing::EndsWith("\nfeatures: vfio-notify 0x100\n"));
}

TEST(Version, JsonSchema) {
  auto log = std::make_shared<FakeTransport::Log>();
  const auto r = run_cli({"-j", "version"}, fake_module(log));
  ASSERT_EQ(r.rc, kExitOk);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j, nlohmann::json::parse(R"({"kvmaictl":{"version":")" KVMAICTL_VERSION R"("},
      "module":{"version":"0.1.0","api_version":1,"kernel":"6.12.9-amd64",
                "features":["acs-override","vfio-notify"]}})"));
}

TEST(Version, WithoutModuleStillPrintsToolVersion) {
  const auto r = run_cli({"version"}, no_module());
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_EQ(r.out, "kvmaictl " KVMAICTL_VERSION "\n");
  EXPECT_EQ(r.err,
            "Error: version show: kvmai module not loaded (generic netlink family \"kvmai\" not "
            "found)\n");
}

TEST(Version, WithoutModuleJsonIsStillValid) {
  const auto r = run_cli({"-j", "version"}, no_module());
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_EQ(nlohmann::json::parse(r.out)["kvmaictl"]["version"], KVMAICTL_VERSION);
}

TEST(Version, KernelExtackReachesStderr) {
  const auto r = run_cli({"version"}, [](std::string_view) -> std::unique_ptr<GenlTransport> {
    auto t = std::make_unique<FakeTransport>(std::make_shared<FakeTransport::Log>());
    t->error = GenlError::kernel(EPERM, "status needs CAP_NET_ADMIN");
    return t;
  });
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_EQ(r.err, "Error: version show: status needs CAP_NET_ADMIN (Operation not permitted)\n");
}

TEST(Version, ExtraArgumentIsUsageError) {
  EXPECT_EQ(run_cli({"version", "show", "extra"}).rc, kExitUsage);
}

}  // namespace
}  // namespace kvmai::kvmaictl
