#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/kvmai.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "testing/pmu_replies.h"
#include "testing/run.h"

namespace kvmai::kvmaictl {
namespace {

using testing::cat;
using testing::fake_kvmai;
using testing::FakeTransport;
using ::testing::HasSubstr;
using testing::matches_golden;
using testing::message;
using testing::run_cli;
using ::testing::StartsWith;
using testing::testdata;

using Log = FakeTransport::Log;
using Commands = std::vector<std::uint8_t>;

// The sysfs and procfs of `fixture`, as `pmu show` and `pmu assign` take
// them.
Args roots(const std::string& fixture, bool with_procfs = true) {
  Args a{"--sysfs-root", testdata(fixture + "/sys")};
  if (with_procfs) {
    a.insert(a.end(), {"--procfs-root", testdata(fixture + "/proc")});
  }
  return a;
}

// pmu-host-get answered with `host`, pmu-get with `records` (dump) or the
// first of them (do).
TransportFactory with_pmus(const std::shared_ptr<Log>& log, const AttrSet& host,
                           const std::vector<AttrSet>& records) {
  return fake_kvmai(log, [host, records](FakeTransport& t) {
    t.replies[KVMAI_CMD_PMU_HOST_GET] = {message(KVMAI_CMD_PMU_HOST_GET, host)};
    for (const auto& r : records) {
      t.replies[KVMAI_CMD_PMU_GET].push_back(message(KVMAI_CMD_PMU_GET, r));
    }
  });
}

TransportFactory sample(const std::shared_ptr<Log>& log) {
  return with_pmus(log, testing::sample_pmu_host(),
                   {testing::sample_pmu_vm1(), testing::sample_pmu_vm2()});
}

// pmu-assign answered with `record`.
TransportFactory assigning(const std::shared_ptr<Log>& log, const AttrSet& record,
                           const std::vector<GenlMessage>& notifications = {}) {
  return fake_kvmai(log, [record, notifications](FakeTransport& t) {
    t.replies[KVMAI_CMD_PMU_ASSIGN] = {message(KVMAI_CMD_PMU_ASSIGN, record)};
    t.notifications = notifications;
  });
}

// The unit names of the nests `type` in `req`.
std::vector<std::string> unit_names(const AttrSet& req, std::uint16_t type) {
  std::vector<std::string> v;
  for (const Attr* a : req.all(type)) {
    v.push_back(AttrSet::parse(a->payload).str(KVMAI_A_UNIT_NAME).value_or("?"));
  }
  return v;
}

TEST(Pmu, ShowHostThenEveryVmText) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli(cat({"pmu", "show"}, roots("pmu-server")), sample(log));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(log->commands, (Commands{KVMAI_CMD_PMU_HOST_GET, KVMAI_CMD_PMU_GET}));
  EXPECT_TRUE(log->requests.at(0).attrs().empty());
  EXPECT_TRUE(log->requests.at(1).attrs().empty());
  EXPECT_TRUE(matches_golden("pmu.show.txt", r.out));
  EXPECT_THAT(r.out,
              StartsWith("host mediated-vpmu capable yes kvm "
                         "kvm_intel.enable_mediated_pmu=Y nmi-watchdog on\n"
                         "    core fences 1 include-guest-events 2\n"
                         "    conflict cpu 0 pmu cpu config 0x3c held by the kernel\n"
                         "    conflict cpu 3 pmu cpu config 0xc0 held by pid 4242 (perf)\n"));
  EXPECT_THAT(
      r.out,
      HasSubstr("\n    unit uncore_imc_1 type 15 msr-ranges 2 host-events 3 scope die vm -\n"));
  EXPECT_THAT(r.out, HasSubstr("\n    unit amd_l3 type 16 msr-ranges 2 host-events 0 "
                               "scope llc core-select vm -\n"));
  EXPECT_THAT(r.out, HasSubstr("\nvm vm2 core no cpus 16-47 shared yes pid 4300 bind-socket yes "
                               "packages 0,1\n    unit uncore_cha_0 type 12 msr-ranges 2 "
                               "host-events 0 scope die offline-packages 1 hotplug-scrubs 2\n"));
}

TEST(Pmu, ShowJson) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli(cat({"-p", "pmu"}, roots("pmu-server")), sample(log));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_TRUE(matches_golden("pmu.show.json", r.out));
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["host"]["core_capable"], true);
  EXPECT_EQ(j["host"]["kvm"]["state"], "enabled");
  EXPECT_EQ(j["host"]["nmi_watchdog"], true);
  EXPECT_EQ(j["host"]["conflict"][1]["config"], 0xc0);
  EXPECT_EQ(j["host"]["conflict"][1]["comm"], "perf");
  EXPECT_EQ(j["host"]["unit"][2]["vm"], nullptr);
  ASSERT_EQ(j["vms"].size(), 2U);
  EXPECT_EQ(j["vms"][1]["package"], nlohmann::json::parse("[0, 1]"));
  EXPECT_EQ(j["vms"][0]["unit"][0]["name"], "uncore_imc_0");
  // A VM's units list their MSRs whatever -v says; the host's have none.
  EXPECT_EQ(j["vms"][0]["unit"][0]["msr"], nlohmann::json::parse(R"([
    {"base": 3221291568, "count": 1, "read": false, "write": true, "write_mask": 280375470325759},
    {"base": 3221291569, "count": 1, "read": true, "write": true, "write_mask": 281474976710655}])"));
  EXPECT_EQ(j["vms"][1]["unit"][0]["msr"][1]["base"], 0xe08);
  EXPECT_EQ(j["vms"][1]["unit"][0]["msr"][1]["count"], 4);
  // CPU hotplug: which reserved packages have no CPU, how often one came back.
  EXPECT_EQ(j["vms"][0]["unit"][0]["offline_package"], nlohmann::json::array());
  EXPECT_EQ(j["vms"][0]["unit"][0]["hotplug_scrubs"], 0);
  EXPECT_EQ(j["vms"][1]["unit"][0]["offline_package"], nlohmann::json::parse("[1]"));
  EXPECT_EQ(j["vms"][1]["unit"][0]["hotplug_scrubs"], 2);
  EXPECT_FALSE(j["host"]["unit"][0].contains("msr"));
  EXPECT_EQ(j["host"]["unit"][0]["core_select"], false);
  EXPECT_EQ(j["host"]["unit"][3]["core_select"], true);
  EXPECT_EQ(j["host"]["unit"][0]["scope"], "die");
  EXPECT_EQ(j["host"]["unit"][3]["scope"], "llc");
}

