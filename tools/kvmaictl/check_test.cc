#include "check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "perf_pmus.h"
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

TEST(Check, CorePmu) {
  EXPECT_EQ(checks("hgx")["core-pmu"].evidence, "cpu (sapphire_rapids)");
  EXPECT_EQ(checks("flat")["core-pmu"].evidence, "cpu_atom, cpu_core (alderlake_hybrid)");
  EXPECT_EQ(checks("iommu-off")["core-pmu"].evidence, "cpu");  // AMD: no caps/pmu_name
  for (const auto* fixture : {"no-pmu", "emulated"}) {
    auto m = checks(fixture);
    EXPECT_EQ(m["core-pmu"].status, Status::warn) << fixture;
    EXPECT_EQ(m["core-pmu"].evidence, "none (no PMU: emulated?)") << fixture;
    EXPECT_THAT(m["core-pmu"].fix, HasSubstr("pmu=on")) << fixture;
  }
}

TEST(Check, UncorePmusCountedByKind) {
  auto hgx = checks("hgx");
  EXPECT_EQ(hgx["uncore-pmu"].status, Status::pass);
  EXPECT_EQ(hgx["uncore-pmu"].evidence,
            "22 uncore PMUs: uncore_cha x4, uncore_iio x6, uncore_imc x8, uncore_upi x4");
  // AMD's names; ibs_op and friends are not uncore.
  EXPECT_EQ(checks("iommu-off")["uncore-pmu"].evidence,
            "4 uncore PMUs: amd_df, amd_l3, amd_umc x2");
  // Names without a box number are kinds of their own.
  EXPECT_THAT(checks("flat")["uncore-pmu"].evidence,
              HasSubstr(": uncore_clock, uncore_imc_free_running x2"));
}

TEST(Check, NoUncorePmus) {
  auto intel = checks("multifunction");
  EXPECT_EQ(intel["uncore-pmu"].status, Status::warn);
  EXPECT_EQ(intel["uncore-pmu"].fix, "modprobe intel_uncore");
  auto none = checks("no-pmu");
  EXPECT_EQ(none["uncore-pmu"].status, Status::warn);
  EXPECT_EQ(none["uncore-pmu"].fix, "see core-pmu");
}

// pmu-server: everything ready but the watchdog, which is a warning.
TEST(Check, PmuServerWarnsOnlyAboutTheWatchdog) {
  auto m = checks("pmu-server");
  for (const auto* id : {"core-pmu", "pmu", "uncore-pmu", "kvmai"}) {
    EXPECT_EQ(m[id].status, Status::pass) << id;
  }
  EXPECT_EQ(m["nmi-watchdog"].status, Status::warn);
}

TEST(Check, NoKvmFailsThePmuCheck) {
  auto m = checks("no-pmu");
  EXPECT_EQ(m["pmu"].status, Status::fail);
  EXPECT_EQ(m["pmu"].evidence, "neither kvm_intel nor kvm_amd loaded");
}

TEST(PerfPmus, MediatedPmuStates) {
  const std::vector<std::tuple<std::string, MediatedPmu::State, std::string>> cases{
      {"hgx", MediatedPmu::State::enabled, "kvm_intel"},
      {"flat", MediatedPmu::State::disabled, "kvm_intel"},
      {"iommu-off", MediatedPmu::State::unsupported, "kvm_amd"},
      {"no-pmu", MediatedPmu::State::kvm_not_loaded, ""},
  };
  for (const auto& [fixture, state, module] : cases) {
    const FsReader sys(testdata(fixture + "/sys"));
    const auto m = read_mediated_pmu(sys);
    EXPECT_EQ(m.state, state) << fixture;
    EXPECT_EQ(m.module, module) << fixture;
  }
  EXPECT_EQ(read_mediated_pmu(FsReader(testdata("flat/sys"))).value, "N");
  EXPECT_EQ(mediated_state_name(MediatedPmu::State::kvm_not_loaded), "kvm-not-loaded");
}

TEST(PerfPmus, NmiWatchdog) {
  EXPECT_EQ(read_nmi_watchdog(FsReader(testdata("pmu-server/proc"))), true);
  EXPECT_EQ(read_nmi_watchdog(FsReader(testdata("hgx/proc"))), false);
  EXPECT_EQ(read_nmi_watchdog(FsReader(testdata("hgx/sys"))), std::nullopt);
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
