// Whole-command outputs over the fixture trees, compared with the golden
// files in testdata/golden/. To refresh them after an intended change:
//   KVMAICTL_UPDATE_GOLDENS=1 ctest --test-dir build/tools -R Golden
// and review the diff.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "testing/run.h"

namespace kvmai::kvmaictl {
namespace {

using testing::matches_golden;
using testing::run_cli;
using testing::testdata;

const std::vector<std::string> kFixtures{
    "hgx",      "flat",        "multifunction", "noacs",      "iommu-off",
    "emulated", "emulated-dt", "unprivileged",  "pmu-server", "no-pmu",
    "rdma-vf",  "vgpu",        "tenant-intel",  "tenant-amd", "tenant-planned"};

struct Case {
  std::string fixture;
  std::string object;  // topo, check
  bool json;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.fixture << ' ' << c.object << (c.json ? " -j" : "");
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string n =
      info.param.fixture + "_" + info.param.object + (info.param.json ? "_json" : "_text");
  for (auto& c : n) {
    c = c == '-' ? '_' : c;
  }
  return n;
}

std::vector<Case> all_cases() {
  std::vector<Case> v;
  for (const auto& f : kFixtures) {
    for (const char* obj : {"topo", "check"}) {
      v.push_back({f, obj, false});
      v.push_back({f, obj, true});
    }
  }
  return v;
}

class Golden : public ::testing::TestWithParam<Case> {};

TEST_P(Golden, MatchesFile) {
  const Case& c = GetParam();
  Args args;
  if (c.json) {
    args.emplace_back("-p");
  }
  args.insert(args.end(), {c.object, "--root", testdata(c.fixture)});
  // A cloud VM without KVM, judged as the host its operator means it to be.
  if (c.fixture == "no-pmu" && c.object == "check") {
    args.insert(args.end(), {"show", "as", "host"});
  }
  // The emulated host's ACS switches are host bridges, and it says so.
  if (c.fixture.starts_with("emulated")) {
    args.emplace_back("--host-bridge-switches");
  }
  const auto r = run_cli(args);
  ASSERT_TRUE(r.rc == kExitOk || (c.object == "check" && r.rc == kExitFailed)) << r.err;
  if (c.json) {
    EXPECT_TRUE(nlohmann::json::accept(r.out));
  }
  std::string note;
  EXPECT_TRUE(
      matches_golden(c.fixture + "." + c.object + (c.json ? ".json" : ".txt"), r.out, &note));
  if (!note.empty()) {
    GTEST_SKIP() << note;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Golden, ::testing::ValuesIn(all_cases()), case_name);

}  // namespace
}  // namespace kvmai::kvmaictl