// -v: each VM unit's MSR ranges, a line each under the unit; the host's
// units have none to show.
TEST(Pmu, ShowVerboseListsMsrRanges) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli(cat({"-v", "pmu", "show"}, roots("pmu-server")), sample(log));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_TRUE(matches_golden("pmu.show.verbose.txt", r.out));
  EXPECT_THAT(
      r.out,
      HasSubstr("\n    unit amd_l3 type 16 msr-ranges 2 host-events 0 scope llc core-select vm -\n"
                "\nvm vm1 "));
  const auto vm = run_cli({"--verbose", "pmu", "show", "vm1"}, sample(log));
  ASSERT_EQ(vm.rc, kExitOk) << vm.err;
  EXPECT_EQ(vm.out,
            "vm vm1 core yes cpus 0-31 shared no pid 4242 bind-socket no packages 0\n"
            "    unit uncore_imc_0 type 14 msr-ranges 2 host-events 0 scope die\n"
            "        msr 0xc0010230 count 1 write mask 0x0000ff00004fffff\n"
            "        msr 0xc0010231 count 1 read write mask 0x0000ffffffffffff\n");
  // -j prints the same with and without -v.
  EXPECT_EQ(run_cli({"-j", "-v", "pmu", "show", "vm1"}, sample(log)).out,
            run_cli({"-j", "pmu", "show", "vm1"}, sample(log)).out);
}

