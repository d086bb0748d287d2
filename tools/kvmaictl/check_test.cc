#include "check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace kvmaictl {
namespace {

using ::testing::HasSubstr;
using testing::run_cli;
using testing::testdata;

std::map<std::string, CheckResult> checks(const std::string& fixture) {
  const FsReader sys(testdata(fixture + "/sys"));
  const FsReader proc(testdata(fixture + "/proc"));
  const Topology topo(PciTree::read(sys));
  std::map<std::string, CheckResult> m;
  for (auto& r : run_checks(sys, proc, topo)) {
    m[r.id] = r;
  }
  return m;
}

TEST(Check, EveryIdReportedOnce) {
  const auto m = checks("hgx");
  EXPECT_EQ(m.size(), check_ids().size());
}

TEST(Check, IommuOffFails) {
  auto m = checks("iommu-off");
  EXPECT_EQ(m["iommu"].status, Status::fail);
  EXPECT_THAT(m["iommu"].fix, HasSubstr("intel_iommu=on"));
  EXPECT_EQ(m["vfio"].status, Status::fail);
  EXPECT_EQ(m["hugepages"].status, Status::fail);
}

TEST(Check, IommuModeFromGroupTypes) {
  auto m = checks("flat");
  EXPECT_EQ(m["iommu"].status, Status::pass);
  EXPECT_THAT(m["iommu"].evidence, HasSubstr("identity"));
}

TEST(Check, AcsRedirectWarnsWithSetpciFix) {
  auto m = checks("emulated");
  EXPECT_EQ(m["acs"].status, Status::warn);
  EXPECT_THAT(m["acs"].fix, HasSubstr("setpci -s 0000:20:00.0 ECAP_ACS+6.w=005d"));
  EXPECT_EQ(checks("emulated-dt")["acs"].status, Status::pass);
}

TEST(Check, AcsMissingWarnsAboutIsolation) {
  auto m = checks("noacs");
  EXPECT_EQ(m["acs"].status, Status::warn);
  EXPECT_THAT(m["acs"].evidence, HasSubstr("no isolation"));
}

TEST(Check, UnprivilegedSaysRunAsRoot) {
  auto m = checks("unprivileged");
  EXPECT_EQ(m["acs"].fix, "run kvmaictl as root");
  EXPECT_EQ(m["ats"].fix, "run kvmaictl as root");
}

TEST(Check, MaxReadReqFixComputesDevctl) {
  auto m = checks("flat");
  EXPECT_EQ(m["mrrs"].status, Status::warn);
  // DevCtl 0x202f (MPS 256, MRRS 512) becomes 0x502f.
  EXPECT_THAT(m["mrrs"].fix, HasSubstr("setpci -s 0000:01:00.0 CAP_EXP+8.w=502f"));
}

TEST(Check, DegradedLinkWarns) {
  auto m = checks("hgx");
  EXPECT_EQ(m["link"].status, Status::warn);
  EXPECT_THAT(m["link"].evidence, HasSubstr("gpu6 16.0 GT/s PCIe of 32.0 GT/s PCIe"));
  EXPECT_THAT(m["link"].evidence, HasSubstr("nic0 x4 of x8"));
}

TEST(Check, PmuAndWatchdog) {
  auto hgx = checks("hgx");
  EXPECT_EQ(hgx["pmu"].status, Status::pass);
  EXPECT_EQ(hgx["nmi-watchdog"].status, Status::pass);
  auto flat = checks("flat");
  EXPECT_EQ(flat["pmu"].status, Status::warn);
  EXPECT_THAT(flat["pmu"].fix, HasSubstr("enable_mediated_pmu=1"));
  EXPECT_EQ(flat["nmi-watchdog"].status, Status::warn);
  auto amd = checks("iommu-off");
  EXPECT_THAT(amd["pmu"].evidence, HasSubstr("kernel before 7.0"));
}

TEST(Check, KvmaiModulePresence) {
  EXPECT_EQ(checks("hgx")["kvmai"].status, Status::pass);
  EXPECT_EQ(checks("flat")["kvmai"].status, Status::fail);
}

TEST(Check, FailingCheckExitsOneAfterPrintingEverything) {
  const auto r = run_cli({"-j", "check", "--sysfs-root", testdata("flat/sys"), "--procfs-root",
                          testdata("flat/proc")});
  EXPECT_EQ(r.rc, kExitFailed);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["checks"].size(), check_ids().size());
  EXPECT_EQ(j["summary"]["fail"], 2);
  EXPECT_EQ(r.err, "Error: check show: 2 check(s) failed\n");
}

TEST(Check, OneCheckByNameOrPrefix) {
  const auto r = run_cli({"-j", "check", "show", "hug", "--sysfs-root", testdata("hgx/sys"),
                          "--procfs-root", testdata("hgx/proc")});
  EXPECT_EQ(r.rc, kExitOk) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["checks"].size(), 1U);
  EXPECT_EQ(j["checks"][0]["id"], "hugepages");
  EXPECT_EQ(j["checks"][0]["fix"], nullptr);
}

TEST(Check, UnknownCheckNameIsUsageError) {
  const auto r = run_cli({"check", "show", "hugepage5", "--sysfs-root", testdata("hgx/sys")});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("did you mean \"hugepages\"?"));
}

}  // namespace
}  // namespace kvmaictl
