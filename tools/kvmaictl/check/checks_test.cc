#include "check/checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model/perf_pmus.h"
#include "testing/fixture_copy.h"
#include "testing/hook.h"
#include "testing/run.h"

namespace kvmai::kvmaictl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::run_cli;
using testing::testdata;

std::map<std::string, CheckResult> checks_in(const std::filesystem::path& dir) {
  const FsReader sys(dir / "sys");
  const FsReader proc(dir / "proc");
  // The emulated host's ACS switches are host bridges, and it says so.
  // (FixtureCopy names its copy kvmaictl-FIXTURE-...)
  const bool emulated = dir.filename().string().find("emulated") != std::string::npos;
  const Topology topo(PciTree::read(sys, {.host_bridge_switches = emulated}));
  std::map<std::string, CheckResult> m;
  for (auto& r : run_checks(sys, proc, topo)) {
    m[r.id] = r;
  }
  return m;
}

std::map<std::string, CheckResult> checks(const std::string& fixture) {
  return checks_in(testdata(fixture));
}

// testing::FixtureCopy, with the checks run on it.
class FixtureCopy : public testing::FixtureCopy {
 public:
  using testing::FixtureCopy::FixtureCopy;
  std::map<std::string, CheckResult> checks() const { return checks_in(dir()); }
};

// A `resource` file as the kernel prints it: the BAR lines given ("" for
// a zero one), then zero lines up to the 13 an endpoint has.
std::string resource(const std::vector<std::string>& bar_lines) {
  const std::string zero = "0x0000000000000000 0x0000000000000000 0x0000000000000000";
  std::string s;
  for (std::size_t i = 0; i < 13; ++i) {
    s += (i < bar_lines.size() && !bar_lines[i].empty() ? bar_lines[i] : zero) + "\n";
  }
  return s;
}

TEST(Check, EveryIdReportedOnce) {
  const auto m = checks("hgx");
  EXPECT_EQ(m.size(), check_ids(Place::host).size());
}

TEST(Check, IommuOffFails) {
  auto m = checks("iommu-off");
  EXPECT_EQ(m["iommu"].status, Status::fail);
  // An AMD host: the IOMMU is AMD-Vi, turned on in firmware.
  EXPECT_THAT(m["iommu"].fix, HasSubstr("AMD-Vi"));
  EXPECT_THAT(m["iommu"].fix, Not(HasSubstr("intel_iommu")));
  EXPECT_THAT(m["pmu"].fix, Not(HasSubstr("kvm_intel")));
  EXPECT_EQ(m["vfio"].status, Status::fail);
  EXPECT_EQ(m["hugepages"].status, Status::fail);
}

TEST(Check, IommuModeFromGroupTypes) {
  auto m = checks("flat");
  EXPECT_EQ(m["iommu"].status, Status::pass);
  EXPECT_THAT(m["iommu"].evidence, HasSubstr("identity"));
}

// Redirect on is the safe idle state. Without kvmai the way to direct P2P
// is a kvmai group; never a host-wide setpci that nothing undoes.
TEST(Check, AcsRedirectAdvisesKvmaiGroupsNotSetpci) {
  const FixtureCopy copy("emulated");
  copy.remove("sys/module/kvmai");
  auto m = copy.checks();
  EXPECT_EQ(m["acs"].status, Status::warn);
  EXPECT_THAT(m["acs"].fix, HasSubstr("kvmaictl group add"));
  // With kvmai loaded, the same ports pass.
  EXPECT_EQ(checks("emulated")["acs"].status, Status::pass);
}

// hgx's switch 2 has RR/CR cleared below GPUs and NICs that sit in four
// IOMMU groups: peer DMA between them passes no IOMMU.
TEST(Check, RedirectClearedBetweenGroupsFails) {
  auto m = checks("hgx");
  EXPECT_EQ(m["acs"].status, Status::fail);
  EXPECT_THAT(m["acs"].evidence, HasSubstr("gpu4-nic6"));
  EXPECT_THAT(m["acs"].evidence, HasSubstr("0000:99:00.0 RR,CR cleared"));
  // GPU to GPU counts as much as GPU to NIC.
  EXPECT_THAT(m["acs"].evidence, HasSubstr("and 1 more"));
}