// What the module leaves out of a range shows as unknown, not as a guess.
TEST(Pmu, ShowVerboseIncompleteMsrRanges) {
  AttrSet read_only = testing::msr_range(0xc0010231, 1, true, std::nullopt);
  AttrSet unmasked;
  unmasked.put_u32(KVMAI_A_MSR_RANGE_BASE, 0x10).put_flag(KVMAI_A_MSR_RANGE_WRITE);
  AttrSet revoked;  // its driver went away: no type, no host events
  revoked.put_string(KVMAI_A_UNIT_NAME, "amd_l3")
      .put_u32(KVMAI_A_UNIT_MSR_RANGES, 3)
      .put_nested(KVMAI_A_UNIT_MSR, read_only)
      .put_nested(KVMAI_A_UNIT_MSR, unmasked)
      .put_nested(KVMAI_A_UNIT_MSR, AttrSet());
  AttrSet record = testing::released_pmu("vm8");
  record.put_nested(KVMAI_A_PMU_UNIT, revoked);
  auto log = std::make_shared<Log>();
  const auto r = run_cli({"-v", "pmu", "show", "vm8"}, with_pmus(log, AttrSet(), {record}));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.out,
            "vm vm8 core no cpus - shared no pid - bind-socket no packages -\n"
            "    unit amd_l3 type - msr-ranges 3 host-events - scope -\n"
            "        msr 0xc0010231 count 1 read\n"
            "        msr 0x10 count - write mask ?\n"
            "        msr ? count -\n");
  const auto j = nlohmann::json::parse(
      run_cli({"-j", "pmu", "show", "vm8"}, with_pmus(log, AttrSet(), {record})).out);
  EXPECT_EQ(j["vms"][0]["unit"][0]["msr"], nlohmann::json::parse(R"([
    {"base": 3221291569, "count": 1, "read": true, "write": false, "write_mask": null},
    {"base": 16, "count": null, "read": false, "write": true, "write_mask": null},
    {"base": null, "count": null, "read": false, "write": false, "write_mask": null}])"));
}

// Every key is there whatever the module leaves out, so scripts need not
// test for them.
TEST(Pmu, JsonSchemaIsStable) {
  AttrSet bare_conflict;
  bare_conflict.put_u32(KVMAI_A_CONFLICT_CPU, 5);
  AttrSet bare_host;
  bare_host.put_nested(KVMAI_A_PMU_HOST_CONFLICT, bare_conflict)
      .put_nested(KVMAI_A_PMU_HOST_UNIT, AttrSet().put_string(KVMAI_A_UNIT_NAME, "amd_l3"));
  AttrSet bare_vm = testing::released_pmu("vm8");
  bare_vm.put_nested(
      KVMAI_A_PMU_UNIT,
      AttrSet().put_string(KVMAI_A_UNIT_NAME, "amd_l3").put_nested(KVMAI_A_UNIT_MSR, AttrSet()));
  auto log = std::make_shared<Log>();
  const auto r = run_cli(cat({"-j", "pmu", "show"}, roots("no-pmu")),
                         with_pmus(log, bare_host, {bare_vm, testing::released_pmu("vm9")}));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out), nlohmann::json::parse(R"({
    "host": {"core_capable": false,
             "kvm": {"module": null, "enable_mediated_pmu": null, "state": "kvm-not-loaded"},
             "nmi_watchdog": false, "core_fences": null, "core_include_guest_events": null,
             "conflict": [{"cpu": 5, "pmu": null, "config": null, "pid": null, "comm": null}],
             "unit": [{"name": "amd_l3", "type": null, "msr_ranges": null, "host_events": null,
                       "scope": null, "core_select": false, "vm": null}]},
    "vms": [{"vm": "vm8", "core": false, "cpus": null, "shared": false, "pid": null,
             "bind_socket": false, "package": [],
             "unit": [{"name": "amd_l3", "type": null, "msr_ranges": null, "host_events": null,
                       "scope": null, "core_select": false, "vm": null, "offline_package": [],
                       "hotplug_scrubs": null,
                       "msr": [{"base": null, "count": null, "read": false, "write": false,
                                 "write_mask": null}]}]},
            {"vm": "vm9", "core": false, "cpus": null, "shared": false, "pid": null,
             "bind_socket": false, "package": [], "unit": []}]})"));
}

// perf configs use all 64 bits (raw events put flags in the top ones).
TEST(Pmu, ConflictConfigIsUnsigned64) {
  AttrSet conflict;
  conflict.put_u32(KVMAI_A_CONFLICT_CPU, 1).put_u64(KVMAI_A_CONFLICT_CONFIG, 0x8000000000000001);
  AttrSet host;
  host.put_nested(KVMAI_A_PMU_HOST_CONFLICT, conflict);
  auto log = std::make_shared<Log>();
  const auto r = run_cli(cat({"-j", "pmu", "show"}, roots("pmu-server")), with_pmus(log, host, {}));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  // As written, not as a signed number read back into the same bits.
  EXPECT_THAT(r.out, HasSubstr("\"config\":9223372036854775809"));
  const auto t = run_cli(cat({"pmu", "show"}, roots("pmu-server")), with_pmus(log, host, {}));
  EXPECT_THAT(t.out, HasSubstr("\n    conflict cpu 1 pmu ? config 0x8000000000000001 held by an "
                               "unknown owner\n"));
}

