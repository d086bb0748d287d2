#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/kvmai.h>

#include "testing/group_replies.h"
#include "testing/run.h"

namespace kvmai::kvmaictl {
namespace {

using testing::fake_kvmai;
using testing::FakeTransport;
using testing::run_cli;
using ::testing::StartsWith;

using Log = FakeTransport::Log;

// The PCI address `dev add` sends for `typed`.
std::string sent_addr(const std::string& typed) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli({"dev", "add", "g1", typed}, fake_kvmai(log));
  EXPECT_EQ(r.rc, kExitOk) << r.err;
  return log->requests.empty() ? "" : log->requests[0].str(KVMAI_A_GROUP_PCI_ADDR).value_or("");
}

TEST(Dev, AddSendsGroupAndAddress) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli({"dev", "add", "g1", "0000:21:00.0"}, fake_kvmai(log));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(log->commands, std::vector<std::uint8_t>{KVMAI_CMD_DEV_ADD});
  EXPECT_EQ(log->requests.at(0).str(KVMAI_A_GROUP_NAME), "g1");
  EXPECT_EQ(log->requests.at(0).str(KVMAI_A_GROUP_PCI_ADDR), "0000:21:00.0");
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
}

TEST(Dev, AddressesAreNormalized) {
  EXPECT_EQ(sent_addr("21:00.0"), "0000:21:00.0");
  EXPECT_EQ(sent_addr("0000:AB:1f.7"), "0000:ab:1f.7");
  EXPECT_EQ(sent_addr("1:2:3.4"), "0001:02:03.4");
}

TEST(Dev, BadDevicesAreUsageErrors) {
  for (const std::string a :
       {"21:00", "21.00.0", "0000:21:20.0", "0000:21:00.8", "zz:00.0", "0000:021:00.0",
        "0000:21:00.0x", ":21:00.0", "21:00.-1", "10000:00:00.0", "9a1b-4c2d-8e3f-a4b5c6d7e8f9",
        "9a1b4c2d-8e3f-4a5b-b6c7-d8e9f0a1b2c3x", "9a1b4c2d_8e3f_4a5b_b6c7_d8e9f0a1b2c3",
        "g a1b4c2d-8e3f-4a5b-b6c7-d8e9f0a1b2c"}) {
    const auto r = run_cli({"dev", "add", "g1", a});
    EXPECT_EQ(r.rc, kExitUsage) << a;
    EXPECT_EQ(r.err, "Error: dev add: bad device \"" + a +
                         "\" (want a PCI address [DDDD:]BB:DD.F or an mdev UUID)\n");
  }
}

// An mdev goes as its UUID, in the lower case sysfs names it by, and
// without a PCI address: the module finds its parent.
TEST(Dev, MdevIsSentByUuid) {
  for (const char* cmd : {"add", "del"}) {
    auto log = std::make_shared<Log>();
    const auto r =
        run_cli({"dev", cmd, "g1", "9A1B4C2D-8e3f-4a5b-b6c7-d8e9f0a1b2c3"}, fake_kvmai(log));
    ASSERT_EQ(r.rc, kExitOk) << r.err;
    EXPECT_EQ(log->requests.at(0).str(KVMAI_A_GROUP_MDEV), "9a1b4c2d-8e3f-4a5b-b6c7-d8e9f0a1b2c3");
    EXPECT_EQ(log->requests.at(0).str(KVMAI_A_GROUP_PCI_ADDR), std::nullopt);
  }
}

TEST(Dev, MissingDeviceIsUsageError) {
  const auto r = run_cli({"dev", "del", "g1"});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_THAT(r.err, StartsWith("Error: dev del: missing DEV\n"));
  EXPECT_EQ(run_cli({"dev"}).rc, kExitUsage);
}

TEST(Dev, DelSendsDevDel) {
  auto log = std::make_shared<Log>();
  ASSERT_EQ(run_cli({"dev", "del", "g1", "22:00.0"}, fake_kvmai(log)).rc, kExitOk);
  EXPECT_EQ(log->commands, std::vector<std::uint8_t>{KVMAI_CMD_DEV_DEL});
  EXPECT_EQ(log->requests.at(0).str(KVMAI_A_GROUP_PCI_ADDR), "0000:22:00.0");
}

TEST(Dev, AddWarningIsPrintedAndSucceeds) {
  auto log = std::make_shared<Log>();
  const auto r =
      run_cli({"dev", "add", "g1", "53:00.0"}, fake_kvmai(log, [](FakeTransport& t) {
                t.warning =
                    "0000:53:00.0 has no ATS enabled: its peer traffic still goes through "
                    "the IOMMU";
              }));
  EXPECT_EQ(r.rc, kExitOk);
  EXPECT_EQ(r.err,
            "Warning: dev add: 0000:53:00.0 has no ATS enabled: its peer traffic still goes "
            "through the IOMMU\n");
}

TEST(Dev, WithoutModuleSaysSo) {
  const auto r = run_cli({"dev", "del", "g1", "21:00.0"}, testing::no_kvmai());
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_THAT(r.err, StartsWith("Error: dev del: kvmai module not loaded"));
}

}  // namespace
}  // namespace kvmai::kvmaictl