// The same ports relaxed by one enabled kvmai group, for one VM, are the
// product working: no finding.
TEST(Check, KvmaiGroupRelaxationIsNoFinding) {
  const auto dir = testdata("hgx");
  const FsReader sys(dir + "/sys");
  const FsReader proc(dir + "/proc");
  const Topology topo(PciTree::read(sys));
  CheckInput in{.sys = sys,
                .proc = &proc,
                .topo = topo,
                .machine = detect_machine(sys, &proc),
                .p2p_groups = {}};
  // Switch 2's RR/CR cleared for one VM, switch 0's DT set for another.
  for (const auto& names : {std::vector<std::string>{"gpu4", "gpu5", "nic6", "nic7"},
                            std::vector<std::string>{"gpu0", "gpu1", "nic2", "nic3"}}) {
    std::set<std::string> vm;
    for (const auto& name : names) {
      vm.insert(topo.named(name)->dev->bdf);
    }
    in.p2p_groups.push_back(vm);
  }
  for (const auto& r : run_checks(in)) {
    if (r.id == "acs") {
      EXPECT_EQ(r.status, Status::pass) << r.evidence;
      EXPECT_THAT(r.evidence, HasSubstr("relaxed for one VM by kvmai: gpu0-nic2"));
    }
  }
}