// A process's command name is its own to choose: what a terminal would act
// on reaches it escaped, and JSON stays valid whatever the bytes.
TEST(Pmu, HostileCommandNamesPrintEscaped) {
  AttrSet conflict;
  conflict.put_string(KVMAI_A_CONFLICT_PMU, "cpu")
      .put_u32(KVMAI_A_CONFLICT_CPU, 1)
      .put_u32(KVMAI_A_CONFLICT_PID, 77)
      .put_string(KVMAI_A_CONFLICT_COMM, "\x1b]52;c;QQ\x07\x1b[2J\xff");
  AttrSet host;
  host.put_nested(KVMAI_A_PMU_HOST_CONFLICT, conflict);
  auto log = std::make_shared<Log>();
  const auto t = run_cli(cat({"pmu", "show"}, roots("pmu-server")), with_pmus(log, host, {}));
  ASSERT_EQ(t.rc, kExitOk) << t.err;
  EXPECT_EQ(t.out.find('\x1b'), std::string::npos) << t.out;
  EXPECT_THAT(t.out, HasSubstr("held by pid 77 (\\x1b]52;c;QQ\\x07\\x1b[2J\\xff)"));
  const auto j = run_cli(cat({"-j", "pmu", "show"}, roots("pmu-server")), with_pmus(log, host, {}));
  ASSERT_EQ(j.rc, kExitOk) << j.err;
  EXPECT_EQ(j.out.find('\x1b'), std::string::npos) << j.out;
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["host"]["conflict"][0]["comm"], "\x1b]52;c;QQ\x07\x1b[2J\xef\xbf\xbd");
}

TEST(Pmu, ShowNoVmsIsEmptyArray) {
  auto log = std::make_shared<Log>();
  const auto r =
      run_cli(cat({"-j", "pmu", "show"}, roots("pmu-server")), with_pmus(log, AttrSet(), {}));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["vms"], nlohmann::json::array());
}

TEST(Pmu, ShowVmIsADoWithoutTheHost) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli({"pmu", "show", "vm1"}, sample(log));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(log->commands, Commands{KVMAI_CMD_PMU_GET});
  EXPECT_EQ(log->requests.at(0).str(KVMAI_A_PMU_VM), "vm1");
  EXPECT_EQ(r.out,
            "vm vm1 core yes cpus 0-31 shared no pid 4242 bind-socket no packages 0\n"
            "    unit uncore_imc_0 type 14 msr-ranges 2 host-events 0 scope die\n");
  const auto j = run_cli({"-j", "pmu", "show", "vm1"}, sample(log));
  EXPECT_FALSE(nlohmann::json::parse(j.out).contains("host"));
}

// What KVM does with the core PMU comes from sysfs, in every state.
TEST(Pmu, ShowSaysWhatKvmDoes) {
  const std::vector<std::tuple<std::string, std::string, std::string>> cases{
      {"pmu-server", "kvm kvm_intel.enable_mediated_pmu=Y nmi-watchdog on", "enabled"},
      {"flat", "kvm kvm_intel.enable_mediated_pmu=N nmi-watchdog on", "disabled"},
      {"iommu-off", "kvm kvm_amd (mediated vPMU not supported by this kernel) nmi-watchdog on",
       "unsupported"},
      {"no-pmu", "kvm not loaded nmi-watchdog off", "kvm-not-loaded"},
  };
  for (const auto& [fixture, text, state] : cases) {
    auto log = std::make_shared<Log>();
    const auto r = run_cli(cat({"pmu", "show"}, roots(fixture)), sample(log));
    ASSERT_EQ(r.rc, kExitOk) << r.err;
    EXPECT_THAT(r.out, StartsWith("host mediated-vpmu capable yes " + text + "\n")) << fixture;
    const auto j = run_cli(cat({"-j", "pmu", "show"}, roots(fixture)), sample(log));
    EXPECT_EQ(nlohmann::json::parse(j.out)["host"]["kvm"]["state"], state) << fixture;
  }
}

// A kernel without a lockup detector has no nmi_watchdog file.
TEST(Pmu, ShowWithoutNmiWatchdogFileSaysUnknown) {
  const auto proc = std::filesystem::path(::testing::TempDir()) / "kvmaictl-proc-no-watchdog";
  std::filesystem::create_directories(proc);
  std::ofstream(proc / "cmdline") << "ro\n";
  auto log = std::make_shared<Log>();
  const Args args{"pmu", "show", "--sysfs-root", testdata("hgx/sys"), "--procfs-root", proc};
  const auto r = run_cli(args, sample(log));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_THAT(r.out, StartsWith("host mediated-vpmu capable yes kvm "
                                "kvm_intel.enable_mediated_pmu=Y nmi-watchdog -\n"));
  const auto j = run_cli(cat({"-j"}, args), sample(log));
  EXPECT_TRUE(nlohmann::json::parse(j.out)["host"]["nmi_watchdog"].is_null());
  std::filesystem::remove_all(proc);
}

