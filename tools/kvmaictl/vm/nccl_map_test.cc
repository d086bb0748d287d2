// `kvmaictl vm nccl-map PLAN FILE` (vm/nccl_map.h), in the guest of
// `vm plan gpu0 gpu1 gpu4 gpu5 nic2 nic3 nic6 nic7` on hgx-vm: as SeaBIOS
// numbers its buses (tenant-planned) the host's file stays as it is; with
// the buses below the root ports numbered otherwise (tenant-renumbered)
// every bus id becomes this guest's, and the guest's check passes again.
#include "vm/nccl_map.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "cli/errors.h"
#include "testing/fixture_copy.h"
#include "testing/run.h"

namespace kvmai::kvmaictl {
namespace {

using testing::FixtureCopy;
using ::testing::HasSubstr;
using testing::run_cli;
using testing::testdata;

const Args kDevs{"gpu0", "gpu1", "gpu4", "gpu5", "nic2", "nic3", "nic6", "nic7"};

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The host's side: the plan as JSON and the NCCL file, in files, as an
// operator hands them to the tenant.
class HostFiles {
 public:
  HostFiles() : copy_("hgx-vm") {
    Args plan{"-j", "vm", "plan"};
    plan.insert(plan.end(), kDevs.begin(), kDevs.end());
    plan.insert(plan.end(), {"--root", testdata("hgx-vm")});
    const auto p = run_cli(plan);
    EXPECT_EQ(p.rc, kExitOk) << p.err;
    copy_.write("plan.json", p.out);
    Args topo{"vm", "nccl-topo"};
    topo.insert(topo.end(), kDevs.begin(), kDevs.end());
    topo.insert(topo.end(), {"--root", testdata("hgx-vm")});
    const auto t = run_cli(topo);
    EXPECT_EQ(t.rc, kExitOk) << t.err;
    copy_.write("nccl.xml", t.out);
  }
  std::string plan() const { return (copy_.dir() / "plan.json").string(); }
  std::string nccl() const { return (copy_.dir() / "nccl.xml").string(); }

 private:
  FixtureCopy copy_;
};

testing::RunResult map(const std::string& plan, const std::string& file, const std::string& guest) {
  return run_cli({"vm", "nccl-map", plan, file, "--root", guest});
}

std::vector<std::string> busids(const std::string& xml) {
  static const std::regex kBusid(R"(busid="([^"]*)\")");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), kBusid); it != std::sregex_iterator();
       ++it) {
    out.push_back((*it)[1]);
  }
  return out;
}

std::string nccl_check(const std::filesystem::path& root) {
  const auto r = run_cli({"-j", "check", "--root", root.string()});
  if (r.out.empty()) {
    return "no output: " + r.err;
  }
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& c : j["checks"]) {
    if (c["id"] == "nccl-topo") {
      return c["status"].get<std::string>() + ": " + c["evidence"].get<std::string>();
    }
  }
  return "no nccl-topo check";
}

// As the plan numbers them: nothing to change, in the host's file or in
// the tenant's copy of it.
TEST(NcclMap, SeabiosNumberingKeepsTheFile) {
  const HostFiles host;
  auto r = map(host.plan(), host.nccl(), testdata("tenant-planned"));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.out, slurp(host.nccl()));
  const std::string etc = testdata("tenant-planned/etc/nccl/topo.xml");
  r = map(host.plan(), etc, testdata("tenant-planned"));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.out, slurp(etc));
}

// Buses numbered otherwise: the file as written names functions this
// guest does not have (check fails), the mapped one its own, each of the
// vendor and device the file says (check passes).
TEST(NcclMap, OtherNumberingGetsThisGuestsBusIds) {
  const HostFiles host;
  const FixtureCopy guest("tenant-renumbered");
  EXPECT_THAT(nccl_check(guest.dir()), HasSubstr("fail: /etc/nccl/topo.xml names"));

  const auto r = map(host.plan(), host.nccl(), guest.dir().string());
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  const auto before = busids(slurp(host.nccl()));
  const auto after = busids(r.out);
  ASSERT_EQ(before.size(), after.size());
  EXPECT_NE(before, after);
  // Only the bus ids change.
  EXPECT_EQ(std::regex_replace(r.out, std::regex(R"(busid="[^"]*")"), "B"),
            std::regex_replace(slurp(host.nccl()), std::regex(R"(busid="[^"]*")"), "B"));
  for (const auto& b : after) {
    EXPECT_TRUE(std::filesystem::exists(guest.dir() / "sys/bus/pci/devices" / b)) << b;
  }
  // gpu1's downstream port is the second of its switch: one spare bus
  // behind the first moves it from 0x24 to 0x25.
  EXPECT_THAT(r.out, HasSubstr("busid=\"0000:25:00.0\" class=\"0x030200\""));

  guest.write("etc/nccl/topo.xml", r.out);
  EXPECT_THAT(nccl_check(guest.dir()), HasSubstr("pass: /etc/nccl/topo.xml names"));
}

TEST(NcclMap, RefusesWhatDoesNotFit) {
  const HostFiles host;
  const FixtureCopy files("tenant-planned");

  // The file of another plan: a bus id this plan does not lay out.
  files.write("other.xml", "<system version=\"1\">\n  <pci busid=\"0000:c2:00.0\"/>\n</system>\n");
  auto r = map(host.plan(), (files.dir() / "other.xml").string(), testdata("tenant-planned"));
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_EQ(r.err,
            "Error: vm nccl-map: FILE names 0000:c2:00.0, which PLAN does not lay out: are they "
            "of one plan?\n");

  // A guest without the second expander: gpu4's path leads nowhere.
  const FixtureCopy half("tenant-planned");
  half.remove("sys/bus/pci/devices/0000:43:00.0");
  r = map(host.plan(), host.nccl(), half.dir().string());
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_THAT(r.err, HasSubstr("gpu4 (planned 0000:43:00.0): no function at "
                               "pci0000:40/00.0/00.0/00.0/00.0 in this guest"));

  // The right path, the wrong device: a NIC where the file has a GPU.
  files.write("swapped.xml", std::regex_replace(slurp(host.nccl()), std::regex("vendor=\"0x10de\""),
                                                "vendor=\"0x15b3\""));
  r = map(host.plan(), (files.dir() / "swapped.xml").string(), testdata("tenant-planned"));
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_THAT(r.err, HasSubstr("is 10de:2330 here, not the 0x15b3:0x2330 FILE says"));

  files.write("bad.json", "{\"nodes\": []}");
  r = map((files.dir() / "bad.json").string(), host.nccl(), testdata("tenant-planned"));
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_THAT(r.err, HasSubstr("PLAN has no bridges and devices"));
  r = map("/nonexistent.json", host.nccl(), testdata("tenant-planned"));
  EXPECT_EQ(r.err, "Error: vm nccl-map: PLAN /nonexistent.json: No such file or directory\n");
}

}  // namespace
}  // namespace kvmai::kvmaictl