// No check on any fixture, host or guest, hands out a setpci command.
TEST(Check, NoFixtureGetsSetpciAdvice) {
  for (const auto& entry : std::filesystem::directory_iterator(testdata(""))) {
    if (!std::filesystem::exists(entry.path() / "sys/bus/pci/devices")) {
      continue;
    }
    const auto r = run_cli({"-j", "check", "--root", entry.path().string()});
    EXPECT_THAT(r.out, Not(HasSubstr("setpci"))) << entry.path();
    EXPECT_THAT(r.out, HasSubstr("\"checks\"")) << entry.path() << r.err;
  }
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

TEST(Check, MaxReadReqAdvisesFirmware) {
  auto m = checks("flat");
  EXPECT_EQ(m["mrrs"].status, Status::warn);
  EXPECT_THAT(m["mrrs"].evidence, HasSubstr("gpu0 512"));
  EXPECT_THAT(m["mrrs"].fix, HasSubstr("firmware"));
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

TEST(Check, IommuPagesOneGigOnEveryUnit) {
  auto m = checks("hgx");
  EXPECT_EQ(m["iommu-pages"].status, Status::pass);
  EXPECT_EQ(m["iommu-pages"].evidence, "2M and 1G I/O pages on dmar0");
  // QEMU's intel-iommu: SLLPS 2M and 1G, no scalable mode.
  EXPECT_EQ(checks("emulated")["iommu-pages"].status, Status::pass);
}

TEST(Check, IommuPagesWarnsOnAUnitWithout1G) {
  auto m = checks("rdma-vf");
  EXPECT_EQ(m["iommu-pages"].status, Status::warn);
  EXPECT_EQ(m["iommu-pages"].evidence, "2M but no 1G I/O pages on dmar1 (SLLPS 0x1); 1G on dmar0");
  EXPECT_THAT(m["iommu-pages"].fix, HasSubstr("hardware limit"));
}

// SLLPS says 1G, but a unit that offers scalable mode with first-stage
// tables maps 1G there only with FL1GP (bit 56).
TEST(Check, IommuPagesWantsFl1gpWhenFirstStageIsPossible) {
  const FixtureCopy f("hgx");
  const std::string unit = "sys/class/iommu/dmar0/intel-iommu/";
  f.write(unit + "cap", "c00380c06\n");  // SLLPS 0x3, FL1GP clear
  auto m = f.checks();
  EXPECT_EQ(m["iommu-pages"].status, Status::warn);
  EXPECT_EQ(m["iommu-pages"].evidence,
            "2M but no 1G I/O pages on dmar0 (no first-stage 1G, FL1GP)");
  EXPECT_EQ(m["iommu-pages"].fix, "boot with intel_iommu=sm_off (second-stage tables map 1G)");
  f.write(unit + "ecap", "4e\n");  // no scalable mode: second stage only
  EXPECT_EQ(f.checks()["iommu-pages"].status, Status::pass);
}

TEST(Check, IommuPagesFailsWithoutLargePages) {
  const FixtureCopy f("hgx");
  f.write("sys/class/iommu/dmar0/intel-iommu/cap", "8000380c06\n");  // SLLPS 0
  auto m = f.checks();
  EXPECT_EQ(m["iommu-pages"].status, Status::fail);
  EXPECT_EQ(m["iommu-pages"].evidence, "4K I/O pages only on dmar0 (SLLPS 0x0)");
  EXPECT_THAT(m["iommu-pages"].fix, HasSubstr("none in software"));
}

TEST(Check, IommuPagesFailsWithSuperPagesOff) {
  const FixtureCopy f("hgx");
  f.write("proc/cmdline", "BOOT_IMAGE=/vmlinuz ro intel_iommu=on,sp_off\n");
  auto m = f.checks();
  EXPECT_EQ(m["iommu-pages"].status, Status::fail);
  EXPECT_EQ(m["iommu-pages"].evidence, "4K I/O pages only on dmar0 (intel_iommu=sp_off)");
  EXPECT_EQ(m["iommu-pages"].fix, "boot without intel_iommu=sp_off");
}

// Without an IOMMU there is nothing to map with: failed like iommu.
TEST(Check, IommuPagesFailsWithoutUnits) {
  auto m = checks("iommu-off");
  EXPECT_EQ(m["iommu-pages"].status, Status::fail);
  EXPECT_EQ(m["iommu-pages"].evidence, "no IOMMU in /sys/class/iommu");
  EXPECT_EQ(m["iommu-pages"].fix, "see iommu");
}

// AMD-Vi v1 tables map large pages on every unit; only the command line
// takes them away.
TEST(Check, IommuPagesOnAmd) {
  const FixtureCopy f("iommu-off");
  f.write("sys/class/iommu/ivhd0/amd-iommu/cap", "190b3d0f\n");
  f.write("sys/class/iommu/ivhd0/amd-iommu/features", "246577efa2254afa:10\n");
  EXPECT_EQ(f.checks()["iommu-pages"].evidence, "2M and 1G I/O pages on ivhd0");
  f.write("proc/cmdline", "ro amd_iommu=nohugepages\n");
  auto m = f.checks();
  EXPECT_EQ(m["iommu-pages"].status, Status::fail);
  EXPECT_EQ(m["iommu-pages"].evidence, "4K I/O pages only on ivhd0 (amd_iommu=nohugepages)");
  EXPECT_EQ(m["iommu-pages"].fix, "boot without amd_iommu=nohugepages");
  // The v2 table is x86-64 format, 2M and 1G, whatever nohugepages says.
  f.write("proc/cmdline", "ro amd_iommu=nohugepages,pgtbl_v2\n");
  EXPECT_EQ(f.checks()["iommu-pages"].status, Status::pass);
}

TEST(Check, IommuPagesUnknownWarns) {
  const FixtureCopy f("hgx");
  f.remove("sys/class/iommu/dmar0/intel-iommu/cap");
  auto m = f.checks();
  EXPECT_EQ(m["iommu-pages"].status, Status::warn);
  EXPECT_EQ(m["iommu-pages"].evidence,
            "I/O page sizes unknown on dmar0 (intel-iommu/cap unreadable)");
  f.write("sys/class/iommu/viommu0/uevent", "");
  EXPECT_THAT(f.checks()["iommu-pages"].evidence, HasSubstr("viommu0 (neither VT-d nor AMD-Vi)"));
}

TEST(Check, VfBarsPassWhenNothingIsForAGuest) {
  auto m = checks("hgx");  // no VFs, NICs on mlx5_core
  EXPECT_EQ(m["vf-bars"].status, Status::pass);
  EXPECT_EQ(m["vf-bars"].evidence, "no VFs or vfio NICs");
}

// Each VF's BAR 0 is a slice of its PF's VF BAR region, which the PF's
// `resource` lists on line 7: that line is no BAR and shares no page.
TEST(Check, VfBarsPassOnWholePages) {
  auto m = checks("multifunction");
  EXPECT_EQ(m["vf-bars"].status, Status::pass);
  EXPECT_EQ(m["vf-bars"].evidence,
            "2 memory BARs of 2 VFs: page-aligned, whole pages, none sharing a page");
  // virtio-net bound to vfio-pci: its I/O-less BARs 1 and 4.
  EXPECT_EQ(checks("emulated-vm")["vf-bars"].evidence,
            "4 memory BARs of 2 vfio NICs: page-aligned, whole pages, none sharing a page");
}

TEST(Check, VfBarsFailOnASharedMisalignedBar) {
  auto m = checks("rdma-vf");
  EXPECT_EQ(m["vf-bars"].status, Status::fail);
  EXPECT_EQ(m["vf-bars"].evidence,
            "0000:81:00.0 BAR 3 (2 KiB at 0xdffff800): not page-aligned, shares a page with "
            "0000:81:00.1 BAR 3");
  EXPECT_EQ(m["vf-bars"].fix,
            "boot with pci=resource_alignment=0000:81:00.0 (each BAR a page of its own)");
}

TEST(Check, VfBarsFailOnAMisalignedVf) {
  const FixtureCopy f("multifunction");
  f.write("sys/bus/pci/devices/0000:3f:00.3/resource",
          resource({"0x0000300000000800 0x00003000001007ff 0x000000000014220c"}));
  auto m = f.checks();
  EXPECT_EQ(m["vf-bars"].status, Status::fail);
  EXPECT_EQ(m["vf-bars"].evidence,
            "0000:3f:00.3 BAR 0 (1 MiB at 0x300000000800): not page-aligned");
  EXPECT_EQ(m["vf-bars"].fix, "VF BARs are slices of the PF's SR-IOV BAR: update the NIC firmware");
}

// Page-aligned and alone in its page, a BAR below a page is mapped, with
// the rest of the page reserved: a warning.
TEST(Check, VfBarsWarnOnASubPageBar) {
  const FixtureCopy f("rdma-vf");
  const std::string bar0 = "0x00000000c0000000 0x00000000c00fffff 0x0000000000040200";
  f.write("sys/bus/pci/devices/0000:81:00.0/resource",
          resource({bar0, "", "", "0x00000000dffff000 0x00000000dffff7ff 0x0000000000040200"}));
  f.write("sys/bus/pci/devices/0000:81:00.1/resource",
          resource({"0x00000000c0100000 0x00000000c01fffff 0x0000000000040200", "", "",
                    "0x00000000dfffe000 0x00000000dfffe7ff 0x0000000000040200"}));
  auto m = f.checks();
  EXPECT_EQ(m["vf-bars"].status, Status::warn);
  EXPECT_EQ(m["vf-bars"].evidence,
            "below a page (mapped only while the rest of the page stays free): 0000:81:00.0 BAR 3 "
            "(2 KiB at 0xdffff000)");
  EXPECT_THAT(m["vf-bars"].fix, HasSubstr("pci=resource_alignment=0000:81:00.0"));
}

TEST(Check, VfBarsUnreadableWarns) {
  const FixtureCopy f("multifunction");
  f.remove("sys/bus/pci/devices/0000:3f:00.2/resource");
  auto m = f.checks();
  EXPECT_EQ(m["vf-bars"].status, Status::warn);
  EXPECT_EQ(m["vf-bars"].evidence, "no readable sysfs resource file for 0000:3f:00.2");
}

TEST(Check, HugepagesFreeOnEveryDeviceNode) {
  auto m = checks("hgx");
  EXPECT_EQ(m["hugepages"].status, Status::pass);
  EXPECT_EQ(m["hugepages"].evidence,
            "1536 x 1048576kB reserved; 1G free: node0 768 of 768, node1 512 of 768");
  // No per-node files: the totals only.
  EXPECT_EQ(checks("pmu-server")["hugepages"].evidence, "256 x 1048576kB reserved");
}

TEST(Check, HugepagesWarnWhenADeviceNodeHasNoFreeGigPage) {
  auto m = checks("rdma-vf");
  EXPECT_EQ(m["hugepages"].status, Status::warn);
  EXPECT_EQ(m["hugepages"].evidence,
            "64 x 1048576kB reserved, but no 1G page free on node1 (nic1, nic2; 0 of 0); node0 40 "
            "of 64 free");
  EXPECT_EQ(m["hugepages"].fix,
            "echo <N> > /sys/devices/system/node/node1/hugepages/hugepages-1048576kB/nr_hugepages "
            "(or boot with hugepagesz=1G hugepages=0:<N>,1:<N>)");

  // Reserved but all in use is the same for the next VM.
  const FixtureCopy f("hgx");
  f.write("sys/devices/system/node/node1/hugepages/hugepages-1048576kB/free_hugepages", "0\n");
  EXPECT_THAT(f.checks()["hugepages"].evidence,
              HasSubstr("no 1G page free on node1 (gpu4, gpu5, gpu6 and 6 more; 0 of 768)"));
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
  EXPECT_EQ(j["checks"].size(), check_ids(Place::host).size());
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

std::map<std::string, CheckResult> guest_results(const std::filesystem::path& dir) {
  const FsReader sys(dir / "sys");
  const FsReader proc(dir / "proc");
  const FsReader root(dir);
  const Topology topo(PciTree::read(sys));
  const CheckInput in{.sys = sys,
                      .proc = &proc,
                      .root = &root,
                      .topo = topo,
                      .machine = detect_machine(sys, &proc),
                      .p2p_groups = {}};
  EXPECT_EQ(in.machine.place, Place::guest) << dir;
  std::map<std::string, CheckResult> m;
  for (auto& r : run_checks(in)) {
    m[r.id] = r;
  }
  return m;
}

TEST(GuestCheck, WhereItRuns) {
  const auto place = [](const std::string& fixture) {
    const FsReader sys(testdata(fixture + "/sys"));
    const FsReader proc(testdata(fixture + "/proc"));
    return detect_machine(sys, &proc);
  };
  EXPECT_EQ(place("tenant-intel").place, Place::guest);
  EXPECT_EQ(place("tenant-intel").vendor, CpuVendor::intel);
  EXPECT_EQ(place("tenant-amd").vendor, CpuVendor::amd);
  // The emulated host runs under QEMU but loads kvm: a nested host.
  EXPECT_EQ(place("emulated").place, Place::host);
  EXPECT_TRUE(place("emulated").hypervisor);
  EXPECT_EQ(place("hgx").place, Place::host);
  // Without procfs, DMI still tells a QEMU guest.
  const FsReader sys(testdata("tenant-amd/sys"));
  EXPECT_EQ(detect_machine(sys, nullptr).place, Place::guest);
}

// In a cloud VM the tenant gets no advice about the host's firmware,
// kernel command line or modules, and no "run as root" while root; what
// only the host can fix says so.
TEST(GuestCheck, TenantGetsNoHostAdvice) {
  for (const char* fixture : {"tenant-intel", "tenant-amd"}) {
    const auto m = guest_results(testdata(fixture));
    EXPECT_EQ(m.size(), check_ids(Place::guest).size());
    for (const auto& [id, r] : m) {
      EXPECT_NE(r.status, Status::fail) << fixture << " " << id;
      EXPECT_THAT(r.fix, Not(HasSubstr("as root"))) << fixture << " " << id;
      if (r.fix_by == FixBy::here) {
        for (const char* host_word :
             {"intel_iommu", "amd_iommu", "VT-d", "modprobe", "mlxconfig", "kvmai", "vfio"}) {
          EXPECT_THAT(r.fix, Not(HasSubstr(host_word))) << fixture << " " << id;
        }
      }
    }
    EXPECT_EQ(m.at("numa").fix_by, FixBy::host) << fixture;
    EXPECT_EQ(m.at("link").fix_by, FixBy::host) << fixture;
    EXPECT_EQ(m.at("mrrs").fix_by, FixBy::here) << fixture;
  }
  // The virtio NIC has no PCIe capability: absent, not unreadable.
  EXPECT_THAT(guest_results(testdata("tenant-intel")).at("mrrs").evidence,
              HasSubstr("nic0 not PCIe"));
  // Two flat GPUs: NCCL needs the switches the host has.
  EXPECT_EQ(guest_results(testdata("tenant-amd")).at("switches").status, Status::warn);
}

// The guest `vm plan` lays out passes every check.
TEST(GuestCheck, PlannedGuestPasses) {
  for (const auto& [id, r] : guest_results(testdata("tenant-planned"))) {
    EXPECT_EQ(r.status, Status::pass) << id << ": " << r.evidence;
  }
}

// An NCCL topology file naming functions the guest does not have makes
// NCCL route by ghosts: a failure, and exit status 1 as on a host.
TEST(GuestCheck, NcclFileWithUnknownBusFails) {
  const FixtureCopy copy("tenant-planned");
  copy.append("etc/nccl/topo.xml", "<pci busid=\"0000:c2:00.0\" class=\"0x020700\"/>\n");
  const auto r = run_cli({"-j", "check", "--root", copy.dir().string()});
  EXPECT_EQ(r.rc, kExitFailed);
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& c : j["checks"]) {
    if (c["id"] == "nccl-topo") {
      EXPECT_EQ(c["status"], "fail");
      EXPECT_THAT(c["evidence"].get<std::string>(), HasSubstr("0000:c2:00.0"));
    }
  }
}

// The synthetic bridge vm nccl-topo writes for a host root bus that is a
// switch (ffff:ff:NN.0) names no function of any guest, by design.
TEST(GuestCheck, NcclFileSyntheticBridgeIsNoGhost) {
  const FixtureCopy copy("tenant-planned");
  copy.append("etc/nccl/topo.xml", "<pci busid=\"ffff:ff:01.0\" class=\"0x060400\"/>\n");
  const auto r = run_cli({"-j", "check", "--root", copy.dir().string()});
  const auto j = nlohmann::json::parse(r.out);
  int seen = 0;
  for (const auto& c : j["checks"]) {
    if (c["id"] == "nccl-topo") {
      ++seen;
      EXPECT_EQ(c["status"], "pass") << c["evidence"];
    }
  }
  EXPECT_EQ(seen, 1);
  EXPECT_EQ(r.rc, kExitOk) << r.out;
}

// A recorded sysfs tree given alone is never read with this machine's
// live /proc: what needs procfs is skipped, not judged from another
// machine.
TEST(Snapshot, SysfsAloneReadsNoLiveProcfs) {
  const auto r = run_cli({"-j", "check", "--sysfs-root", testdata("hgx/sys")});
  const auto j = nlohmann::json::parse(r.out);
  bool seen = false;
  for (const auto& c : j["checks"]) {
    if (c["id"] == "nmi-watchdog") {
      seen = true;
      EXPECT_EQ(c["status"], "skip");
    }
  }
  EXPECT_TRUE(seen);
  EXPECT_EQ(j["summary"]["skip"], 1);
  // pmu show needs procfs, and says so instead of reading the live one.
  const auto p = run_cli({"pmu", "show", "--sysfs-root", testdata("hgx/sys")});
  EXPECT_EQ(p.rc, kExitFailed);
  EXPECT_THAT(p.err, HasSubstr("--procfs-root"));
}

// Every fixture, recorded with check record, reads as the fixture: the
// recording keeps every file topo, check and vm read.
TEST(Record, EveryFixtureReadsTheSameFromItsRecording) {
  for (const auto& entry : std::filesystem::directory_iterator(testdata(""))) {
    if (!std::filesystem::exists(entry.path() / "sys/bus/pci/devices")) {
      continue;
    }
    const std::string fixture = entry.path().filename().string();
    const testing::TempDir rec("rec-" + fixture);
    const auto r =
        run_cli({"check", "record", rec.path().string(), "--root", entry.path().string()});
    ASSERT_EQ(r.rc, kExitOk) << fixture << ": " << r.err;
    for (const Args& cmd : {Args{"-j", "topo"}, Args{"-j", "topo", "matrix"},
                            Args{"-j", "topo", "tree"}, Args{"-j", "check"}}) {
      Args live = cmd;
      live.insert(live.end(), {"--root", entry.path().string()});
      Args recorded = cmd;
      recorded.insert(recorded.end(), {"--root", rec.path().string()});
      if (fixture.starts_with("emulated")) {
        live.emplace_back("--host-bridge-switches");
        recorded.emplace_back("--host-bridge-switches");
      }
      EXPECT_EQ(run_cli(live).out, run_cli(recorded).out) << fixture << " " << cmd.back();
    }
  }
}

// What identifies the machine stays behind: DMI serial numbers and UUID.
TEST(Record, LeavesSerialsBehind) {
  const FixtureCopy copy("tenant-amd");
  for (const char* f : {"product_serial", "product_uuid", "board_serial", "chassis_serial"}) {
    copy.write(std::string("sys/devices/virtual/dmi/id/") + f, "SECRET-1234\n");
  }
  const testing::TempDir rec("rec-serials");
  ASSERT_EQ(run_cli({"check", "record", rec.path().string(), "--root", copy.dir().string()}).rc,
            kExitOk);
  EXPECT_TRUE(std::filesystem::exists(rec.path() / "sys/devices/virtual/dmi/id/sys_vendor"));
  for (const auto& e : std::filesystem::recursive_directory_iterator(rec.path())) {
    if (e.is_regular_file()) {
      EXPECT_THAT(testing::read_text(e.path().string()), Not(HasSubstr("SECRET"))) << e.path();
    }
  }
  // And it never writes into a directory that holds something.
  const auto again =
      run_cli({"check", "record", rec.path().string(), "--root", copy.dir().string()});
  EXPECT_EQ(again.rc, kExitFailed);
  EXPECT_THAT(again.err, HasSubstr("not empty"));
}

}  // namespace
}  // namespace kvmai::kvmaictl