TEST(Pmu, ShowBadProcfsRootOpensNoSocket) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli(
      {"pmu", "show", "--sysfs-root", testdata("hgx/sys"), "--procfs-root", testdata("hgx/sys")},
      sample(log));
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_THAT(r.err, HasSubstr("(not a procfs tree)"));
  EXPECT_TRUE(log->commands.empty());
}

TEST(Pmu, ShowBadSysfsRootOpensNoSocket) {
  auto log = std::make_shared<Log>();
  const auto r =
      run_cli({"pmu", "show", "--sysfs-root", testdata("no-such-host/sys")}, sample(log));
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_THAT(r.err, StartsWith("Error: pmu show: no bus/pci/devices under"));
  EXPECT_TRUE(log->commands.empty());
}

TEST(Pmu, ShowArgumentErrorsAreUsageErrors) {
  for (const Args& a : std::vector<Args>{{"pmu", "show", "vm1", "vm2"},
                                         {"pmu", "show", "--frob"},
                                         {"pmu", "show", std::string(64, 'v')}}) {
    const auto r = run_cli(a);
    EXPECT_EQ(r.rc, kExitUsage) << a.back();
    EXPECT_THAT(r.err, StartsWith("Error: pmu show: "));
  }
}

TEST(Pmu, AssignSendsEverythingAndPrintsTheRecord) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli(cat({"pmu", "assign", "vm1", "core", "uncore_imc_0", "uncore_imc_1",
                              "cpus", "0-31", "shared", "pid", "4242"},
                             roots("pmu-server", false)),
                         assigning(log, testing::sample_pmu_vm1()));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(log->commands, Commands{KVMAI_CMD_PMU_ASSIGN});
  const AttrSet& req = log->requests.at(0);
  EXPECT_EQ(req.str(KVMAI_A_PMU_VM), "vm1");
  EXPECT_TRUE(req.has(KVMAI_A_PMU_CORE));
  EXPECT_EQ(unit_names(req, KVMAI_A_PMU_UNIT),
            (std::vector<std::string>{"uncore_imc_0", "uncore_imc_1"}));
  EXPECT_EQ(req.str(KVMAI_A_PMU_CPUS), "0-31");
  EXPECT_TRUE(req.has(KVMAI_A_PMU_SHARED));
  EXPECT_EQ(req.u32(KVMAI_A_PMU_PID), 4242U);
  EXPECT_FALSE(req.has(KVMAI_A_PMU_BIND_SOCKET));
  // Nests as the kernel parses them: flagged nested, name NUL-terminated.
  const Attr* nest = req.all(KVMAI_A_PMU_UNIT).at(0);
  EXPECT_TRUE(nest->nested);
  EXPECT_EQ(AttrSet::parse(nest->payload).attrs().at(0).payload.back(), '\0');
  EXPECT_THAT(r.out, StartsWith("vm vm1 core yes cpus 0-31 "));
  EXPECT_EQ(log->receives, 0);
}

TEST(Pmu, AssignVerbosePrintsMsrRanges) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli({"-v", "pmu", "assign", "vm2", "uncore_cha_0"},
                         assigning(log, testing::sample_pmu_vm2()));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.out,
            "vm vm2 core no cpus 16-47 shared yes pid 4300 bind-socket yes packages 0,1\n"
            "    unit uncore_cha_0 type 12 msr-ranges 2 host-events 0 scope die offline-packages 1 "
            "hotplug-scrubs 2\n"
            "        msr 0xe01 count 4 write mask 0x0000ff00004fffff\n"
            "        msr 0xe08 count 4 read write mask 0x0000ffffffffffff\n");
  // Without -v the unit line alone.
  const auto plain =
      run_cli({"pmu", "assign", "vm2", "uncore_cha_0"}, assigning(log, testing::sample_pmu_vm2()));
  EXPECT_THAT(plain.out, ::testing::EndsWith(
                             " host-events 0 scope die offline-packages 1 hotplug-scrubs 2\n"));
}

TEST(Pmu, AssignMinimalSendsOnlyWhatIsGiven) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli({"-j", "pmu", "assign", "vm2", "uncore_cha_0"},
                         assigning(log, testing::sample_pmu_vm2()));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  const AttrSet& req = log->requests.at(0);
  ASSERT_EQ(req.attrs().size(), 2U);
  EXPECT_FALSE(req.has(KVMAI_A_PMU_CORE));
  EXPECT_EQ(unit_names(req, KVMAI_A_PMU_UNIT), std::vector<std::string>{"uncore_cha_0"});
  EXPECT_EQ(nlohmann::json::parse(r.out)["vms"][0]["vm"], "vm2");
}

// The issue writes `pmu assign VM core|UNIT... [--cpus LIST] [--shared]`.
TEST(Pmu, AssignTakesDashedKeywordsAndPrefixes) {
  for (const Args& a :
       std::vector<Args>{{"pmu", "assign", "vm1", "uncore_imc_0", "--cpus", "0-31", "--shared"},
                         {"pmu", "assign", "vm1", "uncore_imc_0", "--cpus=0-31", "--sh"},
                         {"pmu", "assign", "vm1", "cp", "0-31", "uncore_imc_0", "sh"}}) {
    auto log = std::make_shared<Log>();
    const auto r = run_cli(a, assigning(log, testing::sample_pmu_vm1()));
    ASSERT_EQ(r.rc, kExitOk) << a[4] << ": " << r.err;
    const AttrSet& req = log->requests.at(0);
    EXPECT_EQ(unit_names(req, KVMAI_A_PMU_UNIT), std::vector<std::string>{"uncore_imc_0"});
    EXPECT_EQ(req.str(KVMAI_A_PMU_CPUS), "0-31") << a[4];
    EXPECT_TRUE(req.has(KVMAI_A_PMU_SHARED)) << a[4];
  }
}

TEST(Pmu, AssignCoreWarnsWhenKvmWillNotPassItOn) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"flat",
       "Warning: pmu assign: kvm_intel.enable_mediated_pmu=N: guests still get the emulated vPMU "
       "(reload kvm_intel with enable_mediated_pmu=1)\n"},
      {"iommu-off",
       "Warning: pmu assign: kvm_amd has no enable_mediated_pmu: this kernel cannot give guests "
       "the core PMU\n"},
      {"no-pmu",
       "Warning: pmu assign: kvm not loaded: load kvm_intel or kvm_amd with "
       "enable_mediated_pmu=1 before starting the VM\n"},
      {"pmu-server", ""},
  };
  for (const auto& [fixture, warning] : cases) {
    auto log = std::make_shared<Log>();
    const auto r = run_cli(cat({"pmu", "assign", "vm1", "core"}, roots(fixture, false)),
                           assigning(log, testing::sample_pmu_vm1()));
    EXPECT_EQ(r.rc, kExitOk) << fixture;
    EXPECT_EQ(r.err, warning) << fixture;
    EXPECT_THAT(r.out, StartsWith("vm vm1 ")) << fixture;
  }
  // Units do not go through KVM's vPMU.
  auto log = std::make_shared<Log>();
  const auto r = run_cli(cat({"pmu", "assign", "vm1", "uncore_imc_0"}, roots("flat", false)),
                         assigning(log, testing::sample_pmu_vm1()));
  EXPECT_EQ(r.err, "");
}

TEST(Pmu, AssignKernelWarningComesFirst) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli(cat({"pmu", "assign", "vm1", "core"}, roots("flat", false)),
                         fake_kvmai(log, [](FakeTransport& t) {
                           t.replies[KVMAI_CMD_PMU_ASSIGN] = {
                               message(KVMAI_CMD_PMU_ASSIGN, testing::sample_pmu_vm1())};
                           t.warning = "2 host events will stop counting in guests";
                         }));
  EXPECT_EQ(r.rc, kExitOk);
  EXPECT_THAT(r.err, StartsWith("Warning: pmu assign: 2 host events will stop counting in "
                                "guests\nWarning: pmu assign: kvm_intel.enable_mediated_pmu=N"));
}

// bind-socket: the command holds the socket until everything the VM owns
// is released (or a signal comes), and not before.
TEST(Pmu, AssignBindSocketHoldsUntilTheVmOwnsNothing) {
  AttrSet partial = testing::released_pmu("vm2");
  partial.put_flag(KVMAI_A_PMU_CORE);
  auto log = std::make_shared<Log>();
  const auto r = run_cli(
      {"pmu", "assign", "vm2", "uncore_cha_0", "cpus", "16-47", "bind"},
      assigning(log, testing::sample_pmu_vm2(),
                {message(KVMAI_CMD_PMU_CHANGE_NTF, testing::released_pmu("vm1")),  // another VM
                 message(KVMAI_CMD_GROUP_DELETE_NTF, testing::empty_group("vm2")),
                 message(KVMAI_CMD_PMU_CHANGE_NTF, partial),  // still owns the core
                 message(KVMAI_CMD_PMU_CHANGE_NTF, testing::released_pmu("vm2")),
                 message(KVMAI_CMD_PMU_CHANGE_NTF, testing::released_pmu("vm2"))}));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_TRUE(log->requests.at(0).has(KVMAI_A_PMU_BIND_SOCKET));
  EXPECT_EQ(log->groups, std::vector<std::string>{"monitor"});
  EXPECT_EQ(log->receives, 1);
  EXPECT_EQ(log->delivered, 4);
  EXPECT_THAT(r.out, StartsWith("vm vm2 "));
}

// A VM that owned something already keeps its bind-socket setting.
TEST(Pmu, AssignBindSocketToAnUnboundVmWarnsAndReturns) {
  auto log = std::make_shared<Log>();
  const auto r =
      run_cli({"pmu", "assign", "vm1", "uncore_imc_1", "bind-socket"},
              assigning(log, testing::sample_pmu_vm1(),
                        {message(KVMAI_CMD_PMU_CHANGE_NTF, testing::released_pmu("vm1"))}));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(log->receives, 0);
  EXPECT_EQ(r.err,
            "Warning: pmu assign: vm1 already owned PMU resources without bind-socket: they stay "
            "after kvmaictl exits\n");
}

TEST(Pmu, AssignArgumentErrorsAreUsageErrors) {
  const std::vector<std::pair<Args, std::string>> cases{
      {{}, "missing VM"},
      {{"vm1"}, "missing core or UNIT"},
      {{"vm1", "cpus", "0-3"}, "missing core or UNIT"},
      {{"vm1", "core", "core"}, "\"core\" given twice"},
      {{"vm1", "uncore_imc_0", "uncore_imc_0"}, "unit \"uncore_imc_0\" given twice"},
      {{"vm1", "core", "cpus"}, "missing LIST after \"cpus\""},
      {{"vm1", "core", "--cpus"}, "missing LIST after \"--cpus\""},
      {{"vm1", "core", "cpus", "1", "cpus", "2"}, "\"cpus\" given twice"},
      {{"vm1", "core", "cpus", ""}, "cpus LIST must be 1 to 255 characters"},
      {{"vm1", "core", "cpus", std::string(256, '1')}, "cpus LIST must be 1 to 255 characters"},
      {{"vm1", "core", "pid", "init"}, "pid wants a positive number, not \"init\""},
      {{"vm1", "core", "pid", "0"}, "pid wants a positive number, not \"0\""},
      {{"vm1", "core", "pid", "4294967296"}, "pid wants a positive number, not \"4294967296\""},
      {{"vm1", "core", "--shared=yes"}, "\"--shared\" takes no value"},
      {{"vm1", "core", "--frob"}, "unrecognised option '--frob'"},
      {{"vm1", "-x"}, "unrecognised option '-x'"},
      {{"vm1", "core", "--sysfs-root"}, "missing DIR after \"--sysfs-root\""},
      {{std::string(64, 'v'), "core"},
       "VM \"" + std::string(64, 'v') + "\" is longer than 63 characters"},
      {{"vm1", std::string(64, 'u')},
       "unit name \"" + std::string(64, 'u') + "\" is longer than 63 characters"},
      {{"vm1", ""}, "unit name \"\" is empty"},
      // Names are data for shells and terminals too (client/names.h).
      {{"$(touch${IFS}pw)", "core"},
       "VM \"$(touch${IFS}pw)\" has '$' at offset 0, which names may not hold (letters, digits "
       "and ._:@+- only)"},
      {{"vm1", "amd\x1b[2J"},
       "unit name \"amd?[2J\" has byte 0x1b at offset 3, which names may not hold (letters, "
       "digits and ._:@+- only)"},
  };
  for (const auto& [args, message] : cases) {
    const auto r = run_cli(cat({"pmu", "assign"}, args));
    EXPECT_EQ(r.rc, kExitUsage) << message;
    EXPECT_EQ(r.err, "Error: pmu assign: " + message + "\n");
  }
}

TEST(Pmu, ReleaseSendsWhatIsNamed) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli({"-j", "pmu", "release", "vm1", "core", "uncore_imc_0"}, fake_kvmai(log));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(log->commands, Commands{KVMAI_CMD_PMU_RELEASE});
  const AttrSet& req = log->requests.at(0);
  EXPECT_EQ(req.str(KVMAI_A_PMU_VM), "vm1");
  EXPECT_TRUE(req.has(KVMAI_A_PMU_CORE));
  EXPECT_EQ(unit_names(req, KVMAI_A_PMU_UNIT), std::vector<std::string>{"uncore_imc_0"});
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
}

TEST(Pmu, ReleaseWithNothingNamedSendsTheVmOnly) {
  auto log = std::make_shared<Log>();
  ASSERT_EQ(run_cli({"pmu", "release", "vm1"}, fake_kvmai(log)).rc, kExitOk);
  ASSERT_EQ(log->requests.at(0).attrs().size(), 1U);
  EXPECT_EQ(log->requests.at(0).str(KVMAI_A_PMU_VM), "vm1");
}

TEST(Pmu, ReleaseArgumentErrorsAreUsageErrors) {
  for (const Args& a : std::vector<Args>{{"pmu", "release"},
                                         {"pmu", "release", "vm1", "core", "core"},
                                         {"pmu", "release", "vm1", "--shared"}}) {
    const auto r = run_cli(a);
    EXPECT_EQ(r.rc, kExitUsage) << a.back();
    EXPECT_THAT(r.err, StartsWith("Error: pmu release: ")) << a.back();
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

// Refusals: exit 1, one line, the kernel's extack verbatim then errno.
TEST(Pmu, KernelRefusalCarriesExtack) {
  const std::vector<std::pair<Args, std::string>> cases{
      {cat({"pmu", "show"}, roots("pmu-server")), "pmu show"},
      {{"pmu", "show", "vm1"}, "pmu show"},
      {{"pmu", "assign", "vm1", "uncore_imc_0", "bind-socket"}, "pmu assign"},
      {{"pmu", "release", "vm1"}, "pmu release"},
  };
  for (const auto& [args, where] : cases) {
    auto log = std::make_shared<Log>();
    const auto r =
        run_cli(args, testing::failing_kvmai(log, EBUSY, "uncore_imc_0 has host events"));
    EXPECT_EQ(r.rc, kExitFailed) << where;
    EXPECT_EQ(r.out, "") << where;
    EXPECT_EQ(r.err,
              "Error: " + where + ": uncore_imc_0 has host events (Device or resource busy)\n");
  }
}

// A module from before PMU ownership does not know the commands.
TEST(Pmu, OlderModuleIsNamed) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli({"pmu", "show", "vm1"}, testing::failing_kvmai(log, EOPNOTSUPP, ""));
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_EQ(r.err,
            "Error: pmu show: Operation not supported (a kvmai module without PMU operations?)\n");
  // With the kernel's own words, those are the reason.
  const auto refused =
      run_cli({"pmu", "assign", "vm1", "core"}, testing::failing_kvmai(log, EOPNOTSUPP, "no PMU"));
  EXPECT_EQ(refused.err, "Error: pmu assign: no PMU (Operation not supported)\n");
}

TEST(Pmu, WithoutModuleSaysSo) {
  for (const Args& a : std::vector<Args>{cat({"pmu", "show"}, roots("pmu-server")),
                                         {"pmu", "assign", "vm1", "core"},
                                         {"pmu", "release", "vm1"}}) {
    const auto r = run_cli(a, testing::no_kvmai());
    EXPECT_EQ(r.rc, kExitFailed);
    EXPECT_EQ(r.out, "");
    EXPECT_THAT(r.err, ::testing::EndsWith(": kvmai module not loaded (generic netlink family "
                                           "\"kvmai\" not found)\n"));
  }
}

TEST(Pmu, HelpListsTheCommands) {
  const auto r = run_cli({"pmu", "help"});
  EXPECT_EQ(r.rc, kExitOk);
  EXPECT_THAT(r.out, StartsWith("Usage: kvmaictl pmu show [ VM ]"));
  EXPECT_THAT(r.out, HasSubstr("\n       kvmaictl pmu release VM [ core | UNIT ]...\n"));
  EXPECT_THAT(r.out,
              HasSubstr("\n  show      the host's PMUs and every VM's, or one VM's (default)\n"));
}

}  // namespace
}  // namespace kvmai::kvmaictl
